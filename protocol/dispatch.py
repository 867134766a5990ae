"""The brain's dispatcher: one queued command -> its handler -> its reply.

:class:`Dispatcher` runs on the brain's main thread. Each command type has one handler; handlers change the
game (:class:`protocol.game.Game`), drive the player's lifecycle (:class:`protocol.players.PlayerSlot`: a new
game, a new rule or size), hand move requests to :class:`protocol.supervise.SearchSupervisor`, and write the
reply. A :class:`protocol.game.GameError` is answered ``ERROR <reason>`` (bad size, occupied square, no START
yet, inconsistent BOARD, full board, ...) with the state left as it was; an unknown command is answered
``UNKNOWN <line>``; ``INFO`` is never answered, not even when malformed; a data line or ``DONE`` outside a block
is answered ``ERROR``; ``YXBOARD`` is answered only when it fails (``ERROR YXBOARD: ...``).

``INFO show_detail`` (non-zero) or ``YXSHOWINFO`` turns on one ``MESSAGE`` line before each move
(:func:`protocol.supervise.detail_message`); ``show_detail`` 1 or 3 also reports the search's best move while it
runs (``MESSAGE REALTIME REFRESH`` / ``MESSAGE REALTIME BEST x,y``, as Yixin-Board reads them).

Yixin analysis commands: ``YXNBEST n`` is a move request that first tells the ``n`` most visited root moves, one
``MESSAGE`` line each (``multipv k ev <win %> n <visits> pv <move>``); ``YXSEARCHDEFEND`` does that for every
move. ``YXBLOCK``/``YXBLOCKUNDO`` (``x,y`` lines up to ``DONE``) and ``YXBLOCKRESET`` keep a set of squares the
answer avoids (the search still reads them; the answer is the most visited move not blocked). The Yixin
commands this brain cannot carry out (``YXBALANCEONE``/``TWO``, the database commands) are answered ``ERROR``
at once. ``INFO max_depth`` and ``INFO caution_factor`` are read and have no effect (an MCTS has no fixed depth
or candidate range; ``INFO max_node`` bounds its visits); like every ``INFO`` they are never answered.
"""
from __future__ import annotations

import logging
import os
from typing import Callable, Dict, Optional, Type

from gomoku_ai import ENGINE_NAME, __version__, movegen, version_string

from . import lines as L
from .framing import Bad, Block, Inbox, Item, LineWriter
from .game import Game, GameError, StartupCharge
from .players import PlayerSlot
from .supervise import SearchControl, SearchSupervisor

log = logging.getLogger("pygomoku.brain")

BRAIN_NAME = ENGINE_NAME   #: the one name (gomoku_ai.ENGINE_NAME): ABOUT, the log folder, --version
ABOUT = {
    "name": BRAIN_NAME,
    "version": __version__,
    "author": "pygomoku developers",
}

Handler = Callable[..., None]   # (dispatcher, item, command of the handler's type) -> None


