"""Browser games of ``gomoku serve``: one board and one engine tree per game, bounded in number,
dropped when idle.

A :class:`Game` holds its board, its own :class:`~gomoku_ai.player.Player` (the tree it keeps
between moves: the engine reuses its search of the last reply) and the engine's last answer. The
:class:`GameStore` holds at most ``max_games`` of them; a game without a request for ``idle_s``
seconds is dropped (checked on every request, so no timer thread); when ``max_games`` games are
open and none is idle, a new game is refused (503), and no open game is ever taken away.

Memory is bounded as well: a Player's tree is capped at the server's ``max_visits`` + 64 nodes (at
least 2,000; about 16 MB at 5,000 visits on 15x15), and only the ``max_trees`` games that the
engine answered last keep theirs between moves; the others' trees are freed, and their next search
starts afresh. So the store holds at most ``max_trees`` trees however many games are open.

Nothing here knows HTTP: errors are :class:`~tools.serve.request.RequestError` s.
"""
from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from gomoku_ai import ENGINE_NAME, __version__, movegen
from gomoku_ai.board import Board
from gomoku_ai.player import Player
from gomoku_ai.records import GameRecord, GameResult, write_psq, write_sgf
from gomoku_ai.rules import BLACK, WHITE, Rule, Termination

from .config import DEFAULT_IDLE_S, DEFAULT_MAX_GAMES, DEFAULT_MAX_TREES
from .request import RequestError, color_name, illegal



def no_such_game(game_id: str) -> RequestError:
    return RequestError(404, "no_such_game", f"no game {game_id[:40]!r}: it has expired or never "
                                             "existed; start a new one with POST /games")


@dataclass
class Game:
    """One browser game. ``you`` is the human's colour; the engine plays the other."""

    id: str
    board: Board
    you: int
    player: Player
    engine: Optional[Dict[str, Any]] = None     # the engine's last answer (MoveAnswer fields)
    touched: float = field(default_factory=time.monotonic)
    busy: bool = False                          # a move is being answered

    @property
    def engine_color(self) -> int:
        return WHITE if self.you == BLACK else BLACK

    def status(self) -> str:
        w = self.board.winner
        if w is not None:
            return "black_won" if w == BLACK else "white_won"
        return "draw" if self.board.is_full() else "playing"

    def over(self) -> bool:
        return self.status() != "playing"

    def engine_to_move(self) -> bool:
        return not self.over() and self.board.side_to_move == self.engine_color

    def play(self, m: int) -> None:
        """Your move ``m`` (a flat index), checked: 422 ``game_over``, ``not_your_turn``,
        ``illegal_move`` (occupied) or ``forbidden_move`` (renju, naming the kind)."""
        b = self.board
        if self.over():
            raise illegal("game_over", "the game is over; start a new one")
        if b.side_to_move != self.you:
            raise illegal("not_your_turn", "the engine is to move")
        if not b.is_empty(m):
            raise illegal("illegal_move", f"{b.move_name(m)} is already occupied")
        kind = movegen.forbidden_kind(b, m)
        if kind is not None:
            raise illegal("forbidden_move", f"{b.move_name(m)} is forbidden for Black "
                                            f"({kind.label})")
        b.push(m)
        self.engine = None

    def undo(self) -> None:
        """Take back moves until it is your turn with at least one move of yours taken back
        (your last move and the engine's reply to it); 422 ``nothing_to_undo`` when you have
        not moved yet."""
        b = self.board
        mine = [i for i in range(len(b.moves)) if (BLACK if i % 2 == 0 else WHITE) == self.you]
        if not mine:
            raise illegal("nothing_to_undo", "you have no move to take back")
        while len(b.moves) > mine[-1]:
            b.pop()
        self.engine = None

    def record(self) -> GameRecord:
        """The game as a record (for the SGF / PSQ downloads)."""
        b = self.board
        names = {self.you: "you", self.engine_color: f"{ENGINE_NAME} {__version__}"}
        result = None
        if b.winner is not None:
            result = GameResult(b.winner, Termination.FIVE)
        elif b.is_full():
            result = GameResult(None, Termination.BOARD_FULL)
        return GameRecord(width=b.width, height=b.height, rule=b.rule,
                          moves=[b.xy(m) for m in b.moves], result=result,
                          black=names[BLACK], white=names[WHITE])

    def sgf(self) -> str:
        return write_sgf(self.record())

    def psq(self) -> str:
        return write_psq(self.record())

    def state(self, idle_s: float) -> Dict[str, Any]:
        """The GameState answer (:class:`tools.serve.schema.GameState`)."""
        b = self.board
        line: List[Dict[str, int]] = []
        if b.winner is not None and b.moves:
            for m in b.winning_line(b.moves[-1]) or []:
                x, y = b.xy(m)
                line.append({"x": x, "y": y})
        forbidden = []
        if not self.over():
            for m in movegen.forbidden_points(b):
                kind = movegen.forbidden_kind(b, m)
                x, y = b.xy(m)
                forbidden.append({"x": x, "y": y, "move": b.move_name(m),
                                  "kind": kind.label if kind else "forbidden"})
        moves = []
        for i, m in enumerate(b.moves):
            x, y = b.xy(m)
            moves.append({"x": x, "y": y, "move": b.move_name(m),
                          "color": "black" if i % 2 == 0 else "white"})
        return {"id": self.id, "width": b.width, "height": b.height, "rule": b.rule.value,
                "you": color_name(self.you), "moves": moves,
                "to_move": color_name(b.side_to_move), "status": self.status(),
                "winning_line": line, "forbidden": forbidden, "engine": self.engine,
                "expires_in_s": round(max(0.0, idle_s - (time.monotonic() - self.touched)), 1)}


