"""Rating maths (gomoku_ai/rating.py) against the worked numbers of docs/RATING.md section 4 (checked there
against fishtest) and against hand computations."""
from __future__ import annotations

import math

import numpy as np
import pytest

from gomoku_ai import rating as R

# OpenBench stats.py sample (RATING.md section 4): L, D, W and pentanomial LL, LD, WL+DD, WD, WW
TRI = dict(losses=22569, draws=44137, wins=22976)
TRI_COUNTS = [22569, 44137, 22976]
PENTA = [39, 8843, 26675, 9240, 44]


# ------------------------------------------------------------------------------------------ section 4
def test_elo_of_scores():
    assert R.elo_from_score(0.60) == pytest.approx(70.44, abs=0.005)
    assert R.elo_from_score(0.76) == pytest.approx(200.24, abs=0.005)
    assert R.elo_from_score(0.5) == 0.0
    for e in (-300.0, -12.5, 0.0, 55.0, 420.0):
        assert R.elo_from_score(R.score_from_elo(e)) == pytest.approx(e)
    # clamped at 1e-3: a perfect score is large but finite
    assert R.elo_from_score(1.0) == pytest.approx(-400 * math.log10(1 / 0.999 - 1))
    assert R.z_value(0.95) == pytest.approx(1.95996, abs=1e-5)


def test_sprt_bounds():
    a, b = R.sprt_bounds(0.05, 0.05)
    assert a == pytest.approx(-2.9444, abs=1e-4) and b == pytest.approx(2.9444, abs=1e-4)
    a, b = R.sprt_bounds(0.05, 0.10)
    assert a == pytest.approx(math.log(0.10 / 0.95)) and b == pytest.approx(math.log(0.90 / 0.05))


def test_trinomial_worked_numbers():
    e = R.trinomial(**TRI)
    assert e.elo == pytest.approx(1.5768, abs=1e-4)
    assert e.elo_err == pytest.approx(1.6205, abs=1e-4)
    assert e.los == pytest.approx(0.9717, abs=1e-4)
    assert e.n == 89682 and e.games() == 89682


def test_pentanomial_worked_numbers():
    e = R.pentanomial(PENTA)
    assert e.elo == pytest.approx(1.5768, abs=1e-4)       # the same score as per game
    assert e.elo_err == pytest.approx(1.0303, abs=1e-4)   # smaller: the games of a pair are correlated
    assert e.los == pytest.approx(0.9986, abs=1e-4)
    assert e.n == 44841 and e.games() == 89682


def test_llr_logistic_worked_numbers():
    assert R.llr_logistic(TRI_COUNTS, 0, 2) == pytest.approx(1.6875, abs=1e-4)
    assert R.llr_logistic(PENTA, 0, 2) == pytest.approx(4.1740, abs=1e-4)
    assert R.llr_logistic_approx(TRI_COUNTS, 0, 2) == pytest.approx(1.6876, abs=1e-4)
    assert R.llr_logistic_approx(PENTA, 0, 2) == pytest.approx(4.1745, abs=1e-4)


def test_llr_normalized_worked_numbers():
    assert R.llr_normalized(PENTA, 0.5, 2.5) == pytest.approx(2.9417, abs=1e-4)
    assert R.llr_normalized_approx(PENTA, 0.5, 2.5) == pytest.approx(2.9419, abs=1e-4)


def test_bayeselo_scale():
    assert R.bayeselo_scale(97.3) == pytest.approx(0.9255, abs=1e-4)
    assert R.bayeselo_scale(0.0) == pytest.approx(1.0)


