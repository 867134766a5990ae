"""The settings of ``gomoku serve`` (standard library only, so that the command line can be built
without the ``web`` extra)."""
from __future__ import annotations

from dataclasses import dataclass

MAX_BODY_BYTES = 64 * 1024
#: the most bytes of a request line and headers; more is answered 431
MAX_HEAD_BYTES = 64 * 1024
DEFAULT_MAX_GAMES = 256
DEFAULT_MAX_TREES = 8
DEFAULT_IDLE_S = 1800.0


@dataclass
class ServeConfig:
    host: str = "127.0.0.1"
    port: int = 8080
    workers: int = 2
    queue: int = 16
    max_visits: int = 5000
    max_time_ms: float = 10000.0
    max_body_bytes: int = MAX_BODY_BYTES
    queue_timeout_s: float = 30.0      # a request still queued after this gets 503
    search_grace_s: float = 10.0       # a search not done this long after queue + max time: 503
    io_timeout_s: float = 15.0         # a body not received in this long: 408; idle keep-alive
    max_connections: int = 0           # open connections; 0: 4 * (workers + queue) + 16
    max_games: int = DEFAULT_MAX_GAMES  # browser games open at once
    game_idle_s: float = DEFAULT_IDLE_S  # a browser game without a request this long is dropped
    max_trees: int = DEFAULT_MAX_TREES  # browser games that keep their search tree between moves

    def connection_limit(self) -> int:
        return self.max_connections or 4 * (self.workers + self.queue) + 16