class GameStore:
    """At most ``max_games`` games; idle ones (no request for ``idle_s`` s) are dropped."""

    def __init__(self, max_games: int = DEFAULT_MAX_GAMES, idle_s: float = DEFAULT_IDLE_S,
                 clock: Callable[[], float] = time.monotonic,
                 max_trees: int = DEFAULT_MAX_TREES) -> None:
        if max_games < 1 or max_trees < 1 or not idle_s > 0:
            raise ValueError(f"max_games and max_trees must be >= 1 and idle_s > 0, got "
                             f"{max_games}, {max_trees}, {idle_s}")
        self.max_games = max_games
        self.max_trees = max_trees
        self.idle_s = idle_s
        self._clock = clock
        self._games: Dict[str, Game] = {}
        self._trees: "OrderedDict[str, None]" = OrderedDict()   # games keeping a tree, oldest first
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._games)

    def _expire(self) -> None:
        now = self._clock()
        for gid in [g.id for g in self._games.values()
                    if not g.busy and now - g.touched > self.idle_s]:
            del self._games[gid]
            self._trees.pop(gid, None)

    def searched(self, game: Game) -> None:
        """``game``'s Player has just searched: it keeps its tree, and the games beyond the
        ``max_trees`` answered most recently (and not searching now) forget theirs."""
        with self._lock:
            self._trees.pop(game.id, None)
            self._trees[game.id] = None
            for gid in list(self._trees):
                if len(self._trees) <= self.max_trees:
                    break
                old = self._games.get(gid)
                if old is None:
                    del self._trees[gid]
                elif not old.busy:
                    old.player.new_game()
                    del self._trees[gid]

    def trees(self) -> int:
        """How many games keep a search tree now."""
        with self._lock:
            return len(self._trees)

    def create(self, width: int, height: int, rule: Rule, you: int,
               new_player: Callable[[Board], Player]) -> Game:
        """A new game (its id is 128 random bits, hex); 503 ``busy`` when ``max_games`` games
        are open and none is idle."""
        board = Board(width, height, rule)
        with self._lock:
            self._expire()
            if len(self._games) >= self.max_games:
                raise RequestError(503, "busy", f"{self.max_games} games are open, the most this "
                                                "server keeps; try again later")
            game = Game(id=secrets.token_hex(16), board=board, you=you, player=new_player(board),
                        touched=self._clock())
            self._games[game.id] = game
        return game

    def get(self, game_id: str) -> Game:
        """The game (its idle clock restarted), or 404 ``no_such_game``."""
        with self._lock:
            self._expire()
            game = self._games.get(game_id)
            if game is None:
                raise no_such_game(game_id)
            game.touched = self._clock()
            return game

    def claim(self, game_id: str) -> Game:
        """The game, marked busy for a move (409 ``game_busy`` when a move is already being
        answered). Release with :meth:`release`."""
        with self._lock:
            self._expire()
            game = self._games.get(game_id)
            if game is None:
                raise no_such_game(game_id)
            if game.busy:
                raise RequestError(409, "game_busy", "the engine is still answering your last "
                                                     "move")
            game.busy = True
            game.touched = self._clock()
            return game

    def release(self, game: Game) -> None:
        with self._lock:
            game.busy = False
            game.touched = self._clock()

    def delete(self, game_id: str) -> None:
        with self._lock:
            if self._games.pop(game_id, None) is None:
                raise no_such_game(game_id)
            self._trees.pop(game_id, None)
