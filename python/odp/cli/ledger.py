"""``odp ledger ACTION LEDGER``: create, inspect, verify, upgrade and re-anchor a ledger — a
SQLite file or a PostgreSQL database (``postgresql://…``).

* ``init`` — create a ledger with a budget (the only way a PostgreSQL ledger is created);
* ``show`` — the budget, the remaining budget and every round (read-only: writes nothing), as
  short decimals (:func:`odp.budget.display_fraction`; ``--json`` has the exact values);
* ``verify`` — check the hash chain, the schema and the head files, and print the head;
* ``upgrade`` — add the hash chain to a version-1 ledger (one transaction);
* ``reanchor`` — rewrite the head file from the rows as they are (after the head was lost);
* ``restore`` — put back rows a crash took from the database that the head file's journal kept;
* ``keygen`` — write a new HMAC key file for keyed ledgers.
"""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypedDict

from ..budget import DISPLAY_EXACT_DIGITS, DISPLAY_ROUNDED_DIGITS, display_fraction, display_named
from ._common import (
    LEDGER_HELP,
    Subparsers,
    check_output_path,
    format_table,
    ledger_name,
    open_ledger_readonly,
    print_json,
)

if TYPE_CHECKING:
    from ..ledger.chained import ChainedLedger


class _Integrity(TypedDict):
    schema_version: int
    chained: bool
    rows: int
    rounds: int
    head: str
    genesis: str
    ledger_id: str
    key_id: str | None
    mac_checked: bool
    head_files: list[str]


class IntegrityInfo(_Integrity, total=False):
    """What ``odp ledger show``/``verify`` report about a ledger's integrity (``--json``)."""

    read_from_private_copy: bool  # a read-only SQLite file read from a private copy
    server: bool  # a PostgreSQL ledger
    remaining: dict[str, str]  # added by ``verify``: the remaining budget


def register(subparsers: Subparsers) -> None:
    p = subparsers.add_parser("ledger", help="create, inspect, verify or upgrade a ledger",
                              description="Create, inspect, verify, upgrade or re-anchor an odp "
                                          "ledger: a SQLite file or a postgresql:// URL "
                                          "(docs/ledger.md).")
    sub = p.add_subparsers(dest="ledger_command", metavar="ACTION", required=True)

    def key_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--key-file", help="the ledger's HMAC key file (default: "
                                               "$ODP_LEDGER_KEY_FILE); needed to check a keyed "
                                               "ledger's tags")

    init = sub.add_parser("init", help="create a ledger with a budget (SQLite file or "
                                       "postgresql:// URL)",
                          description="Create a ledger for the budget (ε, δ).  A PostgreSQL "
                                      "ledger is created only this way, in the URL's database "
                                      "(its current schema); a schema that already has tables "
                                      "of the ledger's names is refused.")
    init.add_argument("path", help=LEDGER_HELP + " (must not hold a ledger yet)")
    init.add_argument("--epsilon", required=True, help="total ε (exact: 1, 0.5, 1/3)")
    init.add_argument("--delta", default="0", help="total δ (default 0)")
    init.add_argument("--key-file", help="make the ledger keyed with this HMAC key file "
                                         "(odp ledger keygen)")
    init.add_argument("--lane", action="append", metavar="[NAME=]NOTION:EPS[:DELTA[:MORE]]",
                      help="divide the budget into lanes (repeat; shares must add up to the "
                           "budget, the ODP lane first): odp:0.5:5e-6, zcdp:1.5:5e-6, "
                           "renyi:1:1e-6:8,16 (its orders), advanced:1:1e-6[:TAIL_DELTA] "
                           "(docs/filters.md, 'Composition lanes')")
    init.add_argument("--composition", choices=("odp", "zcdp", "advanced"),
                      help="one lane holding the whole budget (odp: no lanes, the default)")
    init.add_argument("--neighbours", choices=("replace-one", "add-remove"),
                      default="replace-one",
                      help="the neighbouring relation every round of the ledger holds for "
                           "(default replace-one, that of odp's built-in mechanisms; add-remove "
                           "for DP-SGD's): one ledger composes guarantees for one relation "
                           "(docs/ledger.md)")
    init.add_argument("--json", action="store_true", help="print as JSON")
    init.set_defaults(func=run_init)

    show = sub.add_parser("show", help="print the budget, the remaining budget and every round "
                                       "(read-only)")
    show.add_argument("path", help=LEDGER_HELP)
    show.add_argument("--json", action="store_true", help="print as JSON")
    key_option(show)
    show.set_defaults(func=run_show)

    verify = sub.add_parser("verify", help="check the hash chain, schema and head files "
                                           "(read-only)")
    verify.add_argument("path", help=LEDGER_HELP)
    verify.add_argument("--json", action="store_true", help="print as JSON")
    key_option(verify)
    verify.set_defaults(func=run_verify)

    upgrade = sub.add_parser("upgrade", help="add the hash chain to a version-1 SQLite ledger, "
                                             "or migrate a PostgreSQL ledger's schema")
    upgrade.add_argument("path", help=LEDGER_HELP)
    upgrade.add_argument("--json", action="store_true", help="print as JSON")
    upgrade.add_argument("--key-file", help="make the upgraded ledger keyed with this HMAC key")
    upgrade.set_defaults(func=run_upgrade)

    reanchor = sub.add_parser(
        "reanchor", help="rewrite the head file from the ledger's rows as they are",
        description="Verify the ledger's chain and write LEDGER.head from its rows.  Use it "
                    "after the head file was lost; if the head records rows the ledger no "
                    "longer has, this accepts their loss and needs --accept-loss.")
    reanchor.add_argument("path", help="ledger file (SQLite)")
    reanchor.add_argument("--accept-loss", action="store_true",
                          help="accept that rows the head file records are gone")
    reanchor.add_argument("--json", action="store_true", help="print as JSON")
    key_option(reanchor)
    reanchor.set_defaults(func=run_reanchor)

    restore = sub.add_parser(
        "restore", help="put back rows a crash took from the database (from the head file)",
        description="Open the SQLite ledger for writing once: rows a crash or power loss took "
                    "from the database before SQLite wrote them out, which the head file's "
                    "journal kept, are put back after their hashes and links are checked "
                    "against the chain (docs/ledger.md).  Rows that are not in the journal "
                    "are not invented: their loss is refused as with any open.")
    restore.add_argument("path", help="ledger file (SQLite)")
    restore.add_argument("--json", action="store_true", help="print as JSON")
    key_option(restore)
    restore.set_defaults(func=run_restore)

    keygen = sub.add_parser("keygen", help="write a new random HMAC key file (mode 0600), or "
                                           "an Ed25519 key pair for signing certificates")
    keygen.add_argument("path", help="key file to create (never overwritten)")
    keygen.add_argument("--ed25519", action="store_true",
                        help="write an Ed25519 private key (PEM) to PATH and its public key "
                             "to PATH.pub, for `odp certify --sign-key` (needs the sign extra: pip install -e \".[sign]\")")
    keygen.add_argument("--json", action="store_true", help="print as JSON")
    keygen.set_defaults(func=run_keygen)


