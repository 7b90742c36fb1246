"""What a verified certificate establishes, and what it does not (docs/certificates.md).

A certificate's rows passing the generated Lean rules shows that *this sequence of transitions
obeys the rules*.  Version-2 certificates also carry the ledger's hash chain: the check here
recomputes every row's hash from its exact values, replays the rows, and requires the
certificate's text and rounds to be exactly what those rows produce — so the certificate names
one ledger history, by the hash of its head row, and commits to every prefix of it.

Who wrote that history is a separate question.  Without a signature checked against a key the
data owner holds, or a head hash the data owner kept (``--expect-head``) or the ledger file
itself (``--ledger``), anyone can write a self-consistent certificate; :func:`assess` says so
in its output instead of staying silent.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..budget import Budget
from ..errors import CertificateError, LedgerError, OdpError
from ..ledger.chain import ChainVerifier, EventRow, Genesis, ROW_FIELDS
from ..ledger.records import BudgetState, apply_row
from .mechanisms import CAPSTONE, GENERAL, capstone_applies

if TYPE_CHECKING:
    from .relation import RelationReport


@dataclass
class Trust:
    """What the auditor brings: a key the data owner holds, a head the data owner kept, or
    read access to the ledger itself."""

    public_key: str | os.PathLike[str] | None = None  # Ed25519 public key (PEM)
    hmac_key: str | os.PathLike[str] | None = None  # HMAC key file
    expect_head: tuple[int, str] | None = None  # (row, hash)
    ledger: str | os.PathLike[str] | None = None  # the ledger file, opened read-only

    def check_inputs(self) -> None:
        """Read what the auditor brought before anything is checked: a key file that cannot be
        read or is not a key of its kind, or a ledger file that does not exist, is input that
        ``odp verify`` does not take (:class:`~odp.errors.CertificateError`, exit 2) — whatever
        the certificate, never a verdict on it."""
        from ..ledger import is_postgres_url
        from ..ledger.chain import load_key
        from .signing import load_public_key

        if self.public_key is not None:
            try:
                load_public_key(self.public_key)
            except CertificateError as exc:
                raise CertificateError(f"--public-key: {exc}") from None
        if self.hmac_key is not None:
            try:
                load_key(self.hmac_key)
            except LedgerError as exc:
                raise CertificateError(f"--hmac-key {self.hmac_key}: {exc}") from None
        if self.ledger is not None and not is_postgres_url(self.ledger):
            path = Path(self.ledger)
            if not path.is_file():
                why = "not a file" if path.exists() else "no such file"
                raise CertificateError(f"--ledger {self.ledger}: {why}")


@dataclass
class TrustReport:
    failure: str | None = None
    established: list[str] = field(default_factory=list)
    not_established: list[str] = field(default_factory=list)
    head: dict[str, Any] | None = None
    signer: str | None = None
    bad_input: bool = False  # the failure is input odp verify does not take (a ledger it cannot open)

    def to_json(self) -> dict[str, Any]:
        return {"established": self.established, "not_established": self.not_established,
                "head": self.head, "signer": self.signer}


def requested(trust: Trust) -> list[str]:
    """The checks the auditor asked for, as the options that ask for them."""
    out = []
    if trust.public_key is not None:
        out.append(f"--public-key {trust.public_key}")
    if trust.hmac_key is not None:
        out.append(f"--hmac-key {trust.hmac_key}")
    if trust.expect_head is not None:
        out.append(f"--expect-head {trust.expect_head[0]}:{trust.expect_head[1]}")
    if trust.ledger is not None:
        from ..ledger import is_postgres_url, redact

        out.append("--ledger " + (redact(str(trust.ledger)) if is_postgres_url(trust.ledger)
                                  else str(trust.ledger)))
    return out


def parse_expect_head(text: str) -> tuple[int, str]:
    """``ROWS:HASH`` (as ``odp ledger verify`` prints it)."""
    rows, sep, digest = text.partition(":")
    try:
        n = int(rows)
        bytes.fromhex(digest)
    except ValueError:
        n = -1
    if not sep or n < 0 or len(digest) != 64:
        raise CertificateError(f"--expect-head wants ROWS:HASH (64 hex digits), got {text!r}")
    return n, digest.lower()


def check_chain(text: str, sidecar: dict[str, Any]) -> tuple[str | None, list[str]]:
    """(failure, hashes): verify the chain a v2 sidecar records and that the certificate is
    exactly what its rows produce."""
    from .export import TEXT_VERSIONS, build_certificate

    ledger = sidecar.get("ledger")
    if not isinstance(ledger, dict):
        return "a version-2 certificate without its ledger chain", []
    try:
        genesis = Genesis.from_json(ledger["genesis"])
        if ledger["genesis"].get("hash") != genesis.hash:
            return "the genesis hash does not match the ledger's identity and budget", []
        if list(ledger.get("fields", [])) != list(ROW_FIELDS) + ["row_hash"]:
            return "the chain's row fields are not the expected ones", []
        budget = Budget.from_json(sidecar["budget"])
        if (budget.epsilon, budget.delta) != (genesis.epsilon, genesis.delta):
            return "the certificate's budget is not the budget the chain starts from", []
        if sidecar.get("run_id") != genesis.ledger_id:
            return "the run id is not the ledger id the chain starts from", []
        verifier = ChainVerifier(genesis, where="certificate chain")
        state = BudgetState.for_genesis(genesis)
        hashes = []
        for entry in ledger["rows"]:
            if not isinstance(entry, list) or len(entry) != len(ROW_FIELDS) + 1:
                return "a chain row has the wrong number of fields", []
            row = EventRow.from_json(entry[:-1])
            hashes.append(verifier.check(row, None, entry[-1]))
            apply_row(state, row)
        head = ledger["head"]
        if head != verifier.state.to_json():
            return (f"the recorded head {head} is not the chain's head "
                    f"{verifier.state.to_json()}"), []
        text_version = sidecar.get("text_version", 1)
        if text_version not in TEXT_VERSIONS:
            return f"unknown certificate text version {text_version!r}", []
        rebuilt = build_certificate(state.total, list(state.rounds), genesis.ledger_id,
                                    text_version=text_version,
                                    lanes=None if state.lanes is None else state.lanes.lanes,
                                    neighbours=genesis.neighbours)
    except LedgerError as exc:
        return str(exc), []
    except OdpError as exc:
        return f"the chain's rows do not make a certificate ({exc})", []
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        return f"malformed ledger chain in the sidecar ({type(exc).__name__}: {exc})", []
    if rebuilt.text != text:
        return ("the certificate's text is not the one its chained rows produce (rows edited "
                "without their chain?)"), []
    for key in ("D", "expected_final", "rounds", "lanes", "lane_rounds", "neighbours"):
        if rebuilt.sidecar.get(key) != sidecar.get(key):
            return (f"the sidecar's {key!r} is not what its chained rows produce (edited "
                    "without the chain?)"), []
    return None, hashes


def _round_list(ns: list[int]) -> str:
    shown = ", ".join(map(str, ns[:12]))
    return shown + (f" and {len(ns) - 12} more" if len(ns) > 12 else "")


def guarantee_statements(guarantees: dict[str, Any] | None, *, one_relation: bool = True
                         ) -> tuple[list[str], list[str]]:
    """(established, not established) about the rounds' guarantees
    (:func:`odp.certs.mechanisms.guarantees`); the hypotheses each round rests on are listed
    per round by :meth:`odp.certs.verify.VerifyResult.guarantee_lines`.  ``one_relation``:
    every round holds for one neighbouring relation (:mod:`odp.certs.relation`), without which
    Theorem 7 is not said to cover the run."""
    if guarantees is None:
        return [], ["that each mechanism's declared guarantee is true (Theorem 7 takes them as "
                    "hypotheses)"]
    rounds = guarantees["rounds"]
    proved = [r for r in rounds if r["status"] == "proved"]
    declared = [r["round"] for r in rounds
                if r["status"] == "declared" and r["mechanism"] in ("declared", "dp")]
    unproved = [r for r in rounds
                if r["status"] == "declared" and r["mechanism"] not in ("declared", "dp")]
    established, missing = [], []
    if proved:
        theorems = sorted({r["theorem"] for r in proved})
        established.append(
            f"the guarantees of {len(proved)} of the {len(rounds)} rounds are proved in Lean "
            "from the hypotheses listed under 'guarantees' below: the accountant recorded each "
            "as made by one of odp's own mechanisms, whose classes, costs and δ are the cost "
            "function of its parameters (Odp.LedgerCore.mechOk), which "
            + ", ".join(theorems) + " prove")
    if rounds and one_relation and capstone_applies(rounds):
        dps = [r["round"] for r in rounds if r["mechanism"] == "dp"]
        kinds = [f"{len(proved)} built-in round(s)"] if proved else []
        kinds += [f"{len(dps)} DP charge(s) (round(s) {_round_list(dps)})"] if dps else []
        established.append(
            f"by {CAPSTONE} (Theorem 7 for this run): its rounds are "
            + " and ".join(kinds) + ", kinds that Odp/Certs/Link.lean joins to Theorem 7; so "
            "if each round's request was what its mech row names, with the recorded parameters "
            "and costs (mechOk checked the rows; the theorem assumes them of the requests), the "
            "run is (ε_t, δ_t)-DP and these rows are the accountant's own — provided every "
            "hypothesis listed under 'guarantees' holds")
    if declared:
        missing.append(
            f"the declared guarantees of round(s) {_round_list(declared)} (a user's own "
            "mechanism or a DP charge): Theorem 7 takes them as hypotheses")
    if unproved:
        kinds_ = ", ".join(sorted({r["mechanism"] for r in unproved}))
        missing.append(
            f"the guarantees of round(s) {_round_list([r['round'] for r in unproved])} "
            f"({kinds_}): their classes and costs are the named mechanism's "
            "(Odp.LedgerCore.mechOk), but no Lean theorem proves it (declared; see its note)")
    if proved:
        missing.append("the hypotheses listed under 'guarantees' below (noise laws, "
                       "sensitivity and data facts, numerical bounds): stated, not proved")
    missing.append(guarantees.get("general", GENERAL))
    return established, missing


def assess(text: str, sidecar: dict[str, Any], trust: Trust | None, rounds: int, *,
           guarantees: dict[str, Any] | None = None,
           relation: RelationReport | None = None) -> TrustReport:
    """Check the chain and what the auditor brought; say what that establishes (with
    ``guarantees``, also which rounds' guarantees are proved and which declared; with
    ``relation``, the neighbouring relation they hold for)."""
    from .signing import check_signature

    trust = trust or Trust()
    report = TrustReport()
    report.established.append(f"the {rounds} transitions obey the ledger rules generated from "
                              "Odp/LedgerCore.lean")
    if relation is not None:
        said, unsaid = relation.statements()
        report.established += said
        report.not_established += unsaid
    proved, missing = guarantee_statements(
        guarantees, one_relation=relation is None or relation.one_relation)
    report.established += proved
    report.not_established += missing
    if sidecar.get("version") == 1 or "ledger" not in sidecar:
        asked = requested(trust)
        if asked:
            report.failure = (f"{', '.join(asked)} cannot be applied: a version-1 certificate "
                              "records no ledger chain, so it cannot be checked against a key, "
                              "a head or a ledger")
            return report
        report.not_established.append(
            "which ledger it comes from: a version-1 certificate carries no hash chain, so "
            "anyone can write a self-consistent one")
        return report
    failure, hashes = check_chain(text, sidecar)
    if failure:
        report.failure = f"chain: {failure}"
        return report
    head = sidecar["ledger"]["head"]
    report.head = dict(head, ledger_id=sidecar["ledger"]["genesis"]["ledger_id"])
    report.established.append(
        f"they are exactly the {head['rows']} hash-chained rows of ledger "
        f"{report.head['ledger_id']} whose head (row {head['rows']}) has hash {head['head']}")
    anchored = False
    if trust.expect_head is not None:
        n, digest = trust.expect_head
        at = (sidecar["ledger"]["genesis"]["hash"] if n == 0
              else hashes[n - 1] if n <= len(hashes) else None)
        if at is None:
            report.failure = (f"--expect-head {n}:{digest} cannot be applied: the head you "
                              f"expect is row {n}, but the certificate has only "
                              f"{len(hashes)} rows")
            return report
        if at != digest:
            report.failure = (f"row {n} of the certificate's chain has hash {at}, not the "
                              f"{digest} you expect: a different ledger history")
            return report
        anchored = True
        report.established.append(f"its row {n} has the hash you expected: it extends the "
                                  "head you hold")
    if trust.ledger is not None:
        failure, unusable = _against_ledger(trust.ledger, sidecar, head)
        if failure:
            report.failure, report.bad_input = failure, unusable
            return report
        anchored = True
        from ..ledger import is_postgres_url, redact

        name = redact(trust.ledger) if is_postgres_url(trust.ledger) else trust.ledger
        report.established.append(f"the ledger {name} holds this history (its row "
                                  f"{head['rows']} carries the same hash)")
    verdict, sentence = check_signature(sidecar, public_key=trust.public_key,
                                        hmac_key=trust.hmac_key)
    if verdict is False:
        report.failure = f"signature: {sentence}"
        return report
    if verdict:
        anchored = True
        report.signer = sentence
        report.established.append(sentence)
    elif sentence != "not signed":
        report.not_established.append(sentence)
    if not anchored:
        report.not_established.append(
            "who wrote it: without a signature checked against the data owner's key "
            "(--public-key / --hmac-key) or a head kept by the data owner (--expect-head, "
            "--ledger), anyone can write a self-consistent certificate")
    report.not_established.append(
        f"that the ledger ends at row {head['rows']}: a certificate commits to a prefix; "
        "later rows may exist")
    return report


def _against_ledger(spec: str | os.PathLike[str], sidecar: dict[str, Any],
                    head: dict[str, Any]) -> tuple[str | None, bool]:
    """(failure, whether it is bad input: a ledger that cannot be opened is not a verdict)."""
    path = spec
    from ..ledger import is_postgres_url, open_readonly, redact

    if is_postgres_url(path):
        path = redact(str(path))  # named in messages without its password
    try:
        ledger = open_readonly(spec)
    except LedgerError as exc:
        return f"--ledger {path}: cannot open it as a ledger ({exc})", True
    try:
        if ledger.ledger_id != sidecar["ledger"]["genesis"]["ledger_id"]:
            return f"{path} is ledger {ledger.ledger_id}, not the certificate's", False
        if ledger.chain_head.rows < head["rows"]:
            return (f"{path} has {ledger.chain_head.rows} rows, fewer than the certificate's "
                    f"{head['rows']}"), False
        if ledger._hash_at(head["rows"]) != head["head"]:
            return (f"row {head['rows']} of {path} does not carry the certificate's head hash: "
                    "the certificate is not this ledger's history"), False
    finally:
        ledger.close()
    return None, False


def add_trust_arguments(parser: argparse.ArgumentParser) -> None:
    """``odp verify``'s options for what the auditor brings."""
    parser.add_argument("--public-key", help="the data owner's Ed25519 public key (PEM): the "
                                             "certificate must be signed by it")
    parser.add_argument("--hmac-key", help="the HMAC key file the certificate must be "
                                           "signed with")
    parser.add_argument("--expect-head", metavar="ROWS:HASH",
                        help="a head the data owner kept (odp ledger verify prints it): the "
                             "certificate's chain must pass through it")
    parser.add_argument("--ledger", help="the ledger (read-only), a SQLite file or a "
                                         "postgresql:// URL: it must hold the certificate's "
                                         "history")


def trust_from_args(args: argparse.Namespace) -> Trust:
    expect = getattr(args, "expect_head", None)
    return Trust(public_key=getattr(args, "public_key", None),
                 hmac_key=getattr(args, "hmac_key", None),
                 expect_head=None if expect is None else parse_expect_head(expect),
                 ledger=getattr(args, "ledger", None))
