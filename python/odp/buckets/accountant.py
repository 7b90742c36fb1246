"""Accountant interface for privacy buckets: compose mechanisms, ask for ε(δ) or δ(ε) bounds.

Follows the field's convention (``compose(event, count)``, ``get_epsilon(delta)``,
``get_delta(epsilon)``), but every answer is an :class:`Interval` ``(lower, upper)`` of exact
rationals: the true value for the composed mechanisms lies in it.  ``upper`` is what you may
spend; ``lower`` tells you how much tighter any analysis could possibly be.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, NamedTuple, Sequence

from ..budget import format_fraction, parse_delta, parse_epsilon, parse_positive_int, to_fraction
from ..errors import InvalidBudget, InvalidParameter
from ..floats import float_down, float_up, round_down_significant, round_up_significant
from .compose import compose as compose_states
from .compose import needs_extended, self_compose
from .mechanisms import Mechanism, as_sequence
from .readoff import delta_lower, delta_upper, epsilon_lower, epsilon_upper
from .state import BucketState, fit, from_cells

#: Default number of buckets in the window (the paper's ``n``).
DEFAULT_BUCKETS = 2**15

#: Default A-mass allowed in each truncated tail per step (upper bound: sent to the infinity
#: bucket, so it adds at most this much to δ per step; lower bound: dropped).
DEFAULT_TAIL_MASS = 1e-16


class Interval(NamedTuple):
    """A closed interval ``[lower, upper]`` of exact rationals containing the true value.

    ``upper`` is ``math.inf`` when no finite bound exists (e.g. ε for a δ below the mass of
    distinguishing events).
    """

    lower: Fraction
    upper: Fraction | float

    @property
    def width(self) -> float:
        return float(self.upper) - float(self.lower)

    def __contains__(self, value: object) -> bool:  # type: ignore[override]
        try:
            v = to_fraction(value)  # type: ignore[arg-type]
        except InvalidBudget:
            return False
        return self.lower <= v and (self.upper == math.inf or v <= self.upper)

    def to_json(self) -> dict[str, Any]:
        up = self.upper
        return {
            "lower": str(self.lower),
            "upper": "inf" if up == math.inf else str(up),
            "lower_float": float(self.lower),
            "upper_float": float(up),
        }


PRECISIONS = ("auto", "extended", "double")


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
    if f <= 1:
        raise InvalidParameter(f"factor must be > 1, got {factor!r}")
    return math.log(float(f))


def _grid_anchor(mechanisms: Sequence[Mechanism], ln_factor: float | None) -> float:
    if ln_factor is not None:
        return ln_factor
    for m in mechanisms:
        if m.lattice() is not None:
            return m.lattice()  # type: ignore[return-value]
    for m in mechanisms:
        if m.anchor() is not None:
            return m.anchor()  # type: ignore[return-value]
    return 1.0


def _initial_step(
    mech: Mechanism, reverse: bool, anchor: float, buckets: int, tail: float, min_step: float | None
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


def build_state(
    mech: Mechanism,
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
    h = _initial_step(mech, reverse, anchor, buckets, tail, min_step)
    state = from_cells(
        mech.cells(h, reverse, tail, "upper"), rounding, lower=mech.cells(h, reverse, tail, "lower")
    )
    return fit(state, buckets, tail, rounding=rounding)


@dataclass
class PrivacyBucketsAccountant:
    """Privacy buckets (Meiser & Mohammadi, CCS 2018) as an accountant.

    >>> acc = PrivacyBucketsAccountant()
    >>> acc.compose(Gaussian(sigma=1), count=1000)            # doctest: +SKIP
    >>> acc.get_epsilon("1e-5")                                # doctest: +SKIP
    Interval(lower=Fraction(...), upper=Fraction(...))         # contains 633.93

    Options: ``buckets`` (window size ``n``; accuracy grows with it, time about linearly),
    ``factor`` (the finest grid ``f``; by default chosen per mechanism and squared as needed),
    ``tail_mass`` (A-mass cut per tail per step), ``rounding`` (``"split"``, the tight sound
    default, or ``"up"``, the paper's pure pessimistic rounding), ``precision`` of the FFTs
    (``"auto"``: extended precision for the early, error-amplifying steps; ``"extended"``: all
    steps, ~3x slower, for the tightest bounds at tiny δ; ``"double"``: fastest).
    """

    buckets: int = DEFAULT_BUCKETS
    factor: Any = None
    tail_mass: float = DEFAULT_TAIL_MASS
    rounding: str = "split"
    precision: str = "auto"
    _ledger: list = field(default_factory=list, init=False, repr=False)
    _fwd: BucketState | None = field(default=None, init=False, repr=False)
    _rev: BucketState | None = field(default=None, init=False, repr=False)
    _done: int = field(default=0, init=False, repr=False)
    _anchor: float | None = field(default=None, init=False, repr=False)
    _seconds: float = field(default=0.0, init=False, repr=False)

    def __post_init__(self):
        self.buckets = parse_positive_int(self.buckets, name="buckets")
        self._ln_factor = _check_options(self.buckets, self.tail_mass, self.rounding, self.factor)
        if self.precision not in PRECISIONS:
            raise InvalidParameter(f"precision must be one of {PRECISIONS}, got {self.precision!r}")

    # ------------------------------------------------------------------ composing
    def compose(self, mechanism: Mechanism, count: int = 1) -> "PrivacyBucketsAccountant":
        """Record ``count`` independent runs of ``mechanism`` (composition is not adaptive in the
        mechanism's parameters; the pairs are fixed in advance).  Returns ``self``."""
        if not isinstance(mechanism, Mechanism):
            raise InvalidParameter(
                "expected a mechanism such as Gaussian(sigma=1) or Laplace(scale=10), "
                f"got {mechanism!r}"
            )
        ((mech, n),) = as_sequence([(mechanism, count)])
        self._ledger.append((mech, n))
        return self

    @property
    def ledger(self) -> list[tuple[Mechanism, int]]:
        """The composed mechanisms, in order, with their counts."""
        return list(self._ledger)

    def _update(self) -> None:
        pending = self._ledger[self._done:]
        if not pending:
            return
        if not self._ledger:
            raise InvalidParameter("nothing composed yet: call compose(mechanism, count) first")
        t0 = time.perf_counter()
        if self._anchor is None:
            self._anchor = _grid_anchor([m for m, _ in self._ledger], self._ln_factor)
        total: int | None = sum(n for _, n in self._ledger)
        if self.precision == "extended":
            total = 2**62  # every step counts as error-amplifying
        elif self.precision == "double":
            total = None
        opts = dict(buckets=self.buckets, tail=self.tail_mass, rounding=self.rounding)
        asymmetric = any(not m.symmetric for m, _ in self._ledger)
        if asymmetric and self._rev is None and self._fwd is not None:
            self._rev = self._fwd  # everything so far was symmetric
        for mech, n in pending:
            for reverse in ((False, True) if asymmetric else (False,)):
                use_rev = reverse and not mech.symmetric
                single = build_state(
                    mech, use_rev, self._anchor, min_step=self._ln_factor, **opts
                )
                comp = self_compose(single, n, total=total, **opts)
                current = self._rev if reverse else self._fwd
                if current is not None:
                    ext = needs_extended(current.count + comp.count, total)
                    comp = compose_states(current, comp, extended=ext, **opts)
                if reverse:
                    self._rev = comp
                else:
                    self._fwd = comp
        if not asymmetric:
            self._rev = None
        self._done = len(self._ledger)
        self._seconds += time.perf_counter() - t0

    def _states(self) -> list[BucketState]:
        if not self._ledger:
            raise InvalidParameter("nothing composed yet: call compose(mechanism, count) first")
        self._update()
        states = [self._fwd]
        if self._rev is not None:
            states.append(self._rev)
        return states  # type: ignore[return-value]

    # ------------------------------------------------------------------ queries
    def get_delta(self, epsilon: Any) -> Interval:
        """Interval ``(lower, upper)`` containing the tight δ(ε) of the composition (the larger of
        the two directions).  ``upper`` is rounded up, ``lower`` down."""
        eps = parse_epsilon(epsilon)
        states = self._states()
        up = max(delta_upper(s, float_down(eps)) for s in states)
        low = max(delta_lower(s, float_up(eps)) for s in states)
        return Interval(round_down_significant(low), min(Fraction(1), round_up_significant(up)))

    def get_epsilon(self, delta: Any) -> Interval:
        """Interval ``(lower, upper)`` containing the smallest ε with δ(ε) <= ``delta`` for the
        composition.  ``upper`` may be ``math.inf`` (no finite ε works)."""
        d = parse_delta(delta)
        if d == 0:
            raise InvalidBudget(
                "delta must be > 0 for a numerical accountant (with delta = 0 the answer is the "
                "largest privacy loss; sum the ε of pure-DP mechanisms instead)"
            )
        states = self._states()
        ups = [epsilon_upper(s, float_down(d)) for s in states]
        lows = [epsilon_lower(s, float_up(d)) for s in states]
        up = max(ups)
        upper: Fraction | float = math.inf if up == math.inf else round_up_significant(up)
        return Interval(round_down_significant(max(lows)), upper)

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
    composition of ``mechanisms`` (each a :class:`Mechanism` or a ``(Mechanism, count)`` pair).
    ``options`` are those of :class:`PrivacyBucketsAccountant`."""
    return _accountant(mechanisms, options).get_delta(epsilon).upper


def composition_epsilon_upper(mechanisms: Sequence[Any], delta: Any, **options: Any) -> Fraction:
    """Rigorous upper bound, rounded up to a rational, on the smallest ε with δ(ε) <= ``delta``
    for the composition of ``mechanisms``.  Raises :class:`InvalidParameter` if there is no
    finite one (``delta`` at or below the composition's distinguishing/infinity mass)."""
    upper = _accountant(mechanisms, options).get_epsilon(delta).upper
    if upper == math.inf:
        raise InvalidParameter(
            f"no finite epsilon has delta <= {format_fraction(parse_delta(delta))} for this "
            "composition (its mass of infinite privacy loss is larger); raise delta or buckets"
        )
    return upper  # type: ignore[return-value]
