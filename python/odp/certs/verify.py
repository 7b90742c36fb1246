"""Verify a certificate with the checker generated from the Lean rules.

The replay uses only ``odp._lean_rules`` (generated from ``Odp/LedgerCore.lean``): each step
must pass ``admits``, its optional ``blocks`` / ``deltas`` rows must pass ``blocksOk`` /
``deltasOk`` and its ``mech`` row ``mechOk`` (the round's classes, costs and δ are the named
mechanism's for its parameters); the final state must equal the budget the sidecar claims.
Each round is then reported as *proved* (by the Lean theorem its mechanism's guarantee has) or
*declared* (:func:`odp.certs.mechanisms.guarantees`).  The text is also
cross-checked against the sidecar row by row (so reordered, altered or missing rows are named)
and against its SHA-256, and its neighbouring relation — recorded in the text and in the sidecar
— must agree and hold for every built-in round (:mod:`odp.certs.relation`).  The first failure
is reported with its row and the rule it breaks.

A version-2 certificate also carries the ledger's hash chain: :mod:`odp.certs.trust` checks it,
checks whatever the auditor brings (a public key, an HMAC key, a head hash, the ledger file),
and the result says what was established and what was not.
"""

from __future__ import annotations

import hashlib
import json
import textwrap
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from .. import _lean_rules as lean
from ..budget import Budget, display_named
from ..errors import CertificateError, OdpError
from . import mechanisms
from .export import (FORMAT, READABLE_VERSIONS, TEXT_VERSIONS, lanes_sidecar_failure,
                     sidecar_path)
from .format import CertificateText, Step, parse
from .relation import RelationReport, check_relation
from .trust import Trust, TrustReport, assess


#: ``odp verify`` wraps its lines at this many columns.
WIDTH = 100


def wrap(text: str, first: str, rest: str, width: int = WIDTH) -> list[str]:
    """``text`` in lines of at most ``width`` columns (a word longer than that, such as a hash,
    stays whole), the first indented by ``first``, the others by ``rest``."""
    return textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


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
    #: the input is not what ``odp verify`` takes (exit 2): text that does not parse, a sidecar
    #: missing or not odp's, a ledger that cannot be opened — not a verdict on a certificate
    bad_input: bool = False
    #: the neighbouring relation every round holds for (:mod:`odp.certs.relation`)
    relation: RelationReport | None = None

    def headline(self, width: int = WIDTH) -> list[str]:
        """``OK: …`` or ``FAIL row k: … [rule R]``, wrapped at ``width`` columns."""
        text = (self.message if self.ok else
                "FAIL " + self.message + (f" [rule {self.rule}]" if self.rule else ""))
        return wrap(text, "", "    ", width)

    def statement_lines(self, width: int = WIDTH) -> list[str]:
        """What this check established and what it did not, wrapped at ``width`` columns."""
        if self.trust is None:
            return []
        out: list[str] = []
        for title, items in (("established:", self.trust.established),
                             ("NOT established:", self.trust.not_established)):
            if items:
                out.append(title)
                for item in items:
                    out += wrap(item, "  - ", "    ", width)
        return out

    def guarantee_lines(self, width: int = WIDTH) -> list[str]:
        """Per round (rounds with the same report grouped): proved by which theorem or
        declared, and every hypothesis its guarantee still rests on."""
        g = self.guarantees
        if g is None:
            return []
        n = len(g["rounds"])
        out = wrap(f"guarantees: {g['proved']} of {n} round(s) proved in Lean, {g['declared']} "
                   "declared; what each rests on:", "", "    ", width)
        groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for r in g["rounds"]:
            key = (r["mechanism"], r["status"], r["theorem"], r.get("note"),
                   tuple(r.get("hypotheses", ())))
            groups.setdefault(key, []).append(r)
        for (mech, status, theorem, note, hypotheses), members in groups.items():
            ns = [r["round"] for r in members]
            where = ("round " if len(ns) == 1 else "rounds ") + _ranges(ns)
            names = sorted({str(r["name"]) for r in members if r.get("name") not in (None, mech)})
            label = mech + (f" (recorded as {', '.join(names[:3])}"
                            + (", …" if len(names) > 3 else "") + ")" if names else "")
            if status == "proved":
                how = f"{label}, odp's own mechanism: proved by {theorem}, assuming"
            else:
                how = f"{label}: declared ({note}); it rests on"
            out += wrap(f"{where}: {how}", "  ", "      ", width)
            for h in hypotheses:
                out += wrap(h, "    - ", "      ", width)
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "message": self.message}
        if self.trust is not None:
            out.update(self.trust.to_json())
        if self.remaining is not None:
            out["remaining"] = self.remaining.to_json()
        if self.relation is not None:
            out["neighbours"] = self.relation.to_json()
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


def _fail(message: str, row: int | None = None, rule: str | None = None, *,
          bad_input: bool = False) -> VerifyResult:
    where = f"row {row}: " if row is not None else ""
    return VerifyResult(False, where + message, row=row, rule=rule, bad_input=bad_input)


def _not_a_certificate(message: str, rule: str) -> VerifyResult:
    """Input that is not a certificate at all (exit 2 in ``odp verify``)."""
    return _fail(message, rule=rule, bad_input=True)


