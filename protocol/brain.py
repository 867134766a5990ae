"""The Gomocup brain: reads manager commands, keeps the game state, thinks in a worker thread, answers.

Threads
-------
* **reader** (daemon): reads the input stream as bytes, splits it on LF *and* CR (so CR LF, LF and bare CR all
  work; the empty pieces are ignored), decodes UTF-8 with replacement, parses each line
  (:func:`protocol.lines.parse_command`) and groups ``BOARD``/``YXBOARD``/``SWAP2BOARD`` blocks up to ``DONE``.
  ``END`` and ``YXSTOP``/``STOP`` act at once from this thread; every other command goes, in order, into the
  command queue.
* **main** (the thread that calls :meth:`Brain.run`): takes commands from the queue and carries them out. A
  command that owes a move starts a search and then *supervises* it: it keeps taking items from the queue
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
* **END** exits within milliseconds, even while thinking: the output is closed first, so nothing more is
  written, not even replies to commands still queued before END (no manager sends END while it waits for a
  reply). **EOF** on the input answers what is still owed at once (zero time), then exits.
* **Errors.** A command that cannot be carried out is answered ``ERROR <reason>`` (bad size, occupied square,
  no START yet, inconsistent BOARD, full board, ...) and the state is left as it was. An unknown command is
  answered ``UNKNOWN <line>``. ``INFO`` is never answered, not even when malformed. Any exception in a handler
  is logged and answered with ERROR (or, for a move request, with a fallback move); the brain keeps running.

Conventions
-----------
* A ``BOARD``/``YXBOARD`` block ends at ``DONE``. Inside it, ``x,y,f`` lines are collected; a malformed or
  unknown line spoils the block (answered ``ERROR`` at ``DONE``); a known command word aborts it (answered
  ``ERROR <WORD> not terminated by DONE``, then the command runs). A data line or ``DONE`` outside a block is
  answered ``ERROR``. ``YXBOARD`` is answered only when it fails (``ERROR YXBOARD: ...``).
* Our colour after ``BOARD``: own == opponent stones -> we are Black (first player); opponent == own + 1 -> White;
  any other count -> the colour of the first listed non-wall stone is Black (Rapfi's rule). ``x,y,3`` is a
  blocked square.
* ``INFO rule`` is decoded with :func:`gomoku_ai.rules.rule_from_gomocup`; 2 means renju only once a ``YX...``
  command has been seen (Yixin-Board's meaning), otherwise it is the continuous-game bit, ignored.
* ``INFO show_detail`` (non-zero) or ``YXSHOWINFO`` turns on one ``MESSAGE`` line before each move, in Rapfi's
  UCI-like format: ``MESSAGE depth 3-3 ev 52.3 n 1234 n/ms 12 tm 800 pv h8 i9`` (``ev`` is our win rate in
  percent, ``n`` visits, ``tm`` ms, the PV in ``h8`` notation).
"""
from __future__ import annotations

import collections
import io
import logging
import operator
import os
import queue
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, List, Optional, Sequence, Tuple, Union

from gomoku_ai import __version__
from gomoku_ai import movegen, timeman
from gomoku_ai.board import MAX_SIZE, MIN_SIZE, Board
from gomoku_ai.rules import BLACK, EMPTY, WALL, WHITE, Rule, rule_from_gomocup

from . import fallback
from . import lines as L

log = logging.getLogger("pygomoku.brain")

BRAIN_NAME = "pygomoku"
ABOUT = {
    "name": BRAIN_NAME,
    "version": __version__,
    "author": "pygomoku developers",
}
DEFAULT_MAX_MEMORY = 350 * 1024 * 1024  #: INFO max_memory 0 means the Gomocup default (as Rapfi does)
STOP_GRACE_MS = 120.0                    #: after YXSTOP, wait this long for the player before falling back
MAX_LINE_BYTES = 1 << 20                 #: a longer line is cut (and will not parse as anything useful)
MAX_WAIT_S = 3600.0                      #: longest single wait (threading's TIMEOUT_MAX is ~49 days on Windows)
MAX_BLOCK_LINES = 4096                   #: data lines kept per BOARD block (32x32 = 1024 squares at most)

# Commands that, arriving during a search, stop it early (see "Queued requests" above).
_PREEMPTING = (L.Start, L.RectStart, L.Restart, L.Begin, L.Turn, L.Takeback, L.Play)


def now_ms() -> float:
    return timeman.monotonic_ms()


