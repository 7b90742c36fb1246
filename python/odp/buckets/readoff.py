"""Reading δ(ε) and ε(δ) off a bucketed state, as a rigorous upper and a lower bound.

For one direction (A ‖ B) the tight δ is the hockey-stick divergence (Lemma 1 of Meiser &
Mohammadi): ``δ(ε) = Σ_x max(0, P_A(x) - e^ε P_B(x))``.

* **Upper bound** (:func:`delta_upper`): the exact hockey-stick divergence of the dominating
  pair, ``a_inf + Σ_{l_j > ε} pa[j] (1 - e^{ε - l_j})``, widened by the state's error bounds.
* **Lower bound** (:func:`delta_lower`): the exact hockey-stick divergence of the bucketed
  pair, ``d + Σ_j max(0, ma[j] - e^{ε} · B-mass[j])`` (the paper's lower bound with error
  correction; terms with nominal loss far below ε are left out, which can only lower it),
  narrowed by the error bounds.

Both are monotone in ε, so ``ε(δ)`` is found by a search over the grid and then within one grid
step (a closed form for the upper bound, bisection for the lower).  Every float comparison is
made in the safe direction: ε is rounded down before an upper bound on δ is computed and up
before a lower bound.
"""

from __future__ import annotations

import math

import numpy as np

from ._numerics import U
from .state import BucketState


def _near(s: BucketState, eps: float, shift: int = 0) -> float:
    """Bound on the rounding error of a computed exponent ``eps - l_j`` over the window (grid
    losses ``(start + j - shift) * h``)."""
    lmax = max(abs(s.start - shift), abs(s.start + s.size - 1 - shift)) * abs(s.h)
    return 6 * U * (abs(eps) + lmax + 1.0)


def _usable(*bounds: float) -> bool:
    """Error bounds that still carry information: finite relative bounds below 1 and finite
    absolute bounds.  Otherwise the read-off falls back to the trivial bounds (δ ≤ 1, δ ≥ 0)."""
    return all(math.isfinite(b) for b in bounds) and max(bounds[::2]) < 1.0


def _weighted_part(s: BucketState, wabs: float, lowest: float, shift: int = 0) -> float:
    """A bound on ``Σ |e_j|`` over the entries whose computed label is above ``lowest`` (grid
    labels shifted by ``shift`` steps), from the weighted norm ``wabs`` of the state's tilt:
    every such entry's exact label is above ``lowest − near``, so its weight is at least
    ``e^{θ(lowest − near − c)}`` (``inf`` without a tilt)."""
    if not (s.theta > 0 and math.isfinite(wabs)):
        return math.inf
    x = s.theta * (lowest - _near(s, lowest, shift) - s.wref)
    if x < -700:
        return math.inf
    return wabs * math.exp(-x) * (1 + 8 * U * (1 + abs(x)))


def round_off_up(s: BucketState, eps: float) -> float:
    """The absolute round-off that widens :func:`delta_upper` at ``eps``: ``abs_up``, or the
    tilted bound of the atoms near and above ``eps`` plus ``a_inf``'s own error bound."""
    near = _near(s, eps)
    return min(s.abs_up, s.err_inf + (1 + near) * _weighted_part(s, s.wabs_up, eps - 2 * near))


def round_off_low(s: BucketState, eps: float) -> float:
    """The absolute round-off that narrows :func:`delta_lower` at ``eps`` (A-masses and
    scaled B-masses of the buckets it sums, the latter times at most ``e^{LOWER_WINDOW}``)."""
    lowest = eps - LOWER_WINDOW
    plain = s.abs_ma + 2 * s.abs_bh
    tilted = (_weighted_part(s, s.wabs_ma, lowest, shift=s.bshift)
              + 2 * _weighted_part(s, s.wabs_bh, lowest, shift=s.bshift))
    return min(plain, tilted)


