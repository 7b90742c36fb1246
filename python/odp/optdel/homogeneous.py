r"""Homogeneous steps in closed form: Eq. (4) term by term, Thm. 15 segment by segment.

Paper 002, Sec. 5.2.  When every step is the same ``(epsilon, delta)`` (``w = e**epsilon``,
``q = w/(1+w)``), the up-count of the ``1,2``-only paths of Lemma C (:mod:`odp.optdel.exact`)
after ``m`` steps is binomial: ``Pr0(u) = (1-delta)**m * C(m, u) q**u (1-q)**(m-u)``, at loss
``(2u - m) epsilon``.  Two consequences:

**Eq. (4) is a closed form** (Murtagh-Vadhan's optimal composition of ``k`` homogeneous steps,
the sum behind Kairouz-Oh-Viswanath Thm. 3.3).  With ``s = (1-delta)**k`` and
``T(E) = sum_{u > (k + E/epsilon)/2} C(k,u) q**u (1-q)**(k-u) (1 - e**(E - (2u-k) epsilon))``
the optimal-composition delta of the prefix is ``(1 - s) + s T(E)``, and Eq. (4) is the sum of
these over the stops.  :func:`prefix_delta` evaluates it term by term in decimal arithmetic
with *directed* rounding (:mod:`decimal` ``ROUND_CEILING`` / ``ROUND_FLOOR``: every ``+ - * /``
is correctly rounded in the chosen direction), starting from ``C(k, u0)`` (an exact integer),
``w**u0`` and ``(1+w)**k`` (directed repeated squaring, ``w`` enclosed by
:func:`odp.rational.exp_bracket`) and the recurrence ``B(u+1) = B(u) (k-u)/(u+1) w``.  Every
term is non-negative, so the lower bound may drop the tail; the upper bound adds the geometric
tail bound ``B(u) rho/(1-rho)`` (``rho = (k-u) w/(u+1) < 1`` decreases in ``u``, and each
factor ``1 - e**(...)`` is ``<= 1``).  Cost: ``O(terms)`` per stop, milliseconds.

**Thm. 15 needs decisions only at stops.**  Between two stops ``a < b`` (``m = b - a`` steps)
the recursion of Lemma C unrolls to

    c_a(u) = (1 - (1-delta)**m) + sum_{j=0..m} K_m(j) g_b(u + j),
    K_m(j) = (1-delta)**m C(m, j) q**j (1-q)**(m-j),

one correlation per segment instead of ``m`` passes.  :func:`thm15_pass` computes it with
``numpy.correlate`` on directed floats: the kernel is computed in directed decimal arithmetic
and converted one ulp outwards; the correlation of non-negative floats is within relative
``gamma_n = n u/(1 - n u)`` (``u = 2**-53``, ``n = m + 1`` terms, any summation order;
Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., eq. (3.5)) plus at most
``n 2**-1075`` of underflow, and those are added (upper) or removed (lower) explicitly.  The
window and its sound fills are those of :mod:`odp.optdel.lattice` (Lemma D (i)).  Cost:
``O(sum over segments of width * m)`` multiply-adds in C, and ``O(width)`` memory.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ..floats import float_down, float_up
from ..rational import exp_bracket
from . import lattice
from .._compat import positional_deprecated

__all__ = ["is_homogeneous", "prefix_delta", "eq4_bound", "thm15_pass", "kernel"]

_PREC = 40  # decimal digits: far below the 20 significant digits that are reported
_UNIT = 2.0 ** -53  # unit roundoff of binary64
_TINY = 2.0 ** -1074  # smallest positive subnormal

_UP = decimal.Context(prec=_PREC, rounding=decimal.ROUND_CEILING, Emax=10**9, Emin=-(10**9))
_DN = decimal.Context(prec=_PREC, rounding=decimal.ROUND_FLOOR, Emax=10**9, Emin=-(10**9))


def is_homogeneous(epsilons: Sequence[Fraction], deltas: Sequence[Fraction]) -> bool:
    """All steps share one ``(epsilon, delta)`` (identity first: parsed runs share objects)."""
    e0, d0 = epsilons[0], deltas[0]
    return (all(e is e0 or e == e0 for e in epsilons)
            and all(d is d0 or d == d0 for d in deltas))


def _dec(x: Fraction, ctx: decimal.Context) -> decimal.Decimal:
    """``x`` rounded in ``ctx``'s direction."""
    return ctx.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))


