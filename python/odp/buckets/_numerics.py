"""Floating-point helpers with explicit error bounds, shared by the privacy-bucket modules.

Every quantity that ends up in a bound is computed together with a bound on its error.  The
constants below state what we assume about the floating-point functions we call; the tests
(``tests/test_buckets_numerics.py``) check each assumption against mpmath with a wide margin.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

#: Unit roundoff of IEEE double precision (2**-53).
U = 2.0**-53

#: Assumed accuracy of ``scipy.special.log_ndtr``: its absolute error is at most
#: ``LOG_NDTR_ULPS * U * max(1, |log Phi(z)|)`` (a few ulps of the log; checked in the tests).
LOG_NDTR_ULPS = 16.0

#: Assumed accuracy of ``exp``, ``expm1``, ``log`` and ``log1p``: a few ulps (relative).
#:
#: ``scipy.special.ndtr`` is *not* that accurate in relative terms in the lower tail (measured
#: with mpmath, scipy 1.17.1: 40 ulps near x = -4.95, 144 near -9.68, 573 near -19.8, about 2200
#: near -37), but it is used only in :func:`normal_interval_log`'s branch for intervals across 0,
#: where two values ``<= 1/2`` are added and the sum subtracted from 1: there only its
#: *absolute* error counts, measured at most ``1.10 * 2**-53`` on 200,001 points of
#: ``[-38.4, 0]`` (worst near x = -1.19).  That branch's bound
#: ``ELEMENTARY_ULPS * U * (t + 1) / (1 - t) + 2U`` (``t`` the sum of the two tails) covers an
#: absolute error of up to ``2.26 * 2**-53`` per ``ndtr`` value plus the rounding of the sum and
#: of ``log1p`` (``4(1 - t)|ln(1 - t)| <= 4/e``).
ELEMENTARY_ULPS = 4.0


def normal_interval_log(z_lo, z_hi) -> tuple[np.ndarray, np.ndarray]:
    """``log P[z_lo < Z <= z_hi]`` for a standard normal ``Z``, with an absolute error bound.

    Returns ``(log_mass, err)`` with ``|computed - exact| <= err`` elementwise (so the mass
    itself has relative error at most about ``err``), assuming :data:`LOG_NDTR_ULPS`.
    Intervals wholly in one tail are computed from ``log_ndtr`` on that side (no cancellation
    against 1); intervals across 0 from ``1 - Phi(z_lo) - Phi(-z_hi)``.  ``z_lo`` may be
    ``-inf`` and ``z_hi`` ``+inf``.  Arguments are assumed exact (callers add the effect of
    errors in ``z`` themselves, see :func:`normal_edge_sensitivity`).
    """
    z_lo = np.asarray(z_lo, dtype=float)
    z_hi = np.asarray(z_hi, dtype=float)
    shape = np.broadcast(z_lo, z_hi).shape
    z_lo, z_hi = np.broadcast_to(z_lo, shape), np.broadcast_to(z_hi, shape)
    log_mass = np.full(shape, -np.inf)
    err = np.zeros(shape)
    left = z_hi <= 0
    right = (z_lo >= 0) & ~left
    mid = ~left & ~right
    for sel, lo, hi in ((left, z_lo, z_hi), (right, -z_hi, -z_lo)):
        if not sel.any():
            continue
        lo_s, hi_s = lo[sel], hi[sel]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            l_hi = special.log_ndtr(hi_s)
            l_lo = special.log_ndtr(lo_s)  # -inf for lo = -inf
            d = l_lo - l_hi  # <= 0
            frac = -np.expm1(d)  # P[lo < Z <= hi] / P[Z <= hi]
            lm = l_hi + np.log(frac)
            e_hi = LOG_NDTR_ULPS * U * np.maximum(1.0, np.abs(l_hi))
            e_lo = np.where(np.isfinite(l_lo), LOG_NDTR_ULPS * U * np.maximum(1.0, np.abs(l_lo)), 0.0)
            cond = np.where(np.isfinite(d), np.exp(d) / frac, 0.0)  # d log(frac) / d d
            e = e_hi + (e_hi + e_lo) * cond + 3 * ELEMENTARY_ULPS * U * (1.0 + np.abs(lm))
        log_mass[sel] = lm
        err[sel] = e
    if mid.any():
        lo_s, hi_s = z_lo[mid], z_hi[mid]
        tails = special.ndtr(lo_s) + special.ndtr(-hi_s)
        log_mass[mid] = np.log1p(-tails)
        err[mid] = ELEMENTARY_ULPS * U * (tails + 1.0) / (1.0 - tails) + 2 * U
    bad = ~np.isfinite(log_mass) | ~np.isfinite(err)
    if bad.any():  # empty or underflowing interval: mass reported as 0 (exp(-inf))
        log_mass[bad] = -np.inf
        err[bad] = 0.0
    return log_mass, err


def normal_edge_sensitivity(z_lo, z_hi, log_mass) -> np.ndarray:
    """``(phi(z_lo) + phi(z_hi)) / P[z_lo < Z <= z_hi]``: how much the log-mass moves per unit of
    error in the edges (multiply by the edge error to get an error in the log-mass)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        log_phi = lambda z: np.where(np.isfinite(z), -0.5 * z * z - 0.5 * np.log(2 * np.pi), -np.inf)
        s = np.exp(log_phi(z_lo) - log_mass) + np.exp(log_phi(z_hi) - log_mass)
    return np.where(np.isfinite(s), s, np.inf)