def delta_upper(s: BucketState, eps: float) -> float:
    """Rigorous upper bound on δ(eps) of the pair represented by ``s`` (one direction).
    Returns the trivial bound 1 when the accumulated round-off bounds are too large to use.

    The absolute round-off counted is the smaller of ``abs_up`` and, with a tilt, the weighted
    bound of the atoms near and above ``eps`` plus ``err_inf`` (:func:`round_off_up`)."""
    if not (s.rel_up < 1.0 and (math.isfinite(s.abs_up) or math.isfinite(s.wabs_up))):
        return 1.0
    l = s.losses
    near = _near(s, eps)
    if eps - 2 * near > float(l[-1]) and math.isfinite(s.err_inf):
        # above every atom (whatever their computed masses) only the infinite-loss mass is left
        inf_only = (s.a_inf + s.err_inf) * (1.0 + 4 * U)
        joint = (s.a_inf + s.abs_up) / (1.0 - s.rel_up) * (1.0 + 16 * U)
        return min(1.0, inf_only, joint)
    mask = l > eps
    c = -np.expm1(eps - l[mask])
    total = float((s.pa[mask] * c).sum())
    # grid losses are computed with error <= near: atoms just below eps may truly lie above it
    extra = near * float(s.pa[l > eps - 2 * near].sum())
    n = max(int(mask.sum()), 1)
    roundoff = round_off_up(s, eps)
    if not math.isfinite(roundoff):
        return 1.0
    bound = (s.a_inf + total + extra + roundoff) / (1.0 - s.rel_up) * (1.0 + (n + 16) * U)
    return min(1.0, bound)


#: The lower bound sums the buckets whose nominal loss is above ``eps - LOWER_WINDOW`` (a bucket
#: may hold losses somewhat above its nominal one); any subset of the terms is a lower bound.
LOWER_WINDOW = math.log(2.0)


def delta_lower(s: BucketState, eps: float) -> float:
    """Rigorous lower bound on δ(eps) of the pair represented by ``s`` (one direction).
    Returns the trivial bound 0 when the accumulated round-off bounds are too large to use."""
    if not (s.rel_ma < 1.0 and s.rel_bh < 1.0):
        return 0.0
    l = s.lower_losses  # the labels bh is scaled by (shifted by bshift steps)
    near = _near(s, eps, shift=s.bshift)
    mask = l > eps - LOWER_WINDOW
    if mask.any():
        fac = np.exp(eps - l[mask]) * (1.0 + near + 4 * U)  # >= e^{eps - l_true}, and <= ~1
        kappa = (1.0 + s.rel_ma) / (1.0 - s.rel_bh)
        ma = s.ma[mask]
        scaled_b = fac * s.bh[mask] * kappa
        terms = np.maximum(0.0, ma - scaled_b)
        total = float(terms.sum())
        rounding = 4 * U * float(ma.sum() + scaled_b.sum())
        fac_max = float(fac.max())
    else:
        total = rounding = 0.0
        fac_max = 1.0
    n = max(int(mask.sum()), 1)
    best = 0.0
    if math.isfinite(s.abs_ma) and math.isfinite(s.abs_bh):  # plain bounds (d included)
        low = (s.d + total - s.abs_ma) / (1.0 + s.rel_ma) * (1.0 - (n + 16) * U)
        best = low - (fac_max * s.abs_bh / (1.0 - s.rel_bh) + rounding)
    # tilted bounds of the summed buckets only (d, whose error they do not cover, left out)
    lowest = eps - LOWER_WINDOW
    e_ma = _weighted_part(s, s.wabs_ma, lowest, shift=s.bshift)
    e_bh = _weighted_part(s, s.wabs_bh, lowest, shift=s.bshift)
    if math.isfinite(e_ma) and math.isfinite(e_bh):
        low = (total - e_ma) / (1.0 + s.rel_ma) * (1.0 - (n + 16) * U)
        best = max(best, low - (fac_max * e_bh / (1.0 - s.rel_bh) + rounding))
    return max(0.0, best)