def _open(args: argparse.Namespace) -> ChainedLedger:
    return open_ledger_readonly(args.path, getattr(args, "key_file", None))


def run_init(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..budget import Budget
    from ..errors import LedgerError
    from ..ledger import SQLiteLedger, init_postgres_ledger, is_postgres_url

    from ..errors import InvalidParameter
    from ..ledger.lanes import check_lanes, parse_lane_spec, whole_budget_lane

    budget = Budget(args.epsilon, args.delta)
    lanes = None
    if args.lane and args.composition:
        raise InvalidParameter("give --lane or --composition, not both")
    if args.lane:
        lanes = check_lanes([parse_lane_spec(text) for text in args.lane], budget)
    elif args.composition:
        lanes = whole_budget_lane(args.composition, budget)
    if is_postgres_url(args.path):
        ledger_id = init_postgres_ledger(args.path, budget, key_file=args.key_file,
                                         lanes=lanes, neighbours=args.neighbours).ledger_id
    else:
        if not args.path:
            raise LedgerError("the ledger path is empty")
        if Path(args.path).exists():
            raise LedgerError(f"{args.path} already exists; not creating a ledger over it")
        check_output_path(args.path, "ledger")  # its directory exists and is writable
        with SQLiteLedger(args.path, budget, key_file=args.key_file, lanes=lanes,
                          neighbours=args.neighbours) as ledger:
            ledger_id = ledger.ledger_id
    name = ledger_name(args.path)
    if args.json:
        out = {"ok": True, "ledger": name, "ledger_id": ledger_id, "budget": budget.to_json(),
               "neighbours": args.neighbours}
        if lanes is not None:
            out["lanes"] = [lane.to_json() for lane in lanes]
        print_json(out)
    else:
        print(f"created ledger {ledger_id} at {name} with budget "
              f"{display_named('ε', budget.epsilon, 'down')} "
              f"{display_named('δ', budget.delta, 'down')}, for {args.neighbours} neighbours")
        for lane in lanes or ():
            print(f"  lane {lane.describe()}")
    return 0


def _integrity(ledger: ChainedLedger) -> IntegrityInfo:
    head = ledger.chain_head
    out: IntegrityInfo = {
        "schema_version": ledger.schema_version, "chained": ledger.chained,
        "rows": head.rows, "rounds": head.rounds, "head": head.head,
        "genesis": ledger.genesis.hash, "ledger_id": ledger.ledger_id,
        "key_id": ledger.genesis.key_id, "mac_checked": ledger.mac_checked,
        "head_files": [str(p) for p in ledger._heads]}
    if ledger.snapshot_copy:
        out["read_from_private_copy"] = True
    if not hasattr(ledger, "path"):
        out["server"] = True
    return out


def _integrity_lines(info: IntegrityInfo) -> list[str]:
    lines = []
    if info["chained"]:
        lines.append(f"chain      {info['rows']} rows verified; head {info['head']}")
    else:
        lines.append(f"chain      none on disk (schema version {info['schema_version']}); "
                     f"run `odp ledger upgrade` to add it")
    if info["key_id"]:
        lines.append(f"key        {info['key_id']} "
                     + ("(HMAC tags verified)" if info["mac_checked"]
                        else "(HMAC tags NOT checked: give --key-file)"))
    if info.get("read_from_private_copy"):
        lines.append("note       the ledger is not writable here: read from a private copy")
    return lines


def _relation(ledger: ChainedLedger) -> dict[str, Any]:
    """The ledger's neighbouring relation (odp.neighbours) and whether it is recorded."""
    return {"relation": ledger.neighbours.value, "recorded": ledger.neighbours_recorded}


def run_show(args: argparse.Namespace) -> int:
    from ..ledger.lanes import ledger_statuses, session_totals

    ledger = _open(args)
    try:
        state = ledger.snapshot()
        rounds = list(state.rounds)
        budget, remaining = ledger.budget, state.remaining
        statuses = ledger_statuses(state)
        laned = state.lanes is not None
        info = _integrity(ledger)
        relation = _relation(ledger)
    finally:
        ledger.close()
    spent, session_left = session_totals(statuses, budget)
    if laned:  # the session's (ε, δ): what the lanes have used, and the budget minus that
        remaining = session_left
    if args.json:
        print_json({
            "path": ledger_name(args.path),
            "budget": budget.to_json(),
            "neighbours": relation,
            "remaining": remaining.to_json(),
            "spent": spent.to_json(),
            "lanes": [s.to_json() for s in statuses],
            "integrity": info,
            "rounds": [r.to_json() for r in rounds],
        })
        return 0
    print(f"ledger {ledger_name(args.path)}")
    lines = [
        f"budget     {display_named('ε', budget.epsilon, 'down')}  "
        f"{display_named('δ', budget.delta, 'down')}",
        f"neighbours {relation['relation']} " + (
            "(every round holds for it; recorded in the genesis)" if relation["recorded"] else
            "(none recorded: a ledger made before odp recorded it, which means replace-one)"),
    ]
    if laned:
        lines += [f"lane       {s.describe()}" for s in statuses]
        lines.append(f"spent      {display_named('ε', spent.epsilon)}  "
                     f"{display_named('δ', spent.delta)} (the lanes' readings added up)")
    lines += [
        f"remaining  {display_named('ε', remaining.epsilon, 'down')}  "
        f"{display_named('δ', remaining.delta, 'down')}",
        f"rounds     {len(rounds)} (ε refunded by ODP: "
        f"{display_fraction(sum((r.refund for r in rounds), Fraction(0)), 'down')})",
    ]
    table = ""
    if rounds:
        table = format_table(
            ["#", "mechanism", "lane", "sup ε", "δ", "class", "charged", "status"]
            if laned else ["#", "mechanism", "sup ε", "δ", "class", "charged ε", "status"],
            [[r.index, r.mechanism, *([r.lane or "odp"] if laned else []),
              display_fraction(r.sup_epsilon, "up") if r.lane is None else "",
              display_fraction(r.delta, "up") if r.lane is None else "",
              "" if r.label is None else r.label,
              (r.guarantee.describe() if r.lane is not None  # type: ignore[attr-defined]
               else "" if r.charged is None else display_fraction(r.charged, "up")),
              r.reason or r.status] for r in rounds],
        )
    if any(mark in text for text in (*lines, table) for mark in "≤≥"):
        lines.append(f"numbers    exact up to {DISPLAY_EXACT_DIGITS} digits; ≤x / ≥x: rounded to "
                     f"{DISPLAY_ROUNDED_DIGITS} digits on the safe side (a cost up, a budget "
                     "down); --json has every exact value")
    for line in lines:
        print(line)
    for line in _integrity_lines(info):
        print(line)
    if table:
        print()
        print(table)
    return 0


def run_verify(args: argparse.Namespace) -> int:
    ledger = _open(args)
    try:
        info = _integrity(ledger)
        info["remaining"] = ledger.remaining.to_json()
    finally:
        ledger.close()
    if args.json:
        print_json({"ok": True, **info})
        return 0
    print(f"OK: {ledger_name(args.path)} (ledger {info['ledger_id']})")
    for line in _integrity_lines(info):
        print(line)
    if info["chained"] and not info["head_files"] and info.get("server"):
        print("head files none: the server's durability keeps committed rows (docs/ledger.md)")
    elif info["chained"]:
        print(f"head files {', '.join(info['head_files']) or 'none'}: extended by the ledger")
        print(f"keep this head to detect a later rollback: {info['rows']}:{info['head']}")
    return 0


def run_upgrade(args: argparse.Namespace) -> int:
    from ..ledger import is_postgres_url, upgrade_ledger, upgrade_postgres_ledger

    if is_postgres_url(args.path):
        before, after = upgrade_postgres_ledger(args.path)
        name = ledger_name(args.path)
        if args.json:
            print_json({"ok": True, "path": name, "from_version": before, "version": after})
        elif before == after:
            print(f"{name} is already at version {after}; nothing to do")
        else:
            print(f"upgraded {name} from schema version {before} to {after}; chain verified")
        return 0
    n = upgrade_ledger(args.path, key_file=args.key_file)
    if args.json:
        print_json({"ok": True, "path": args.path, "rows": n})
    else:
        print(f"upgraded {args.path}: {n} rows hash-chained; head file written")
    return 0


def run_reanchor(args: argparse.Namespace) -> int:
    from ..errors import LedgerError
    from ..ledger import is_postgres_url, reanchor_ledger

    if is_postgres_url(args.path):
        raise LedgerError(f"{ledger_name(args.path)} is a PostgreSQL ledger: it has no head file "
                          "to re-anchor (the server's durability keeps committed rows)")

    head, previous = reanchor_ledger(args.path, accept_loss=args.accept_loss,
                                     key_file=args.key_file)
    out = {"ok": True, "path": args.path, **head.to_json(),
           "previous": None if previous is None else previous.to_json()}
    if args.json:
        print_json(out)
    else:
        before = ("no head file" if previous is None
                  else f"the head file recorded {previous.rows} rows")
        print(f"re-anchored {args.path} at {head.rows} rows ({before}); head {head.head}")
    return 0


def run_restore(args: argparse.Namespace) -> int:
    from ..errors import LedgerError
    from ..ledger import is_postgres_url
    from ..ledger.sqlite import restore_ledger

    if is_postgres_url(args.path):
        raise LedgerError(f"{ledger_name(args.path)} is a PostgreSQL ledger: the server's "
                          "durability keeps committed rows; there is nothing to restore")
    restored, head = restore_ledger(args.path, key_file=args.key_file)
    if args.json:
        print_json({"ok": True, "path": args.path,
                    "restored_rows": None if restored is None else list(restored),
                    **head.to_json()})
    else:
        what = (f"put back rows {restored[0]}..{restored[1]} from the head file"
                if restored else "nothing to put back")
        print(f"{args.path}: {what}; {head.rows} rows, head {head.head}")
    return 0


def run_keygen(args: argparse.Namespace) -> int:
    from ..ledger.chain import write_key

    check_output_path(args.path, "key file")  # a path in a writable directory
    if args.ed25519:
        from ..certs.signing import write_ed25519_keypair

        private, public, fingerprint = write_ed25519_keypair(args.path)
        if args.json:
            print_json({"ok": True, "private_key": str(private), "public_key": str(public),
                        "fingerprint": fingerprint})
        else:
            print(f"wrote {private} (private: keep it secret) and {public} (give it to "
                  f"auditors); fingerprint {fingerprint}")
        return 0
    kid = write_key(args.path)
    if args.json:
        print_json({"ok": True, "path": args.path, "key_id": kid})
    else:
        print(f"wrote {args.path} (key id {kid}); keep it secret and off the ledger's disk, and "
              f"set ODP_LEDGER_KEY_FILE={args.path} for every process using the ledger")
    return 0
