"""The certificate trust model: a forged certificate does not pass silently.

A certificate records the ledger's hash chain; ``odp verify`` checks it, checks what the
auditor brings (the data owner's public key or HMAC key, a head the owner kept, the ledger
file) and prints what it established and what it did not.
"""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction
from pathlib import Path

import pytest
from ledger_forgery import rewrite_events

import odp
from odp.certs import certificate_of, read_certificate, verify
from odp.certs.trust import Trust
from odp.cli import main
from odp.ledger import SQLiteLedger
from odp.ledger.chain import write_key

pytest.importorskip("cryptography")


def _run(path: Path, n: int = 3) -> None:
    acc = odp.Accountant("1", "1e-6", ledger=path)
    g = odp.ODP(lambda r: r, {"low": "0.05", "high": "0.2"}, delta="1e-7")
    for i in range(n):
        acc.charge(g, "low" if i % 2 == 0 else "high")
    acc.close()


def _certify(ledger: Path, out: Path, *extra: str) -> None:
    assert main(["certify", str(ledger), "-o", str(out), "--force", *extra]) == 0


def _verify(cert: Path, *extra: str) -> tuple[int, str]:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["verify", str(cert), *extra])
    return code, buf.getvalue()


def _flat(out: str) -> str:
    """The output with its line wrapping undone (lines are wrapped at 100 columns)."""
    assert all(len(line) <= 100 for line in out.splitlines())
    return " ".join(out.split())


def _said(out: str, section: str, text: str) -> bool:
    """Whether an item of the ``established:`` / ``NOT established:`` list of ``odp verify``'s
    output (items are ``  - …``, wrapped at 100 columns) contains ``text``."""
    items: dict[str, list[str]] = {}
    current = None
    for line in out.splitlines():
        assert len(line) <= 100, line
        if line in ("established:", "NOT established:"):
            current = items.setdefault(line[:-1], [])
        elif current is not None and line.startswith("  - "):
            current.append(line[4:])
        elif current is not None and line.startswith("    "):
            current[-1] += " " + line.strip()
        else:
            current = None
    return any(text in item for item in items.get(section, []))


def _rewrite_ledger(path: Path) -> None:
    """The forger's edit: every settle charged 0, the chain and the head recomputed."""

    def cheap(stored: list) -> None:
        if stored[1] == "settle":
            stored[9], stored[10] = '"low"', "1/20"  # every round now in the cheap class

    rewrite_events(path, cheap)


@pytest.fixture
def owner(tmp_path):
    """A data owner: a ledger, its head as the owner noted it, and a signing key pair."""
    ledger = tmp_path / "run.db"
    _run(ledger)
    with SQLiteLedger(ledger, readonly=True) as led:
        head = led.chain_head
    assert main(["ledger", "keygen", "--ed25519", str(tmp_path / "owner.key")]) == 0
    return {"ledger": ledger, "head": f"{head.rows}:{head.head}",
            "key": tmp_path / "owner.key", "pub": tmp_path / "owner.key.pub"}


def test_a_signed_certificate_states_what_it_established(tmp_path, owner, capsys):
    cert = tmp_path / "run.cert"
    _certify(owner["ledger"], cert, "--sign-key", str(owner["key"]))
    capsys.readouterr()
    code, out = _verify(cert, "--public-key", str(owner["pub"]), "--expect-head", owner["head"],
                        "--ledger", str(owner["ledger"]))
    assert code == 0
    assert _said(out, "established", "the 3 transitions obey the ledger rules")
    assert _said(out, "established", f"whose head (row 6) has hash {owner['head'].split(':')[1]}")
    assert _said(out, "established", "signed by Ed25519 key")
    assert _said(out, "established", "(the key you gave)")
    assert _said(out, "NOT established", "which code made each release: a certificate records")
    assert _said(out, "NOT established", "the declared guarantees of round(s) 1, 2, 3 (a user")
    assert "anyone can write" not in out  # the owner's key and head anchor it


