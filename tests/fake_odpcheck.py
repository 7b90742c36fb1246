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
from odp.certs.mechanisms import lean_args  # noqa: E402
from odp.errors import CertificateError  # noqa: E402

#: The generated rule that failed -> the word odpcheck's answer starts with.
_WORDS = {"blocksOk": "blocks", "deltasOk": "deltas", "mechOk": "mech",
          "refundJustified": "refund", "admits": "admits"}


def answer(text: str) -> str:
    try:
        cert = parse(text)
    except CertificateError as exc:
        return f"ERROR {exc}"
    s = lean.State(cert.budget_eps, cert.budget_delta)
    for i, step in enumerate(cert.steps, 1):
        e = lean.Entry(step.sup_eps, step.charged, step.delta)
        after, rule = lean.check_step(s, e, blocks=step.blocks, realized=step.realized,
                                      deltas=step.deltas, mech=lean_args(step.mech))
        if after is None:
            return f"FAIL at row {i}: {_WORDS[rule]}"
        s = after
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
