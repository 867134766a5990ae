"""``gomoku serve``: a small HTTP move service over the engine's Player (standard library ``http.server``).

- :mod:`tools.serve.app`: the API (documented there), the shared engine, the worker pool, the HTTP server and
  the command line;
- :mod:`tools.serve.request`: request validation, pure: a JSON body -> a board and search limits, or a
  :class:`~tools.serve.request.RequestError` with its HTTP status.
"""
