"""Tournament results: the append-only ``results.jsonl`` store and the standings computed from it.

``results.jsonl`` holds one JSON object per finished game, written with one ``write`` + ``flush`` + ``fsync``.
An interrupted run can leave at most one torn last line; :meth:`ResultsFile.load` drops it (and truncates the
file back to the last complete line) so that the next append starts on a clean line. Lines that cannot be read
are skipped with a warning; a game id seen twice keeps its first result.

:func:`summarize` turns the records into a JSON-able summary (per-player counts and failure counters, the
crosstable, pairwise and match statistics with pentanomial counts over complete pairs, SPRT state, and a
Bradley-Terry rating fit with a first-move term); :func:`format_summary` prints it. Counts are written in one
order everywhere: W-D-L (wins, draws, losses of the first-named player). A perfect score (every game won, or every
game lost) is reported by its exact one-sided bound only (:func:`gomoku_ai.rating.perfect_score_bound`): no +/-, no interval, no
point estimate, and no Bradley-Terry rating for a player with such a record.
"""
from __future__ import annotations

import json
import lzma
import math
import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from gomoku_ai import rating as R
from gomoku_ai.rules import Termination

#: the terminations that are a player's failure (counted per player), as their results.jsonl values
FAILURES = tuple(t.value for t in (Termination.TIME, Termination.CRASH, Termination.PROTOCOL, Termination.ILLEGAL,
                                   Termination.FORBIDDEN))
_SCORE = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}


class ResultsFormatError(ValueError):
    """A results file that cannot be read as game rows; the message names the file (and line)."""


def read_rows(path: "str | os.PathLike[str]") -> List[Dict[str, Any]]:
    """Every game row of a finished results file, in file order, for analysis (not resuming: see
    :class:`ResultsFile`): plain ``results.jsonl`` or xz-compressed when its name ends in ``.xz``.
    Blank lines are skipped; a missing or undecodable file, or a line that is not a JSON object, is a
    :class:`ResultsFormatError` naming the file and line."""
    p = Path(path)
    try:
        raw = p.read_bytes()
        text = (lzma.decompress(raw) if p.suffix == ".xz" else raw).decode("utf-8")
    except (OSError, lzma.LZMAError, UnicodeDecodeError) as e:
        raise ResultsFormatError(f"{p}: not a readable results file ({e})") from None
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise ResultsFormatError(f"{p}, line {n}: not a game result ({e})") from None
        if not isinstance(row, dict):
            raise ResultsFormatError(f"{p}, line {n}: not a game result (not an object)")
        rows.append(row)
    return rows


