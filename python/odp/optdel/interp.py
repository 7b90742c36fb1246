r"""Second-order rigorous upper bound for steps whose epsilons share no usable lattice (Thm. 15).

Hartmann et al. 2022, Sec. 5.2.  When the ``epsilon_k`` have no common unit small enough to make the
exact lattice of :mod:`odp.optdel.lattice` affordable, rounding every ``epsilon_k`` to a grid costs
a first-order error (the tail delta is very sensitive to a uniform stretch of all epsilons).  This
module keeps every ``epsilon_k`` exact and approximates only the *value function* between grid
points, using its convexity:

**Lemma E (convexity in mu).**  With ``mu = 1/L = e**(-loss)`` the per-unit-``Pr0`` value
``h_k(mu) = g_k(1/mu) = Psi_k(1, mu)`` (Lemmas B-C of :mod:`odp.optdel.exact`) is the restriction
of the convex function ``Psi_k`` to a line, hence convex, and it is non-increasing in ``mu``.

On the grid ``loss = j h`` (``mu_j = e**(-j h)``), the child of the state ``j`` after output 1 has
loss ``j h + eps = (m + lam') h`` with ``m = j + n``, ``n = floor(eps / h)``, ``r = eps - n h``;
in ``mu`` it is the convex combination ``(1 - lam) mu_m + lam mu_{m+1}`` with
``lam = (1 - e**-r) / (1 - e**-h)`` (independent of ``j``).  Then

the chord lies above a convex function: ``h(mu) <= (1 - lam) h(mu_m) + lam h(mu_{m+1})``.
The child after output 2 (loss ``j h - eps``) is handled the same way with ``m = j - n - 1`` and
``lam' = (1 - e**-(h - r)) / (1 - e**-h)``.  Replacing ``h`` at the grid points by upper bounds
keeps the inequality (the coefficients are non-negative), so by induction from depth ``k_n`` the
array is an upper bound of ``g_k`` on the grid.  Where ``g`` is smooth the chord error is
``O(h^2)``; at a kink of ``g`` (a stopping threshold) it is ``O(h)`` times the mass in that one
cell, which is itself ``O(h)`` unless the loss distribution has an atom exactly there (steps on a
common lattice -- handled exactly by :mod:`odp.optdel.lattice` instead).  Measured in
``bench/optdel.py``: 0.02 % at ``h = 0.0009`` for 200 heterogeneous steps, against several
percent for rounding the epsilons up to the same grid.  All constants are enclosed
with :func:`odp.rational.exp_bracket` (``lam`` is increasing in ``r``, so its upper end is used)
and every float operation is rounded upwards with ``numpy.nextafter`` (as in
:mod:`odp.optdel.lattice`).  Outside the window the value 1 is used above and the bottom value
below (sound by monotonicity).

Equivalently: splitting every child's ``Pr0``-mass between the two neighbouring grid points with
its ``mu``-mean preserved makes each step *more* informative (the original mechanism is a
post-processing of the split one), so this is the exact OptDel of a dominating lattice problem.

No matching second-order *lower* bound is offered: the analogous supporting-line construction
needs slopes that the lower bound itself destroys (it degrades to first order), and merging
mass onto a grid is a garbling that rounds epsilon down (first order).  Lower bounds come from
:mod:`odp.optdel.lattice` with every epsilon rounded down.

If every ``epsilon_k`` is a multiple of ``h`` then ``lam = 0``, ``lam' = 1`` and the bound is the
exact lattice recursion.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..floats import float_up
from ..rational import exp_bracket
from .lattice import _DIGITS, _StopTable, check_instance

__all__ = ["InterpInstance", "eq4_interp_upper", "interp_cells", "interp_upper"]


@dataclass(frozen=True)
class InterpInstance:
    """Exact ``epsilons`` (any non-negative rationals), ``deltas``, stops and costs, a grid step
    ``h`` for the loss, and an optional window ``(J_lo, J_hi)`` of loss indices."""

    h: Fraction
    epsilons: tuple[Fraction, ...]
    deltas: tuple[Fraction, ...]
    stops: tuple[int, ...]
    costs: tuple[Fraction, ...]
    window: tuple[int, int] | None = None

    def __post_init__(self):
        check_instance(h=self.h, steps=self.epsilons, deltas=self.deltas, stops=self.stops, costs=self.costs, window=self.window,
                       per_step="epsilon")

    def reach(self) -> list[int]:
        """``J_k = sum_{l<=k} (floor(eps_l/h) + 1)``: depth ``k`` uses indices ``|j| <= J_k``."""
        out = [0]
        for e in self.epsilons:
            out.append(out[-1] + int(e // self.h) + 1)
        return out

    def ranges(self) -> list[tuple[int, int]]:
        out = []
        for J in self.reach():
            lo, hi = -J, J
            if self.window is not None:
                lo, hi = max(lo, self.window[0]), min(hi, self.window[1])
            out.append((lo, hi))
        return out


def interp_cells(instance: InterpInstance) -> int:
    return sum(hi - lo + 1 for lo, hi in instance.ranges())


@dataclass(frozen=True)
class _Consts:
    n: int
    # coefficients of H[m], H[m+1] (output 1) and H[m'], H[m'+1] (output 2)
    c1: float
    c2: float
    d1: float
    d2: float
    delta_hi: float


def _lam_hi(r: Fraction, h: Fraction, e_minus_h_hi: Fraction) -> Fraction:
    """Upper end of ``(1 - e**-r) / (1 - e**-h)`` in ``[0, 1]``."""
    if r == 0:
        return Fraction(0)
    if r == h:
        return Fraction(1)
    er_lo = exp_bracket(-r, digits=_DIGITS)[0]
    return min((1 - er_lo) / (1 - e_minus_h_hi), Fraction(1))


def _constants(eps: Fraction, delta: Fraction, h: Fraction) -> _Consts:
    n = int(eps // h)
    r = eps - n * h
    emh_hi = exp_bracket(-h, digits=_DIGITS)[1]
    lam_up = _lam_hi(r, h, emh_hi)  # output 1: between m = j+n and m+1
    lam_dn = _lam_hi(h - r, h, emh_hi)  # output 2: between m' = j-n-1 and m'+1
    if eps == 0:
        w_lo = w_hi = Fraction(1)
    else:
        w_lo, w_hi = exp_bracket(eps, digits=_DIGITS)
    p_hi = (1 - delta) * w_hi / (1 + w_hi)
    r_hi = (1 - delta) / (1 + w_lo)
    return _Consts(
        n=n,
        c1=float_up(p_hi * (1 - lam_up)),
        c2=float_up(p_hi * lam_up),
        d1=float_up(r_hi * (1 - lam_dn)),
        d2=float_up(r_hi * lam_dn),
        delta_hi=float_up(delta),
    )


def _u(x):
    return np.nextafter(x, np.inf, out=x)


def interp_upper(instance: InterpInstance) -> float:
    """A rigorous upper bound of Eq. (3) for ``instance`` (Lemma E, chords)."""
    ranges = instance.ranges()
    k_n = instance.stops[-1]
    j_hi_max = max(hi for _, hi in ranges)
    max_m = j_hi_max - min(math.floor(E / instance.h) for E in instance.costs) + 1
    table = _StopTable(instance.h, max(max_m, 1))
    stop_index = {k: i for i, k in enumerate(instance.stops)}
    lo, hi = ranges[k_n]
    Hi = table.values(instance.costs[-1], j_first=lo, count=hi - lo + 1, step=1, up=True)
    cache: dict[tuple[Fraction, Fraction], _Consts] = {}
    for k in range(k_n - 1, -1, -1):
        key = (instance.epsilons[k], instance.deltas[k])
        if key not in cache:
            cache[key] = _constants(key[0], key[1], instance.h)
        c = cache[key]
        n = c.n
        lo1, hi1 = lo, hi
        lo, hi = ranges[k]
        width = hi - lo + 1
        # indices needed: j - n - 1 .. j + n + 1 for j in [lo, hi]
        need_lo, need_hi = lo - n - 1, hi + n + 1
        below = max(0, lo1 - need_lo)
        above = max(0, need_hi - hi1)
        if below or above:
            H = np.concatenate([np.full(below, Hi[0]), Hi, np.full(above, 1.0)])
            base = lo1 - below
        else:
            H, base = Hi, lo1

        def at(shift, H=H, start=lo - base, width=width):
            return H[start + shift : start + shift + width]

        u = np.multiply(c.c1, at(n))
        _u(u)
        t = np.multiply(c.c2, at(n + 1))
        _u(t)
        np.add(u, t, out=u)
        _u(u)
        np.multiply(c.d1, at(-n - 1), out=t)
        _u(t)
        np.add(u, t, out=u)
        _u(u)
        np.multiply(c.d2, at(-n), out=t)
        _u(t)
        np.add(u, t, out=u)
        _u(u)
        if c.delta_hi:
            np.add(u, c.delta_hi, out=u)
            _u(u)
        i = stop_index.get(k)
        if i is not None:
            np.maximum(u, table.values(instance.costs[i], j_first=lo, count=width, step=1, up=True), out=u)
        np.minimum(u, 1.0, out=u)
        Hi = u
    assert Hi.shape == (1,)
    return float(Hi[0])


def eq4_interp_upper(instance: InterpInstance) -> Fraction:
    """A rigorous upper bound of Eq. (4) by the forward form of Lemma E.

    Each child's ``Pr0``-mass is split between the two neighbouring grid points with its
    ``mu``-mean kept (weights ``1 - lam``, ``lam``).  This is a mean-preserving spread in ``mu``;
    the remaining steps multiply ``mu`` by independent factors, so the expected final value
    ``E[max(1 - W mu, 0)]`` is a convex function of ``mu`` at every depth and can only grow.
    Using the upper end of ``lam`` moves mass towards larger losses, which only raises it too.
    Each prefix ``k_i`` contributes ``(1 - prod(1 - delta_l))`` plus the grid sum (math.fsum,
    rounded up).
    """
    ranges = instance.ranges()
    j_hi_max = max(hi for _, hi in ranges)
    max_m = j_hi_max - min(math.floor(E / instance.h) for E in instance.costs) + 1
    table = _StopTable(instance.h, max(max_m, 1))
    stop_index = {k: i for i, k in enumerate(instance.stops)}
    pmf = np.ones(1)
    lo, hi = 0, 0
    overflow = 0.0
    survive = Fraction(1)
    total = Fraction(0)
    cache: dict[tuple[Fraction, Fraction], _Consts] = {}
    for k in range(1, instance.stops[-1] + 1):
        key = (instance.epsilons[k - 1], instance.deltas[k - 1])
        if key not in cache:
            cache[key] = _constants(key[0], key[1], instance.h)
        c = cache[key]
        n = c.n
        survive *= 1 - instance.deltas[k - 1]
        lo0, hi0 = lo, hi
        lo, hi = ranges[k]
        flo, fhi = lo0 - n - 1, hi0 + n + 1  # full reach of the children
        new = np.zeros(fhi - flo + 1)
        L0 = len(pmf)
        for coef, shift in ((c.c1, n), (c.c2, n + 1), (c.d1, -n - 1), (c.d2, -n)):
            if coef == 0.0:
                continue
            part = np.multiply(coef, pmf)
            _u(part)
            s = lo0 + shift - flo
            seg = new[s : s + L0]
            np.add(seg, part, out=seg)
            _u(seg)
        cut_lo, cut_hi = lo - flo, fhi - hi
        body = new[cut_lo : len(new) - cut_hi].copy()
        if cut_hi:
            spill = math.nextafter(math.fsum(new[len(new) - cut_hi :].tolist()), math.inf)
            overflow = math.nextafter(overflow + spill, math.inf)
        if cut_lo:
            spill = math.nextafter(math.fsum(new[:cut_lo].tolist()), math.inf)
            body[0] = math.nextafter(body[0] + spill, math.inf)
        pmf = np.minimum(body, 1.0)
        i = stop_index.get(k)
        if i is not None:
            s_vals = table.values(instance.costs[i], j_first=lo, count=hi - lo + 1, step=1, up=True)
            terms = np.multiply(pmf, s_vals)
            _u(terms)
            acc = math.nextafter(math.fsum(terms.tolist()), math.inf)
            acc = math.nextafter(acc + overflow, math.inf)
            total += (1 - survive) + Fraction(acc)
    return total
