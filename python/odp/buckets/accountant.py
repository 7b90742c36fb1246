"""Accountant interface for privacy buckets: compose mechanisms, ask for ε(δ) or δ(ε) bounds.

Follows the field's convention (dp-accounting's ``compose(event, count)``,
``get_epsilon(delta)``, ``get_delta(epsilon)``): ``get_epsilon`` and ``get_delta`` return a
float that is a rigorous **upper** bound (rounded up), the number you may spend.  The exact
picture is ``get_epsilon_interval`` / ``get_delta_interval``: an :class:`Interval`
``(lower, upper)`` of exact rationals that contains the true value (``lower`` tells you how much
tighter any analysis could possibly be).

Long work is estimated first (:meth:`PrivacyBucketsAccountant.estimate`, :mod:`odp.limits`): a
composition whose estimated memory or time exceeds ``max_memory`` / ``max_seconds`` is refused
before anything is allocated.  Progress is shown on a terminal (:mod:`odp.progress`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from ..budget import format_fraction, parse_positive_int, to_fraction
from ..errors import InvalidBudget, InvalidParameter
from ..floats import float_down, float_up, round_down_significant, round_up_significant
from ..limits import Estimate, Limits, ResourceLimitExceeded
from ..progress import ProgressArg, Reporter
from ..rational import short_number
from ..readable import Interval as Interval  # re-exported: odp's one interval of bounds
from .compose import compose as compose_states
from ._numerics import U
from .compose import U_EXTENDED, convolutions, needs_extended, self_compose
from .mechanisms import PLDMechanism, as_sequence
from .predict import cell_mean_losses, chernoff_epsilon, chernoff_log_delta
from .readoff import (delta_lower, delta_upper, epsilon_lower, epsilon_upper, infinity_floor,
                      round_off_low, round_off_up)
from .state import BucketState, fit, from_cells

#: Default number of buckets in the window (the paper's ``n``).
DEFAULT_BUCKETS = 2**15

#: Default A-mass allowed in each truncated tail per step (upper bound: sent to the infinity
#: bucket, so it adds at most this much to δ per step; lower bound: dropped).
DEFAULT_TAIL_MASS = 1e-16


PRECISIONS = ("auto", "extended", "double")

#: The scout of :meth:`PrivacyBucketsAccountant._scouted` has ``buckets // SCOUT_FACTOR``
#: buckets, and runs only when that is at least ``SCOUT_MIN_BUCKETS``.
SCOUT_FACTOR = 8
SCOUT_MIN_BUCKETS = 512

#: ``precision="auto"`` recomputes the whole composition in extended precision when the FFT
#: round-off bound of the states is more than this share of the δ a query is about (the bound
#: would be visibly, or entirely, round-off): e.g. Gaussian σ = 1, k = 10 at δ = 1e-12, where
#: double precision leaves ~4e-12 of round-off and no finite upper end.
ROUNDOFF_SHARE = 0.01

#: With tilted double-precision states (the default), ``precision="auto"`` recomputes with the
#: early convolutions in extended precision when the round-off counted at the query is more than
#: this share of the interval's own width (in δ) there: the round-off would visibly widen it.
ROUNDOFF_WIDTH_SHARE = 0.25

#: Largest grid step ``h = ln f`` the numerics support (``expm1(h)`` must stay finite); a pair
#: whose loss range needs a coarser grid for the window is refused with a clear message.
MAX_GRID_STEP = 700.0

#: The largest ``factor`` option (``e**MAX_GRID_STEP``, rounded down) and the smallest ``f - 1``
#: (any positive step works: the grid is coarsened to fit the window; this one keeps ``ln f`` a
#: normal float).
MAX_FACTOR = math.floor(math.exp(MAX_GRID_STEP))
MIN_GRID_STEP = 1e-300

# Cost model (measured on a 2-core machine, 2024; see docs/buckets.md "Limits"): one product of
# two states of n buckets takes about SECONDS_PER_BUCKET_LOG * n * log2(n) seconds in extended
# precision (a third of that in double) and the peak working memory is about BYTES_PER_BUCKET * n;
# building a discrete pair costs about SECONDS_PER_ATOM and BYTES_PER_ATOM per support point.
SECONDS_PER_BUCKET_LOG = 5e-8
BYTES_PER_BUCKET = 800
SECONDS_PER_ATOM = 2e-7
BYTES_PER_ATOM = 200


def _query_number(value: Any, name: str) -> Fraction:
    """ε or δ of a query: parsed exactly; a float means its exact binary value (no warning:
    the float the caller passed *is* the number asked about)."""
    x = to_fraction(value, name=name, warn=False)
    if x < 0:
        raise InvalidBudget(f"{name} must be >= 0, got {format_fraction(x)}")
    if name == "delta" and x >= 1:
        raise InvalidBudget(f"delta must be < 1, got {format_fraction(x)}")
    return x


def _check_options(buckets: int, tail_mass: float, rounding: str, factor: Any) -> float | None:
    if buckets < 16:
        raise InvalidParameter(f"buckets must be an integer >= 16, got {buckets!r}")
    if not (isinstance(tail_mass, (int, float)) and 0 < tail_mass < 1e-3):
        raise InvalidParameter(f"tail_mass must be a number in (0, 1e-3), got {tail_mass!r}")
    if rounding not in ("split", "up"):
        raise InvalidParameter(f"rounding must be 'split' or 'up', got {rounding!r}")
    if factor is None:
        return None
    f = to_fraction(factor, name="factor")
    shown = repr(factor) if len(repr(factor)) <= 40 else f"{float(f):.17g}"
    if f <= 1:
        raise InvalidParameter(f"factor must be > 1, got {shown}")
    if f > MAX_FACTOR:
        raise InvalidParameter(
            f"factor must be at most e^{MAX_GRID_STEP:g} (about {MAX_FACTOR:.3g}), got {shown}: "
            "the numerics need the bucket factor f and f - 1 to stay finite floats")
    if f - 1 < Fraction(MIN_GRID_STEP):
        raise InvalidParameter(
            f"factor must be at least 1 + {MIN_GRID_STEP:g}, got {shown}: the grid step ln f "
            "would underflow double precision")
    # ln f from the exact f - 1, so factors within 1e-16 of 1 keep their own step
    return math.log1p(float(f - 1)) if f < 2 else math.log(float(f))


def _grid_anchor(mechanisms: Sequence[PLDMechanism], ln_factor: float | None) -> float:
    if ln_factor is not None:
        return ln_factor
    for m in mechanisms:
        if m.lattice() is not None:
            return m.lattice()
    for m in mechanisms:
        if m.anchor() is not None:
            return m.anchor()
    return 1.0


def _initial_step(
    mech: PLDMechanism, *, reverse: bool, anchor: float, buckets: int, tail: float, min_step: float | None
) -> float:
    """The finest grid ``anchor * 2**j`` on which the mechanism's loss range fits the window."""
    lo, hi = mech.loss_range(reverse, tail)
    width = max(hi - lo, 0.0)
    j = math.ceil(math.log2(max(width, 1e-300) / (buckets - 4) / anchor)) if width > 0 else 0
    if min_step is not None:
        j = max(j, math.ceil(math.log2(min_step / anchor) - 1e-9))
    h = math.ldexp(anchor, j)
    while width / h > buckets - 4:
        h *= 2
    return h


