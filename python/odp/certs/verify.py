"""Verify a certificate with the checker generated from the Lean rules.

The replay uses only ``odp._lean_rules`` (generated from ``Odp/LedgerCore.lean``): each step
must pass ``admits``, its optional ``blocks`` / ``deltas`` rows must pass ``blocksOk`` /
``deltasOk`` and its ``mech`` row ``mechOk`` (the round's classes, costs and δ are the named
mechanism's for its parameters); the final state must equal the budget the sidecar claims.
Each round is then reported as *proved* (by the Lean theorem its mechanism's guarantee has) or
*declared* (:func:`odp.certs.mechanisms.guarantees`).  The text is also
cross-checked against the sidecar row by row (so reordered, altered or missing rows are named)
and against its SHA-256.  The first failure is reported with its row and the rule it breaks.

A version-2 certificate also carries the ledger's hash chain: :mod:`odp.certs.trust` checks it,
checks whatever the auditor brings (a public key, an HMAC key, a head hash, the ledger file),
and the result says what was established and what was not.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import _lean_rules as lean
from ..budget import Budget
from ..errors import CertificateError
from . import mechanisms
from .export import FORMAT, READABLE_VERSIONS, TEXT_VERSION, lanes_sidecar_failure, sidecar_path
from .format import CertificateText, Step, parse
from .trust import Trust, TrustReport, assess


@dataclass
class VerifyResult:
    ok: bool
    message: str
    remaining: Budget | None = None
    row: int | None = None  # 1-based step number of the first failure
    rule: str | None = None  # the rule it breaks
    trust: TrustReport | None = None  # what was established and what was not
    #: per round: proved (by which Lean theorem) or declared (odp.certs.mechanisms.guarantees)
    guarantees: dict[str, Any] | None = None

    def statement_lines(self) -> list[str]:
        """The human-readable account of what this check established and what it did not."""
        if self.trust is None:
            return []
        return ([f"established: {s}" for s in self.trust.established]
                + [f"NOT established: {s}" for s in self.trust.not_established])

    def guarantee_lines(self) -> list[str]:
        """A short per-mechanism summary of which rounds' guarantees are proved."""
        g = self.guarantees
        if g is None:
            return []
        lines = [f"guarantees: {g['proved']} round(s) proved in Lean, {g['declared']} declared"]
        groups: dict[tuple[str, str | None, str | None], list[int]] = {}
        for r in g["rounds"]:
            key = (r["mechanism"], r["theorem"], r.get("note"))
            groups.setdefault(key, []).append(r["round"])
        for (mech, theorem, note), rounds in groups.items():
            how = f"proved ({theorem})" if theorem else f"declared ({note})"
            if theorem and mech in mechanisms.HYPOTHESES:
                how = f"proved ({theorem}) from a stated hypothesis (NOT established above)"
            lines.append(f"  {mech} x{len(rounds)}: {how} — rounds {_ranges(rounds)}")
        return lines

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "message": self.message}
        if self.trust is not None:
            out.update(self.trust.to_json())
        if self.remaining is not None:
            out["remaining"] = self.remaining.to_json()
        if self.row is not None:
            out["row"] = self.row
        if self.rule is not None:
            out["rule"] = self.rule
        return out


