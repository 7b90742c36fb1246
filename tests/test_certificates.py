"""Certificates: export, verification with the generated checker, tamper detection, the CLI,
run-time enforcement, and the pexpect bridge (against a stand-in process, NOT a Lean check)."""

from __future__ import annotations

import json
import random
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odp
from odp.accountant import _request
from odp.certs import verify
from odp.certs.enforce import generated_check
from odp.certs.kernel import lean_certificate
from odp.certs.format import parse
from odp.certs.lean import LeanUnavailable, OdpCheckProcess
from odp.cli import main
from odp.errors import CertificateError, OdpError

FAKE = [sys.executable, str(Path(__file__).with_name("fake_odpcheck.py"))]


def _run(seed: int = 0, n: int = 12, ledger=None) -> odp.Accountant:
    """A run mixing DP, M_toy-like ODP, Lemma-6 guarantees, failures and over-budget refusals."""
    rng = random.Random(seed)
    acc = odp.Accountant("3", "1e-5", ledger=ledger, rng=odp.SeededRandom(seed))
    for _ in range(n):
        kind = rng.randrange(4)
        try:
            if kind == 0:
                acc.charge(odp.DP(Fraction(rng.randint(1, 30), 100), Fraction(rng.randint(0, 9), 10**7)))
            elif kind == 1:
                acc.run(odp.ToyMechanism(len, epsilon=Fraction(rng.randint(1, 40), 100)), [1, 2])
            elif kind == 2:
                g = odp.ODP.from_subset_dp(lambda r: r, {
                    "lo": odp.SubsetDP("lo", Fraction(rng.randint(0, 10), 100), "1e-8"),
                    "hi": odp.SubsetDP("hi", Fraction(rng.randint(10, 50), 100), "3e-8")})
                acc.charge(g, rng.choice(["lo", "hi"]))
            else:
                with acc.reserve(odp.DP("0.05")):
                    pass  # abandoned: charged at sup
        except odp.BudgetExceeded:
            pass
    return acc


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 25))
def test_every_run_replays_to_the_accountants_remaining_budget(seed, n):
    acc = _run(seed, n)
    cert = acc.certificate()
    result = verify(cert.text, cert.sidecar)
    assert result.ok, result.message
    assert result.remaining == acc.remaining == cert.remaining


def test_certificate_contents_and_cited_rules():
    acc = _run(3, 15)
    cert = acc.certificate()
    side = cert.sidecar
    assert side["format"] == "odp-certificate" and side["run_id"] == acc.ledger.ledger_id
    assert len(side["rounds"]) == len(acc.history)
    for rnd, rec in zip(side["rounds"], acc.history):
        assert rnd["mechanism"] == rec.mechanism and Fraction(rnd["charged"]) == rec.epsilon_held
        names = {r["name"] for r in rnd["rules"]}
        assert {"Odp.LedgerCore.admits", "Odp.LedgerCore.update", "Odp.Core.odp_composition",
                "Odp.Core.certificate_sound"} <= names
        assert all(len(r["sha256"]) == 64 for r in rnd["rules"])
        if rec.label is not None:
            assert "Odp.Core.dp_of_odp_sup" in names  # Lemma 4 row
        if rnd["class_deltas"] is not None:
            assert "Odp.Core.odp_of_subsetDP" in names  # Lemma 6 row
    text = cert.text
    lines = text.splitlines()  # three comments (run, rounds, the neighbouring relation), then D
    assert lines[2] == ("# neighbours replace-one: every round holds for replace-one "
                        "neighbours, the one relation Theorem 7 composes")
    assert lines[3].startswith("D ") and "budget" in text
    assert side["neighbours"] == "replace-one"


def _mutations(text: str, n: int, seed: int = 1) -> list[str]:
    """``n`` copies of ``text``, each with one number changed."""
    rng = random.Random(seed)
    spots = [(i, m) for i, line in enumerate(text.splitlines()) if not line.startswith("#")
             for m in __import__("re").finditer(r"\b\d+\b", line)]
    out = []
    for i, m in rng.sample(spots, min(n, len(spots))):
        lines = text.splitlines()
        value = int(m.group())
        new = str(value + rng.choice([1, -1]) if value > 0 else value + 1)
        lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
        out.append("\n".join(lines) + "\n")
    return out