#: One run's privacy loss above this (from the exact parameters) is beyond what the float
#: computations of a pair can represent (squares of it must stay finite too); a bound on it below
#: ``MIN_LOSS_SCALE`` would underflow to subnormal floats.
MAX_LOSS_SCALE = Fraction(10) ** 300
MIN_LOSS_SCALE = Fraction(1, 10**300)

#: The largest |privacy loss| of one run the grid represents: grid indices and grid losses
#: ``i * h`` must stay exact in double precision.
MAX_LOSS = 2.0**40

#: The most runs one accountant composes: the relative error bound of the upper pair grows
#: about 5e-11 per run (0.05 at 1e9 runs, 0.7 at 1e10, where the upper bound becomes infinite).
MAX_COMPOSITIONS = 2**32

#: Standard deviations of the composed loss the window must hold (``tail_mass`` 1e-16 per step
#: cuts at about 8), for the up-front range check of :meth:`PrivacyBucketsAccountant.compose`.
LOSS_SPREAD = 8.0


def _describe_short(mech: PLDMechanism) -> str:
    return ", ".join(f"{k}={short_number(v)}" for k, v in mech.describe().items())


def _too_wide(mech: PLDMechanism, reverse: bool, buckets: int, tail: float) -> InvalidParameter:
    lo, hi = mech.loss_range(reverse, tail)
    lattice = mech.lattice()
    need = (math.ceil((hi - lo) / MAX_GRID_STEP) + 4
            if math.isfinite(hi - lo) and hi > lo and not (lattice and lattice > MAX_GRID_STEP)
            else None)
    more = (f"--buckets/buckets >= {need:.3g} would fit it, but " if need and need < 2**40
            else "")
    desc = _describe_short(mech)
    return InvalidParameter(
        f"privacy buckets cannot represent {desc}: one run's privacy loss lies in "
        f"[{lo:.3g}, {hi:.3g}], too wide for {buckets} buckets (the bucket factor e^h would "
        f"overflow); {more}a mechanism with such losses gives essentially no privacy "
        f"(epsilon of order {max(abs(lo), abs(hi)):.3g})")


def build_cells(
    mech: PLDMechanism,
    *,
    reverse: bool,
    anchor: float,
    buckets: int,
    tail: float,
    min_step: float | None,
) -> tuple[Any, Any]:
    """The buckets (upper, lower :class:`~odp.buckets.cells.Cells`) of one mechanism in one
    direction, on the finest grid its loss range fits."""
    lat = mech.lattice()
    if min_step is None and lat is not None and lat == anchor:
        min_step = lat  # a lattice is represented exactly; no need for a finer grid
    h = _initial_step(mech, reverse=reverse, anchor=anchor, buckets=buckets, tail=tail, min_step=min_step)
    if h > MAX_GRID_STEP:
        raise _too_wide(mech, reverse, buckets, tail)
    return mech.cells_both(h, reverse, tail)


def build_state(
    mech: PLDMechanism,
    *,
    reverse: bool,
    anchor: float,
    buckets: int,
    tail: float,
    rounding: str,
    min_step: float | None,
    theta: float = 0.0,
) -> BucketState:
    """The bucketed state of one mechanism in one direction (``theta``: the tilt of its
    weighted error bounds, :mod:`odp.buckets.state`)."""
    upper, lower = build_cells(mech, reverse=reverse, anchor=anchor, buckets=buckets, tail=tail,
                               min_step=min_step)
    state = from_cells(upper, rounding, lower=lower, theta=theta)
    return fit(state, buckets=buckets, tail=tail, rounding=rounding)


def cell_losses(c: Any) -> tuple[np.ndarray, np.ndarray]:
    """One run's finite privacy losses under A (bucket tops) and their masses, from its
    buckets (subnormal masses dropped): only for choosing the tilt (any tilt is sound)."""
    loss = (c.first + np.arange(c.a.size)) * c.h
    mass = np.maximum(c.a, 0.0) + np.maximum(c.atom, 0.0)
    keep = mass >= 1e-290  # subnormal floats would make the sums many times slower
    return loss[keep], mass[keep]


#: ``tilt="auto"`` chooses, among θ = 2^(k/4), the one whose Chernoff bound on the composed
#: loss reaches ``TILT_LEVEL`` at the smallest ε: at that ε the tilted round-off is about
#: relative to a δ of that size.  θ stays below TILT_MAX_EXPONENT / (largest one-run loss).
TILT_LEVEL = 1e-4
TILT_GRID = tuple(2.0 ** (k / 4) for k in range(-32, 29))
TILT_MAX_EXPONENT = 600.0