def _pow(x: decimal.Decimal, n: int, ctx: decimal.Context) -> decimal.Decimal:
    """``x**n`` (``x >= 0``) by repeated squaring, every product rounded in ``ctx``'s direction
    (each intermediate is then a bound of the same side)."""
    result, base = decimal.Decimal(1), x
    while n:
        if n & 1:
            result = ctx.multiply(result, base)
        n >>= 1
        if n:
            base = ctx.multiply(base, base)
    return result


@lru_cache(maxsize=64)
def _w(epsilon: Fraction) -> tuple[decimal.Decimal, decimal.Decimal]:
    """``e**epsilon`` enclosed as decimals ``(lo, hi)``."""
    lo, hi = exp_bracket(epsilon, digits=_PREC + 5)
    return _dec(lo, _DN), _dec(hi, _UP)


@lru_cache(maxsize=256)
def _survive(delta: Fraction, m: int, up: bool) -> decimal.Decimal:
    """A bound of ``(1 - delta)**m`` (upper when ``up``)."""
    ctx = _UP if up else _DN
    return _pow(_dec(1 - delta, ctx), m, ctx)


def _binomial_start(k: int, u0: int, epsilon: Fraction, up: bool) -> decimal.Decimal:
    """A bound of ``C(k,u0) q**u0 (1-q)**(k-u0) = C(k,u0) w**u0 / (1+w)**k``."""
    w_lo, w_hi = _w(epsilon)
    if up:
        num = _UP.multiply(decimal.Decimal(math.comb(k, u0)), _pow(w_hi, u0, _UP))
        return _UP.divide(num, _pow(_DN.add(1, w_lo), k, _DN))
    num = _DN.multiply(decimal.Decimal(math.comb(k, u0)), _pow(w_lo, u0, _DN))
    return _DN.divide(num, _pow(_UP.add(1, w_hi), k, _UP))


def _tail_sum(k: int, epsilon: Fraction, E: Fraction, up: bool) -> decimal.Decimal:
    """A bound of ``T(E)`` (module docstring): upper when ``up``, else lower."""
    if epsilon == 0:
        return decimal.Decimal(0)  # every loss is 0 <= E: no term
    u0 = math.floor((k + E / epsilon) / 2) + 1  # first u with (2u - k) epsilon > E
    if u0 > k:
        return decimal.Decimal(0)
    ctx = _UP if up else _DN
    w_lo, w_hi = _w(epsilon)
    w = w_hi if up else w_lo
    # e**(E - (2u - k) eps) at u0, then times e**(-2 eps) per step; the factor 1 - e**x is
    # bounded above with a lower bound of e**x and below with an upper bound
    x0 = E - (2 * u0 - k) * epsilon
    e_lo, e_hi = exp_bracket(x0, digits=_PREC + 5)
    v_lo, v_hi = exp_bracket(-2 * epsilon, digits=_PREC + 5)
    ex = _dec(e_lo, _DN) if up else _dec(e_hi, _UP)
    v = _dec(v_lo, _DN) if up else _dec(v_hi, _UP)
    inv = _DN if up else _UP  # the direction that bounds e**x on the needed side
    b = _binomial_start(k, u0, epsilon, up)
    total = decimal.Decimal(0)
    tiny = decimal.Decimal("1e-60")
    u = u0
    while True:
        factor = ctx.subtract(1, ex)
        if factor > 0:
            total = ctx.add(total, ctx.multiply(b, factor))
        if u == k:
            return total
        rho = ctx.divide(ctx.multiply(decimal.Decimal(k - u), w), decimal.Decimal(u + 1))
        if rho < 1:
            # all later terms are <= B(u) rho^t (ratios decrease), each factor <= 1
            bound = _UP.divide(_UP.multiply(b, rho), _DN.subtract(1, rho)) if up else None
            scale = total if total > 0 else decimal.Decimal(1)
            if (up and bound <= _DN.multiply(scale, tiny)) or (not up and b <= scale * tiny):
                return _UP.add(total, bound) if up else total
        b = ctx.multiply(ctx.divide(ctx.multiply(b, decimal.Decimal(k - u)),
                                    decimal.Decimal(u + 1)), w)
        ex = inv.multiply(ex, v)
        u += 1


@positional_deprecated(1)
def prefix_delta(k: int, *, epsilon: Fraction, delta: Fraction, E: Fraction, up: bool) -> Fraction:
    """A rigorous bound (upper when ``up``) of the optimal-composition delta of ``k`` steps of
    ``(epsilon, delta)``-DP at ``epsilon_total = E``: ``(1 - (1-delta)**k) + (1-delta)**k T(E)``."""
    t = _tail_sum(k, Fraction(epsilon), Fraction(E), up)
    # (1 - s) + s T: no cancellation when the result is tiny; 1 - s needs the other side of s
    ctx = _UP if up else _DN
    d_part = ctx.subtract(1, _survive(Fraction(delta), k, not up))
    value = ctx.add(d_part, ctx.multiply(_survive(Fraction(delta), k, up), t))
    return max(Fraction(value), Fraction(0))