# ------------------------------------------------------------------------------------------ output
class LineWriter:
    """Writes whole lines (``line + "\\n"``) under a lock and flushes each batch. Accepts a binary stream
    (``sys.stdout.buffer``, a pipe, ``io.BytesIO``) or a text stream. After :meth:`close` nothing is written."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._text = isinstance(stream, io.TextIOBase)
        self._lock = threading.Lock()
        self.closed = False
        self.lines_written = 0

    def write_lines(self, lines: Sequence[str]) -> bool:
        """Write ``lines`` in one go; False when the writer is closed or the stream failed."""
        clean = []
        for line in lines:
            s = str(line).replace("\r", " ").replace("\n", " ").rstrip()
            if s:
                clean.append(s)
        if not clean:
            return True
        data = "".join(s + "\n" for s in clean)
        with self._lock:
            if self.closed:
                return False
            try:
                self._stream.write(data if self._text else data.encode("utf-8", errors="replace"))
                self._stream.flush()
            except (OSError, ValueError) as e:  # broken pipe: the manager is gone
                self.closed = True
                log.warning("output failed (%s); writing nothing more", e)
                return False
            self.lines_written += len(clean)
        for s in clean:
            log.debug(">> %s", s)
        return True

    def close(self) -> None:
        with self._lock:
            self.closed = True
            try:
                self._stream.flush()
            except (OSError, ValueError):
                pass


# ------------------------------------------------------------------------------------------ settings
@dataclass
class Settings:
    """Everything INFO can set (PROTOCOL.md section 6). Times in ms, memory in bytes."""

    timeout_turn: Optional[int] = None
    timeout_match: Optional[int] = None
    time_left: Optional[int] = None
    time_left_stamp: float = 0.0    # now_ms() when time_left was last set
    time_increment: int = 0
    max_memory: int = 0             # 0 = the Gomocup default, 350 MB
    max_node: Optional[int] = None  # None = no visit limit
    max_depth: Optional[int] = None
    thread_num: int = 1
    rule_code: int = 0
    game_type: int = 1
    folder: Optional[str] = None
    show_detail: int = 0
    pondering: bool = False
    hash_size_kb: Optional[int] = None

    @property
    def memory_limit_bytes(self) -> int:
        return self.max_memory if self.max_memory > 0 else DEFAULT_MAX_MEMORY


# ------------------------------------------------------------------------------------------ queue items
@dataclass
class _Item:
    seq: int                 # input line number (orders commands against YXSTOP)
    t: float                 # now_ms() when the command's first line was read
    cmd: Any                 # a lines.Command, or one of the _Block* / _Bad wrappers below


@dataclass
class _Bad:
    error: L.ProtocolError


@dataclass
class _Block:
    """A BOARD / YXBOARD / SWAP2BOARD block being read."""

    cmd: L.Command
    data: List[Union[L.StoneLine, L.PointLine]] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)
    aborted: bool = False

    def spoil(self, why: str) -> None:
        if len(self.problems) < 5:
            self.problems.append(why)

    def add(self, d: Union[L.StoneLine, L.PointLine]) -> None:
        if len(self.data) >= MAX_BLOCK_LINES:
            self.spoil("too many data lines")
        else:
            self.data.append(d)


@dataclass
class _Done:
    token: int


class _Signal:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_WAKE = _Signal("WAKE")
_EOF = _Signal("EOF")
_END = _Signal("END")


class _Search:
    """One move request being searched."""

    def __init__(self, token: int, seq: int, t_recv: float) -> None:
        self.token = token
        self.seq = seq
        self.t_recv = t_recv
        self.stop = threading.Event()
        self.stop_at: Optional[float] = None   # now_ms() when a stop was requested
        self.grace = STOP_GRACE_MS
        self.hard_at: Optional[float] = None   # absolute hard deadline (now_ms)
        self.hard_fired = False
        self.result: Any = None
        self.error: Optional[BaseException] = None
        self.best: Any = None                  # latest SearchInfo from on_info
        self.done = False

    def request_stop(self, at: float, grace: float, why: str) -> None:
        if self.stop_at is None or at + grace < self.stop_at + self.grace:
            self.stop_at, self.grace = at, grace
            log.debug("stop requested (%s)", why)
        self.stop.set()

    def on_info(self, info: Any) -> None:
        self.best = info


# ------------------------------------------------------------------------------------------ the brain
class Brain:
    """The protocol loop. Construct with injected streams and player for in-process use; :func:`run_stdio`
    wires it to the process's stdin/stdout.

    ``input``: a binary (or text) stream to read commands from (default ``sys.stdin.buffer``).
    ``output``: a binary (or text) stream for replies (default ``sys.stdout.buffer``).
    ``player``: an object with the Player interface, used as it is; or ``player_factory(rule, width, height)``
    (or ``player_factory(rule)``), called at the first START (so that a model loads while START is handled,
    PROTOCOL.md P9) and again when ``INFO rule`` or the board size of a new game changes what it would make
    (each rule and size may have its own network). A factory with a ``key(rule, width, height)`` method says
    itself when that is (equal keys: the player is kept); otherwise a new player is made for each new rule
    (and, for a factory that takes the size, each new size). Default: :class:`DefaultPlayers` (the shipped
    network for the rule and size, :func:`gomoku_ai.shipped.default_model`).
    ``hard_exit``: on END, flush and ``os._exit(0)`` from the reader thread (the subprocess brain); otherwise
    :meth:`run` returns 0.
    ``process_start_ms``: when the process was created, on the :func:`gomoku_ai.timeman.monotonic_ms` clock
    (``monotonic_ms() - process_age_ms()``); the start-up time is charged to the first move.
    ``on_folder``: called with the path of ``INFO folder`` (to start a log there).
    """

    def __init__(self, input: Any = None, output: Any = None, player: Any = None, *,
                 player_factory: Optional[Callable[..., Any]] = None, hard_exit: bool = False,
                 process_start_ms: Optional[float] = None,
                 on_folder: Optional[Callable[[str], None]] = None) -> None:
        self._input = input if input is not None else sys.stdin.buffer
        self.writer = LineWriter(output if output is not None else sys.stdout.buffer)
        self._player = player
        self._player_factory = player_factory if player_factory is not None else (
            None if player is not None else DefaultPlayers())
        self._factory_sized = self._player_factory is not None and _takes_size(self._player_factory)
        self._player_key: Any = _NO_PLAYER  # what the factory made the player for (see _factory_key)
        self._factory_keys: dict = {}       # (rule, width, height) -> key, computed once each
        self._hard_exit = hard_exit
        self._on_folder = on_folder
        self.settings = Settings()
        self.board: Optional[Board] = None
        self.my_color: Optional[int] = None

        self._process_start = process_start_ms
        self._busy_ms = 0.0          # time spent handling commands before the first move request
        self._ready_at: Optional[float] = None
        self._first_think_done = False

        self._queue: "queue.Queue[Any]" = queue.Queue()
        self._deferred: Deque[Any] = collections.deque()
        self._lock = threading.Lock()
        self._seq = 0
        self._last_stop_seq = 0
        self._search: Optional[_Search] = None
        self._token = 0
        self._player_idle = threading.Event()
        self._player_idle.set()
        self._yixin = False          # set by the reader when a YX... command is seen
        self._yixin_applied = False
        self._eof = False
        self._ended = False
        self._block: Optional[_Block] = None
        self._block_item: Optional[_Item] = None
        self._reader_thread: Optional[threading.Thread] = None
        self.moves_sent = 0

    # ------------------------------------------------------------------ public
    def run(self) -> int:
        """Read and answer commands until END or EOF; returns the exit code (0)."""
        self._reader_thread = threading.Thread(target=self._reader, name="pygomoku-reader", daemon=True)
        self._reader_thread.start()
        while True:
            item = self._deferred.popleft() if self._deferred else self._queue.get()
            if item is _END or self._ended:
                return 0
            if item is _EOF:
                return 0
            if item is _WAKE or isinstance(item, _Done):
                continue
            t0 = now_ms()
            written = self.writer.lines_written
            try:
                self._dispatch(item)
            except Exception as e:  # noqa: BLE001 - the brain must keep running
                log.exception("handler failed on %r", item.cmd)
                silent = isinstance(item.cmd, (L.Info, L.YxHashClear)) or (
                    isinstance(item.cmd, _Bad) and item.cmd.error.command == "INFO")
                if not silent and self.writer.lines_written == written:  # never a second reply
                    self._send(L.format_error(f"internal error: {type(e).__name__}: {e}"))
            if not self._first_think_done:
                self._busy_ms += now_ms() - t0
            if self._ended:
                return 0

    @property
    def player(self) -> Any:
        return self._player

    # ------------------------------------------------------------------ reader thread
    def _reader(self) -> None:
        self._ready_at = now_ms()
        stream = self._input
        text_mode = isinstance(stream, io.TextIOBase)
        read = getattr(stream, "read1", None)
        lines = L.LineBuffer(MAX_LINE_BYTES)
        try:
            while not self._ended:
                if text_mode:
                    chunk = stream.readline().encode("utf-8", errors="replace")
                elif read is not None:
                    chunk = read(65536)
                else:
                    chunk = stream.readline()
                if not chunk:
                    break
                for raw in lines.feed(chunk):
                    self._on_line(raw)
            if not self._ended:
                for raw in lines.flush():
                    self._on_line(raw)
        except Exception:  # noqa: BLE001 - a read error is treated as EOF
            log.exception("reading input failed")
        finally:
            self._on_eof()

    def _on_line(self, raw: bytes) -> None:
        if self._ended:
            return
        text = raw.decode("utf-8", errors="replace")
        t = now_ms()
        self._seq += 1
        seq = self._seq
        log.debug("<< %s", text)
        try:
            cmd: Any = L.parse_command(text)
        except L.ProtocolError as e:
            cmd = _Bad(e)
        if isinstance(cmd, L.Empty):
            return
        if isinstance(cmd, (L.YxBoard, L.YxStop, L.YxShowForbid, L.YxShowInfo, L.YxHashClear)) or (
                isinstance(cmd, L.Unknown) and cmd.text[:2].upper() == "YX"):
            self._yixin = True
        blk = self._block
        if blk is not None:
            if isinstance(cmd, L.Done):
                self._close_block()
                return
            if isinstance(cmd, (L.StoneLine, L.PointLine)):
                blk.add(cmd)
                return
            if isinstance(cmd, _Bad) and cmd.error.command == "DATA":
                blk.spoil(str(cmd.error))
                return
            if isinstance(cmd, L.Unknown):
                blk.spoil(f"unexpected line {L.clean_text(cmd.text)[:60]!r}")
                return
            blk.aborted = True  # a command word: the block never got its DONE
            self._close_block()
        if isinstance(cmd, (L.Board, L.YxBoard, L.Swap2Board)):
            self._block = _Block(cmd)
            self._block_item = _Item(seq, t, self._block)
            return
        if isinstance(cmd, L.End):
            self._on_end()
            return
        if isinstance(cmd, (L.YxStop, L.Stop)):
            self._on_stop(seq, t)
            return
        self._queue.put(_Item(seq, t, cmd))

    def _close_block(self) -> None:
        item = self._block_item
        self._block = None
        self._block_item = None
        if item is not None:
            self._queue.put(item)

    def _on_stop(self, seq: int, t: float) -> None:
        with self._lock:
            self._last_stop_seq = seq
            s = self._search
            if s is not None:
                s.request_stop(t, STOP_GRACE_MS, "YXSTOP")
        self._queue.put(_WAKE)

    def _on_end(self) -> None:
        self._ended = True
        self.writer.close()
        with self._lock:
            s = self._search
            if s is not None:
                s.stop.set()
        log.info("END")
        if self._hard_exit:
            for h in list(logging.getLogger().handlers):
                try:
                    h.flush()
                except Exception:  # noqa: BLE001
                    pass
            os._exit(0)
        self._queue.put(_END)

    def _on_eof(self) -> None:
        if self._block is not None:
            log.warning("input ended inside %s; dropped", self._block.cmd.word)
            self._block = None
        self._eof = True
        with self._lock:
            s = self._search
            if s is not None:
                s.request_stop(now_ms(), STOP_GRACE_MS, "EOF")
        self._queue.put(_EOF)

    # ------------------------------------------------------------------ dispatch (main thread)
    def _send(self, *lines: str) -> None:
        self.writer.write_lines(lines)

    def _dispatch(self, item: _Item) -> None:
        self._sync_rule()
        cmd = item.cmd
        if isinstance(cmd, _Block):
            if cmd.aborted:
                word = cmd.cmd.word
                self._send(L.format_error(f"{'YXBOARD: ' if word == 'YXBOARD' else ''}"
                                          f"{word} not terminated by DONE"))
            elif isinstance(cmd.cmd, L.Board):
                self._cmd_board(item, cmd, think=True)
            elif isinstance(cmd.cmd, L.YxBoard):
                self._cmd_board(item, cmd, think=False)
            else:
                self._cmd_swap2(cmd)
            return
        if isinstance(cmd, _Bad):
            if cmd.error.command == "INFO":
                log.warning("ignored malformed INFO: %s", cmd.error)
            else:
                self._send(L.format_error(str(cmd.error)))
            return
        handler = self._HANDLERS.get(type(cmd))
        if handler is None:
            self._send(L.format_error(f"unexpected {cmd.word or 'line'}"))
            return
        handler(self, item, cmd)

    # ------------------------------------------------------------------ player
    def _factory_key(self, rule: Rule, w: int, h: int) -> Any:
        """What the factory would make for (rule, w, h): its ``key`` when it has one (e.g. the network's
        path), else the rule (and the size, for a factory that takes it)."""
        spec = (rule, w, h)
        if spec not in self._factory_keys:
            key_of = getattr(self._player_factory, "key", None)
            key: Any = (rule, w, h) if self._factory_sized else rule
            if callable(key_of):
                try:
                    key = key_of(rule, w, h)
                except Exception:  # noqa: BLE001 - the plain key then
                    log.exception("player_factory.key failed")
            self._factory_keys[spec] = key
        return self._factory_keys[spec]

    def _ensure_player(self) -> Any:
        """The player; (re)made by the factory when there is none yet, or when the rule or board size changed
        what the factory would make (a new network) and the player is idle. A factory that fails is not
        retried for that key: fallback moves are played."""
        if self._player_factory is None or not self._player_idle.is_set():
            return self._player
        rule = self._rule()
        b = self.board
        w, h = (b.width, b.height) if b is not None else (15, 15)
        key = self._factory_key(rule, w, h)
        if self._player_key is _NO_PLAYER or key != self._player_key:
            self._player_key = key
            self._player = None
            try:
                if self._factory_sized:
                    self._player = self._player_factory(rule, w, h)
                else:
                    self._player = self._player_factory(rule)
                log.info("player for %s %dx%d: %s (%s)", rule.value, w, h, type(self._player).__name__,
                         player_source(self._player))
            except Exception:  # noqa: BLE001 - play on with fallback moves rather than forfeit
                log.exception("could not create the player; answering with fallback moves")
        return self._player

    def _player_new_game(self) -> None:
        p = self._ensure_player()
        if p is not None and self._player_idle.is_set():
            try:
                p.new_game()
            except Exception:  # noqa: BLE001
                log.exception("player.new_game failed")

    # ------------------------------------------------------------------ board helpers
    def _rule(self) -> Rule:
        return rule_from_gomocup(self.settings.rule_code, yixin=self._yixin)

    def _sync_rule(self) -> None:
        if self._yixin and not self._yixin_applied:
            self._yixin_applied = True
            self._apply_rule()

    def _apply_rule(self) -> None:
        rule = self._rule()
        if self.board is not None and self.board.rule is not rule:
            self.board = _rebuild(self.board, rule=rule)
        if self.board is not None and self._player_key is not _NO_PLAYER:
            self._ensure_player()  # a network for the new rule loads now rather than during the move

    def _need_board(self, word: str) -> Optional[Board]:
        if self.board is None:
            self._send(L.format_error(f"{word} before START: no game has been started"))
        return self.board

    def _new_board(self, w: int, h: int, word: str) -> bool:
        if not (MIN_SIZE <= w <= MAX_SIZE and MIN_SIZE <= h <= MAX_SIZE):
            self._send(L.format_error(f"unsupported board size {w}x{h}; this brain supports "
                                      f"{MIN_SIZE}..{MAX_SIZE} on a side (e.g. 15 or 20)"))
            return False
        self.board = Board(w, h, self._rule())
        self.my_color = None
        self._player_new_game()
        self._send(L.format_ok())
        log.info("%s: new %dx%d %s game", word, w, h, self.board.rule.value)
        return True

    # ------------------------------------------------------------------ handlers
    def _h_start(self, item: _Item, cmd: L.Start) -> None:
        self._new_board(cmd.width, cmd.height, "START")

    def _h_rectstart(self, item: _Item, cmd: L.RectStart) -> None:
        self._new_board(cmd.width, cmd.height, "RECTSTART")

    def _h_restart(self, item: _Item, cmd: L.Restart) -> None:
        b = self._need_board("RESTART")
        if b is not None:
            self._new_board(b.width, b.height, "RESTART")

    def _h_begin(self, item: _Item, cmd: L.Begin) -> None:
        b = self._need_board("BEGIN")
        if b is None:
            return
        if b.moves:
            self._send(L.format_error("BEGIN on a board that is not empty (send START or RESTART first)"))
            return
        self.my_color = b.side_to_move
        self._think(item)

    def _h_turn(self, item: _Item, cmd: L.Turn) -> None:
        b = self._need_board("TURN")
        if b is None:
            return
        m = self._empty_square(b, cmd.x, cmd.y, "TURN")
        if m is None:
            return
        if b.winner is not None:
            self._send(L.format_error("TURN after the game was won"))
            return
        if self.my_color is None:
            self.my_color = 3 - b.side_to_move
        elif b.side_to_move == self.my_color:
            b.pass_turn()
        b.push(m)
        self._think(item)

    def _h_play(self, item: _Item, cmd: L.Play) -> None:
        b = self._need_board("PLAY")
        if b is None:
            return
        m = self._empty_square(b, cmd.x, cmd.y, "PLAY")
        if m is None:
            return
        if b.winner is not None:
            self._send(L.format_error("PLAY after the game was won"))
            return
        if self.my_color is None:
            self.my_color = b.side_to_move
        elif b.side_to_move != self.my_color:
            b.pass_turn()
        b.push(m)
        self._send(L.format_move(cmd.x, cmd.y))

    def _h_takeback(self, item: _Item, cmd: L.Takeback) -> None:
        b = self._need_board("TAKEBACK")
        if b is None:
            return
        if not (0 <= cmd.x < b.width and 0 <= cmd.y < b.height):
            self._send(L.format_error(f"TAKEBACK {cmd.x},{cmd.y} is off the {b.width}x{b.height} board"))
            return
        m = b.index(cmd.x, cmd.y)
        color = b[m]
        if color not in (BLACK, WHITE):
            self._send(L.format_error(f"TAKEBACK {cmd.x},{cmd.y}: there is no stone there"))
            return
        if b.last_move == m and color == 3 - b.side_to_move:
            b.pop()
        else:
            self.board = _rebuild(b, remove=m, to_move=color)
        self._send(L.format_ok())

    def _h_info(self, item: _Item, cmd: L.Info) -> None:
        self._apply_info(cmd)

    def _h_about(self, item: _Item, cmd: L.About) -> None:
        self._send(L.format_about(ABOUT))

    def _h_showforbid(self, item: _Item, cmd: L.YxShowForbid) -> None:
        b = self._need_board("YXSHOWFORBID")
        if b is None:
            return
        pts = sorted((b.xy(m) for m in movegen.forbidden_points(b)), key=lambda p: (p[1], p[0]))
        self._send(L.format_forbid(pts))

    def _h_showinfo(self, item: _Item, cmd: L.YxShowInfo) -> None:
        self.settings.show_detail = max(1, self.settings.show_detail)
        self._send(L.format_message(f"{BRAIN_NAME} {__version__}"),
                   L.format_message(f"INFO MAX_THREAD_NUM {os.cpu_count() or 1}"))

    def _h_hashclear(self, item: _Item, cmd: L.YxHashClear) -> None:
        self._player_new_game()

    def _h_unknown(self, item: _Item, cmd: L.Unknown) -> None:
        self._send(L.format_unknown(L.clean_text(cmd.text)[:200] or "(unprintable line)"))

    def _h_stray(self, item: _Item, cmd: L.Command) -> None:
        what = "DONE without BOARD" if isinstance(cmd, L.Done) else "data line outside BOARD"
        self._send(L.format_error(what))

    _HANDLERS = {
        L.Start: _h_start, L.RectStart: _h_rectstart, L.Restart: _h_restart, L.Begin: _h_begin,
        L.Turn: _h_turn, L.Play: _h_play, L.Takeback: _h_takeback, L.Info: _h_info, L.About: _h_about,
        L.YxShowForbid: _h_showforbid, L.YxShowInfo: _h_showinfo, L.YxHashClear: _h_hashclear,
        L.Unknown: _h_unknown, L.Done: _h_stray, L.StoneLine: _h_stray, L.PointLine: _h_stray,
    }

    def _empty_square(self, b: Board, x: int, y: int, word: str) -> Optional[int]:
        if not (0 <= x < b.width and 0 <= y < b.height):
            self._send(L.format_error(f"{word} {x},{y} is off the {b.width}x{b.height} board"))
            return None
        m = b.index(x, y)
        if b[m] != EMPTY:
            self._send(L.format_error(f"{word} {x},{y} is not an empty square"))
            return None
        return m

    # ------------------------------------------------------------------ BOARD / YXBOARD / SWAP2BOARD
    def _cmd_board(self, item: _Item, blk: _Block, think: bool) -> None:
        word = blk.cmd.word
        prefix = "" if think else "YXBOARD: "
        if self.board is None:
            self._send(L.format_error(f"{prefix}{word} before START: no game has been started"))
            return
        w, h = self.board.width, self.board.height
        problems = list(blk.problems)
        own: List[int] = []
        opp: List[int] = []
        walls: List[int] = []
        order: List[Tuple[int, int]] = []   # (square, field) of stones in the order given
        seen = set()
        for d in blk.data:
            if not isinstance(d, L.StoneLine):
                problems.append(f"{d.x},{d.y} has no colour field")
                continue
            if not (0 <= d.x < w and 0 <= d.y < h):
                problems.append(f"{d.x},{d.y} is off the {w}x{h} board")
                continue
            if d.field not in (1, 2, 3):
                problems.append(f"{d.x},{d.y},{d.field}: the field must be 1, 2 or 3")
                continue
            m = d.y * w + d.x
            if m in seen:
                problems.append(f"{d.x},{d.y} is given twice")
                continue
            seen.add(m)
            if d.field == 3:
                walls.append(m)
            else:
                (own if d.field == 1 else opp).append(m)
                order.append((m, d.field))
        if problems:
            self._send(L.format_error(f"{prefix}inconsistent {word}: {'; '.join(problems[:3])}"))
            return
        if len(own) == len(opp):
            me = BLACK
        elif len(opp) == len(own) + 1:
            me = WHITE
        else:
            me = BLACK if order[0][1] == 1 else WHITE
            log.warning("%s with %d own and %d opponent stones; taking the first stone as Black",
                        word, len(own), len(opp))
        blacks = [m for m, f in order if (f == 1) == (me == BLACK)]
        whites = [m for m, f in order if (f == 1) != (me == BLACK)]
        nb = Board(w, h, self.board.rule)
        for m in walls:
            nb.put_wall(m)
        nb.set_position(blacks, whites, to_move=me)
        self.board = nb
        self.my_color = me
        if think:
            self._think(item)

    def _cmd_swap2(self, blk: _Block) -> None:
        b = self._need_board("SWAP2BOARD")
        if b is None:
            return
        problems = list(blk.problems)
        pts: List[Tuple[int, int]] = []
        for d in blk.data:
            if not (0 <= d.x < b.width and 0 <= d.y < b.height):
                problems.append(f"{d.x},{d.y} is off the board")
            elif (d.x, d.y) in pts:
                problems.append(f"{d.x},{d.y} is given twice")
            else:
                pts.append((d.x, d.y))
        if not problems and len(pts) not in (0, 3, 5):
            problems.append(f"{len(pts)} stones; expected 0, 3 or 5")
        if problems:
            self._send(L.format_error(f"inconsistent SWAP2BOARD: {'; '.join(problems[:3])}"))
            return
        if not pts:
            self._send(L.format_moves(fallback.swap2_opening(b.width, b.height)))
            return
        pos = fallback.board_from_sequence(b.width, b.height, pts, b.rule)
        m = fallback.swap2_decision(pos)
        self._send(L.format_swap() if m is None else L.format_move(*pos.xy(m)))

    # ------------------------------------------------------------------ INFO
    def _apply_info(self, cmd: L.Info) -> None:
        s = self.settings
        key = cmd.key
        if key in ("folder",):
            s.folder = cmd.value
            if self._on_folder is not None and cmd.value:
                try:
                    self._on_folder(cmd.value)
                except Exception:  # noqa: BLE001
                    log.exception("INFO folder: could not use %r", cmd.value)
            return
        if key not in _INT_KEYS:
            log.debug("INFO %s ignored", key)
            return
        try:
            v = cmd.int_value()
        except L.ProtocolError as e:
            log.warning("%s", e)
            return
        if key == "timeout_turn":
            s.timeout_turn = max(0, v)
        elif key == "timeout_match":
            s.timeout_match = max(0, v)
        elif key == "time_left":
            s.time_left = v
            s.time_left_stamp = now_ms()
        elif key == "time_increment":
            s.time_increment = max(0, v)
        elif key == "max_memory":
            s.max_memory = max(0, v)
        elif key == "max_node":
            s.max_node = v if v > 0 else None
        elif key == "max_depth":
            s.max_depth = v if v > 0 else None
        elif key == "thread_num":
            s.thread_num = max(1, v)
        elif key == "rule":
            s.rule_code = v
            self._apply_rule()
        elif key == "game_type":
            s.game_type = v
        elif key == "show_detail":
            s.show_detail = v
        elif key == "pondering":
            s.pondering = v == 1
        elif key == "hash_size":
            s.hash_size_kb = v

    # ------------------------------------------------------------------ thinking
    def _startup_charge(self, t_recv: float) -> float:
        """Time to charge to the first move: GomocupJudge starts the clock before the process has finished
        starting (PROTOCOL.md section 7), so charge everything we did before this request, but not the time
        we spent waiting for input (Piskvork may send the first request long after START)."""
        now = now_ms()
        since = now - t_recv
        if self._process_start is None:
            return since
        ready = (self._ready_at if self._ready_at is not None else now) - self._process_start
        age = now - self._process_start
        return max(since, min(age, ready + self._busy_ms + since))

    def _think(self, item: _Item) -> None:
        """Search the current position for the side to move and answer exactly one move (or ERROR)."""
        b = self.board
        assert b is not None
        if b.winner is not None:
            self._send(L.format_error("the game is already over"))
            return
        if b.is_full():
            self._send(L.format_error("the board is full; no move is possible"))
            return
        s_ = self.settings
        if not self._first_think_done:
            self._first_think_done = True
            used = self._startup_charge(item.t)
        else:
            used = now_ms() - item.t
        dl = timeman.compute_deadlines(
            s_.timeout_turn, s_.timeout_match, s_.time_left, move_number=len(b.moves),
            empty_squares=b.size - len(b.moves) - _count_walls(b), used_ms=used, increment_ms=s_.time_increment,
            other_limit=s_.max_node is not None or s_.max_depth is not None)
        if self._eof:
            dl = timeman.INSTANT
        self._token += 1
        search = _Search(self._token, item.seq, item.t)
        t0 = now_ms()
        if dl.hard_ms is not None:
            search.hard_at = t0 + dl.hard_ms
        with self._lock:
            self._search = search
            if self._last_stop_seq > item.seq:
                search.request_stop(t0, STOP_GRACE_MS, "YXSTOP before the search started")
        if search.stop.is_set():
            dl = timeman.INSTANT
        player = self._ensure_player()
        started = False
        if player is not None:
            wait = 0.05 if dl.hard_ms is None else min(0.05, dl.hard_ms / 1000.0)
            if self._player_idle.wait(wait):
                self._configure_player(player)
                self._player_idle.clear()
                from gomoku_ai.player import Limit  # the real module; imported once here
                limit = Limit(soft_ms=dl.soft_ms, hard_ms=dl.hard_ms, visits=s_.max_node, depth=s_.max_depth)
                th = threading.Thread(target=self._worker, args=(search, player, b.copy(), limit),
                                      name="pygomoku-think", daemon=True)
                th.start()
                started = True
            else:
                log.warning("player still busy with an abandoned search; answering a fallback move")
        log.debug("think #%d: soft %s hard %s used %.1f ms", search.token, dl.soft_ms, dl.hard_ms, used)
        info = None
        try:
            if started:
                info = self._supervise(search)
        except Exception:  # noqa: BLE001 - still answer a move
            log.exception("search supervision failed; fallback move")
            search.stop.set()
            info = None
        finally:
            with self._lock:
                self._search = None
        if self._ended:
            return
        self._answer(search, info)

    def _configure_player(self, player: Any) -> None:
        for attr, value in (("memory_limit_bytes", self.settings.memory_limit_bytes),
                            ("thread_num", self.settings.thread_num)):
            try:
                setattr(player, attr, value)
            except Exception:  # noqa: BLE001 - a player without the attribute is fine
                pass

    def _worker(self, search: _Search, player: Any, board: Board, limit: Any) -> None:
        try:
            search.result = player.think(board, limit, search.stop, search.on_info)
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            search.error = e
        finally:
            search.done = True
            self._player_idle.set()
            self._queue.put(_Done(search.token))

    def _supervise(self, s: _Search) -> Any:
        """Wait for the worker while serving the queue; returns the player's SearchInfo, or None for a
        fallback (overrun, error)."""
        while True:
            if s.done:
                break
            now = now_ms()
            if s.hard_at is not None and now >= s.hard_at and not s.hard_fired:
                s.hard_fired = True
                s.request_stop(s.hard_at, timeman.WATCHDOG_GRACE_MS, "hard deadline")
            wake: Optional[float] = None
            if s.stop_at is not None:
                wake = s.stop_at + s.grace
                if now >= wake:
                    log.warning("player did not return %.0f ms after the stop; fallback move", s.grace)
                    return None
            if s.hard_at is not None and not s.hard_fired:
                wake = s.hard_at if wake is None else min(wake, s.hard_at)
            try:
                it = self._queue.get(timeout=None if wake is None else
                                     min(MAX_WAIT_S, max(0.0, (wake - now) / 1000.0)))
            except queue.Empty:
                continue
            if isinstance(it, _Done):
                continue  # s.done says whether it is ours
            if it is _WAKE:
                continue
            if it is _END:
                self._ended = True
                return None
            if it is _EOF:
                s.request_stop(now_ms(), STOP_GRACE_MS, "EOF")
                self._deferred.append(it)
                continue
            if isinstance(it, _Item) and isinstance(it.cmd, L.Info) and not self._deferred:
                try:
                    self._apply_info(it.cmd)
                    if it.cmd.key in ("time_left", "timeout_turn", "timeout_match"):
                        self._retime(s)
                except Exception:  # noqa: BLE001
                    log.exception("INFO during search failed")
                continue
            self._deferred.append(it)
            if isinstance(it, _Item) and (isinstance(it.cmd, _PREEMPTING) or isinstance(it.cmd, _Block)):
                s.request_stop(now_ms(), STOP_GRACE_MS, f"{type(it.cmd).__name__} arrived")
        if s.error is not None:
            log.error("player raised %r", s.error, exc_info=s.error)
            return None
        return s.result

    def _retime(self, s: _Search) -> None:
        """A time INFO arrived during the search: bring the hard deadline forward if the new limits demand
        it (a human shortening the clock); it is never pushed back."""
        b = self.board
        if b is None or s.hard_fired:
            return
        st = self.settings
        dl = timeman.compute_deadlines(st.timeout_turn, st.timeout_match, st.time_left, len(b.moves),
                                       b.size - len(b.moves) - _count_walls(b), 0.0, st.time_increment,
                                       st.max_node is not None or st.max_depth is not None)
        if dl.hard_ms is not None:
            at = now_ms() + dl.hard_ms
            if s.hard_at is None or at < s.hard_at:
                s.hard_at = at
                log.debug("hard deadline brought forward to %.0f ms from now", dl.hard_ms)

    def _answer(self, s: _Search, info: Any) -> None:
        b = self.board
        assert b is not None
        m = None
        source = "player"
        if info is not None:
            m = _as_move(getattr(info, "move", None))
            if m is None or not _legal(b, m):
                log.error("player returned an illegal move %r; fallback move", getattr(info, "move", None))
                m = None
        if m is None:
            m = self._fallback_move(b, s.best)
            source = "fallback"
            info = None
        if m is None:
            self._send(L.format_error("no legal move"))
            return
        out = []
        if self.settings.show_detail:
            out.append(L.format_message(_detail(b, info) if info is not None else
                                        f"fallback move {b.move_name(m)}"))
        x, y = b.xy(m)
        me = b.side_to_move
        b.push(m)
        self.my_color = me
        out.append(L.format_move(x, y))
        self._send(*out)
        self.moves_sent += 1
        try:
            used = now_ms() - s.t_recv
            st = self.settings
            if st.time_left is None and st.timeout_match:
                st.time_left, st.time_left_stamp = st.timeout_match, s.t_recv
            if timeman.clock_is_limited(st.timeout_match, st.time_left):
                st.time_left = timeman.charge(st.time_left, now_ms() - max(s.t_recv, st.time_left_stamp))
            log.info("move %s (%s) after %.0f ms", L.format_move(x, y), source, used)
        except Exception:  # noqa: BLE001 - the move is out; nothing may follow it
            log.exception("bookkeeping after the move failed")

    def _fallback_move(self, b: Board, best: Any) -> Optional[int]:
        m = fallback.quick_move(b)
        if m is None:
            return None
        me = b.side_to_move
        if b.makes_five(m, me) or b.makes_five(m, 3 - me):
            return m  # a win or a forced block beats any unfinished search
        bm = _as_move(getattr(best, "move", None))
        if bm is not None and _legal(b, bm):
            return bm
        return m


_INT_KEYS = frozenset({
    "timeout_turn", "timeout_match", "time_left", "time_increment", "max_memory", "max_node", "max_depth",
    "thread_num", "rule", "game_type", "show_detail", "pondering", "hash_size",
})


def _as_move(m: Any) -> Optional[int]:
    """``m`` as a Python int if it is an integer of any kind (numpy integers included), else None."""
    if isinstance(m, bool):
        return None
    try:
        return operator.index(m)
    except TypeError:
        return None


def _legal(b: Board, m: int) -> bool:
    """May the side to move play ``m`` (:func:`gomoku_ai.movegen.is_legal`: on the board, empty, not a renju
    forbidden point)? A failing detector is logged and the move counts as illegal, never as legal."""
    try:
        return movegen.is_legal(b, m)
    except Exception:  # noqa: BLE001 - the brain must answer; an unchecked move is not sent
        log.exception("legality check of move %r failed; treating the move as illegal", m)
        return False


def _count_walls(b: Board) -> int:
    return int((b.cells == WALL).sum())


def _rebuild(b: Board, rule: Optional[Rule] = None, remove: Optional[int] = None,
             to_move: Optional[int] = None) -> Board:
    """A copy of ``b`` (walls, stones in move order, side to move), optionally under another rule or without
    the stone at ``remove``."""
    nb = Board(b.width, b.height, rule if rule is not None else b.rule, b.n)
    for m in range(b.size):
        if b[m] == WALL:
            nb.put_wall(m)
    blacks = [m for m in b.moves if m != remove and b[m] == BLACK]
    whites = [m for m in b.moves if m != remove and b[m] == WHITE]
    nb.set_position(blacks, whites, to_move=b.side_to_move if to_move is None else to_move)
    return nb


def _detail(b: Board, info: Any) -> str:
    """Rapfi's UCI-like MESSAGE text for a finished search."""
    depth = int(getattr(info, "depth", 0) or 0)
    winrate = getattr(info, "winrate", 0.5)
    visits = int(getattr(info, "visits", 0) or 0)
    nps = float(getattr(info, "nodes_per_s", 0.0) or 0.0)
    tm = int(getattr(info, "elapsed_ms", 0.0) or 0)
    pv = [_as_move(m) for m in (getattr(info, "pv", None) or [info.move])]
    pv_text = " ".join(b.move_name(m) for m in pv[:20] if m is not None and 0 <= m < b.size)
    pv_text = pv_text or b.move_name(_as_move(info.move) or 0)
    return (f"depth {depth}-{depth} ev {100.0 * winrate:.1f} n {visits} n/ms {int(nps / 1000.0)} "
            f"tm {tm} pv {pv_text}")


