"""Accountant.charge with zCDP, RDP (one order or a curve) and Gaussian-DP guarantees, on a real
SQLite ledger: each is converted to (ε, δ)-DP at the δ passed as ``delta=``, lands in the ledger
as a DP round whose params record the original notion, and the run's certificate verifies
(``odp verify``).  Bad input and over-budget requests are refused with nothing recorded."""

from __future__ import annotations

import json
import sqlite3
from fractions import Fraction

import mpmath
import pytest

import odp
from odp import conversions as cv
from odp.certs import verify_file
from odp.cli import main
from odp.errors import BudgetExceeded, InvalidGuarantee, InvalidParameter
from odp.filters import RDPOdometer, ZCDPOdometer
from odp.guarantees import GDP, RDP, ZCDP


def _rows(path) -> int:
    with sqlite3.connect(path) as con:
        tables = [r[0] for r in con.execute("select name from sqlite_master where type='table'")]
        return sum(con.execute(f'select count(*) from "{t}"').fetchone()[0] for t in tables)


@pytest.fixture
def ledger(tmp_path):
    return tmp_path / "run.sqlite"


def test_zcdp_rdp_gdp_charges_land_and_the_certificate_verifies(ledger, tmp_path, capsys):
    acc = odp.Accountant(epsilon=30, delta="1e-4", ledger=ledger)
    acc.charge(odp.DP("0.5"))
    z = acc.charge(ZCDP("0.1"), delta="1e-6")
    r = acc.charge(RDP(4, "0.5"), delta="1e-6", params={"step": 1})
    c = acc.charge([RDP(2, "0.1"), RDP(8, "0.6"), RDP("4.5", "0.3")], delta="2e-6")
    g = acc.charge(GDP("0.5"), delta="1e-6", mechanism="my-gaussian")
    # each round is an ordinary DP round at the converted ε and the δ given
    assert (z.sup_epsilon, z.delta) == (cv.zcdp_to_dp_epsilon("0.1", "1e-6"), Fraction(1, 10**6))
    assert r.sup_epsilon == cv.rdp_to_dp_epsilon(4, "0.5", "1e-6")
    assert c.sup_epsilon == cv.best_rdp_to_dp([RDP(2, "0.1"), RDP(8, "0.6"), RDP("4.5", "0.3")],
                                              "2e-6")[0]
    assert g.sup_epsilon == cv.gdp_to_dp_epsilon("0.5", "1e-6") and g.mechanism == "my-gaussian"
    assert acc.remaining == odp.Budget(
        30 - Fraction("0.5") - z.sup_epsilon - r.sup_epsilon - c.sup_epsilon - g.sup_epsilon,
        Fraction(1, 10**4) - Fraction(5, 10**6))
    # the original notion is in the ledger (params) ...
    assert z.params["notion"] == "zcdp" and z.params["rho"] == "1/10"
    assert z.params["delta_used"] == "1/1000000"
    assert r.params == {"step": 1, "notion": "rdp", "alpha": "4", "rdp_epsilon": "1/2",
                        "delta_used": "1/1000000", "conversion": r.params["conversion"]}
    assert c.params["alpha"] == "8" and c.params["curve"][2] == ["9/2", "3/10"]
    assert g.params["notion"] == "gdp" and g.params["mu"] == "1/2"
    acc.close()
    # ... survives reopening the file ...
    again = odp.Accountant(ledger=ledger)
    assert [h.params.get("notion") for h in again.history] == [None, "zcdp", "rdp", "rdp", "gdp"]
    # ... and the certificate verifies, with the notion in its sidecar
    cert = tmp_path / "run.cert"
    again.certificate().write(cert)
    assert verify_file(cert).ok
    assert main(["verify", str(cert)]) == 0
    assert "OK: 5 rounds replay" in capsys.readouterr().out
    sidecar = json.loads((tmp_path / "run.cert.json").read_text())
    assert [rd["params"].get("notion") for rd in sidecar["rounds"]] == [None, "zcdp", "rdp", "rdp",
                                                                       "gdp"]
    assert sidecar["rounds"][1]["params"]["rho"] == "1/10"
    again.close()


def test_odometer_readings_are_chargeable(ledger):
    """An odometer's privacy_loss() (RDP / zCDP values) charges directly."""
    rdp_odo, z_odo = RDPOdometer(8), ZCDPOdometer()
    for _ in range(3):
        rdp_odo.record("0.05")
        z_odo.record(ZCDP("0.01"))
    acc = odp.Accountant(epsilon=10, delta="1e-5", ledger=ledger)
    a = acc.charge(rdp_odo.privacy_loss(), delta="1e-6")
    b = acc.charge(z_odo.privacy_loss(), delta="1e-6")
    assert a.sup_epsilon == rdp_odo.dp_epsilon("1e-6") and a.params["rdp_epsilon"] == "3/20"
    assert b.sup_epsilon == z_odo.dp_epsilon("1e-6") and b.params["rho"] == "3/100"
    acc.close()


