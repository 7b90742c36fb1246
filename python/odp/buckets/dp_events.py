"""dp-accounting interoperability: a privacy-buckets accountant from a ``DpEvent`` tree.

Google's ``dp-accounting`` describes what a training run did as a tree of ``DpEvent`` objects
(e.g. ``SelfComposedDpEvent(PoissonSampledDpEvent(0.01, GaussianDpEvent(1.1)), 10_000)`` for
DP-SGD).  :func:`from_dp_event` turns such a tree into a
:class:`~odp.buckets.accountant.PrivacyBucketsAccountant`, so the same description gets odp's
two-sided bound::

    import dp_accounting
    from odp.buckets import from_dp_event

    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)), 10_000)
    from_dp_event(event).get_epsilon_interval("1e-5")   # contains the tight epsilon

Supported events (neighbouring relation: add or remove one record, dp-accounting's default):

* ``GaussianDpEvent(noise_multiplier)`` -> :class:`~odp.buckets.Gaussian` with σ =
  ``noise_multiplier`` (sensitivity 1);
* ``LaplaceDpEvent(noise_multiplier)`` -> :class:`~odp.buckets.Laplace` with b =
  ``noise_multiplier``;
* ``PoissonSampledDpEvent(sampling_probability, event)`` with a Gaussian or Laplace ``event``
  -> :class:`~odp.buckets.PoissonSubsampled` (probability 0: nothing is released);
* ``SelfComposedDpEvent(event, count)``, ``ComposedDpEvent(events)`` -> composition (counts
  multiply; equal mechanisms are composed together);
* ``NoOpDpEvent`` -> nothing.

Every other event is refused by its class name with :class:`~odp.errors.InvalidParameter`.
In particular ``SampledWithoutReplacementDpEvent`` and ``SampledWithReplacementDpEvent``
(fixed-size batches, e.g. shuffling the data and cutting it into batches) are **not** Poisson
sampling: the Poisson analysis does not bound them, and this module refuses rather than
pretending.  dp-accounting's floats are taken at their exact binary value (the numbers
dp-accounting itself computes with).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..errors import InvalidParameter
from .accountant import PrivacyBucketsAccountant
from .mechanisms import Gaussian, Laplace, PLDMechanism
from .subsampled import PoissonSubsampled

__all__ = ["from_dp_event", "mechanisms_from_dp_event"]

_INSTALL = ("from_dp_event needs Google's dp-accounting package: install the [dp-accounting] "
            "extra of odp-accounting (or: pip install dp-accounting)")

_FIXED_SIZE = (
    "{name} draws fixed-size batches (e.g. shuffling the data and cutting it into batches): "
    "that is not Poisson sampling, whose batches have random size; the Poisson-subsampled "
    "analysis does not bound it and odp has no bound for it, so it is refused")


def _dp_accounting() -> Any:  # Any: the dp_accounting module
    try:
        import dp_accounting  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise InvalidParameter(_INSTALL) from None
    return dp_accounting


def _exact(value: Any, name: str) -> Fraction:
    """A dp-accounting parameter (a float, usually) at its exact value."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise InvalidParameter(f"{name} must be a number, got {value!r}")
    try:
        return Fraction(value)
    except (ValueError, OverflowError):
        raise InvalidParameter(f"{name} must be finite, got {value!r}") from None


def _noise(event: Any, kind: str) -> PLDMechanism:
    nm = _exact(event.noise_multiplier, f"{kind} noise_multiplier")
    if nm <= 0:
        raise InvalidParameter(
            f"{type(event).__name__} with noise_multiplier {event.noise_multiplier!r}: no noise "
            "means no finite privacy loss (epsilon is infinite for every delta < 1)")
    return Gaussian(sigma=nm) if kind == "gaussian" else Laplace(scale=nm)


def mechanisms_from_dp_event(event: Any) -> list[tuple[PLDMechanism, int]]:
    """The ``[(mechanism, count), ...]`` a ``DpEvent`` tree composes (see the module
    docstring); equal mechanisms are merged, in order of first appearance."""
    dpa = _dp_accounting()
    counts: dict[Any, int] = {}
    order: list[Any] = []

    def add(mech: PLDMechanism, count: int) -> None:
        key = tuple(sorted(mech.describe().items(), key=str))
        if key not in counts:
            counts[key] = 0
            order.append((key, mech))
        counts[key] += count

    def walk(ev: Any, times: int) -> None:
        name = type(ev).__name__
        if isinstance(ev, dpa.NoOpDpEvent):
            return
        if isinstance(ev, dpa.GaussianDpEvent):
            add(_noise(ev, "gaussian"), times)
        elif isinstance(ev, dpa.LaplaceDpEvent):
            add(_noise(ev, "laplace"), times)
        elif isinstance(ev, dpa.PoissonSampledDpEvent):
            q = _exact(ev.sampling_probability, "sampling_probability")
            if not 0 <= q <= 1:
                raise InvalidParameter(
                    f"PoissonSampledDpEvent sampling_probability must be in [0, 1], got "
                    f"{ev.sampling_probability!r}")
            inner = ev.event
            if isinstance(inner, dpa.NoOpDpEvent) or q == 0:
                return  # nothing about any record is released
            if isinstance(inner, dpa.GaussianDpEvent):
                base = _noise(inner, "gaussian")
            elif isinstance(inner, dpa.LaplaceDpEvent):
                base = _noise(inner, "laplace")
            else:
                raise InvalidParameter(
                    f"PoissonSampledDpEvent of {type(inner).__name__} is not supported: odp "
                    "subsamples GaussianDpEvent and LaplaceDpEvent only (a sample shared by "
                    "several releases is not their composition)")
            add(PoissonSubsampled(base, q), times)
        elif isinstance(ev, dpa.SelfComposedDpEvent):
            count = ev.count
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise InvalidParameter(
                    f"SelfComposedDpEvent count must be an integer >= 0, got {count!r}")
            if count:
                walk(ev.event, times * count)
        elif isinstance(ev, dpa.ComposedDpEvent):
            for sub in ev.events:
                walk(sub, times)
        elif isinstance(ev, (dpa.SampledWithoutReplacementDpEvent,
                             dpa.SampledWithReplacementDpEvent)):
            raise InvalidParameter(_FIXED_SIZE.format(name=name))
        else:
            raise InvalidParameter(
                f"{name} is not supported by odp.buckets.from_dp_event (supported: "
                "GaussianDpEvent, LaplaceDpEvent, PoissonSampledDpEvent of those, "
                "SelfComposedDpEvent, ComposedDpEvent, NoOpDpEvent)")

    if not isinstance(event, dpa.DpEvent):
        raise InvalidParameter(f"expected a dp_accounting DpEvent, got {type(event).__name__}")
    walk(event, 1)
    return [(mech, counts[key]) for key, mech in order]


def from_dp_event(event: Any, **options: Any) -> PrivacyBucketsAccountant:
    """A :class:`~odp.buckets.accountant.PrivacyBucketsAccountant` that has composed
    ``event`` (a dp-accounting ``DpEvent``; see the module docstring).  ``options`` are the
    accountant's (``buckets``, ``precision``, ``max_seconds``, ...).  Ask it
    ``get_epsilon_interval(delta)`` (both bounds) or ``get_epsilon(delta)`` (the upper one)."""
    items = mechanisms_from_dp_event(event)
    if not items:
        raise InvalidParameter(
            "the DpEvent releases nothing (only NoOpDpEvent, zero counts or sampling "
            "probability 0): its epsilon is 0 at every delta")
    acc = PrivacyBucketsAccountant(**options)
    for mech, count in items:
        acc.compose(mech, count)
    return acc
