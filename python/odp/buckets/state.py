"""The bucketed state of one direction (A ‖ B): an upper and a lower bucketed pair.

A :class:`BucketState` holds two discrete pairs on the same grid ``i*h`` (``h = ln f``):

**Upper pair** (``pa``, ``a_inf``): a pair *dominating* (A, B) -- (A, B) is a post-processing of
it, so its hockey-stick divergence is at least that of (A, B) for every ε, and this survives
composition.  All its finite losses lie exactly on grid points: ``pa[j]`` is the A-mass of an
atom with loss ``(start+j)*h`` (its B-mass is ``pa[j]*exp(-(start+j)*h)``), ``a_inf`` the A-mass
with infinite loss.  It is built from the paper's buckets (§3): bucket ``i`` (A-mass ``a``, scaled
B-mass ``bhat``, losses in ``((i-1)h, ih]``) becomes two atoms, at ``ih`` and ``(i-1)h``, whose A-
and B-masses add up to the bucket's.  Every event's likelihood-ratio vector (P_A, P_B) is a
non-negative combination of the two atoms' vectors (its ratio lies between theirs), which is
exactly the statement that the two atoms can be post-processed into the bucket's events
(Blackwell).  Rounding *all* of the bucket up to ``ih`` (the paper's pessimistic rounding,
``rounding="up"``) is the special case that keeps only the A-mass; the split keeps the B-mass
too -- the paper's error-correction information -- so the error per composition is second order
in ``h`` instead of first order.  Mass beyond the window's top goes to ``a_inf`` (loss rounded up
to +∞); mass below its bottom is moved up to the lowest grid point (its B-mass shrinks, which
is pessimistic, the paper's "pretend" mass).

**Lower pair** (``ma``, ``bh``, ``d``): the paper's buckets with their exact B-mass (its
error-correction terms): ``ma[j]`` and ``bh[j]*exp(-(start+j)*h)`` are the A- and B-mass of all
events whose (rounded-up, summed) loss index is ``start+j``; ``d`` the A-mass of distinguishing
events.  Merging events into buckets is a post-processing and dropping events only removes
non-negative terms, so its hockey-stick divergence is a lower bound (data processing).

**Label shift of the lower pair.**  The bucket index of a composed event is the sum of the
components' indices, and a bucket's top lies up to one step above its losses, so the labels drift
*above* the true losses by about ``h/2`` per composition: ``bh`` (B-mass times ``e^{label}``)
would grow like ``e^{k h/2}`` relative to ``ma`` and the FFT's absolute round-off of ``bh`` would
swamp small δ.  So ``bh`` is stored relative to a shifted label: ``bh[j] = (B-mass of bucket
start+j) * exp((start + j - bshift) * h)`` with an integer ``bshift`` chosen after every
composition (:func:`renormalize`) so that ``sum(bh) ≈ sum(ma)``.  The buckets themselves (which
events are merged) are unchanged; only the scale of ``bh`` moves, exactly by ``e^{-t h}`` with
its rounding counted in ``rel_bh``.

**Errors.**  Each of the three vectors carries ``rel`` and ``abs``: the computed vector ``v``
and the exact one ``v*`` satisfy ``v = v* + r + e`` with ``|r| <= rel * v*`` elementwise and
``||e||_1 <= abs``.  Relative errors come from the constructors; absolute ones from FFT
round-off (:mod:`odp.buckets.compose`).  The read-off (:mod:`odp.buckets.readoff`) widens both
bounds by what these errors could change.

**Tilted (weighted) absolute errors.**  With a tilt ``θ > 0`` the same absolute error vector
``e`` of each vector is also bounded in the weighted norm ``‖e‖_θ = Σ_j |e_j| e^{θ(ℓ_j − c)}``
(``wabs_*``), where ``ℓ_j`` is the entry's grid label (its loss for ``pa``; the shifted label
:attr:`BucketState.lower_losses`, which follows the true losses, for ``ma`` and ``bh``) and
``c`` (``wref``) a reference.  Weights are multiplicative under
convolution (``ℓ`` and ``c`` add), so ``‖e * y‖_θ <= ‖e‖_θ ‖y‖_θ`` (Young's inequality for the
weighted ℓ1 norm), and an error at labels above ``ε`` weighs at least ``e^{θ(ε − c)}``: the
read-off uses ``Σ_{ℓ_j > ε} |e_j| <= e^{−θ(ε − c)} ‖e‖_θ`` wherever that is smaller than
``abs``.  Composition computes the part of each product above ``c`` from FFTs of the tilted
vectors ``v_j e^{θ(ℓ_j − c)}`` (:func:`odp.buckets.compose.convolve_tilted`), so the FFT's
absolute round-off there is relative to the tilted masses -- the ones that matter for a small δ
at a large ε -- instead of to the largest masses.  ``wabs_up`` and ``wabs_ma`` bound the finite
entries only (the infinite-loss mass ``a_inf`` keeps its own bound ``err_inf``; the weighted
lower bound leaves the distinguishing mass ``d`` out, which only lowers it).  ``wabs = inf``:
not tracked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ._numerics import ELEMENTARY_ULPS, U, split_error_weighted
from .cells import Cells


@dataclass
class BucketState:
    """One direction of a (composed) pair; see the module docstring."""

    h: float
    start: int
    pa: np.ndarray
    a_inf: float
    ma: np.ndarray
    bh: np.ndarray
    d: float
    rel_up: float = 0.0
    abs_up: float = 0.0
    rel_ma: float = 0.0
    abs_ma: float = 0.0
    rel_bh: float = 0.0
    abs_bh: float = 0.0
    count: int = 1
    coarsenings: int = 0
    truncated: float = 0.0
    dropped: float = 0.0
    bshift: int = 0
    #: A bound on ``|a_inf - exact a_inf|`` kept apart from the vector errors (``inf``: not
    #: tracked).  Above the window's top only ``a_inf`` is left of the upper pair's δ, so with
    #: ``err_inf`` the FFT round-off of the finite atoms (``abs_up``) does not count there.
    err_inf: float = math.inf
    #: The tilt θ >= 0 of the weighted error norms and their reference ``c`` (module docstring,
    #: "Tilted errors"); ``θ = 0``: none.
    theta: float = 0.0
    wref: float = 0.0
    #: Bounds on ``‖e‖_θ`` of the absolute errors of ``pa``, ``ma``, ``bh`` (finite entries).
    wabs_up: float = math.inf
    wabs_ma: float = math.inf
    wabs_bh: float = math.inf

    @property
    def size(self) -> int:
        return int(self.pa.size)

    @property
    def lower_losses(self) -> np.ndarray:
        """``(start + j - bshift) * h``: ``bh[j] * exp(-lower_losses[j])`` is bucket j's B-mass
        (see "Label shift" in the module docstring)."""
        return (self.start - self.bshift + np.arange(self.size, dtype=np.int64)) * self.h

    @property
    def losses(self) -> np.ndarray:
        """Grid losses ``(start + j) * h`` (atoms of the upper pair; bucket tops of the lower)."""
        return (self.start + np.arange(self.size, dtype=np.int64)) * self.h

    def weights(self, row: str) -> np.ndarray | None:
        """``e^{θ(ℓ_j − c)}`` for the labels of ``row`` (``"up"``: :attr:`losses`, ``"ma"`` and
        ``"bh"``: :attr:`lower_losses`), or ``None`` without a tilt or when an exponent is
        beyond :data:`MAX_TILT_EXPONENT`.  Each weight is within :func:`weight_error` (relative)
        of the exact one."""
        if not self.theta > 0:
            return None
        labels = self.losses if row == "up" else self.lower_losses
        return tilt_weights(labels, self.theta, self.wref)

    def summary(self) -> dict:
        return {
            "factor": math.exp(self.h),
            "ln_factor": self.h,
            "buckets": self.size,
            "loss_window": [float(self.start * self.h), float((self.start + self.size - 1) * self.h)],
            "infinity_mass": self.a_inf,
            "distinguishing_mass": self.d,
            "truncated_to_infinity": self.truncated,
            "dropped_from_lower": self.dropped,
            "coarsenings": self.coarsenings,
            "lower_label_shift": self.bshift * self.h,
            "relative_error_bound": max(self.rel_up, self.rel_ma, self.rel_bh),
            "absolute_error_bound": max(self.abs_up, self.abs_ma + self.abs_bh),
            "tilt": self.theta,
            "weighted_error_bound": max(self.wabs_up, self.wabs_ma + self.wabs_bh),
        }


#: Weights ``e^x`` are formed only for ``|x| <= MAX_TILT_EXPONENT`` (finite, and normal floats;
#: :func:`odp.buckets.compose.convolve_tilted` also checks that the tilted masses stay far
#: inside the float range).
MAX_TILT_EXPONENT = 700.0


def tilt_weights(labels: np.ndarray, theta: float, ref: float) -> np.ndarray | None:
    """``e^{θ(ℓ − c)}`` elementwise, or ``None`` if some ``|θ(ℓ − c)|`` exceeds
    :data:`MAX_TILT_EXPONENT`."""
    with np.errstate(over="ignore", invalid="ignore"):
        x = theta * (np.asarray(labels, dtype=float) - ref)
        if x.size and not float(np.max(np.abs(x))) <= MAX_TILT_EXPONENT:
            return None
        return np.exp(x)


def weight_error(labels_bound: float, theta: float, ref: float) -> float:
    """A bound on the relative error of a computed weight ``e^{θ(ℓ − c)}`` whose label has
    ``|ℓ| <= labels_bound``: the label ``(start + j)·h`` is one rounded product (``u|ℓ|``), the
    difference and the product by θ two more roundings, ``exp`` is within
    ``ELEMENTARY_ULPS`` ulps; with ``x = θ(|ℓ| + |c|)`` the total is below
    ``(ELEMENTARY_ULPS + 8) u (1 + x)``."""
    x = theta * (labels_bound + abs(ref))
    return (ELEMENTARY_ULPS + 8) * U * (1.0 + x)


def from_cells(c: Cells, rounding: str = "split", lower: Cells | None = None,
               theta: float = 0.0) -> BucketState:
    """Build the state of a single pair from its buckets (see the module docstring).

    ``c`` feeds the upper pair and ``lower`` (default: ``c``) the lower pair; they differ when a
    parameter had to be rounded to a float in each bound's safe direction.  ``theta > 0`` also
    bounds the absolute errors in the weighted norm of tilt ``θ`` (reference 0).
    """
    if lower is None:
        lower = c
    if lower.h != c.h:
        raise ValueError("upper and lower buckets must share the grid")
    h = c.h
    n = c.a.size
    a = np.where(c.a > 0, c.a, 0.0)
    bhat = np.where(a > 0, np.maximum(c.bhat, 0.0), 0.0)
    rel_a = np.where(a > 0, c.rel_a, 0.0)
    rel_b = np.where(a > 0, c.rel_b, 0.0)
    pa = np.zeros(n + 1)
    err = np.zeros(n + 1)
    if rounding == "split":
        em1 = math.expm1(h)
        if c.excess is not None:  # bhat - a, computed without cancellation
            exc = np.where(a > 0, c.excess, 0.0)
            err_exc = np.where(a > 0, c.err_excess, 0.0)
        else:
            exc = bhat - a
            err_exc = bhat * rel_b + a * rel_a + 2 * U * (a + bhat)
        # the bucket's excess decides its split: beta (down to (i-1)h) has excess a*em1 per
        # unit of A-mass, alpha (up to ih) none
        beta_raw = exc / em1
        beta = np.clip(beta_raw, 0.0, a)
        alpha = a - beta  # mass moved up to the bucket top ih
        outside = np.maximum(0.0, np.maximum(-beta_raw, beta_raw - a))  # loss outside bucket?
        kappa = (err_exc / em1 + 2 * U * np.abs(beta_raw) + outside) * (1 + 4 * U)
        kappa = kappa + a * rel_a
        kappa = np.minimum(kappa, a * (1 + rel_a))  # never more than the bucket's mass
    elif rounding == "up":
        alpha = a
        beta = np.zeros(n)
        kappa = a * rel_a
    else:
        raise ValueError(f"rounding must be 'split' or 'up', not {rounding!r}")
    pa[1:] += alpha
    pa[:-1] += beta
    err[1:] += kappa
    err[:-1] += kappa
    atom = np.where(c.atom > 0, c.atom, 0.0)  # atoms exactly on grid points: no split
    pa[1:] += atom
    err[1:] += atom * np.broadcast_to(c.rel_atom, atom.shape)
    pa[0] += c.bottom_a
    err[0] += c.bottom_a * c.rel_tails
    a_inf = c.inf_a + c.top_a
    err_inf = c.inf_a * c.rel_inf + c.top_a * c.rel_tails + 2 * U * a_inf
    w_up = w_low = None
    if theta > 0:  # weights of the upper points (c.first-1+j)h and the lower buckets (first+j)h
        w_up = tilt_weights((c.first - 1 + np.arange(n + 1, dtype=np.int64)) * h, theta, 0.0)
        w_low = tilt_weights((lower.first + np.arange(lower.a.size, dtype=np.int64)) * h, theta,
                             0.0)
        if w_up is None or w_low is None:
            w_up = w_low = None
    rel_up, abs_up, wabs_up = split_error_weighted(
        np.append(pa, a_inf), np.append(err, err_inf),
        None if w_up is None else np.append(w_up, 0.0))  # a_inf: err_inf bounds its error
    # lower pair: bucket first+j at position j+1 (position 0 is the upper pair's extra point)
    l_at = np.where(lower.atom > 0, lower.atom, 0.0)
    la0 = np.where(lower.a > 0, lower.a, 0.0)
    lb0 = np.where(la0 > 0, np.maximum(lower.bhat, 0.0), 0.0)
    la = la0 + l_at
    lb = lb0 + l_at
    r_at = np.broadcast_to(lower.rel_atom, l_at.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        lra = np.where(la > 0, (la0 * np.where(la0 > 0, lower.rel_a, 0.0) + l_at * r_at) / la + U, 0.0)
        lrb = np.where(lb > 0, (lb0 * np.where(la0 > 0, lower.rel_b, 0.0) + l_at * r_at) / lb + U, 0.0)
    rel_ma, abs_ma, wabs_ma = split_error_weighted(
        np.append(la, lower.inf_a), np.append(la * lra, lower.inf_a * lower.rel_inf),
        None if w_low is None else np.append(w_low, 0.0))  # d: left out of the weighted bound
    rel_bh, abs_bh, wabs_bh = split_error_weighted(lb, lb * lrb, w_low)
    if w_up is not None:  # the weights' own rounding
        bound = max(abs(c.first - 1), abs(c.last), abs(lower.first), abs(lower.last)) * h
        grow = 1 + weight_error(bound, theta, 0.0)
        wabs_up, wabs_ma, wabs_bh = wabs_up * grow, wabs_ma * grow, wabs_bh * grow
    start = min(c.first - 1, lower.first)
    stop = max(c.last, lower.last)
    size = stop - start + 1

    def place(v, first):
        out = np.zeros(size)
        out[first - start: first - start + v.size] = v
        return out

    return BucketState(
        h=h,
        start=start,
        pa=place(pa, c.first - 1),
        a_inf=a_inf,
        ma=place(la, lower.first),
        bh=place(lb, lower.first),
        d=lower.inf_a,
        rel_up=rel_up,
        abs_up=abs_up,
        rel_ma=rel_ma,
        abs_ma=abs_ma,
        rel_bh=rel_bh,
        abs_bh=abs_bh,
        dropped=lower.top_a + lower.bottom_a,
        err_inf=err_inf,
        theta=theta if w_up is not None else 0.0,
        wabs_up=wabs_up if w_up is not None else math.inf,
        wabs_ma=wabs_ma if w_up is not None else math.inf,
        wabs_bh=wabs_bh if w_up is not None else math.inf,
    )


def coarsen(s: BucketState, rounding: str = "split") -> BucketState:
    """Square the factor (``h -> 2h``): the paper's squaring of buckets, done soundly.

    New bucket ``m`` (losses ``((m-1)2h, m*2h]``) takes old buckets ``2m-1`` and ``2m`` -- for
    *every* ``m``, negative ones included (the public reference implementation pairs the lower
    half differently, which rounds negative losses down; see docs/buckets.md).  Lower pair:
    masses add, ``bh`` re-scaled to the new top.  Upper pair: an atom at an even index stays; an
    atom at odd index ``2m-1`` (halfway between ``(m-1)2h`` and ``m*2h``) is split between them
    keeping its A- and B-mass: ``1/(1+e^{-h})`` of it up, ``1/(1+e^{h})`` down ("up" rounding:
    all of it up).
    """
    h = s.h
    lo = s.start
    hi = s.start + s.size - 1
    new_lo = lo // 2  # floor
    new_hi = -((-hi) // 2)  # ceil
    m = new_hi - new_lo + 1
    # positions of old indices 2*new_lo - 1 ... 2*new_hi (+1 for the upper spill)
    base = 2 * new_lo - 1
    length = 2 * m + 2
    def spread(v):
        out = np.zeros(length)
        out[lo - base: lo - base + v.size] = v
        return out

    pa2 = spread(s.pa)
    odd = pa2[0:2 * m:2]  # old index 2k-1 for k = new_lo..new_hi
    even = pa2[1:2 * m:2]  # old index 2k
    odd_next = pa2[2:2 * m + 1:2]  # old index 2k+1
    if rounding == "split":
        w_up = 1.0 / (1.0 + math.exp(-h))
        w_down = 1.0 / (1.0 + math.exp(h))
        pa = even + odd * w_up + odd_next * w_down
        extra_rel = 8 * U
    else:
        pa = even + odd
        extra_rel = U
    ma2 = spread(s.ma)
    bh2 = spread(s.bh)
    ma = ma2[0:2 * m:2] + ma2[1:2 * m:2]
    # old bh_i = B_i e^{(i - T)h}; new bh_m = B_m e^{(2m - 2T')h} with T' = floor(T/2), r = T - 2T':
    # bh_m = bh_{2m-1} e^{(1+r)h} + bh_{2m} e^{rh}
    t_new = s.bshift // 2
    r = s.bshift - 2 * t_new
    eh = math.exp((1 + r) * h)
    with np.errstate(over="ignore", invalid="ignore"):  # huge h: see _lower_in_range
        bh = bh2[0:2 * m:2] * eh + (bh2[1:2 * m:2] * math.exp(h) if r else bh2[1:2 * m:2])
    return _lower_in_range(replace(
        s,
        h=2 * h,
        start=new_lo,
        pa=pa,
        ma=ma,
        bh=bh,
        rel_up=s.rel_up + extra_rel,
        rel_ma=s.rel_ma + U,
        rel_bh=s.rel_bh + 6 * U,
        abs_bh=s.abs_bh * eh * (1 + 4 * U),
        coarsenings=s.coarsenings + 1,
        bshift=t_new,
        # an atom of pa moves by at most h (weight at most times e^{θh}); the shifted labels
        # of ma and bh move up by (1 + r)h or rh, and bh's values grow by e^{(1+r)h} or e^{rh}
        wabs_up=s.wabs_up * _grow(s.theta * h),
        wabs_ma=s.wabs_ma * _grow(s.theta * (1 + r) * h),
        wabs_bh=s.wabs_bh * _grow((1 + s.theta) * (1 + r) * h),
    ))


#: Scaled B-masses above this are given up (see :func:`_lower_in_range`): products of two must
#: stay far inside the float range in the FFTs.
MAX_SCALED_B = 1e100


def _grow(x: float) -> float:
    """An upper bound on ``e^x`` (``x`` >= 0) as a float (for scaling error bounds)."""
    with np.errstate(over="ignore"):
        return math.exp(x) * (1 + (ELEMENTARY_ULPS + 4) * U * (1 + x)) if x < 700 else math.inf


def _lower_in_range(s: BucketState) -> BucketState:
    """On very coarse grids (h of hundreds) the scaled B-masses of a bucket can exceed the float
    range (``e^{2h}`` factors when coarsening).  Then the lower pair is given up -- its error
    bounds become infinite, so the lower bounds are the trivial 0 (sound) -- instead of letting
    an overflow reach the FFTs."""
    if s.bh.size and not float(np.max(s.bh)) <= MAX_SCALED_B:  # also catches inf / nan
        return replace(s, bh=np.zeros_like(s.bh), rel_bh=math.inf, abs_bh=math.inf,
                       wabs_bh=math.inf)
    return s


def refine(s: BucketState) -> BucketState:
    """Halve the grid step (``h -> h/2``) exactly: the upper pair's atoms at ``i h`` are the
    same atoms at ``2i (h/2)``, and the lower pair's buckets keep their events and labels
    (``i h = 2i (h/2)``, so ``bh`` is unchanged; ``bshift`` doubles).  Nothing is rounded: it is
    the same pair on a finer grid, so a coarse state (e.g. a lattice mechanism on its lattice)
    can meet a finer one without coarsening it (:func:`odp.buckets.compose.align`)."""
    size = 2 * s.size - 1

    def spread(v: np.ndarray) -> np.ndarray:
        out = np.zeros(size)
        out[::2] = v
        return out

    return replace(s, h=s.h / 2, start=2 * s.start, pa=spread(s.pa), ma=spread(s.ma),
                   bh=spread(s.bh), bshift=2 * s.bshift)


def renormalize(s: BucketState) -> BucketState:
    """Shift the lower pair's label (``bshift``) by the integer ``t`` nearest to
    ``ln(sum(bh) / sum(ma)) / h`` and scale ``bh`` by ``e^{-t h}``, so that ``bh`` stays
    comparable to ``ma`` however far the labels drift (module docstring, "Label shift").

    Error bounds: ``bh`` is multiplied by the float ``c = fl(e^{-t h}) = e^{-t h}(1 + η)``,
    ``|η| <= ELEMENTARY_ULPS u (1 + |t h|)``, and each product is rounded once more (``u``), so
    the relative bound becomes ``(1 + rel)(1 + |η|)(1 + u) - 1`` and the absolute one is scaled
    by ``e^{-t h}(1 + |η|)(1 + u)``."""
    sb, sm = float(s.bh.sum()), float(s.ma.sum())
    if not (sb > 0 and sm > 0 and math.isfinite(sb) and math.isfinite(s.abs_bh)):
        return s
    t = round(math.log(sb / sm) / s.h)
    if t == 0 or abs(t * s.h) > 700:  # e^{-th} would leave the float range: keep as is
        return s
    th = t * s.h
    eta = ELEMENTARY_ULPS * U * (1.0 + abs(th))
    grow = (1.0 + eta) * (1.0 + U) * (1.0 + 4 * U)
    # labels move down by th: weights times e^{-θth} (ma, bh), values times e^{-th} (bh)
    wx = -(1.0 + s.theta) * th
    wm = -s.theta * th
    return replace(
        s,
        bh=s.bh * math.exp(-th),
        rel_bh=((1.0 + s.rel_bh) * grow - 1.0) * (1.0 + 4 * U),
        abs_bh=s.abs_bh * math.exp(-th) * grow * (1.0 + 4 * U),
        bshift=s.bshift + t,
        wabs_bh=(s.wabs_bh * math.exp(wx) * grow * (1 + (ELEMENTARY_ULPS + 4) * U * (1 + abs(wx)))
                 if abs(wx) < 700 else math.inf),
        wabs_ma=(s.wabs_ma * math.exp(wm) * (1 + (ELEMENTARY_ULPS + 4) * U * (1 + abs(wm)))
                 if abs(wm) < 700 else math.inf),
    )


def _pairwise_sum_rel(n: int) -> float:
    """Relative error bound of numpy's pairwise summation of ``n`` non-negative floats."""
    return (math.log2(max(n, 2)) + 2) * U


