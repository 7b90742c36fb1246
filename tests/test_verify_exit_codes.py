"""``odp verify``'s exit codes, over a table of inputs: 2 for input that is not what the command
takes (an empty, unreadable, truncated or non-certificate file, the sidecar given as the
certificate, a sidecar missing or not odp's, a key or ledger file that is missing or not one),
1 only for a well-formed certificate that fails a check (or a check asked for that cannot be
applied to it), 0 when every check passes — 70 never.  Exit 2 is one line on stderr (one JSON
object with ``--json``) and writes nothing.

The certificates come from real runs on SQLite ledgers, certified by ``odp certify``; the keys
are real (Ed25519 through ``cryptography``, HMAC files from ``odp ledger keygen``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import odp
from odp.cli import main

pytest.importorskip("cryptography")


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("verify-inputs")
    out: dict[str, Path] = {"dir": d}
    ledger = d / "run.db"
    with odp.Accountant("1", "1e-6", ledger=ledger, rng=odp.SeededRandom(1)) as acc:
        acc.run(odp.LaplaceMechanism(len, epsilon="1/10"), [1, 2, 3])
        acc.charge(odp.DP("1/5"))
    other = d / "other.db"
    with odp.Accountant("1", ledger=other) as acc:
        acc.charge(odp.DP("1/10"))
    assert main(["ledger", "keygen", "--ed25519", str(d / "owner.key")]) == 0
    assert main(["ledger", "keygen", str(d / "hmac.key")]) == 0
    cert, signed = d / "run.cert", d / "signed.cert"
    assert main(["certify", str(ledger), "-o", str(cert)]) == 0
    assert main(["certify", str(ledger), "-o", str(signed), "--sign-key", str(d / "owner.key")]) == 0
    text = cert.read_text()
    sidecar = Path(str(cert) + ".json").read_text()
    side = json.loads(sidecar)

    def write(name: str, body: str | bytes, side_body: str | None = sidecar) -> Path:
        path = d / name
        path.write_bytes(body if isinstance(body, bytes) else body.encode())
        if side_body is not None:
            Path(str(path) + ".json").write_text(side_body)
        return path

    lines = text.splitlines(keepends=True)
    last_step = max(i for i, line in enumerate(lines) if line.startswith("step"))
    edited = text.replace("budget ", "budget 1", 1)
    foreign = dict(side, format="something-else")
    newer = dict(side, version=99)
    out.update(
        ledger=ledger, other=other, cert=cert, signed=signed, pub=d / "owner.key.pub",
        private=d / "owner.key", hmac=d / "hmac.key",
        garbage=write("garbage.cert", bytes(range(128, 256)) * 4),
        empty=write("empty.cert", ""),
        blank=write("blank.cert", "\n\n"),
        cut=write("cut.cert", text[: len(text) // 2]),
        cut_lines=write("cut_lines.cert", "".join(lines[:last_step])),
        no_sidecar=write("alone.cert", text, None),
        bad_sidecar=write("badside.cert", text, sidecar[: len(sidecar) // 2]),
        foreign_sidecar=write("foreign.cert", text, json.dumps(foreign)),
        newer_sidecar=write("newer.cert", text, json.dumps(newer)),
        edited=write("edited.cert", edited),
        short_key=write("short.key", "abcd", None),
        not_pem=write("notpem.pub", "hello\n", None),
        subdir=d / "adir",
    )
    out["subdir"].mkdir()
    out["head"] = f"{side['ledger']['head']['rows']}:{side['ledger']['head']['head']}"
    return out


# (name, argv with {placeholders}, expected exit code)
CASES = [
    ("the intact certificate", ["{cert}"], 0),
    ("every anchor that applies", ["{signed}", "--public-key", "{pub}", "--expect-head", "{head}",
                                  "--ledger", "{ledger}"], 0),
    # input that is not what the command takes: 2
    ("garbage bytes", ["{garbage}"], 2),
    ("an empty file", ["{empty}"], 2),
    ("a file of blank lines", ["{blank}"], 2),
    ("/dev/null", ["/dev/null"], 2),
    ("a certificate cut mid-line", ["{cut}"], 2),
    ("the .json sidecar given as the certificate", ["{cert}.json"], 2),
    ("a missing certificate", ["{dir}/missing.cert"], 2),
    ("a directory", ["{subdir}"], 2),
    ("an empty path", [""], 2),
    ("no sidecar", ["{no_sidecar}"], 2),
    ("a truncated sidecar", ["{bad_sidecar}"], 2),
    ("a foreign sidecar", ["{foreign_sidecar}"], 2),
    ("a sidecar of an unknown version", ["{newer_sidecar}"], 2),
    ("a missing --ledger file", ["{cert}", "--ledger", "{dir}/missing.db"], 2),
    ("a directory as --ledger", ["{cert}", "--ledger", "{subdir}"], 2),
    ("a --ledger that is not a ledger", ["{cert}", "--ledger", "{cert}"], 2),
    ("a missing --public-key on an unsigned certificate",
     ["{cert}", "--public-key", "{dir}/missing.key"], 2),
    ("a missing --public-key on a signed certificate",
     ["{signed}", "--public-key", "{dir}/missing.key"], 2),
    ("a --public-key that is not PEM", ["{signed}", "--public-key", "{not_pem}"], 2),
    ("a private key as --public-key", ["{signed}", "--public-key", "{private}"], 2),
    ("a missing --hmac-key", ["{cert}", "--hmac-key", "{dir}/missing.key"], 2),
    ("a --hmac-key too short", ["{cert}", "--hmac-key", "{short_key}"], 2),
    ("a malformed --expect-head", ["{cert}", "--expect-head", "6:nothex"], 2),
    # a well-formed certificate that fails a check, or a check that cannot be applied: 1
    ("an edited row", ["{edited}"], 1),
    ("rounds cut at a line boundary (fewer steps than the sidecar)", ["{cut_lines}"], 1),
    ("another ledger", ["{cert}", "--ledger", "{other}"], 1),
    ("another head", ["{cert}", "--expect-head", "2:" + "0" * 64], 1),
    ("a head beyond the certificate", ["{cert}", "--expect-head", "99:" + "0" * 64], 1),
    ("an HMAC key for an Ed25519 signature", ["{signed}", "--hmac-key", "{hmac}"], 1),
    ("a public key for an unsigned certificate", ["{cert}", "--public-key", "{pub}"], 1),
    ("an HMAC key for an unsigned certificate", ["{cert}", "--hmac-key", "{hmac}"], 1),
]


def _argv(args: list[str], files: dict[str, Path]) -> list[str]:
    subs = {k: str(v) for k, v in files.items()}
    return ["verify", *(a.format(**subs) for a in args)]


@pytest.mark.parametrize("name, args, code", CASES, ids=[c[0] for c in CASES])
def test_verify_exit_code(name, args, code, files, capsys):
    argv = _argv(args, files)
    before = _snapshot(files["dir"])
    capsys.readouterr()
    got = main(argv)
    out, err = capsys.readouterr()
    assert got == code, (name, got, out, err)
    assert "Traceback" not in out + err
    assert _snapshot(files["dir"]) == before  # nothing created or changed
    if code == 2:
        assert out == "" and len(err.strip().splitlines()) == 1, err
        assert err.startswith("odp verify: ")
    else:
        assert err == "" and out.splitlines()[0].startswith("OK" if code == 0 else "FAIL")
        assert all(len(line) <= 100 for line in out.splitlines())
    # the same with --json: the same code, and one JSON object on stdout
    got = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert got == code and err == ""
    report = json.loads(out)
    assert report.get("ok", report.get("generated_checker", {}).get("ok")) is (code == 0)