def choose_tilt(items: Sequence[tuple[np.ndarray, np.ndarray, int]]) -> float:
    """The tilt for a composition of ``items`` = ``(losses, masses, count)`` per mechanism:
    the θ of :data:`TILT_GRID` minimising the Chernoff ε at :data:`TILT_LEVEL`,
    ``(Σ count·ln E[e^{θL}] − ln TILT_LEVEL) / θ`` (0 when none is usable)."""
    log_level = math.log(TILT_LEVEL)
    items = [(loss, mass, n) for loss, mass, n in items if loss.size]
    if not items:
        return 0.0
    top = max(float(np.max(np.abs(loss))) for loss, _, _ in items)
    grid = [t for t in TILT_GRID if t * top <= TILT_MAX_EXPONENT]
    if not grid:
        return 0.0
    seen: dict[int, float] = {}

    def eps(i: int) -> float:
        if i not in seen:
            theta, total = grid[i], 0.0
            for loss, mass, n in items:
                x = theta * loss
                m = float(np.max(x))
                total += n * (m + math.log(float((mass * np.exp(x - m)).sum())))  # no BLAS
            seen[i] = (total - log_level) / theta
        return seen[i]

    # (K(θ) − ln level)/θ with K convex is quasi-convex in θ (its derivative's numerator
    # θK' − K + ln level grows with θ): the first i where it stops decreasing is the minimum
    lo, hi = 0, len(grid) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if eps(mid + 1) < eps(mid):
            lo = mid + 1
        else:
            hi = mid
    return grid[lo] if math.isfinite(eps(lo)) else 0.0