class _MalformedRound(Exception):
    """A sidecar round without the fields a round has."""


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
    ``trust`` brings (:mod:`odp.certs.trust`).  Never raises for bad certificates: input that is
    not a certificate gives a result with ``bad_input`` set.  A key file that cannot be read or
    is not a key, or a ledger file that does not exist, raises
    :class:`~odp.errors.CertificateError` before anything is checked."""
    if trust is not None:
        trust.check_inputs()  # a key or ledger file that is not one: CertificateError
    try:
        cert = parse(text)
    except CertificateError as exc:
        return _not_a_certificate(f"not a certificate: {exc}", "format")
    if not isinstance(sidecar, dict) or sidecar.get("format") != FORMAT:
        return _not_a_certificate("its sidecar (CERT.json) is missing, not JSON, or not an odp "
                                  "certificate's", "sidecar")
    if sidecar.get("version") not in READABLE_VERSIONS:
        return _not_a_certificate(f"sidecar version {sidecar.get('version')!r} is not one of "
                                  f"{READABLE_VERSIONS}", "sidecar")
    rounds = sidecar.get("rounds")
    if not isinstance(rounds, list):
        return _not_a_certificate("the sidecar has no rounds", "sidecar")
    text_version = sidecar.get("text_version", 1)
    if text_version not in TEXT_VERSIONS:
        return _not_a_certificate(f"certificate text version {text_version!r} is not one of "
                                  f"{TEXT_VERSIONS}", "sidecar")
    try:
        d = int(sidecar["D"])
        budget = Budget.from_json(sidecar["budget"])
        final = sidecar["expected_final"]
        final_eps, final_delta = final.get("eps"), final.get("delta")
    except (KeyError, TypeError, ValueError, AttributeError, OdpError) as exc:
        return _not_a_certificate(f"malformed sidecar: {exc}", "sidecar")
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
        try:
            mismatch = _compare_round(cert.D, step, rounds[i - 1] if i <= len(rounds) else None,
                                      by_name=text_version == 2)
        except _MalformedRound as exc:
            return _fail(str(exc), i, "sidecar", bad_input=True)
        if mismatch:
            return _fail(mismatch, i, "sidecar")
    if len(cert.steps) != len(rounds):
        return _fail(f"the text has {len(cert.steps)} steps but the sidecar records "
                     f"{len(rounds)} rounds (truncated or padded)", rule="sidecar")
    replayed = lean.replay(lean.State(*cert.odp_budget), entries)
    if replayed != s:  # pragma: no cover - the generated replay is the same rule, row by row
        return _fail("the generated replay disagrees with the row-by-row check", rule="replay")
    if d != cert.D:
        return _fail(f"D is {cert.D} in the text but {d} in the sidecar", rule="sidecar")
    if Fraction(cert.budget_eps, d) != budget.epsilon or Fraction(cert.budget_delta, d) != budget.delta:
        return _fail("the budget row does not match the sidecar's budget", rule="sidecar")
    if (s.eps, s.delta) != (final_eps, final_delta):
        return _fail(f"replay ends at eps={s.eps} delta={s.delta}, not the recorded "
                     f"eps={final_eps} delta={final_delta}", rule="Odp.LedgerCore.replay")
    lanes = lanes_sidecar_failure(cert, sidecar)
    if lanes is not None:
        return _fail(lanes, rule="Odp.LedgerCore.lanesOk")
    relation, failure, at = check_relation(cert, sidecar, rounds)
    if failure is not None:
        return _fail(failure, at, "neighbours")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if digest != sidecar.get("text_sha256"):
        return _fail("the text's SHA-256 does not match the sidecar (edited comments?)",
                     rule="sidecar")
    remaining = Budget(Fraction(s.eps, d), Fraction(s.delta, d))
    guarantees = mechanisms.guarantees([st.mech for st in cert.steps],
                                       [r.get("mechanism") for r in rounds],
                                       by_name=text_version == 2)
    report = assess(text, sidecar, trust, len(cert.steps), guarantees=guarantees,
                    relation=relation)
    if report.failure is not None:
        rule = "chain" if report.failure.startswith("chain:") else "trust"
        return VerifyResult(False, report.failure, rule=rule, trust=report,
                            bad_input=report.bad_input)
    left = (display_named("ε", remaining.epsilon, "down") + ", "
            + display_named("δ", remaining.delta, "down"))
    return VerifyResult(True, f"OK: {len(cert.steps)} rounds replay under the rules generated "
                              f"from Odp/LedgerCore.lean; remaining {left}"
                              + _lanes_note(cert),
                        remaining=remaining, trust=report, guarantees=guarantees,
                        relation=relation)


def _lanes_note(cert: CertificateText) -> str:
    """For a laned certificate: its lanes and charges hold (``lanesOk``), and ``remaining`` is
    the ODP lane's."""
    if not cert.lanes:
        return ""
    whose = (" (of the ODP lane)" if any(lane.kind == "odp" for lane in cert.lanes) else
             " (no ODP lane: the run has no ODP rounds; each lane's remaining budget is in "
             "`odp ledger show`)")
    return (f"{whose}; {len(cert.lanes)} lane(s) and {len(cert.charges)} lane "
            "charge(s) hold under Odp.LedgerCore.lanesOk")


def _compare_round(d: int, step: Step, rnd: object, *, by_name: bool = False) -> str | None:
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
                                          [(label, Fraction(c)) for label, c in rnd["classes"]],
                                          by_name=by_name)
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
        raise _MalformedRound(f"malformed round in the sidecar: {exc!r}") from None
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