# ------------------------------------------------------------------------------------------ by hand
def test_trinomial_by_hand():
    # W=6 D=2 L=2: s = 0.7, sigma^2 = w + d/4 - s^2 = 0.6 + 0.05 - 0.49 = 0.16, SE = 0.4 / sqrt(10)
    e = R.trinomial(wins=6, draws=2, losses=2)
    se = 0.4 / math.sqrt(10)
    assert e.score == pytest.approx(0.7) and e.se == pytest.approx(se)
    z = 1.959963984540054
    lo = -400 * math.log10(1 / (0.7 - z * se) - 1)
    hi = -400 * math.log10(1 / (0.7 + z * se) - 1)
    assert (e.elo_lo, e.elo_hi) == (pytest.approx(lo), pytest.approx(hi))
    assert e.elo_err == pytest.approx((hi - lo) / 2)
    assert e.los == pytest.approx(0.5 * (1 + math.erf((0.2 / se) / math.sqrt(2))))
    assert e.draw_ratio == pytest.approx(0.2)
    assert e.nelo == pytest.approx(0.2 / 0.4 * 800 / math.log(10))


def test_pentanomial_from_pairs_and_buckets():
    pairs = [(1, 1), (1, 0.5), (0.5, 0.5), (1, 0), (0, 0.5), (0, 0), (0.5, 1)]
    counts = R.pentanomial_from_pairs(pairs)
    assert counts == [1, 1, 2, 2, 1]
    e = R.pentanomial(counts)
    assert e.score == pytest.approx(sum(a + b for a, b in pairs) / (2 * len(pairs)))
    # sigma^2 per pair by hand
    xs = [(a + b) / 2 for a, b in pairs]
    mu = sum(xs) / len(xs)
    assert e.se == pytest.approx(math.sqrt(sum((x - mu) ** 2 for x in xs) / len(xs) / len(xs)))
    with pytest.raises(ValueError):
        R.pair_bucket(0.3, 1)


def test_los_cutechess():
    assert R.los_cutechess(5, 5) == 0.5
    assert R.los_cutechess(10, 5) == pytest.approx(0.5 * (1 + math.erf(5 / math.sqrt(30))))
    assert R.los_cutechess(0, 0) == 0.5


def test_llr_properties_and_sprt_decisions():
    # swapping the hypotheses flips the sign; the approximation agrees on a large sample
    assert R.llr_logistic(PENTA, 2, 0) == pytest.approx(-R.llr_logistic(PENTA, 0, 2))
    # a sample at exactly the midpoint of the hypotheses has LLR ~ 0
    s = R.sprt([10, 0, 10], -20, 20)
    assert abs(s.llr) < 1e-9 and s.decision is None
    # all pairs won: H1 accepted after a handful of pairs; all lost: H0
    r = R.sprt([0, 0, 0, 0, 8], 0, 200)
    assert r.decision == "H1" and r.llr >= r.upper and r.fraction >= 1.0
    r = R.sprt([8, 0, 0, 0, 0], 0, 200)
    assert r.decision == "H0" and r.llr <= r.lower and r.fraction <= -1.0
    assert R.sprt([0, 0, 0, 0, 0], 0, 5).decision is None
    # normalized model agrees in sign; bayeselo legacy model on trinomial counts
    assert R.sprt(PENTA, 0.5, 2.5, model="normalized").llr == pytest.approx(2.9417, abs=1e-4)
    assert R.sprt([5, 10, 30], 0, 50, model="bayeselo").llr > 0
    with pytest.raises(ValueError):
        R.sprt(PENTA, 0, 5, model="bayeselo")


# ------------------------------------------------------------------------------------------ Bradley-Terry
def test_bt_two_players_equals_elo_of_score():
    # A scores 7/10 (4/5 moving first, 3/5 moving second), no first-move term, no prior
    g = [R.BTGame(0, 1, 4, 5), R.BTGame(1, 0, 2, 5)]
    r = R.bradley_terry(g, 2, first_move=False, prior=0)
    assert r.ratings[0] - r.ratings[1] == pytest.approx(R.elo_from_score(0.7), abs=1e-6)
    assert r.ratings.sum() == pytest.approx(0.0, abs=1e-9)  # pool mean anchor
    # delta method: SE(Elo diff) = (400/ln10) / sqrt(N p (1-p))
    assert r.diff_se(0, 1) == pytest.approx(R.NAT / math.sqrt(10 * 0.7 * 0.3), rel=1e-6)
    assert r.converged and np.allclose(r.score, r.expected)