@dataclass
class PrivacyBucketsAccountant:
    """Privacy buckets (Meiser & Mohammadi, CCS 2018) as an accountant.

    >>> acc = PrivacyBucketsAccountant()
    >>> acc.compose(Gaussian(sigma=1), count=1000)            # doctest: +SKIP
    >>> acc.get_epsilon(1e-5)                                  # doctest: +SKIP
    633.9303                                                   # upper bound, rounded up
    >>> acc.get_epsilon_interval("1e-5")                       # doctest: +SKIP
    Interval(lower=633.929519..., upper=633.930302...)         # contains 633.92985

    Options: ``buckets`` (window size ``n``; accuracy grows with it, time about linearly),
    ``factor`` (the finest grid ``f``; by default chosen per mechanism and squared as needed),
    ``tail_mass`` (A-mass cut per tail per step), ``rounding`` (``"split"``, the tight sound
    default, or ``"up"``, the paper's pure pessimistic rounding), ``precision`` of the FFTs
    (``"auto"``: extended precision for the early, error-amplifying steps, and for all of them
    once a query's δ is so small that double's round-off would matter, see
    :data:`ROUNDOFF_SHARE`; ``"extended"``: all steps, ~3x slower, for the tightest bounds at
    tiny δ; ``"double"``: fastest).

    ``tilt`` (``"auto"``, a number θ >= 0 or ``None``) sets the tilt of the weighted round-off
    bounds (:mod:`odp.buckets.state`); ``"auto"`` chooses it, once, from the composition
    composed at the first query, or from ``tilt_for`` (mechanisms or ``(mechanism, count)``
    pairs) when given — for an accountant that will be extended and queried repeatedly, pass
    the whole composition it will reach.  ``scout`` bounds the dominated direction of an
    asymmetric composition with a coarse window only (docs/buckets.md, "Scout");
    ``dominant`` (``False``: A ‖ B, ``True``: B ‖ A) is the direction expected to decide the
    answer (e.g. :attr:`odp.buckets.predict.Prediction.reverse`), else the scout guesses it
    from a Chernoff estimate — a wrong one costs time, never soundness.

    Limits and progress: the pending composition is estimated before it runs
    (:meth:`estimate`) and refused with :class:`~odp.limits.ResourceLimitExceeded` if it needs
    more than ``max_memory`` (bytes or ``"8G"``; default 4 GiB) or ``max_seconds`` (default
    600); ``limits`` gives both at once (the CLI passes its flags' names).  ``progress``: see
    :mod:`odp.progress` (a bar on a terminal by default).
    """

    buckets: int = DEFAULT_BUCKETS
    factor: Any = None
    tail_mass: float = DEFAULT_TAIL_MASS
    rounding: str = "split"
    precision: str = "auto"
    tilt: Any = "auto"
    tilt_for: Any = None
    scout: bool = True
    dominant: bool | None = None
    max_memory: Any = None
    max_seconds: Any = None
    progress: ProgressArg = None
    limits: Limits | None = None
    _ledger: list = field(default_factory=list, init=False, repr=False)
    _fwd: BucketState | None = field(default=None, init=False, repr=False)
    _rev: BucketState | None = field(default=None, init=False, repr=False)
    _done: int = field(default=0, init=False, repr=False)
    _anchor: float | None = field(default=None, init=False, repr=False)
    _seconds: float = field(default=0.0, init=False, repr=False)
    _mode: str = field(default="tilted", init=False, repr=False)
    _escalation: str = field(default="", init=False, repr=False)
    _thetas: tuple[float, float] | None = field(default=None, init=False, repr=False)
    _single: dict = field(default_factory=dict, init=False, repr=False)
    _cell_cache: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self):
        self.buckets = parse_positive_int(self.buckets, name="buckets")
        self._ln_factor = _check_options(self.buckets, self.tail_mass, self.rounding, self.factor)
        if self.precision not in PRECISIONS:
            raise InvalidParameter(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
        if self.tilt not in ("auto", None) and not (
                isinstance(self.tilt, (int, float)) and not isinstance(self.tilt, bool)
                and 0 <= self.tilt < 1e6):
            raise InvalidParameter(f"tilt must be 'auto', None or a number >= 0, got {self.tilt!r}")
        self.limits = Limits.coerce(self.limits, max_memory=self.max_memory,
                                    max_seconds=self.max_seconds)

    # ------------------------------------------------------------------ composing
    def compose(self, mechanism: PLDMechanism, count: int = 1) -> "PrivacyBucketsAccountant":
        """Record ``count`` independent runs of ``mechanism`` (composition is not adaptive in the
        mechanism's parameters; the pairs are fixed in advance).  Returns ``self``."""
        if not isinstance(mechanism, PLDMechanism):
            raise InvalidParameter(
                "expected a mechanism such as Gaussian(sigma=1) or Laplace(scale=10), "
                f"got {mechanism!r}"
            )
        ((mech, n),) = as_sequence([(mechanism, count)])
        self._check_representable(mech)
        self._check_composed_range([*self._ledger, (mech, n)])
        self._ledger.append((mech, n))
        return self

    def _check_composed_range(self, ledger: list[tuple[PLDMechanism, int]]) -> None:
        """Refuse, before anything is computed, a composition whose privacy loss (about
        ``Σ k·mean`` with spread ``±LOSS_SPREAD·sqrt(Σ k·sd²)``) cannot be represented: beyond
        :data:`MAX_LOSS`, or too wide for the window even at the largest grid step."""
        mean = spread = 0.0
        for mech, n in ledger:
            m, sd = mech.loss_moments(self.tail_mass)
            mean += n * m
            spread += n * sd * sd
        spread = LOSS_SPREAD * math.sqrt(spread)
        total = sum(n for _, n in ledger)
        what = " + ".join(f"{n} x {mech.describe()['mechanism']}" for mech, n in ledger)
        if total > MAX_COMPOSITIONS:
            raise InvalidParameter(
                f"privacy buckets cannot compose {what}: {total:.3g} runs is more than the "
                f"{MAX_COMPOSITIONS:.3g} it supports (the relative error bounds of the bucket "
                "masses, about 5e-11 per run, compound with every composition and would make "
                "the bounds useless); ask for fewer compositions")
        if mean - spread > MAX_LOSS:
            raise InvalidParameter(
                f"privacy buckets cannot compose {what}: the composed privacy loss is about "
                f"{mean:.3g} (± {spread:.3g}), above the largest loss the grid represents "
                f"({MAX_LOSS:.3g}); such a composition gives essentially no privacy (epsilon of "
                f"order {mean:.3g}); ask for fewer compositions than {total}")
        need = math.ceil(2 * spread / MAX_GRID_STEP) + 4
        if need > self.buckets:
            raise InvalidParameter(
                f"privacy buckets cannot compose {what}: the composed privacy loss spreads over "
                f"about {2 * spread:.3g} (mean {mean:.3g}), which needs about {need:.3g} buckets "
                f"at the largest grid step ({MAX_GRID_STEP:g}); --buckets/buckets is "
                f"{self.buckets}.  Such a composition gives essentially no privacy (epsilon of "
                f"order {mean:.3g}); ask for fewer compositions than {total}")

    def _check_representable(self, mech: PLDMechanism) -> None:
        """Refuse, before anything is recorded, a pair that is too large to build or whose loss
        range cannot fit the window (e.g. a Gaussian with σ = 1e-10)."""
        scale = mech.loss_scale()
        if scale is not None and scale > MAX_LOSS_SCALE:
            raise InvalidParameter(
                f"privacy buckets cannot represent {_describe_short(mech)}: one run's privacy "
                f"loss is of order up to {short_number(scale)}, beyond double precision; a "
                "mechanism with such losses gives essentially no privacy")
        if scale is not None and 0 < scale < MIN_LOSS_SCALE:
            raise InvalidParameter(
                f"privacy buckets cannot represent {_describe_short(mech)}: one run's privacy "
                f"loss is at most {short_number(scale)}, below the smallest loss scale the "
                "float grid resolves (1e-300)")
        items = mech.work_items(self.tail_mass)
        if items:
            self.limits.check(Estimate(
                f"privacy buckets for {mech.describe()['mechanism']}", items * SECONDS_PER_ATOM,
                items * BYTES_PER_ATOM, knobs=f"{items:.3g} support points"))
        for reverse in ((False,) if mech.symmetric else (False, True)):
            lo, hi = mech.loss_range(reverse, self.tail_mass)
            if max(abs(lo), abs(hi)) > MAX_LOSS:
                raise InvalidParameter(
                    f"privacy buckets cannot represent {_describe_short(mech)}: one run's privacy "
                    f"loss reaches {max(abs(lo), abs(hi)):.3g}, above the largest the grid "
                    f"represents ({MAX_LOSS:.3g}: grid indices and losses must stay exact in "
                    "double precision); a mechanism with such losses gives essentially no "
                    "privacy")
            lattice = mech.lattice()
            if not (math.isfinite(lo) and math.isfinite(hi)) or \
                    (hi - lo) / (self.buckets - 4) > MAX_GRID_STEP or \
                    (lattice is not None and lattice > MAX_GRID_STEP):
                raise _too_wide(mech, reverse, self.buckets, self.tail_mass)

    def estimate(self) -> Estimate:
        """Estimated time and peak memory of the composition not computed yet (nothing runs).
        See the cost model constants of this module and docs/buckets.md ("Limits")."""
        pending = self._ledger[self._done:]
        asymmetric = any(not m.symmetric for m, _ in self._ledger)
        directions = 2 if asymmetric else 1
        steps = self._steps(pending, asymmetric)
        n = self.buckets
        per_step = SECONDS_PER_BUCKET_LOG * n * math.log2(n)
        if self.effective_precision == "double":
            per_step /= 3
        atoms = sum(m.work_items(self.tail_mass) for m, _ in pending) * directions
        seconds = steps * per_step + (len(pending) * directions) * per_step / 4 \
            + atoms * SECONDS_PER_ATOM
        memory = max(BYTES_PER_BUCKET * n * (2 if asymmetric else 1),
                     atoms and max(m.work_items(self.tail_mass) for m, _ in pending) * BYTES_PER_ATOM)
        total = sum(c for _, c in pending)
        return Estimate(f"privacy buckets ({total} compositions, {n} buckets)", seconds, memory,
                        knobs=f"{n} buckets, {steps} convolutions")

    def _steps(self, pending: list, asymmetric: bool) -> int:
        directions = 2 if asymmetric else 1
        steps = 0
        for i, (_, count) in enumerate(pending):
            steps += convolutions(count)
            if i > 0 or self._done > 0:
                steps += 1  # joined to the composition so far
        return steps * directions

    @property
    def ledger(self) -> list[tuple[PLDMechanism, int]]:
        """The composed mechanisms, in order, with their counts."""
        return list(self._ledger)

    def _update(self) -> None:
        pending = self._ledger[self._done:]
        if not pending:
            return
        self.limits.check(self.estimate())
        t0 = time.perf_counter()
        asymmetric = any(not m.symmetric for m, _ in self._ledger)
        directions = (False, True) if asymmetric else (False,)
        anchor, fwd, rev, thetas = self._run(directions, self._fwd, self._rev, self._done)
        self._anchor, self._fwd = anchor, fwd
        self._rev = rev if asymmetric else None
        if thetas[0] > 0:
            self._thetas = thetas
        self._done = len(self._ledger)
        self._seconds += time.perf_counter() - t0

    def _cells(self, i: int | PLDMechanism, reverse: bool, anchor: float) -> tuple[Any, Any]:
        """The buckets of ledger entry ``i`` (or of a mechanism) in one direction, built once
        per mechanism (kept while the accountant lives: a recomputation in another precision,
        and later entries of the same mechanism, reuse them)."""
        mech = self._ledger[i][0] if isinstance(i, int) else i
        use_rev = reverse and not mech.symmetric
        try:
            key: Any = (mech, use_rev, anchor)
            hash(key)
        except TypeError:  # an unhashable mechanism: one entry per ledger position
            key = (i if isinstance(i, int) else id(mech), use_rev, anchor)
        if key not in self._cell_cache:
            self._cell_cache[key] = build_cells(mech, reverse=use_rev, anchor=anchor,
                                                buckets=self.buckets, tail=self.tail_mass,
                                                min_step=self._ln_factor)
        return self._cell_cache[key]

    def _run(self, wanted: tuple[bool, ...], fwd: BucketState | None, rev: BucketState | None,
             done: int) -> tuple[float, BucketState | None, BucketState | None,
                                 tuple[float, float]]:
        """Compose ``ledger[done:]`` onto ``fwd``/``rev`` in the ``wanted`` directions
        (``False``: A ‖ B, ``True``: B ‖ A); returns ``(anchor, fwd, rev, tilts)``.  Nothing of
        the accountant changes (the caller stores what it keeps)."""
        pending = self._ledger[done:]
        what = " + ".join(f"{n} x {m.describe()['mechanism']}" for m, n in pending)
        anchor = self._anchor
        if anchor is None:
            anchor = _grid_anchor([m for m, _ in self._ledger], self._ln_factor)
        total: int | None = sum(n for _, n in self._ledger)
        if self.effective_precision == "extended":
            total = 2**62  # every step counts as error-amplifying
        elif self.effective_precision == "double":
            total = None
        opts = dict(buckets=self.buckets, tail=self.tail_mass, rounding=self.rounding)
        asymmetric = any(not m.symmetric for m, _ in self._ledger)
        if asymmetric and rev is None and fwd is not None:
            rev = fwd  # everything so far was symmetric
        directions = tuple(d for d in ((False, True) if asymmetric else (False,)) if d in wanted)
        steps = self._steps(pending, asymmetric) * len(directions) // (2 if asymmetric else 1)
        thetas = self._thetas
        tilted = self.precision == "auto" and self._mode == "tilted" and self.tilt is not None
        if tilted and thetas is None:  # chosen once, from tilt_for or the whole ledger so far
            horizon: list[tuple[Any, int]] = (
                [(i, n) for i, (_, n) in enumerate(self._ledger)] if self.tilt_for is None
                else as_sequence(list(self.tilt_for)))
            if self.tilt == "auto":
                chosen = []
                for reverse in (False, True):
                    if reverse not in directions:
                        chosen.append(0.0)
                        continue
                    items = [(*cell_losses(self._cells(i, reverse, anchor)[0]), n)
                             for i, n in horizon]
                    chosen.append(choose_tilt(items))
                thetas = (chosen[0], chosen[1])
            else:
                thetas = (float(self.tilt), float(self.tilt))
        if not tilted or thetas is None or not all(
                thetas[1 if d else 0] > 0 for d in directions):
            thetas = (0.0, 0.0)
        if thetas[0] > 0 or thetas[1] > 0:
            total = None  # every step in double precision, the tilt bounds the round-off
        # new states are built in local variables: a failure leaves the accountant unchanged
        # a float overflow or an invalid operation is an error here, never a RuntimeWarning
        with Reporter(self.progress, steps, "privacy buckets", unit="conv") as bar, \
                np.errstate(over="raise", invalid="raise", divide="ignore", under="ignore"):
            try:
                for i, (_mech, n) in enumerate(pending, start=done):
                    for reverse in directions:
                        theta = thetas[1 if reverse else 0]
                        upper, lower = self._cells(i, reverse, anchor)
                        single = fit(from_cells(upper, self.rounding, lower=lower, theta=theta),
                                     buckets=self.buckets, tail=self.tail_mass,
                                     rounding=self.rounding)
                        comp = self_compose(single, n, total=total, on_step=bar.advance, **opts)
                        current = rev if reverse else fwd
                        if current is not None:
                            ext = needs_extended(current.count + comp.count, total)
                            comp = compose_states(current, comp, extended=ext, **opts)
                            bar.advance()
                        if reverse:
                            rev = comp
                        else:
                            fwd = comp
            except (OverflowError, FloatingPointError) as exc:
                raise InvalidParameter(
                    f"privacy buckets overflowed while composing {what} ({exc}): the "
                    "privacy loss grew beyond what the grid can represent; such a composition "
                    "gives essentially no privacy (ask for fewer compositions)") from None
        return anchor, fwd, rev, thetas if thetas is not None else (0.0, 0.0)

    def _states(self) -> list[BucketState]:
        if not self._ledger:
            raise InvalidParameter("nothing composed yet: call compose(mechanism, count) first")
        self._update()
        states = [self._fwd]
        if self._rev is not None:
            states.append(self._rev)
        return states

    @property
    def effective_precision(self) -> str:
        """The precision the states are computed in: ``precision``, except that ``"auto"``
        becomes ``"extended"`` once a query needed it (:data:`ROUNDOFF_SHARE`)."""
        return "extended" if self._mode == "extended" else self.precision

    def _single_ok(self, level: float, up: float, low: float) -> bool:
        """Whether the full single-direction state's round-off at the query is small enough
        that :meth:`_escalated` would not recompute it (else the full path decides)."""
        states = [v[1] for k, v in self._single.items()
                  if k != "scout" and v[0] == len(self._ledger)]
        if not states or not all(math.isfinite(x) for x in (up, low)):
            return False
        return not self._too_rough(states, level, [(up + low) / 2] * len(states))

    def _too_rough(self, states: list[BucketState], level: float, points: list[float]) -> bool:
        """Whether the round-off counted at the query's ε (``points``, one per state) exceeds
        :data:`ROUNDOFF_SHARE` of the δ ``level`` or, for a tilted state,
        :data:`ROUNDOFF_WIDTH_SHARE` of the interval's own width in δ there."""
        for st, e in zip(states, points):
            if not math.isfinite(e):
                continue
            err = max(round_off_up(st, e), round_off_low(st, e))
            if err > ROUNDOFF_SHARE * level:
                return True
            if st.theta > 0:
                width = delta_upper(st, e) - delta_lower(st, e)
                if err > ROUNDOFF_WIDTH_SHARE * width:
                    return True
        return False

    def _recompute(self, mode: str, level: float) -> list[BucketState] | None:
        saved = (self._fwd, self._rev, self._done, self._mode)
        self._mode, self._fwd, self._rev, self._done = mode, None, None, 0
        try:
            return self._states()
        except ResourceLimitExceeded as exc:
            self._fwd, self._rev, self._done, self._mode = saved
            self._escalation = f"{mode} precision needed at delta {level:.3g} but skipped: {exc}"
            return None

    def _escalated(self, states: list[BucketState], level: float,
                   points: list[float]) -> list[BucketState] | None:
        """Under ``precision="auto"``, more precise states when the round-off is too large for
        the query (δ ``level``, ε ``points`` per state); ``None`` when not needed or not possible
        (then the answer, sound but wider, stands; a recomputation above the limits is skipped
        and noted in :meth:`report`).  Two steps: tilted double precision (the default,
        :mod:`odp.buckets.state`) → the early, error-amplifying convolutions in extended
        precision (when :meth:`_too_rough`) → all of them in extended precision (when the
        round-off still exceeds :data:`ROUNDOFF_SHARE` of ``level`` and extended precision could
        bring it below ``level``)."""
        if self.precision != "auto" or self._mode == "extended" or self._escalation:
            return None
        out = None
        if self._mode == "tilted" and any(st.theta > 0 for st in states) and \
                self._too_rough(states, level, points):
            out = self._recompute("classic", level)
            if out is None:
                return None
            states = out
        if self._mode != "tilted" or out is not None or not any(st.theta > 0 for st in states):
            err = max(max(round_off_up(st, e), round_off_low(st, e))
                      for st, e in zip(states, points) if math.isfinite(e)) if any(
                math.isfinite(e) for e in points) else 0.0
            plain = max(max(st.abs_up, st.abs_ma + st.abs_bh) for st in states)
            if err > ROUNDOFF_SHARE * level and plain * (U_EXTENDED / U) < level:
                return self._recompute("extended", level) or out
        return out

    # ------------------------------------------------------------------ scouting
    def _scouted(self, per_direction, at, level_of, chernoff) -> tuple[list[float], list[float]] | None:
        """The query's per-direction bounds with the dominated direction only bracketed by a
        coarse scout, or ``None`` (then the caller computes both directions in full).

        The direction that decides the answer is guessed from the Chernoff estimate of each
        direction's composed loss (``chernoff(items)`` on one run's buckets per mechanism, from a
        copy of this accountant with ``buckets // SCOUT_FACTOR`` buckets: larger means more
        privacy loss).  The other direction is composed only in that coarse copy, the guessed
        one with the full window.  When the other's coarse upper bound lies below the full
        lower bound of the guessed one, the answer ``[max lowers, max uppers]`` is the same as
        with both in full (the other's true value, and so its full bounds, lie below the
        dominant one's lower bound); otherwise ``None``.  A wrong guess only costs time, never
        soundness.  ``per_direction(state)`` gives ``(lower, upper)`` for one direction's state,
        ``at(bounds)`` the query's ε for them and ``level_of(bounds)`` its δ.  Only for a fresh,
        asymmetric composition under ``precision="auto"`` whose states have not been computed
        yet.

        The coarse state also predicts whether the tilted round-off bounds will do at full
        resolution: if its round-off at the query exceeds :data:`ROUNDOFF_WIDTH_SHARE` of its
        width divided by ``SCOUT_FACTOR²`` (the discretisation is second order in the grid
        step), the full computation runs with the early convolutions in extended precision at
        once (the first escalation step of :meth:`_escalated`, without first paying for a tilted
        run that would be discarded).  Should the full tilted state's round-off still widen its
        interval (:meth:`_too_rough`), that direction alone is recomputed so."""
        if not (self.scout and self._fwd is None and self.precision == "auto"
                and self._mode == "tilted" and self.buckets >= SCOUT_FACTOR * SCOUT_MIN_BUCKETS
                and any(not m.symmetric for m, _ in self._ledger)):
            return None
        n = len(self._ledger)
        cached = self._single.get("scout")
        if cached is None or cached[0] != n:
            self.limits.check(self.estimate())
            scout = PrivacyBucketsAccountant(
                buckets=self.buckets // SCOUT_FACTOR, factor=self.factor,
                tail_mass=self.tail_mass, rounding=self.rounding, precision=self.precision,
                tilt=self.tilt, scout=False, limits=self.limits, progress=False)
            scout._ledger = list(self._ledger)
            t0 = time.perf_counter()
            anchor = _grid_anchor([m for m, _ in self._ledger], scout._ln_factor)
            if self.dominant is not None:
                dom = bool(self.dominant)
            else:
                keys = [chernoff([(*cell_mean_losses(scout._cells(i, reverse, anchor)[1]),
                                   count) for i, (_, count) in enumerate(self._ledger)])
                        for reverse in (False, True)]
                dom = keys[1] > keys[0]
            _, fwd, rev, _ = scout._run((not dom,), None, None, 0)
            cached = self._single["scout"] = (n, dom, fwd if dom else rev)
            self._seconds += time.perf_counter() - t0
        _, dom, coarse = cached
        # only the other direction's upper bound matters (below the dominant lower bound, its
        # lower bound cannot be the answer's): 0, a valid lower bound, stands for it
        other = (0.0, per_direction(coarse, upper_only=True)[1])
        if self._single.get(dom, (None,))[0] != n and coarse.theta > 0:
            # the coarse state predicts whether the tilt will do at full resolution (the two
            # directions' composed losses are alike): its round-off at the query against its
            # width divided by SCOUT_FACTOR² (the discretisation is second order)
            e = at((other[1], other[1]))
            if math.isfinite(e):
                err = max(round_off_up(coarse, e), round_off_low(coarse, e))
                width = delta_upper(coarse, e) - delta_lower(coarse, e)
                if err > ROUNDOFF_WIDTH_SHARE * width / SCOUT_FACTOR**2:
                    self._mode = "classic"
        if self._single.get(dom, (None,))[0] != n:
            t0 = time.perf_counter()
            _, fwd, rev, _ = self._run((dom,), None, None, 0)
            self._seconds += time.perf_counter() - t0
            self._single[dom] = (n, rev if dom else fwd)
        state = self._single[dom][1]
        full = per_direction(state)
        if state.theta > 0 and self._too_rough([state], level_of(full), [at(full)]):
            self._mode = "classic"  # the tilt will not do here: extended early steps
            t0 = time.perf_counter()
            _, fwd, rev, _ = self._run((dom,), None, None, 0)
            self._seconds += time.perf_counter() - t0
            self._single[dom] = (n, rev if dom else fwd)
            full = per_direction(self._single[dom][1])
        if not other[1] < full[0]:
            return None
        return [full[0], other[0]], [full[1], other[1]]

    # ------------------------------------------------------------------ queries
    def get_delta_interval(self, epsilon: Any) -> Interval:
        """Interval ``(lower, upper)`` of exact rationals containing the tight δ(ε) of the
        composition (the larger of the two directions).  ``upper`` is rounded up, ``lower``
        down.  A float ``epsilon`` means its exact binary value."""
        eps = _query_number(epsilon, "epsilon")
        if not self._ledger:
            raise InvalidParameter("nothing composed yet: call compose(mechanism, count) first")
        scouted = self._scouted(lambda st, upper_only=False: (
                                    0.0 if upper_only else delta_lower(st, float_up(eps)),
                                    delta_upper(st, float_down(eps))),
                                lambda b: float(eps), lambda b: b[1],
                                lambda items: chernoff_log_delta(items, float(eps)))
        if scouted is not None and self._single_ok(max(scouted[1]), float_down(eps),
                                                    float_up(eps)):
            lows, ups = scouted
            return Interval(round_down_significant(max(lows)),
                            min(Fraction(1), round_up_significant(max(ups))))
        states = self._states()
        up = max(delta_upper(s, float_down(eps)) for s in states)
        finer = self._escalated(states, up, [float(eps)] * len(states))
        if finer is not None:
            states = finer
            up = max(delta_upper(s, float_down(eps)) for s in states)
        low = max(delta_lower(s, float_up(eps)) for s in states)
        return Interval(round_down_significant(low), min(Fraction(1), round_up_significant(up)))

    def get_delta(self, epsilon: Any) -> float:
        """A rigorous upper bound on δ(ε), as a float rounded up (dp-accounting's convention);
        :meth:`get_delta_interval` gives the exact interval."""
        return float_up(self.get_delta_interval(epsilon).upper)

    def get_epsilon_interval(self, delta: Any) -> Interval:
        """Interval ``(lower, upper)`` of exact rationals containing the smallest ε with
        δ(ε) <= ``delta`` for the composition.  ``upper`` may be ``math.inf`` (no finite ε
        works).  A float ``delta`` such as ``1e-5`` means its exact binary value."""
        d = _query_number(delta, "delta")
        if d == 0:
            raise InvalidBudget(
                "delta must be > 0 for a numerical accountant (with delta = 0 the answer is the "
                "largest privacy loss; sum the ε of pure-DP mechanisms instead)"
            )
        if not self._ledger:
            raise InvalidParameter("nothing composed yet: call compose(mechanism, count) first")
        def bounds(st: BucketState, upper_only: bool = False) -> tuple[float, float]:
            up = epsilon_upper(st, float_down(d))
            return 0.0 if upper_only else epsilon_lower(st, float_up(d), hint=up), up

        scouted = self._scouted(bounds,
                                lambda b: (b[0] + b[1]) / 2, lambda b: float(d),
                                lambda items: chernoff_epsilon(items, float(d))[0])
        if scouted is not None and self._single_ok(float(d), max(scouted[1]),
                                                    max(scouted[0])):
            lows, ups = scouted
            up = max(ups)
            upper_s: Fraction | float = math.inf if up == math.inf else round_up_significant(up)
            return Interval(round_down_significant(max(lows)), upper_s)
        states = self._states()
        ups = [epsilon_upper(s, float_down(d)) for s in states]
        lows = [epsilon_lower(s, float_up(d), hint=u) for s, u in zip(states, ups)]
        finer = self._escalated(states, float(d), [(a + b) / 2 for a, b in zip(ups, lows)])
        if finer is not None:
            states = finer
            ups = [epsilon_upper(s, float_down(d)) for s in states]
            lows = [epsilon_lower(s, float_up(d), hint=u) for s, u in zip(states, ups)]
        up = max(ups)
        upper: Fraction | float = math.inf if up == math.inf else round_up_significant(up)
        return Interval(round_down_significant(max(lows)), upper)

    def no_finite_epsilon_reason(self, delta: Any) -> str:
        """Why :meth:`get_epsilon_interval` has no finite upper end at ``delta``: the true
        distinguishing mass exceeds it (then no finite ε exists), or only the bound's own
        infinity mass (tails cut off the window) and round-off bounds do."""
        d = _query_number(delta, "delta")
        text = short_number(format_fraction(d))
        states = self._states()
        distinguishing = max(s.d for s in states)  # a lower bound on the true mass
        if distinguishing > float_up(d):
            return (f"no finite epsilon has delta <= {text} for this composition: its "
                    f"distinguishing events (infinite privacy loss) have probability at least "
                    f"{distinguishing:.3g}; raise delta")
        worst = max(states, key=infinity_floor)
        return (f"no finite epsilon could be certified for delta <= {text}: the upper bound "
                f"stays at {infinity_floor(worst):.3g} for every epsilon (infinite-loss mass "
                f"{worst.a_inf:.3g}, of which distinguishing events {worst.d:.3g} and the rest "
                f"tails cut off the window; FFT round-off bound {worst.abs_up:.3g}); raise "
                "delta, lower tail_mass, or use precision='extended'")

    def get_epsilon(self, delta: Any) -> float:
        """A rigorous upper bound on the smallest ε with δ(ε) <= ``delta``, as a float rounded
        up (dp-accounting's convention; ``math.inf`` if none is finite).
        :meth:`get_epsilon_interval` gives the exact interval."""
        upper = self.get_epsilon_interval(delta).upper
        return math.inf if upper == math.inf else float_up(upper)

    def _answered_states(self) -> list[BucketState]:
        """The states that answered the last query, computing nothing new when the scout
        answered it (the dominant direction in full, the other one coarse); else
        :meth:`_states`."""
        n = len(self._ledger)
        scout = self._single.get("scout")
        if self._fwd is None and scout is not None and scout[0] == n and \
                self._single.get(scout[1], (None,))[0] == n:
            full = self._single[scout[1]][1]
            return [full, scout[2]] if not scout[1] else [scout[2], full]
        return self._states()

    def report(self) -> dict[str, Any]:
        """What was composed and the numerical state (grid, masses, error bounds, time) of the
        states that answered the last query (a direction the scout showed dominated: its coarse
        state, marked ``"scout": true``)."""
        states = self._answered_states()
        scouted = self._fwd is None and "scout" in self._single
        directions = [s.summary() for s in states]
        if scouted and len(directions) == 2:
            directions[0 if self._single["scout"][1] else 1]["scout"] = True
        return {
            "mechanisms": [dict(m.describe(), count=n) for m, n in self._ledger],
            "compositions": sum(n for _, n in self._ledger),
            "options": {
                "buckets": self.buckets,
                "factor": None if self.factor is None else str(self.factor),
                "tail_mass": self.tail_mass,
                "rounding": self.rounding,
                "precision": self.precision,
            },
            "precision_used": self.effective_precision,
            **({"precision_note": self._escalation} if self._escalation else {}),
            "directions": directions,
            "seconds": self._seconds,
        }


def _accountant(mechanisms: Sequence[Any], options: dict[str, Any]) -> PrivacyBucketsAccountant:
    acc = PrivacyBucketsAccountant(**options)
    items = as_sequence(list(mechanisms))
    if not items:
        raise InvalidParameter("mechanisms must not be empty")
    for mech, n in items:
        acc.compose(mech, n)
    return acc


def composition_delta_upper(mechanisms: Sequence[Any], epsilon: Any, **options: Any) -> Fraction:
    """Rigorous upper bound, rounded up to a rational, on δ(ε) of the (non-adaptive, in-order)
    composition of ``mechanisms`` (each a :class:`PLDMechanism` or a ``(PLDMechanism, count)`` pair).
    ``options`` are those of :class:`PrivacyBucketsAccountant`."""
    return _accountant(mechanisms, options).get_delta_interval(epsilon).upper


def composition_epsilon_upper(mechanisms: Sequence[Any], delta: Any, **options: Any) -> Fraction:
    """Rigorous upper bound, rounded up to a rational, on the smallest ε with δ(ε) <= ``delta``
    for the composition of ``mechanisms``.  Raises :class:`InvalidParameter` if there is no
    finite one (``delta`` at or below the composition's distinguishing/infinity mass)."""
    acc = _accountant(mechanisms, options)
    upper = acc.get_epsilon_interval(delta).upper
    if upper == math.inf:
        raise InvalidParameter(acc.no_finite_epsilon_reason(delta))
    return upper
