"""Only OdpError escapes: the public constructors and ``Accountant.run`` /
``charge`` / ``reserve`` fed huge, tiny, subnormal, NaN, infinite, negative and wrongly typed
values either work or raise an :class:`odp.OdpError` subclass — and a refused call moves no
budget and writes no ledger row."""

from __future__ import annotations

import decimal
import math
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import odp
from odp.errors import OdpError

NASTY_FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True),
    st.sampled_from([0.0, -0.0, 5e-324, 2.2250738585072014e-308, sys.float_info.max, 1e308,
                     1e-300, 1e300, float("nan"), float("inf"), -float("inf")]),
)
NASTY = st.one_of(
    NASTY_FLOATS,
    st.integers(min_value=-(10**400), max_value=10**400),
    st.sampled_from([2**63, -(2**63), 10**400, 0, -1, 1]),
    st.fractions(max_denominator=10**40),
    st.sampled_from([Fraction(1, 10**400), Fraction(10**400)]),
    st.sampled_from(["1e400", "1e-400", "abc", "", " ", "1/0", "nan", "-inf", "0x10", "-0",
                     "1e-6", "0.5", "1/3", "½"]),
    st.sampled_from([None, [], {}, (), object(), 1j, b"1", True, False, decimal.Decimal("NaN"),
                     decimal.Decimal("1e-400"), decimal.Decimal("-1"),
                     np.float64(1e308), np.float32("nan"), np.int64(-5), np.float16(0.1),
                     np.longdouble("1e-4000"), np.array([1.0])]),
)


def _q(data):
    return data


CONSTRUCTORS = {
    "Budget(ε)": lambda v: odp.Budget(v, 0),
    "Budget(δ)": lambda v: odp.Budget(1, v),
    "DP(ε)": lambda v: odp.DP(v),
    "DP(δ)": lambda v: odp.DP(1, v),
    "ODP(cost)": lambda v: odp.ODP(lambda r: "a", {"a": v}),
    "ODP(δ)": lambda v: odp.ODP(lambda r: "a", {"a": 1}, v),
    "ODP(costs)": lambda v: odp.ODP(lambda r: "a", v),
    "SubsetDP(ε)": lambda v: odp.SubsetDP("r", v),
    "Laplace(ε)": lambda v: odp.LaplaceMechanism(_q, epsilon=v),
    "Laplace(Δ)": lambda v: odp.LaplaceMechanism(_q, epsilon=1, sensitivity=v),
    "Laplace(g)": lambda v: odp.LaplaceMechanism(_q, epsilon=1, granularity=v),
    "Gaussian(σ)": lambda v: odp.GaussianMechanism(_q, epsilon=1, sigma=v),
    "Gaussian(ε)": lambda v: odp.GaussianMechanism(_q, epsilon=v, delta="1e-5"),
    "Gaussian(ε, σ)": lambda v: odp.GaussianMechanism(_q, epsilon=v, sigma=3),
    "Gaussian(δ)": lambda v: odp.GaussianMechanism(_q, epsilon=1, delta=v),
    "Gaussian(noise_multiplier)": lambda v: odp.GaussianMechanism(_q, epsilon=1,
                                                                  noise_multiplier=v),
    "Gaussian(Δ)": lambda v: odp.GaussianMechanism(_q, epsilon=1, sigma=2, sensitivity=v),
    "Gaussian(g)": lambda v: odp.GaussianMechanism(_q, epsilon=1, sigma=2, granularity=v),
    "RandomizedResponse(ε)": lambda v: odp.RandomizedResponse(_q, epsilon=v),
    "RandomizedResponse(categories)": lambda v: odp.RandomizedResponse(_q, epsilon=1,
                                                                       categories=v),
    "Toy(ε)": lambda v: odp.ToyMechanism(_q, epsilon=v),
    "SVT(ε1)": lambda v: odp.mechanisms.SparseVectorMechanism([_q], [0], epsilon1=v, epsilon2=1, c=1),
    "SVT(thresholds)": lambda v: odp.mechanisms.SparseVectorMechanism([_q], v, epsilon1=1, epsilon2=1, c=1),
    "SVT(c)": lambda v: odp.mechanisms.SparseVectorMechanism([_q], [0], epsilon1=1, epsilon2=1, c=v),
    "PTRFunction(δ)": lambda v: odp.mechanisms.PTRFunction("1", v),
    "IQR(ε)": lambda v: odp.mechanisms.IQRMechanism(epsilon=v, delta="1e-6", n=100),
    "IQR(n)": lambda v: odp.mechanisms.IQRMechanism(epsilon=1, delta="1e-6", n=v),
    "ExponentialMedian(lower)": lambda v: odp.mechanisms.ExponentialMedian(epsilon=1, lower=v, upper=10),
    "ExponentialMedian(candidates)": lambda v: odp.mechanisms.ExponentialMedian(epsilon=1, lower=0,
                                                                     upper=10, candidates=v),
    "OutputPerturbationERM(λ)": lambda v: odp.mechanisms.OutputPerturbationERM(
        epsilon=1, regularization=v, n=100, dim=2),
    "OutputPerturbationERM(dim)": lambda v: odp.mechanisms.OutputPerturbationERM(
        epsilon=1, regularization="0.1", n=100, dim=v),
    "Accountant(ε)": lambda v: odp.Accountant(v),
    "Accountant(δ)": lambda v: odp.Accountant(1, v),
    "Accountant(ledger)": lambda v: odp.Accountant(1, ledger=v if not isinstance(v, str) else None),
    "Accountant(enforce)": lambda v: odp.Accountant(1, enforce=v),
    "Accountant(admission)": lambda v: odp.Accountant(1, admission=v),
}


