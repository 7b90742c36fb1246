"""Is a data loader's sampling what the accountant assumes?  A test on the batch sizes.

DP-SGD's accounting (:mod:`odp.buckets.subsampled`, :mod:`odp.rdp`) assumes *Poisson sampling*:
at every step each of the ``n`` records is in the batch independently with probability ``q``.
Then the batch sizes ``b_1, …, b_T`` are independent ``Binomial(n, q)``.  A loader that shuffles
and cuts fixed-size batches, or samples at another rate than the one accounted (e.g. a rate
computed from a rounded number of batches, reported at github.com/pytorch/opacus/issues/813),
breaks that assumption, and the ε reported for it is not a guarantee.

:func:`check_poisson_batches` tests the hypothesis H0 "the sizes are i.i.d. Binomial(n, q)" with
three one-sided tests, each at level ``α/4`` (so the false-alarm rate — the probability of
rejecting H0 when it is true — is at most ``α``, by the union bound):

* **rate, both sides** — ``S = Σ b_i`` is ``Binomial(nT, q)`` under H0.  Reject if
  ``S ≥ nT·a`` for an ``a > q`` with ``nT·KL(a ‖ q) ≥ ln(4/α)``, or symmetrically below:
  Chernoff's bound ``P(S ≥ nTa) ≤ e^{−nT·KL(a‖q)}`` (``KL`` the Bernoulli relative entropy)
  makes each side's false-alarm rate at most ``α/4``.
* **spread** — ``C = #{i : |b_i − nq| ≤ w}`` with ``w = ½·sd``, ``sd = sqrt(nq(1−q))``, is
  ``Binomial(T, p0)`` under H0 with ``p0 = P(|b − nq| ≤ w)`` (computed from the binomial CDF and
  moved by a relative margin of 1e-9 to the safe side).  Reject if ``C`` is improbably *large*
  (Chernoff with ``p0``'s upper end): sizes too concentrated — fixed-size batches give
  ``C = T`` — or improbably *small* (with its lower end): sizes too spread out.

The rate test detects a relative rate error of about ``sqrt(2 ln(4/α)/(nTq))`` (e.g. 1 % for
``nTq = 6·10⁵`` at α = 10⁻⁶); the spread test flags fixed-size batches after about
``ln(4/α)/ln(1/p0) ≈ 17`` batches at α = 10⁻⁶ (``p0 ≈ 0.38`` for large batches).

The test reads the batch sizes, which depend on the private data only through ``n`` (the data
set's size, private under add/remove neighbours): it is a check the data holder runs on their
own loader; its outcome is not a DP release and should not be published as one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..errors import InvalidParameter
from ..rdp import check_rate

__all__ = ["SamplingCheck", "check_poisson_batches", "DEFAULT_FALSE_ALARM"]

#: The default false-alarm rate α.
DEFAULT_FALSE_ALARM = 1e-6

#: The relative margin by which the computed ``p0`` is moved to the safe side of each test.
P0_MARGIN = 1e-9


def _kl(a: float, q: float) -> float:
    """Bernoulli relative entropy ``KL(a ‖ q)`` (``0 <= a <= 1``, ``0 < q < 1``)."""
    out = 0.0
    if a > 0:
        out += a * math.log(a / q)
    if a < 1:
        out += (1 - a) * math.log((1 - a) / (1 - q))
    return max(out, 0.0)


def _chernoff_exponent(count: int, trials: int, p: float) -> float:
    """``trials·KL(count/trials ‖ p)``: ``−ln`` of Chernoff's bound on the tail of
    ``Binomial(trials, p)`` at ``count`` on the side away from the mean (0 at the mean)."""
    if not 0 < p < 1:
        return 0.0 if (p == 0 and count == 0) or (p == 1 and count == trials) else math.inf
    return trials * _kl(count / trials, p)


@dataclass(frozen=True)
class SamplingCheck:
    """What :func:`check_poisson_batches` found.  ``consistent``: H0 not rejected.
    ``reasons``: one sentence per test that rejected.  ``rate``: the rate the sizes show
    (``S/(nT)``) and ``rate_interval`` the rates the rate test does not reject (at ``α/4``
    each side).  ``tests``: each test's statistic, threshold and outcome."""

    consistent: bool
    false_alarm: float
    batches: int
    records: int
    sampling_rate: float
    rate: float
    rate_interval: tuple[float, float]
    reasons: tuple[str, ...] = ()
    tests: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.consistent

    def statement(self) -> str:
        head = (f"{self.batches} batches from {self.records} records: observed rate "
                f"{self.rate:.6g} (the rate test accepts [{self.rate_interval[0]:.6g}, "
                f"{self.rate_interval[1]:.6g}]), accounted rate {self.sampling_rate:.6g}")
        if self.consistent:
            return head + f"; consistent with Poisson sampling (false-alarm rate <= {self.false_alarm:g})"
        return head + "; NOT Poisson sampling at the accounted rate: " + "; ".join(self.reasons)


