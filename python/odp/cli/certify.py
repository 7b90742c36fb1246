"""``odp certify LEDGER -o CERT``: export a ledger as a certificate (text + CERT.json)."""

from __future__ import annotations

import argparse
import os

from ..budget import display_named
from ._common import LEDGER_HELP, Subparsers, check_output_path, open_ledger_readonly, print_json


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser(
        "certify",
        help="export a ledger as a certificate checkable against the Lean rules",
        description=(
            "Write CERT (the odpcheck ledger text, natural numbers in units of 1/D) and "
            "CERT.json (run id, mechanisms, declared classes and costs, realised classes, and "
            "the Lean declarations each row relies on with the SHA-256 of their files, and the "
            "ledger's hash chain).  Sign it with a key you hold (--sign-key or --hmac-key) so "
            "that an auditor can tell your certificate from a forged one (docs/certificates.md)."
        ),
    )
    p.add_argument("ledger", help=LEDGER_HELP + " (read-only)")
    p.add_argument("-o", "--output", required=True, help="certificate path (CERT and CERT.json)")
    p.add_argument("--sign-key", help="sign with this Ed25519 private key (PEM; needs the "
                                      "cryptography package: pip install -e \".[sign]\")")
    p.add_argument("--hmac-key", help="sign with this HMAC key file (odp ledger keygen)")
    p.add_argument("--key-file", help="the ledger's own HMAC key file, to check its tags "
                                      "(default: $ODP_LEDGER_KEY_FILE)")
    p.add_argument("--force", action="store_true",
                   help="replace CERT and CERT.json if they exist (refused otherwise)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=run)


def _check_key(path: str | None, option: str) -> None:
    """A signing key that cannot be read is refused before the ledger is opened."""
    import os

    from ..errors import InvalidParameter

    if path is None:
        return
    if not path or not os.path.isfile(path) or not os.access(path, os.R_OK):
        why = "empty path" if not path else (
            "no such file" if not os.path.exists(path) else "not a readable file")
        raise InvalidParameter(f"{option} {path}: {why}; nothing was written")


def run(args: argparse.Namespace) -> int:
    from ..certs import certificate_of
    from ..certs.export import sidecar_path
    from ..errors import InvalidParameter

    # Everything that can fail before reading is checked first: nothing half-written, no
    # file replaced by surprise, the ledger not even opened.
    check_output_path(args.output, "-o")
    if not args.force:
        for target in (args.output, str(sidecar_path(args.output))):
            if os.path.lexists(target):
                raise InvalidParameter(f"-o {args.output}: {target} exists; certify does not "
                                       "replace files (remove it, choose another path or give "
                                       "--force)")
    _check_key(args.sign_key, "--sign-key")
    _check_key(args.hmac_key, "--hmac-key")
    ledger = open_ledger_readonly(args.ledger, args.key_file)
    try:
        cert = certificate_of(ledger)
    finally:
        ledger.close()
    if args.sign_key or args.hmac_key:
        cert.sign(ed25519_key=args.sign_key, hmac_key=args.hmac_key)
    text_path, side_path = cert.write(args.output)
    head = cert.sidecar["ledger"]["head"]
    signature = cert.sidecar.get("signature")
    summary = {"certificate": str(text_path), "sidecar": str(side_path),
               "rounds": len(cert.sidecar["rounds"]), "D": cert.sidecar["D"],
               "remaining": cert.remaining.to_json(), "head": head,
               "signed": None if signature is None else {
                   "scheme": signature["scheme"], "key_id": signature["key_id"]}}
    if args.json:
        print_json(summary)
    else:
        left = cert.remaining
        print(f"wrote {text_path} and {side_path}: {summary['rounds']} rounds, remaining "
              f"{display_named('ε', left.epsilon, 'down')}, "
              f"{display_named('δ', left.delta, 'down')}")
        print(f"ledger head: {head['rows']}:{head['head']}")
        if signature is None:
            print("not signed: anyone can write a self-consistent certificate;\n"
                  "  sign with --sign-key or --hmac-key, or give auditors the head above")
        else:
            print(f"signed ({signature['scheme']}) by key {signature['key_id']}")
    return 0
