"""``odp.buckets.from_dp_event`` with the real dp-accounting package."""

from __future__ import annotations

import sys
from fractions import Fraction

import pytest

from odp.buckets import (
    Gaussian,
    Laplace,
    PoissonSubsampled,
    PrivacyBucketsAccountant,
    from_dp_event,
)
from odp.buckets.dp_events import mechanisms_from_dp_event
from odp.errors import InvalidParameter

dpa = pytest.importorskip("dp_accounting")


def dpsgd(q=0.01, sigma=1.1, steps=1000):
    return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)


def test_dpsgd_event_is_the_subsampled_gaussian_at_the_floats_exact_values():
    ((mech, count),) = mechanisms_from_dp_event(dpsgd())
    assert count == 1000
    assert mech == PoissonSubsampled(Gaussian(Fraction(1.1)), Fraction(0.01))
    iv = from_dp_event(dpsgd(), buckets=8192).get_epsilon_interval("1e-5")
    direct = PrivacyBucketsAccountant(buckets=8192).compose(mech, 1000).get_epsilon_interval("1e-5")
    assert iv == direct


def test_the_interval_agrees_with_dp_accountings_own_pld():
    """dp-accounting's PLD (pessimistic, connect-the-dots) is an upper estimate: it must not be
    below our lower end, and it agrees with our interval to its discretisation."""
    from dp_accounting.pld import pld_privacy_accountant

    event = dpsgd(steps=1000)
    peer = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-3)
    peer.compose(event)
    theirs = peer.get_epsilon(1e-5)
    iv = from_dp_event(event).get_epsilon_interval("1e-5")
    assert float(iv.lower) <= theirs
    assert theirs - float(iv.upper) < 1e-2  # vdi 1e-3: a few thousandths pessimistic at most
    assert iv.width < 1e-4


def test_composed_events_flatten_and_merge_counts():
    inner = dpa.PoissonSampledDpEvent(0.25, dpa.LaplaceDpEvent(2.0))
    event = dpa.ComposedDpEvent([
        dpa.SelfComposedDpEvent(dpa.ComposedDpEvent([dpa.GaussianDpEvent(3.0), inner]), 4),
        dpa.GaussianDpEvent(3.0),
        dpa.NoOpDpEvent(),
        dpa.SelfComposedDpEvent(inner, 0),
        dpa.PoissonSampledDpEvent(0.0, dpa.GaussianDpEvent(0.5)),  # releases nothing
    ])
    assert mechanisms_from_dp_event(event) == [
        (Gaussian(3), 5), (PoissonSubsampled(Laplace(2), Fraction(1, 4)), 4)]
    acc = from_dp_event(event)
    assert [n for _, n in acc.ledger] == [5, 4]
    lo, up = acc.get_epsilon_interval("1e-6")
    assert 0 < lo <= up


@pytest.mark.parametrize("event, reason", [
    (dpa.SampledWithoutReplacementDpEvent(1000, 10, dpa.GaussianDpEvent(1.0)),
     r"^SampledWithoutReplacementDpEvent draws fixed-size batches .*not Poisson sampling"),
    (dpa.SampledWithReplacementDpEvent(1000, 10, dpa.GaussianDpEvent(1.0)),
     r"^SampledWithReplacementDpEvent draws fixed-size batches"),
    (dpa.ZCDpEvent(0.5), r"^ZCDpEvent is not supported"),
    (dpa.RandomizedResponseDpEvent(0.5, 2), r"^RandomizedResponseDpEvent is not supported"),
    (dpa.dp_event.DiscreteLaplaceDpEvent(1.0, 1), r"^DiscreteLaplaceDpEvent is not supported"),
    (dpa.NonPrivateDpEvent(), r"^NonPrivateDpEvent is not supported"),
    (dpa.PoissonSampledDpEvent(0.1, dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(1.0), 3)),
     r"PoissonSampledDpEvent of SelfComposedDpEvent is not supported"),
    (dpa.GaussianDpEvent(0.0), r"noise_multiplier 0.0: no noise"),
    (dpa.PoissonSampledDpEvent(1.5, dpa.GaussianDpEvent(1.0)), r"must be in \[0, 1\]"),
    (dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(1.0), -1), r"count must be an integer >= 0"),
    (dpa.NoOpDpEvent(), r"releases nothing"),
    ("gaussian", r"expected a dp_accounting DpEvent, got str"),
])
def test_other_events_are_refused_by_name(event, reason):
    with pytest.raises(InvalidParameter, match=reason):
        from_dp_event(event)


def test_without_dp_accounting_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "dp_accounting", None)  # import fails
    with pytest.raises(InvalidParameter, match=r"install the \[dp-accounting\] extra"):
        from_dp_event(object())