#: See :func:`split_error`.
ABS_REFERENCE_DELTA = 1e-12


def split_error(values: np.ndarray, err: np.ndarray) -> tuple[float, float]:
    """Express elementwise error bounds ``err`` as ``rel * values + abs`` (``abs`` in ℓ1).

    Elements whose ratio ``err/value`` is at most a threshold ``t`` are covered by ``rel = t``;
    the others go into ``abs`` (the sum of their errors).  A relative error widens a bound on δ by
    ``rel * δ``, an absolute one by ``abs`` whatever δ is, so ``t`` minimises
    ``t + abs / ABS_REFERENCE_DELTA``: an error goes to ``abs`` only if that is harmless down to
    δ ≈ ``ABS_REFERENCE_DELTA`` (or if its element is 0).
    """
    rel, absolute, _ = split_error_weighted(values, err, None)
    return rel, absolute


def split_error_weighted(values: np.ndarray, err: np.ndarray, weights: np.ndarray | None
                         ) -> tuple[float, float, float]:
    """:func:`split_error`, and the *weighted* ℓ1 norm ``Σ_abs err_j · weights_j`` of the same
    absolute part (``weights`` >= 0, one per element; ``None``: the third value is ``inf``).
    The weighted sum is rounded up (``(1 + 4 n u)``; an infinite weight of an element in the
    absolute part makes it ``inf``)."""
    values = np.asarray(values, dtype=float).ravel()
    err = np.asarray(err, dtype=float).ravel()
    keep = err > 0
    if not keep.any():
        return 0.0, 0.0, 0.0
    w = None if weights is None else np.asarray(weights, dtype=float).ravel()[keep]
    values, err = values[keep], err[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(values > 0, err / values, np.inf)
    order = np.argsort(ratio)
    ratio, err = ratio[order], err[order]
    if w is not None:
        w = w[order]
    above = np.concatenate((np.cumsum(err[::-1])[::-1][1:], [0.0]))  # errors above candidate j
    cost = np.where(np.isfinite(ratio), ratio, np.inf) + above / ABS_REFERENCE_DELTA
    best_all_abs = float(err.sum()) / ABS_REFERENCE_DELTA
    j = int(np.argmin(cost))
    grow = 1 + 4 * U * err.size

    def weighted(first: int) -> float:
        if w is None:
            return math.inf
        with np.errstate(invalid="ignore", over="ignore"):
            out = float((err[first:] * w[first:]).sum())
        return out * grow if out == out else math.inf

    if not cost[j] < best_all_abs:  # everything absolute
        return 0.0, best_all_abs * grow, weighted(0)
    return float(ratio[j]), float(above[j]) * grow, weighted(j + 1)


#: Cramér's constant: ``|He_n(x)| exp(-x²/4) <= CRAMER_K * sqrt(n!)`` for the probabilists'
#: Hermite polynomials, hence ``|phi^(n)(x)| <= CRAMER_K sqrt(n!) exp(-x²/4) / sqrt(2 pi)``.
CRAMER_K = 1.086435

_GL_NODES = 8
_GL_X, _GL_W = np.polynomial.legendre.leggauss(_GL_NODES)


def _gl_constant(n: int) -> float:
    """``(n!)^4 / ((2n+1) ((2n)!)^3)``: Gauss–Legendre error ``= c (b-a)^(2n+1) f^(2n)(xi)``."""
    return math.factorial(n) ** 4 / ((2 * n + 1) * math.factorial(2 * n) ** 3)


def gaussian_excess(z_hi: np.ndarray, dz_hi: np.ndarray, *, width: float, mu: float, h: float):
    """``D = ∫_0^width phi(z_hi - v) expm1(mu v) dv`` (with ``mu * width = h``), and a bound on
    its absolute error.

    ``D`` is the A-mass-weighted excess ``Σ (e^{ih - L} - 1) P_A`` of a Gaussian-loss bucket whose
    top is ``z_hi`` (in standard-normal units): the bucket's scaled B-mass minus its A-mass.
    Computing it as a difference of CDF differences would cancel badly for narrow buckets; the
    integrand here is non-negative and smooth, so an 8-point Gauss–Legendre rule is accurate to
    a few ulps, and its truncation error is bounded rigorously through Leibniz's rule and
    Cramér's inequality (``dz_hi`` bounds the error of the computed ``z_hi``).
    """
    z_hi = np.asarray(z_hi, dtype=float)[:, None]
    v = width * (1.0 + _GL_X) / 2.0  # nodes in [0, width]
    y = z_hi - v
    log_phi = -0.5 * y * y - 0.5 * math.log(2 * math.pi)
    with np.errstate(under="ignore"):
        vals = np.exp(log_phi) * np.expm1(mu * v)
        d = (vals * (_GL_W * width / 2.0)).sum(axis=1)
    z = z_hi[:, 0]
    # rounding: phi's argument is off by dz + u(|z|+width); exp, expm1 a few ulps each
    rel_round = (np.asarray(dz_hi) + 2 * U * (np.abs(z) + width)) * (np.abs(z) + width + 1) + 12 * U
    # truncation: Gauss–Legendre remainder c_n width^(2n+1) max|f^(2n)|, with f = phi(z_hi - v)
    # expm1(mu v).  Leibniz: |d^j expm1(mu v)| <= mu^j e^h (j >= 1; <= expm1(h) for j = 0) and
    # Cramér: |phi^(m)(y)| <= K sqrt(m!) e^{-y^2/4} / sqrt(2 pi).
    n2 = 2 * _GL_NODES
    lo_y, hi_y = z - width, z
    y_near0 = np.clip(0.0, lo_y, hi_y)
    log_gauss = -(y_near0**2) / 4 + math.log(CRAMER_K) - 0.5 * math.log(2 * math.pi)
    leibniz = math.expm1(h) * math.sqrt(math.factorial(n2)) + sum(
        math.comb(n2, j) * mu**j * math.exp(h) * math.sqrt(math.factorial(n2 - j))
        for j in range(1, n2 + 1)
    )
    log_c = math.log(_gl_constant(_GL_NODES)) + (n2 + 1) * math.log(width) + math.log(leibniz)
    with np.errstate(over="ignore", under="ignore"):
        trunc = np.exp(log_c + log_gauss)
    err = d * rel_round + trunc
    return d, err
