"""Optimal homogeneous composition (Kairouz, Oh, Viswanath 2015, Thm. 3.3) and Table 1 of
Hartmann et al. 2022.

**KOV Thm. 3.3.**  For any ``epsilon0 >= 0`` and ``delta0 in [0, 1)`` the class of
``(epsilon0, delta0)``-DP mechanisms satisfies, under ``k``-fold adaptive composition,
``((k - 2i) epsilon0, 1 - (1 - delta0)^k (1 - delta_i))``-DP for every ``i = 0..floor(k/2)``,
with

    delta_i = sum_{l=0}^{i-1} C(k, l) (e^{(k-l) eps0} - e^{(k-2i+l) eps0}) / (1 + e^{eps0})^k,

and no smaller delta is possible at these epsilons.  :func:`kov_delta` returns a rigorous
rational bracket of that delta (:func:`kov_delta_exp` the exact value when ``w = e^{eps0}`` is
given as a rational).

**Table 1 (Hartmann et al. 2022, App. A).**  For 0.1-DP mechanisms and each target ``delta``, the
smallest number ``I`` of compositions for which KOV gives a *smaller* epsilon than simple
composition (``I * 0.1``) at a delta not above the target.  Smaller epsilons come in steps of
``2 * 0.1`` (``i >= 1``; the paper: "i in their Thm. 3.3 needs to be at least 1"), and
``delta_i`` grows with ``i``, so ``I = min { k >= 2 : delta_1(k) <= delta }`` with
``delta_1(k) = (e^{k eps0} - e^{(k-2) eps0}) / (1 + e^{eps0})^k`` (pure DP, ``delta0 = 0``).

Computed with rigorous brackets this gives ``16 19 23 26 30 34 37 41`` for
``delta = 1e-5 ... 1e-12``; the paper prints ``17 20 24 27 31 35 38 42``: every entry exactly one
larger.  The difference is a counting convention, not a numerical effect: since
``delta_1(k - 1) = (1 + e^{-eps0}) delta_1(k)`` the paper's row is reproduced *exactly* by
``min { I : delta_1(I - 1) <= delta }``, i.e. by evaluating Thm. 3.3 with ``k = I - 1``
compositions (as when ``I`` counts the mechanisms including one that is not composed, or a loop
reports the length after one more iteration).  Our row agrees with the optimal composition of the
exact privacy-loss distribution of k-fold randomized response (:func:`table1` cross-checks every
entry with :func:`odp.optdel.optdel`) and with the peer library dp-accounting
(``advanced_composition``, measured in ``bench/optdel.py``).  The convention does not change the
paper's point (advanced composition needs tens of mechanisms before it beats simple composition).
Any ``delta > 0`` admits *some* improvement if one allows the continuous optimal curve
(``epsilon`` slightly below ``I * 0.1`` already at ``I = 1``), which is why the table is defined
on KOV's grid of epsilons.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Any

from .budget import parse_delta, parse_epsilon, parse_positive_int, to_fraction
from .errors import InvalidParameter
from .rational import exp_bracket, log_bracket, magnitude

__all__ = [
    "PAPER_TABLE1",
    "TABLE1_DELTAS",
    "TABLE1_NOTE",
    "Table1Row",
    "kov_delta",
    "kov_delta_exp",
    "delta1_bracket",
    "kov_epsilon",
    "table1",
    "table1_estimate",
]

#: Table 1 of Hartmann et al. 2022 (App. A): delta -> I, for 0.1-DP mechanisms.
PAPER_TABLE1: dict[Fraction, int] = {
    Fraction(1, 10**5): 17,
    Fraction(1, 10**6): 20,
    Fraction(1, 10**7): 24,
    Fraction(1, 10**8): 27,
    Fraction(1, 10**9): 31,
    Fraction(1, 10**10): 35,
    Fraction(1, 10**11): 38,
    Fraction(1, 10**12): 42,
}
TABLE1_DELTAS = tuple(PAPER_TABLE1)

TABLE1_NOTE = (
    "I = min{k >= 2 : delta_1(k) <= delta}, delta_1(k) = (e^(k eps0) - e^((k-2) eps0)) / "
    "(1 + e^eps0)^k (KOV Thm. 3.3 with i = 1, the smallest improvement over simple composition). "
    "In the paper's setting (eps0 = 0.1, delta = 1e-5..1e-12) the paper's row is exactly one "
    "larger in every column; it equals min{I : delta_1(I-1) <= "
    "delta}, i.e. Thm. 3.3 evaluated with k = I - 1 compositions (delta_1(k-1) = (1 + e^-eps0) "
    "delta_1(k)). Both rows are printed; ours is cross-checked against the exact privacy-loss "
    "distribution of k-fold randomized response."
)


def _check_k_i(k: Any, i: Any) -> tuple[int, int]:
    """``(k, i)`` as ints: ``k >= 1`` compositions and ``0 <= i <= floor(k/2)``."""
    k = parse_positive_int(k, name="k (the number of compositions)")
    if isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i <= k // 2:
        raise InvalidParameter(f"i must be an integer in 0..floor(k/2) = 0..{k // 2}, got {i!r}")
    return k, int(i)


def kov_delta_exp(k: int, w: Any, delta0: Any, i: int) -> Fraction:
    """Exact delta of KOV Thm. 3.3 at ``epsilon = (k - 2i) epsilon0`` for rational
    ``w = e^{epsilon0} >= 1``."""
    k, i = _check_k_i(k, i)
    w = to_fraction(w, name="w")
    if w < 1:
        raise InvalidParameter(f"w = e**epsilon0 must be >= 1, got {w}")
    d0 = parse_delta(delta0, name="delta0")
    s = sum((comb(k, l) * (w ** (k - l) - w ** (k - 2 * i + l)) for l in range(i)), Fraction(0))
    return 1 - (1 - d0) ** k * (1 - s / (1 + w) ** k)


def kov_delta(
    k: int, epsilon0: Any, delta0: Any, i: int, *, digits: int = 40
) -> tuple[Fraction, Fraction]:
    """Rigorous bracket ``(lower, upper)`` of the delta of KOV Thm. 3.3 at
    ``epsilon = (k - 2i) epsilon0``.

    Each summand ``C(k,l) w^{k-2i+l} (w^{2(i-l)} - 1) / (1+w)^k`` has a numerator increasing and
    a denominator increasing in ``w = e^{epsilon0}``; it is bracketed with ``w`` in
    :func:`odp.rational.exp_bracket` (numerator at one end, denominator at the other).
    """
    k, i = _check_k_i(k, i)
    e0 = parse_epsilon(epsilon0, name="epsilon0")
    d0 = parse_delta(delta0, name="delta0")
    w_lo, w_hi = exp_bracket(e0, digits=digits)

    def num(w: Fraction) -> Fraction:
        return sum(
            (comb(k, l) * w ** (k - 2 * i + l) * (w ** (2 * (i - l)) - 1) for l in range(i)),
            Fraction(0),
        )

    s_lo = num(w_lo) / (1 + w_hi) ** k
    s_hi = num(w_hi) / (1 + w_lo) ** k
    keep = (1 - d0) ** k
    return 1 - keep * (1 - s_lo), 1 - keep * (1 - s_hi)


def kov_epsilon(k: int, epsilon0: Any, delta0: Any, delta: Any) -> tuple[int, Fraction]:
    """The smallest epsilon of KOV Thm. 3.3 on its grid ``(k - 2i) epsilon0`` whose delta is
    certainly ``<= delta`` (rigorous upper bound); returns ``(i, epsilon)``.  Raises
    :class:`InvalidParameter` if even ``i = 0`` (simple composition) needs more delta."""
    e0 = parse_epsilon(epsilon0, name="epsilon0")
    target = parse_delta(delta)
    best = None
    for i in range(k // 2 + 1):
        if kov_delta(k, e0, delta0, i)[1] <= target:
            best = i
        else:
            break  # delta_i is increasing in i
    if best is None:
        raise InvalidParameter(
            f"delta = {float(target):.3g} is below 1 - (1 - delta0)^k: no epsilon achieves it"
        )
    return best, (k - 2 * best) * e0


def delta1_bracket(k: int, epsilon0: Any, *, digits: int = 40) -> tuple[Fraction, Fraction]:
    """Rigorous bracket of ``delta_1(k)`` (KOV Thm. 3.3, ``i = 1``, ``delta0 = 0``) in time
    independent of ``k``.

    With ``v = e^{-eps0}``: ``delta_1(k) = (e^{k eps0} - e^{(k-2) eps0}) / (1 + e^{eps0})^k
    = (1 - v) / (1 + v)^{k-1}`` (divide numerator and denominator by ``e^{k eps0}``).  Its
    logarithm ``ln(1 - v) - (k - 1) ln(1 + v)`` is bracketed with rational log brackets of ``v``'s
    own bracket (each term monotone in ``v``), then exponentiated with
    :func:`odp.rational.exp_bracket`.  ``delta_1`` is strictly decreasing in ``k`` (ratio
    ``1/(1 + v) < 1``), which :func:`table1` uses to find ``I`` without a scan."""
    lo_log, hi_log = _log_delta1(k, parse_epsilon(epsilon0, name="epsilon0"), digits)
    return exp_bracket(lo_log, digits=digits)[0], exp_bracket(hi_log, digits=digits)[1]


def _log_delta1(k: int, e0: Fraction, digits: int) -> tuple[Fraction, Fraction]:
    v_lo, v_hi = exp_bracket(-e0, digits=digits)
    v_hi = min(v_hi, Fraction(1))
    one_minus = (log_bracket(1 - v_hi, digits=digits)[0] if v_hi < 1 else None,
                 log_bracket(1 - v_lo, digits=digits)[1])
    one_plus = (log_bracket(1 + v_lo, digits=digits)[0], log_bracket(1 + v_hi, digits=digits)[1])
    if one_minus[0] is None:  # v may be 1 (eps0 tiny): no finite lower bound
        raise InvalidParameter(f"epsilon0 = {float(e0):.3g} is too small for Table 1")
    return one_minus[0] - (k - 1) * one_plus[1], one_minus[1] - (k - 1) * one_plus[0]


def _estimate_k(e0: Fraction, target: Fraction) -> float:
    """Float estimate of ``min {k : delta_1(k) <= target}`` (``inf`` if astronomically large)."""
    if e0 >= 700:  # e^-eps0 underflows a float (and float(eps0) may overflow): no estimate
        return math.inf
    e = float(e0)
    ln_one_plus = math.log1p(math.exp(-e))  # ln(1 + v), v = e^{-eps0}
    if e <= 0 or ln_one_plus <= 0:
        return math.inf
    ln_target = math.log(target.numerator) - math.log(target.denominator)  # no underflow
    return max(2.0, 1 + (math.log(-math.expm1(-e)) - ln_target) / ln_one_plus)


def _first_k(e0: Fraction, target: Fraction, shift: int, k_max: int) -> int:
    """min { I >= 2 + shift : delta_1(I - shift) <= target }, decided with rigorous brackets.

    ``delta_1`` is strictly decreasing in ``k`` (:func:`delta1_bracket`), so the minimum is found
    from the closed-form estimate ``k ~ 1 + ln((1 - v)/target) / ln(1 + v)`` by stepping down while
    ``delta_1(k - 1) <= target`` and up while ``delta_1(k) > target``: a handful of O(1) bracket
    evaluations instead of a scan of ``k`` (whose exact powers cost O(k^2) each)."""
    def at_most(k: int) -> bool:
        digits = 40
        while True:
            ln_target = log_bracket(target, digits=digits)
            lo, hi = _log_delta1(k, e0, digits)
            if hi <= ln_target[0]:
                return True
            if lo > ln_target[1]:
                return False
            digits *= 2  # pragma: no cover - the bracket straddles the target
            if digits > 2000:  # pragma: no cover
                raise InvalidParameter(f"cannot decide delta_1({k}) <= {target}")

    estimate = _estimate_k(e0, target)
    if estimate > k_max - shift and not at_most(k_max - shift):
        raise InvalidParameter(
            f"no I <= {k_max} reaches delta = {float(target):.3g} "
            + (f"(about {estimate:.3g} " if math.isfinite(estimate) else "(astronomically many ")
            + "compositions are needed; raise k_max, --k-max on the command line)")
    k = max(2, min(math.ceil(estimate), k_max - shift) if math.isfinite(estimate) else
            k_max - shift)
    while k > 2 and at_most(k - 1):
        k -= 1
    while not at_most(k):  # at most a step or two: the estimate is accurate
        k += 1
    return k + shift


@dataclass(frozen=True)
class Table1Row:
    """One column of Table 1: our ``I``, the paper's, and the convention that reproduces it."""

    delta: Fraction
    I: int
    I_paper: int | None
    I_paper_convention: int
    delta_at_I: tuple[Fraction, Fraction]
    delta_at_I_minus_1: tuple[Fraction, Fraction]
    pld_check: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "delta": float(self.delta),
            "I": self.I,
            "I_paper": self.I_paper,
            "I_paper_convention_k_eq_I_minus_1": self.I_paper_convention,
            "delta_1_at_I": float(self.delta_at_I[1]),
            "delta_1_at_I_minus_1": float(self.delta_at_I_minus_1[0]),
            "pld_check": self.pld_check,
        }


