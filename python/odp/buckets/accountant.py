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
from .readoff import delta_lower, delta_upper, epsilon_lower, epsilon_upper, infinity_floor
from .state import BucketState, fit, from_cells

#: Default number of buckets in the window (the paper's ``n``).
DEFAULT_BUCKETS = 2**15

#: Default A-mass allowed in each truncated tail per step (upper bound: sent to the infinity
#: bucket, so it adds at most this much to δ per step; lower bound: dropped).
DEFAULT_TAIL_MASS = 1e-16


PRECISIONS = ("auto", "extended", "double")

#: ``precision="auto"`` recomputes the whole composition in extended precision when the FFT
#: round-off bound of the states is more than this share of the δ a query is about (the bound
#: would be visibly, or entirely, round-off): e.g. Gaussian σ = 1, k = 10 at δ = 1e-12, where
#: double precision leaves ~4e-12 of round-off and no finite upper end.
ROUNDOFF_SHARE = 0.01

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


def build_state(
    mech: PLDMechanism,
    *,
    reverse: bool,
    anchor: float,
    buckets: int,
    tail: float,
    rounding: str,
    min_step: float | None,
) -> BucketState:
    """The bucketed state of one mechanism in one direction."""
    lat = mech.lattice()
    if min_step is None and lat is not None and lat == anchor:
        min_step = lat  # a lattice is represented exactly; no need for a finer grid
    h = _initial_step(mech, reverse=reverse, anchor=anchor, buckets=buckets, tail=tail, min_step=min_step)
    if h > MAX_GRID_STEP:
        raise _too_wide(mech, reverse, buckets, tail)
    upper, lower = mech.cells_both(h, reverse, tail)
    state = from_cells(upper, rounding, lower=lower)
    return fit(state, buckets=buckets, tail=tail, rounding=rounding)


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
    _all_extended: bool = field(default=False, init=False, repr=False)
    _escalation: str = field(default="", init=False, repr=False)

    def __post_init__(self):
        self.buckets = parse_positive_int(self.buckets, name="buckets")
        self._ln_factor = _check_options(self.buckets, self.tail_mass, self.rounding, self.factor)
        if self.precision not in PRECISIONS:
            raise InvalidParameter(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
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
        estimate = self.limits.check(self.estimate())
        t0 = time.perf_counter()
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
        fwd, rev = self._fwd, self._rev
        if asymmetric and rev is None and fwd is not None:
            rev = fwd  # everything so far was symmetric
        steps = self._steps(pending, asymmetric)
        # new states are built in local variables: a failure leaves the accountant unchanged
        # a float overflow or an invalid operation is an error here, never a RuntimeWarning
        with Reporter(self.progress, steps, "privacy buckets", unit="conv") as bar, \
                np.errstate(over="raise", invalid="raise", divide="ignore", under="ignore"):
            try:
                for mech, n in pending:
                    for reverse in ((False, True) if asymmetric else (False,)):
                        use_rev = reverse and not mech.symmetric
                        single = build_state(mech, reverse=use_rev, anchor=anchor, min_step=self._ln_factor,
                                             **opts)
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
                    f"privacy buckets overflowed while composing {estimate.what} ({exc}): the "
                    "privacy loss grew beyond what the grid can represent; such a composition "
                    "gives essentially no privacy (ask for fewer compositions)") from None
        self._anchor, self._fwd = anchor, fwd
        self._rev = rev if asymmetric else None
        self._done = len(self._ledger)
        self._seconds += time.perf_counter() - t0

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
        return "extended" if self._all_extended else self.precision

    def _escalated(self, states: list[BucketState], level: float) -> list[BucketState] | None:
        """Under ``precision="auto"``: when the FFT round-off bound of ``states`` exceeds
        :data:`ROUNDOFF_SHARE` of the δ ``level`` a query is about (and extended precision could
        bring it below ``level``), recompute everything in extended precision and return the new
        states.  ``None`` when not needed or not possible (then the double-precision answer,
        sound but wider, stands; a recomputation above the limits is skipped and noted in
        :meth:`report`)."""
        if self.precision != "auto" or self._all_extended or self._escalation:
            return None
        err = max(max(s.abs_up, s.abs_ma + s.abs_bh) for s in states)
        if not (err > ROUNDOFF_SHARE * level and err * (U_EXTENDED / U) < level):
            return None
        saved = (self._fwd, self._rev, self._done)
        self._all_extended, self._fwd, self._rev, self._done = True, None, None, 0
        try:
            return self._states()
        except ResourceLimitExceeded as exc:
            self._all_extended = False
            self._fwd, self._rev, self._done = saved
            self._escalation = f"extended precision needed at delta {level:.3g} but skipped: {exc}"
            return None

    # ------------------------------------------------------------------ queries
    def get_delta_interval(self, epsilon: Any) -> Interval:
        """Interval ``(lower, upper)`` of exact rationals containing the tight δ(ε) of the
        composition (the larger of the two directions).  ``upper`` is rounded up, ``lower``
        down.  A float ``epsilon`` means its exact binary value."""
        eps = _query_number(epsilon, "epsilon")
        states = self._states()
        up = max(delta_upper(s, float_down(eps)) for s in states)
        finer = self._escalated(states, up)
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
        states = self._states()
        states = self._escalated(states, float(d)) or states
        ups = [epsilon_upper(s, float_down(d)) for s in states]
        lows = [epsilon_lower(s, float_up(d)) for s in states]
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

    def report(self) -> dict[str, Any]:
        """What was composed and the numerical state (grid, masses, error bounds, time)."""
        states = self._states()
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
            "directions": [s.summary() for s in states],
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
