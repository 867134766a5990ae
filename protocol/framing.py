"""The brain's line framing: input lines to queued commands, and replies to output lines.

* :class:`CommandReader` is the body of the brain's **reader** thread. It reads the input stream as bytes,
  splits it on LF *and* CR (so CR LF, LF and bare CR all work; the empty pieces are ignored), decodes UTF-8
  with replacement, parses each line (:func:`protocol.lines.parse_command`) and assembles ``BOARD``/``YXBOARD``
  /``SWAP2BOARD`` blocks up to ``DONE`` (:class:`Block`). ``END`` and ``YXSTOP``/``STOP`` are handed at once to
  its :class:`ReaderEvents` (they act from this thread: END stops the search and ends the reading, and is
  queued too, so that the commands before it are still answered); every other command goes, in order, into the
  :class:`Inbox` as an :class:`Item`. It also notes whether a ``YX...`` command has been seen (``yixin``).
* :class:`Inbox`: the queue the main thread takes commands from, plus the commands it deferred while a
  search ran (served first, in order).
* :class:`LineWriter`: the one locked writer of replies (``line + "\\n"``, flushed at once, never a trailing
  space or a CR/LF inside a line; nothing after :meth:`LineWriter.close`).

Block conventions: inside a block, ``x,y,f`` / ``x,y`` lines are collected; a malformed or unknown line
spoils the block (answered ``ERROR`` at ``DONE``); a known command word aborts it (the block is queued
``aborted``, then the command). At most :data:`MAX_BLOCK_LINES` data lines are kept.
"""
from __future__ import annotations

import collections
import io
import logging
import queue
import threading
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Deque, List, Optional, Protocol, Sequence, TextIO, Union, cast

from . import lines as L

log = logging.getLogger("pygomoku.brain")

MAX_LINE_BYTES = 1 << 20     #: a longer line is cut (and will not parse as anything useful)
MAX_BLOCK_LINES = 4096       #: data lines kept per BOARD block (32x32 = 1024 squares at most)

InStream = Union[BinaryIO, TextIO]
OutStream = Union[BinaryIO, TextIO]
DataLine = Union[L.StoneLine, L.PointLine]

_YIXIN_COMMANDS = (L.YxBoard, L.YxStop, L.YxShowForbid, L.YxShowInfo, L.YxHashClear, L.YxNBest,
                   L.YxSearchDefend, L.YxBlock, L.YxBlockUndo, L.YxBlockReset, L.Unsupported)
#: commands followed by data lines up to DONE
BLOCK_COMMANDS = (L.Board, L.YxBoard, L.Swap2Board, L.YxBlock, L.YxBlockUndo)


# ------------------------------------------------------------------------------------------ output
class LineWriter:
    """Writes whole lines (``line + "\\n"``) under a lock and flushes each batch. Accepts a binary stream
    (``sys.stdout.buffer``, a pipe, ``io.BytesIO``) or a text stream. After :meth:`close` nothing is written."""

    def __init__(self, stream: OutStream) -> None:
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
                if self._text:
                    cast(TextIO, self._stream).write(data)
                else:
                    cast(BinaryIO, self._stream).write(data.encode("utf-8", errors="replace"))
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
            except (OSError, ValueError) as e:  # the stream is gone: nothing left to flush
                log.debug("flush on close failed: %s", e)


# ------------------------------------------------------------------------------------------ queue items
@dataclass
class Bad:
    """A known command word whose arguments could not be read."""

    error: L.ProtocolError


@dataclass
class Block:
    """A BOARD / YXBOARD / SWAP2BOARD / YXBLOCK / YXBLOCKUNDO block being read (``cmd`` is the opening
    command)."""

    cmd: L.Command
    data: List[DataLine] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)
    aborted: bool = False

    def spoil(self, why: str) -> None:
        if len(self.problems) < 5:
            self.problems.append(why)

    def add(self, d: DataLine) -> None:
        if len(self.data) >= MAX_BLOCK_LINES:
            self.spoil("too many data lines")
        else:
            self.data.append(d)


@dataclass
class Item:
    """One command for the main thread: ``seq`` is its input line number (orders commands against YXSTOP),
    ``t`` the :func:`protocol.think.now_ms` time its first line was read."""

    seq: int
    t: float
    cmd: Union[L.Command, Bad, Block]


