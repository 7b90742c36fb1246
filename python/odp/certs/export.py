"""Export a run (a ledger) as a certificate: the ``odpcheck`` ledger text plus a JSON sidecar.

All amounts are scaled by ``D`` = the lcm of every denominator in the run, so the text holds
natural numbers only (Lean needs only ℕ, ``omega`` and ``decide``).  The sidecar records the
run id, each round's mechanism, parameters, declared classes and costs, realised class, and the
Lean declarations each row relies on with the SHA-256 of their files; plus the final budget the
replay must reach and the SHA-256 of the text.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import _lean_rules as lean
from ..budget import Budget
from ..errors import CertificateError
from ..ledger import RoundRecord
from . import rules
from .format import CertificateText, Step, common_denominator, in_units

FORMAT = "odp-certificate"
VERSION = 1


@dataclass
class Certificate:
    """A certificate: ``text`` (what ``odpcheck`` reads) and ``sidecar`` (JSON metadata)."""

    text: str
    sidecar: dict[str, Any]

    def write(self, path: str | Path) -> tuple[Path, Path]:
        """Write ``path`` (the text) and ``path.json`` (the sidecar)."""
        path = Path(path)
        side = sidecar_path(path)
        side_text = json.dumps(self.sidecar, indent=2, sort_keys=True) + "\n"  # fail before writing
        path.write_text(self.text, encoding="utf-8")
        side.write_text(side_text, encoding="utf-8")
        return path, side

    @property
    def remaining(self) -> Budget:
        final = self.sidecar["expected_final"]
        d = int(self.sidecar["D"])
        return Budget(Fraction(final["eps"], d), Fraction(final["delta"], d))


def sidecar_path(path: str | Path) -> Path:
    return Path(str(path) + ".json")


def _costs(guarantee: dict[str, Any]) -> list[tuple[Any, Fraction]]:
    return [(label, Fraction(cost)) for label, cost in guarantee.get("costs", [])]


def _class_deltas(guarantee: dict[str, Any]) -> list[Fraction] | None:
    pairs = guarantee.get("class_deltas")
    return None if pairs is None else [Fraction(d) for _, d in pairs]


def build_certificate(budget: Budget, rounds: list[RoundRecord], run_id: str) -> Certificate:
    """Build the certificate of a run from its budget and rounds (reservation order)."""
    held_eps = sum((r.epsilon_held for r in rounds), Fraction(0))
    held_delta = sum((r.delta for r in rounds), Fraction(0))
    if held_eps > budget.epsilon or held_delta > budget.delta:
        raise CertificateError(
            "this ledger holds more than its budget under Alg. 1's sum rule, so it was admitted "
            "by a custom admission rule (a privacy filter); certificates replay the sum rule "
            "(Odp/LedgerCore.lean) and do not apply to it")
    values = [budget.epsilon, budget.delta]
    for r in rounds:
        values += [r.sup_epsilon, r.epsilon_held, r.delta]
        values += [c for _, c in _costs(r.guarantee)]
        values += _class_deltas(r.guarantee) or []
    d = common_denominator(values)
    text = CertificateText(d, in_units(budget.epsilon, d), in_units(budget.delta, d), comments=[
        f"odp certificate v{VERSION}, run {run_id}",
        f"{len(rounds)} rounds; amounts are natural numbers in units of 1/D (rules: Odp/LedgerCore.lean)",
    ])
    sidecar_rounds = []
    for r in rounds:
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
        text.steps.append(step)
        sidecar_rounds.append({
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
        "version": VERSION,
        "run_id": run_id,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "D": str(d),
        "budget": budget.to_json(),
        "expected_final": {"eps": final.eps, "delta": final.delta},
        "text_sha256": hashlib.sha256(body.encode("utf-8")).hexdigest(),
        "lean": {
            "namespace": lean.LEAN_NAMESPACE,
            "checker_source": lean.SOURCE,
            "checker_source_sha256": lean.SOURCE_SHA256,
            "sources": dict(lean.LEAN_SOURCES),
        },
        "rounds": sidecar_rounds,
    }
    return Certificate(body, sidecar)
