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

The neighbouring relation of the ledger (:mod:`odp.neighbours`, recorded in its genesis) is in
both halves: a comment line of the text (``# neighbours replace-one: …``, :func:`relation_line`)
and the sidecar's ``"neighbours"``; ``odp verify`` requires them to agree, with the chain's
genesis, and with every built-in round's relation.  A certificate of a ledger made before odp
recorded the relation has neither (it means replace-one).

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
from typing import Any, Mapping, Sequence

from .. import _lean_rules as lean
from ..budget import Budget
from ..errors import CertificateError, OutputError
from ..guarantees import GuaranteeRecord
from ..ledger import Ledger, RoundRecord
from ..ledger.chain import CHAIN_VERSION, ROW_FIELDS, EventRow, Genesis
from ..ledger.lanes import Lane, LaneBook, LaneCharge
from ..ledger.records import BudgetState, apply_row
from . import mechanisms, rules
from .format import (LANE_KINDS, CertificateText, ChargeRow, LaneRow, Step, common_denominator,
                     in_units)
from ..types import Label

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
    state = BudgetState.for_genesis(genesis)
    for row, _ in events:
        apply_row(state, row)
    return build_certificate(state.total, list(state.rounds), genesis.ledger_id,
                             chain=(genesis, events),
                             lanes=None if state.lanes is None else state.lanes.lanes,
                             neighbours=genesis.neighbours)


#: The comment of the certificate text that records the neighbouring relation: its first word
#: is the key, its second the relation (``odp.neighbours``).
RELATION_KEY = "neighbours"


def relation_line(relation: str) -> str:
    """The text's comment recording the ledger's neighbouring relation (without the ``#``)."""
    return (f"{RELATION_KEY} {relation}: every round holds for {relation} neighbours, the one "
            "relation Theorem 7 composes")


def relations_in_text(cert: CertificateText) -> list[str]:
    """The relations the text's comments record (:func:`relation_line`; none in a certificate
    made before odp recorded the relation, one in any other)."""
    out = []
    for comment in cert.comments:
        words = comment.split()
        if words and words[0] == RELATION_KEY:
            out.append(words[1].rstrip(":") if len(words) > 1 else "")
    return out


def chain_json(genesis: Genesis, events: list[tuple[EventRow, str]]) -> dict[str, Any]:
    """The sidecar's ``"ledger"`` entry: genesis, every row with its hash, and the head."""
    rounds = sum(1 for row, _ in events if row.kind == "reserve")
    head = events[-1][1] if events else genesis.hash
    return {"chain_version": CHAIN_VERSION, "genesis": genesis.to_json(),
            "fields": list(ROW_FIELDS) + ["row_hash"],
            "rows": [row.to_json() + [digest] for row, digest in events],
            "head": {"rows": len(events), "rounds": rounds, "head": head}}


def _gaussian_binding(r: RoundRecord, lane: Lane) -> tuple[int, Fraction] | None:
    """A zCDP-lane round of odp's own Gaussian mechanism (recorded so by the accountant,
    ``params[BUILTIN_KEY]``, never read from its name): ``(m, σ²)`` — its integer sensitivity
    and variance in grid units, from its recorded parameters — which fix its ρ
    (``gaussianRhoOk``); None for any other round (its cost is declared)."""
    from ..mechanisms.builtin import BUILTIN_KEY
    if lane.notion != "zcdp" or not isinstance(r.params, Mapping) \
            or r.params.get(BUILTIN_KEY) != "gaussian":
        return None
    try:
        units = Fraction(r.params["sensitivity"]) / Fraction(r.params["granularity"])
        s2 = Fraction(r.params["sigma2_units"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None
    return -(-units.numerator // units.denominator), s2


def build_certificate(budget: Budget, rounds: list[RoundRecord], run_id: str, *,
                      chain: tuple[Genesis, list[tuple[EventRow, str]]] | None = None,
                      text_version: int = TEXT_VERSION,
                      lanes: Sequence[Lane] | None = None,
                      neighbours: str | None = None) -> Certificate:
    """Build the certificate of a run from its budget and rounds (reservation order).  With
    ``chain`` (the ledger's genesis and verified rows) the sidecar is version 2 and records
    the chain; without it, version 1 (no binding to a ledger).  ``text_version=1`` writes the
    text without ``mech`` rows (how certificates were written before them), ``2`` with rows
    read from the recorded names (to re-derive such certificates).  ``lanes``: the ledger's
    lanes (:mod:`odp.ledger.lanes`): ``lane`` rows, the ODP lane's rounds as steps replayed
    from its share, the others as ``charge`` rows (docs/certificates.md).  ``neighbours``: the
    ledger's recorded relation (``"replace-one"`` / ``"add-remove"``; with ``chain``, its
    genesis's), written as a comment of the text and in the sidecar; ``None`` (a ledger made
    before odp recorded it) writes neither."""
    if text_version not in TEXT_VERSIONS:
        raise CertificateError(f"unknown certificate text version {text_version!r}")
    if chain is not None:  # the relation is the chain's own (its genesis records it)
        if neighbours is not None and neighbours != chain[0].neighbours:
            raise CertificateError(f"the neighbouring relation {neighbours!r} is not the one "
                                   f"the ledger's genesis records ({chain[0].neighbours!r})")
        neighbours = chain[0].neighbours
    lane_list = tuple(lanes) if lanes is not None else ()
    lane_rounds = [r for r in rounds if r.lane is not None]
    if lane_rounds and not lane_list:
        raise CertificateError("lane rounds in a ledger without lanes")
    if lane_list:
        rounds = [r for r in rounds if r.lane is None]
        start = LaneBook(lane_list).odp_share
    else:
        start = budget
    held_eps = sum((r.epsilon_held for r in rounds), Fraction(0))
    held_delta = sum((r.delta for r in rounds), Fraction(0))
    if held_eps > start.epsilon or held_delta > start.delta:
        raise CertificateError(
            "this ledger holds more than its budget under Alg. 1's sum rule, so it was admitted "
            "by a custom admission rule (a privacy filter); certificates replay the sum rule "
            "(Odp/LedgerCore.lean) and do not apply to it")
    values = [budget.epsilon, budget.delta]
    index = {lane.name: j for j, lane in enumerate(lane_list)}
    charged: list[tuple[RoundRecord, Lane, tuple[Fraction, ...], tuple[int, Fraction] | None]] = []
    for lane in lane_list:
        values += [lane.epsilon, lane.delta, *lane.budget]
    for r in lane_rounds:
        charge = r.guarantee
        if not isinstance(charge, LaneCharge) or charge.lane not in index:
            raise CertificateError(f"round {r.index}: a charge to an unknown lane")
        lane = lane_list[index[charge.lane]]
        vector = lane.vector(charge.cost)
        binding = _gaussian_binding(r, lane)
        charged.append((r, lane, vector, binding))
        values += [*vector, *([binding[1]] if binding is not None else [])]
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
    ] + ([f"{len(lane_list)} lanes ({', '.join(x.name for x in lane_list)}); "
          f"{len(lane_rounds)} lane rounds (charge rows)"] if lane_list else [])
      + ([relation_line(neighbours)] if neighbours is not None else []))
    for lane in lane_list:
        text.lanes.append(LaneRow(lane.notion, in_units(lane.epsilon, d), in_units(lane.delta, d),
                                  [in_units(b, d) for b in lane.budget]))
    odp_before = 0
    by_index = iter(rounds)
    next_odp = next(by_index, None)
    sidecar_lanes = []
    for r, lane, vector, binding in charged:
        while next_odp is not None and next_odp.index < r.index:
            odp_before += 1
            next_odp = next(by_index, None)
        row = ChargeRow(index[lane.name], [in_units(v, d) for v in vector], odp_before,
                        None if binding is None else (binding[0], in_units(binding[1], d)))
        text.charges.append(row)
        lane_cited = rules.LANE_RULES + (rules.GAUSSIAN_LANE_RULES if binding is not None else ())
        sidecar_lanes.append({
            "index": r.index, "round_id": r.round_id, "mechanism": r.mechanism,
            "params": r.params, "lane": lane.name, "notion": lane.notion,
            "cost": [str(c) for c in r.guarantee.cost],  # type: ignore[attr-defined]
            "charge": row.costs,
            "gaussian": None if row.gaussian is None else list(row.gaussian),
            "rules": rules.cite(lane_cited),
        })
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
    final = lean.replay(lean.State(*text.odp_budget),
                        [lean.Entry(s.sup_eps, s.charged, s.delta) for s in text.steps])
    expected = (in_units(start.epsilon - held_eps, d) if start.epsilon >= held_eps else None,
                in_units(start.delta - held_delta, d) if start.delta >= held_delta else None)
    if lane_list and lane_failure(text) is not None:
        raise CertificateError(
            "the run's lanes do not pass the rules generated from Odp/LedgerCore.lean "
            f"({lane_failure(text)}); this is a bug — please report it")
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
        **({"neighbours": neighbours} if neighbours is not None else {}),
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
    if lane_list:
        sidecar["lanes"] = [lane.to_json() for lane in lane_list]
        sidecar["lane_rounds"] = sidecar_lanes
    if chain is not None:
        sidecar["ledger"] = chain_json(*chain)
    return Certificate(body, sidecar)


def lean_lanes(cert: CertificateText) -> tuple[lean.State, tuple[lean.Share, ...],
                                                 tuple[lean.Slot, ...], tuple[lean.Cost, ...],
                                                 tuple[lean.GaussRow, ...]]:
    """A laned certificate's lanes as the Lean ledger rules take them (``Odp.LedgerCore``:
    the total, ``Share``s, ``Slot``s, ``Cost``s and ``GaussRow``s)."""
    kinds = {name: k for k, name in enumerate(LANE_KINDS)}
    shares = tuple(lean.Share(kinds[x.kind], x.eps, x.delta) for x in cert.lanes)
    slots = tuple(lean.Slot(j, k, b) for j, x in enumerate(cert.lanes)
                  for k, b in enumerate(x.budget))
    costs = tuple(lean.Cost(c.lane, k, a) for c in cert.charges for k, a in enumerate(c.costs))
    gauss = tuple(lean.GaussRow(c.costs[0], *c.gaussian) for c in cert.charges
                  if c.gaussian is not None)
    return lean.State(cert.budget_eps, cert.budget_delta), shares, slots, costs, gauss


def lane_failure(cert: CertificateText) -> str | None:
    """Why a laned certificate's lanes fail the generated rules (``lanesOk``: the shares add up
    to the budget, every charge goes to a lane's coordinate and every lane holds its charges;
    ``gaussiansOk``: every Gaussian charge is the noise's ρ), or None."""
    total, shares, slots, costs, gauss = lean_lanes(cert)
    if lean.sharesEps(shares) != total.eps or lean.sharesDelta(shares) != total.delta:
        return (f"the lanes' shares add up to eps={lean.sharesEps(shares)} "
                f"delta={lean.sharesDelta(shares)}, not to the budget {total.eps} {total.delta}")
    if not lean.costsKnown(slots, costs):
        return "a charge goes to no coordinate of a lane's budget"
    for j, share in enumerate(shares):
        if not lean.laneFits(j, share.kind, costs, slots):
            return (f"lane {j} ({LANE_KINDS[share.kind]}) does not hold its charges: its sums "
                    f"{[lean.costSum(j, k, costs) for k in range(len(cert.lanes[j].budget))]} "
                    f"exceed its budget {cert.lanes[j].budget}")
    if not lean.lanesOk(total, shares, slots, costs):  # pragma: no cover - the same rule
        return "the lanes fail lanesOk"
    for c in cert.charges:
        if c.gaussian is not None and not lean.gaussianRhoOk(cert.D, c.costs[0], *c.gaussian):
            return (f"line {c.line}: the charge {c.costs[0]} is not the ρ of the discrete "
                    f"Gaussian it names (sensitivity {c.gaussian[0]}, variance {c.gaussian[1]}/D)")
    return None


def lanes_sidecar_failure(cert: CertificateText, sidecar: dict[str, Any]) -> str | None:
    """A laned certificate's lanes and charges against its sidecar: the recorded lanes re-read
    and re-checked (:meth:`odp.ledger.lanes.Lane.from_json`: each budget converts to at most its
    share, rigorously), the ``lane`` rows are exactly those lanes in units of 1/D, and each
    ``charge`` row is its recorded round's cost; then :func:`lane_failure`."""
    from ..ledger.lanes import Lane as _Lane
    from ..errors import LedgerError

    recorded, rounds = sidecar.get("lanes"), sidecar.get("lane_rounds")
    if not cert.lanes:
        return "the sidecar records lanes the text does not have" if recorded else None
    if not isinstance(recorded, list) or not isinstance(rounds, list):
        return "a laned certificate's sidecar lacks its lanes or lane rounds"
    try:
        lanes = [_Lane.from_json(x) for x in recorded]
    except LedgerError as exc:
        return f"the sidecar's lanes: {exc}"
    d = cert.D
    try:
        want = [LaneRow(x.notion, in_units(x.epsilon, d), in_units(x.delta, d),
                        [in_units(b, d) for b in x.budget]) for x in lanes]
    except CertificateError as exc:
        return f"the sidecar's lanes are not whole units of 1/D: {exc}"
    if [(x.kind, x.eps, x.delta, x.budget) for x in cert.lanes] != [
            (x.kind, x.eps, x.delta, x.budget) for x in want]:
        return "the 'lane' rows are not the sidecar's lanes"
    if len(rounds) != len(cert.charges):
        return (f"the text has {len(cert.charges)} charge rows but the sidecar records "
                f"{len(rounds)} lane rounds")
    for row, rnd in zip(cert.charges, rounds):
        try:
            lane = lanes[row.lane]
            if rnd["lane"] != lane.name or rnd["notion"] != lane.notion:
                return f"line {row.line}: the charge's lane is not its round's"
            cost = [Fraction(c) for c in rnd["cost"]]
            vector = [in_units(v, d) for v in lane.vector(cost)]
            if vector != row.costs or rnd["charge"] != row.costs:
                return f"line {row.line}: the charge is not its round's recorded cost"
            if (rnd["gaussian"] is None) != (row.gaussian is None) or (
                    row.gaussian is not None and list(row.gaussian) != rnd["gaussian"]):
                return f"line {row.line}: the Gaussian binding is not its round's"
        except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError,
                CertificateError) as exc:
            return f"malformed lane round in the sidecar: {exc}"
    return lane_failure(cert)