def fit(
    s: BucketState,
    *,
    buckets: int,
    tail: float,
    noise: float = 0.0,
    rounding: str = "split",
) -> BucketState:
    """Bring the state into a window of at most ``buckets`` grid points.

    Tails with (computed) A-mass at most ``tail`` are cut: in the upper pair the top tail goes to
    the infinity bucket and the bottom tail is moved up to the window's lowest point; in the lower
    pair both are dropped.  If the rest does not fit, the factor is squared (:func:`coarsen`) and
    we try again.  ``noise`` is a level below which entries are treated as round-off when
    *deciding* where to cut (the cut itself always moves every entry, noise included).

    When the state does not fit, the window kept is the span between the cuts — with a tilt,
    up to where the weighted round-off bound certifies the top cut (:func:`_weighted_top`) —
    not padded to ``buckets``: the entries beyond the cuts hold at most ``tail`` of mass each
    side, and the next convolution is shorter (its cost grows with the operands' lengths).
    """
    while True:
        n = s.size
        w = s.pa + s.ma
        if n <= buckets:  # fits: only trim exact zeros at both ends
            nz = np.flatnonzero(w > 0)
            if nz.size == 0:
                return s
            return _cut(s, int(nz[0]), int(nz[-1]))
        # where do the tails exceed the budget? (entries at noise level do not count)
        above = w > noise
        if not above.any():  # nothing above the noise level: keep the window's first entries
            return _cut(s, 0, buckets - 1)
        first, last = int(above.argmax()), n - 1 - int(above[::-1].argmax())
        hi = n - 1 - _tail_count(w[::-1], above[::-1], tail)  # mass above hi <= tail
        hi = min(max(hi, first), n - 1)
        lo = _tail_count(w, above, tail)  # mass below lo <= tail
        lo = max(min(lo, last, hi), 0)
        span = hi - lo + 1
        if span > buckets:
            s = coarsen(s, rounding)
            noise = noise * 2
            continue
        return _cut(s, lo, min(n - 1, lo + buckets - 1, max(hi, _weighted_top(s, tail))))