def test_bt_first_move_term_by_hand():
    # sigma(d + a) = 0.8 (A first), sigma(d - a) = 0.6 (A second) => d = (ln 4 + ln 1.5)/2, a = (ln 4 - ln 1.5)/2
    g = [R.BTGame(0, 1, 4, 5), R.BTGame(1, 0, 2, 5)]
    r = R.bradley_terry(g, 2, first_move=True, prior=0)
    d = (math.log(4) + math.log(1.5)) / 2 * R.NAT
    a = (math.log(4) - math.log(1.5)) / 2 * R.NAT
    assert r.ratings[0] - r.ratings[1] == pytest.approx(d, abs=1e-6)
    assert r.first_move == pytest.approx(a, abs=1e-6)


def test_bt_three_players_fixed_point_anchor_and_los():
    g = [R.BTGame(0, 1, 3, 4), R.BTGame(1, 0, 1, 4), R.BTGame(0, 2, 3, 4), R.BTGame(2, 0, 1, 4),
         R.BTGame(1, 2, 3, 4), R.BTGame(2, 1, 2, 4)]
    r = R.bradley_terry(g, 3, prior=0)
    # ML fixed point (Ordo): every player's expected score equals the actual score
    assert np.allclose(r.expected, r.score, atol=1e-8)
    assert r.ratings[0] > r.ratings[1] > r.ratings[2]
    # anchoring changes the level, not the differences or their errors
    r2 = R.bradley_terry(g, 3, prior=0, anchor=2, anchor_elo=1600.0)
    assert r2.ratings[2] == pytest.approx(1600.0) and r2.se[2] == pytest.approx(0.0)
    assert r2.ratings[0] - r2.ratings[1] == pytest.approx(r.ratings[0] - r.ratings[1])
    assert r2.diff_se(0, 1) == pytest.approx(r.diff_se(0, 1))
    assert r.los(0, 2) == pytest.approx(R.phi((r.ratings[0] - r.ratings[2]) / r.diff_se(0, 2)))
    assert 0.5 < r.los(0, 1) < 1.0 and r.los(1, 0) == pytest.approx(1 - r.los(0, 1))
    # a prior of virtual draws pulls ratings toward each other
    rp = R.bradley_terry(g, 3, prior=2)
    assert abs(rp.ratings[0] - rp.ratings[2]) < abs(r.ratings[0] - r.ratings[2])


def test_bt_perfect_score_needs_a_prior_and_pools_must_connect():
    g = [R.BTGame(0, 1, 2, 2), R.BTGame(1, 0, 0, 2)]
    with pytest.raises(R.RatingError):
        R.bradley_terry(g, 2, prior=0)
    r = R.bradley_terry(g, 2, prior=2)
    assert r.converged and 0 < r.ratings[0] - r.ratings[1] < 1000
    with pytest.raises(R.RatingError):
        R.bradley_terry([R.BTGame(0, 1, 1, 2), R.BTGame(2, 3, 1, 2)], 4)
    assert R.components(4, [(0, 1), (2, 3)]) == [[0, 1], [2, 3]]


def test_perfect_score_bound():
    # 40 games all won, 95 % one-sided: s^40 = 0.05 -> s = 0.9279, Elo = 443.7 (97.5 %: s^40 = 0.025, 405.9)
    s = 0.05 ** (1 / 40)
    assert R.perfect_score_bound(40) == pytest.approx(-400 * math.log10(1 / s - 1))
    assert 443 < R.perfect_score_bound(40) < 444
    assert 405 < R.perfect_score_bound(40, confidence=0.975) < 406
    assert R.perfect_score_bound(400) > R.perfect_score_bound(40)