def _ranges(ns: list[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``"1-3, 7"``."""
    out: list[str] = []
    for n in ns:
        if out and out[-1].split("-")[-1] == str(n - 1):
            out[-1] = out[-1].split("-")[0] + f"-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def _fail(message: str, row: int | None = None, rule: str | None = None) -> VerifyResult:
    where = f"row {row}: " if row is not None else ""
    return VerifyResult(False, where + message, row=row, rule=rule)


def _admits_failure(s: lean.State, e: lean.Entry) -> str:
    if not e.charged <= e.supEps:
        return f"charged {e.charged} > supEps {e.supEps}"
    if not e.supEps <= s.eps:
        return f"supEps {e.supEps} > remaining eps {s.eps}"
    return f"delta {e.delta} > remaining delta {s.delta}"


def _blocks_failure(e: lean.Entry, blocks: list[int], k: int) -> str:
    if e.supEps != lean.listMax(blocks):
        return f"supEps {e.supEps} is not the largest class cost {lean.listMax(blocks)}"
    if not k < lean.listLen(blocks):
        return f"realized index {k} out of range ({lean.listLen(blocks)} classes)"
    return f"charged {e.charged} is not the cost {lean.blockAt(k, blocks)} of class {k}"


def _step_failure(rule: str | None, s: lean.State, e: lean.Entry, step: Step) -> str:
    """Why ``step`` fails ``rule`` (the first rule :func:`odp._lean_rules.check_step` refused)."""
    if rule == "blocksOk":
        assert step.blocks is not None
        if step.realized is None:
            return "a blocks row without a realised class"
        return _blocks_failure(e, step.blocks, step.realized)
    if rule == "deltasOk":
        assert step.deltas is not None
        return f"the class deltas sum to {lean.listSum(step.deltas)} > delta {e.delta}"
    if rule == "mechOk":
        assert step.mech is not None  # a step without a mech row is declared and passes
        return (f"its classes, costs or δ (blocks {step.blocks}, delta {e.delta}, supEps "
                f"{e.supEps}) are not those of '{step.mech.render()}'"
                + mechanisms.expected_text(step.mech))
    if rule == "refundJustified":
        return (f"charged {e.charged} < supEps {e.supEps} without a blocks row naming the "
                "realised class")
    return _admits_failure(s, e)


def verify(text: str, sidecar: dict[str, Any] | None, trust: Trust | None = None
           ) -> VerifyResult:
    """Check a certificate (text + sidecar) and, for version 2, its ledger chain and whatever
    ``trust`` brings (:mod:`odp.certs.trust`).  Never raises for bad certificates."""
    try:
        cert = parse(text)
    except CertificateError as exc:
        return _fail(f"unreadable certificate: {exc}", rule="format")
    if not isinstance(sidecar, dict) or sidecar.get("format") != FORMAT:
        return _fail("missing or foreign sidecar (CERT.json)", rule="sidecar")
    if sidecar.get("version") not in READABLE_VERSIONS:
        return _fail(f"sidecar version {sidecar.get('version')!r} is not one of "
                     f"{READABLE_VERSIONS}", rule="sidecar")
    rounds = sidecar.get("rounds")
    if not isinstance(rounds, list):
        return _fail("the sidecar has no rounds", rule="sidecar")
    text_version = sidecar.get("text_version", 1)
    if text_version not in (1, TEXT_VERSION):
        return _fail(f"certificate text version {text_version!r} is not 1 or {TEXT_VERSION}",
                     rule="sidecar")
    s = lean.State(*cert.odp_budget)  # a laned certificate: from the ODP lane's share
    entries = []
    for i, step in enumerate(cert.steps, 1):
        if text_version >= 2 and step.mech is None:
            return _fail("a step without its 'mech' row (the sidecar says every step has one)",
                         i, "format")
        e = lean.Entry(step.sup_eps, step.charged, step.delta)
        after, rule = lean.check_step(s, e, blocks=step.blocks, realized=step.realized,
                                      deltas=step.deltas, mech=mechanisms.lean_args(step.mech))
        if after is None:
            return _fail(_step_failure(rule, s, e, step), i, f"Odp.LedgerCore.{rule}")
        s = after
        entries.append(e)
        mismatch = _compare_round(cert.D, step, rounds[i - 1] if i <= len(rounds) else None)
        if mismatch:
            return _fail(mismatch, i, "sidecar")
    if len(cert.steps) != len(rounds):
        return _fail(f"the text has {len(cert.steps)} steps but the sidecar records "
                     f"{len(rounds)} rounds (truncated or padded)", rule="sidecar")
    replayed = lean.replay(lean.State(*cert.odp_budget), entries)
    if replayed != s:  # pragma: no cover - the generated replay is the same rule, row by row
        return _fail("the generated replay disagrees with the row-by-row check", rule="replay")
    try:
        d = int(sidecar["D"])
        budget = Budget.from_json(sidecar["budget"])
        final = sidecar["expected_final"]
    except (KeyError, TypeError, ValueError) as exc:
        return _fail(f"malformed sidecar: {exc}", rule="sidecar")
    if d != cert.D:
        return _fail(f"D is {cert.D} in the text but {d} in the sidecar", rule="sidecar")
    if Fraction(cert.budget_eps, d) != budget.epsilon or Fraction(cert.budget_delta, d) != budget.delta:
        return _fail("the budget row does not match the sidecar's budget", rule="sidecar")
    if (s.eps, s.delta) != (final.get("eps"), final.get("delta")):
        return _fail(f"replay ends at eps={s.eps} delta={s.delta}, not the recorded "
                     f"eps={final.get('eps')} delta={final.get('delta')}", rule="Odp.LedgerCore.replay")
    lanes = lanes_sidecar_failure(cert, sidecar)
    if lanes is not None:
        return _fail(lanes, rule="Odp.LedgerCore.lanesOk")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if digest != sidecar.get("text_sha256"):
        return _fail("the text's SHA-256 does not match the sidecar (edited comments?)",
                     rule="sidecar")
    remaining = Budget(Fraction(s.eps, d), Fraction(s.delta, d))
    guarantees = mechanisms.guarantees([st.mech for st in cert.steps],
                                       [r.get("mechanism") for r in rounds])
    report = assess(text, sidecar, trust, len(cert.steps), guarantees=guarantees)
    if report.failure is not None:
        rule = "chain" if report.failure.startswith("chain:") else "trust"
        return VerifyResult(False, report.failure, rule=rule, trust=report)
    return VerifyResult(True, f"OK: {len(cert.steps)} rounds replay under the rules generated "
                              f"from Odp/LedgerCore.lean; "
                              f"remaining {remaining}" + _lanes_note(cert), remaining=remaining,
                        trust=report, guarantees=guarantees)


def _lanes_note(cert: CertificateText) -> str:
    """For a laned certificate: its lanes and charges hold (``lanesOk``), and ``remaining`` is
    the ODP lane's."""
    if not cert.lanes:
        return ""
    return (f" (of the ODP lane); {len(cert.lanes)} lane(s) and {len(cert.charges)} lane "
            "charge(s) hold under Odp.LedgerCore.lanesOk")


def _compare_round(d: int, step: Step, rnd: object) -> str | None:
    if not isinstance(rnd, dict):
        return "no matching round in the sidecar"
    try:
        if [step.sup_eps, step.charged, step.delta] != list(rnd["step"]):
            return f"step {step.sup_eps} {step.charged} {step.delta} does not match the recorded round {rnd['step']}"
        scaled = [Fraction(c) * d for _, c in rnd["classes"]]
        if step.blocks is not None and ([Fraction(b) for b in step.blocks] != scaled
                                        or step.realized != rnd["realized_index"]):
            return "the blocks row does not match the round's declared classes"
        if step.blocks is None and rnd.get("realized_index") is not None:
            return "the round's blocks row is missing"
        if Fraction(rnd["sup_epsilon"]) * d != step.sup_eps or Fraction(rnd["delta"]) * d != step.delta:
            return "the step does not match the round's declared guarantee"
        costs = [Fraction(c) for _, c in rnd["classes"]]
        if not costs or max(costs) != Fraction(rnd["sup_epsilon"]):
            return "the round's declared sup is not its largest class cost"
        if step.mech is not None:
            expected = mechanisms.row_for(rnd["mechanism"], rnd["params"],
                                          [(label, Fraction(c)) for label, c in rnd["classes"]])
            try:
                row = expected.row(d)
            except CertificateError as exc:
                return f"the round's recorded mechanism parameters are not whole units: {exc}"
            if row != step.mech:
                return (f"the mech row '{step.mech.render()}' is not the one its recorded "
                        f"mechanism {rnd['mechanism']!r} and parameters give ('{row.render()}')")
        charged = Fraction(rnd["charged"])
        idx = rnd.get("realized_index")
        if idx is None:
            if charged != Fraction(rnd["sup_epsilon"]):
                return "a round without a realised class must be charged its sup"
        elif not (isinstance(idx, int) and 0 <= idx < len(costs) and charged == costs[idx]):
            return "the round's charge is not the cost of its realised class"
    except (KeyError, TypeError, ValueError) as exc:
        return f"malformed round in the sidecar: {exc}"
    return None


def read_certificate(path: str | Path) -> tuple[str, dict[str, Any] | None]:
    """Read ``path`` and ``path.json``; the sidecar is None if missing or not JSON."""
    text = Path(path).read_text(encoding="utf-8")
    side = sidecar_path(path)
    try:
        sidecar = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        sidecar = None
    return text, sidecar


def verify_file(path: str | Path, trust: Trust | None = None) -> VerifyResult:
    text, sidecar = read_certificate(path)
    return verify(text, sidecar, trust)
