"""Accountant interface, integration functions and input validation."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import mpmath as mp
import pytest

from odp.buckets import (
    ApproximateDP,
    DiscreteGaussian,
    FinitePair,
    Gaussian,
    Interval,
    Laplace,
    PrivacyBucketsAccountant,
    PLDRandomizedResponse,
    composition_delta_upper,
    composition_epsilon_upper,
    mechanism_from_dict,
)
from odp.errors import FloatBudgetWarning, InvalidBudget, InvalidParameter
from test_buckets_refs import composed_gaussian_mu, gaussian_delta, gaussian_epsilon, mpf


def test_composition_functions_are_rigorous_upper_bounds():
    mechs = [Gaussian("2"), (Gaussian("3"), 4), Gaussian("0.9")]
    mu = composed_gaussian_mu([("2", 1), ("3", 4), ("0.9", 1)])
    d = composition_delta_upper(mechs, "1")
    assert isinstance(d, Fraction)
    assert gaussian_delta(mu, 1) <= mpf(d) <= gaussian_delta(mu, 1) * (1 + mp.mpf("1e-5"))
    e = composition_epsilon_upper(mechs, "1e-6", buckets=4096)
    assert isinstance(e, Fraction)
    exact = gaussian_epsilon(mu, "1e-6")
    assert exact <= mpf(e) <= exact * (1 + mp.mpf("1e-3"))


def test_no_finite_epsilon_raises_or_returns_inf():
    mechs = [(ApproximateDP("0.5", "0.01"), 10)]  # distinguishing mass 1 - 0.99^10 ~ 0.096
    with pytest.raises(InvalidParameter, match="no finite epsilon"):
        composition_epsilon_upper(mechs, "0.05")
    acc = PrivacyBucketsAccountant().compose(ApproximateDP("0.5", "0.01"), 10)
    assert acc.get_epsilon_interval("0.05").upper == math.inf
    assert acc.get_epsilon_interval("0.5").upper < math.inf


def test_incremental_composition_matches_batch():
    a = PrivacyBucketsAccountant(buckets=2048)
    a.compose(Gaussian(2), 3)
    first = a.get_delta_interval("1")
    a.compose(Laplace(5), 2).compose(Gaussian(2), 5)
    b = PrivacyBucketsAccountant(buckets=2048)
    b.compose(Gaussian(2), 3).compose(Laplace(5), 2).compose(Gaussian(2), 5)
    ia, ib = a.get_delta_interval("1"), b.get_delta_interval("1")
    assert ia.lower <= ib.upper and ib.lower <= ia.upper
    assert ia.lower > first.upper  # more composition, more leakage
    assert [n for _, n in a.ledger] == [3, 2, 5]


def test_asymmetric_mechanism_added_after_symmetric_ones():
    p, q = ["0.5", "0.5", "0"], ["0.25", "0.25", "0.5"]
    a = PrivacyBucketsAccountant(buckets=512).compose(Gaussian(3), 2)
    a.get_delta_interval("0")  # computes the symmetric part first
    a.compose(FinitePair(p, q), 1)
    b = PrivacyBucketsAccountant(buckets=512).compose(Gaussian(3), 2).compose(FinitePair(p, q), 1)
    for eps in ("0", "0.5"):
        ia, ib = a.get_delta_interval(eps), b.get_delta_interval(eps)
        assert ia.lower <= ib.upper and ib.lower <= ia.upper
    assert len(a.report()["directions"]) == 2


def test_interval_and_report():
    acc = PrivacyBucketsAccountant(buckets=1024).compose(Gaussian(1), 4)
    iv = acc.get_epsilon_interval("1e-3")
    assert isinstance(iv, Interval) and isinstance(iv.lower, Fraction)
    lo, up = iv
    assert lo <= up and iv.width >= 0
    assert gaussian_epsilon(2, "1e-3") > mpf(lo)
    assert Fraction(str(float(up))) in iv or float(up) - float(lo) < 1e-9
    js = iv.to_json()
    assert Fraction(js["upper"]) == up
    rep = acc.report()
    assert rep["compositions"] == 4 and rep["mechanisms"][0]["mechanism"] == "gaussian"


@pytest.mark.parametrize(
    "make,exc",
    [
        (lambda: Gaussian(0), InvalidParameter),
        (lambda: Gaussian("abc"), InvalidBudget),
        (lambda: Laplace(-1), InvalidParameter),
        (lambda: PLDRandomizedResponse(0), InvalidParameter),
        (lambda: PLDRandomizedResponse("1", 1), InvalidParameter),
        (lambda: ApproximateDP("1", "1"), InvalidParameter),
        (lambda: DiscreteGaussian("1", 0), InvalidParameter),
        (lambda: FinitePair(["0.5", "0.6"], ["0.5", "0.5"]), InvalidParameter),
        (lambda: FinitePair(["1"], ["0.5", "0.5"]), InvalidParameter),
        (lambda: PrivacyBucketsAccountant(buckets=3), InvalidParameter),
        (lambda: PrivacyBucketsAccountant(factor="1"), InvalidParameter),
        (lambda: PrivacyBucketsAccountant(rounding="down"), InvalidParameter),
        (lambda: PrivacyBucketsAccountant(precision="quad"), InvalidParameter),
        (lambda: PrivacyBucketsAccountant().compose("gaussian"), InvalidParameter),
        (lambda: PrivacyBucketsAccountant().compose(Gaussian(1), 0), InvalidParameter),
        (lambda: PrivacyBucketsAccountant().get_delta_interval("1"), InvalidParameter),
        (lambda: PrivacyBucketsAccountant().compose(Gaussian(1)).get_epsilon_interval("0"), InvalidBudget),
        (lambda: PrivacyBucketsAccountant().compose(Gaussian(1)).get_epsilon_interval("1"), InvalidBudget),
        (lambda: PrivacyBucketsAccountant().compose(Gaussian(1)).get_delta_interval("-1"), InvalidBudget),
        (lambda: composition_delta_upper([], "1"), InvalidParameter),
    ],
)
def test_bad_input_raises_typed_errors(make, exc):
    with pytest.raises(exc):
        make()


def test_bad_compose_changes_nothing():
    acc = PrivacyBucketsAccountant(buckets=512).compose(Gaussian(1), 2)
    before = acc.get_delta_interval("1")
    with pytest.raises(InvalidParameter):
        acc.compose(Gaussian(1), -3)
    assert acc.get_delta_interval("1") == before and len(acc.ledger) == 1


def test_mechanism_descriptions_round_trip():
    for m in (Gaussian("1.5", 2), Laplace("10"), PLDRandomizedResponse("0.3", 3),
              ApproximateDP("1", "1e-6"), DiscreteGaussian("2"), FinitePair(["1/3", "2/3"], ["1/2", "1/2"])):
        assert mechanism_from_dict(m.describe()) == m
    with pytest.raises(InvalidParameter):
        mechanism_from_dict({"mechanism": "cauchy"})


def test_float_parameters_warn_and_are_exact():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = Gaussian(0.1)
    assert any(issubclass(x.category, FloatBudgetWarning) for x in w)
    assert g.sigma == Fraction(0.1)
