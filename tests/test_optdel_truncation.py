"""Truncated segment kernels of the homogeneous Thm. 15 pass (odp.optdel.homogeneous): with the
tail forced small or large, the pass must bracket the exact rational enclosure of Eq. (3); a
deliberately wrong tail bound (0) must not; the left-out mass must be bounded by ``tail``; the
work estimate must pick the fast path whenever it fits; and the CLI must say when a bound is
uninformative at its grid."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from fractions import Fraction as F

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from odp.cli import main
from odp.optdel import bounds, optdel
from odp.optdel import exact as X
from odp.optdel import homogeneous as H
from odp.optdel import lattice as LT
from odp.optdel.cost import estimate, fast_path_fits, homogeneous_macs
from odp.optdel.problem import EpsProblem
from odp.rational import exp_bracket


def exact_enclosure(eps, delta, stops, costs):
    """``lo <= Eq. (3) <= hi``: the exact rational value at enclosures of ``e**eps`` and of
    ``e**E(P_i)`` (monotonicity, Lemma D of odp.optdel.exact)."""
    k = stops[-1]
    w_lo, w_hi = exp_bracket(eps, digits=30)
    W = [exp_bracket(c, digits=30) for c in costs]
    lo = X.thm15_lattice_exact(w_lo, units=[1] * k, deltas=[delta] * k, stops=stops,
                               Ws=[hi for _, hi in W])
    hi = X.thm15_lattice_exact(w_hi, units=[1] * k, deltas=[delta] * k, stops=stops,
                               Ws=[lo for lo, _ in W])
    return lo, hi


def instance(eps, delta, stops, costs, window=None):
    k = stops[-1]
    if window is None:
        window = LT.default_window(eps, [eps] * k, costs)
    return LT.LatticeInstance(eps, (1,) * k, (delta,) * k, tuple(stops), tuple(costs), window)


@st.composite
def cases(draw):
    k = draw(st.integers(20, 140))
    stops = sorted(set(draw(st.lists(st.integers(1, k), max_size=3))) | {k})
    eps = draw(st.sampled_from([F(1, 20), F(1, 5), F(1, 2), F(1), F(3)]))
    delta = draw(st.sampled_from([F(0), F(1, 10**6), F(1, 1000)]))
    # costs around the typical loss of each prefix, so that stopping matters
    costs = [F(draw(st.integers(0, 40)), 10) * eps * math.isqrt(s) + eps * s * F(1, 4)
             for s in stops]
    return stops, eps, delta, costs


@settings(max_examples=60, deadline=None)
@given(cases(), st.sampled_from([0.0, 2.0**-100, 1e-12, 1e-6, 1e-3, 0.2]))
def test_truncated_pass_brackets_the_exact_value(case, tail_target):
    stops, eps, delta, costs = case
    lo, hi = exact_enclosure(eps, delta, stops, costs)
    for window in (None, (-8, 30)):
        inst = instance(eps, delta, stops, costs, window)
        up = F(H.thm15_pass(inst, eps, delta, True, tail_target=tail_target))
        down = F(H.thm15_pass(inst, eps, delta, False, tail_target=tail_target))
        assert down <= hi and lo <= up
        if window is None and tail_target <= 1e-12:
            # tight: the left-out mass is ~tail_target per segment
            assert up - down <= (F(1, 10**11) * up + 4 * len(stops) * F(tail_target)
                                 + F(1, 10**300))


@settings(max_examples=40, deadline=None)
@given(cases(), st.sampled_from([2.0**-100, 1e-9, 1e-3]))
def test_truncation_moves_the_bounds_by_at_most_the_tail(case, tail_target):
    """Against the untruncated pass: the upper bound grows by at most the tails (plus float
    slack), the lower bound drops by at most the left-out mass."""
    stops, eps, delta, costs = case
    inst = instance(eps, delta, stops, costs)
    full_up = H.thm15_pass(inst, eps, delta, True, tail_target=0.0)
    full_dn = H.thm15_pass(inst, eps, delta, False, tail_target=0.0)
    up = H.thm15_pass(inst, eps, delta, True, tail_target=tail_target)
    dn = H.thm15_pass(inst, eps, delta, False, tail_target=tail_target)
    bounds_ = [0, *stops]
    tails = sum(H.segment_kernel(b - a, eps, delta, True, tail_target=tail_target).tail
                for a, b in zip(bounds_, bounds_[1:]))
    slack = 1e-12 * full_up + 1e-300
    assert up <= full_up + tails + slack
    assert dn >= full_dn - tails - slack


def test_a_wrong_tail_bound_is_caught():
    """The same truncated kernels with ``tail = 0`` (a deliberately wrong claim: the left-out
    mass ignored) give an "upper bound" below the exact value."""
    eps, delta = F(1, 2), F(1, 10**4)
    stops, costs = [40, 90, 120], [F(1), F(2), F(3)]
    lo, hi = exact_enclosure(eps, delta, stops, costs)
    inst = instance(eps, delta, stops, costs)

    def honest(m, up):
        return H.segment_kernel(m, eps, delta, up, tail_target=1e-3)

    def wrong(m, up):
        return replace(honest(m, up), tail=0.0)

    assert F(H.thm15_pass(inst, eps, delta, True, kernels=honest)) >= hi
    assert F(H.thm15_pass(inst, eps, delta, True, kernels=wrong)) < lo
    assert F(H.thm15_pass(inst, eps, delta, False, kernels=honest)) <= lo


@pytest.mark.parametrize("m,eps,delta,tail_target", [
    (200, F(1, 10), F(0), 1e-6), (500, F(1, 100), F(1, 10**5), 2.0**-100),
    (300, F(3), F(0), 1e-9), (150, F(1, 2), F(1, 1000), 0.3)])
def test_kernel_tail_bounds_the_left_out_binomial_mass(m, eps, delta, tail_target):
    mpmath.mp.dps = 60
    w = mpmath.exp(mpmath.mpf(eps.numerator) / eps.denominator)
    q = w / (1 + w)
    s = (1 - mpmath.mpf(delta.numerator) / delta.denominator) ** m
    exact = [s * mpmath.binomial(m, j) * q**j * (1 - q) ** (m - j) for j in range(m + 1)]
    up = H.segment_kernel(m, eps, delta, True, tail_target=tail_target)
    down = H.segment_kernel(m, eps, delta, False, tail_target=tail_target)
    j_lo, j_hi = up.offset, up.offset + len(up.values) - 1
    assert (down.offset, len(down.values)) == (j_lo, len(up.values))
    assert 0 < j_lo or j_hi < m  # the case does truncate
    for t, j in enumerate(range(j_lo, j_hi + 1)):
        assert down.values[t] <= exact[j] <= up.values[t]
    left_out = sum(exact[:j_lo]) + sum(exact[j_hi + 1:])
    assert left_out <= up.tail <= 4 * tail_target + 1e-300
    assert down.tail == 0.0
    # too short a claimed tail would be wrong: the bound is not vacuous
    assert up.tail < 20 * left_out


@settings(max_examples=30, deadline=None)
@given(st.integers(4096, 30000), st.data())
def test_binomial_coefficient_bounds(k, data):
    u = data.draw(st.integers(0, k))
    assert F(H._comb(k, u, False)) <= math.comb(k, u) <= F(H._comb(k, u, True))
    assert F(H._comb(k, u, True)) <= math.comb(k, u) * (1 + F(1, 10**30))


def test_fast_path_is_chosen_whenever_it_fits():
    k, stops = 3000, (1000, 3000)
    steps = [("0.01", "0")] * k
    p = EpsProblem.parse(stops, steps, ["10", "30"])
    inst = instance(p.epsilons[0], F(0), stops, p.costs)
    macs = H.segment_macs(inst, p.epsilons[0])
    within = -(-macs // bounds._MACS_PER_CELL)
    for max_cells in (within, within - 1, 1):
        fast = bounds._homogeneous_bound("thm15", p, max_cells, True)
        assert (fast is not None) == fast_path_fits(macs, k, max_cells)
    # within the budget, or beyond it while no slower than the per-depth lattice fallback
    assert fast_path_fits(macs, k, within) and fast_path_fits(macs, k, 1)
    assert not fast_path_fits(10**12, 1000, 100)
    assert optdel(stops, steps, ["10", "30"], max_cells=1).method == "homogeneous segments"
    # the up-front estimate of the homogeneous paths is far below the general model's
    general = estimate("lemma11", 100_000, 3, bounds.DEFAULT_MAX_CELLS)
    fast = estimate("lemma11", 100_000, 3, bounds.DEFAULT_MAX_CELLS, homogeneous=True)
    assert fast.seconds < 10 < general.seconds
    assert homogeneous_macs(100_000, 3) >= H.segment_macs(
        instance(F(1, 100), F(0), (33_333, 66_666, 100_000), (F(1000),) * 3), F(1, 100))


def test_long_run_simple_costs_is_informative():
    """k_n = 100,000 at epsilon 0.01 with simple-composition costs: OptDel is exactly 0; the
    fast path now brackets it (before: the interpolation fallback at h = 10 gave [0, 1])."""
    k, stops = 100_000, [10_000, 50_000, 100_000]
    steps = [("0.01", "0")] * k
    b = optdel(stops, steps, ["100", "500", "1000"])
    assert b.method == "homogeneous segments"
    assert b.lower == 0 and b.upper < F(1, 10**300)


def test_cli_says_when_a_bound_is_uninformative(tmp_path, capsys):
    """Heterogeneous steps (0.01 and 0.02) with a tiny --max-cells: the grid is coarsened far
    beyond the steps; the note says so and names the --max-cells of the exact lattice, and
    with that budget the bracket is tight and nothing is flagged."""
    steps = tmp_path / "steps.txt"
    steps.write_text("".join(f"{'0.01' if i % 3 else '0.02'},0\n" for i in range(300)),
                     encoding="utf-8")
    args = ["optdel", "--steps-file", str(steps), "--stops", "100,200,300",
            "--costs", "simple", "--max-cells", "100"]
    assert main(args) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "uninformative" in line]
    assert len(lines) == 1 and lines[0].startswith("note: ")
    assert "Thm. 15" in lines[0] and "uninformative at this grid" in lines[0]
    assert "coarser than the smallest step epsilon 0.01" in lines[0]
    assert "rounded to the grid" not in out
    need = int(lines[0].split("--max-cells ")[1].split()[0])
    assert need > 100
    assert main([*args, "--json"]) == 0
    note = json.loads(capsys.readouterr().out)["uninformative"]
    assert "thm15" in note["bounds"] and note["max_cells_needed"] == need
    assert F(note["grid"]) > F(1, 100) and note["message"] in lines[0]
    # the advice works: with that budget the exact lattice runs and nothing is flagged
    args[-1] = str(need)
    assert main([*args, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["uninformative"] is None
    assert out["optdel_thm15"]["method"] == "lattice"
    assert F(out["optdel_thm15"]["upper"]) < F(1, 10**300)
    assert main(args) == 0
    assert "uninformative" not in capsys.readouterr().out


def test_cli_flags_a_forced_coarse_grid(tmp_path, capsys):
    steps = tmp_path / "steps.txt"
    steps.write_text("0.1,0\n0.05,0\n0.2,0\n0.15,0\n", encoding="utf-8")
    assert main(["optdel", "--steps-file", str(steps), "--stops", "2,4", "--costs", "0.1,0.2",
                 "--grid", "1"]) == 0
    out = capsys.readouterr().out
    assert "bounds are uninformative at this grid (h = 1 is coarser than the smallest step " \
           "epsilon 0.05)" in out
    assert "no --grid" in out
    assert main(["optdel", "--steps-file", str(steps), "--stops", "2,4", "--costs",
                 "0.1,0.2"]) == 0
    assert "uninformative" not in capsys.readouterr().out


def test_cli_a_trivial_exact_bound_is_not_blamed_on_the_grid(capsys):
    """Eq. (4) >= 1 in closed form (no rounding): the note says the costs are too small and
    suggests no --max-cells; Thm. 15 (< 1) is not flagged."""
    assert main(["optdel", "--epsilon", "1", "--delta", "0.01", "--k", "100", "--stops",
                 "50,100", "--costs", "0.5,1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    note = out["uninformative"]
    assert F(out["lemma11_eq4"]["upper"]) >= 1 > F(out["optdel_thm15"]["upper"])
    assert note["bounds"] == ["lemma11"] and note["max_cells_needed"] is None
    assert "without any rounding" in note["message"] and "too small" in note["message"]
