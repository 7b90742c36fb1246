"""Goodness of fit between what a mechanism's ``release()`` draws and the exact (or
high-precision) distribution that its ODP check uses.

The exact checks in ``test_ptr.py``, ``test_erm.py``, ``test_mechanisms_basic.py`` and
``test_iterative.py`` decide the declared guarantee on a *model* of the output distribution.
These helpers tie ``release()`` to that model: sample it many times with a seeded (insecure)
:class:`odp.SeededRandom`, and compare the frequencies with the model by a chi-square test.
With the sample sizes used, a noise scale off by a factor 4 gives p-values far below 10⁻¹⁰,
while the correct code passes at the fixed seed with p > 10⁻³.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Hashable, Iterable, Sequence

import mpmath
from scipy import stats

from odp.samplers import discrete_laplace_tail

#: a model outcome that lumps every value outside a window
LOW, HIGH = "<", ">"


def discrete_laplace_pmf(scale: Any, lo: int, hi: int) -> dict[Hashable, Any]:
    """``P(Z = z)`` for ``lo ≤ z ≤ hi`` and the two tails (``LOW``, ``HIGH``) of the discrete
    Laplace law ``P(z) ∝ exp(−|z|/scale)`` of :func:`odp.samplers.discrete_laplace`, in mpmath
    (``scale`` a Fraction or number).  Requires ``lo ≤ 0 ≤ hi``."""
    scale = mpmath.mpf(scale.numerator) / scale.denominator if hasattr(scale, "numerator") \
        else mpmath.mpf(scale)
    r = mpmath.exp(-1 / scale)
    c = (1 - r) / (1 + r)
    out: dict[Hashable, Any] = {z: c * r ** abs(z) for z in range(lo, hi + 1)}
    out[LOW] = discrete_laplace_tail(1 - lo, r)  # P(Z ≤ lo − 1) = P(Z ≥ 1 − lo)
    out[HIGH] = discrete_laplace_tail(hi + 1, r)
    return out


def clamp(z: int, lo: int, hi: int) -> Hashable:
    """``z`` as an outcome of :func:`discrete_laplace_pmf` (tails lumped)."""
    return LOW if z < lo else HIGH if z > hi else z


def chi_square_pvalue(samples: Iterable[Hashable], model: dict[Hashable, Any],
                      order: Sequence[Hashable] | None = None, *,
                      min_expected: float = 5.0) -> float:
    """p-value of Pearson's chi-square test of ``samples`` against the probabilities ``model``.

    Outcomes are taken in ``order`` (default: the model's key order) and adjacent ones are
    pooled until each bin expects at least ``min_expected`` samples; the model's missing mass
    (if its probabilities sum to less than 1) is one more bin.  A sample outside the model's
    outcomes, or of probability 0, gives p = 0."""
    counts = Counter(samples)
    n = sum(counts.values())
    keys = list(order if order is not None else model)
    if any(o not in model or model[o] <= 0 for o in counts):
        return 0.0
    observed: list[float] = []
    expected: list[float] = []
    run_obs, run_exp = 0.0, 0.0
    for key in keys:
        run_obs += counts.get(key, 0)
        run_exp += float(model[key]) * n
        if run_exp >= min_expected:
            observed.append(run_obs)
            expected.append(run_exp)
            run_obs, run_exp = 0.0, 0.0
    rest = n * (1 - float(sum(model[k] for k in keys)))
    run_exp += max(rest, 0.0)
    if run_exp > 0 or run_obs > 0:
        if run_exp >= min_expected or not expected:
            observed.append(run_obs)
            expected.append(run_exp)
        else:  # too small a bin: pool it into the last one
            observed[-1] += run_obs
            expected[-1] += run_exp
    assert len(expected) >= 2, "the model puts almost all its mass on one bin: no test"
    scale = sum(observed) / sum(expected)  # rounding of the float sums only
    return float(stats.chisquare(observed, [e * scale for e in expected]).pvalue)


def discrete_gaussian_pmf(sigma2: Any) -> Any:
    """``z ↦ P(Z = z)`` for the discrete Gaussian ``P(z) ∝ exp(−z²/(2σ²))`` of
    :func:`odp.samplers.discrete_gaussian`, in mpmath (normaliser summed over ``|z| ≤ 60σ + 60``,
    the omitted mass below ``e^{−1800}``)."""
    s2 = mpmath.mpf(sigma2.numerator) / sigma2.denominator if hasattr(sigma2, "numerator") \
        else mpmath.mpf(sigma2)
    reach = int(60 * mpmath.sqrt(s2)) + 60
    norm = 1 + 2 * mpmath.fsum(mpmath.exp(-mpmath.mpf(z) ** 2 / (2 * s2))
                               for z in range(1, reach + 1))
    return lambda z: mpmath.exp(-mpmath.mpf(z) ** 2 / (2 * s2)) / norm


def clamped_law(pmf: Any, center: int, lo: int, hi: int, reach: int) -> dict[int, Any]:
    """The law of ``clamp(center + Z, lo, hi)`` for a symmetric integer noise ``Z`` with
    ``pmf``: interior points ``pmf(y − center)``, the ends ``P(center + Z ≤ lo)`` and
    ``P(center + Z ≥ hi)``, the tails summed up to ``|z| ≤ reach`` (callers pick ``reach`` so
    that the omitted mass is negligible)."""
    out = {y: pmf(y - center) for y in range(lo + 1, hi)}
    out[lo] = mpmath.fsum(pmf(z) for z in range(-reach, lo - center + 1))
    out[hi] = mpmath.fsum(pmf(z) for z in range(hi - center, reach + 1))
    return out


def binomial_pvalue(hits: int, n: int, p: Any) -> float:
    """Two-sided exact binomial test of ``hits`` successes in ``n`` trials with probability
    ``p`` (e.g. how often a release lands on a window's edge)."""
    return float(stats.binomtest(hits, n, float(p)).pvalue)