@positional_deprecated(1)
def eq4_bound(stops: Sequence[int], *, epsilon: Fraction, delta: Fraction,
              costs: Sequence[Fraction], up: bool) -> Fraction:
    """A rigorous bound of Eq. (4) for homogeneous steps: the sum over the stops of
    :func:`prefix_delta` (upper when ``up``)."""
    return sum((prefix_delta(k, epsilon=epsilon, delta=delta, E=E, up=up) for k, E in zip(stops, costs)),
               Fraction(0))


@lru_cache(maxsize=32)
def kernel(m: int, epsilon: Fraction, delta: Fraction, up: bool) -> tuple[np.ndarray, float]:
    """Directed floats of ``K_m(j)``, ``j = 0..m`` (module docstring) and of
    ``1 - (1-delta)**m`` (the delta-outputs of the segment)."""
    ctx = _UP if up else _DN
    w_lo, w_hi = _w(epsilon)
    w = w_hi if up else w_lo
    s = _survive(delta, m, up)
    b = ctx.multiply(s, _binomial_start(m, 0, epsilon, up))
    values = [b]
    for j in range(m):
        b = ctx.multiply(ctx.divide(ctx.multiply(b, decimal.Decimal(m - j)),
                                    decimal.Decimal(j + 1)), w)
        values.append(b)
    # float() of a decimal is correctly rounded (within half an ulp): one ulp outwards bounds it
    out = np.array([float(v) for v in values])
    out = np.nextafter(out, np.inf if up else -np.inf)
    if not up:
        np.maximum(out, 0.0, out=out)
    d_part = 1 - Fraction(_survive(delta, m, not up))
    return out, (float_up(d_part) if up else float_down(d_part))


def thm15_pass(instance: lattice.LatticeInstance, epsilon: Fraction, delta: Fraction,
               up: bool) -> float:
    """A directed bound of Eq. (3) for homogeneous steps (``instance.h == epsilon`` and every
    unit count 1; the window and stop values are the lattice's), segment by segment."""
    if any(n != 1 for n in instance.units) or instance.h != epsilon:
        raise ValueError("thm15_pass needs the homogeneous lattice h = epsilon, units 1")
    R = instance.totals()
    ranges = instance.ranges()
    table = lattice.stop_table_for(instance)
    stops = list(instance.stops)
    lo, hi = ranges[stops[-1]]
    g = table.on_depth(instance.costs[-1], R=R[stops[-1]], lo=lo, hi=hi, up=up)
    bounds = [0] + stops
    for i in range(len(stops) - 1, -1, -1):
        a, b = bounds[i], stops[i]
        m = b - a
        K, d_part = kernel(m, epsilon, delta, up)
        lo_b, hi_b = lo, hi
        lo, hi = ranges[a]
        need_lo, need_hi = lo, hi + m
        below = max(0, lo_b - need_lo)
        above = max(0, need_hi - hi_b)
        if below or above:
            fill_top = 1.0 if up else g[-1]
            fill_bot = g[0] if up else 0.0
            ext = np.concatenate([np.full(below, fill_bot), g, np.full(above, fill_top)])
            base = lo_b - below
        else:
            ext, base = g, lo_b
        ext = ext[lo - base: hi + m - base + 1]
        c = np.correlate(ext, K, "valid")  # c[t] = sum_j K[j] g(lo + t + j)
        n_terms = m + 1
        gamma = Fraction(n_terms, 2**53 - n_terms)  # n u / (1 - n u)
        underflow = n_terms * _TINY
        if up:
            c *= float_up(1 / (1 - gamma))
            np.nextafter(c, np.inf, out=c)
            c += underflow + d_part
            np.nextafter(c, np.inf, out=c)
        else:
            c *= float_down(1 / (1 + gamma))
            np.nextafter(c, -np.inf, out=c)
            c -= underflow
            np.nextafter(c, -np.inf, out=c)
            np.maximum(c, 0.0, out=c)
            c += d_part
            np.nextafter(c, -np.inf, out=c)
        if a > 0:  # a is the stop i-1: stop or continue
            np.maximum(c, table.on_depth(instance.costs[i - 1], R=R[a], lo=lo, hi=hi, up=up), out=c)
        if up:
            np.minimum(c, 1.0, out=c)
        else:
            np.maximum(c, 0.0, out=c)
        g = c
    assert g.shape == (1,)
    return float(g[0])
