"""Certificates of laned ledgers: `lane` and `charge` rows, checked by the rules generated from
Odp/LedgerCore.lean (`lanesOk`, `gaussianRhoOk`, `odpShare`), by `odp verify`, and — in the slow
tests — by the Lean kernel (`odp verify --kernel`).  Two forgeries of a real run must fail: a
Gaussian charge whose ρ is halved, and lane budgets moved."""

from __future__ import annotations

import hashlib
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

import odp
from odp.certs.format import parse
from odp.certs.kernel import check_kernel, lean_certificate
from odp.certs.verify import verify
from odp.guarantees import ZCDP
from odp.ledger.lanes import Lane

from lean_support import toolchain  # noqa: F401  (fixture)

DATA = list(range(30))


def _run(tmp_path: Path) -> tuple[odp.Accountant, odp.certs.Certificate]:
    acc = odp.Accountant(epsilon=2, delta="1e-5", ledger=tmp_path / "l.db",
                         lanes=[Lane.odp("0.5", "2e-6"), Lane.zcdp("1.5", "8e-6")])
    gauss = odp.GaussianMechanism(len, epsilon=1, sigma=10)
    acc.run(gauss, DATA)
    acc.run(odp.LaplaceMechanism(len, epsilon="0.1"), DATA)
    acc.charge(ZCDP("0.002"))
    acc.run(gauss, DATA)
    return acc, acc.certificate()


def _odp(*args: str) -> int:
    """``odp ARGS`` in this process: its exit code."""
    from odp.cli import main

    return main(list(args))


def _resign(text: str, sidecar: dict) -> dict:
    side = json.loads(json.dumps(sidecar))
    side["text_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return side


def forge_halved_rho(text: str, sidecar: dict) -> tuple[str, dict]:
    """The first Gaussian charge's ρ halved, in the text and in its sidecar round (a forger who
    edits both consistently)."""
    m = re.search(r"^charge (\d+) (\d+) ; gaussian (\d+) (\d+)$", text, re.M)
    assert m is not None
    half = int(m.group(2)) // 2
    text = text.replace(m.group(0), f"charge {m.group(1)} {half} ; gaussian {m.group(3)} "
                                     f"{m.group(4)}", 1)
    side = _resign(text, sidecar)
    d = int(side["D"])
    rnd = next(r for r in side["lane_rounds"] if r["gaussian"] is not None)
    rnd["charge"] = [half]
    rnd["cost"] = [str(Fraction(half, d))]
    return text, side


def forge_moved_budget(text: str, sidecar: dict, *, keep_total: bool) -> tuple[str, dict]:
    """ε moved from the ODP lane to the zCDP lane (keeping the total, or not)."""
    rows = re.findall(r"^lane .*$", text, re.M)
    odp_row, z_row = rows
    _, _, e0, d0 = odp_row.split()
    _, _, e1, d1, semi, rho = z_row.split()
    move = int(e0) // 2
    new_odp = f"lane odp {int(e0) - move if keep_total else e0} {d0}"
    new_z = f"lane zcdp {int(e1) + move} {d1} ; {2 * int(rho)}"
    text = text.replace(odp_row, new_odp).replace(z_row, new_z)
    return text, _resign(text, sidecar)


def test_a_laned_certificate_verifies_and_replays_the_odp_lane_from_its_share(tmp_path):
    acc, cert = _run(tmp_path)
    text = parse(cert.text)
    assert [x.kind for x in text.lanes] == ["odp", "zcdp"] and len(text.charges) == 3
    assert [c.gaussian is not None for c in text.charges] == [True, False, True]
    assert len(text.steps) == 1 and text.charges[1].after == 1  # ledger order kept
    result = verify(cert.text, cert.sidecar)
    assert result.ok, result.message
    # the ODP lane: 0.5 − 0.1 left of its share
    assert result.remaining == odp.Budget("0.4", "2e-6")
    path = tmp_path / "cert.txt"
    cert.write(path)
    assert _odp("verify", str(path)) == 0


@pytest.mark.parametrize("forgery", ["halved_rho", "moved_budget", "moved_total"])
def test_forged_lane_rows_fail_verify(tmp_path, forgery):
    acc, cert = _run(tmp_path)
    if forgery == "halved_rho":
        text, side = forge_halved_rho(cert.text, cert.sidecar)
        rule = "gaussian"
    else:
        text, side = forge_moved_budget(cert.text, cert.sidecar,
                                        keep_total=forgery == "moved_budget")
        rule = "lane"
    result = verify(text, side)
    assert not result.ok and result.rule is not None
    if forgery == "halved_rho":
        assert rule in result.message.lower(), result.message
    path = tmp_path / "forged.txt"
    path.write_text(text)
    Path(str(path) + ".json").write_text(json.dumps(side))
    for extra in ([], ["--kernel"]):
        assert _odp("verify", str(path), *extra) == 1, extra


def test_the_generated_lane_rules_reject_the_forgeries(tmp_path):
    """The arithmetic the kernel decides (`lanesOk`, `gaussiansOk`), by the generated checker:
    the halved ρ is not the noise's ρ; moved budgets that break the total are not a division."""
    from odp.certs.export import lane_failure

    _, cert = _run(tmp_path)
    assert lane_failure(parse(cert.text)) is None
    text, _ = forge_halved_rho(cert.text, cert.sidecar)
    assert "not the ρ of the discrete Gaussian" in lane_failure(parse(text))
    text, _ = forge_moved_budget(cert.text, cert.sidecar, keep_total=False)
    assert "not to the budget" in lane_failure(parse(text))
    # a moved budget that keeps the total passes the arithmetic: what refuses it is the
    # rigorous conversion check of the sidecar's lanes and the chain (the genesis binds them)
    text, side = forge_moved_budget(cert.text, cert.sidecar, keep_total=True)
    assert lane_failure(parse(text)) is None
    assert not verify(text, side).ok


def test_the_lean_text_of_a_laned_certificate(tmp_path):
    _, cert = _run(tmp_path)
    final = cert.sidecar["expected_final"]
    source = lean_certificate(parse(cert.text), (final["eps"], final["delta"]))
    for claim in ("theorem lanes_ok : lanesOk", "theorem gaussians_ok : gaussiansOk",
                  "theorem odp_share_is : odpShare shares", "theorem laned_certificate_ok"):
        assert claim in source


@pytest.mark.parametrize("forgery", [None, "halved_rho", "moved_total"])
def test_the_kernel_decides_laned_certificates(toolchain, tmp_path, forgery):  # noqa: F811
    _, cert = _run(tmp_path)
    text = cert.text
    if forgery == "halved_rho":
        text, _ = forge_halved_rho(cert.text, cert.sidecar)
    elif forgery == "moved_total":
        text, _ = forge_moved_budget(cert.text, cert.sidecar, keep_total=False)
    final = cert.sidecar["expected_final"]
    result = check_kernel(text, (final["eps"], final["delta"]))
    if forgery is None:
        assert result.ok, result.message
    else:
        assert not result.ok
        where = "gaussians_ok" if forgery == "halved_rho" else "lanes_ok"
        assert where in result.message, result.message
