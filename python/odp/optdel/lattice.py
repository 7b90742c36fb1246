r"""Rigorous floating-point backward induction on a privacy-loss lattice (Thm. 15 and Eq. (4)).

Hartmann et al. 2022, Sec. 5.2.  This is the fast path for the ordinary parametrisation (per-step
``epsilon_k``, per-stop ``E(P_i)``), where ``e**epsilon`` is irrational and exact rational
arithmetic is impossible.  It runs the recursion of :mod:`odp.optdel.exact` (Lemmas A-C there)

    c_k(j) = delta_{k+1} + p_{k+1} g_{k+1}(j + n_{k+1}) + r_{k+1} g_{k+1}(j - n_{k+1})
    g_k(j) = max(c_k(j), 1 - e**(E_i - j h))  at a stopping depth k_i  (max(., 0) at k_n)

on the lattice of privacy losses ``j h`` (``h`` a positive rational, the *grid*), for steps with
``epsilon_k = n_k h`` exactly.  Two things make the returned numbers rigorous:

1. **Rounding of epsilon (Lemma D of :mod:`odp.optdel.exact`).**  Eq. (3) and Eq. (4) are
   non-decreasing in every ``epsilon_k``.  An *upper* bound uses ``n_k = ceil(epsilon_k / h)``, a
   *lower* bound ``n_k = floor(epsilon_k / h)``.  When every ``epsilon_k`` is a multiple of ``h``
   (always the case for homogeneous steps, ``h = epsilon``) both are the same problem: the
   state space is exact and only floating-point rounding separates the bounds.
2. **Directed floating-point rounding.**  Every input constant (``p_k``, ``r_k``, ``delta_k``,
   ``e**(E_i - j h)``) is enclosed with :func:`odp.rational.exp_bracket` and converted to a float
   rounded in the needed direction; every arithmetic result is moved one ulp outwards with
   ``numpy.nextafter`` (a round-to-nearest result is within half an ulp of the exact value, so the
   next float in the chosen direction is a bound).  The recursion is monotone in all of these
   constants (non-negative sums and products and ``max``), so the upper pass bounds the exact
   value from above and the lower pass from below.  Lower values are clamped at 0 and upper ones
   at 1 (``0 <= g <= 1``).

**Coordinates.**  At depth ``k`` only the losses ``j = 2u - R_k`` are reachable
(``R_k = sum_{l<=k} n_l``, ``u`` = the units of the steps that answered 1), so the arrays are
indexed by ``u in [0, R_k]``: output 1 moves ``u -> u + n``, output 2 keeps ``u``.

**Window.**  Very unlikely losses may be cut off to save time; this stays sound by Lemma D (i)
(``g_k`` is non-decreasing in the loss): above the window the upper pass uses ``g <= 1`` and the
lower pass the value at the top of the window; below the window the upper pass uses the value at
the bottom of the window and the lower pass ``g >= 0``.  The window reaches ``15`` Hoeffding
scales ``sqrt(sum eps_k^2)`` beyond the interesting range (a tail of ``e**-112``), so it only
bites for long compositions, and never at the price of soundness.

Cost: ``O(sum_k width_k)`` float operations, ``width_k <= R_k + 1``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import InvalidParameter
from ..floats import float_down, float_up
from ..rational import exp_bracket

__all__ = [
    "LatticeInstance",
    "cells",
    "default_window",
    "eq4_pass",
    "forward_prefixes",
    "prefix_term",
    "stop_table_for",
    "thm15_pass",
]

_DIGITS = 24  # decimal digits of the brackets: far below float resolution

#: Largest total loss index ``R_kn = sum n_k`` of a lattice (int64 index arithmetic).
MAX_TOTAL_UNITS = 2**62


def check_instance(*, h: Fraction, steps: Sequence, deltas: Sequence, stops: Sequence[int],
                   costs: Sequence, window: tuple[int, int] | None,  per_step: str) -> None:
    """The shape checks shared by the lattice and interpolation instances: ``h > 0``, one
    ``steps`` value (a ``per_step``) and one delta per step up to ``k_n``, one cost per
    stopping point, and a loss-index window (if any) that contains 0."""
    if h <= 0:
        raise InvalidParameter("the loss grid h must be > 0")
    if len(steps) != stops[-1] or len(deltas) != stops[-1]:
        raise InvalidParameter(f"need one {per_step} and one delta per step")
    if len(costs) != len(stops):
        raise InvalidParameter("need one cost per stopping point")
    if window is not None and not window[0] <= 0 <= window[1]:
        raise InvalidParameter("the loss-index window must contain the index 0")


@dataclass(frozen=True)
class LatticeInstance:
    """Steps ``epsilon_k = units[k] * h`` (exactly), per-step ``deltas``, stopping points and
    costs ``E(P_i)``; ``window = (J_lo, J_hi)`` limits the loss indices ``j`` (loss ``j h``;
    ``None``: no limit)."""

    h: Fraction
    units: tuple[int, ...]
    deltas: tuple[Fraction, ...]
    stops: tuple[int, ...]
    costs: tuple[Fraction, ...]
    window: tuple[int, int] | None = None

    def __post_init__(self):
        check_instance(h=self.h, steps=self.units, deltas=self.deltas, stops=self.stops, costs=self.costs, window=self.window,
                       per_step="unit count")
        if any(n < 0 for n in self.units):
            raise InvalidParameter("unit counts must be >= 0")
        if sum(self.units) > MAX_TOTAL_UNITS:
            raise InvalidParameter(
                f"the steps span {sum(self.units):.3g} grid steps h = {float(self.h):.3g}, more "
                f"than the {MAX_TOTAL_UNITS:.3g} a lattice can index; use a coarser grid")

    def totals(self) -> list[int]:
        """``R_k = sum_{l<=k} n_l`` for ``k = 0..k_n``."""
        return list(self._totals)

    def ranges(self) -> list[tuple[int, int]]:
        """Range ``[ulo_k, uhi_k]`` of the up-count ``u`` kept at every depth ``k = 0..k_n``
        (loss index ``j = 2u - R_k`` inside the window)."""
        return list(self._ranges)

    @functools.cached_property
    def _totals_array(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(np.asarray(self.units, dtype=np.int64))])

    @functools.cached_property
    def _totals(self) -> list[int]:
        return self._totals_array.tolist()

    @functools.cached_property
    def _ranges(self) -> list[tuple[int, int]]:
        R = self._totals_array
        lo, hi = np.zeros_like(R), R
        if self.window is not None:
            # losses never leave [-R_kn, R_kn]: clamping the window there changes nothing and
            # keeps the index arithmetic in int64 (a fine grid can ask for ~1e30 indices)
            reach = int(R[-1])
            j_lo, j_hi = max(self.window[0], -reach), min(self.window[1], reach)
            lo = np.maximum(lo, -((-(j_lo + R)) // 2))  # ceil((J_lo + R) / 2)
            hi = np.minimum(hi, (j_hi + R) // 2)
        return list(zip(lo.tolist(), hi.tolist()))


def cells(instance: LatticeInstance) -> int:
    """Number of lattice cells one pass visits (a proxy for running time)."""
    return sum(hi - lo + 1 for lo, hi in instance.ranges())


def default_window(
    h: Fraction, epsilons: Sequence[Fraction], costs: Sequence[Fraction], sigmas: float = 15.0
) -> tuple[int, int]:
    """Lattice indices covering ``[-(mu + sigmas*s), max E + mu + sigmas*s]`` where ``mu`` is the
    largest possible mean loss and ``s = sqrt(sum eps_k^2)`` (Hoeffding scale)."""
    eps, prev, prev_f = [], None, 0.0
    for e in epsilons:  # parsed homogeneous runs share one object: convert it once
        if e is not prev:
            prev, prev_f = e, float(e)
        eps.append(prev_f)
    s = math.sqrt(sum(e * e for e in eps))
    mu = sum(e * math.tanh(e / 2) for e in eps)
    top = float(max(costs)) + mu + sigmas * s + 1.0
    bot = mu + sigmas * s + 1.0
    hf = float(h)
    return (-math.ceil(bot / hf), math.ceil(top / hf))


def _step_constants(n: int, h: Fraction, delta: Fraction, up: bool) -> tuple[float, float, float]:
    """Directed floats for ``(delta, p, r)`` of a step with ``epsilon = n h``:
    ``p = (1-delta)/(1 + e**-eps)`` (output 1), ``r = (1-delta)/(1 + e**eps)`` (output 2)."""
    conv = float_up if up else float_down
    if n == 0:
        half = (1 - delta) / 2
        return conv(delta), conv(half), conv(half)
    lo, hi = exp_bracket(n * h, digits=_DIGITS)  # e**eps in [lo, hi]
    if up:
        p = (1 - delta) * hi / (1 + hi)  # w/(1+w) increasing in w
        r = (1 - delta) / (1 + lo)
    else:
        p = (1 - delta) * lo / (1 + lo)
        r = (1 - delta) / (1 + hi)
    return conv(delta), conv(p), conv(r)


class _StopTable:
    """Directed bounds of ``s(j) = max(1 - e**(E - j h), 0)`` for lattice indices ``j``.

    ``e**(E - j h) = e**rho * e**(-m h)`` with ``j0 = floor(E/h)``, ``rho = E - j0 h in [0, h)``
    and ``m = j - j0 >= 1`` (for ``j <= j0`` the stop value is ``<= 0`` and is replaced by 0,
    which is harmless because it is compared with a continuation value ``>= 0``).
    ``e**(-m h)`` is a product of two tabulated brackets ``e**(-a B h) e**(-b h)``.
    """

    def __init__(self, h: Fraction, max_m: int):
        self.h = h
        self.B = max(1, math.isqrt(max(max_m, 1)) + 1)
        nb = max_m // self.B + 1
        self.big = [exp_bracket(-a * self.B * h, digits=_DIGITS) for a in range(nb)]
        self.small = [exp_bracket(-b * h, digits=_DIGITS) for b in range(self.B)]
        self.big_lo = np.array([float_down(lo) for lo, _ in self.big])
        self.big_hi = np.array([float_up(hi) for _, hi in self.big])
        self.small_lo = np.array([float_down(lo) for lo, _ in self.small])
        self.small_hi = np.array([float_up(hi) for _, hi in self.small])
        self.max_m = max_m

    def values(self, E: Fraction, *, j_first: int, count: int, step: int, up: bool) -> np.ndarray:
        """Bounds of ``s(j)`` for ``j = j_first + step * t``, ``t = 0..count-1`` (``step > 0``)."""
        out = np.zeros(count)
        j0 = math.floor(E / self.h)
        # first t with j > j0
        t0 = max(0, (j0 - j_first) // step + 1)
        if t0 >= count:
            return out
        m = (j_first - j0) + step * np.arange(t0, count)
        if m[-1] > self.max_m:
            raise AssertionError("stop table too small")  # pragma: no cover
        rho = E - j0 * self.h
        e_lo, e_hi = exp_bracket(rho, digits=_DIGITS)
        a, b = np.divmod(m, self.B)
        if up:  # upper bound of s: lower bound of e**(E - jh)
            x = np.nextafter(self.big_lo[a] * self.small_lo[b], -np.inf)
            x = np.nextafter(x * float_down(e_lo), -np.inf)
            x = np.maximum(x, 0.0)
            s = np.nextafter(1.0 - x, np.inf)
            s = np.minimum(s, 1.0)
        else:
            x = np.nextafter(self.big_hi[a] * self.small_hi[b], np.inf)
            x = np.nextafter(x * float_up(e_hi), np.inf)
            s = np.nextafter(1.0 - x, -np.inf)
            s = np.maximum(s, 0.0)
        out[t0:] = s
        return out

    def on_depth(self, E: Fraction, *, R: int, lo: int, hi: int, up: bool) -> np.ndarray:
        """Bounds of ``s`` at up-counts ``u = lo..hi`` of a depth with total ``R``."""
        return self.values(E, j_first=2 * lo - R, count=hi - lo + 1, step=2, up=up)


def _stop_table(instance: LatticeInstance, extra_costs: Sequence[Fraction] = ()) -> _StopTable:
    R = instance.totals()
    ranges = instance.ranges()
    max_m = 1
    for k, E in list(zip(instance.stops, instance.costs)) + [
        (instance.stops[-1], E) for E in extra_costs
    ]:
        j_hi = 2 * ranges[k][1] - R[k]
        max_m = max(max_m, j_hi - math.floor(E / instance.h))
    return _StopTable(instance.h, max_m)


stop_table_for = _stop_table


def _dsum(values: np.ndarray, up: bool) -> float:
    """A directed bound of the exact sum of float ``values`` (correctly rounded
    :func:`math.fsum`, then one ulp outwards)."""
    return math.nextafter(math.fsum(values.tolist()), math.inf if up else -math.inf)


_F_UP = 1.0 + 6 * 2.0**-53  # exactly representable
_F_DOWN = 1.0 - 6 * 2.0**-53  # exactly representable
_ABS = 2.0**-1070


def _outwards(c: np.ndarray, up: bool) -> None:
    """Turn ``c``, computed with round-to-nearest as ``((p·a + r·b) + d)`` from non-negative
    directed bounds (at most three roundings on any path), into a directed bound, in place.

    Each rounding of a normal result is within relative ``u = 2**-53``, so the exact value lies
    in ``[c/(1+u)**3, c/(1-u)**3]``; an underflowing operation errs by at most ``2**-1075``
    absolutely.  Upper: ``fl(c·(1+6u)) >= c(1+6u)(1-u) >= c/(1-u)**3``, then ``+ 2**-1070``
    covers the absolute errors (exactly, in the subnormal range; for ``c >= 2**-1020`` the
    relative slack ``c·u`` already does).  Lower: ``fl(c·(1-6u)) <= c/(1+u)**3``, then
    ``- 2**-1070`` and a clamp at 0.  Two array passes instead of one ``nextafter`` per
    operation."""
    if up:
        np.multiply(c, _F_UP, out=c)
        np.add(c, _ABS, out=c)
    else:
        np.multiply(c, _F_DOWN, out=c)
        np.subtract(c, _ABS, out=c)
        np.maximum(c, 0.0, out=c)


def thm15_pass(instance: LatticeInstance, up: bool) -> float:
    """One directed pass of the backward induction: an upper (``up``) or lower bound of
    Eq. (3) for the steps ``epsilon_k = n_k h`` of ``instance``."""
    R = instance.totals()
    ranges = instance.ranges()
    table = _stop_table(instance)
    stop_index = {k: i for i, k in enumerate(instance.stops)}
    k_n = instance.stops[-1]
    lo, hi = ranges[k_n]
    g = table.on_depth(instance.costs[-1], R=R[k_n], lo=lo, hi=hi, up=up)
    consts: dict[tuple[int, Fraction], tuple[float, float, float]] = {}
    for k in range(k_n - 1, -1, -1):
        n = instance.units[k]
        key = (n, instance.deltas[k])
        if key not in consts:
            consts[key] = _step_constants(n, instance.h, instance.deltas[k], up)
        d, p, r = consts[key]
        lo1, hi1 = lo, hi  # u-range of g (depth k+1)
        lo, hi = ranges[k]
        width = hi - lo + 1
        # need g1[u + n] and g1[u] for u in [lo, hi]; outside [lo1, hi1] use sound fills
        need_lo, need_hi = lo, hi + n
        below = max(0, lo1 - need_lo)
        above = max(0, need_hi - hi1)
        if below or above:
            fill_top = 1.0 if up else g[-1]
            fill_bot = g[0] if up else 0.0
            ext = np.concatenate([np.full(below, fill_bot), g, np.full(above, fill_top)])
            base = lo1 - below
        else:
            ext, base = g, lo1
        stay = ext[lo - base : lo - base + width]  # output 2: u stays
        move = ext[lo + n - base : lo + n - base + width]  # output 1: u + n
        c = np.multiply(p, move)
        t = np.multiply(r, stay)
        np.add(c, t, out=c)
        if d:
            np.add(c, d, out=c)
        _outwards(c, up)
        i = stop_index.get(k)
        if i is not None:
            np.maximum(c, table.on_depth(instance.costs[i], R=R[k], lo=lo, hi=hi, up=up), out=c)
        if up:
            np.minimum(c, 1.0, out=c)
        g = c
    assert g.shape == (1,)
    return float(g[0])


def forward_prefixes(instance: LatticeInstance, up: bool):
    """Directed bounds of the ``Pr0``-distribution of the up-count of the ``1,2``-only paths at
    every stopping depth: yields ``(i, R, lo, hi, pmf, overflow, survive)`` where
    ``pmf[u - lo]`` bounds the mass at up-count ``u`` (loss index ``2u - R``), ``overflow`` the
    mass above the window (upper pass only) and ``survive = prod_{l<=k_i} (1 - delta_l)``.

    Mass leaving the window upwards is kept in the overflow cell (upper) or moved to the top
    cell (lower); mass leaving downwards is moved to the bottom cell (upper) or dropped (lower):
    sound by Lemma D (i) of :mod:`odp.optdel.exact`.
    """
    R = instance.totals()
    ranges = instance.ranges()
    stop_index = {k: i for i, k in enumerate(instance.stops)}
    pmf = np.ones(1)
    lo, hi = 0, 0
    overflow = 0.0
    survive = Fraction(1)
    consts: dict[tuple[int, Fraction], tuple[float, float, float]] = {}
    for k in range(1, instance.stops[-1] + 1):
        n = instance.units[k - 1]
        delta = instance.deltas[k - 1]
        key = (n, delta)
        if key not in consts:
            consts[key] = _step_constants(n, instance.h, delta, up)
        _, p, r = consts[key]
        survive *= 1 - delta
        lo0, hi0 = lo, hi
        lo, hi = ranges[k]
        # full new range [lo0, hi0 + n]: output 1 moves u -> u + n, output 2 keeps u
        L0 = len(pmf)
        new = np.zeros(L0 + n)
        np.multiply(p, pmf, out=new[n:])
        new[:L0] += np.multiply(r, pmf)
        _outwards(new, up)  # at most two roundings per cell (a product, a sum)
        cut_lo = lo - lo0
        cut_hi = (hi0 + n) - hi
        body = new[cut_lo : len(new) - cut_hi].copy()
        if cut_hi:
            spill = _dsum(new[len(new) - cut_hi :], up)
            if up:
                overflow = math.nextafter(overflow + spill, math.inf)
            else:
                body[-1] = math.nextafter(body[-1] + spill, -math.inf)
        if cut_lo and up:
            spill = _dsum(new[:cut_lo], up)
            body[0] = math.nextafter(body[0] + spill, math.inf)
        pmf = np.minimum(body, 1.0) if up else np.maximum(body, 0.0)
        i = stop_index.get(k)
        if i is not None:
            yield i, R[k], lo, hi, pmf, overflow, survive


def prefix_term(
    table: _StopTable,
    *,
    E: Fraction,
    R: int,
    lo: int,
    hi: int,
    pmf: np.ndarray,
    overflow: float,
    survive: Fraction,
    up: bool,
) -> Fraction:
    """Directed bound of the optimal-composition delta of one prefix at cost ``E``:
    ``(1 - survive) + sum_u Pr0(u) max(1 - e**(E - (2u - R) h), 0)`` (+ overflow, upper)."""
    toward = np.inf if up else -np.inf
    s = table.on_depth(E, R=R, lo=lo, hi=hi, up=up)
    terms = np.multiply(pmf, s)
    np.nextafter(terms, toward, out=terms)
    acc = _dsum(terms, up)
    if up:
        acc = math.nextafter(acc + overflow, math.inf)
    else:
        acc = max(acc, 0.0)
    return (1 - survive) + Fraction(acc)


def eq4_pass(instance: LatticeInstance, up: bool) -> Fraction:
    """A directed bound of Eq. (4) (Lemma 11 with the optimal composition of every prefix
    ``k_i`` at cost ``E(P_i)``), from :func:`forward_prefixes`."""
    table = _stop_table(instance)
    total = Fraction(0)
    for i, R, lo, hi, pmf, overflow, survive in forward_prefixes(instance, up):
        total += prefix_term(table, E=instance.costs[i], R=R, lo=lo, hi=hi, pmf=pmf, overflow=overflow, survive=survive, up=up)
    return total