class Signal:
    """A queue entry that is not a command (see the constants below)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


WAKE = Signal("WAKE")                #: look at the current search again (a stop was requested)
EOF = Signal("EOF")                  #: the input ended
END = Signal("END")                  #: END was read
SEARCH_DONE = Signal("SEARCH_DONE")  #: a worker thread's think call returned

Entry = Union[Item, Signal]


class Inbox:
    """The main thread's commands: the queue the reader fills, and the entries deferred during a search."""

    def __init__(self) -> None:
        self._queue: "queue.Queue[Entry]" = queue.Queue()
        self._deferred: Deque[Entry] = collections.deque()

    def put(self, entry: Entry) -> None:
        """From any thread."""
        self._queue.put(entry)

    def next(self) -> Entry:
        """The oldest deferred entry, else the next from the queue (waits)."""
        return self._deferred.popleft() if self._deferred else self._queue.get()

    def get(self, timeout_s: Optional[float]) -> Entry:
        """The next entry from the queue, not the deferred ones; raises :class:`queue.Empty` after
        ``timeout_s`` seconds (None: waits)."""
        return self._queue.get(timeout=timeout_s)

    def defer(self, entry: Entry) -> None:
        self._deferred.append(entry)

    @property
    def has_deferred(self) -> bool:
        return bool(self._deferred)


# ------------------------------------------------------------------------------------------ reader
class ReaderEvents(Protocol):
    """What the reader thread reports at once (called on the reader thread)."""

    @property
    def end_read(self) -> bool:
        """True once END was read: the reader stops."""

    def on_end(self) -> None: ...

    def on_stop(self, seq: int, t: float) -> None: ...

    def on_eof(self) -> None: ...


class CommandReader:
    """Reads ``stream`` until EOF (or END) on the calling thread: see the module docstring. ``clock`` gives
    the time (ms) each line is stamped with."""

    def __init__(self, stream: InStream, inbox: Inbox, events: ReaderEvents,
                 clock: Callable[[], float]) -> None:
        self._stream = stream
        self._inbox = inbox
        self._events = events
        self._clock = clock
        self._seq = 0
        self._block: Optional[Block] = None
        self._block_item: Optional[Item] = None
        self.yixin = False                    #: set once a YX... command has been seen
        self.ready_at: Optional[float] = None  #: when reading began (clock time)

    def run(self) -> None:
        self.ready_at = self._clock()
        stream = self._stream
        text_mode = isinstance(stream, io.TextIOBase)
        read = getattr(stream, "read1", None)
        lines = L.LineBuffer(MAX_LINE_BYTES)
        try:
            while not self._events.end_read:
                if text_mode:
                    chunk = cast(TextIO, stream).readline().encode("utf-8", errors="replace")
                elif read is not None:
                    chunk = read(65536)
                else:
                    chunk = cast(BinaryIO, stream).readline()
                if not chunk:
                    break
                for raw in lines.feed(chunk):
                    self._on_line(raw)
            if not self._events.end_read:
                for raw in lines.flush():
                    self._on_line(raw)
        except Exception:  # noqa: BLE001 - a read error is treated as EOF
            log.exception("reading input failed")
        finally:
            if self._block is not None:
                log.warning("input ended inside %s; dropped", self._block.cmd.word)
                self._block = None
            self._events.on_eof()

    def _on_line(self, raw: bytes) -> None:
        if self._events.end_read:
            return
        text = raw.decode("utf-8", errors="replace")
        t = self._clock()
        self._seq += 1
        seq = self._seq
        log.debug("<< %s", text)
        cmd: Union[L.Command, Bad]
        try:
            cmd = L.parse_command(text)
        except L.ProtocolError as e:
            cmd = Bad(e)
        if isinstance(cmd, L.Empty):
            return
        if isinstance(cmd, _YIXIN_COMMANDS) or (isinstance(cmd, L.Unknown) and cmd.text[:2].upper() == "YX"):
            self.yixin = True
        blk = self._block
        if blk is not None:
            if isinstance(cmd, L.Done):
                self._close_block()
                return
            if isinstance(cmd, (L.StoneLine, L.PointLine)):
                blk.add(cmd)
                return
            if isinstance(cmd, Bad) and cmd.error.command == "DATA":
                blk.spoil(str(cmd.error))
                return
            if isinstance(cmd, L.Unknown):
                blk.spoil(f"unexpected line {L.clean_text(cmd.text)[:60]!r}")
                return
            blk.aborted = True  # a command word: the block never got its DONE
            self._close_block()
        if isinstance(cmd, BLOCK_COMMANDS):
            self._block = Block(cmd)
            self._block_item = Item(seq, t, self._block)
            return
        if isinstance(cmd, L.End):
            self._events.on_end()
            return
        if isinstance(cmd, (L.YxStop, L.Stop)):
            self._events.on_stop(seq, t)
            return
        self._inbox.put(Item(seq, t, cmd))

    def _close_block(self) -> None:
        item = self._block_item
        self._block = None
        self._block_item = None
        if item is not None:
            self._inbox.put(item)
