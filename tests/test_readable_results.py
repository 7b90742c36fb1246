"""Results people read: short decimals with their rounding direction where it matters, rounds
described by their notion, refusals that name only the rule that refused (the exact values stay
available: every number here is still the exact Fraction)."""

from __future__ import annotations

import re
import warnings
from fractions import Fraction

import pytest

import odp
from odp.cli import main


# ------------------------------------------------------------------ Budget reprs
def test_remaining_after_float_charges_prints_short_and_marked():
    acc = odp.Accountant(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cost in (0.1, 0.2, 0.3 - 0.1, 0.0055757462680003):
            acc.charge(odp.DP(cost))
    left = acc.remaining
    assert len(str(left.epsilon.numerator)) > 12  # a long exact value ...
    assert re.fullmatch(r"Budget\(epsilon≥0\.\d{6}, delta=0\)", repr(left))  # ... shown short
    shown = Fraction(repr(left).split("≥")[1].split(",")[0])
    assert shown <= left.epsilon < shown + Fraction(1, 10**6)  # never shown above what is left
    assert odp.Budget.from_json(left.to_json()) == left  # exact in JSON


# ------------------------------------------------------------------ refusals
@pytest.mark.parametrize("guarantee", [odp.ZCDP("5"), odp.RDP(2, "0.5"), odp.GDP("5")])
def test_refused_conversion_names_only_the_rule_that_refused(guarantee):
    acc = odp.Accountant(1, "1e-5")
    with pytest.raises(odp.BudgetExceeded) as info:
        acc.charge(guarantee, delta="1e-6")
    text = str(info.value)
    assert "Lemma 4" not in text and "output classes" not in text  # one class: no sup to explain
    assert "Alg. 1 line 4" in text
    assert text.startswith(("zcdp needs", "rdp needs", "gdp needs"))


def test_refused_odp_guarantee_says_it_is_the_worst_case_of_its_classes():
    acc = odp.Accountant(1)
    with pytest.raises(odp.BudgetExceeded, match=r"needs ε=3 \(its worst case over its output "
                                                 r"classes\).*Alg\. 1 line 4"):
        acc.charge(odp.ODP(lambda r: r, {"a": "0.1", "b": "3"}), "a")


# ------------------------------------------------------------------ rounds by their notion
def test_converted_rounds_are_described_by_their_notion(tmp_path, capsys):
    path = str(tmp_path / "notions.db")
    with odp.Accountant(10, "1e-4", ledger=path) as acc:
        zc = acc.charge(odp.ZCDP("0.01"), delta="1e-6")
        rd = acc.charge([odp.RDP(2, "0.01"), odp.RDP(8, "0.05")], delta="1e-6")
        gd = acc.charge(odp.GDP("0.5"), delta="1e-6")
        named = acc.charge(odp.ZCDP("0.01"), delta="1e-6", mechanism="my_gaussian")
        dp = acc.charge(odp.DP("0.1"))
    assert [r.mechanism for r in (zc, rd, gd, named, dp)] == [
        "zcdp", "rdp", "gdp", "my_gaussian", "external"]
    assert zc.describe().startswith("#1 zcdp: ")
    assert main(["ledger", "show", path]) == 0
    rows = [line.split()[1] for line in capsys.readouterr().out.splitlines()
            if re.match(r"\d+ ", line)]
    assert rows == ["zcdp", "rdp", "gdp", "my_gaussian", "external"]


# ------------------------------------------------------------------ odp.rdp and odp.buckets
def _shown(text: str) -> Fraction:
    return Fraction(text.lstrip("≤≥").split(" ")[0])


def test_rdp_results_are_exact_fractions_that_print_short_and_rounded_up():
    from odp import rdp
    from odp.readable import Interval, UpperBound

    value = rdp.subsampled_gaussian_rdp("0.01", "1.1", 2, 1000)
    assert isinstance(value, UpperBound) and isinstance(value, Fraction)
    assert "Fraction" not in repr(value) and repr(value).startswith("≤")
    assert _shown(repr(value)) >= value and len(repr(value)) <= 12  # rounded up, short
    assert Fraction(str(value)) == value  # str: the exact value, text that reads back
    eps, order = rdp.subsampled_gaussian_epsilon("0.01", "1.1", 1000, "1e-5")
    assert repr((eps, order)) == f"({eps!r}, 9.6)" and _shown(repr(eps)) >= eps
    lo, hi = bracket = rdp.subsampled_gaussian_rdp_bracket("0.01", "1.1", 2)
    assert isinstance(bracket, Interval) and lo <= hi and "Fraction" not in repr(bracket)
    acc = rdp.RDPAccountant().compose_subsampled_gaussian("0.01", "1.1", 1000)
    assert acc.get_epsilon("1e-5") == eps and repr(acc.get_epsilon("1e-5")) == repr(eps)
    curve = rdp.subsampled_gaussian_curve("0.01", "1.1", 1000, orders=[2, 8])
    assert all("Fraction" not in repr(g) for g in curve)
    assert repr(curve[0]).startswith("RDP(alpha=2, epsilon≤")


def test_buckets_results_print_short_with_their_rounding_direction():
    from odp import buckets

    acc = buckets.PrivacyBucketsAccountant().compose(buckets.Gaussian(1), 10)
    iv = acc.get_epsilon_interval("1e-5")
    assert "Fraction" not in repr(iv)
    assert re.fullmatch(r"Interval\(lower=≥?[\d.]+, upper=≤?[\d.]+\)", repr(iv)), repr(iv)
    assert _shown(repr(iv.lower)) <= iv.lower and _shown(repr(iv.upper)) >= iv.upper
    assert iv.to_json()["upper"] == str(Fraction(iv.upper))  # exact p/q in JSON, as before
    up = buckets.composition_epsilon_upper([(buckets.Gaussian(1), 10)], "1e-5")
    assert up == iv.upper and "Fraction" not in repr(up)
    assert "Fraction" not in repr(acc.get_delta_interval("1"))
    assert iv._replace(upper=Fraction(20)).upper.__class__ is iv.upper.__class__


# ------------------------------------------------------------------ one vocabulary
def test_one_public_interval_and_a_decimal_one_named_for_what_it_is():
    import odp.buckets
    import odp.intervals
    import odp.rdp
    import odp.readable

    assert odp.buckets.Interval is odp.readable.Interval
    assert odp.intervals.DecimalInterval is not odp.readable.Interval
    assert odp.intervals.DecimalInterval.__name__ == "DecimalInterval"
    assert not hasattr(odp.intervals, "Interval")  # its old name is gone (no pre-release shims)
    classes = {obj for module in (odp.buckets, odp.intervals, odp.rdp, odp.readable, odp)
               for name, obj in vars(module).items() if name == "Interval"}
    assert classes == {odp.readable.Interval}  # no second public class named Interval


def test_no_any_for_a_guarantee():
    """A guarantee parameter is typed by what it may be (a union of the notions), not Any."""
    import typing

    from odp import accountant, conversions, guarantees

    for func in (conversions.to_dp, accountant._chargeable):
        hint = typing.get_type_hints(func)["guarantee"]
        assert hint is not typing.Any
        members = set(typing.get_args(hint))
        assert {guarantees.ZCDP, guarantees.RDP, guarantees.GDP} <= members, hint
    assert typing.get_type_hints(conversions.best_rdp_to_dp)["curve"] is not typing.Any