def _rate_bounds(total: int, trials: int, threshold: float) -> tuple[float, float]:
    """The rates ``q`` at which ``total`` successes of ``trials`` are not rejected by the
    Chernoff test with exponent ``threshold`` (bisection on the monotone exponent)."""
    a = total / trials

    def side(lo: float, hi: float, rejects_at_lo: bool) -> float:
        for _ in range(200):
            mid = (lo + hi) / 2
            if (_chernoff_exponent(total, trials, mid) >= threshold) == rejects_at_lo:
                lo = mid
            else:
                hi = mid
        return hi if rejects_at_lo else lo

    low = side(0.0, a, True) if a > 0 else 0.0
    high = side(a, 1.0, False) if a < 1 else 1.0
    return low, high


def check_poisson_batches(batch_sizes: Iterable[int], records: int, sampling_rate: Any, *,
                          false_alarm: float = DEFAULT_FALSE_ALARM) -> SamplingCheck:
    """Test whether ``batch_sizes`` (one per step, as a loader produced them from ``records``
    records) are consistent with Poisson sampling at ``sampling_rate``; see the module
    docstring for the tests and their false-alarm rate (at most ``false_alarm``)."""
    sizes = list(batch_sizes)
    if not sizes:
        raise InvalidParameter("give the batch sizes of at least one step")
    for b in sizes:
        if isinstance(b, bool) or not isinstance(b, int) or b < 0:
            raise InvalidParameter(f"batch sizes are integers >= 0, got {b!r}")
    if isinstance(records, bool) or not isinstance(records, int) or records < 1:
        raise InvalidParameter(f"records must be an integer >= 1, got {records!r}")
    if max(sizes) > records:
        raise InvalidParameter(f"a batch of {max(sizes)} is larger than the {records} records")
    q = float(check_rate(sampling_rate))
    if not (isinstance(false_alarm, (int, float)) and 0 < false_alarm < 1):
        raise InvalidParameter(f"false_alarm must be in (0, 1), got {false_alarm!r}")
    T, n = len(sizes), records
    threshold = math.log(4 / false_alarm)
    reasons: list[str] = []
    tests: dict[str, Any] = {}

    # rate: S ~ Binomial(nT, q)
    total = sum(sizes)
    trials = n * T
    observed = total / trials
    rate_exp = _chernoff_exponent(total, trials, q) if q < 1 else (
        0.0 if total == trials else math.inf)
    rate_bad = rate_exp >= threshold
    interval = _rate_bounds(total, trials, threshold)
    tests["rate"] = {"statistic": total, "expected": q * trials, "exponent": rate_exp,
                     "threshold": threshold, "rejected": rate_bad}
    if rate_bad:
        side = "above" if observed > q else "below"
        reasons.append(f"the batches hold {total} records in all, {side} the {q * trials:.6g} "
                       f"expected (observed rate {observed:.6g}; Chernoff bound "
                       f"{math.exp(-rate_exp):.3g} < {false_alarm / 4:.3g})")

    # spread: C = #{|b - nq| <= w} ~ Binomial(T, p0)
    if q < 1:
        from scipy.stats import binom

        mean = n * q
        w = 0.5 * math.sqrt(n * q * (1 - q))
        lo_b, hi_b = math.ceil(mean - w), math.floor(mean + w)
        p0 = float(binom.cdf(hi_b, n, q) - binom.cdf(lo_b - 1, n, q)) if hi_b >= lo_b else 0.0
        p_hi = min(1.0, p0 * (1 + P0_MARGIN) + 1e-300)
        p_lo = max(0.0, p0 * (1 - P0_MARGIN))
        c = sum(1 for b in sizes if lo_b <= b <= hi_b)
        too_tight = c > T * p_hi and _chernoff_exponent(c, T, p_hi) >= threshold
        too_loose = c < T * p_lo and _chernoff_exponent(c, T, p_lo) >= threshold
        tests["spread"] = {"statistic": c, "window": [lo_b, hi_b], "p0": p0,
                           "expected": T * p0, "threshold": threshold,
                           "rejected": too_tight or too_loose}
        if too_tight:
            reasons.append(f"{c} of {T} batch sizes lie within half a standard deviation of "
                           f"{mean:.6g} (expected about {T * p0:.1f}): too concentrated for "
                           "Poisson sampling (fixed-size or shuffled batches?)")
        if too_loose:
            reasons.append(f"only {c} of {T} batch sizes lie within half a standard deviation of "
                           f"{mean:.6g} (expected about {T * p0:.1f}): too spread out for "
                           "Poisson sampling at one rate")
    return SamplingCheck(not reasons, false_alarm, T, n, q, observed, interval, tuple(reasons),
                         tests)