#: Cost model of :func:`table1` (2-core machine, 2024): the PLD cross-check of a row with ``I``
#: compositions visits about ``I**2`` lattice cells twice, at about 1e-7 s per cell.
SECONDS_PER_CROSS_CHECK_CELL = 2e-7


def table1_estimate(epsilon0: Any = "0.1", deltas: Sequence[Any] = TABLE1_DELTAS, *,
                    cross_check: bool = True, k_max: int = 10_000):
    """Estimated time and memory of :func:`table1` (an :class:`odp.limits.Estimate`)."""
    from .limits import Estimate

    e0 = parse_epsilon(epsilon0, name="epsilon0")
    seconds, largest = 0.0, 0.0
    for d in deltas:
        target = parse_delta(d)
        if e0 <= 0 or target <= 0:
            continue
        I = min(_estimate_k(e0, target), k_max + 1)
        largest = max(largest, I)
        seconds += 0.002 + (2 * SECONDS_PER_CROSS_CHECK_CELL * I * I if cross_check else 0.0)
    return Estimate(f"Table 1 for epsilon0 = {magnitude(e0)}", seconds, 400 * largest + 2**20,
                    knobs=f"up to {largest:.0f} compositions per row")


def table1(
    epsilon0: Any = "0.1",
    deltas: Sequence[Any] = TABLE1_DELTAS,
    *,
    cross_check: bool = True,
    k_max: int = 10_000,
    limits: Any = None,
    progress: Any = None,
) -> list[Table1Row]:
    """Table 1 of Hartmann et al. 2022 recomputed (see the module docstring for the conventions).

    With ``cross_check`` every ``I`` is verified against the optimal composition of the exact
    privacy-loss distribution of k-fold randomized response (:func:`odp.optdel.optdel` with a
    single stopping point): its bracket at ``k = I`` must be ``<= delta`` and at ``k = I - 1``
    (epsilon ``(I - 3) epsilon0``) ``> delta``.

    The work is estimated first (:func:`table1_estimate`) and refused above ``limits``
    (:class:`odp.limits.Limits`; default 4 GiB, 600 s); ``progress`` reports one step per
    row (:mod:`odp.progress`).
    """
    from .limits import Limits
    from .progress import Reporter

    e0 = parse_epsilon(epsilon0, name="epsilon0")
    if e0 <= 0:
        raise InvalidParameter("epsilon0 must be > 0 for Table 1")
    k_max = parse_positive_int(k_max, name="k_max")
    if k_max < 3:
        raise InvalidParameter(f"k_max must be >= 3, got {k_max}")
    targets = []
    for d in deltas:
        target = parse_delta(d)
        if target <= 0:
            raise InvalidParameter("Table 1 targets must be > 0")
        targets.append(target)
    (limits if limits is not None else Limits()).check(
        table1_estimate(e0, targets, cross_check=cross_check, k_max=k_max))
    rows = []
    with Reporter(progress, len(targets), "Table 1", unit="row") as bar:
        for target in targets:
            rows.append(_row(e0, target, cross_check, k_max))
            bar.advance()
    return rows


