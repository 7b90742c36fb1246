#!/usr/bin/env python3
"""A stand-in for ``odpcheck --stream`` that speaks its line protocol.

THIS IS NOT A LEAN CHECK.  It answers with the *generated Python* checker (odp._lean_rules).
It exists only so that the pexpect bridge (odp.certs.lean) can be tested on machines without a
Lean toolchain.  ``--hang`` makes it never answer (to test timeouts).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from odp import _lean_rules as lean  # noqa: E402
from odp.certs.format import parse  # noqa: E402
from odp.errors import CertificateError  # noqa: E402


def answer(text: str) -> str:
    try:
        cert = parse(text)
    except CertificateError as exc:
        return f"ERROR {exc}"
    s = lean.State(cert.budget_eps, cert.budget_delta)
    for i, step in enumerate(cert.steps, 1):
        e = lean.Entry(step.sup_eps, step.charged, step.delta)
        if step.blocks is not None and not lean.blocksOk(e, step.blocks, step.realized):
            return f"FAIL at row {i}: blocks"
        if step.deltas is not None and not lean.deltasOk(e, step.deltas):
            return f"FAIL at row {i}: deltas"
        if not lean.refundJustified(e, step.blocks is not None):
            return f"FAIL at row {i}: refund"
        if not lean.admits(s, e):
            return f"FAIL at row {i}: admits"
        s = lean.update(s, e)
    return f"OK eps={s.eps} delta={s.delta}"


def main() -> int:
    if "--stream" not in sys.argv[1:]:
        print("usage: fake_odpcheck.py --stream [--hang]", file=sys.stderr)
        return 2
    hang = "--hang" in sys.argv[1:]
    lines: list[str] = []
    for raw in sys.stdin:
        line = raw.rstrip("\r\n")
        if line != "END":
            lines.append(line)
            continue
        if hang:
            time.sleep(3600)
        print(answer("\n".join(lines) + "\n"), flush=True)
        lines = []
    return 0


if __name__ == "__main__":
    sys.exit(main())
