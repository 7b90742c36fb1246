r"""Homogeneous steps in closed form: Eq. (4) term by term, Thm. 15 segment by segment.

Hartmann et al. 2022, Sec. 5.2.  When every step is the same ``(epsilon, delta)``
(``w = e**epsilon``, ``q = w/(1+w)``), the up-count of the ``1,2``-only paths of Lemma C
(:mod:`odp.optdel.exact`) after ``m`` steps is binomial:
``Pr0(u) = (1-delta)**m * C(m, u) q**u (1-q)**(m-u)``, at loss ``(2u - m) epsilon``.  Two
consequences:

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
``numpy.correlate`` on directed floats.

*Truncated kernel.*  ``K_m`` is a (defective) binomial law, concentrated within ``O(sqrt m)`` of
its mean, so only the indices ``j_lo <= j <= j_hi`` are kept (:func:`kernel_support` chooses
them so that the left-out mass is about ``tail_target``, default ``2**-100``; the choice is a
float heuristic and only affects tightness).  The left-out mass is bounded rigorously by the
geometric-ratio argument of :func:`prefix_delta`: above the cut the ratio
``K(j+1)/K(j) = (m-j) w/(j+1) =: rho(j)`` decreases in ``j``, so for ``rho = rho(j_hi) < 1``
``sum_{j > j_hi} K(j) <= K(j_hi) rho/(1-rho)``; below the cut ``K(j-1)/K(j) = j/((m-j+1) w)
=: sigma(j)`` increases in ``j``, so for ``sigma = sigma(j_lo) < 1``
``sum_{j < j_lo} K(j) <= K(j_lo) sigma/(1-sigma)``.  ``K(j_hi)``, ``K(j_lo)``, ``rho`` and
``sigma`` are upper bounds in directed decimal arithmetic (``w`` replaced by its upper
enclosure in ``rho`` and its lower one in ``sigma``), so their sum ``tau`` bounds the tail
(:class:`SegmentKernel`; it includes the factor ``(1-delta)**m``).  The upper pass bounds
``g_b(u + j)`` for *every* ``j = 0..m`` by ``G`` = the largest entry of its ``g_b`` array on
the window, or 1 (the fill above the window, ``g <= 1``) when ``u + m`` reaches above it; below
the window its fill is the bottom entry, which is ``<= G``.  So the left-out terms contribute at
most ``tau G`` and the upper pass adds ``tau G`` (rounded up); the lower pass simply drops them
(every term is ``>= 0``).  Only the kept part is computed: ``K(j_lo) = (1-delta)**m C(m, j_lo)
w**j_lo / (1+w)**m`` from the exact integer ``C(m, j_lo)`` and directed powers, then the
recurrence ``K(j+1) = K(j) (m-j)/(j+1) w`` up to ``j_hi`` (``O(j_hi - j_lo)`` decimal
operations, each rounded in the pass's direction).

*Floating-point error.*  The kernel is computed in directed decimal arithmetic and converted one
ulp outwards; the correlation of non-negative floats is within relative ``gamma_n = n u/(1 - n
u)`` (``u = 2**-53``, ``n = j_hi - j_lo + 1`` terms, the truncated kernel length, any summation
order, fused multiply-adds included; Higham, *Accuracy and Stability of Numerical Algorithms*,
2nd ed., eq. (3.5)) plus at most ``n 2**-1074`` of underflow, and those are added (upper) or
removed (lower) explicitly.  The window and its sound fills are those of
:mod:`odp.optdel.lattice` (Lemma D (i): ``g`` is non-decreasing in the loss, so below the window
the upper pass uses the bottom value and the lower pass 0, above it 1 and the top value).  The
state window is *not* further restricted to where ``g`` is clamped at 0 or 1.  Cost: ``O(sum
over segments of width * (j_hi - j_lo + 1))`` multiply-adds in C (:func:`segment_macs`; about
``25 sqrt(m)`` kernel entries instead of ``m + 1`` for long segments) and ``O(width)`` memory.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ..floats import float_down, float_up
from ..rational import exp_bracket
from . import lattice
from .search import first_true

__all__ = [
    "TAIL_TARGET",
    "SegmentKernel",
    "eq4_bound",
    "is_homogeneous",
    "kernel",
    "kernel_support",
    "prefix_delta",
    "segment_kernel",
    "segment_macs",
    "thm15_pass",
]

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


_FACT_EVERY = 256  # checkpoint spacing of the factorial tables
_FACT: dict[bool, list[decimal.Decimal]] = {True: [decimal.Decimal(1)], False: [decimal.Decimal(1)]}
_EXACT_COMB = 4096  # below this ``math.comb`` (exact) is cheaper than the tables


def _factorial(n: int, up: bool) -> decimal.Decimal:
    """A bound of ``n!`` (upper when ``up``): every product of ``1 * 2 * ... * n`` rounded in the
    same direction, from checkpoints ``(i * 256)!`` kept for the process (``O(n)`` once, then at
    most 255 products per call; relative error ``<= n 10**-39``)."""
    ctx = _UP if up else _DN
    table = _FACT[up]
    i = n // _FACT_EVERY
    while len(table) <= i:  # extend the checkpoints
        x, start = table[-1], (len(table) - 1) * _FACT_EVERY
        for f in range(start + 1, start + _FACT_EVERY + 1):
            x = ctx.multiply(x, decimal.Decimal(f))
        table.append(x)
    x = table[i]
    for f in range(i * _FACT_EVERY + 1, n + 1):
        x = ctx.multiply(x, decimal.Decimal(f))
    return x


def _comb(k: int, u: int, up: bool) -> decimal.Decimal:
    """A bound of ``C(k, u)`` (upper when ``up``): exact ``math.comb`` for small ``k``, else
    ``k! / (u! (k-u)!)`` from :func:`_factorial` bounds of the needed sides (a big exact
    ``math.comb`` costs about 60 ms at ``k = 10**5``)."""
    if k < _EXACT_COMB:
        return decimal.Decimal(math.comb(k, u))
    ctx, inv = (_UP, _DN) if up else (_DN, _UP)
    return ctx.divide(_factorial(k, up), inv.multiply(_factorial(u, not up), _factorial(k - u, not up)))


def _binomial_start(k: int, u0: int, epsilon: Fraction, up: bool) -> decimal.Decimal:
    """A bound of ``C(k,u0) q**u0 (1-q)**(k-u0) = C(k,u0) w**u0 / (1+w)**k``."""
    w_lo, w_hi = _w(epsilon)
    if up:
        num = _UP.multiply(_comb(k, u0, True), _pow(w_hi, u0, _UP))
        return _UP.divide(num, _pow(_DN.add(1, w_lo), k, _DN))
    num = _DN.multiply(_comb(k, u0, False), _pow(w_lo, u0, _DN))
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


def prefix_delta(k: int, *, epsilon: Fraction, delta: Fraction, E: Fraction, up: bool) -> Fraction:
    """A rigorous bound (upper when ``up``) of the optimal-composition delta of ``k`` steps of
    ``(epsilon, delta)``-DP at ``epsilon_total = E``: ``(1 - (1-delta)**k) + (1-delta)**k T(E)``."""
    t = _tail_sum(k, Fraction(epsilon), Fraction(E), up)
    # (1 - s) + s T: no cancellation when the result is tiny; 1 - s needs the other side of s
    ctx = _UP if up else _DN
    d_part = ctx.subtract(1, _survive(Fraction(delta), k, not up))
    value = ctx.add(d_part, ctx.multiply(_survive(Fraction(delta), k, up), t))
    return max(Fraction(value), Fraction(0))


def eq4_bound(stops: Sequence[int], *, epsilon: Fraction, delta: Fraction,
              costs: Sequence[Fraction], up: bool) -> Fraction:
    """A rigorous bound of Eq. (4) for homogeneous steps: the sum over the stops of
    :func:`prefix_delta` (upper when ``up``)."""
    return sum((prefix_delta(k, epsilon=epsilon, delta=delta, E=E, up=up) for k, E in zip(stops, costs)),
               Fraction(0))


#: Default target of the kernel mass left out of a segment correlation (a tightness knob only:
#: the mass actually left out is bounded rigorously and accounted for).
TAIL_TARGET = 2.0**-100


@dataclass(frozen=True)
class SegmentKernel:
    """Directed floats of ``K_m(j)`` for ``j = offset .. offset + len(values) - 1``; ``tail``
    an upper bound of ``sum`` of ``K_m(j)`` over the left-out ``j`` (upper kernels; ``0.0`` for
    lower kernels, whose pass drops the left-out terms); ``d_part`` a bound of
    ``1 - (1-delta)**m`` (upper when the kernel is)."""

    offset: int
    values: np.ndarray
    tail: float
    d_part: float


_RATIO_MAX = 1 - 2.0**-20  # cuts only where the float ratio is clearly < 1 (so is the decimal)


def _log_binomial(m: int, j: int, log_q: float, log_r: float) -> float:
    """Float estimate of ``log(C(m,j) q**j (1-q)**(m-j))`` (for choosing cuts only)."""
    return (math.lgamma(m + 1) - math.lgamma(j + 1) - math.lgamma(m - j + 1)
            + j * log_q + (m - j) * log_r)


@lru_cache(maxsize=256)
def kernel_support(m: int, epsilon: Fraction, tail_target: float = TAIL_TARGET) -> tuple[int, int]:
    """``(j_lo, j_hi)``: the indices of ``K_m`` kept by :func:`segment_kernel`.  A float
    heuristic (``lgamma``) aiming at a left-out mass of about ``tail_target`` on each side, with
    the same geometric bounds as the rigorous ones; ``tail_target <= 0`` keeps everything."""
    eps = float(epsilon)
    if tail_target <= 0 or m <= 0 or eps > 700:  # e^eps beyond a float: keep everything
        return 0, m
    log_q, log_r = -math.log1p(math.exp(-eps)), -math.log1p(math.exp(eps))
    w = math.exp(eps)
    goal = math.log(tail_target / 2)
    mode = min(m, max(0, math.floor((m + 1) / (1 + 1 / w))))

    def above_ok(j: int) -> bool:  # upper tail past j small enough (monotone in j)
        rho = (m - j) * w / (j + 1)
        return j >= m or (rho < _RATIO_MAX and _log_binomial(m, j, log_q, log_r)
                          + math.log(rho / (1 - rho) if rho > 0 else 1e-300) <= goal)

    def below_ok(j: int) -> bool:  # lower tail before j small enough (monotone in -j)
        sigma = j / ((m - j + 1) * w)
        return j <= 0 or (sigma < _RATIO_MAX and _log_binomial(m, j, log_q, log_r)
                          + math.log(sigma / (1 - sigma) if sigma > 0 else 1e-300) <= goal)

    j_hi = first_true(above_ok, mode, m)  # smallest j >= mode with above_ok
    # largest j <= mode with below_ok: the smallest distance t below the mode that is ok
    j_lo = mode - first_true(lambda t: below_ok(mode - t), 0, mode)
    return j_lo, j_hi


@lru_cache(maxsize=64)
def segment_kernel(m: int, epsilon: Fraction, delta: Fraction, up: bool, *,
                   tail_target: float = TAIL_TARGET) -> SegmentKernel:
    """The kernel of a segment of ``m`` steps on :func:`kernel_support`, with the rigorous bound
    of its left-out mass (module docstring, *Truncated kernel*)."""
    ctx = _UP if up else _DN
    w_lo, w_hi = _w(epsilon)
    w = w_hi if up else w_lo
    j_lo, j_hi = kernel_support(m, epsilon, tail_target)
    s = _survive(delta, m, up)
    b = ctx.multiply(s, _binomial_start(m, j_lo, epsilon, up))
    first = b
    values = [b]
    for j in range(j_lo, j_hi):
        b = ctx.multiply(ctx.divide(ctx.multiply(b, decimal.Decimal(m - j)),
                                    decimal.Decimal(j + 1)), w)
        values.append(b)
    tail = decimal.Decimal(0)
    if up:
        if j_hi < m:  # sum_{j > j_hi} K(j) <= K(j_hi) rho/(1 - rho)
            rho = _UP.divide(_UP.multiply(decimal.Decimal(m - j_hi), w_hi), decimal.Decimal(j_hi + 1))
            if rho >= 1:
                raise AssertionError("kernel cut below the mode")  # pragma: no cover
            tail = _UP.add(tail, _UP.divide(_UP.multiply(b, rho), _DN.subtract(1, rho)))
        if j_lo > 0:  # sum_{j < j_lo} K(j) <= K(j_lo) sigma/(1 - sigma)
            sigma = _UP.divide(decimal.Decimal(j_lo),
                               _DN.multiply(decimal.Decimal(m - j_lo + 1), w_lo))
            if sigma >= 1:
                raise AssertionError("kernel cut above the mode")  # pragma: no cover
            tail = _UP.add(tail, _UP.divide(_UP.multiply(first, sigma), _DN.subtract(1, sigma)))
    # float() of a decimal is correctly rounded (within half an ulp): one ulp outwards bounds it
    out = np.array([float(v) for v in values])
    out = np.nextafter(out, np.inf if up else -np.inf)
    if not up:
        np.maximum(out, 0.0, out=out)
    d_part = 1 - Fraction(_survive(delta, m, not up))
    return SegmentKernel(
        offset=j_lo,
        values=out,
        tail=float_up(Fraction(tail)) if tail else 0.0,
        d_part=float_up(d_part) if up else float_down(d_part),
    )


def kernel(m: int, epsilon: Fraction, delta: Fraction, up: bool) -> tuple[np.ndarray, float]:
    """Directed floats of the whole ``K_m(j)``, ``j = 0..m`` (module docstring) and of
    ``1 - (1-delta)**m`` (the delta-outputs of the segment)."""
    k = segment_kernel(m, epsilon, delta, up, tail_target=0.0)
    return k.values, k.d_part


def segment_macs(instance: lattice.LatticeInstance, epsilon: Fraction,
                 tail_target: float = TAIL_TARGET) -> int:
    """Multiply-adds of one :func:`thm15_pass` (the work estimate of the fast path)."""
    ranges = instance.ranges()
    total, a = 0, 0
    for b in instance.stops:
        lo, hi = ranges[a]
        j_lo, j_hi = kernel_support(b - a, epsilon, tail_target)
        total += (hi - lo + 1) * (j_hi - j_lo + 1)
        a = b
    return total


def thm15_pass(instance: lattice.LatticeInstance, epsilon: Fraction, delta: Fraction,
               up: bool, *, tail_target: float = TAIL_TARGET,
               kernels: Callable[[int, bool], SegmentKernel] | None = None) -> float:
    """A directed bound of Eq. (3) for homogeneous steps (``instance.h == epsilon`` and every
    unit count 1; the window and stop values are the lattice's), segment by segment.

    ``kernels(m, up)`` supplies the segment kernels (default: :func:`segment_kernel` with
    ``tail_target``; ``tail_target = 0`` keeps whole kernels)."""
    if any(n != 1 for n in instance.units) or instance.h != epsilon:
        raise ValueError("thm15_pass needs the homogeneous lattice h = epsilon, units 1")
    if kernels is None:
        def kernels(m: int, up: bool) -> SegmentKernel:
            return segment_kernel(m, epsilon, delta, up, tail_target=tail_target)
    R = instance.totals()
    ranges = instance.ranges()
    table = lattice.stop_table_for(instance)
    stops = list(instance.stops)
    lo, hi = ranges[stops[-1]]
    g = table.on_depth(instance.costs[-1], R=R[stops[-1]], lo=lo, hi=hi, up=up)
    bounds = [0] + stops
    for i in range(len(stops) - 1, -1, -1):
        a, b = bounds[i], stops[i]
        ker = kernels(b - a, up)
        K = ker.values
        lo_b, hi_b = lo, hi
        lo, hi = ranges[a]
        # c(u) = sum_t K[t] g(u + offset + t): g is needed on [lo + j_lo, hi + j_hi]
        need_lo, need_hi = lo + ker.offset, hi + ker.offset + len(K) - 1
        below = max(0, lo_b - need_lo)
        above = max(0, need_hi - hi_b)
        if below or above:
            fill_top = 1.0 if up else g[-1]
            fill_bot = g[0] if up else 0.0
            ext = np.concatenate([np.full(below, fill_bot), g, np.full(above, fill_top)])
            base = lo_b - below
        else:
            ext, base = g, lo_b
        ext = ext[need_lo - base: need_hi - base + 1]  # (g[0] is the upper fill below)
        c = np.correlate(ext, K, "valid")  # c[t] = sum_i K[i] g(lo + t + offset + i)
        n_terms = len(K)
        gamma = Fraction(n_terms, 2**53 - n_terms)  # n u / (1 - n u)
        underflow = n_terms * _TINY
        if up:
            c *= float_up(1 / (1 - gamma))
            np.nextafter(c, np.inf, out=c)
            extra = math.nextafter(underflow + ker.d_part, math.inf)
            if ker.tail:  # left-out kernel mass times the largest g it can meet on [lo, hi + m]
                top = max(float(np.max(g)), 1.0 if hi + (b - a) > hi_b else 0.0)
                extra = math.nextafter(extra + math.nextafter(ker.tail * top, math.inf), math.inf)
            c += extra
            np.nextafter(c, np.inf, out=c)
        else:
            c *= float_down(1 / (1 + gamma))
            np.nextafter(c, -np.inf, out=c)
            c -= underflow
            np.nextafter(c, -np.inf, out=c)
            np.maximum(c, 0.0, out=c)
            c += ker.d_part
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