class ResultsFile:
    """``results.jsonl``: load (tolerating a torn tail) and append durably."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._f: Any = None

    def load(self) -> Tuple[List[Dict[str, Any]], List[str]]:
        """(records, warnings). Truncates a torn last line away."""
        if not os.path.exists(self.path):
            return [], []
        with open(self.path, "rb") as f:
            data = f.read()
        warnings: List[str] = []
        parts = data.split(b"\n")
        tail = parts.pop()
        if tail:
            warnings.append(f"{self.path}: discarded a torn last line ({len(tail)} bytes)")
            with open(self.path, "r+b") as f:
                f.truncate(len(data) - len(tail))
                f.flush()
                os.fsync(f.fileno())
        records: List[Dict[str, Any]] = []
        seen = set()
        for i, raw in enumerate(parts, 1):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw.decode("utf-8"))
                if not isinstance(rec, dict) or not isinstance(rec.get("game"), int) \
                        or rec.get("result") not in _SCORE:
                    raise ValueError("not a game result")
            except (ValueError, UnicodeDecodeError) as e:
                warnings.append(f"{self.path}, line {i}: unreadable ({e}); skipped")
                continue
            if rec["game"] in seen:
                warnings.append(f"{self.path}, line {i}: game {rec['game']} again; the first result is kept")
                continue
            seen.add(rec["game"])
            records.append(rec)
        return records, warnings

    def append(self, rec: Dict[str, Any]) -> None:
        """Append one record as one line, durably (flush + fsync)."""
        if self._f is None:
            new = not os.path.exists(self.path)
            self._f = open(self.path, "ab")
            if new:
                _fsync_dir(os.path.dirname(os.path.abspath(self.path)))
        line = json.dumps(rec, separators=(",", ":"), ensure_ascii=False) + "\n"
        self._f.write(line.encode("utf-8"))
        self._f.flush()
        os.fsync(self._f.fileno())

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ------------------------------------------------------------------------------------------ summary
def _wdl() -> Dict[str, float]:
    return {"w": 0, "d": 0, "l": 0}


def _est_dict(e: Optional[R.EloEstimate]) -> Optional[Dict[str, Any]]:
    if e is None:
        return None
    return {"n": e.n, "score": e.score, "elo": e.elo, "elo_err": e.elo_err, "elo_lo": e.elo_lo,
            "elo_hi": e.elo_hi, "los": e.los, "nelo": e.nelo, "draw_ratio": e.draw_ratio, "se": e.se}


def perfect_text(ps: Dict[str, Any], confidence: float) -> str:
    """``Elo > -18.9 (95 % one-sided)`` for the pairing statistics ``ps`` of a perfect score (from the first
    player's side), '' for any other."""
    pb = ps.get("perfect_bound")
    if pb is None:
        return ""
    return f"Elo {'>' if ps.get('perfect') == 'won' else '<'} {pb:+.1f} ({int(round(100 * confidence))} % one-sided)"


def pair_stats(records: Iterable[Dict[str, Any]], a: int, b: int, confidence: float = 0.95) -> Dict[str, Any]:
    """Statistics of player ``a`` against ``b``: W/D/L, trinomial Elo, pentanomial counts over complete pairs
    and their Elo, LOS, Black's score in these games."""
    w = d = l = 0
    black_pts = 0.0
    n = 0
    by_pair: Dict[int, List[float]] = {}
    for r in records:
        bi, wi = r["black_index"], r["white_index"]
        if {bi, wi} != {a, b}:
            continue
        sb, sw = _SCORE[r["result"]]
        sa = sb if bi == a else sw
        n += 1
        black_pts += sb
        if sa == 1:
            w += 1
        elif sa == 0:
            l += 1
        else:
            d += 1
        by_pair.setdefault(r["pair"], []).append(sa)
    complete = [v for v in by_pair.values() if len(v) == 2]
    penta = R.pentanomial_from_pairs((v[0], v[1]) for v in complete)
    tri = R.trinomial(wins=w, draws=d, losses=l, confidence=confidence) if n else None
    pen = R.pentanomial(penta, confidence) if complete else None
    bound = None
    if n and (w == n or l == n):  # no variance: report the exact one-sided bound instead of +/-
        bound = R.perfect_score_bound(n, confidence) * (1 if w == n else -1)
    return {"a": a, "b": b, "games": n, "w": w, "d": d, "l": l, "penta": penta, "pairs": len(complete),
            "perfect_bound": bound, "perfect": None if bound is None else ("won" if w == n else "lost"),
            "trinomial": _est_dict(tri), "pentanomial": _est_dict(pen),
            "los_cutechess": R.los_cutechess(w, l), "black_score": black_pts / n if n else None}


def summarize(records: Sequence[Dict[str, Any]], names: Sequence[str], fmt: str,
              pairings: Sequence[Tuple[int, int]], total_games: int,
              sprt_cfg: Optional[Dict[str, Any]] = None, prior: float = 2.0,
              anchor: Optional[int] = None, anchor_elo: float = 0.0, confidence: float = 0.95) -> Dict[str, Any]:
    """The standings as a JSON-able dict (see the module docstring)."""
    n = len(names)
    players: List[Dict[str, Any]] = []
    for i in range(n):
        players.append({"name": names[i], "games": 0, "points": 0.0, **_wdl(), "black": _wdl(), "white": _wdl(),
                        "failures": {k: 0 for k in FAILURES}})
    cross = [[_wdl() for _ in range(n)] for _ in range(n)]
    terminations: Dict[str, int] = {}
    black_pts = 0.0
    bt_games = []
    for r in records:
        bi, wi = r["black_index"], r["white_index"]
        sb, sw = _SCORE[r["result"]]
        black_pts += sb
        bt_games.append((int(r.get("game", 0)), R.BTGame(bi, wi, sb, 1.0)))
        terminations[r["termination"]] = terminations.get(r["termination"], 0) + 1
        for me, opp, s, col in ((bi, wi, sb, "black"), (wi, bi, sw, "white")):
            p = players[me]
            p["games"] += 1
            p["points"] += s
            key = "w" if s == 1 else "l" if s == 0 else "d"
            p[key] += 1
            p[col][key] += 1
            cross[me][opp][key] += 1
        off = r.get("offender")
        if off in ("black", "white") and r["termination"] in FAILURES:
            players[bi if off == "black" else wi]["failures"][r["termination"]] += 1
    for p in players:
        p["score"] = p["points"] / p["games"] if p["games"] else None
    perfect = [None if not p["games"] else "won" if p["w"] == p["games"] else "lost" if p["l"] == p["games"]
               else None for p in players]
    out: Dict[str, Any] = {
        "format": fmt, "players": players, "games_played": len(records), "games_total": total_games,
        "crosstable": cross, "terminations": terminations,
        "black_score": black_pts / len(records) if records else None,
        "pairings": [pair_stats(records, a, b, confidence) for a, b in pairings],
        "confidence": confidence,
    }
    # ratings
    # a player who won (or lost) every game has no finite maximum-likelihood rating: its fitted one comes from
    # the prior alone, so the text and the live table show none (see gomoku_ai.rating.perfect_score_bound)
    rating: Dict[str, Any] = {"model": "bradley-terry", "prior_draws": prior, "first_move": True,
                              "anchor": None if anchor is None else names[anchor], "anchor_elo": anchor_elo,
                              "perfect": perfect}
    try:
        # in the schedule's order, not the order the games finished in: the same games give the same
        # ratings to the last bit whatever the workers' timing (a resumed or a distributed run)
        bt_games.sort(key=lambda g: g[0])
        bt = R.bradley_terry([g for _, g in bt_games], n, first_move=True, prior=prior, anchor=anchor,
                             anchor_elo=anchor_elo)
        z = R.z_value(confidence)
        rating.update({
            "elo": [float(v) for v in bt.ratings], "se": [float(v) for v in bt.se],
            "err": [float(z * v) for v in bt.se],
            "first_move_elo": bt.first_move, "first_move_err": z * bt.first_move_se,
            "los": [[None if i == j else float(bt.los(i, j)) for j in range(n)] for i in range(n)],
            "converged": bt.converged,
        })
    except (R.RatingError, ValueError, np.linalg.LinAlgError) as e:
        rating["error"] = str(e)
    out["rating"] = rating
    if fmt == "match" and sprt_cfg and out["pairings"]:
        a, b = pairings[0]
        res, counts, k = sequential_sprt(records, a, b, sprt_cfg)
        out["sprt"] = {"llr": res.llr, "lower": res.lower, "upper": res.upper, "fraction": res.fraction,
                       "decision": res.decision, "elo0": res.elo0, "elo1": res.elo1, "alpha": res.alpha,
                       "beta": res.beta, "model": res.model, "pairs": k, "penta": counts,
                       "pairs_finished": out["pairings"][0]["pairs"]}
    return out


def prefix_pairs(records: Iterable[Dict[str, Any]], a: int, b: int) -> List[Tuple[float, float]]:
    """``a``'s two scores (in game order) in each of the pairs 0..k-1 of ``a`` vs ``b``, in schedule order, where k
    is the first pair that is not complete."""
    by_pair: Dict[int, List[Tuple[int, float]]] = {}
    for r in records:
        bi, wi = r["black_index"], r["white_index"]
        if {bi, wi} != {a, b}:
            continue
        sb, sw = _SCORE[r["result"]]
        by_pair.setdefault(int(r["pair"]), []).append((int(r["game"]), sb if bi == a else sw))
    out: List[Tuple[float, float]] = []
    while len(by_pair.get(len(out), ())) == 2:
        (_, x), (_, y) = sorted(by_pair[len(out)])
        out.append((x, y))
    return out


def sequential_sprt(records: Iterable[Dict[str, Any]], a: int, b: int,
                    cfg: Dict[str, Any]) -> Tuple[Any, List[int], int]:
    """The SPRT of ``a`` vs ``b`` as a sequential run reads it: pair by pair in schedule order over the complete
    prefix, stopping at the first pair where it decides. Returns (the result there, the pentanomial counts
    there, that number of pairs). On several workers pairs finish out of order and a late pair can extend the
    prefix by several pairs at once; reading the prefix pair by pair still stops where a sequential run
    stops, whatever finished after that."""
    def test(c: List[int]) -> Any:
        return R.sprt(c, cfg["elo0"], cfg["elo1"], cfg["alpha"], cfg["beta"], cfg.get("model", "logistic"))
    counts = [0] * 5
    res = test(counts)
    k = 0
    for sa, sb in prefix_pairs(records, a, b):
        counts[R.pair_bucket(sa, sb)] += 1
        k += 1
        res = test(counts)
        if res.decision:
            break
    return res, list(counts), k


def json_safe(obj: Any) -> Any:
    """``obj`` with non-finite floats replaced by None (strict JSON has no NaN or Infinity)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def err_text(e: Dict[str, Any]) -> str:
    """The +/- of an estimate, or '-' when the sample has no variance (the interval is undefined)."""
    return "-" if not e.get("se") else _fmt(e["elo_err"])


def _fmt(v: Optional[float], spec: str = ".1f") -> str:
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return "-"
    return format(v, spec)


def wdl_text(ps: Dict[str, Any]) -> str:
    """``W - D - L (W-D-L)`` of the pairing statistics ``ps`` (from the first player's side)."""
    return f"{ps['w']} - {ps['d']} - {ps['l']} (W-D-L)"


def match_score_line(a: str, b: str, ps: Dict[str, Any]) -> str:
    """``Score of A vs B: W - D - L (W-D-L) [score] games`` for the pairing statistics ``ps`` (from A's side;
    cutechess-cli prints W - L - D here, this tool W-D-L everywhere)."""
    t = ps["trinomial"]
    return f"Score of {a} vs {b}: {wdl_text(ps)} [{t['score']:.3f}] {ps['games']}"


def format_summary(s: Dict[str, Any], header: str = "") -> str:
    """A text report of the summary ``s`` (:func:`summarize`): rating table, crosstable, pairings (and the match
    / SPRT block)."""
    names = [p["name"] for p in s["players"]]
    w = max(6, max(len(x) for x in names))
    conf = int(round(100 * s["confidence"]))
    out: List[str] = [header] if header else []
    out.append(f"Games: {s['games_played']} of {s['games_total']}"
               + (f"; Black scored {100 * s['black_score']:.1f} %" if s["black_score"] is not None else "")
               + ("; terminations: " + ", ".join(f"{k} {v}" for k, v in sorted(s["terminations"].items()))
                  if s["terminations"] else ""))
    rt = s["rating"]
    order = list(range(len(names)))
    if "elo" in rt:
        order.sort(key=lambda i: -rt["elo"][i])
    out += _rating_lines(s, order, w, conf)
    if len(names) > 2:
        out += _crosstable_lines(s, names, order, w)
    out += _pairing_lines(s, names, conf)
    if s["format"] == "match" and s["pairings"] and s["pairings"][0]["games"]:
        out += _match_lines(s["pairings"][0], names, conf)
    if "sprt" in s:
        out += _sprt_lines(s["sprt"])
    return "\n".join(out) + "\n"


def _rating_lines(s: Dict[str, Any], order: Sequence[int], w: int, conf: int) -> List[str]:
    """The rating table, best first (``w``: the name column's width)."""
    rt = s["rating"]
    anchor = f"anchored: {rt['anchor']} = {rt['anchor_elo']:g}" if rt.get("anchor") else \
        f"pool mean = {rt['anchor_elo']:g}"
    out = ["", f"Ratings (Bradley-Terry ML with a fitted first-move term, prior {rt['prior_draws']:g} virtual "
               f"draws, {anchor}; +/- is {conf} %)",
           f"{'Rank':>4}  {'Name':<{w}}  {'Elo':>7}  {'+/-':>6}  {'Games':>5}  {'Score':>6}  "
           f"{'W':>4} {'D':>4} {'L':>4}  {'time':>4} {'crash':>5} {'proto':>5} {'illeg':>5} {'forb':>4}"]
    perfect = rt.get("perfect") or [None] * len(order)
    for rank, i in enumerate(order, 1):
        p = s["players"][i]
        elo = _fmt(rt["elo"][i]) if "elo" in rt and not perfect[i] else "-"
        err = _fmt(rt["err"][i]) if "err" in rt and not perfect[i] else "-"
        sc = f"{100 * p['score']:.1f}%" if p["score"] is not None else "-"
        f = p["failures"]
        out.append(f"{rank:>4}  {p['name']:<{w}}  {elo:>7}  {err:>6}  {p['games']:>5}  {sc:>6}  "
                   f"{p['w']:>4} {p['d']:>4} {p['l']:>4}  {f['time']:>4} {f['crash']:>5} {f['protocol']:>5} "
                   f"{f['illegal']:>5} {f['forbidden']:>4}")
    if any(perfect):
        who = ", ".join(f"{s['players'][i]['name']} {perfect[i]} every game" for i in order if perfect[i])
        out.append(f"-: not estimable ({who}: no finite rating, a fit would come from the prior alone; "
                   "the pairings give the one-sided bound)")
    if "first_move_elo" in rt:
        out.append(f"First-move (Black) advantage: {rt['first_move_elo']:+.1f} +/- {rt['first_move_err']:.1f} Elo")
    elif "error" in rt:
        out.append(f"(no rating fit: {rt['error']})")
    return out


def _crosstable_lines(s: Dict[str, Any], names: Sequence[str], order: Sequence[int], w: int) -> List[str]:
    """Points of each row player against each column player, and (for up to 12 players) the LOS matrix."""
    rt = s["rating"]
    cw = max(9, w)
    out = ["", "Crosstable (points of the row player against the column player / games):",
           " " * (w + 2) + "".join(f"{names[j][:cw]:>{cw + 2}}" for j in order)]
    for i in order:
        cells = []
        for j in order:
            c = s["crosstable"][i][j]
            g = c["w"] + c["d"] + c["l"]
            cells.append("-" if i == j or not g else f"{c['w'] + 0.5 * c['d']:g}/{g}")
        out.append(f"{names[i]:<{w}}  " + "".join(f"{x:>{cw + 2}}" for x in cells))
    if "los" in rt and len(names) <= 12:
        out.append("")
        out.append("LOS (row stronger than column, from the rating covariance):")
        out.append(" " * (w + 2) + "".join(f"{names[j][:cw]:>{cw + 2}}" for j in order))
        perfect = rt.get("perfect") or [None] * len(names)
        for i in order:
            cells = ["-" if i == j or perfect[i] or perfect[j] else f"{100 * rt['los'][i][j]:.1f}%" for j in order]
            out.append(f"{names[i]:<{w}}  " + "".join(f"{x:>{cw + 2}}" for x in cells))
    return out


def _pairing_lines(s: Dict[str, Any], names: Sequence[str], conf: int) -> List[str]:
    """One line per pairing: W-D-L, score, Elo (trinomial and pentanomial) and LOS, or for a perfect score only
    its one-sided bound."""
    out = ["", "Pairings (from the first player's side; penta = pairs [LL, LD, WL+DD, WD, WW]):"]
    for ps in s["pairings"]:
        a, b = names[ps["a"]], names[ps["b"]]
        if not ps["games"]:
            out.append(f"  {a} vs {b}: no games yet")
            continue
        t = ps["trinomial"]
        line = f"  {a} vs {b}: {wdl_text(ps)} [{t['score']:.3f}] {ps['games']}, "
        if ps.get("perfect_bound") is not None:
            line += f"every game {ps['perfect']}: {perfect_text(ps, s['confidence'])}"
            if ps["pairs"]:
                line += f"; penta {ps['penta']}"
            out.append(line)
            continue
        line += f"Elo {t['elo']:+.1f} +/- {err_text(t)}, LOS {100 * t['los']:.1f} %"
        if ps["pairs"]:
            p = ps["pentanomial"]
            line += f"; penta {ps['penta']} Elo {p['elo']:+.1f} +/- {err_text(p)}"
        out.append(line)
    return out


def _match_lines(ps: Dict[str, Any], names: Sequence[str], conf: int) -> List[str]:
    """The block of a two-player match (as cutechess-cli prints it): score, Elo with its interval, LOS, draw
    ratio, normalized Elo, the pentanomial estimate and Black's score; for a perfect score the one-sided bound
    in place of the estimates."""
    t = ps["trinomial"]
    out = ["", match_score_line(names[ps["a"]], names[ps["b"]], ps)]
    if ps.get("perfect_bound") is not None:
        pb = ps["perfect_bound"]
        won = ps["perfect"] == "won"
        out.append(f"Every game {ps['perfect']}: Elo difference {'>' if won else '<'} {pb:+.1f} ({conf} % one-sided, "
                   f"exact binomial: s^{ps['games']} = {1 - conf / 100:g}); a sample without a "
                   f"{'loss' if won else 'win'} or a draw has no +/- or interval")
        if ps["pairs"]:
            out.append(f"Pentanomial {ps['penta']} ({ps['pairs']} pairs)")
    else:
        out.append(f"Elo difference: {t['elo']:+.1f} +/- {err_text(t)} ({conf} %: "
                   f"[{t['elo_lo']:+.1f}, {t['elo_hi']:+.1f}]), LOS: {100 * t['los']:.1f} %, "
                   f"DrawRatio: {100 * t['draw_ratio']:.1f} %, nElo: {_fmt(t['nelo'], '+.1f')}")
        if ps["pairs"]:
            p = ps["pentanomial"]
            out.append(f"Pentanomial {ps['penta']} ({ps['pairs']} pairs): Elo {p['elo']:+.1f} +/- "
                       f"{err_text(p)} ([{p['elo_lo']:+.1f}, {p['elo_hi']:+.1f}]), LOS: "
                       f"{100 * p['los']:.1f} %, nElo: {_fmt(p['nelo'], '+.1f')}")
    if ps["black_score"] is not None:
        out.append(f"Black's score in this match: {100 * ps['black_score']:.1f} %")
    return out


def _sprt_lines(sp: Dict[str, Any]) -> List[str]:
    """The SPRT state: hypotheses, LLR against its bounds, the decision."""
    verdict = {"H1": "H1 accepted (stop)", "H0": "H0 accepted (stop)", None: "continue"}[sp["decision"]]
    out = [f"SPRT ({sp['model']}, elo0 {sp['elo0']:g}, elo1 {sp['elo1']:g}, alpha {sp['alpha']:g}, "
           f"beta {sp['beta']:g}; pentanomial over the first {sp['pairs']} pairs"
           + (f" of {sp['pairs_finished']} finished" if sp.get("pairs_finished", sp["pairs"]) != sp["pairs"]
              else "") + f"): LLR {sp['llr']:.3f} "
           f"({100 * sp['fraction']:.1f} %) [{sp['lower']:.3f}, {sp['upper']:.3f}] -> {verdict}"]
    if sp["decision"]:
        out.append("Note: the Elo estimate of a test stopped early by the SPRT is biased away from 0.")
    return out