def test_an_unanchored_certificate_says_anyone_could_have_written_it(tmp_path, owner):
    cert = tmp_path / "run.cert"
    _certify(owner["ledger"], cert)
    code, out = _verify(cert)
    assert code == 0
    assert _said(out, "NOT established", "who wrote it")
    assert _said(out, "NOT established", "anyone can write a self-consistent")
    code, out = _verify(cert, "--json")
    report = json.loads(out)["generated_checker"]
    assert report["head"]["rows"] == 6 and any("who wrote it" in s
                                               for s in report["not_established"])


def test_the_old_forgery_edit_rows_and_recompute_the_hash_now_fails(tmp_path, owner):
    """Rows edited in the text and the sidecar, the text digest recomputed consistently: the
    certificate no longer matches the chained rows it carries."""
    cert = tmp_path / "run.cert"
    _certify(owner["ledger"], cert)
    text, side = read_certificate(cert)
    first = side["rounds"][1]  # a 'high' round (charged 0.2): claim it was 'low'
    d = int(side["D"])
    old = " ".join(map(str, first["step"]))
    new_step = [first["step"][0], int(Fraction("0.05") * d), first["step"][2]]
    text = text.replace(f"step {old}\nblocks {' '.join(str(int(Fraction(c) * d)) for _, c in first['classes'])} ; realized 1",
                        f"step {' '.join(map(str, new_step))}\nblocks "
                        f"{' '.join(str(int(Fraction(c) * d)) for _, c in first['classes'])} ; realized 0")
    first.update(step=new_step, realized="low", realized_index=0, charged="1/20")
    side["expected_final"]["eps"] += int(Fraction("0.15") * d)
    side["text_sha256"] = hashlib.sha256(text.encode()).hexdigest()
    assert f"step {' '.join(map(str, new_step))}" in text  # the edit took
    plain = verify(text, side)
    assert not plain.ok and plain.rule == "chain"
    assert "not the one its chained rows produce" in plain.message
    # and with the chain itself edited to match, the row hashes break
    for entry in side["ledger"]["rows"]:
        if entry[1] == "settle" and entry[2] == first["round_id"]:
            entry[9], entry[10] = '"low"', "1/20"
    result = verify(text, side)
    assert not result.ok and "row 4: its values do not match its hash" in result.message


def test_a_forged_ledger_with_its_chain_recomputed_is_caught_by_each_anchor(tmp_path, owner):
    """The forger rewrites the ledger itself (charges lowered, chain and head recomputed) and
    certifies it: the certificate is self-consistent, so only an anchor catches it — and
    every anchor does."""
    forged_ledger = tmp_path / "forged.db"
    for suffix in ("", ".head"):
        Path(str(forged_ledger) + suffix).write_bytes(Path(str(owner["ledger"]) + suffix)
                                                      .read_bytes())
    _rewrite_ledger(forged_ledger)
    forged = tmp_path / "forged.cert"
    _certify(forged_ledger, forged)
    code, out = _verify(forged)
    assert code == 0 and _said(out, "NOT established", "anyone can write a self-consistent")
    code, out = _verify(forged, "--expect-head", owner["head"])
    assert code == 1 and "a different ledger history" in _flat(out)
    code, out = _verify(forged, "--ledger", str(owner["ledger"]))
    assert code == 1 and "not this ledger's history" in _flat(out)
    code, out = _verify(forged, "--public-key", str(owner["pub"]))
    assert code == 1 and "is not signed" in _flat(out)
    assert main(["ledger", "keygen", "--ed25519", str(tmp_path / "forger.key")]) == 0
    _certify(forged_ledger, forged, "--sign-key", str(tmp_path / "forger.key"))
    code, out = _verify(forged, "--public-key", str(owner["pub"]))
    assert code == 1 and "not by the key" in _flat(out) and "you trust" in _flat(out)


