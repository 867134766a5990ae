"""Match and tournament statistics: Elo, error bars, LOS, SPRT and a Bradley-Terry rating fit.

Pure maths (no I/O, no protocol): the formulas of ``docs/RATING.md`` sections 2, 3 and 6, checked against the
worked numbers of its section 4 in ``tests/test_rating.py``.

Conventions
-----------
* Results are always counted from player A's point of view, **losses first**, as fishtest does:
  trinomial ``(L, D, W)`` per game, pentanomial ``(LL, LD, WL+DD, WD, WW)`` per game pair (the two games of one
  opening with colours swapped; a pair scores 0, 1/4, 1/2, 3/4 or 1). Helper functions take keyword arguments
  (``wins=, draws=, losses=``) where the order could be confused.
* Elo is logistic: ``Elo(s) = -400 log10(1/s - 1)``; scores are clamped to ``[EPS, 1 - EPS]`` (``EPS = 1e-3``,
  as fishtest and OpenBench) so that a 100 % score gives a large finite number.
* Error bars are two-sided at ``confidence`` (95 % by default, ``z = 1.95996``): ``elo_err`` is the half width
  ``(Elo(s + z SE) - Elo(s - z SE)) / 2``; the asymmetric interval is ``(elo_lo, elo_hi)``.
* SPRT: Wald bounds ``A = ln(beta / (1 - alpha))``, ``B = ln((1 - beta) / alpha)``; the LLR is the generalised
  (GSPRT) one of fishtest, in the logistic model (hypotheses in logistic Elo, the default) or the normalised model
  (hypotheses in normalised Elo). Zero counts are replaced by ``1e-3`` for the LLR only.
* Bradley-Terry: ``P(i, moving first, beats j) = 1 / (1 + 10^(-(r_i - r_j + A) / 400))``, fitted by Newton's
  method with a line search in natural units; ``A`` is the first-move (Black) advantage; draws count 1/2; an
  optional prior of virtual draws (BayesElo's ``prior``, default 2 there) keeps perfect scores finite.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "EPS", "NELO_PER_T", "NAT", "phi", "phi_inv", "z_value", "elo_from_score", "score_from_elo",
    "EloEstimate", "trinomial", "pentanomial", "pentanomial_from_pairs", "pair_bucket", "los_cutechess",
    "perfect_score_bound", "sprt_bounds", "llr_logistic", "llr_logistic_approx", "llr_normalized", "llr_normalized_approx",
    "llr_bayeselo", "bayeselo_scale", "SprtResult", "sprt", "BTGame", "BTResult", "bradley_terry",
    "components", "RatingError",
]

EPS = 1e-3                                   #: score clamp for Elo (fishtest, OpenBench)
NELO_PER_T = 800.0 / math.log(10.0)          #: normalised Elo per unit of t-value (347.436)
NAT = 400.0 / math.log(10.0)                 #: Elo per natural-log unit (173.718)
_N01 = NormalDist()
TRI_SCORES = (0.0, 0.5, 1.0)
PENTA_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


class RatingError(ValueError):
    """Data that cannot be rated (no games, a disconnected pool, a fit that does not converge)."""


# ------------------------------------------------------------------------------------------ basics
def phi(x: float) -> float:
    """Standard normal CDF."""
    return _N01.cdf(x)


def phi_inv(p: float) -> float:
    """Standard normal quantile."""
    return _N01.inv_cdf(p)


def z_value(confidence: float = 0.95) -> float:
    """Two-sided normal quantile: 1.95996 for 95 %."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    return phi_inv(0.5 + confidence / 2.0)


def elo_from_score(s: float, eps: float = EPS) -> float:
    """Logistic Elo difference for an expected score ``s`` (clamped to ``[eps, 1 - eps]``)."""
    s = min(max(float(s), eps), 1.0 - eps)
    return -400.0 * math.log10(1.0 / s - 1.0)


def score_from_elo(elo: float) -> float:
    """Expected score for a logistic Elo difference."""
    return 1.0 / (1.0 + 10.0 ** (-float(elo) / 400.0))


