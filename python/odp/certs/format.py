"""The certificate text format (v1): the ledger format that ``odpcheck`` reads.

    # comment lines and blank lines are ignored
    D <n>                                   all amounts below are natural numbers in units of 1/D
    budget <ε_t·D> <δ_t·D>
    step <supEps·D> <charged·D> <δ_i·D>     one per round, in reservation (Alg. 1) order
    blocks <E_1·D> … <E_m·D> ; realized <k> optional, after its step: Lemma 4 (0-based k)
    deltas <Δ_1·D> … <Δ_m·D>                optional, after its step: Lemma 6

The rules that give these rows their meaning are ``Odp.LedgerCore.{admits, update, replay,
blocksOk, deltasOk}`` (``Odp/LedgerCore.lean``).  Parsing is strict: any other row, a missing
header, a stray ``blocks`` row or a malformed number is a :class:`~odp.errors.CertificateError`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable

from ..errors import CertificateError

_NAT = re.compile(r"^(0|[1-9][0-9]*)$")


def common_denominator(values: Iterable[Fraction]) -> int:
    """D: the lcm of the denominators, so that every value is a whole number of units 1/D."""
    return math.lcm(1, *((v if type(v) is Fraction else Fraction(v)).denominator
                         for v in values))


def in_units(x: Fraction, d: int) -> int:
    """``x·D`` as a natural number (``x`` must be a non-negative multiple of ``1/D``).

    Integer arithmetic only (this runs on every enforced transition): ``x = p/q`` in lowest
    terms is a whole number of units ``1/D`` iff ``q`` divides ``D``, and then ``x·D = p·(D/q)``.
    """
    f = x if type(x) is Fraction else Fraction(x)
    units, rest = divmod(d, f.denominator)
    if rest or f.numerator < 0:
        raise CertificateError(f"{x} is not a natural number of units 1/{d}")
    return f.numerator * units


def to_units(values: Iterable[Fraction]) -> tuple[int, list[int]]:
    """``(D, [v·D for v in values])`` with ``D = common_denominator(values)``, in one pass of
    integer arithmetic (the same numbers as :func:`common_denominator` and :func:`in_units`;
    this runs on every enforced transition).  A negative value raises :class:`CertificateError`
    like :func:`in_units`."""
    ratios = [(v if type(v) is Fraction else Fraction(v)).as_integer_ratio() for v in values]
    d = math.lcm(1, *[q for _, q in ratios])
    scaled = [n * (d // q) for n, q in ratios]
    if scaled and min(scaled) < 0:
        n, q = next((n, q) for n, q in ratios if n < 0)
        raise CertificateError(f"{Fraction(n, q)} is not a natural number of units 1/{d}")
    return d, scaled


@dataclass
class Step:
    sup_eps: int
    charged: int
    delta: int
    blocks: list[int] | None = None
    realized: int | None = None
    deltas: list[int] | None = None
    line: int = 0  # line number in the text (for messages)


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
        return "\n".join(lines) + "\n"


def _nat(word: str, line: int, what: str) -> int:
    if not _NAT.match(word):
        raise CertificateError(f"line {line}: {what} must be a natural number, got {word!r}")
    return int(word)


def parse(text: str) -> CertificateText:
    """Parse certificate text strictly (see the module docstring)."""
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
        else:
            raise CertificateError(f"line {lineno}: unknown row type {kind!r}")
    if cert is None:
        raise CertificateError("the certificate has no 'D' and 'budget' header")
    return cert
