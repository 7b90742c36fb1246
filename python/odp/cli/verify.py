"""``odp verify CERT``: replay a certificate with the checker generated from the Lean rules;
``--kernel`` also has the Lean kernel decide it (WebAssembly Lean, downloaded and verified on
first use); ``--lean`` runs the compiled checker ``odpcheck`` where a lake toolchain exists."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ._common import Subparsers, print_json


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "verify",
        help="check a certificate against the rules generated from Odp/LedgerCore.lean",
        description=(
            "Replay CERT (with CERT.json) under the checker generated from the Lean rules, "
            "including each round's mech row (its classes, costs and δ must be those of the "
            "named mechanism for its parameters), and say per round whether its guarantee is "
            "proved in Lean (and by which theorem) or only declared, and which hypotheses it "
            "rests on. Only a round the accountant recorded as made by one of odp's own "
            "mechanism objects can be proved; a certificate cannot show which code made a "
            "release. "
            "Exit 0 with the remaining budget; 1 when a well-formed certificate fails a check "
            "(naming the first failing row and the rule it breaks) or a check asked for "
            "(--public-key, --hmac-key, --expect-head, --ledger) cannot be applied to it; 2 for "
            "input that is not what the command takes (an empty or unreadable file, text that "
            "is not a certificate, a sidecar missing or not odp's, a key or ledger file missing "
            "or not one) or when --lean/--kernel find no Lean toolchain (a check that did not "
            "happen is never reported as passed). --kernel writes the certificate as "
            "Lean data and asks the Lean 4 kernel to decide Odp.LedgerCore.checkCert for it; the "
            "first use downloads Lean 4.28.0-pre (WebAssembly) and Node.js 24 from the npm "
            "registry (about 175 MB, checked against pinned hashes)."
        ),
    )
    p.add_argument("certificate", help="certificate text file (its sidecar is CERT.json)")
    p.add_argument("--lean", action="store_true",
                   help="also run the compiled Lean checker odpcheck (needs elan/lake)")
    p.add_argument("--kernel", action="store_true",
                   help="also have the Lean kernel decide the certificate (Lean 4.28.0-pre, "
                        "WebAssembly; fetched on first use)")
    p.add_argument("--lean-file", metavar="PATH",
                   help="with --kernel: also write the Lean file that the kernel checked to PATH")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    from ..certs.trust import add_trust_arguments

    add_trust_arguments(p)
    p.set_defaults(func=run)


def _bad_input(args: argparse.Namespace, message: str, kind: str) -> int:
    """Input that is not what ``odp verify`` takes: one line (or one JSON object), exit 2."""
    if args.json:
        print_json({"ok": False, "error": message, "type": kind})
    else:
        print(f"odp verify: {' '.join(message.split())}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Exit codes: 0 the certificate passed every check asked for; 1 a well-formed certificate
    failed one (or a check asked for cannot be applied to it); 2 input that is not what the
    command takes — an unreadable or empty file, text that is not a certificate, a sidecar
    missing or not odp's, a key or ledger file that is missing or not one (before anything is
    checked), a Lean check that could not run."""
    from ..certs import read_certificate, verify
    from ..certs.trust import trust_from_args

    trust = trust_from_args(args)  # a malformed --expect-head: CertificateError, exit 2
    trust.check_inputs()  # a missing or malformed key or ledger file: exit 2, whatever the cert
    try:
        if not args.certificate:  # Path('') is '.', which would be read as a directory
            raise OSError("empty path")
        text, sidecar = read_certificate(args.certificate)
    except (OSError, UnicodeDecodeError) as exc:
        reason = "not a UTF-8 text certificate" if isinstance(exc, UnicodeDecodeError) else exc
        message = (f"cannot read {args.certificate}: {reason}" if args.certificate
                   else "empty path: give the certificate file")
        return _bad_input(args, message, "OSError")
    result = verify(text, sidecar, trust)
    if result.bad_input:
        return _bad_input(args, f"{args.certificate}: {result.message}", "CertificateError")
    report: dict[str, Any] = {"generated_checker": result.to_json()}
    if result.guarantees is not None:
        report["guarantees"] = result.guarantees
    code = 0 if result.ok else 1
    if result.ok and args.lean and sidecar is not None:
        code = _lean_checks(text, sidecar, report)
    if result.ok and args.kernel and code == 0 and sidecar is not None:
        code = _kernel_check(text, sidecar, report=report, lean_file=args.lean_file, quiet=args.json)
    if args.json:
        print_json(report)
    else:
        from ..certs.verify import wrap

        lines = result.headline()
        if result.ok:
            lines += result.statement_lines() + result.guarantee_lines()
        for key in ("lean", "kernel"):
            if key in report:
                lines += wrap(f"{key}: {report[key]['message']}", "", "    ")
        print("\n".join(lines))
    return code


def _lean_checks(text: str, sidecar: dict[str, Any], report: dict[str, Any]) -> int:
    from ..certs.lean import LeanUnavailable, OdpCheckProcess
    from ..errors import OdpError

    try:
        with OdpCheckProcess() as proc:
            answer = proc.check(text)
    except LeanUnavailable as exc:
        report["lean"] = {"ok": None, "message": f"not checked: {exc}"}
        return 2
    except OdpError as exc:
        report["lean"] = {"ok": False, "message": str(exc)}
        return 1
    final = sidecar["expected_final"]
    agrees = answer.ok and (answer.eps, answer.delta) == (final["eps"], final["delta"])
    report["lean"] = {
        "ok": agrees,
        "message": (f"odpcheck: OK eps={answer.eps} delta={answer.delta}" if answer.ok
                    else f"odpcheck: FAIL at row {answer.row}: {answer.message}")
        + ("" if agrees or not answer.ok else " (differs from the recorded final budget)"),
    }
    return 0 if agrees else 1


def _kernel_check(text: str, sidecar: dict[str, Any], *, report: dict[str, Any],
                  lean_file: str | None,
                  quiet: bool) -> int:
    from ..certs.kernel import KernelUnavailable, check_kernel
    from ..errors import OdpError

    final = sidecar["expected_final"]
    say = (lambda message: None) if quiet else (lambda message: print(message, file=sys.stderr))
    try:
        result = check_kernel(text, (int(final["eps"]), int(final["delta"])), say=say,
                              keep=None if lean_file is None else Path(lean_file))
    except KernelUnavailable as exc:
        report["kernel"] = {"ok": None, "message": f"not checked: {exc}"}
        return 2
    except OdpError as exc:
        report["kernel"] = {"ok": False, "message": str(exc)}
        return 1
    report["kernel"] = {"ok": result.ok, "message": result.message, "steps": result.steps,
                        "chunks": result.chunks, "seconds": round(result.seconds, 1)}
    return 0 if result.ok else 1