# ------------------------------------------------------------------------------------------ two players
@dataclass(frozen=True)
class EloEstimate:
    """Score and Elo of player A against B, with a two-sided interval (see the module docstring).

    ``n`` is the number of games (trinomial) or pairs (pentanomial); ``se`` the standard error of the score;
    ``los`` the likelihood of superiority ``Phi((s - 1/2) / SE)``; ``nelo`` normalised Elo and its half width.
    ``kind`` is ``"trinomial"`` or ``"pentanomial"``.
    """

    kind: str
    n: int
    score: float
    se: float
    elo: float
    elo_lo: float
    elo_hi: float
    los: float
    nelo: float
    nelo_err: float
    draw_ratio: float
    confidence: float = 0.95

    @property
    def elo_err(self) -> float:
        """Half width of the Elo interval: ``(Elo(s+) - Elo(s-)) / 2``."""
        return (self.elo_hi - self.elo_lo) / 2.0

    def games(self) -> int:
        return self.n if self.kind == "trinomial" else 2 * self.n


def _estimate(kind: str, probs: Sequence[float], xs: Sequence[float], n: int, per_game_factor: float,
              draw_ratio: float, confidence: float) -> EloEstimate:
    if n <= 0:
        raise RatingError("no games")
    s = sum(p * x for p, x in zip(probs, xs))
    var = sum(p * (x - s) ** 2 for p, x in zip(probs, xs))
    se = math.sqrt(var / n)
    z = z_value(confidence)
    lo, hi = elo_from_score(s - z * se), elo_from_score(s + z * se)
    if se > 0:
        los = phi((s - 0.5) / se)
    else:
        los = 1.0 if s > 0.5 else 0.0 if s < 0.5 else 0.5
    sigma_game = math.sqrt(per_game_factor * var)
    if sigma_game > 0:
        nelo = (s - 0.5) / sigma_game * NELO_PER_T
        # SE of the t-value ~ 1/sqrt(games) (delta method, to first order)
        games = n if kind == "trinomial" else 2 * n
        nelo_err = z * NELO_PER_T / math.sqrt(games)
    else:  # no variance (e.g. every game won): normalised Elo is unbounded
        nelo = 0.0 if s == 0.5 else math.copysign(float("inf"), s - 0.5)
        nelo_err = float("inf")
    return EloEstimate(kind, n, s, se, elo_from_score(s), lo, hi, los, nelo, nelo_err, draw_ratio,
                       confidence)


def trinomial(*, wins: float, draws: float, losses: float, confidence: float = 0.95) -> EloEstimate:
    """Per-game statistics from W/D/L (RATING.md section 2, "Trinomial error bar")."""
    n = wins + draws + losses
    if n <= 0:
        raise RatingError("no games")
    probs = (losses / n, draws / n, wins / n)
    return _estimate("trinomial", probs, TRI_SCORES, int(round(n)), 1.0, draws / n, confidence)


def pentanomial(counts: Sequence[float], confidence: float = 0.95) -> EloEstimate:
    """Per-pair statistics from ``(LL, LD, WL+DD, WD, WW)`` counts (RATING.md section 2, "Pentanomial")."""
    if len(counts) != 5:
        raise ValueError("pentanomial counts are (LL, LD, WL+DD, WD, WW)")
    p = float(sum(counts))
    if p <= 0:
        raise RatingError("no game pairs")
    probs = [c / p for c in counts]
    # draws are not visible per game in the pentanomial buckets (DD shares a bucket with WL); the pair
    # buckets LD and WD hold exactly one draw each
    draw_ratio = (counts[1] + counts[3]) / (2 * p)
    return _estimate("pentanomial", probs, PENTA_SCORES, int(round(p)), 2.0, draw_ratio, confidence)


