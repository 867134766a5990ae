"""Session 22 prototype, not used by the engine: a df-pn (depth-first proof-number) VCT over the move
generators of gomoku_ai.vct._VCT (attacker threats, the defender's superset of replies, the threat
replay, VCF leaves), to count how many attacker-node expansions deep wins take against the iterative
deepening of vct_search (pn_vs_id.py). No 1+epsilon trick, children re-read every iteration: slow."""
from __future__ import annotations
import time, sys
from typing import Dict, List, Optional, Tuple
from gomoku_ai.board import Board
from gomoku_ai.tactics import _five_points, _four_moves, _relevant, _blocks
from gomoku_ai import vct as V

INF = 10 ** 9


class PN(V._VCT):
    """df-pn over the parent's generators; its VCF memo, node counter (first expansions of attacker
    nodes) and limits are the parent's (``_vcf``, ``_tick``, ``_replay``; they raise ``vct._Abort``)."""

    def __init__(self, board: Board, node_limit: int, deadline: Optional[float], vcf_nodes: int = 2000,
                 max_threats: int = 24, max_depth: int = 20):
        super().__init__(board, node_limit, deadline, vcf_nodes, max_threats)
        self.b = board
        self.max_depth = max_depth
        self.pn_tt: Dict[Tuple[int, bool], Tuple[int, int]] = {}
        self.kids: Dict[Tuple[int, bool], object] = {}
        self.replayed: set = set()   # replies whose threat replay was tried

    # ---- expansion: returns ('win'|'loss', None) or ('moves', list)
    def _expand_or(self, depth):
        ctx = self.ctx
        own = _five_points(ctx, self.att)
        if own:
            return 'win', None
        D = _five_points(ctx, self.dfn)
        if len(D) >= 2:
            return 'loss', None
        line, _ = self._vcf()
        if line is not None:
            return 'win', None
        if depth >= self.max_depth:
            return 'loss', None
        if D:
            cands = list(_blocks(ctx, D, self.dfn))
        else:
            cands = [m for m, _f, _t in V._threats(ctx, self.att)[:self.max_threats]]
        if not cands:
            return 'loss', None
        return 'moves', cands

    def _expand_and(self):
        ctx, b = self.ctx, self.b
        if _five_points(ctx, self.dfn):
            return 'loss', None, None
        F = _five_points(ctx, self.att)
        if F:
            if len(F) >= 2:
                return 'win', None, None
            return 'moves', list(F), None
        b.pass_turn()
        try:
            threat, _ = self._vcf()
        finally:
            b.pass_turn()
        if threat is None:
            return 'loss', None, None
        counter, cut = self._vcf()
        if counter is not None or cut:
            return 'loss', None, None
        cand = _relevant(ctx, threat) | {f.move for f in _four_moves(ctx, self.dfn, False)}
        near = [m for m in threat if m in cand]
        return 'moves', near + sorted(cand - set(near)), threat

    # ---- df-pn
    def run(self):
        t0 = time.perf_counter()
        try:
            pn, dn = self._mid(True, INF - 1, INF - 1, 0)
        except V._Abort:
            return None, self.nodes, time.perf_counter() - t0, True
        if pn == 0:
            return self._pv(), self.nodes, time.perf_counter() - t0, False
        return None, self.nodes, time.perf_counter() - t0, False

    def _pv(self):
        # follow proven children to produce a line (attacker moves with pn 0, defender's first reply)
        line = []
        pushed = 0
        is_or = True
        try:
            for _ in range(60):
                k = self.kids.get((self.b.hash, is_or))
                if not k or k[0] != 'moves':
                    break
                moves = k[1]
                pick = None
                for m in moves:
                    self.b.push(m); pushed += 1
                    e = self.pn_tt.get((self.b.hash, not is_or))
                    if (is_or and e and e[0] == 0) or not is_or:
                        pick = m
                        break
                    self.b.pop(); pushed -= 1
                if pick is None:
                    break
                line.append(pick)
                is_or = not is_or
        finally:
            for _ in range(pushed):
                self.b.pop()
        return line or [-1]

    def _mid(self, is_or: bool, thpn: int, thdn: int, depth: int) -> Tuple[int, int]:
        b = self.b
        key = (b.hash, is_or)
        e = self.pn_tt.get(key)
        if e is not None and (e[0] >= thpn or e[1] >= thdn or e[0] == 0 or e[1] == 0):
            return e
        k = self.kids.get(key)
        if k is None:
            if is_or:
                self._tick()
                kind, moves = self._expand_or(depth)
                k = (kind, moves, None)
            else:
                k = self._expand_and()
            self.kids[key] = k
        kind, moves, threat = k
        if kind != 'moves':
            r = (0, INF) if kind == 'win' else (INF, 0)
            self.pn_tt[key] = r
            return r
        while True:
            # children values
            best_i = -1; best = INF + 1; second = INF + 1; total = 0
            vals = []
            for i, m in enumerate(moves):
                b.push(m)
                ce = self.pn_tt.get((b.hash, not is_or))
                ck = (b.hash, True)
                if ce is None and not is_or and threat is not None and ck not in self.replayed:
                    # replay fast path (once per reply): a reply that stops nothing is refuted at once
                    self.replayed.add(ck)
                    if self._replay(threat, m) is not None:
                        ce = (0, INF)
                        self.pn_tt[ck] = ce
                b.pop()
                if ce is None:
                    ce = (1, 1)
                vals.append(ce)
            if is_or:
                pn = min(v[0] for v in vals); dn = min(INF, sum(v[1] for v in vals))
            else:
                pn = min(INF, sum(v[0] for v in vals)); dn = min(v[1] for v in vals)
            if pn >= thpn or dn >= thdn or pn == 0 or dn == 0:
                self.pn_tt[key] = (pn, dn)
                return pn, dn
            idx = 0 if is_or else 1
            for i, v in enumerate(vals):
                x = v[idx]
                if x < best:
                    second = best; best = x; best_i = i
                elif x < second:
                    second = x
            c = vals[best_i]
            if is_or:
                cth_pn = min(thpn, second + 1)
                cth_dn = min(INF - 1, thdn - dn + c[1])
            else:
                cth_dn = min(thdn, second + 1)
                cth_pn = min(INF - 1, thpn - pn + c[0])
            m = moves[best_i]
            b.push(m)
            try:
                self._mid(not is_or, cth_pn, cth_dn, depth + (1 if is_or else 0))
            finally:
                b.pop()


def pn_vct(board, node_limit=10**6, deadline=None, max_depth=20):
    return PN(board, node_limit, deadline, max_depth=max_depth).run()
