"""The certificate text format: the ledger format that ``odpcheck`` reads.

    # comment lines and blank lines are ignored
    D <n>                                   all amounts below are natural numbers in units of 1/D
    budget <ε_t·D> <δ_t·D>
    step <supEps·D> <charged·D> <δ_i·D>     one per round, in reservation (Alg. 1) order
    blocks <E_1·D> … <E_m·D> ; realized <k> optional, after its step: Lemma 4 (0-based k)
    deltas <Δ_1·D> … <Δ_m·D>                optional, after its step: Lemma 6
    mech <name> <p_1> … [; <n ε·D δ·D> …]    optional, after its step: the mechanism and its
                                            parameters (odp.certs.mechanisms); none: declared

A laned ledger (:mod:`odp.ledger.lanes`) adds, right after the budget, one row per lane, and one
``charge`` row per round charged to a notion lane, in ledger order among the steps (the steps
are the ODP lane's rounds and replay from its share)::

    lane <kind> <ε_j·D> <δ_j·D> [; <b_1·D> …]  kind odp|zcdp|renyi|advanced; a notion lane's
                                            budget coordinates after ';' (ρ; one per order;
                                            Σε² and Σδ)
    charge <j> <c_1·D> … [; gaussian <m> <σ²·D>]   a round of lane j (0-based among the lanes):
                                            its cost per coordinate; a discrete Gaussian's
                                            integer sensitivity m and variance (grid units)

The rules that give these rows their meaning are ``Odp.LedgerCore.{admits, update, replay,
blocksOk, deltasOk, mechOk, refundJustified}`` (``Odp/LedgerCore.lean``), and for lanes
``lanesOk``, ``odpShare`` and ``gaussianRhoOk``.  Parsing is strict:
any other row, a missing header, a stray or repeated ``blocks``/``deltas``/``mech`` row, an
unknown mechanism, a wrong number of parameters or a malformed number is a
:class:`~odp.errors.CertificateError`.  Text written before ``mech`` rows existed (no
``text_version`` in the sidecar) has none: its rounds are all declared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import CertificateError
from .mechanisms import KINDS, MechRow
from .units import common_denominator, in_units, to_units

__all__ = ["CertificateText", "ChargeRow", "LaneRow", "LANE_KINDS", "MechRow", "Step", "parse",
           "common_denominator", "in_units", "to_units"]

_NAT = re.compile(r"^(0|[1-9][0-9]*)$")


@dataclass
class Step:
    sup_eps: int
    charged: int
    delta: int
    blocks: list[int] | None = None
    realized: int | None = None
    deltas: list[int] | None = None
    line: int = 0  # line number in the text (for messages)
    mech: MechRow | None = None


#: Lane kinds as the text names them, in ``Odp.LedgerCore`` order (laneOdp = 0, …).
LANE_KINDS = ("odp", "zcdp", "renyi", "advanced")


@dataclass
class LaneRow:
    """``lane <kind> <ε_j> <δ_j> [; <b_1> …]`` (units of 1/D)."""

    kind: str
    eps: int
    delta: int
    budget: list[int] = field(default_factory=list)
    line: int = 0

    def render(self) -> str:
        tail = (" ; " + " ".join(map(str, self.budget))) if self.kind != "odp" else ""
        return f"lane {self.kind} {self.eps} {self.delta}{tail}"


@dataclass
class ChargeRow:
    """``charge <j> <c_1> … [; gaussian <m> <s2>]``: a round of lane ``j``; ``after`` is how
    many steps precede it (its place in ledger order)."""

    lane: int
    costs: list[int]
    after: int = 0
    gaussian: tuple[int, int] | None = None
    line: int = 0

    def render(self) -> str:
        tail = "" if self.gaussian is None else f" ; gaussian {self.gaussian[0]} {self.gaussian[1]}"
        return f"charge {self.lane} " + " ".join(map(str, self.costs)) + tail


@dataclass
class CertificateText:
    D: int
    budget_eps: int
    budget_delta: int
    steps: list[Step] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    lanes: list[LaneRow] = field(default_factory=list)
    charges: list[ChargeRow] = field(default_factory=list)

    @property
    def odp_budget(self) -> tuple[int, int]:
        """Where the steps replay from: the budget, or in a laned certificate the ODP lane's
        share (``Odp.LedgerCore.odpShare``: (0, 0) without an ODP lane)."""
        if not self.lanes:
            return self.budget_eps, self.budget_delta
        lane = next((x for x in self.lanes if x.kind == "odp"), None)
        return (lane.eps, lane.delta) if lane is not None else (0, 0)

    def render(self) -> str:
        lines = [f"# {c}" if c else "#" for c in self.comments]
        lines += [f"D {self.D}", f"budget {self.budget_eps} {self.budget_delta}"]
        lines += [lane.render() for lane in self.lanes]
        charges = iter(self.charges)
        pending = next(charges, None)
        for i, s in enumerate(self.steps):
            while pending is not None and pending.after <= i:
                lines.append(pending.render())
                pending = next(charges, None)
            lines.append(f"step {s.sup_eps} {s.charged} {s.delta}")
            if s.blocks is not None:
                lines.append("blocks " + " ".join(map(str, s.blocks)) + f" ; realized {s.realized}")
            if s.deltas is not None:
                lines.append("deltas " + " ".join(map(str, s.deltas)))
            if s.mech is not None:
                lines.append(s.mech.render())
        while pending is not None:
            lines.append(pending.render())
            pending = next(charges, None)
        return "\n".join(lines) + "\n"


def _nat(word: str, line: int, what: str) -> int:
    if not _NAT.match(word):
        raise CertificateError(f"line {line}: {what} must be a natural number, got {word!r}")
    return int(word)


def _mech_row(words: list[str], line: int) -> MechRow:
    """``<name> <p>… [; <n ε δ>…]`` with the name and parameter shape of its kind."""
    if not words or words[0] not in KINDS:
        raise CertificateError(f"line {line}: expected 'mech <name> …' with a known mechanism "
                               f"({', '.join(KINDS)}), got {' '.join(words[:1])!r}")
    kind = KINDS[words[0]]
    rest = words[1:]
    groups: tuple[tuple[int, int, int], ...] | None = None
    if kind.groups:
        if rest.count(";") != 1:
            shape = ("; <k_i ε δ> …" if kind.arity == 0 else "<k_1> … ; <count ε δ> …")
            raise CertificateError(f"line {line}: expected 'mech {kind.name} {shape}'")
        cut = rest.index(";")
        rest, tail = rest[:cut], rest[cut + 1:]
        nums = [_nat(w, line, "a step-group number") for w in tail]
        if not nums or len(nums) % 3:
            raise CertificateError(f"line {line}: step groups come in threes (count ε δ)")
        groups = tuple((nums[i], nums[i + 1], nums[i + 2]) for i in range(0, len(nums), 3))
    params = tuple(_nat(w, line, "a mechanism parameter") for w in rest)
    if (kind.arity is None and not params) or (kind.arity is not None
                                               and len(params) != kind.arity):
        want = "one or more" if kind.arity is None else str(kind.arity)
        raise CertificateError(f"line {line}: 'mech {kind.name}' takes {want} parameters, "
                               f"got {len(params)}")
    return MechRow(kind.name, params, groups)


def parse(text: str) -> CertificateText:
    """Parse certificate text strictly (see the module docstring)."""
    if not text.strip():
        raise CertificateError("the file is empty" if not text else "the file holds no rows")
    if text.lstrip().startswith("{"):
        raise CertificateError("this is JSON, not certificate text (the sidecar CERT.json? give "
                               "the certificate CERT itself)")
    if not text.endswith("\n"):
        raise CertificateError("the certificate text does not end with a newline (truncated?)")
    cert: CertificateText | None = None
    header_d: int | None = None
    comments: list[str] = []
    last = ""  # the last step or charge row (a blocks/deltas/mech row belongs to a step)
    for lineno, raw in enumerate(text.split("\n")[:-1], 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            comments.append(line[1:].strip())
            continue
        words = line.split()
        kind = words[0]
        if kind in ("blocks", "deltas") and last == "charge":
            raise CertificateError(f"line {lineno}: a '{kind}' row must follow its step")
        last, kind = (kind if kind in ("step", "charge") else last), kind
        if kind == "D":
            if header_d is not None or len(words) != 2:
                raise CertificateError(f"line {lineno}: expected exactly one 'D <n>' header")
            header_d = _nat(words[1], lineno, "D")
            if header_d == 0:
                raise CertificateError(f"line {lineno}: D must be positive")
        elif kind == "budget":
            if header_d is None or cert is not None or len(words) != 3:
                raise CertificateError(f"line {lineno}: expected 'budget <eps> <delta>' right "
                                       "after the D header")
            cert = CertificateText(header_d, _nat(words[1], lineno, "budget ε"),
                                   _nat(words[2], lineno, "budget δ"), comments=comments)
        elif kind == "step":
            if cert is None or len(words) != 4:
                raise CertificateError(f"line {lineno}: expected 'step <supEps> <charged> "
                                       "<delta>' after the budget")
            sup, charged, delta = (_nat(w, lineno, "a step amount") for w in words[1:])
            cert.steps.append(Step(sup, charged, delta, line=lineno))
        elif kind == "blocks":
            if cert is None or not cert.steps or cert.steps[-1].blocks is not None:
                raise CertificateError(f"line {lineno}: a 'blocks' row must follow its step")
            if ";" not in words or words[-2:-1] != ["realized"] or words.index(";") != len(words) - 3:
                raise CertificateError(f"line {lineno}: expected 'blocks E… ; realized k'")
            costs = words[1:words.index(";")]
            if not costs:
                raise CertificateError(f"line {lineno}: a 'blocks' row needs at least one cost")
            cert.steps[-1].blocks = [_nat(w, lineno, "a block cost") for w in costs]
            cert.steps[-1].realized = _nat(words[-1], lineno, "the realized index")
        elif kind == "deltas":
            if cert is None or not cert.steps or cert.steps[-1].deltas is not None:
                raise CertificateError(f"line {lineno}: a 'deltas' row must follow its step")
            cert.steps[-1].deltas = [_nat(w, lineno, "a class delta") for w in words[1:]]
        elif kind == "mech":
            if (cert is None or not cert.steps or cert.steps[-1].mech is not None
                    or last == "charge"):
                raise CertificateError(f"line {lineno}: a 'mech' row must follow its step")
            cert.steps[-1].mech = _mech_row(words[1:], lineno)
        elif kind == "lane":
            if cert is None or cert.steps or cert.charges:
                raise CertificateError(f"line {lineno}: 'lane' rows come right after the budget")
            cert.lanes.append(_lane_row(words[1:], lineno))
        elif kind == "charge":
            if cert is None or not cert.lanes:
                raise CertificateError(f"line {lineno}: a 'charge' row needs the ledger's 'lane' "
                                       "rows first")
            cert.charges.append(_charge_row(words[1:], lineno, cert))
        else:
            raise CertificateError(f"line {lineno}: unknown row type {kind!r}")
    if cert is None:
        raise CertificateError("the certificate has no 'D' and 'budget' header")
    if any(lane.kind == "odp" for lane in cert.lanes[1:]):
        raise CertificateError("a laned certificate's 'lane odp' row, if any, is its first lane")
    if cert.steps and cert.lanes and not any(lane.kind == "odp" for lane in cert.lanes):
        raise CertificateError("'step' rows in a laned certificate without an ODP lane")
    return cert


def _lane_row(words: list[str], line: int) -> LaneRow:
    if not words or words[0] not in LANE_KINDS:
        raise CertificateError(f"line {line}: expected 'lane <kind> <eps> <delta> [; <budget> …]' "
                               f"with kind one of {', '.join(LANE_KINDS)}")
    kind, rest = words[0], words[1:]
    budget: list[int] = []
    if kind == "odp":
        if len(rest) != 2:
            raise CertificateError(f"line {line}: expected 'lane odp <eps> <delta>'")
    else:
        if len(rest) < 4 or rest[2] != ";":
            raise CertificateError(f"line {line}: expected 'lane {kind} <eps> <delta> ; <budget> …'")
        budget = [_nat(w, line, "a lane budget") for w in rest[3:]]
        want = {"zcdp": 1, "advanced": 2}.get(kind)
        if want is not None and len(budget) != want:
            raise CertificateError(f"line {line}: a {kind} lane has {want} budget coordinate(s)")
    return LaneRow(kind, _nat(rest[0], line, "a lane's epsilon"),
                   _nat(rest[1], line, "a lane's delta"), budget, line)


def _charge_row(words: list[str], line: int, cert: CertificateText) -> ChargeRow:
    gaussian = None
    if ";" in words:
        cut = words.index(";")
        tail = words[cut + 1:]
        if len(tail) != 3 or tail[0] != "gaussian":
            raise CertificateError(f"line {line}: expected '; gaussian <m> <s2>' after the costs")
        gaussian = (_nat(tail[1], line, "the sensitivity"), _nat(tail[2], line, "the variance"))
        words = words[:cut]
    if len(words) < 2:
        raise CertificateError(f"line {line}: expected 'charge <lane> <cost> …'")
    j = _nat(words[0], line, "a lane number")
    if j >= len(cert.lanes) or cert.lanes[j].kind == "odp":
        raise CertificateError(f"line {line}: lane {j} is not a notion lane of this certificate")
    costs = [_nat(w, line, "a lane cost") for w in words[1:]]
    if len(costs) != len(cert.lanes[j].budget):
        raise CertificateError(f"line {line}: lane {j} has {len(cert.lanes[j].budget)} "
                               f"coordinate(s), the charge gives {len(costs)}")
    if gaussian is not None and cert.lanes[j].kind != "zcdp":
        raise CertificateError(f"line {line}: a 'gaussian' binding is for a zCDP lane's charge")
    return ChargeRow(j, costs, len(cert.steps), gaussian, line)