def pair_bucket(score_a: float, score_b: float) -> int:
    """Pentanomial bucket 0..4 of a pair in which A scored ``score_a`` and ``score_b`` (each 0, 1/2 or 1)."""
    total = score_a + score_b
    k = int(round(total * 2))
    if abs(total * 2 - k) > 1e-9 or not 0 <= k <= 4:
        raise ValueError(f"pair scores must be 0, 1/2 or 1 each, got {score_a}, {score_b}")
    return k


def pentanomial_from_pairs(pairs: Iterable[Tuple[float, float]]) -> List[int]:
    """``(LL, LD, WL+DD, WD, WW)`` counts from the two scores of player A in each complete pair."""
    out = [0] * 5
    for a, b in pairs:
        out[pair_bucket(a, b)] += 1
    return out


def perfect_score_bound(n: int, confidence: float = 0.95) -> float:
    """After ``n`` games all won, the Elo difference exceeded with ``confidence``, one-sided: the exact
    binomial (Clopper-Pearson) bound, the score ``s`` at which ``n`` wins in ``n`` games have probability
    ``1 - confidence`` (``s^n = 0.05`` at 95 %), as Elo. The symmetric interval of a perfect score is
    degenerate (no variance), so this is what to report instead; negate it for all lost. (Until issue 17
    this solved ``s^n = (1 - confidence) / 2``, the end of a two-sided interval: a 97.5 % one-sided bound
    reported as 95 %.)"""
    if n <= 0:
        raise RatingError("no games")
    return elo_from_score((1.0 - confidence) ** (1.0 / n), eps=0.0)


def los_cutechess(wins: float, losses: float) -> float:
    """cutechess's LOS, draws ignored: ``1/2 [1 + erf((W - L) / sqrt(2 (W + L)))]``."""
    if wins + losses <= 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


