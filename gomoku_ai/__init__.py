"""gomoku_ai: board and rules, search, tactics and networks for five-in-a-row games."""

__version__ = "0.1.0"

#: the engine's name: the Gomocup brain's ABOUT name and the prefix of its version line
ENGINE_NAME = "pygomoku"


def version_string() -> str:
    """The one version line, ``pygomoku 0.1.0``, that ``engine.py --version`` and ``gomoku --version``
    print."""
    return f"{ENGINE_NAME} {__version__}"
