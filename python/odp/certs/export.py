"""Export a run (a ledger) as a certificate: the ``odpcheck`` ledger text plus a JSON sidecar.

All amounts are scaled by ``D`` = the lcm of every denominator in the run, so the text holds
natural numbers only (Lean needs only ℕ, ``omega`` and ``decide``).  The sidecar records the
run id, each round's mechanism, parameters, declared classes and costs, realised class, and the
Lean declarations each row relies on with the SHA-256 of their files; plus the final budget the
replay must reach and the SHA-256 of the text.

Text version 3 (sidecar key ``"text_version": 3``) gives every round a ``mech`` row: for a
round the accountant recorded as made by one of odp's own mechanisms
(:mod:`odp.mechanisms.builtin`), that mechanism and its exact parameters, derived from the
recorded ``params`` (:mod:`odp.certs.mechanisms`); for any other round ``mech dp`` or ``mech
declared``.  The checkers hold the round's classes, costs and δ to the row.  The amounts of its
parameters count towards ``D``.  Text version 2 had the same rows but read the kind from the
recorded mechanism *name*; such certificates still verify, with every round declared.

Sidecar version 2 also records the ledger's hash chain (``"ledger"``: its genesis, every row's
exact values with its hash, and the head), so ``odp verify`` can check that the text is exactly
what those rows produce and name the ledger by its head hash; and optionally a ``"signature"``
over that head (:mod:`odp.certs.signing`).  The trust model is in docs/certificates.md.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import _lean_rules as lean
from ..budget import Budget
from ..errors import CertificateError, OutputError
from ..guarantees import GuaranteeRecord, Label
from ..ledger import Ledger, RoundRecord
from ..ledger.chain import CHAIN_VERSION, ROW_FIELDS, EventRow, Genesis
from ..ledger.records import BudgetState, apply_row
from . import mechanisms, rules
from .format import CertificateText, Step, common_denominator, in_units

FORMAT = "odp-certificate"
VERSION = 2  # of the sidecar (2: with the ledger's hash chain)
READABLE_VERSIONS = (1, 2)
#: Text version 3: every step has a ``mech`` row, built-in only for rounds the accountant
#: recorded as odp's own (odp.certs.format); 2: the same rows read from the recorded names
#: (every round reported declared); 1: no rows (all declared).
TEXT_VERSION = 3
TEXT_VERSIONS = (1, 2, 3)


@dataclass
class Certificate:
    """A certificate: ``text`` (what ``odpcheck`` reads) and ``sidecar`` (JSON metadata)."""

    text: str
    sidecar: dict[str, Any]

    def sign(self, *, ed25519_key: str | Path | None = None,
             hmac_key: str | Path | None = None) -> "Certificate":
        """Sign the certificate's statement (its ledger head, text digest, budget and final
        state) with an Ed25519 private key or an HMAC key file (:mod:`odp.certs.signing`)."""
        from .signing import sign

        if "ledger" not in self.sidecar:
            raise CertificateError("only a certificate with its ledger chain can be signed")
        self.sidecar["signature"] = sign(self.sidecar, ed25519_key=ed25519_key,
                                         hmac_key=hmac_key)
        return self

    def write(self, path: str | Path) -> tuple[Path, Path]:
        """Write ``path`` (the text) and ``path.json`` (the sidecar), both or neither.

        Each is written to a temporary file beside it, flushed, and renamed into place, so a
        failure (a directory in the way, a missing or read-only directory, a full disk) raises
        :class:`odp.errors.OutputError` and leaves no partial or temporary file behind; files
        that were there before are replaced only once both new ones are complete."""
        path = Path(path)
        side = sidecar_path(path)
        side_text = json.dumps(self.sidecar, indent=2, sort_keys=True) + "\n"  # fail before writing
        _write_both([(path, self.text), (side, side_text)])
        return path, side

    @property
    def remaining(self) -> Budget:
        final = self.sidecar["expected_final"]
        d = int(self.sidecar["D"])
        return Budget(Fraction(final["eps"], d), Fraction(final["delta"], d))


def sidecar_path(path: str | Path) -> Path:
    return Path(str(path) + ".json")


def _write_both(files: list[tuple[Path, str]]) -> None:
    """Write every ``(path, text)`` or none (:meth:`Certificate.write`)."""
    for target, _ in files:
        if target.is_dir():
            raise OutputError(f"cannot write the certificate: {target} is a directory")
        if target.parent.exists() and not target.parent.is_dir():
            raise OutputError(f"cannot write the certificate: {target.parent} is not a "
                              "directory")
    temps: list[tuple[Path, Path]] = []
    existed = [target.exists() for target, _ in files]
    placed = 0
    current = files[0][0]
    try:
        for target, text in files:
            current = target
            temp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
            # O_EXCL: never another file; mode 0o666 under the umask, like any new file
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            temps.append((temp, target))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        for temp, target in temps:
            current = target
            os.replace(temp, target)
            placed += 1
    except OSError as exc:
        for temp, _ in temps:
            temp.unlink(missing_ok=True)
        for (target, _), was_there in list(zip(files, existed))[:placed]:
            if not was_there:  # a new file whose partner failed: not left alone
                target.unlink(missing_ok=True)
        raise OutputError(f"cannot write the certificate: {current}: {exc.strerror or exc}; "
                          "nothing was written") from None


def _costs(guarantee: GuaranteeRecord) -> list[tuple[Label, Fraction]]:
    return list(guarantee.classes)


def _class_deltas(guarantee: GuaranteeRecord) -> list[Fraction] | None:
    pairs = guarantee.class_deltas
    return None if pairs is None else [d for _, d in pairs]


def certificate_of(ledger: Ledger) -> Certificate:
    """The certificate of a ledger with its hash chain: the rounds are replayed from the
    verified rows themselves, so the text is exactly what the chained rows say."""
    events = ledger.events()
    genesis = ledger.genesis
    budget = Budget._trusted(genesis.epsilon, genesis.delta)
    state = BudgetState(budget)
    for row, _ in events:
        apply_row(state, row)
    return build_certificate(budget, list(state.rounds), genesis.ledger_id,
                             chain=(genesis, events))


def chain_json(genesis: Genesis, events: list[tuple[EventRow, str]]) -> dict[str, Any]:
    """The sidecar's ``"ledger"`` entry: genesis, every row with its hash, and the head."""
    rounds = sum(1 for row, _ in events if row.kind == "reserve")
    head = events[-1][1] if events else genesis.hash
    return {"chain_version": CHAIN_VERSION, "genesis": genesis.to_json(),
            "fields": list(ROW_FIELDS) + ["row_hash"],
            "rows": [row.to_json() + [digest] for row, digest in events],
            "head": {"rows": len(events), "rounds": rounds, "head": head}}