def _only_odp_errors(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except OdpError:
            pass


# Solving for σ from (ε, δ) takes about a second at the tiny ε and δ the fuzzer likes: these two
# run with the slow tests (python -m pytest -m slow); σ, Δ, g, … of the Gaussian run by default.
SLOW_CONSTRUCTORS = {"Gaussian(ε)", "Gaussian(δ)"}


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow)
                                  if name in SLOW_CONSTRUCTORS else name
                                  for name in sorted(CONSTRUCTORS)])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=NASTY)
def test_constructors_raise_only_odp_errors(name, value):
    _only_odp_errors(lambda: CONSTRUCTORS[name](value))


def _calls(acc: odp.Accountant, v):
    lap = odp.LaplaceMechanism(_q, epsilon="0.01")
    return [
        lambda: acc.charge(odp.DP(v)),
        lambda: acc.charge(odp.DP("0.01", v)),
        lambda: acc.charge(v),
        lambda: acc.charge(odp.DP("0.01"), mechanism=v),
        lambda: acc.charge(odp.DP("0.01"), params=v),
        lambda: acc.charge(odp.DP("0.01"), params={"x": v}),
        lambda: acc.charge(odp.ODP(lambda r: r, {"a": "0.01"}), v),
        lambda: acc.reserve(odp.DP(v)),
        lambda: acc.run(v, 1),
        lambda: acc.run(lap, v),
        lambda: acc.run(odp.RandomizedResponse(_q, epsilon="0.01"), v),
    ]


def _fingerprint(acc: odp.Accountant):
    return acc.remaining, acc.ledger.chain_head


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=NASTY, which=st.integers(0, 10))
def test_accountant_calls_raise_only_odp_errors_and_refusals_move_nothing(value, which):
    acc = odp.Accountant("0.5", "1e-6")
    acc.charge(odp.DP("0.1"))
    before = _fingerprint(acc)
    call = _calls(acc, value)[which]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except OdpError:
            after = _fingerprint(acc)
            if which in (8, 9, 10) and after != before:
                # run(): a failure *inside* the mechanism (after its reservation) is charged
                # the mechanism's sup, and only that
                (last,) = acc.history[1:]
                assert last.reason in ("failed", "unclassifiable") and last.charged == last.sup_epsilon
                assert before[0].epsilon - after[0].epsilon == last.sup_epsilon
            else:
                assert after == before, "a refused call moved budget or wrote a row"
            return
    assert acc.spent.epsilon <= acc.budget.epsilon


def test_the_audits_escapes_are_odp_errors_now():
    """The two calls the audit saw escape (GaussianMechanism(sigma=1e308)) and the others
    the fuzz found: numpy float budgets, ε beyond exp's float range, non-dict params."""
    for call in (lambda: odp.GaussianMechanism(_q, epsilon=1, sigma=1e308),
                 lambda: odp.GaussianMechanism(_q, epsilon=1, sigma="1e-400"),
                 lambda: odp.GaussianMechanism(_q, epsilon="1e3", delta="1e-5"),
                 lambda: odp.GaussianMechanism(_q, epsilon=1, sigma=2, sensitivity="1e300"),
                 lambda: odp.Accountant(1).charge(odp.DP("0.1"), params=3)):
        with pytest.raises(odp.InvalidParameter):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert odp.Budget(np.float64(0.5)).epsilon == Fraction(1, 2)
        big = odp.GaussianMechanism(_q, epsilon=1, sigma="1e90")
    assert math.isfinite(big.sigma) and big.guarantee.delta < Fraction(1, 10**20)


def test_a_refused_charge_on_a_sqlite_ledger_writes_no_row(tmp_path):
    acc = odp.Accountant("0.5", ledger=tmp_path / "l.db")
    acc.charge(odp.DP("0.01"))
    head = acc.ledger.chain_head
    accepted = 0
    for v in (float("nan"), 1e308, -1, "abc", None, 1j, np.float64(1e308)):
        for call in _calls(acc, v)[:8]:
            rows = acc.ledger.chain_head.rows
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    call()
                    accepted += 1
                except OdpError:
                    assert acc.ledger.chain_head.rows == rows  # nothing written
    assert acc.ledger.chain_head.rows == head.rows + 2 * accepted  # each success: 2 rows
    assert acc.spent.epsilon == Fraction(1, 100) * (1 + accepted)