# ------------------------------------------------------------------------------------------ SPRT
def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> Tuple[float, float]:
    """Wald bounds ``(A, B) = (ln(beta / (1 - alpha)), ln((1 - beta) / alpha))``; +-2.9444 at 5 %/5 %."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError("alpha and beta must be in (0, 1)")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _pdf(counts: Sequence[float]) -> Tuple[float, List[float], Tuple[float, ...]]:
    xs: Tuple[float, ...]
    if len(counts) == 3:
        xs = TRI_SCORES
    elif len(counts) == 5:
        xs = PENTA_SCORES
    else:
        raise ValueError("counts must be trinomial (L, D, W) or pentanomial (LL, LD, WL+DD, WD, WW)")
    reg = [float(c) if c > 0 else 1e-3 for c in counts]
    n = sum(reg)
    return n, [c / n for c in reg], xs


def _mean_var(probs: Sequence[float], xs: Sequence[float]) -> Tuple[float, float]:
    mu = sum(p * x for p, x in zip(probs, xs))
    return mu, sum(p * (x - mu) ** 2 for p, x in zip(probs, xs))


def _root(f: Callable[[float], float], lo: float, hi: float, tol: float = 1e-14) -> float:
    """A root of ``f`` in ``(lo, hi)``, where ``f(lo)`` and ``f(hi)`` have opposite signs (bisection + secant
    safeguarded: Illinois / regula falsi)."""
    flo, fhi = f(lo), f(hi)
    if flo == 0:
        return lo
    if fhi == 0:
        return hi
    if (flo > 0) == (fhi > 0):
        raise RatingError("root not bracketed")
    side = 0
    x = lo
    for _ in range(300):
        x = (lo * fhi - hi * flo) / (fhi - flo)
        if not lo < x < hi:
            x = 0.5 * (lo + hi)
        fx = f(x)
        if fx == 0 or hi - lo < tol * (1 + abs(x)):
            return x
        if (fx > 0) == (fhi > 0):
            hi, fhi = x, fx
            if side == -1:
                flo /= 2
            side = -1
        else:
            lo, flo = x, fx
            if side == 1:
                fhi /= 2
            side = 1
    return x


def _secular(weights: Sequence[float], a: Sequence[float]) -> float:
    """The x solving ``sum_k w_k a_k / (1 + x a_k) = 0`` with ``1 + x a_k > 0`` for all k (``a`` has both
    signs)."""
    lo_a, hi_a = min(a), max(a)
    if not (lo_a < 0 < hi_a):
        raise RatingError("the hypothesis is outside the range of the outcomes")
    eps = 1e-9
    lo, hi = -1.0 / hi_a + eps, -1.0 / lo_a - eps

    def f(x: float) -> float:
        return sum(w * ak / (1.0 + x * ak) for w, ak in zip(weights, a))

    return _root(f, lo, hi)


def _mle_mean(probs: Sequence[float], xs: Sequence[float], s: float) -> List[float]:
    """Maximum-likelihood distribution on ``xs`` with mean ``s`` given the empirical ``probs``."""
    a = [x - s for x in xs]
    th = _secular(probs, a)
    return [p / (1.0 + th * ak) for p, ak in zip(probs, a)]


def _mle_t(probs: Sequence[float], xs: Sequence[float], ref: float, t: float) -> List[float]:
    """Maximum-likelihood distribution on ``xs`` with t-value ``(mu - ref) / sigma = t`` (the fixed-point
    iteration of van den Bergh, "normalized Elo practical", section 4.1)."""
    q = [1.0 / len(xs)] * len(xs)
    for _ in range(100):
        mu, var = _mean_var(q, xs)
        sigma = math.sqrt(var)
        a = [x - ref - t * sigma * (1.0 + ((mu - x) / sigma) ** 2) / 2.0 for x in xs]
        th = _secular(probs, a)
        new = [p / (1.0 + th * ak) for p, ak in zip(probs, a)]
        done = max(abs(u - v) for u, v in zip(q, new)) < 1e-12
        q = new
        if done:
            break
    return q


def llr_logistic(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """GSPRT log-likelihood ratio of H1: Elo = elo1 against H0: Elo = elo0 (logistic Elo), exact MLE.

    ``counts`` are trinomial ``(L, D, W)`` or pentanomial ``(LL, LD, WL+DD, WD, WW)``.
    """
    n, probs, xs = _pdf(counts)
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    p0, p1 = _mle_mean(probs, xs, s0), _mle_mean(probs, xs, s1)
    return n * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, p0, p1))


def llr_logistic_approx(counts: Sequence[float], elo0: float, elo1: float) -> float:
    """The asymptotic approximation ``n (s1 - s0)(2s - s0 - s1) / (2 sigma^2)`` (c-gomoku-cli ``sprt_llr``)."""
    n, probs, xs = _pdf(counts)
    s, var = _mean_var(probs, xs)
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    return n * (s1 - s0) * (2 * s - s0 - s1) / (2.0 * var)


def _t_hypotheses(counts: Sequence[float], nelo0: float, nelo1: float) -> Tuple[float, float]:
    k = math.sqrt(2.0) if len(counts) == 5 else 1.0
    return nelo0 / NELO_PER_T * k, nelo1 / NELO_PER_T * k


def llr_normalized(counts: Sequence[float], nelo0: float, nelo1: float) -> float:
    """GSPRT LLR with hypotheses in normalised Elo (fastchess's default model), exact MLE."""
    n, probs, xs = _pdf(counts)
    t0, t1 = _t_hypotheses(counts, nelo0, nelo1)
    p0, p1 = _mle_t(probs, xs, 0.5, t0), _mle_t(probs, xs, 0.5, t1)
    return n * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, p0, p1))


def llr_normalized_approx(counts: Sequence[float], nelo0: float, nelo1: float) -> float:
    """Closed-form approximation ``(games/2) ln[(1 + (t - t0)^2) / (1 + (t - t1)^2)]`` with ``t`` the
    per-game t-value (``sigma_game = sqrt(2) sigma_pair`` for pairs)."""
    n, probs, xs = _pdf(counts)
    mu, var = _mean_var(probs, xs)
    if len(counts) == 5:
        sigma_game, games = math.sqrt(2.0 * var), 2.0 * n
    else:
        sigma_game, games = math.sqrt(var), n
    t0, t1 = nelo0 / NELO_PER_T, nelo1 / NELO_PER_T
    t = (mu - 0.5) / sigma_game
    return games / 2.0 * math.log((1.0 + (t - t0) ** 2) / (1.0 + (t - t1) ** 2))