def _row(e0: Fraction, target: Fraction, cross_check: bool, k_max: int) -> Table1Row:
    I = _first_k(e0, target, 0, k_max)
    I_conv = _first_k(e0, target, 1, k_max + 1)
    at_I = delta1_bracket(I, e0)
    at_prev = delta1_bracket(I - 1, e0) if I - 1 >= 2 else (Fraction(1), Fraction(1))
    check: dict[str, Any] = {}
    if cross_check:
        from .optdel import optdel

        b = optdel((I,), [(e0, 0)] * I, [(I - 2) * e0])
        check["pld_delta_at_I"] = [float(b.lower), float(b.upper)]
        check["pld_at_I_ok"] = bool(
            b.upper <= target and b.lower <= at_I[1] and at_I[0] <= b.upper
        )
        undecided = b.lower <= target < b.upper and b.lower <= at_I[1] and at_I[0] <= b.upper
        if I - 1 >= 2:
            b2 = optdel((I - 1,), [(e0, 0)] * (I - 1), [(I - 3) * e0])
            check["pld_delta_at_I_minus_1"] = [float(b2.lower), float(b2.upper)]
            check["pld_at_I_minus_1_ok"] = bool(b2.lower > target)
            if b2.lower <= target < b2.upper:
                undecided, b = True, b2
        if undecided:  # the float lattice cannot resolve delta this small: no verdict either way
            raise InvalidParameter(
                f"the PLD cross-check cannot decide delta = {magnitude(target)} at epsilon0 = "
                f"{magnitude(e0)}: its rigorous bracket [{float(b.lower):.3g}, "
                f"{float(b.upper):.3g}] contains delta (double-precision lattice); run without "
                "the cross-check (--no-check) for the unchecked KOV row")
    paper = PAPER_TABLE1.get(target) if e0 == Fraction(1, 10) else None
    return Table1Row(target, I, paper, I_conv, at_I, at_prev, check)