def test_every_tampered_number_is_caught():
    cert = _run(7, 14).certificate()
    assert verify(cert.text, cert.sidecar).ok
    mutants = _mutations(cert.text, 60)
    assert len(mutants) >= 40
    for mutant in mutants:
        result = verify(mutant, cert.sidecar)
        assert not result.ok and result.message


def test_reordered_rows_and_truncation_are_caught():
    cert = _run(11, 14).certificate()
    lines = cert.text.splitlines()
    steps = [i for i, l in enumerate(lines) if l.startswith("step")]
    assert len(steps) >= 3
    # swap two steps (with their blocks/deltas rows) that differ
    blocks = []
    for a, b in zip(steps, steps[1:] + [len(lines)]):
        blocks.append(lines[a:b])
    head = lines[:steps[0]]
    for j in range(len(blocks) - 1):
        if blocks[j] != blocks[j + 1]:
            swapped = blocks[:j] + [blocks[j + 1], blocks[j]] + blocks[j + 2:]
            break
    reordered = "\n".join(head + sum(swapped, [])) + "\n"
    assert not verify(reordered, cert.sidecar).ok
    truncated_row = "\n".join(lines[:steps[-1]]) + "\n"
    result = verify(truncated_row, cert.sidecar)
    assert not result.ok and ("truncated" in result.message or "row" in result.message)
    assert not verify(cert.text[: len(cert.text) // 2], cert.sidecar).ok  # cut mid-file
    assert not verify(cert.text, None).ok  # sidecar missing
    sidecar = json.loads(json.dumps(cert.sidecar))
    sidecar["rounds"].pop()
    assert not verify(cert.text, sidecar).ok


def test_failure_names_the_row_and_rule():
    acc = odp.Accountant(1)
    acc.charge(odp.DP("0.5"))
    acc.charge(odp.DP("0.5"))
    cert = acc.certificate()
    overspend = cert.text.replace("budget 2 0", "budget 1 0")
    result = verify(overspend, cert.sidecar)
    assert not result.ok and result.row == 2 and result.rule == "Odp.LedgerCore.admits"
    bad_blocks = cert.text.replace("blocks 1 ; realized 0", "blocks 1 ; realized 3", 1)
    result = verify(bad_blocks, cert.sidecar)
    assert result.row == 1 and result.rule == "Odp.LedgerCore.blocksOk"


def test_cli_certify_and_verify(tmp_path, capsys):
    path = tmp_path / "l.db"
    _run(5, 10, ledger=path).close()
    cert_path = tmp_path / "run.cert"
    assert main(["certify", str(path), "-o", str(cert_path)]) == 0
    assert cert_path.exists() and Path(str(cert_path) + ".json").exists()
    capsys.readouterr()
    assert main(["verify", str(cert_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["generated_checker"]["ok"] is True
    text = cert_path.read_text()
    cert_path.write_text(_mutations(text, 1, seed=4)[0])
    assert main(["verify", str(cert_path)]) == 1
    assert "FAIL row" in capsys.readouterr().out
    assert main(["verify", str(tmp_path / "missing.cert")]) == 2


def test_verify_lean_without_toolchain_says_so_and_exits_2(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ODP_ODPCHECK", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("odp.certs.lean.lean_root", lambda: None)
    cert = _run(2, 5).certificate()
    p = tmp_path / "c.cert"
    cert.write(p)
    assert main(["verify", "--lean", str(p)]) == 2
    out = capsys.readouterr().out
    assert "not checked: no Lean toolchain" in out
    with pytest.raises(LeanUnavailable):
        odp.Accountant(1, enforce="lean")


def test_enforcement_mismatch_charges_sup_and_raises(monkeypatch):
    calls = []

    def disagree(*args, **kwargs):
        calls.append(args)
        return False

    acc = odp.Accountant(1)
    acc._check = disagree
    with pytest.raises(CertificateError, match="enforcement-mismatch"):
        acc.run(odp.ToyMechanism(len, epsilon="0.3"), [1])
    assert acc.last_round.reason == "enforcement-mismatch" and acc.last_round.charged == Fraction(3, 10)
    with pytest.raises(CertificateError):
        acc.charge(odp.DP("0.1"))
    assert acc.last_round.charged == Fraction(1, 10) and len(calls) == 2
    # the transition passed to the check is Alg. 1's state before the round
    assert calls[1][:2] == (Fraction(7, 10), 0)


def test_generated_check_accepts_exactly_the_alg1_transitions():
    F = Fraction
    classes = [F(1, 7), F(1, 3)]
    assert generated_check(F(1), F(0), F(1, 3), F(1, 7), F(0), classes, 0)  # refund, class 0
    assert generated_check(F(1), F(0), F(1, 3), F(1, 3), F(0))  # charged its sup, no class
    assert not generated_check(F(1), F(0), F(1, 3), F(1, 7), F(0))  # refund without a class
    assert not generated_check(F(1), F(0), F(1, 3), F(1, 7), F(0), classes, 1)  # wrong class
    assert not generated_check(F(1), F(0), F(1, 2), F(1, 7), F(0), classes, 0)  # sup ≠ max
    assert not generated_check(F(1, 4), F(0), F(1, 3), F(1, 7), F(0), classes, 0)  # sup > ε_r
    assert not generated_check(F(1), F(0), F(1, 3), F(1, 2), F(0))  # charged > sup
    assert not generated_check(F(1), F(1, 10), F(1, 3), F(1, 3), F(1, 5))  # δ > δ_r
    acc = odp.Accountant(1, enforce=None)
    assert acc._check is None


def test_settle_must_charge_the_declared_class_cost(backend):
    """Review finding: a settle could record any charge in [0, sup].  Now the ledger refuses a
    charge that is not the declared cost of the named class (or the sup without a class), for
    both backends, before anything is written — so the SQLite file stays usable."""
    for ledger in (None, backend.create(1)):
        acc = odp.Accountant(1, ledger=ledger)
        g = odp.ODP(lambda r: r, {"lo": "0.1", "hi": "0.5"})
        res = acc.reserve(g)
        rid = res.round_id
        for label, charged in [(None, Fraction(0)), ("lo", Fraction(0)), ("hi", Fraction(1, 10)),
                               ("nope", Fraction(1, 10)), ("lo", Fraction(2))]:
            with pytest.raises(odp.InvalidGuarantee):
                acc.ledger.settle(rid, label, charged, check=acc._check)
        assert acc.ledger.snapshot().get(rid).status == "pending"
        with pytest.raises(odp.InvalidGuarantee):  # the atomic path validates too
            acc.ledger.charge(_request(g, "x", {}, False), "lo", Fraction(0))
        res.settle("lo")
        assert acc.remaining.epsilon == Fraction(9, 10)
        if ledger is not None:
            acc.close()
            again = odp.Accountant(ledger=ledger)  # the file is still a valid ledger
            assert again.remaining.epsilon == Fraction(9, 10)


def test_refund_without_a_blocks_row_is_rejected_by_verify():
    acc = odp.Accountant(1)
    acc.charge(odp.ODP(lambda r: r, {"lo": "0.1", "hi": "0.5"}), "lo")
    cert = acc.certificate()
    assert verify(cert.text, cert.sidecar).ok
    stripped = "\n".join(l for l in cert.text.splitlines() if not l.startswith("blocks")) + "\n"
    result = verify(stripped, cert.sidecar)
    assert not result.ok and result.rule == "Odp.LedgerCore.refundJustified"


def test_pexpect_bridge_streams_certificates_through_one_process():
    """NOT a Lean check: the process is tests/fake_odpcheck.py, which answers with the
    generated Python checker.  This tests the bridge (protocol, stream, shutdown) only."""
    certs = [_run(s, 8).certificate() for s in range(5)]
    with OdpCheckProcess(FAKE, timeout=30) as proc:
        pid = proc._child.pid
        for cert in certs:
            answer = proc.check(cert.text)
            final = cert.sidecar["expected_final"]
            assert answer.ok and (answer.eps, answer.delta) == (final["eps"], final["delta"])
        bad = certs[0].text.replace("budget", "budget 0", 1)
        with pytest.raises(CertificateError):
            proc.check(bad)  # malformed text is refused before it is sent
        overspent = "D 1\nbudget 1 0\nstep 1 1 0\nstep 1 1 0\n"
        answer = proc.check(overspent)
        assert not answer.ok and answer.row == 2
        assert proc._child.pid == pid  # one long-lived process served the whole stream
        child = proc._child
    assert not child.isalive()  # clean shutdown on exit


def test_pexpect_bridge_times_out_cleanly():
    proc = OdpCheckProcess(FAKE + ["--hang"], timeout=2)
    with pytest.raises(OdpError, match="did not answer"):
        proc.check("D 1\nbudget 1 0\n")
    assert proc._child is None


def test_lean_enforcement_through_the_bridge():
    """NOT a Lean check (stand-in process); the transition protocol of enforce='lean'."""
    from odp.certs.lean import LeanTransitionCheck

    check = LeanTransitionCheck(OdpCheckProcess(FAKE, timeout=30))
    acc = odp.Accountant(1, enforce=None)
    acc._check = check
    for _ in range(3):
        acc.run(odp.ToyMechanism(len, epsilon="0.3"), [1])
    acc.charge(odp.DP("0.05", 0))
    assert all(r.reason == "released" for r in acc.history)
    check.process.close()


def test_kernel_certificate_source():
    """The Lean text `odp verify --kernel` sends: one `decide +kernel` claim per chunk, from the
    budget where the previous chunk ends, joined into the whole certificate's claim."""
    acc = _run(9, 6)
    cert = acc.certificate()
    final = cert.sidecar["expected_final"]
    parsed = parse(cert.text)
    source = lean_certificate(parsed, (final["eps"], final["delta"]), chunk=2)
    assert source.startswith("module\n\npublic import Odp.LedgerCore\n")
    chunks = -(-len(parsed.steps) // 2)
    assert source.count("  decide +kernel") == chunks
    assert source.count("checkCert_append") == chunks - 1
    assert (f"theorem certificate_ok : checkCert ⟨{parsed.budget_eps}, {parsed.budget_delta}⟩ "
            f"steps = some ⟨{final['eps']}, {final['delta']}⟩") in source
    assert "sorry" not in source and "native" not in source
    assert source.count("some ([") == sum(1 for l in cert.text.splitlines() if l.startswith("blocks"))
    # every step appears once, in order
    rows = [f"⟨⟨{s.sup_eps}, {s.charged}, {s.delta}⟩," for s in parsed.steps]
    positions = [source.index(r, source.index(f"chunk{i // 2} : List")) for i, r in enumerate(rows)]
    assert positions == sorted(positions)


def test_enforcement_default_follows_the_admission_rule():
    """The Lean ledger rules are Alg. 1's sum rule: re-checking is on by default under it, and
    off by default under a custom admission rule (which may validly admit more)."""
    assert odp.Accountant(1).enforce == "generated"
    custom = odp.Accountant(1, admission=lambda state, request: True)
    assert custom.enforce is None and custom._check is None
    custom.charge(odp.DP("0.8"))
    custom.charge(odp.DP("0.8"))  # the filter admits it; no sum-rule re-check interferes
    assert len(custom.history) == 2
    explicit = odp.Accountant(1, admission=lambda state, request: True, enforce="generated")
    explicit.charge(odp.DP("0.8"))
    with pytest.raises(CertificateError):
        explicit.charge(odp.DP("0.8"))  # over the sum rule: the re-check refuses


def test_demo_certificate_is_accepted_and_twenty_mutants_are_rejected(tmp_path, capsys):
    """`odp demo` writes a certificate that `odp verify` accepts; 20 mutated copies
    (one number changed in each, at distinct places) are all rejected by `odp verify`."""
    ledger = tmp_path / "demo.db"
    assert main(["demo", "--ledger", str(ledger), "--seed", "4"]) == 0
    cert_path = Path(str(ledger) + ".cert")
    capsys.readouterr()
    assert main(["verify", str(cert_path)]) == 0
    assert capsys.readouterr().out.startswith("OK")
    text = cert_path.read_text()
    mutants = _mutations(text, 20, seed=20)
    assert len(set(mutants)) == 20
    for i, mutant in enumerate(mutants):
        copy = tmp_path / f"mutant{i}.cert"
        copy.write_text(mutant)
        Path(str(copy) + ".json").write_text(Path(str(cert_path) + ".json").read_text())
        assert main(["verify", str(copy)]) == 1, mutant
        assert "FAIL" in capsys.readouterr().out
