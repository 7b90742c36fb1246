"""The certificate text format: the ledger format that ``odpcheck`` reads.

    # comment lines and blank lines are ignored
    D <n>                                   all amounts below are natural numbers in units of 1/D
    budget <ε_t·D> <δ_t·D>
    step <supEps·D> <charged·D> <δ_i·D>     one per round, in reservation (Alg. 1) order
    blocks <E_1·D> … <E_m·D> ; realized <k> optional, after its step: Lemma 4 (0-based k)
    deltas <Δ_1·D> … <Δ_m·D>                optional, after its step: Lemma 6
    mech <name> <p_1> … [; <n ε·D δ·D> …]    optional, after its step: the mechanism and its
                                            parameters (odp.certs.mechanisms); none: declared

The rules that give these rows their meaning are ``Odp.LedgerCore.{admits, update, replay,
blocksOk, deltasOk, mechOk, refundJustified}`` (``Odp/LedgerCore.lean``).  Parsing is strict:
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

__all__ = ["CertificateText", "MechRow", "Step", "parse", "common_denominator", "in_units",
           "to_units"]

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


@dataclass
class CertificateText:
    D: int
    budget_eps: int
    budget_delta: int
    steps: list[Step] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    def render(self) -> str:
        lines = [f"# {c}" if c else "#" for c in self.comments]
        lines += [f"D {self.D}", f"budget {self.budget_eps} {self.budget_delta}"]
        for s in self.steps:
            lines.append(f"step {s.sup_eps} {s.charged} {s.delta}")
            if s.blocks is not None:
                lines.append("blocks " + " ".join(map(str, s.blocks)) + f" ; realized {s.realized}")
            if s.deltas is not None:
                lines.append("deltas " + " ".join(map(str, s.deltas)))
            if s.mech is not None:
                lines.append(s.mech.render())
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
    for lineno, raw in enumerate(text.split("\n")[:-1], 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            comments.append(line[1:].strip())
            continue
        words = line.split()
        kind = words[0]
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
            if cert is None or not cert.steps or cert.steps[-1].mech is not None:
                raise CertificateError(f"line {lineno}: a 'mech' row must follow its step")
            cert.steps[-1].mech = _mech_row(words[1:], lineno)
        else:
            raise CertificateError(f"line {lineno}: unknown row type {kind!r}")
    if cert is None:
        raise CertificateError("the certificate has no 'D' and 'budget' header")
    return cert