class Dispatcher:
    """Carries out queued commands (see the module docstring). ``on_folder`` is called with the path of
    ``INFO folder``; ``ready_at()`` is when the reader began (for the start-up charge)."""

    def __init__(self, game: Game, players: PlayerSlot, writer: LineWriter, inbox: Inbox,
                 control: SearchControl, startup: StartupCharge, ready_at: Callable[[], Optional[float]],
                 on_folder: Optional[Callable[[str], None]] = None) -> None:
        self.game = game
        self.players = players
        self.writer = writer
        self._on_folder = on_folder
        self.supervisor = SearchSupervisor(game, players, inbox, writer, control, startup, ready_at,
                                           apply_info=self.apply_info)

    def send(self, *lines: str) -> None:
        self.writer.write_lines(lines)

    def dispatch(self, item: Item) -> None:
        """Carry out ``item`` and answer it. Exceptions other than GameError propagate."""
        if self.game.sync_rule():
            self._rule_changed()
        cmd = item.cmd
        try:
            if isinstance(cmd, Block):
                self._block(item, cmd)
            elif isinstance(cmd, Bad):
                if cmd.error.command == "INFO":
                    log.warning("ignored malformed INFO: %s", cmd.error)
                else:
                    self.send(L.format_error(str(cmd.error)))
            else:
                handler = self._HANDLERS.get(type(cmd))
                if handler is None:
                    self.send(L.format_error(f"unexpected {cmd.word or 'line'}"))
                else:
                    handler(self, item, cmd)
        except GameError as e:
            self.send(L.format_error(str(e)))

    # ------------------------------------------------------------------ the player
    def _players_for_game(self) -> None:
        self.players.new_game(self.game.rule(), *self.game.size())

    def _rule_changed(self) -> None:
        if self.game.board is not None:
            self.players.after_rule_change(self.game.rule(), *self.game.size())

    def apply_info(self, cmd: L.Info) -> None:
        """``INFO``: the settings (:meth:`protocol.game.Game.apply_info`), ``folder`` (``on_folder``) and, for a
        new rule, the player for it."""
        if cmd.key == "folder":
            self.game.settings.folder = cmd.value
            if self._on_folder is not None and cmd.value:
                try:
                    self._on_folder(cmd.value)
                except Exception:  # noqa: BLE001
                    log.exception("INFO folder: could not use %r", cmd.value)
            return
        if self.game.apply_info(cmd):
            self._rule_changed()
        if cmd.key in ("thread_num", "max_memory"):
            # an idle player takes them now (INFO thread_num 2 starts its network worker during the set-up,
            # not at the first search)
            self.players.settings_changed(self.game.settings)

    # ------------------------------------------------------------------ handlers
    def _new_game(self, w: int, h: int, word: str) -> None:
        board = self.game.new_board(w, h)
        self._players_for_game()
        self.send(L.format_ok())
        log.info("%s: new %dx%d %s game", word, w, h, board.rule.value)

    def _h_start(self, item: Item, cmd: L.Start) -> None:
        self._new_game(cmd.width, cmd.height, "START")

    def _h_rectstart(self, item: Item, cmd: L.RectStart) -> None:
        self._new_game(cmd.width, cmd.height, "RECTSTART")

    def _h_restart(self, item: Item, cmd: L.Restart) -> None:
        b = self.game.need_board("RESTART")
        self._new_game(b.width, b.height, "RESTART")

    def _h_begin(self, item: Item, cmd: L.Begin) -> None:
        self.game.begin()
        self.supervisor.answer(item)

    def _h_turn(self, item: Item, cmd: L.Turn) -> None:
        self.game.turn(cmd.x, cmd.y)
        self.supervisor.answer(item)

    def _h_play(self, item: Item, cmd: L.Play) -> None:
        self.game.play(cmd.x, cmd.y)
        self.send(L.format_move(cmd.x, cmd.y))

    def _h_takeback(self, item: Item, cmd: L.Takeback) -> None:
        self.game.takeback(cmd.x, cmd.y)
        self.send(L.format_ok())

    def _h_info(self, item: Item, cmd: L.Info) -> None:
        self.apply_info(cmd)

    def _h_about(self, item: Item, cmd: L.About) -> None:
        self.send(L.format_about(ABOUT))

    def _h_showforbid(self, item: Item, cmd: L.YxShowForbid) -> None:
        b = self.game.need_board("YXSHOWFORBID")
        pts = sorted((b.xy(m) for m in movegen.forbidden_points(b)), key=lambda p: (p[1], p[0]))
        self.send(L.format_forbid(pts))

    def _h_showinfo(self, item: Item, cmd: L.YxShowInfo) -> None:
        self.game.settings.show_detail = max(1, self.game.settings.show_detail)
        self.send(L.format_message(version_string()),
                  L.format_message(f"INFO MAX_THREAD_NUM {os.cpu_count() or 1}"))

    def _h_hashclear(self, item: Item, cmd: L.YxHashClear) -> None:
        self._players_for_game()

    def _h_nbest(self, item: Item, cmd: L.YxNBest) -> None:
        self.game.need_board("YXNBEST")
        self.supervisor.answer(item, nbest=cmd.n)

    def _h_searchdefend(self, item: Item, cmd: L.YxSearchDefend) -> None:
        b = self.game.need_board("YXSEARCHDEFEND")
        self.supervisor.answer(item, nbest=max(1, b.size - len(b.moves)))

    def _h_blockreset(self, item: Item, cmd: L.YxBlockReset) -> None:
        self.game.blocked.clear()

    def _h_unsupported(self, item: Item, cmd: L.Unsupported) -> None:
        self.send(L.format_error(f"{cmd.name} is not supported by this brain"))

    def _h_unknown(self, item: Item, cmd: L.Unknown) -> None:
        self.send(L.format_unknown(L.clean_text(cmd.text)[:200] or "(unprintable line)"))

    def _h_stray(self, item: Item, cmd: L.Command) -> None:
        what = "DONE without BOARD" if isinstance(cmd, L.Done) else "data line outside BOARD"
        self.send(L.format_error(what))

    _HANDLERS: Dict[Type[L.Command], Handler] = {
        L.Start: _h_start, L.RectStart: _h_rectstart, L.Restart: _h_restart, L.Begin: _h_begin,
        L.Turn: _h_turn, L.Play: _h_play, L.Takeback: _h_takeback, L.Info: _h_info, L.About: _h_about,
        L.YxShowForbid: _h_showforbid, L.YxShowInfo: _h_showinfo, L.YxHashClear: _h_hashclear,
        L.YxNBest: _h_nbest, L.YxSearchDefend: _h_searchdefend, L.YxBlockReset: _h_blockreset,
        L.Unsupported: _h_unsupported,
        L.Unknown: _h_unknown, L.Done: _h_stray, L.StoneLine: _h_stray, L.PointLine: _h_stray,
    }

    def _block(self, item: Item, blk: Block) -> None:
        """A BOARD / YXBOARD / SWAP2BOARD block (BOARD then owes a move)."""
        word = blk.cmd.word
        if blk.aborted:
            self.send(L.format_error(f"{'YXBOARD: ' if word == 'YXBOARD' else ''}{word} not terminated by DONE"))
        elif isinstance(blk.cmd, L.Board):
            self.game.set_position(blk, "")
            self.supervisor.answer(item)
        elif isinstance(blk.cmd, L.YxBoard):
            self.game.set_position(blk, "YXBOARD: ")
        elif isinstance(blk.cmd, (L.YxBlock, L.YxBlockUndo)):
            self.game.block(blk, add=isinstance(blk.cmd, L.YxBlock))
        else:
            self.send(self.game.swap2(blk))
