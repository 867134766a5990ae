"""The diagnostic players, re-exported from :mod:`gomoku_ai.testplayers` (where they moved so that
:func:`gomoku_ai.shipped.make_player` can select them); kept for the old import path."""
from gomoku_ai.testplayers import SleepyPlayer, StuckPlayer

__all__ = ["SleepyPlayer", "StuckPlayer"]