# ------------------------------------------------------------------------------------------ players
_NO_PLAYER = object()


def _takes_size(factory: Any) -> bool:
    """Whether ``factory`` can be called as ``factory(rule, width, height)`` (else ``factory(rule)``)."""
    import inspect
    try:
        inspect.signature(factory).bind(Rule.FREESTYLE, 15, 15)
    except (TypeError, ValueError):
        return False
    return True


def player_source(player: Any) -> str:
    """What a player evaluates with: the network's file basename, or the evaluator's name."""
    ev = getattr(player, "evaluator", None)
    base = getattr(getattr(ev, "network", None), "basename", None)
    if base is not None:
        return str(base)
    return str(getattr(ev, "name", None) or type(player).__name__)


def _player_kind(name: Optional[str]) -> str:
    return (name if name is not None else os.environ.get("PYGOMOKU_PLAYER", "")).strip().lower()


class DefaultPlayers:
    """The brain's default player factory: :func:`make_player` for (rule, width, height), with ``model``
    (``engine.py --model``: a path, a shipped model's name or "heuristic") overriding the shipped choice.
    :meth:`key` is the network that would be used, so a new game on another size that uses the same network
    (15x15 and 20x20) keeps the player, and ``START 8`` after ``START 15`` gets the 8x8 network."""

    def __init__(self, name: Optional[str] = None, model: Optional[str] = None) -> None:
        self.name = name
        self.model = model

    def key(self, rule: Rule, width: int, height: int) -> Any:
        kind = _player_kind(self.name)
        if kind in ("sleepy", "stuck"):
            return (kind, rule)
        try:
            from gomoku_ai.shipped import PlayerFactory
        except ImportError:
            return rule
        return PlayerFactory(self.model).key(rule, width, height)

    def __call__(self, rule: Rule = Rule.FREESTYLE, width: int = 15, height: Optional[int] = None) -> Any:
        return make_player(self.name, rule, width, height, model=self.model)


def make_player(name: Optional[str] = None, rule: Rule = Rule.FREESTYLE, width: int = 15,
                height: Optional[int] = None, model: Optional[str] = None) -> Any:
    """The player to use: ``name`` or ``$PYGOMOKU_PLAYER``: ``sleepy`` / ``stuck`` are the diagnostic players
    of :mod:`protocol.testplayers`; anything else (or nothing) is the engine's player for ``rule`` on a
    ``width`` x ``height`` board (:func:`gomoku_ai.shipped.load_player`: ``model`` when given, else the
    shipped network for that rule and size when there is one)."""
    key = _player_kind(name)
    if key == "sleepy":
        from .testplayers import SleepyPlayer
        return SleepyPlayer()
    if key == "stuck":
        from .testplayers import StuckPlayer
        return StuckPlayer()
    if key not in ("", "default"):
        log.warning("unknown PYGOMOKU_PLAYER %r; using the default player", key)
    try:
        from gomoku_ai.shipped import load_player
    except ImportError:
        from gomoku_ai.player import Player
        return Player()
    return load_player(model, rule=rule, width=width, height=height)