def build_certificate(budget: Budget, rounds: list[RoundRecord], run_id: str, *,
                      chain: tuple[Genesis, list[tuple[EventRow, str]]] | None = None,
                      text_version: int = TEXT_VERSION) -> Certificate:
    """Build the certificate of a run from its budget and rounds (reservation order).  With
    ``chain`` (the ledger's genesis and verified rows) the sidecar is version 2 and records
    the chain; without it, version 1 (no binding to a ledger).  ``text_version=1`` writes the
    text without ``mech`` rows (how certificates were written before them), ``2`` with rows
    read from the recorded names (to re-derive such certificates)."""
    if text_version not in TEXT_VERSIONS:
        raise CertificateError(f"unknown certificate text version {text_version!r}")
    held_eps = sum((r.epsilon_held for r in rounds), Fraction(0))
    held_delta = sum((r.delta for r in rounds), Fraction(0))
    if held_eps > budget.epsilon or held_delta > budget.delta:
        raise CertificateError(
            "this ledger holds more than its budget under Alg. 1's sum rule, so it was admitted "
            "by a custom admission rule (a privacy filter); certificates replay the sum rule "
            "(Odp/LedgerCore.lean) and do not apply to it")
    values = [budget.epsilon, budget.delta]
    derived: list[mechanisms.Derived | None] = []
    for r in rounds:
        values += [r.sup_epsilon, r.epsilon_held, r.delta]
        values += [c for _, c in _costs(r.guarantee)]
        values += _class_deltas(r.guarantee) or []
        mech = (mechanisms.row_for(r.mechanism, r.params, _costs(r.guarantee),
                                   by_name=text_version == 2)
                if text_version >= 2 else None)
        derived.append(mech)
        values += mech.amounts() if mech is not None else []
    d = common_denominator(values)
    text = CertificateText(d, in_units(budget.epsilon, d), in_units(budget.delta, d), comments=[
        f"odp certificate v{text_version}, run {run_id}",
        f"{len(rounds)} rounds; amounts are natural numbers in units of 1/D (rules: Odp/LedgerCore.lean)",
    ])
    sidecar_rounds = []
    for r, mech in zip(rounds, derived):
        step = Step(in_units(r.sup_epsilon, d), in_units(r.epsilon_held, d), in_units(r.delta, d))
        costs = _costs(r.guarantee)
        cited = list(rules.STEP_RULES)
        realized_index = None
        if r.status == "settled" and r.label is not None:
            labels = [label for label, _ in costs]
            if r.label not in labels:
                raise CertificateError(f"round {r.index}: realised class {r.label!r} not declared")
            realized_index = labels.index(r.label)
            step.blocks = [in_units(c, d) for _, c in costs]
            step.realized = realized_index
            cited += rules.BLOCKS_RULES
            if [label for label, _ in costs] == ["all"]:
                cited += rules.DP_RULES
        class_deltas = _class_deltas(r.guarantee)
        if class_deltas is not None:
            step.deltas = [in_units(x, d) for x in class_deltas]
            cited += rules.DELTAS_RULES
        if mech is not None:
            step.mech = mech.row(d)
            cited += rules.mech_rules(mech.kind)
        text.steps.append(step)
        extra = {} if step.mech is None else {"mech": step.mech.render()}
        sidecar_rounds.append({
            **extra,
            "index": r.index,
            "round_id": r.round_id,
            "mechanism": r.mechanism,
            "params": r.params,
            "classes": [[label, str(c)] for label, c in costs],
            "class_deltas": None if class_deltas is None else [str(x) for x in class_deltas],
            "delta": str(r.delta),
            "sup_epsilon": str(r.sup_epsilon),
            "status": r.status,
            "realized": r.label,
            "realized_index": realized_index,
            "charged": str(r.epsilon_held),
            "reason": r.reason if r.status == "settled" else "pending: charged at its sup",
            "step": [step.sup_eps, step.charged, step.delta],
            "rules": rules.cite(cited),
        })
    final = lean.replay(lean.State(text.budget_eps, text.budget_delta),
                        [lean.Entry(s.sup_eps, s.charged, s.delta) for s in text.steps])
    expected = (in_units(budget.epsilon - held_eps, d) if budget.epsilon >= held_eps else None,
                in_units(budget.delta - held_delta, d) if budget.delta >= held_delta else None)
    if final is None or (final.eps, final.delta) != expected:
        raise CertificateError(
            "the run does not replay under the rules generated from Odp/LedgerCore.lean to the "
            f"accountant's own remaining budget (replay: {final}, accountant: {expected}); "
            "this is a bug — please report it"
        )
    body = text.render()
    sidecar = {
        "format": FORMAT,
        "version": VERSION if chain is not None else 1,
        "run_id": run_id,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "D": str(d),
        "budget": budget.to_json(),
        "expected_final": {"eps": final.eps, "delta": final.delta},
        **({"text_version": text_version} if text_version >= 2 else {}),
        "text_sha256": hashlib.sha256(body.encode("utf-8")).hexdigest(),
        "lean": {
            "namespace": lean.LEAN_NAMESPACE,
            "checker_source": lean.SOURCE,
            "checker_source_sha256": lean.SOURCE_SHA256,
            "sources": dict(lean.LEAN_SOURCES),
        },
        "rounds": sidecar_rounds,
    }
    if chain is not None:
        sidecar["ledger"] = chain_json(*chain)
    return Certificate(body, sidecar)