def bayeselo_scale(drawelo: float) -> float:
    """BayesElo's scale ``4x / (1 + x)^2`` with ``x = 10^(-drawelo / 400)`` (0.9255 at drawelo 97.3)."""
    x = 10.0 ** (-drawelo / 400.0)
    return 4.0 * x / (1.0 + x) ** 2


def llr_bayeselo(*, wins: float, draws: float, losses: float, elo0: float, elo1: float) -> float:
    """Legacy BayesElo SPRT (cutechess ``Sprt::status``): drawelo from the sample with +1/2 per outcome (a
    Jeffreys prior), logistic bounds converted to BayesElo by the scale above."""
    w, d, l = wins + 0.5, draws + 0.5, losses + 0.5
    n = w + d + l
    pw, pl = w / n, l / n
    drawelo = 200.0 * math.log10((1 - pl) / pl * (1 - pw) / pw)
    sc = bayeselo_scale(drawelo)

    def probs(b: float) -> Tuple[float, float, float]:
        win = 1.0 / (1.0 + 10.0 ** ((drawelo - b) / 400.0))
        loss = 1.0 / (1.0 + 10.0 ** ((drawelo + b) / 400.0))
        return win, 1.0 - win - loss, loss

    b0, b1 = elo0 / sc, elo1 / sc
    p0, p1 = probs(b0), probs(b1)
    return sum(c * math.log(q1 / q0) for c, q0, q1 in zip((wins, draws, losses), p0, p1))


@dataclass(frozen=True)
class SprtResult:
    """State of a sequential test: ``decision`` is ``"H1"`` (accept: A is better by about elo1), ``"H0"``
    (reject), or None (continue). ``fraction`` is LLR / bound of the side it leans to (fastchess's
    ``LLR (x%)``)."""

    llr: float
    lower: float
    upper: float
    elo0: float
    elo1: float
    alpha: float
    beta: float
    model: str
    decision: Optional[str]

    @property
    def fraction(self) -> float:
        return self.llr / self.upper if self.llr >= 0 else -self.llr / self.lower


def sprt(counts: Sequence[float], elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05,
         model: str = "logistic") -> SprtResult:
    """One SPRT evaluation on trinomial or pentanomial counts; ``model`` is ``"logistic"`` (hypotheses in
    logistic Elo), ``"normalized"`` (normalised Elo) or ``"bayeselo"`` (legacy; trinomial only)."""
    lower, upper = sprt_bounds(alpha, beta)
    if sum(counts) <= 0:
        llr = 0.0
    elif model == "logistic":
        llr = llr_logistic(counts, elo0, elo1)
    elif model == "normalized":
        llr = llr_normalized(counts, elo0, elo1)
    elif model == "bayeselo":
        if len(counts) != 3:
            raise ValueError("the BayesElo SPRT needs trinomial counts")
        llr = llr_bayeselo(losses=counts[0], draws=counts[1], wins=counts[2], elo0=elo0, elo1=elo1)
    else:
        raise ValueError(f"unknown SPRT model {model!r}: logistic, normalized or bayeselo")
    decision = "H1" if llr >= upper else "H0" if llr <= lower else None
    return SprtResult(llr, lower, upper, elo0, elo1, alpha, beta, model, decision)


# ------------------------------------------------------------------------------------------ Bradley-Terry
@dataclass(frozen=True)
class BTGame:
    """Games between ``first`` (moving first, i.e. Black) and ``second``: ``score`` is the first player's total
    score over ``count`` games (each 0, 1/2 or 1)."""

    first: int
    second: int
    score: float
    count: float = 1.0


