"""VCT: victory by continuous threats (fours *and* threes), for attack and for defence.

Written from the point of view of **the side to move** (the attacker in :func:`vct_search`; the
defender in :func:`vct_defences`). Moves are flat indices; ``deadline`` is an absolute
:func:`time.perf_counter` value; node limits count attacker nodes.

The search (an AND/OR proof search over threat sequences)
----------------------------------------------------------
* **Attacker node** (attacker to move). A five wins; two defender five-points lose; one must be
  blocked (the only candidate). A VCF (:func:`gomoku_ai.tactics.vcf_search`) wins. Otherwise, with
  depth left, the attacker tries its *threats*: every move that makes a four or an open three
  (broken threes included), ordered by the number of threat lines they make. At the root it may
  also try *quiet* moves (``quiet_moves``, :func:`_quiet_threats`): no four or three, but a four can
  follow along one of their lines; the defender node keeps those that leave a VCF threat, as it
  does threes (session 40: Rapfi's mates in our lost games often start so). Depth counts attacker
  moves before the final VCF; iterative deepening finds short wins first.
* **Defender node** (after an attacker move). After a four, the defender's only replies are the
  blocks. After a three (or a block), the attacker must threaten a VCF as if the defender passed;
  otherwise the move was no threat and fails. The defender then gets a free move, so a defender VCF
  refutes the attacker's move (one that cannot be ruled out within the limits counts as a refutation
  too). The defender's replies are every move that might stop the threatened VCF: under freestyle
  and exact five its own squares, the squares that would turn one of its blocks into a counter-four
  (:func:`gomoku_ai.tactics._reply_zone`; since session 38) and the defender's fours (counter-fours
  gain a tempo); under renju and caro every square within n steps of its line and the fours. The
  attacker must win against every one of them (a reply that stops nothing is refuted at once: the
  threatened VCF is first replayed after it, :meth:`_VCT._replay`, and only a reply that breaks
  it gets an attacker node's own search). No reply stops it: the attacker wins.

Soundness: the attacker's choices may be pruned freely (a win is only missed); the defender's never
are -- every reply that might stop the threat is searched. Limits only ever turn a "win" into "not
found": an aborted defence check keeps the unverified candidates as replies, an aborted
defender-VCF check refutes. So a returned line is a forced win under the rules the tactics module
implements (freestyle, exact five, renju forbidden points, caro), at the given limits.

Defence (:func:`vct_defences`): the opponent's VCT as if we passed; if there is one, the candidate
replies are the squares on the lines through its first move and near its next two plies, and our
own fours and threes (a counter-threat can gain the tempo); each is kept when the opponent has no
VCT after it (within the limits). This is not a proof in either direction: a kept move may still
lose to a longer threat, and a defence far from the line's start is not considered. On the
labelled set (``benchmarks/data/vct_positions.txt``, ``benchmarks/bench_vct.py``) the kept moves
hold about nine in ten of the oracle's defences.

:func:`safe_moves` is the check the player builds on: of given moves, it drops those after which
the opponent's VCT is *found* (proved losses) and says which of the kept ones were checked to the end
(``verified``). The player checks the defences against the opponent's VCF with it too (a move that
stops the VCF may leave a VCT), orders the candidates by the network's prior, checks them at depth 3
then at depth 5, and after the search checks the move it chose (``Player._safe_defences``,
``Player._checked_choice``).

Speed: where the C core is built and serves the rule (freestyle, exact five), the whole search runs
in C (:func:`gomoku_ai.native.vct`, session 21: the same search move for move, held to this module's
answers by ``tests/test_native_vct.py``; ``PYGOMOKU_VCT_NATIVE=0`` keeps it here). With
``PYGOMOKU_VCT_PN=1`` (session 38, :data:`PN_VCT`) the C search walks that tree by depth-first
proof-number search: the most proving node next rather than depth by depth, with the depth capped
at 1, 2, 3, 5, 8, 12 then the limit.
After the 60 losing moves of the 20x20 blunder set it finds the opponent's VCT (depth 20) after 31
in 1 s against 12-15 for the iterative deepening, 16 against 10 in 0.3 s; on 15x15 the same as it
(``benchmarks/bench_vct_blunders.py --nodes --ms 100 300 1000``). In the C search
the inner VCF searches take most of the time; on the 115 labelled positions it runs 2.2 times as
fast as this module with the C VCF, which itself ran about twice the Python VCF's searches in the
same time (session 20). Otherwise (renju, caro, no compiler, ``verify_defences``) the search is this
module's; each attacker node runs VCF searches (they share one transposition table). In pure Python
the rate is a few thousand attacker nodes a second in sparse positions, a few hundred in
middle-game positions rich in threes (40 game positions at 150 attacker nodes each: about 0.25 s
of CPU a search, ``benchmarks/results/s11-solver``). At 1 s per
move the player gives the attack about 110 ms; under threat, finding the opponent's threat and
checking the defences run to about 25 %, 30 % and 45 % of the move's time, and the last 8 % checks
the search's choice.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Tuple, Union

from . import native
from .board import Board
from .rules import BLACK, EMPTY, WHITE, Rule, opponent
from .tactics import (_INF_DEPTH, _blocks, _Ctx, _defences, _five_points, _four_moves,
                      _relevant, _reply_zone, _vcf_in, _window_squares)

__all__ = ["VCTResult", "Hints", "vct_search", "find_vct", "vct_defences", "defence_candidates",
           "safe_moves", "SafeMoves", "threat_moves", "Position", "read_positions"]


@dataclass
class VCTResult:
    """What :func:`vct_search` found.

    ``line``: the attacker's first move followed by one main line (attacker and defender moves
    alternating, the defender's reply shown being the first one tried), or None. ``nodes``: attacker
    nodes (VCF nodes inside them not counted); ``vcf_nodes``: VCF nodes searched (an answer
    served from the search's memo of VCF answers counts none). ``aborted``: the node limit
    or the deadline cut the search. ``depth``: the last depth (attacker threats before the final
    VCF) searched. ``elapsed_s``: wall time in seconds.
    """

    line: Optional[List[int]]
    nodes: int = 0
    vcf_nodes: int = 0
    aborted: bool = False
    depth: int = 0
    elapsed_s: float = 0.0


class _Abort(Exception):
    pass


def threat_moves(board: Board, color: Optional[int] = None) -> List[Tuple[int, int, int]]:
    """Moves that make a four or an open three for ``color`` (default: the side to move), as
    ``(move, fours, threes)`` counted in lines, most threatening first (then by move). Renju Black:
    forbidden points are left out. A move that makes five is not listed."""
    ctx = _Ctx(board)
    return _threats(ctx, board.side_to_move if color is None else color)


def _threats(ctx: _Ctx, c: int) -> List[Tuple[int, int, int]]:
    if native.serves(ctx.board):
        return native.threats(ctx.board, c)
    out = [(m, fours, threes) for m, _k, fours, threes in _window_moves(ctx, c) if fours or threes]
    out.sort(key=lambda t: (-(2 * t[1] + t[2]), -t[1], t[0]))
    return out


def _quiet_threats(ctx: _Ctx, c: int) -> List[Tuple[int, int]]:
    """The quiet moves a VCT's first attacker move may also be (``quiet_moves``): the empty squares
    of the n-windows holding exactly n - 3 stones of ``c`` and empty squares otherwise (after the
    move a four can follow along that line) that make no five, four or open three, as ``(move,
    lines)``: the number of lines (directions) through the move with such a window, the most first,
    then by move. Renju Black: forbidden points are left out. The defender node keeps only those
    after which the attacker threatens a VCF. (The C search computes the same list.)"""
    out = [(m, k) for m, k, fours, threes in _window_moves(ctx, c) if not (fours or threes)]
    out.sort(key=lambda t: (-t[1], t[0]))
    return out


def _window_moves(ctx: _Ctx, c: int) -> List[Tuple[int, int, int, int]]:
    """What :func:`_threats` and :func:`_quiet_threats` choose from: each empty square of the
    n-windows holding exactly n - 3 stones of ``c`` and empty squares otherwise, once, in first-met
    order, unless it makes five or is a forbidden point of renju Black, as ``(move, lines, fours,
    threes)``: the number of lines through it with such a window, of lines where it makes a four,
    and of the others where it makes an open three."""
    lines: Dict[int, int] = {}
    for m, _d in _window_squares(ctx, c, ctx.n - 3):
        lines[m] = lines.get(m, 0) + 1
    info = ctx.info
    renju_black = ctx.renju and c == BLACK
    out = []
    for m, k in lines.items():
        infos = (info(m, 0, c), info(m, 1, c), info(m, 2, c), info(m, 3, c))
        fours = threes = 0
        for inf in infos:
            if inf.five:
                break
            if inf.fpts:
                fours += 1
            elif inf.tpts:
                threes += 1
        else:
            if not (renju_black and ctx.forbidden(m, infos)):
                out.append((m, k, fours, threes))
    return out


#: a defender's reply to a three is first met by replaying the VCF the three threatened
#: (:meth:`_VCT._replay`); the attack node searches only when the reply breaks it.
#: PYGOMOKU_VCT_REPLAY=0 turns it off (A/B matches)
REPLAY_THREAT = os.environ.get("PYGOMOKU_VCT_REPLAY", "1") != "0"

#: the searches of one :func:`safe_moves` call share their move-ordering memory (:class:`Hints`).
#: PYGOMOKU_VCT_HINTS=0 turns it off (A/B matches)
SHARE_HINTS = os.environ.get("PYGOMOKU_VCT_HINTS", "1") != "0"

#: the VCT's VCF searches share one transposition table (:func:`gomoku_ai.tactics._vcf_in`)
SHARED_VCF_TT = True

#: where the C core serves the rule, the whole search runs in C (:func:`gomoku_ai.native.vct`: the
#: same answers); PYGOMOKU_VCT_NATIVE=0 keeps it in Python, with the C VCF inside (A/B matches)
NATIVE_VCT = os.environ.get("PYGOMOKU_VCT_NATIVE", "1") != "0"

#: PYGOMOKU_VCT_PN=1: the C search (freestyle, exact five) is a depth-first proof-number search of
#: the same tree (:func:`gomoku_ai.native.vct` with ``proof_numbers``) rather than iterative
#: deepening. Off by default: it sees deeper VCTs in the same time on 20x20, but in games at 1 s a
#: move (with the check under threat at depth 20) it did not beat the deepening (session 38,
#: benchmarks/results/s38)
PN_VCT = os.environ.get("PYGOMOKU_VCT_PN", "0") == "1"


class Hints:
    """Move-ordering memory shared by sibling searches: those of one :func:`safe_moves` call, and
    the player's defence checks of one move (its levels, then the check of the search's choice).

    The positions searched after two different candidate moves ``a`` and ``b`` differ only by that
    first stone, so a position is keyed by its hash *relative to its search's root*
    (``board.hash ^ root hash``: the stones played since the root, and whose turn it is), which is
    the same after ``a`` as after ``b``. ``attack`` keeps, per key, the attacker move that won
    there last; ``defence`` the defender reply that refuted the attack there last. A search tries
    the remembered move first where it is one of its own candidates, so the next candidate's
    refutation (most often the same threat sequence) is re-proved along the proof just found
    instead of searched for again. Only the order of the moves changes: what is found is still
    proved by the search itself, so answers can differ only in which winning line is reported.
    The C search (:func:`gomoku_ai.native.vct`) keys the same dictionaries by its own position keys,
    relative to its root in the same way; a Hints object serves the searches of one position, which
    all run in C or all in Python (the rule and the switches decide).
    """

    __slots__ = ("attack", "defence", "depth")

    def __init__(self) -> None:
        self.attack: Dict[int, int] = {}
        self.defence: Dict[int, int] = {}
        #: the depth at which the last search found its win (0: none yet); the next search starts
        #: its iterative deepening there. A depth-d pass searches a superset of every shallower
        #: pass (and the very same tree when nothing was cut by the depth), so skipping them can
        #: only miss a win by the node limit, never by the depth
        self.depth = 0


def _first(moves: List[int], m: Optional[int]) -> List[int]:
    """``moves`` with ``m`` moved to the front when it is one of them."""
    if m is None or not moves or moves[0] == m or m not in moves:
        return moves
    return [m] + [x for x in moves if x != m]


class _VCT:
    def __init__(self, board: Board, node_limit: int, deadline: Optional[float],
                 vcf_nodes: int, max_threats: int, verify: bool = False,
                 hints: Optional[Hints] = None, quiet_moves: int = 0) -> None:
        self.board = board
        self.hints = hints
        self.root = board.hash
        self.ctx = _Ctx(board)
        self.att = board.side_to_move
        self.dfn = opponent(self.att)
        self.node_limit = node_limit
        self.deadline = deadline
        self.vcf_nodes = vcf_nodes
        self.max_threats = max_threats
        self.quiet_moves = quiet_moves
        self.nodes = 0
        self.vcf_total = 0
        self.cut = 0
        self.tt: Dict[int, int] = {}
        self.vcf_seen: Dict[int, Tuple[Optional[List[int]], bool]] = {}
        self.vcf_tt: Optional[Dict[int, int]] = {} if SHARED_VCF_TT else None
        self.dfn_forbid = self.ctx.renju and self.dfn == BLACK
        self.verify = verify

    # -------------------------------------------------------------- helpers
    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes >= self.node_limit:
            raise _Abort
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _Abort

    def _vcf(self) -> Tuple[Optional[List[int]], bool]:
        """VCF of the side to move: (line or None, aborted). Kept by position (``Board.hash``,
        which includes the side to move) for the whole search: a third of the calls repeat a
        position (transpositions, and the deeper passes of the iterative deepening), and with
        the same node limit a search gives the same answer (one cut by the deadline ends the
        whole search anyway)."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise _Abort
        key = self.board.hash
        hit = self.vcf_seen.get(key)
        if hit is not None:
            return (None if hit[0] is None else list(hit[0])), hit[1]
        res = _vcf_in(self.ctx, self.vcf_nodes, self.deadline, tt=self.vcf_tt)
        self.vcf_total += res.nodes
        self.vcf_seen[key] = (res.line, res.aborted)
        return (None if res.line is None else list(res.line)), res.aborted

    # -------------------------------------------------------------- search
    def run(self, max_depth: int) -> VCTResult:
        t0 = time.perf_counter()
        res = VCTResult(None)
        start = 1 if self.hints is None else max(1, min(self.hints.depth, max_depth))
        try:
            for depth in range(start, max_depth + 1):
                res.depth = depth
                self.tt.clear()
                cut0 = self.cut
                line = self._attack(depth)
                if line is not None:
                    res.line = line
                    if self.hints is not None:
                        self.hints.depth = depth
                    break
                if self.cut == cut0:
                    break               # nothing was cut by the depth: deeper cannot help
        except _Abort:
            res.aborted = True
        res.nodes = self.nodes
        res.vcf_nodes = self.vcf_total
        res.elapsed_s = time.perf_counter() - t0
        return res

    def _attack(self, depth: int) -> Optional[List[int]]:
        """Attacker to move. A winning line, or None."""
        self._tick()
        ctx, board = self.ctx, self.board
        own = _five_points(ctx, self.att)
        if own:
            return [own[0]]
        D = _five_points(ctx, self.dfn)
        if len(D) >= 2 and not ctx.caro:
            return None
        line, _ = self._vcf()
        if line is not None:
            return line
        if depth <= 0:
            self.cut += 1
            return None
        h = board.hash
        if self.tt.get(h, -1) >= depth:
            return None
        cut0 = self.cut
        if D:
            cands = [m for m in _blocks(ctx, D, self.dfn)
                     if not (ctx.renju and self.att == BLACK and ctx.forbidden(m))]
        else:
            cands = [m for m, _f, _t in _threats(ctx, self.att)[:self.max_threats]]
            if self.quiet_moves and h == self.root:
                cands += [m for m, _k in _quiet_threats(ctx, self.att)[:self.quiet_moves]]
        hints = self.hints
        if hints is not None:
            cands = _first(cands, hints.attack.get(h ^ self.root))
        for m in cands:
            board.push(m)
            try:
                sub = self._defend(depth - 1)
            finally:
                board.pop()
            if sub is not None:
                if hints is not None:
                    hints.attack[h ^ self.root] = m
                return [m] + sub
        self.tt[h] = depth if self.cut != cut0 else _INF_DEPTH
        return None

    def _defend(self, depth: int) -> Optional[List[int]]:
        """Defender to move after an attacker move. The attacker's winning line from here, or None."""
        ctx, board = self.ctx, self.board
        if _five_points(ctx, self.dfn):
            return None                 # the defender wins at once
        threat: Optional[List[int]] = None
        F = _five_points(ctx, self.att)
        if F and not ctx.caro:
            replies = [] if len(F) >= 2 else list(F)
            if self.dfn_forbid:
                replies = [r for r in replies if not ctx.forbidden(r)]
            if not replies:             # unstoppable four: a block, then the other five
                return [F[0], F[1]] if len(F) >= 2 and not self.dfn_forbid else []
        else:
            board.pass_turn()
            try:
                threat, _ = self._vcf()
            finally:
                board.pass_turn()
            if threat is None:
                return None             # no threat: the move was not forcing
            counter, cut = self._vcf()
            if counter is not None or cut:
                return None             # the defender may win first with its free move
            if self.verify:
                defs, n, _ = _defences(board, threat, max(500, self.vcf_nodes // 2),
                                       self.deadline, 40)
                self.vcf_total += n
                if not defs:            # nothing stops the threatened VCF
                    return self._show_reply(threat)
                replies = defs
            else:
                # every move that could stop the threatened VCF (a superset: the squares near
                # its line and the defender's fours); the attack nodes below refute the others
                # with one VCF search each, cheaper than verifying them here
                me = self.dfn
                zone = _relevant(ctx, threat) if ctx.renju or ctx.caro else \
                    _reply_zone(ctx, threat, me)
                cand = zone | {f.move for f in _four_moves(ctx, me, False)}
                if self.dfn_forbid:
                    cand = {c for c in cand if not ctx.forbidden(c)}
                near = [m for m in threat if m in cand]
                replies = near + sorted(cand - set(near))
        line: Optional[List[int]] = None
        hints = self.hints
        if hints is not None:
            h = board.hash
            replies = _first(replies, hints.defence.get(h ^ self.root))
        for r in replies:
            board.push(r)
            try:
                sub = self._replay(threat, r) if threat is not None and REPLAY_THREAT else None
                if sub is None:
                    sub = self._attack(depth)
            finally:
                board.pop()
            if sub is None:
                if hints is not None:
                    hints.defence[h ^ self.root] = r
                return None
            if line is None:
                line = [r] + sub
        return line

    def _replay(self, threat: List[int], r: int) -> Optional[List[int]]:
        """The threatened VCF ``threat`` (found as if the defender passed) replayed after the
        defender's reply ``r`` (on the board, attacker to move): the line when it still wins,
        else None (then the attack node searches). Freestyle and exact five only. Read locally:
        before the reply the defender had no five-point and the attacker none either (a three, not
        a four, was answered), so a five-point of the defender can only come from ``r`` or a
        block of the line, and the attacker's only from its own last move."""
        ctx, board = self.ctx, self.board
        if ctx.renju or ctx.caro or r in threat:
            return None
        self._tick()                    # an attacker node, as the search it may save
        att, dfn = self.att, self.dfn
        if ctx.fives_of(r, dfn):
            return None                 # the reply made a four: the attacker must answer it
        pushed = 0
        try:
            k, last = 0, len(threat) - 1
            while k <= last:
                m = threat[k]
                if board[m] != EMPTY:
                    return None
                pushed += 1
                if board.push(m):
                    return list(threat[:k + 1])
                F = sorted(set(ctx.fives_of(m, att)))
                if len(F) >= 2:         # unstoppable: a block, then the other five-point
                    return list(threat[:k + 1]) + [F[0], F[1]]
                if len(F) != 1 or k == last or threat[k + 1] != F[0]:
                    return None
                board.push_quiet(F[0])
                pushed += 1
                if ctx.fives_of(F[0], dfn):
                    return None         # the block made a four of the defender's
                k += 2
            return None
        finally:
            for _ in range(pushed):
                board.pop()

    def _show_reply(self, threat: List[int]) -> List[int]:
        """The line after a threat nothing stops: the defender takes the threat's first square
        (or, where that is not allowed, any square near it) and the attacker's VCF from there."""
        ctx, board = self.ctx, self.board
        for r in [threat[0]] + sorted(_relevant(ctx, threat[:1])):
            if board[r] != EMPTY or (self.dfn_forbid and ctx.forbidden(r)):
                continue
            board.push(r)
            try:
                line, _ = self._vcf()
            finally:
                board.pop()
            if line is not None:
                return [r] + line
        return threat                   # pragma: no cover - the defences said nothing stops it


def vct_search(board: Board, max_depth: int = 4, node_limit: int = 20000,
               deadline: Optional[float] = None, vcf_nodes: int = 2000,
               max_threats: int = 24, verify_defences: bool = False,
               hints: Optional[Hints] = None, proof_numbers: Optional[bool] = None,
               quiet_moves: int = 0) -> VCTResult:
    """Search a VCT for the side to move (see the module docstring).

    ``max_depth``: most attacker threats before the final VCF; ``node_limit``: attacker nodes over
    all iterations; ``vcf_nodes``: the node limit of each inner VCF search; ``max_threats``: the
    attacker's candidate threats per node (the most threatening first; a pruning that can only miss
    wins). ``verify_defences``: verify each defender reply with
    :func:`gomoku_ai.tactics.find_vcf_defences` before searching it; by default the replies are the
    unverified superset (squares near the threatened VCF and the defender's fours), which the
    attack nodes below refute with one VCF search each -- the same answers, measured 2.4x faster
    on game positions (``benchmarks/bench_vct.py``). ``hints``: move-ordering memory shared with
    other searches from sibling positions (:class:`Hints`). ``proof_numbers``: whether the C search
    is the proof-number one (None: :data:`PN_VCT`). ``quiet_moves``: the first attacker move may
    also be one of this many quiet moves (:func:`_quiet_threats`, after the threats): a move that
    makes no four or three but leaves a VCF threat, which the defender must stop like a three's
    (session 40: such wins are missed otherwise; the player's own VCT uses them, not its checks of
    the opponent's, where a wider tree makes "no VCT" proofs rarer). The board is left unchanged.
    """
    if quiet_moves < 0:
        raise ValueError(f"quiet_moves={quiet_moves}: must be >= 0")
    t0 = time.perf_counter()
    pns = PN_VCT if proof_numbers is None else proof_numbers
    if board.winner is not None or board.is_full():
        return VCTResult(None)
    if NATIVE_VCT and SHARED_VCF_TT and not verify_defences and native.serves(board) and \
            max_depth <= native.VCT_MAX_DEPTH:
        start = 1 if hints is None else max(1, min(hints.depth, max_depth))
        r = native.vct(board, max_depth, node_limit, deadline, vcf_nodes, max_threats, REPLAY_THREAT,
                       None if hints is None else hints.attack,
                       None if hints is None else hints.defence, start, pns, quiet_moves)
        if hints is not None and r.line is not None:
            hints.depth = r.depth
        return VCTResult(r.line, r.nodes, r.vcf_nodes, r.aborted, r.depth, time.perf_counter() - t0)
    res = _VCT(board, node_limit, deadline, vcf_nodes, max_threats,
               verify_defences, hints, quiet_moves).run(max_depth)
    res.elapsed_s = time.perf_counter() - t0
    return res


def find_vct(board: Board, max_depth: int = 4, node_limit: int = 20000,
             deadline: Optional[float] = None) -> Optional[List[int]]:
    """The first moves of a VCT for the side to move (see :func:`vct_search`), or None."""
    return vct_search(board, max_depth, node_limit, deadline).line


def defence_candidates(board: Board, threat_line: List[int], ctx: Optional[_Ctx] = None
                       ) -> List[int]:
    """The moves of the side to move that :func:`vct_defences` checks against the opponent's
    ``threat_line`` (its VCT as if we passed, first move first): the empty squares on the lines
    through its first move (within n) and within two squares of its next two plies -- a threat
    sequence is stopped at its start (a long line's whole neighbourhood is most of the board, too
    many to verify) -- then our own fours and threes (a counter-threat can gain the tempo). In that
    order (the line's own squares first), without repeats; unchecked (forbidden points included)."""
    if ctx is None:
        ctx = _Ctx(board)
    me = board.side_to_move
    w, h = board.width, board.height
    cands = _relevant(ctx, threat_line[:1])
    for q in threat_line[1:3]:
        qx, qy = q % w, q // w
        for y in range(max(0, qy - 2), min(h, qy + 3)):
            for x in range(max(0, qx - 2), min(w, qx + 3)):
                if board[y * w + x] == EMPTY:
                    cands.add(y * w + x)
    counters = {m for m, _f, _t in _threats(ctx, me)}
    order = [m for m in threat_line if m in cands]
    order += sorted(cands - set(order))
    order += sorted(counters - cands)
    return order


def vct_defences(board: Board, max_depth: int = 3, node_limit: int = 3000,
                 deadline: Optional[float] = None, threat_line: Optional[List[int]] = None,
                 vcf_nodes: int = 2000, total_nodes: Optional[int] = None
                 ) -> Tuple[Optional[List[int]], bool]:
    """The moves of the side to move that leave the opponent without a VCT.

    Returns ``(None, aborted)`` when the opponent has no VCT as if we passed (nothing to defend),
    else ``(moves, aborted)``: the candidates on the lines through the first move of the
    opponent's line or within two squares of its next two plies, plus our fours and threes,
    after which its VCT search (``node_limit`` attacker nodes each) finds none -- empty when every
    candidate fails. ``aborted``: a limit cut a search, so a kept move is not proved to defend (a
    candidate whose check was cut is kept). ``vcf_nodes``: the limit of each inner VCF search;
    ``total_nodes``: attacker nodes over all the checks (like the deadline, when spent the rest of
    the candidates are kept unchecked and ``aborted`` is True).
    Renju: forbidden points of a Black defender are never returned. The board is left unchanged.
    """
    if board.winner is not None or board.is_full():
        return None, False
    ctx = _Ctx(board)
    me = board.side_to_move
    aborted = False
    if threat_line is None:
        board.pass_turn()
        try:
            res = vct_search(board, max_depth, node_limit * 2, deadline, vcf_nodes)
        finally:
            board.pass_turn()
        aborted = res.aborted
        if res.line is None:
            return None, aborted
        threat_line = res.line
    order = defence_candidates(board, threat_line, ctx)
    if ctx.renju and me == BLACK:
        order = [m for m in order if not ctx.forbidden(m)]
    checked = safe_moves(board, order, max_depth, node_limit, deadline, vcf_nodes, total_nodes)
    return checked.kept, aborted or checked.aborted


class SafeMoves(NamedTuple):
    """What :func:`safe_moves` kept: ``kept`` (the moves not refuted, in the given order),
    ``verified`` (those of them whose check ran to the end without finding a VCT) and ``aborted``
    (a limit cut a check, or left moves unchecked)."""

    kept: List[int]
    verified: List[int]
    aborted: bool


def safe_moves(board: Board, moves: List[int], max_depth: int = 3, node_limit: int = 3000,
               deadline: Optional[float] = None, vcf_nodes: int = 2000,
               total_nodes: Optional[int] = None, hints: Optional[Hints] = None) -> SafeMoves:
    """``moves`` (of the side to move) less those after which the opponent has a VCT.

    Each move is played and the opponent's VCT searched (``node_limit`` attacker nodes, ``vcf_nodes``
    per inner VCF); a move is dropped only when a VCT is *found*, so what is dropped is proved to
    lose (within the tactics' rules) and what is kept is not proved to hold. Checked in the given
    order: when ``deadline`` (absolute ``perf_counter()``) passes or ``total_nodes`` attacker nodes
    are spent, the moves not yet checked are kept (unverified) and ``aborted`` is True. A move
    that wins at once is kept and verified; ``kept`` is empty when every move loses. The board is
    left unchanged. The searches share one :class:`Hints` (``hints``, or a new one; none when
    :data:`SHARE_HINTS` is off): the refutation of one move is tried first against the next.
    """
    if not SHARE_HINTS:
        hints = None
    elif hints is None:
        hints = Hints()
    kept: List[int] = []
    verified: List[int] = []
    aborted = False
    spent = 0
    for idx, m in enumerate(moves):
        if (deadline is not None and time.perf_counter() > deadline) or \
                (total_nodes is not None and spent >= total_nodes):
            kept.extend(moves[idx:])
            return SafeMoves(kept, verified, True)
        if board[m] != EMPTY:
            continue
        if board.push(m):
            board.pop()
            kept.append(m)
            verified.append(m)
            continue
        try:
            res = vct_search(board, max_depth, node_limit, deadline, vcf_nodes, hints=hints)
        finally:
            board.pop()
        spent += res.nodes
        if res.line is None:
            kept.append(m)
            if res.aborted:
                aborted = True
            else:
                verified.append(m)
    return SafeMoves(kept, verified, aborted)


# ---------------------------------------------------------------------------------------------
# labelled positions (benchmarks/data/vct_positions.txt)

@dataclass(frozen=True)
class Position:
    """One labelled tactical position. ``kind`` is ``"win"`` (``answer``: the winning threat moves)
    or ``"defend"`` (``answer``: the moves that stop the opponent's threat); ``rows`` is the ASCII
    board (``X`` Black, ``O`` White, ``.`` empty), ``to_move`` BLACK or WHITE. ``loses``: moves
    known to lose (the blunder set's ``# loses:``; empty when the block names none)."""

    name: str
    kind: str
    to_move: int
    rule: Rule
    rows: Tuple[str, ...]
    answer: FrozenSet[int]
    source: str = ""
    loses: FrozenSet[int] = frozenset()

    def board(self) -> Board:
        """A fresh board of the position (side to move set)."""
        return Board.from_ascii("\n".join(self.rows), rule=self.rule, to_move=self.to_move)


def read_positions(path: Union[str, Path]) -> List[Position]:
    """The positions of a set file: blocks of ``# key: value`` lines (name, kind, to_move X/O,
    rule, answer as h8-style names, source, optionally loses) followed by board rows, separated by
    blank lines.
    Raises ValueError naming the file and the block on a malformed block."""
    text = Path(path).read_text(encoding="utf-8")
    out: List[Position] = []
    for k, blk in enumerate(text.split("\n\n")):
        lines = [ln.strip() for ln in blk.strip().splitlines() if ln.strip()]
        head: Dict[str, str] = {}
        rows: List[str] = []
        for ln in lines:
            if ln.startswith("#"):
                key, sep, val = ln[1:].partition(":")
                if sep:
                    head[key.strip()] = val.strip()
            else:
                rows.append(ln)
        if not rows:
            continue
        try:
            kind = head["kind"]
            if kind not in ("win", "defend"):
                raise ValueError(f"kind {kind!r}")
            to_move = {"X": BLACK, "O": WHITE}[head["to_move"]]
            rule = Rule.parse(head.get("rule", "freestyle"))
            b = Board.from_ascii("\n".join(rows), rule=rule, to_move=to_move)
            answer = frozenset(b.parse(n) for n in head["answer"].split())
            if not answer:
                raise ValueError("empty answer")
            loses = frozenset(b.parse(n) for n in head.get("loses", "").split())
            out.append(Position(head.get("name", f"block{k}"), kind, to_move, rule, tuple(rows),
                                answer, head.get("source", ""), loses))
        except (KeyError, ValueError) as e:
            raise ValueError(f"{path}: block {k + 1}: {e}") from None
    return out
