"""``python -m tools.tournament ...``: the same as ``gomoku tournament ...``."""
import sys

from .cli import main

sys.exit(main())