@dataclass
class BTResult:
    """A Bradley-Terry fit. ``ratings`` in Elo (anchored, see :func:`bradley_terry`), ``cov`` their covariance
    (Elo^2) under the same anchoring, ``se`` its diagonal's square root; ``first_move`` the fitted first-move
    advantage in Elo (0 when not fitted) and its SE. ``games`` is the real games per player, ``score`` their
    total score, ``expected`` the model's expectation of it (equal at the optimum without a prior)."""

    ratings: np.ndarray
    cov: np.ndarray
    se: np.ndarray
    first_move: float
    first_move_se: float
    games: np.ndarray
    score: np.ndarray
    expected: np.ndarray
    iterations: int
    converged: bool
    log_likelihood: float
    anchor: Optional[int] = None
    notes: List[str] = field(default_factory=list)

    def diff_se(self, i: int, j: int) -> float:
        """Standard error of ``r_i - r_j`` (Elo), from the full covariance."""
        v = self.cov[i, i] + self.cov[j, j] - 2.0 * self.cov[i, j]
        return math.sqrt(max(0.0, v))

    def los(self, i: int, j: int) -> float:
        """Likelihood that i is stronger than j: ``Phi((r_i - r_j) / SE_ij)``."""
        se = self.diff_se(i, j)
        d = self.ratings[i] - self.ratings[j]
        if se <= 0:
            return 0.5 if d == 0 else float(d > 0)
        return phi(d / se)

    def los_matrix(self) -> np.ndarray:
        n = len(self.ratings)
        return np.array([[self.los(i, j) if i != j else float("nan") for j in range(n)] for i in range(n)])


