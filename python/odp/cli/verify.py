"""``odp verify CERT``: replay a certificate with the checker generated from the Lean rules;
``--lean`` also runs the compiled Lean checker, ``--kernel`` a kernel-checked proof."""

from __future__ import annotations

import argparse
import sys

from ._common import print_json


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "verify",
        help="check a certificate against the rules generated from Odp/LedgerCore.lean",
        description=(
            "Replay CERT (with CERT.json) under the checker generated from the Lean rules. "
            "Exit 0 with the remaining budget, 1 naming the first failing row and the rule it "
            "breaks, 2 for usage errors or when --lean/--kernel find no Lean toolchain (a Lean "
            "check that did not happen is never reported)."
        ),
    )
    p.add_argument("certificate", help="certificate text file (its sidecar is CERT.json)")
    p.add_argument("--lean", action="store_true",
                   help="also run the compiled Lean checker odpcheck (needs a Lean toolchain)")
    p.add_argument("--kernel", action="store_true",
                   help="with --lean: write Odp/Certs/Run_<id>.lean and check it with the kernel")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..certs import read_certificate, verify

    try:
        text, sidecar = read_certificate(args.certificate)
    except (OSError, UnicodeDecodeError) as exc:
        reason = "not a UTF-8 text certificate" if isinstance(exc, UnicodeDecodeError) else exc
        message = f"cannot read {args.certificate}: {reason}"
        if args.json:
            print_json({"ok": False, "error": message, "type": "OSError"})
        else:
            print(f"odp verify: {message}", file=sys.stderr)
        return 2
    result = verify(text, sidecar)
    report = {"generated_checker": result.to_json()}
    code = 0 if result.ok else 1
    if result.ok and (args.lean or args.kernel):
        code = _lean_checks(text, sidecar, args.kernel, report)
    if args.json:
        print_json(report)
    else:
        print(result.message if result.ok else
              "FAIL " + result.message + (f" [rule {result.rule}]" if result.rule else ""))
        for key in ("lean", "kernel"):
            if key in report:
                print(f"{key}: {report[key]['message']}")
    return code


def _lean_checks(text: str, sidecar: dict, kernel: bool, report: dict) -> int:
    from ..certs.lean import LeanUnavailable, OdpCheckProcess, check_kernel
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
    if not agrees:
        return 1
    if kernel:
        try:
            path, _ = check_kernel(text, sidecar.get("run_id", "run"))
        except LeanUnavailable as exc:
            report["kernel"] = {"ok": None, "message": f"not checked: {exc}"}
            return 2
        except OdpError as exc:
            report["kernel"] = {"ok": False, "message": str(exc)}
            return 1
        report["kernel"] = {"ok": True, "message": f"{path} checked by the Lean kernel"}
    return 0