def test_the_converted_epsilon_is_sound_for_a_gaussian(ledger):
    """The charged (ε, δ) holds for the mechanism the notion describes: a Gaussian with σ = 2
    is 1/8-zCDP, (α, α/8)-RDP and 1/2-GDP; its exact δ(ε) (Balle–Wang) is <= the δ charged."""
    mpmath.mp.dps = 40
    acc = odp.Accountant(epsilon=100, delta="1e-3", ledger=ledger)
    rounds = [acc.charge(ZCDP(Fraction(1, 8)), delta="1e-6"),
              acc.charge([RDP(a, Fraction(a, 8)) for a in range(2, 64)], delta="1e-6"),
              acc.charge(GDP("0.5"), delta="1e-6")]
    for rd in rounds:
        e = mpmath.mpf(rd.sup_epsilon.numerator) / rd.sup_epsilon.denominator
        mu = mpmath.mpf("0.5")
        exact_delta = mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)
        assert exact_delta <= mpmath.mpf(rd.delta.numerator) / rd.delta.denominator
    # GDP is the exact conversion: 1e-12 less ε would not hold
    e = rounds[2].sup_epsilon - Fraction(1, 10**12)
    e_mp = mpmath.mpf(e.numerator) / e.denominator
    assert (mpmath.ncdf(mpmath.mpf("0.25") - 2 * e_mp)
            - mpmath.exp(e_mp) * mpmath.ncdf(mpmath.mpf("-0.25") - 2 * e_mp)) > mpmath.mpf("1e-6")
    acc.close()


@pytest.mark.parametrize("call,error,match", [
    (lambda acc: acc.charge(ZCDP("0.1")), InvalidParameter, "pass delta="),
    (lambda acc: acc.charge(RDP(4, 1)), InvalidParameter, "pass delta="),
    (lambda acc: acc.charge(odp.DP("0.1"), delta="1e-6"), InvalidParameter, "carries its own"),
    (lambda acc: acc.charge(ZCDP("0.1"), delta=0), InvalidParameter, "delta must be > 0"),
    (lambda acc: acc.charge(ZCDP("0.1"), delta=1), odp.InvalidBudget, "delta"),
    (lambda acc: acc.charge(ZCDP("0.1"), delta="2e-5"), BudgetExceeded, "remain"),  # δ > remaining
    (lambda acc: acc.charge(ZCDP("5"), delta="1e-6"), BudgetExceeded, "remain"),  # ε > remaining
    (lambda acc: acc.charge(ZCDP("0.1", "1e-7"), delta="1e-6"), InvalidParameter, "approximate"),
    (lambda acc: acc.charge(ZCDP("0.1"), delta="1e-6", params={"notion": "x"}), InvalidParameter,
     "recorded by the conversion"),
    (lambda acc: acc.charge([], delta="1e-6"), InvalidParameter, "cannot convert"),
    (lambda acc: acc.charge([odp.DP(1)], delta="1e-6"), InvalidParameter, "cannot convert"),
    (lambda acc: acc.charge("0.1", delta="1e-6"), InvalidGuarantee, "odp.ZCDP"),
    (lambda acc: acc.charge(ZCDP("-1"), delta="1e-6"), InvalidParameter, "rho"),
    (lambda acc: acc.charge(RDP(1, "0.1"), delta="1e-6"), InvalidParameter, "alpha"),
    (lambda acc: acc.charge(RDP("0.5", "0.1"), delta="1e-6"), InvalidParameter, "alpha"),
    (lambda acc: acc.charge(GDP("-1"), delta="1e-6"), InvalidParameter, "mu"),
])
def test_bad_or_over_budget_charges_record_nothing(ledger, call, error, match):
    acc = odp.Accountant(epsilon=2, delta="1e-5", ledger=ledger)
    acc.charge(odp.DP("0.1", "1e-6"))
    before, remaining = _rows(ledger), acc.remaining
    with pytest.raises(error, match=match) as info:
        call(acc)
    assert "\n" not in str(info.value)
    assert _rows(ledger) == before and acc.remaining == remaining and len(acc.history) == 1
    acc.close()


def test_delta_equal_to_what_remains_is_admitted(ledger):
    acc = odp.Accountant(epsilon=5, delta="1e-5", ledger=ledger)
    acc.charge(ZCDP("0.1"), delta="1e-5")
    assert acc.remaining.delta == 0
    acc.close()
