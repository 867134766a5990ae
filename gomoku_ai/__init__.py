"""gomoku_ai: board and rules, search, tactics and networks for five-in-a-row games."""

__version__ = "0.1.0"
