"""``python -m tools.serve ...``: the same as ``gomoku serve ...``."""
import sys

from .app import main

sys.exit(main())