def components(n: int, edges: Iterable[Tuple[int, int]]) -> List[List[int]]:
    """Connected components of players ``0..n-1`` joined by ``edges`` (sorted lists)."""
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
    groups: Dict[int, List[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values())


def _strongly_connected(n: int, edges: Dict[int, set]) -> bool:
    def reach(adj: Dict[int, set]) -> int:
        seen = {0}
        todo = [0]
        while todo:
            for b in adj[todo.pop()]:
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
        return len(seen)

    rev: Dict[int, set] = {k: set() for k in range(n)}
    for a, bs in edges.items():
        for b in bs:
            rev[b].add(a)
    return reach(edges) == n and reach(rev) == n


def _condense(games: Sequence[BTGame], n: int) -> Dict[Tuple[int, int], List[float]]:
    """(first, second) -> [score, count]."""
    out: Dict[Tuple[int, int], List[float]] = {}
    for g in games:
        if not (0 <= g.first < n and 0 <= g.second < n) or g.first == g.second:
            raise ValueError(f"bad game between {g.first} and {g.second}")
        if g.count <= 0:
            continue
        if not -1e-9 <= g.score <= g.count + 1e-9:
            raise ValueError("a game's score must lie between 0 and its count")
        rec = out.setdefault((g.first, g.second), [0.0, 0.0])
        rec[0] += g.score
        rec[1] += g.count
    return out


def _bt_totals(data: Dict[Tuple[int, int], List[float]], n: int) -> Tuple[np.ndarray, np.ndarray]:
    """Games played and points scored per player (both colours) in the condensed ``data``."""
    games_per = np.zeros(n)
    score_per = np.zeros(n)
    for (i, j), (s, c) in data.items():
        games_per[i] += c
        games_per[j] += c
        score_per[i] += s
        score_per[j] += c - s
    return games_per, score_per


def _check_ml_exists(data: Dict[Tuple[int, int], List[float]], n: int, first_move: bool) -> None:
    """Raise :class:`RatingError` where the plain maximum-likelihood fit (no prior) does not exist.

    Ford's condition: the ML fit exists only if every player both scored against and conceded to
    the rest in a chain (the "scored something against" graph is strongly connected); and a
    first-move term needs the first player to have neither won nor lost every game.
    """
    beats: Dict[int, set] = {k: set() for k in range(n)}
    for (i, j), (s, c) in data.items():
        if s > 1e-12:
            beats[i].add(j)
        if c - s > 1e-12:
            beats[j].add(i)
    if not _strongly_connected(n, beats):
        raise RatingError("the maximum-likelihood fit does not exist: some players won (or lost) every "
                          "game against the rest; use a prior")
    first = sum(s for s, _ in data.values())
    total = sum(c for _, c in data.values())
    if first_move and not (1e-12 < first < total - 1e-12):
        raise RatingError("the first-move advantage is unbounded: the first player won (or lost) every "
                          "game; use a prior or no first-move term")


def _bt_rows(data: Dict[Tuple[int, int], List[float]], prior: float, games_per: np.ndarray
             ) -> List[Tuple[int, int, float, float, float]]:
    """The fit's rows ``(i, j, score of i, count, colour coefficient of A)``: the games, then
    ``prior`` virtual draws per player spread over the opponents it met (BayesElo's ``AddPrior``)."""
    rows: List[Tuple[int, int, float, float, float]] = [(i, j, s, c, 1.0) for (i, j), (s, c) in data.items()]
    if prior > 0:
        met: Dict[Tuple[int, int], float] = {}
        for (i, j), (_, c) in data.items():
            key = (min(i, j), max(i, j))
            met[key] = met.get(key, 0.0) + c
        for (a, b), c in met.items():
            # a's share of its prior goes to b and vice versa; half of each with either colour
            v = 0.5 * prior * (c / games_per[a] + c / games_per[b])
            rows.append((a, b, 0.5 * v, v, 0.0))
    return rows


def _bt_design(rows: List[Tuple[int, int, float, float, float]], free: List[int], first_move: bool
               ) -> np.ndarray:
    """Design matrix X (rows x params): +1 for i, -1 for j (players of ``free`` only, in order),
    then the colour coefficient for A when ``first_move``."""
    I = np.array([r[0] for r in rows])
    J = np.array([r[1] for r in rows])
    K = np.array([r[4] for r in rows])
    npar = len(free) + (1 if first_move else 0)
    col = {p: c for c, p in enumerate(free)}
    X = np.zeros((len(rows), npar))
    for row, (i, j) in enumerate(zip(I, J)):
        if i in col:
            X[row, col[i]] += 1.0
        if j in col:
            X[row, col[j]] -= 1.0
    if first_move:
        X[:, -1] = K
    return X


def _bt_loglik(X: np.ndarray, S: np.ndarray, C: np.ndarray, theta: np.ndarray) -> float:
    """Log-likelihood of ``theta`` (natural units): sum of s ln p + (c - s) ln(1 - p), p = sigmoid(X theta)."""
    z = X @ theta
    return float(np.sum(-S * np.logaddexp(0.0, -z) - (C - S) * np.logaddexp(0.0, z)))


def _bt_newton(X: np.ndarray, S: np.ndarray, C: np.ndarray, max_iter: int, tol: float
               ) -> Tuple[np.ndarray, float, int, bool]:
    """Newton iterations with a backtracking line search from theta = 0: (theta, log-likelihood,
    iterations, converged). Stops when the gradient is below ``tol`` or the step vanishes."""
    npar = X.shape[1]
    theta = np.zeros(npar)
    ll = _bt_loglik(X, S, C, theta)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        z = X @ theta
        p = 1.0 / (1.0 + np.exp(-z))
        g = X.T @ (S - C * p)
        w = C * p * (1.0 - p)
        H = (X * w[:, None]).T @ X  # = -Hessian
        if np.max(np.abs(g)) < tol:
            converged = True
            break
        try:
            step = np.linalg.solve(H + 1e-12 * np.eye(npar), g)
        except np.linalg.LinAlgError:
            break
        t = 1.0
        for _ in range(40):
            cand = theta + t * step
            llc = _bt_loglik(X, S, C, cand)
            if llc >= ll - 1e-12:
                break
            t *= 0.6
        theta, ll = cand, llc
        if np.max(np.abs(t * step)) < 1e-12:
            converged = True
            break
    return theta, ll, it, converged


def _bt_ratings(X: np.ndarray, C: np.ndarray, theta: np.ndarray, n: int, free: List[int],
                anchor: Optional[int], anchor_elo: float, first_move: bool
                ) -> Tuple[np.ndarray, np.ndarray, float, float]:
    """Ratings and their covariance in Elo from the fitted ``theta``, anchored (to player
    ``anchor``, else the pool mean, at ``anchor_elo``); plus the first-move advantage and its SE."""
    z = X @ theta
    p = 1.0 / (1.0 + np.exp(-z))
    w = C * p * (1.0 - p)
    H = (X * w[:, None]).T @ X
    cov_par = np.linalg.inv(H) * NAT * NAT
    r = np.zeros(n)
    for c, k in enumerate(free):
        r[k] = theta[c] * NAT
    cov = np.zeros((n, n))
    idx = np.array(free)
    cov[np.ix_(idx, idx)] = cov_par[:len(free), :len(free)]
    if anchor is None:
        M = np.eye(n) - np.full((n, n), 1.0 / n)
        r = M @ r
        cov = M @ cov @ M.T
    r = r + anchor_elo
    adv = float(theta[-1] * NAT) if first_move else 0.0
    adv_se = float(math.sqrt(cov_par[-1, -1])) if first_move else 0.0
    return r, cov, adv, adv_se


def bradley_terry(games: Sequence[BTGame], n_players: int, first_move: bool = True, prior: float = 2.0,
                  anchor: Optional[int] = None, anchor_elo: float = 0.0, max_iter: int = 200,
                  tol: float = 1e-10) -> BTResult:
    """Maximum-likelihood (or maximum a posteriori with ``prior``) ratings for many players.

    Model (RATING.md section 3): ``P(first scores) = 1 / (1 + 10^(-(r_first - r_second + A) / 400))``;
    ``A`` (the first-move advantage) is fitted when ``first_move`` is true, else 0. ``prior`` virtual draws per
    player are spread over the opponents that player actually met, in proportion to the games played and
    split evenly over both colours (BayesElo's ``AddPrior``); 0 gives the plain ML fit, which is undefined for
    a player who never lost or never won (the fit then fails to converge and :class:`RatingError` is raised).

    Ratings are anchored to ``anchor_elo`` for player ``anchor``, or, when ``anchor`` is None, so that their
    mean is ``anchor_elo`` (errors are then relative to the pool average, like Ordo). A pool whose players
    are not all connected by games raises :class:`RatingError`.
    """
    n = int(n_players)
    if n < 2:
        raise RatingError("a rating fit needs at least two players")
    data = _condense(games, n)
    if not data:
        raise RatingError("no games")
    games_per, score_per = _bt_totals(data, n)
    comps = components(n, data.keys())
    if len(comps) > 1:
        raise RatingError("the players are not connected by games: groups "
                          + "; ".join(",".join(map(str, c)) for c in comps))
    if prior <= 0:
        _check_ml_exists(data, n, first_move)
    rows = _bt_rows(data, prior, games_per)
    S = np.array([r[2] for r in rows])
    C = np.array([r[3] for r in rows])
    fix = 0 if anchor is None else int(anchor)
    if not 0 <= fix < n:
        raise ValueError("anchor out of range")
    free = [k for k in range(n) if k != fix]
    X = _bt_design(rows, free, first_move)
    theta, ll, it, converged = _bt_newton(X, S, C, max_iter, tol)
    if not converged or np.max(np.abs(theta)) > 50.0:
        raise RatingError("the rating fit does not converge (a player who never lost or never won, "
                          "and no prior?)")
    r, cov, adv, adv_se = _bt_ratings(X, C, theta, n, free, anchor, anchor_elo, first_move)
    # expected real-game score per player at the fit
    expected = np.zeros(n)
    for (i, j), (s, c) in data.items():
        zz = (r[i] - r[j] + adv) / NAT
        e = c / (1.0 + math.exp(-zz))
        expected[i] += e
        expected[j] += c - e
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    return BTResult(r, cov, se, adv, adv_se, games_per, score_per, expected, it, converged, ll, anchor)
