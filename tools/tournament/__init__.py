"""``gomoku tournament``: matches, round robins and gauntlets between in-process players and external engines.

The parts, in the order a run uses them:

- :mod:`tools.tournament.cli`: the command line (``gomoku tournament``, ``python -m tools.tournament``);
- :mod:`tools.tournament.config`: options -> the run's configuration (``tournament.json``), and the checks
  that a resumed folder holds the same tournament;
- :mod:`tools.tournament.players`: player specs (``heuristic:800 name=h``, ``cmd="..."``) and the in-process
  and external-engine adapters the referee drives;
- :mod:`tools.tournament.schedule`: formats, pairings, openings and the seeded game schedule;
- :mod:`tools.tournament.preflight`: every player created once (models loaded, engines started and ended) before
  the output folder is written;
- :mod:`tools.tournament.runner`: one tournament in one output folder (resume, record, report, stop);
- :mod:`tools.tournament.worker`: playing scheduled games, inline or on a :mod:`gomoku_ai.workers` pool;
- :mod:`tools.tournament.game`: one scheduled game through the referee of :mod:`gomoku_ai.match` and the
  ``results.jsonl`` line it becomes;
- :mod:`tools.tournament.results`: the results file, standings, ratings and the text summary;
- :mod:`tools.tournament.live`: the live table and progress bar on a terminal;
- :mod:`tools.tournament.pgn`: ``tournament.pgn`` for BayesElo and Ordo.

Nothing is imported here, so a pool worker that loads :mod:`tools.tournament.worker` loads only what it plays
with.
"""