def above_top(s: BucketState) -> float:
    """The smallest ε (found by doubling a step) above every grid loss and its rounding margin:
    there :func:`delta_upper` holds only the infinite-loss mass and the error bounds."""
    base = max(float(s.losses[-1]), 0.0)
    step = 4 * _near(s, base)
    eps = base + step
    while eps - 2 * _near(s, eps) <= base:
        step *= 2
        eps = base + step
    return eps


def infinity_floor(s: BucketState) -> float:
    """What :func:`delta_upper` is at every ε above the grid: no finite ε has a smaller bound."""
    return delta_upper(s, above_top(s))


def epsilon_upper(s: BucketState, delta: float) -> float:
    """Smallest float ε >= 0 with ``delta_upper(s, ε) <= delta`` (``inf`` if there is none).

    ``delta`` must be a float at most the target (round the target down before calling).
    """
    if delta_upper(s, 0.0) <= delta:
        return 0.0
    l = s.losses
    top = float(l[-1])
    if top <= 0 or delta_upper(s, top) > delta:
        # at the top grid loss the bound still holds the rounding margin of the top atoms; just
        # above it only the infinite-loss mass (and the error bounds) is left
        beyond = above_top(s)
        return beyond if delta_upper(s, beyond) <= delta else math.inf
    # first grid point >= 0 where the bound is <= delta (binary search: the bound is monotone)
    lo_j = int(np.searchsorted(l, 0.0, side="right"))  # first j with l_j > 0
    hi_j = s.size - 1
    while lo_j < hi_j:
        mid = (lo_j + hi_j) // 2
        if delta_upper(s, float(l[mid])) <= delta:
            hi_j = mid
        else:
            lo_j = mid + 1
    j = lo_j
    left = float(l[j - 1]) if j > 0 and l[j - 1] > 0 else 0.0
    right = float(l[j])
    # closed form on (left, right]: bound = K (X - e^eps Y) with the atoms i >= j
    near = _near(s, right)
    tail = s.pa[j:]
    n = max(tail.size, 1)
    k = (1.0 + (n + 16) * U) / (1.0 - s.rel_up)
    x = (s.a_inf + float(tail.sum()) + near * float(s.pa[l > left - 2 * near].sum())
         + round_off_up(s, left))
    y = float((tail * np.exp(right - l[j:])).sum())  # Y * e^{right}
    target = x - delta / k
    if target > 0 and y > 0:
        guess = right + math.log(target / y)
        guess = min(max(guess, left), right)
    else:
        guess = left
    # verify (the closed form ignores rounding margins); bisect on [guess, right] if needed
    if delta_upper(s, guess) <= delta:
        return guess
    lo, hi = guess, right
    for _ in range(80):  # delta_upper(lo) > delta >= delta_upper(hi)
        mid = (lo + hi) / 2
        if mid <= lo or mid >= hi:
            break
        if delta_upper(s, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def epsilon_lower(s: BucketState, delta: float, hint: float | None = None) -> float:
    """Largest float ε >= 0 found with ``delta_lower(s, ε) > delta`` (0 if none).

    The true ε(δ) of the pair is then at least the result.  ``delta`` must be a float at least
    the target (round the target up before calling).  ``hint`` (e.g. the upper bound of ε,
    which the result lies below): where to start looking; any value gives the same kind of
    result, a good one fewer evaluations.
    """
    if not delta_lower(s, 0.0) > delta:
        return 0.0
    l = s.losses
    top = float(l[-1])
    if delta_lower(s, top) > delta:  # only distinguishing mass can do this
        return top
    seen: dict[float, float] = {}

    def f(e: float) -> float:
        if e not in seen:
            seen[e] = delta_lower(s, e) - delta
        return seen[e]

    lo_j = int(np.searchsorted(l, 0.0, side="right"))
    hi_j = s.size - 1
    if hint is not None and math.isfinite(hint) and lo_j < hi_j:
        # gallop down from the grid point at or above the hint to one with f > 0
        j = min(max(int(np.searchsorted(l, hint, side="left")), lo_j), hi_j)
        step = 1
        while j > lo_j and not f(float(l[j])) > 0:
            hi_j = j - 1
            j = max(lo_j, j - step)
            step *= 2
        lo_j = j
    # last grid point > 0 with bound > delta
    if lo_j > hi_j or not f(float(l[lo_j])) > 0:
        lo, hi = 0.0, float(l[lo_j]) if lo_j <= hi_j else top
    else:
        while lo_j < hi_j:
            mid = (lo_j + hi_j + 1) // 2
            if f(float(l[mid])) > 0:
                lo_j = mid
            else:
                hi_j = mid - 1
        lo, hi = float(l[lo_j]), float(l[min(lo_j + 1, s.size - 1)])
    return _last_above(f, lo, hi)


#: The search within one grid step stops when the bracket is this narrow relative to ε: far
#: below the 12 significant digits the intervals are reported to (each end of the bracket is
#: verified, so either is a rigorous bound).
BRACKET_TOLERANCE = 2.0**-46


def _last_above(f, lo: float, hi: float) -> float:
    """The largest point found with ``f > 0``, given ``f(lo) > 0 >= f(hi)`` and ``f``
    non-increasing: a false-position step (the bounds are smooth within a grid step), then a
    probe a small distance beyond it on the other side, so that the bracket shrinks by about a
    thousand per round; a bisection step when false position would land at an end.  Only
    evaluated points are returned, so the result's ``f > 0`` is checked."""
    f_lo, f_hi = f(lo), f(hi)
    if not f_lo > 0:  # pragma: no cover - the caller checked it
        return lo
    if f_hi > 0:
        return hi
    for _ in range(200):
        width = hi - lo
        tol = BRACKET_TOLERANCE * max(abs(hi), 1e-300)
        mid = (lo + hi) / 2
        if width <= tol or mid <= lo or mid >= hi:
            break
        x = mid
        if math.isfinite(f_lo) and math.isfinite(f_hi) and f_lo > f_hi:
            guess = lo + width * (f_lo / (f_lo - f_hi))
            if lo < guess < hi:
                x = guess
        fx = f(x)
        step = max(tol, width * 2.0**-10)
        if fx > 0:
            lo, f_lo = x, fx
            probe = x + step
            if probe < hi:
                fp = f(probe)
                if fp > 0:
                    lo, f_lo = probe, fp
                else:
                    hi, f_hi = probe, fp
        else:
            hi, f_hi = x, fx
            probe = x - step
            if probe > lo:
                fp = f(probe)
                if fp > 0:
                    lo, f_lo = probe, fp
                else:
                    hi, f_hi = probe, fp
    return lo
    if f_hi > 0:
        return hi
    side = 0
    for _ in range(200):
        width = hi - lo
        if width <= BRACKET_TOLERANCE * max(abs(hi), 1e-300):
            break
        mid = (lo + hi) / 2
        if mid <= lo or mid >= hi:
            break
        x = mid
        if math.isfinite(f_lo) and math.isfinite(f_hi) and f_lo > f_hi:
            guess = lo + width * f_lo / (f_lo - f_hi)
            if lo + width / 64 < guess < hi - width / 64:
                x = guess
        fx = f(x)
        if fx > 0:
            lo, f_lo = x, fx
            if side == 1:  # the same end twice: halve the other end's weight
                f_hi /= 2
            side = 1
        else:
            hi, f_hi = x, fx
            if side == -1:
                f_lo /= 2
            side = -1
        if x != mid and (hi - lo) > 0.75 * width:  # no real progress: bisect next time
            mid = (lo + hi) / 2
            fm = f(mid)
            if fm > 0:
                lo, f_lo = mid, fm
            else:
                hi, f_hi = mid, fm
            side = 0
    return lo