def _tail_count(w: np.ndarray, counted: np.ndarray, tail: float) -> int:
    """The number of leading entries of ``w`` (non-negative; only those ``counted``) whose
    computed running sum stays at most ``tail`` — ``searchsorted(cumsum(w·counted), tail,
    "right")`` — summing only as far as needed (the tails cut are tiny, so a short prefix
    usually decides)."""
    n = w.size
    k = 256
    while True:
        k = min(k, n)
        cum = np.cumsum(np.where(counted[:k], w[:k], 0.0))
        if k == n or cum[-1] > tail:
            return int(np.searchsorted(cum, tail, side="right"))
        k *= 8


def _weighted_top(s: BucketState, tail: float) -> int:
    """The lowest position above which a tilted state's weighted round-off bound ``wabs_up``
    certifies at most ``tail`` of error (:func:`_cut` moves the entries above the window into
    ``a_inf`` with that error bound), so that cutting there costs no more than the tail's own
    mass; ``-1`` for a state without a tilt (its bound does not depend on the position)."""
    if not (s.theta > 0 and math.isfinite(s.wabs_up) and s.wabs_up > tail > 0):
        return -1
    # weight e^{θ(ℓ − c)} >= wabs_up / tail  <=>  ℓ >= c + ln(wabs_up / tail) / θ
    label = s.wref + math.log(s.wabs_up / tail) / s.theta
    return int(math.ceil(label / s.h)) - s.start