def test_a_tampered_signature_or_statement_fails(tmp_path, owner):
    cert = tmp_path / "run.cert"
    _certify(owner["ledger"], cert, "--sign-key", str(owner["key"]))
    text, side = read_certificate(cert)
    trust = Trust(public_key=owner["pub"])
    assert verify(text, side, trust).ok
    bad = json.loads(json.dumps(side))
    bad["signature"]["value"] = "00" * 64
    result = verify(text, bad, trust)
    assert not result.ok and "does not verify" in result.message
    bad = json.loads(json.dumps(side))
    bad["ledger"]["head"]["rows"] = 4  # claim a shorter history under the same signature
    assert not verify(text, bad, trust).ok


def test_hmac_signed_certificates(tmp_path, owner):
    key, other = tmp_path / "cert.key", tmp_path / "other.key"
    write_key(key)
    write_key(other)
    cert = tmp_path / "run.cert"
    _certify(owner["ledger"], cert, "--hmac-key", str(key))
    code, out = _verify(cert, "--hmac-key", str(key))
    assert code == 0 and _said(out, "established", "HMAC-SHA256 tag by key id")
    code, out = _verify(cert)
    assert code == 0 and _said(out, "NOT established", "HMAC tag by key id")
    assert _said(out, "NOT established", "NOT checked")
    code, out = _verify(cert, "--hmac-key", str(other))
    assert code == 1 and "does not verify with the key" in _flat(out)


def test_a_later_certificate_extends_an_earlier_one(tmp_path, owner):
    """Any prefix is committed: the head of an early certificate is a row of every later one."""
    early = tmp_path / "early.cert"
    _certify(owner["ledger"], early)
    head = read_certificate(early)[1]["ledger"]["head"]
    acc = odp.Accountant(ledger=owner["ledger"])
    acc.charge(odp.DP("0.1"))
    acc.close()
    late = tmp_path / "late.cert"
    _certify(owner["ledger"], late)
    code, out = _verify(late, "--expect-head", f"{head['rows']}:{head['head']}")
    assert code == 0 and "row 6 has the hash you expected" in _flat(out)
    code, out = _verify(late, "--expect-head", f"{head['rows']}:{'0' * 64}")
    assert code == 1
    code, out = _verify(early, "--expect-head", f"7:{head['head']}")
    assert code == 1 and "has only 6 rows" in _flat(out)


def test_in_memory_runs_certify_with_their_chain_and_v1_certificates_still_read(tmp_path):
    acc = odp.Accountant("1")
    acc.charge(odp.DP("0.25"))
    cert = acc.certificate()
    assert verify(cert.text, cert.sidecar).ok
    head = acc.ledger.chain_head
    assert cert.sidecar["ledger"]["head"] == head.to_json()
    v1 = dict(cert.sidecar, version=1)
    del v1["ledger"]
    result = verify(cert.text, v1)
    assert result.ok and any("version-1 certificate carries no hash chain" in s
                             for s in result.trust.not_established)
    assert not verify(cert.text, v1, Trust(expect_head=(2, head.head))).ok


def test_a_keyed_ledger_certifies_and_signs_with_the_same_key_file(tmp_path):
    key = tmp_path / "ledger.key"
    write_key(key)
    path = tmp_path / "k.db"
    acc = odp.Accountant("1", ledger=SQLiteLedger(path, odp.Budget(1), key_file=key))
    acc.charge(odp.DP("0.5"))
    acc.close()
    cert = tmp_path / "k.cert"
    _certify(path, cert, "--key-file", str(key), "--hmac-key", str(key))
    code, out = _verify(cert, "--hmac-key", str(key), "--ledger", str(path))
    assert code == 0 and _said(out, "established", "HMAC-SHA256")
    with SQLiteLedger(path, readonly=True, key_file=key) as led:
        assert led.mac_checked and certificate_of(led).sidecar["ledger"]["genesis"]["key_id"]
