"""``gomoku train ...``: the command line over :mod:`gomoku_ai.training` (which holds the training itself).

- :mod:`tools.train.cli`: the subcommands (``pack``, ``supervised``, ``teacher``, ``export``, ``selfplay``,
  ``gate``, ``loop``, ``curve``, ``accuracy``, ``plot``) and what each runs; torch is imported only by the
  subcommands that train;
- :mod:`tools.train.live`: the live progress display of ``selfplay`` and ``loop`` on a terminal;
- :mod:`tools.train.plot`: ``gomoku train plot``, a PNG of a run's losses and strength (matplotlib);
- :mod:`tools.train.gpu_burst`: a short, bounded supervised training burst for a GPU machine
  (``python -m tools.train.gpu_burst``; ``gpu_burst.sh`` next to it wraps it with defaults and a timeout).
"""