def _cut(s: BucketState, first: int, last: int) -> BucketState:
    if first == 0 and last == s.size - 1:
        return s
    pa = s.pa[first:last + 1].copy()
    top = float(s.pa[last + 1:].sum())
    bottom = float(s.pa[:first].sum())
    pa[0] += bottom
    dropped = float(s.ma[last + 1:].sum() + s.ma[:first].sum())
    rel_sum = _pairwise_sum_rel(s.size)
    err_inf = s.err_inf
    if last < s.size - 1:  # exact mass above the window joins a_inf: its error is the atoms'
        cut_err = s.abs_up  # the absolute errors of the atoms above the window: at most abs_up,
        if math.isfinite(s.wabs_up):  # or, tilted, their weights are at least the next label's
            w = tilt_weights(np.array([(s.start + last + 1) * s.h]), s.theta, s.wref)
            if w is not None and w[0] > 0:
                x = abs((s.start + last + 1) * s.h)
                cut_err = min(cut_err, s.wabs_up / float(w[0])
                              * (1 + weight_error(x, s.theta, s.wref)) * (1 + 4 * U))
        top_exact = (top + cut_err) / (1.0 - s.rel_up) if s.rel_up < 1 else math.inf
        err_inf = (err_inf + s.rel_up * top_exact + cut_err + (rel_sum + 2 * U) * (top + s.a_inf)) \
            * (1 + 4 * U)
    wabs_up = s.wabs_up
    if first > 0 and math.isfinite(wabs_up):  # errors of the bottom entries move up to `first`
        w = tilt_weights(np.array([(s.start + first) * s.h]), s.theta, s.wref)
        wabs_up = (wabs_up + s.abs_up * float(w[0]) * (1 + weight_error(
            abs((s.start + first) * s.h), s.theta, s.wref))) * (1 + 4 * U) if w is not None \
            else math.inf
    return replace(
        s,
        start=s.start + first,
        pa=pa,
        wabs_up=wabs_up,
        a_inf=s.a_inf + top,
        ma=s.ma[first:last + 1].copy(),
        bh=s.bh[first:last + 1].copy(),
        rel_up=s.rel_up + rel_sum,
        truncated=s.truncated + top,
        dropped=s.dropped + dropped,
        err_inf=err_inf,
    )
