"""The Gomocup brain: reads manager commands, keeps the game state, thinks in a worker thread, answers.

Parts (one job each)
--------------------
* :mod:`protocol.framing`: the **reader** thread (:class:`~protocol.framing.CommandReader`: line framing,
  parsing, ``BOARD``/``YXBOARD``/``SWAP2BOARD`` block assembly), the command :class:`~protocol.framing.Inbox`
  and the locked :class:`~protocol.framing.LineWriter`.
* :mod:`protocol.game`: the game and its settings: board, our colour, rule, ``INFO`` values, clocks.
* :mod:`protocol.dispatch`: the dispatcher (command -> handler -> reply) on the main thread.
* :mod:`protocol.players`: the player lifecycle (made by a factory per rule and size; busy or idle).
* :mod:`protocol.supervise`: move requests: deadlines, the search, the queue served meanwhile, one answer.
* :mod:`protocol.think`: the search on a worker thread with a deadline, a grace period and a fallback
  (shared with the terminal UI and the tournament).
* this module: :class:`Brain` wires them together and runs the main loop.

Threads
-------
* **reader** (daemon): reads and parses the input (:mod:`protocol.framing`). ``END`` and ``YXSTOP``/``STOP`` act
  at once from this thread; every other command goes, in order, into the inbox.
* **main** (the thread that calls :meth:`Brain.run`): takes commands from the inbox and carries them out. A
  command that owes a move starts a search and then *supervises* it: it keeps taking items from the inbox
  while the search runs, applies ``INFO`` at once (time_left etc.; never answered), and defers everything else
  until the move has been sent.
* **worker** (daemon, one per search): calls ``player.think(board_copy, Limit(...), stop_event, on_info)``.

:func:`protocol.stdio.run_stdio` wires a brain to the process (stdin, stdout, logging); tests and other front
ends construct :class:`Brain` with their own streams and player.

Output goes through one locked writer (:class:`LineWriter`): ``line + "\\n"``, flushed at once, never a trailing
space, nothing unprompted, nothing on stderr. Only the main thread writes moves, once per request.

Guarantees
----------
* **One move per request.** ``YXSTOP``/``STOP`` sets the stop event; the player is given
  ``STOP_GRACE_MS`` to return, otherwise the brain answers a fallback move (the player's best move so far from
  ``on_info``, or :func:`protocol.fallback.quick_move`; an immediate win or forced block always comes first).
  The same happens ``WATCHDOG_GRACE_MS`` after the hard deadline. A result that arrives later is dropped; the
  player is never called again until that late call has returned (meanwhile requests get fallback moves).
* **Queued requests.** A command that arrives while a search runs is handled after the move has been sent, in
  order, as if it had been read then. If it changes the position or owes a reply of its own (START, RESTART,
  RECTSTART, BEGIN, TURN, BOARD, YXBOARD, SWAP2BOARD, TAKEBACK, PLAY) it also stops the search early: a manager
  that sends one has stopped waiting for the move. ABOUT and unknown lines wait without stopping the search.
  ``YXSTOP`` read after a queued request stops that request's search as soon as it starts.
* **END** ends the reading at once. A search in progress is stopped and its move written at once (within
  ``STOP_GRACE_MS``); the commands read before END are answered in order, every search among them with zero
  time; then the brain exits (GomocupJudge kills a brain 0.5 s after END, Piskvork after 0.7 s). A watchdog
  makes sure the process exits :data:`END_EXIT_MS` after END at the latest, should the main thread be stuck. **EOF** on the input answers
  what is still owed the same way, then exits.
* **Errors.** A command that cannot be carried out is answered ``ERROR <reason>`` (bad size, occupied square,
  no START yet, inconsistent BOARD, full board, ...) and the state is left as it was. An unknown command is
  answered ``UNKNOWN <line>``. ``INFO`` is never answered, not even when malformed. Any exception in a handler
  is logged and answered with ERROR (or, for a move request, with a fallback move); the brain keeps running.

The conventions of BOARD blocks, colours, ``INFO rule`` and ``show_detail`` are in :mod:`protocol.framing`,
:mod:`protocol.game` and :mod:`protocol.dispatch`.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Callable, Optional

from gomoku_ai.board import Board
from gomoku_ai.player import Thinker
from gomoku_ai.shipped import DefaultPlayers, ThinkerFactory, make_player, player_source

from . import lines as L
from .dispatch import ABOUT, BRAIN_NAME, Dispatcher
from .framing import END, EOF, WAKE, Bad, CommandReader, InStream, Inbox, Item, LineWriter, OutStream
from .game import DEFAULT_MAX_MEMORY, Game, Settings, StartupCharge
from .players import PlayerSlot
from .supervise import STOP_GRACE_MS, SearchControl
from .think import now_ms

__all__ = ["ABOUT", "BRAIN_NAME", "Brain", "DEFAULT_MAX_MEMORY", "DefaultPlayers", "LineWriter", "STOP_GRACE_MS",
           "Settings", "make_player", "now_ms", "player_source"]

log = logging.getLogger("pygomoku.brain")

#: the subprocess brain exits at the latest this long after reading END, answered or not. A manager sends
#: END to an idle or thinking brain, which exits at once (a search is stopped and its move written first),
#: so the watchdog matters only to a main thread still busy with what was read before END: a script piped
#: in whole, whose START loads the network, keeps its answers on a loaded machine (400 ms lost them)
END_EXIT_MS = 3000.0


class Brain:
    """The protocol loop. Construct with injected streams and player for in-process use; :func:`run_stdio`
    wires it to the process's stdin/stdout.

    ``input``: a binary (or text) stream to read commands from (default ``sys.stdin.buffer``).
    ``output``: a binary (or text) stream for replies (default ``sys.stdout.buffer``).
    ``player``: an object with the :class:`gomoku_ai.player.Thinker` interface, used as it is; or
    ``player_factory(rule, width, height)`` (or ``player_factory(rule)``), called at the first START (so that a
    model loads while START is handled, PROTOCOL.md P9) and again when ``INFO rule`` or the board size of a new
    game changes what it would make (each rule and size may have its own network). A factory with a
    ``key(rule, width, height)`` method says itself when that is (equal keys: the player is kept); otherwise a
    new player is made for each new rule (and, for a factory that takes the size, each new size). Default:
    :class:`DefaultPlayers` (the shipped network for the rule and size, :func:`gomoku_ai.shipped.default_model`).
    ``hard_exit``: on END, flush and ``os._exit(0)`` from the reader thread (the subprocess brain); otherwise
    :meth:`run` returns 0.
    ``process_start_ms``: when the process was created, on the :func:`gomoku_ai.timeman.monotonic_ms` clock
    (``monotonic_ms() - process_age_ms()``); the start-up time is charged to the first move.
    ``on_folder``: called with the path of ``INFO folder`` (to start a log there).
    """

    def __init__(self, input: Optional[InStream] = None, output: Optional[OutStream] = None,
                 player: Optional[Thinker] = None, *, player_factory: Optional[ThinkerFactory] = None,
                 hard_exit: bool = False, process_start_ms: Optional[float] = None,
                 on_folder: Optional[Callable[[str], None]] = None) -> None:
        self.writer = LineWriter(output if output is not None else sys.stdout.buffer)
        factory = player_factory if player_factory is not None else (
            None if player is not None else DefaultPlayers())
        self._players = PlayerSlot(player, factory)
        self._inbox = Inbox()
        self._control = SearchControl()
        self._reader = CommandReader(input if input is not None else sys.stdin.buffer, self._inbox, self, now_ms)
        self.game = Game(lambda: self._reader.yixin)
        self._startup = StartupCharge(process_start_ms)
        self._dispatcher = Dispatcher(self.game, self._players, self.writer, self._inbox, self._control,
                                      self._startup, lambda: self._reader.ready_at, on_folder)
        self._hard_exit = hard_exit

    # ------------------------------------------------------------------ public
    def run(self) -> int:
        """Read and answer commands until END or EOF; returns the exit code (0)."""
        threading.Thread(target=self._reader.run, name="pygomoku-reader", daemon=True).start()
        while True:
            item = self._inbox.next()
            if item is END or item is EOF or self._control.ended:
                return self._exit(item is END)
            if not isinstance(item, Item):
                continue  # WAKE, SEARCH_DONE: nothing to do outside a search
            t0 = now_ms()
            written = self.writer.lines_written
            try:
                self._dispatcher.dispatch(item)
            except Exception as e:  # noqa: BLE001 - the brain must keep running
                log.exception("handler failed on %r", item.cmd)
                silent = isinstance(item.cmd, (L.Info, L.YxHashClear)) or (
                    isinstance(item.cmd, Bad) and item.cmd.error.command == "INFO")
                if not silent and self.writer.lines_written == written:  # never a second reply
                    self.writer.write_lines([L.format_error(f"internal error: {type(e).__name__}: {e}")])
            if not self._startup.first_move_done:
                self._startup.busy_ms += now_ms() - t0
            if self._control.ended:
                return self._exit(True)

    def _exit(self, end: bool) -> int:
        """Leave :meth:`run` (exit code 0); after END with ``hard_exit``, exit the process now (a search thread
        still winding down must not keep it alive)."""
        self._control.ended = True
        self.writer.close()
        if end and self._hard_exit:
            _hard_exit()
        return 0

    @property
    def player(self) -> Optional[Thinker]:
        return self._players.player

    @property
    def board(self) -> Optional[Board]:
        return self.game.board

    @property
    def my_color(self) -> Optional[int]:
        return self.game.my_color

    @property
    def settings(self) -> Settings:
        return self.game.settings

    @property
    def moves_sent(self) -> int:
        return self._dispatcher.supervisor.moves_sent

    # ------------------------------------------------------------------ reader thread (ReaderEvents)
    @property
    def end_read(self) -> bool:
        """END has been read (the reader stops)."""
        return self._control.end_read

    def on_stop(self, seq: int, t: float) -> None:
        """YXSTOP / STOP (line ``seq``, read at ``t``): stop the search now, or the next when it is later."""
        self._control.stop(seq, t)
        self._inbox.put(WAKE)

    def on_end(self) -> None:
        """END: stop the search (its move is answered at once), answer what was read before END with zero time,
        then end :meth:`run`; with ``hard_exit`` a watchdog exits the process :data:`END_EXIT_MS` later whatever
        the main thread is doing."""
        log.info("END")
        self._control.input_ended("END")
        self._inbox.put(END)
        if self._hard_exit:
            timer = threading.Timer(END_EXIT_MS / 1000.0, self._end_watchdog)
            timer.daemon = True
            timer.start()

    def _end_watchdog(self) -> None:
        log.warning("still running %.0f ms after END; exiting", END_EXIT_MS)
        self._control.ended = True
        self.writer.close()
        _hard_exit()

    def on_eof(self) -> None:
        """The input ended: what is owed is answered at once, then :meth:`run` returns."""
        self._control.input_ended()
        self._inbox.put(EOF)


def _hard_exit() -> None:
    """Flush the log handlers and end the process at once (exit code 0)."""
    for h in list(logging.getLogger().handlers):
        try:
            h.flush()
        except Exception:  # noqa: BLE001 - exiting now: there is nowhere left to report it
            pass
    os._exit(0)
