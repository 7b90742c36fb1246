#!/usr/bin/env python3
"""Generate ``python/odp/_lean_rules.py`` from the ledger rules in ``Odp/LedgerCore.lean``.

The Lean file marks a region with ``-- BEGIN GENERATOR SUBSET`` / ``-- END GENERATOR SUBSET``.
Inside it, only this subset of Lean 4 is accepted (anything else is refused with the line
number, never guessed):

* ``structure Name where`` with one ``field : Nat`` per line, and an optional ``deriving`` line;
* ``def name (a : T) … : R :=`` followed by one expression (on the same line or the next ones);
* ``def name (a : T) … : List E → R`` followed by exactly two lines ``| [] => e`` and
  ``| x :: xs => e`` (structural recursion on the list);
* ``def name (a : T) … : List A → List B → R`` followed by exactly three lines
  ``| [], [] => e``, ``| x :: xs, y :: ys => e`` and ``| _, _ => e`` (recursion on two lists at
  once; the recursive calls keep the leading parameters and end with ``xs ys``);
* expressions: ℕ literals, variables, field access ``x.f``, application of defs of the region,
  parentheses, ``a + b``, ``a - b`` (ℕ subtraction, truncated at 0 as in Lean), ``a * b``,
  ``decide (a ≤ b)``, ``decide (a < b)``, ``decide (a = b)`` (on ℕ), ``a && b``, ``a || b``,
  ``!a``, ``if c then a else b``, ``⟨a, b⟩`` and ``{ f := a, g := b }`` for structures, list
  literals ``[a, b]``/``[]`` and ``a :: l`` (Lean's ``infixr:67``: tighter than ``+``, looser
  than ``*``), ``some a``, ``none``, ``true``, ``false``.

Translation: structures become frozen dataclasses whose fields must be natural numbers;
``Option T`` is ``T | None``; lists are tuples; recursion whose recursive calls all pass the
leading parameters unchanged is evaluated as a right fold over the list (no Python recursion
depth limit, and a def that calls itself twice stays linear) — a map ``f (x :: xs) = h :: f xs``
is built front to back in linear time — and recursion whose recursive calls are all in tail
position becomes a loop.  Signatures carry Python annotations (``Nat`` -> ``int``, ``List T`` ->
``Sequence[T]``, ``Option T`` -> ``T | None``).  When the region defines ``admits``, ``update``,
``blocksOk``, ``deltasOk``, ``mechOk`` and ``refundJustified`` over ``State``/``Entry``/
``StepGroup``, the output ends with ``check_step`` — the one step check every caller uses
(run-time enforcement, certificate verification), a fixed composition of those generated rules
(``Odp.LedgerCore.stepRowsOk`` and ``admits``).  The output names the source file and its
SHA-256, the SHA-256 of every Lean file that certificates cite, and (``LEAN_THEOREMS``) the
theorems of the compiled modules under ``Odp/Mech`` — the proofs of the built-in mechanisms'
guarantees that a certificate may cite (:mod:`odp.certs.mechanisms`).

    python scripts/gen_rules.py [--source Odp/LedgerCore.lean] [--output python/odp/_lean_rules.py]
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = Path("Odp/LedgerCore.lean")
DEFAULT_OUTPUT = Path("python/odp/_lean_rules.py")
#: Lean files whose declarations certificates cite (hashes are recorded in the output).
CITED_FILES = ("Odp/LedgerCore.lean", "Odp/Core/Ledger.lean", "Odp/Core/Composition.lean",
               "Odp/Core/Lemmas.lean", "Odp/Core/Lemma20.lean", "Odp/Core/Defs.lean",
               "Odp/Core/Lanes.lean")
BEGIN, END = "-- BEGIN GENERATOR SUBSET", "-- END GENERATOR SUBSET"


class GenerationError(Exception):
    """The Lean source is outside the supported subset (the message says where and why)."""


# ----------------------------------------------------------------------------------- lexing

def strip_comments(text: str) -> str:
    """Remove ``/- … -/`` (nested) and ``--`` comments, keeping line structure."""
    out, i, depth = [], 0, 0
    while i < len(text):
        if text.startswith("/-", i):
            depth += 1
            i += 2
            continue
        if depth and text.startswith("-/", i):
            depth -= 1
            i += 2
            continue
        ch = text[i]
        if depth:
            out.append("\n" if ch == "\n" else " ")
            i += 1
            continue
        if text.startswith("--", i):
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
            continue
        out.append(ch)
        i += 1
    if depth:
        raise GenerationError("unterminated block comment")
    return "".join(out)


TOKEN = re.compile(r"""
    (?P<ws>[ \t]+)
  | (?P<num>\d+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_']*)
  | (?P<sym>:=|=>|::|&&|\|\||→|≤|<|=|\+|-|\*|!|\(|\)|⟨|⟩|\{|\}|,|:|\.|\||\[|\])
""", re.X)


@dataclass
class Tok:
    kind: str
    text: str
    line: int


def tokenize(text: str, line: int) -> list[Tok]:
    toks, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise GenerationError(f"line {line}: unsupported character {text[pos]!r}")
        if m.lastgroup != "ws":
            toks.append(Tok(m.lastgroup, m.group(), line))
        pos = m.end()
    return toks


# ----------------------------------------------------------------------------------- AST

@dataclass
class Num:
    value: int


@dataclass
class Var:
    name: str


@dataclass
class Field:
    obj: object
    name: str


@dataclass
class Call:
    func: str
    args: list


@dataclass
class BinOp:
    op: str
    left: object
    right: object


@dataclass
class Not:
    arg: object


@dataclass
class Decide:
    op: str
    left: object
    right: object


@dataclass
class If:
    cond: object
    then: object
    other: object


@dataclass
class Ctor:
    fields: list  # positional (⟨…⟩) or [(name, expr)] for { … }
    named: bool
    struct: str | None = None


@dataclass
class Some:
    arg: object


@dataclass
class Const:
    value: object  # None / True / False


@dataclass
class ListLit:
    items: list


@dataclass
class Cons:
    head: object
    tail: object


# ----------------------------------------------------------------------------------- parsing

KEYWORDS = {"if", "then", "else", "decide", "some", "none", "true", "false", "fun", "let",
            "match", "with", "where", "do", "have", "show", "by", "def", "theorem"}


class ExprParser:
    def __init__(self, toks: list[Tok], funcs: set[str]):
        self.toks, self.i, self.funcs = toks, 0, funcs

    def peek(self, k: int = 0) -> Tok | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def error(self, msg: str) -> GenerationError:
        tok = self.peek()
        where = f"line {tok.line}, at {tok.text!r}" if tok else "at end of expression"
        return GenerationError(f"{where}: {msg}")

    def expect(self, text: str) -> Tok:
        tok = self.peek()
        if tok is None or tok.text != text:
            raise self.error(f"expected {text!r}")
        self.i += 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.text == text and tok.kind in ("sym", "ident")

    def parse(self):
        e = self.expr()
        if self.peek() is not None:
            raise self.error("unexpected token after the expression")
        return e

    def expr(self):
        if self.at("if"):
            self.i += 1
            cond = self.expr()
            self.expect("then")
            then = self.expr()
            self.expect("else")
            other = self.expr()
            return If(cond, then, other)
        return self.or_expr()

    def or_expr(self):
        left = self.and_expr()
        while self.at("||"):
            self.i += 1
            left = BinOp("||", left, self.and_expr())
        return left

    def and_expr(self):
        left = self.not_expr()
        while self.at("&&"):
            self.i += 1
            left = BinOp("&&", left, self.not_expr())
        return left

    def not_expr(self):
        if self.at("!"):
            self.i += 1
            return Not(self.not_expr())
        return self.additive()

    def additive(self):
        left = self.cons()
        while self.at("+") or self.at("-"):
            op = self.peek().text
            self.i += 1
            left = BinOp(op, left, self.cons())
        tok = self.peek()
        if tok is not None and tok.text in ("≤", "<", "="):
            raise self.error("comparisons are only supported as decide (a ≤ b), decide (a < b) "
                             "or decide (a = b)")
        return left

    def cons(self):
        """``a :: l`` (right associative, binding tighter than ``+`` and looser than ``*``, as
        Lean's ``infixr:67``)."""
        head = self.multiplicative()
        if self.at("::"):
            self.i += 1
            return Cons(head, self.cons())
        return head

    def multiplicative(self):
        left = self.application()
        while self.at("*"):
            self.i += 1
            left = BinOp("*", left, self.application())
        return left

    def application(self):
        tok = self.peek()
        if tok is None:
            raise self.error("expected an expression")
        if tok.text == "decide":
            self.i += 1
            self.expect("(")
            left = self.additive_no_cmp()
            op_tok = self.peek()
            if op_tok is None or op_tok.text not in ("≤", "<", "="):
                raise self.error("decide needs one of ≤, <, = inside its parentheses")
            self.i += 1
            right = self.additive_no_cmp()
            self.expect(")")
            return Decide(op_tok.text, left, right)
        if tok.text == "some":
            self.i += 1
            return Some(self.atom())
        if tok.kind == "ident" and tok.text in self.funcs:
            self.i += 1
            args = []
            while self.starts_atom():
                args.append(self.atom())
            return Call(tok.text, args)
        return self.atom()

    def additive_no_cmp(self):
        left = self.cons()
        while self.at("+") or self.at("-"):
            op = self.peek().text
            self.i += 1
            left = BinOp(op, left, self.cons())
        return left

    def starts_atom(self) -> bool:
        tok = self.peek()
        if tok is None:
            return False
        if tok.kind == "num" or tok.text in ("(", "⟨", "{", "["):
            return True
        return tok.kind == "ident" and tok.text not in KEYWORDS - {"none", "true", "false"}

    def atom(self):
        tok = self.peek()
        if tok is None:
            raise self.error("expected an expression")
        if tok.kind == "num":
            self.i += 1
            return self.fields(Num(int(tok.text)))
        if tok.text == "(":
            self.i += 1
            e = self.expr()
            self.expect(")")
            return self.fields(e)
        if tok.text == "[":
            self.i += 1
            elems = []
            if not self.at("]"):
                elems.append(self.expr())
                while self.at(","):
                    self.i += 1
                    elems.append(self.expr())
            self.expect("]")
            return ListLit(elems)
        if tok.text == "⟨":
            self.i += 1
            items = [self.expr()]
            while self.at(","):
                self.i += 1
                items.append(self.expr())
            self.expect("⟩")
            return Ctor(items, named=False)
        if tok.text == "{":
            self.i += 1
            items = []
            while True:
                name = self.peek()
                if name is None or name.kind != "ident":
                    raise self.error("expected a field name in { … }")
                self.i += 1
                self.expect(":=")
                items.append((name.text, self.expr()))
                if self.at(","):
                    self.i += 1
                    continue
                break
            self.expect("}")
            return Ctor(items, named=True)
        if tok.kind == "ident":
            if tok.text in ("none", "true", "false"):
                self.i += 1
                return Const({"none": None, "true": True, "false": False}[tok.text])
            if tok.text in KEYWORDS:
                raise self.error(f"unsupported construct {tok.text!r}")
            if tok.text in self.funcs:  # a def used as an argument needs parentheses
                raise self.error("a function call used as an argument needs parentheses")
            self.i += 1
            return self.fields(Var(tok.text))
        raise self.error("unsupported syntax")

    def fields(self, e):
        while self.at("."):
            self.i += 1
            name = self.peek()
            if name is None or name.kind != "ident":
                raise self.error("expected a field name after '.'")
            self.i += 1
            e = Field(e, name.text)
        return e


# ----------------------------------------------------------------------------------- decls

@dataclass
class Struct:
    name: str
    fields: list[str]


@dataclass
class Def:
    name: str
    params: list[tuple[str, str]]
    ret: str
    body: object = None
    list_elem: str | None = None  # element type for list recursion
    nil: object = None
    cons: tuple | None = None  # (head, tail, expr)
    line: int = 0
    #: recursion on two lists: (elem A, elem B, [] [] case, (x, xs, y, ys, expr), other case)
    list2: tuple | None = None


TYPE_RE = re.compile(r"^(Nat|Bool|Option [A-Z][A-Za-z0-9_]*|List [A-Z][A-Za-z0-9_]*|[A-Z][A-Za-z0-9_]*)$")


def parse_type(text: str, line: int, structs: dict) -> str:
    t = " ".join(text.split())
    if not TYPE_RE.match(t):
        raise GenerationError(f"line {line}: unsupported type {text.strip()!r}")
    base = t.split()[-1]
    if base not in ("Nat", "Bool") and base not in structs:
        raise GenerationError(f"line {line}: unknown type {base!r}")
    return t


def py_type(t: str) -> str:
    """The Python annotation of a (checked) Lean type of the subset."""
    words = t.split()
    if words[0] == "List":
        return f"Sequence[{py_type(words[1])}]"
    if words[0] == "Option":
        return f"{py_type(words[1])} | None"
    return {"Nat": "int", "Bool": "bool"}.get(t, t)


#: The single step check built from the generated rules (emitted when the Lean region defines
#: them with these parameter types): every caller — run-time enforcement, certificate
#: verification and export — checks a step through it, in this order.
STEP_CHECK_NEEDS = {
    "blocksOk": [("e", "Entry"), ("bs", "List Nat"), ("k", "Nat")],
    "deltasOk": [("e", "Entry"), ("ds", "List Nat")],
    "mechOk": [("e", "Entry"), ("bs", "List Nat"), ("hasBlocks", "Bool"), ("kind", "Nat"),
               ("ps", "List Nat"), ("gs", "List StepGroup")],
    "refundJustified": [("e", "Entry"), ("hasBlocks", "Bool")],
    "admits": [("s", "State"), ("e", "Entry")],
    "update": [("s", "State"), ("e", "Entry")],
    "kindDeclared": [],
}
STEP_CHECK = '''

#: The rules :func:`check_step` applies, in order (their Lean names in ``LEAN_NAMESPACE``).
STEP_RULES = ('blocksOk', 'deltasOk', 'mechOk', 'refundJustified', 'admits', 'update')

#: A ``mech`` row as :func:`check_step` takes it: ``(kind, params, groups)``.
MechArgs = tuple[int, Sequence[int], Sequence[StepGroup]]


def check_step(s: State, e: Entry, *, blocks: Sequence[int] | None = None,
               realized: int | None = None, deltas: Sequence[int] | None = None,
               mech: MechArgs | None = None) -> tuple[State, None] | tuple[None, str]:
    """One ledger step under the generated rules (``Odp.LedgerCore.stepRowsOk`` and ``admits``):
    ``(update(s, e), None)`` when the step's optional Lemma 4 row (``blocks``, ``realized``)
    passes ``blocksOk``, its optional Lemma 6 row (``deltas``) passes ``deltasOk``, its ``mech``
    row passes ``mechOk`` (none: a declared round, ``kindDeclared``), the charge passes
    ``refundJustified`` and ``admits`` accepts it; else ``(None, rule)`` naming the first rule
    that fails."""
    if blocks is not None and (realized is None or not blocksOk(e, blocks, realized)):
        return None, 'blocksOk'
    if deltas is not None and not deltasOk(e, deltas):
        return None, 'deltasOk'
    kind, params, groups = mech if mech is not None else (kindDeclared(), (), ())
    if not mechOk(e, blocks if blocks is not None else (), blocks is not None, kind, params,
                  groups):
        return None, 'mechOk'
    if not refundJustified(e, blocks is not None):
        return None, 'refundJustified'
    if not admits(s, e):
        return None, 'admits'
    return update(s, e), None
'''

#: Where ``scan_theorems`` looks for the theorems that prove the built-in mechanisms'
#: guarantees, and the certificate theorems that join them to Theorem 7 (compiled modules only:
#: files whose header is ``module``).
THEOREM_DIRS = ("Odp/Mech", "Odp/Certs")
_THEOREM = re.compile(r"^\s*(?:@\[[^\]]*\]\s*)*(private\s+|protected\s+)?(?:theorem|lemma)\s+"
                      r"([^\s:({\[]+)")


def is_module(text: str) -> bool:
    """The header rule of ``scripts/lean_check.py``: the first non-comment word is ``module``."""
    return re.match(r"\s*module\b", strip_comments(text)) is not None


def scan_theorems(root: Path) -> dict[str, str]:
    """Full name -> file of every non-private ``theorem`` in the compiled Lean modules under
    ``THEOREM_DIRS`` (namespaces and sections tracked line by line)."""
    found: dict[str, str] = {}
    paths = [path for d in THEOREM_DIRS if (root / d).is_dir()
             for path in sorted((root / d).rglob("*.lean"))]
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if not is_module(text):
            continue
        rel = str(path.relative_to(root))
        scopes: list[str | None] = []  # namespace names; None for a section
        for line in strip_comments(text).splitlines():
            words = line.split()
            if words[:1] == ["namespace"] and len(words) == 2:
                scopes.append(words[1])
            elif "section" in words[:2] and words[0] in ("section", "noncomputable", "public"):
                scopes.append(None)
            elif words[:1] == ["end"] and scopes:
                scopes.pop()
            m = _THEOREM.match(line)
            if m and not m.group(1):
                name = m.group(2)
                if name.startswith("_root_."):
                    full = name[len("_root_."):]
                else:
                    full = ".".join([s for s in scopes if s] + [name])
                found[full] = rel
    return found


def split_decls(region: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    decls: list[list[tuple[int, str]]] = []
    for lineno, text in region:
        if not text.strip():
            continue
        if not text[0].isspace():
            first = text.split()[0]
            if first not in ("structure", "def"):
                raise GenerationError(f"line {lineno}: unsupported top-level construct {first!r}")
            decls.append([(lineno, text)])
        else:
            if not decls:
                raise GenerationError(f"line {lineno}: indented line outside a declaration")
            decls[-1].append((lineno, text))
    return decls


def parse_struct(lines, structs) -> Struct:
    lineno, header = lines[0]
    m = re.match(r"^structure\s+([A-Z][A-Za-z0-9_]*)\s+where\s*$", header)
    if not m:
        raise GenerationError(f"line {lineno}: expected 'structure Name where'")
    fields = []
    for ln, text in lines[1:]:
        t = text.strip()
        if t.startswith("deriving"):
            continue
        fm = re.match(r"^([a-z][A-Za-z0-9_]*)\s*:\s*Nat$", t)
        if not fm:
            raise GenerationError(f"line {ln}: structure fields must be 'name : Nat', got {t!r}")
        fields.append(fm.group(1))
    if not fields:
        raise GenerationError(f"line {lineno}: structure {m.group(1)} has no fields")
    return Struct(m.group(1), fields)


BINDER = re.compile(r"\(\s*([a-z][A-Za-z0-9_]*(?:\s+[a-z][A-Za-z0-9_]*)*)\s*:\s*([^()]+?)\s*\)")


def parse_def(lines, structs, funcs) -> Def:
    lineno, header = lines[0]
    m = re.match(r"^def\s+([a-z][A-Za-z0-9_]*)\s*(.*)$", header)
    if not m:
        raise GenerationError(f"line {lineno}: expected 'def name …'")
    name, rest = m.group(1), m.group(2)
    params = []
    while rest.startswith("("):
        bm = BINDER.match(rest)
        if not bm:
            raise GenerationError(f"line {lineno}: unsupported binder in {rest!r}")
        ty = parse_type(bm.group(2), lineno, structs)
        for var in bm.group(1).split():
            params.append((var, ty))
        rest = rest[bm.end():].lstrip()
    if not rest.startswith(":"):
        raise GenerationError(f"line {lineno}: expected ': Type' after the binders of {name}")
    rest = rest[1:].strip()
    if ":=" in rest:  # `: R :=` then the body, on this line and/or the next ones
        ret_text, first = rest.split(":=", 1)
        ret = parse_type(ret_text, lineno, structs)
        body_text = " ".join([first] + [t for _, t in lines[1:]])
        if not body_text.strip():
            raise GenerationError(f"line {lineno}: {name} has no body")
        toks = tokenize(body_text, lineno if first.strip() or len(lines) == 1 else lines[1][0])
        body = ExprParser(toks, funcs | {name}).parse()
        return Def(name, params, ret, body=body, line=lineno)
    l2 = re.match(r"^List\s+([A-Z][A-Za-z0-9_]*)\s*→\s*List\s+([A-Z][A-Za-z0-9_]*)\s*→\s*(.+)$",
                  rest)
    if l2:
        return parse_def2(name, params, lineno, lines, l2, structs, funcs)
    lm = re.match(r"^List\s+([A-Z][A-Za-z0-9_]*)\s*→\s*(.+)$", rest)
    if not lm:
        raise GenerationError(f"line {lineno}: {name}: expected ':= …' or ': List T → R'")
    elem = parse_type(lm.group(1), lineno, structs)
    ret = parse_type(lm.group(2), lineno, structs)
    cases = [(ln, t.strip()) for ln, t in lines[1:]]
    if len(cases) != 2:
        raise GenerationError(f"line {lineno}: {name}: list recursion needs exactly the two "
                              "lines '| [] => …' and '| x :: xs => …'")
    (ln0, nil_text), (ln1, cons_text) = cases
    nm = re.match(r"^\|\s*\[\s*\]\s*=>\s*(.+)$", nil_text)
    cm = re.match(r"^\|\s*([a-z][A-Za-z0-9_]*)\s*::\s*([a-z][A-Za-z0-9_]*)\s*=>\s*(.+)$", cons_text)
    if not nm or not cm:
        raise GenerationError(f"line {ln0}: {name}: expected '| [] => …' then '| x :: xs => …'")
    nil = ExprParser(tokenize(nm.group(1), ln0), funcs | {name}).parse()
    cons = (cm.group(1), cm.group(2), ExprParser(tokenize(cm.group(3), ln1), funcs | {name}).parse())
    return Def(name, params, ret, list_elem=elem, nil=nil, cons=cons, line=lineno)


def parse_def2(name, params, lineno, lines, m, structs, funcs) -> Def:
    """``def f (…) : List A → List B → R`` by simultaneous recursion on the two lists, written as
    exactly ``| [], [] => e``, ``| x :: xs, y :: ys => e`` and ``| _, _ => e``."""
    elems = (parse_type(m.group(1), lineno, structs), parse_type(m.group(2), lineno, structs))
    ret = parse_type(m.group(3), lineno, structs)
    cases = [(ln, t.strip()) for ln, t in lines[1:]]
    shape = (f"line {lineno}: {name}: recursion on two lists needs exactly the three lines "
             "'| [], [] => …', '| x :: xs, y :: ys => …' and '| _, _ => …'")
    if len(cases) != 3:
        raise GenerationError(shape)
    (ln0, nil_text), (ln1, cons_text), (ln2, other_text) = cases
    nm = re.match(r"^\|\s*\[\s*\]\s*,\s*\[\s*\]\s*=>\s*(.+)$", nil_text)
    cm = re.match(r"^\|\s*([a-z][A-Za-z0-9_]*)\s*::\s*([a-z][A-Za-z0-9_]*)\s*,\s*"
                  r"([a-z][A-Za-z0-9_]*)\s*::\s*([a-z][A-Za-z0-9_]*)\s*=>\s*(.+)$", cons_text)
    om = re.match(r"^\|\s*_\s*,\s*_\s*=>\s*(.+)$", other_text)
    if not nm or not cm or not om:
        raise GenerationError(shape)
    fs = funcs | {name}
    nil = ExprParser(tokenize(nm.group(1), ln0), fs).parse()
    cons = cm.group(1, 2, 3, 4) + (ExprParser(tokenize(cm.group(5), ln1), fs).parse(),)
    other = ExprParser(tokenize(om.group(1), ln2), fs).parse()
    return Def(name, params, ret, line=lineno, list2=(elems[0], elems[1], nil, cons, other))


def parse_region(text: str) -> tuple[dict[str, Struct], dict[str, Def]]:
    lines = text.splitlines()
    try:
        start = next(i for i, l in enumerate(lines) if l.strip() == BEGIN)
        stop = next(i for i, l in enumerate(lines) if l.strip() == END)
    except StopIteration:
        raise GenerationError(f"the source has no '{BEGIN}' … '{END}' region") from None
    if stop <= start:
        raise GenerationError("the END marker precedes the BEGIN marker")
    body = strip_comments("\n".join(lines[start + 1:stop]))
    region = [(start + 2 + i, l) for i, l in enumerate(body.splitlines())]
    structs: dict[str, Struct] = {}
    defs: dict[str, Def] = {}
    for decl in split_decls(region):
        kind = decl[0][1].split()[0]
        if kind == "structure":
            s = parse_struct(decl, structs)
            structs[s.name] = s
        else:
            d = parse_def(decl, structs, set(defs))
            if d.name in defs:
                raise GenerationError(f"line {d.line}: {d.name} is defined twice")
            defs[d.name] = d
    return structs, defs


# ----------------------------------------------------------------------------------- typing + codegen

@dataclass
class Gen:
    structs: dict
    defs: dict
    lines: list = field(default_factory=list)

    def sig(self, name):
        d = self.defs[name]
        params = [t for _, t in d.params]
        if d.list_elem is not None:
            params.append(f"List {d.list_elem}")
        if d.list2 is not None:
            params += [f"List {d.list2[0]}", f"List {d.list2[1]}"]
        return params, d.ret

    def typeof(self, e, env) -> str:
        if isinstance(e, Num):
            return "Nat"
        if isinstance(e, Var):
            if e.name not in env:
                raise GenerationError(f"unknown variable {e.name!r}")
            return env[e.name]
        if isinstance(e, Field):
            t = self.typeof(e.obj, env)
            if t not in self.structs or e.name not in self.structs[t].fields:
                raise GenerationError(f"{t} has no field {e.name!r}")
            return "Nat"
        if isinstance(e, Call):
            return self.sig(e.func)[1]
        if isinstance(e, BinOp):
            return "Bool" if e.op in ("&&", "||") else "Nat"
        if isinstance(e, (Not, Decide)):
            return "Bool"
        if isinstance(e, If):
            return self.typeof(e.then, env)
        if isinstance(e, Const):
            return "Bool" if isinstance(e.value, bool) else "Option ?"
        if isinstance(e, Some):
            return "Option " + self.typeof(e.arg, env)
        if isinstance(e, Ctor):
            if e.struct is None:
                raise GenerationError("a structure constructor needs a known expected type")
            return e.struct
        if isinstance(e, ListLit):
            if not e.items:
                raise GenerationError("an empty list literal needs a known expected type")
            return "List " + self.typeof(e.items[0], env)
        if isinstance(e, Cons):
            return "List " + self.typeof(e.head, env)
        raise GenerationError(f"cannot type {e!r}")

    def check(self, e, env, expected: str):
        """Type-check ``e`` against ``expected``; annotate constructors with their structure."""
        if isinstance(e, If):
            self.check(e.cond, env, "Bool")
            self.check(e.then, env, expected)
            self.check(e.other, env, expected)
            return
        if isinstance(e, Some):
            if not expected.startswith("Option "):
                raise GenerationError(f"'some' where {expected} is expected")
            self.check(e.arg, env, expected.split(" ", 1)[1])
            return
        if isinstance(e, Const) and e.value is None:
            if not expected.startswith("Option "):
                raise GenerationError(f"'none' where {expected} is expected")
            return
        if isinstance(e, (ListLit, Cons)):
            if not expected.startswith("List "):
                raise GenerationError(f"a list where {expected} is expected")
            elem = expected.split(" ", 1)[1]
            for sub in (e.items if isinstance(e, ListLit) else [e.head]):
                self.check(sub, env, elem)
            if isinstance(e, Cons):
                self.check(e.tail, env, expected)
            return
        if isinstance(e, Ctor):
            if expected not in self.structs:
                raise GenerationError(f"a structure constructor where {expected} is expected")
            fields = self.structs[expected].fields
            e.struct = expected
            if e.named:
                names = [n for n, _ in e.fields]
                if sorted(names) != sorted(fields) or len(set(names)) != len(names):
                    raise GenerationError(f"{{ … }} for {expected} must set exactly {fields}")
                for _, sub in e.fields:
                    self.check(sub, env, "Nat")
            else:
                if len(e.fields) != len(fields):
                    raise GenerationError(f"⟨…⟩ for {expected} needs {len(fields)} components")
                for sub in e.fields:
                    self.check(sub, env, "Nat")
            return
        if isinstance(e, BinOp):
            want = "Bool" if e.op in ("&&", "||") else "Nat"
            self.check(e.left, env, want)
            self.check(e.right, env, want)
        elif isinstance(e, Not):
            self.check(e.arg, env, "Bool")
        elif isinstance(e, Decide):
            self.check(e.left, env, "Nat")
            self.check(e.right, env, "Nat")
        elif isinstance(e, Call):
            params, _ = self.sig(e.func)
            if len(e.args) != len(params):
                raise GenerationError(f"{e.func} takes {len(params)} arguments, got {len(e.args)}")
            for a, t in zip(e.args, params):
                self.check(a, env, t)
        got = self.typeof(e, env)
        if got != expected:
            raise GenerationError(f"expected {expected}, got {got} in {e!r}")

    def py(self, e, rec=None) -> str:
        """Python source for ``e``.  ``rec`` rewrites recursive calls (fold / loop forms)."""
        if isinstance(e, Num):
            return str(e.value)
        if isinstance(e, Var):
            return e.name
        if isinstance(e, Field):
            return f"{self.py(e.obj, rec)}.{e.name}"
        if isinstance(e, Const):
            return repr(e.value)
        if isinstance(e, Some):
            return self.py(e.arg, rec)
        if isinstance(e, Not):
            return f"(not {self.py(e.arg, rec)})"
        if isinstance(e, Decide):
            op = {"≤": "<=", "<": "<", "=": "=="}[e.op]
            return f"({self.py(e.left, rec)} {op} {self.py(e.right, rec)})"
        if isinstance(e, BinOp):
            a, b = self.py(e.left, rec), self.py(e.right, rec)
            if e.op == "-":
                return f"_nat_sub({a}, {b})"
            return f"({a} {({'&&': 'and', '||': 'or'}).get(e.op, e.op)} {b})"
        if isinstance(e, If):
            return f"({self.py(e.then, rec)} if {self.py(e.cond, rec)} else {self.py(e.other, rec)})"
        if isinstance(e, Ctor):
            if e.named:
                args = ", ".join(f"{n}={self.py(x, rec)}" for n, x in e.fields)
            else:
                names = self.structs[e.struct].fields
                args = ", ".join(f"{n}={self.py(x, rec)}" for n, x in zip(names, e.fields))
            return f"{e.struct}({args})"
        if isinstance(e, ListLit):
            return "(" + "".join(f"{self.py(x, rec)}, " for x in e.items).rstrip(" ") + ")"
        if isinstance(e, Cons):
            return f"(({self.py(e.head, rec)},) + tuple({self.py(e.tail, rec)}))"
        if isinstance(e, Call):
            if rec is not None and e.func == rec[0]:
                return rec[1](e)
            return f"{e.func}({', '.join(self.py(a, rec) for a in e.args)})"
        raise GenerationError(f"cannot translate {e!r}")

    def uses(self, e, name: str) -> bool:
        """Does expression ``e`` mention the variable ``name``?"""
        if isinstance(e, Var):
            return e.name == name
        if isinstance(e, (Num, Const)):
            return False
        if isinstance(e, Field):
            return self.uses(e.obj, name)
        if isinstance(e, Call):
            return any(self.uses(a, name) for a in e.args)
        if isinstance(e, (BinOp, Decide)):
            return self.uses(e.left, name) or self.uses(e.right, name)
        if isinstance(e, (Not, Some)):
            return self.uses(e.arg, name)
        if isinstance(e, If):
            return any(self.uses(x, name) for x in (e.cond, e.then, e.other))
        if isinstance(e, Ctor):
            parts = (x for _, x in e.fields) if e.named else e.fields
            return any(self.uses(x, name) for x in parts)
        if isinstance(e, ListLit):
            return any(self.uses(x, name) for x in e.items)
        if isinstance(e, Cons):
            return self.uses(e.head, name) or self.uses(e.tail, name)
        raise GenerationError(f"cannot analyse {e!r}")

    # -- recursion analysis
    def rec_calls(self, e, name, tail=True, out=None):
        out = [] if out is None else out
        if isinstance(e, Call):
            if e.func == name:
                out.append((e, tail))
            for a in e.args:
                self.rec_calls(a, name, False, out)
        elif isinstance(e, If):
            self.rec_calls(e.cond, name, False, out)
            self.rec_calls(e.then, name, tail, out)
            self.rec_calls(e.other, name, tail, out)
        elif isinstance(e, (BinOp, Decide)):
            self.rec_calls(e.left, name, False, out)
            self.rec_calls(e.right, name, False, out)
        elif isinstance(e, (Not, Some)):
            self.rec_calls(e.arg, name, False, out)
        elif isinstance(e, Field):
            self.rec_calls(e.obj, name, False, out)
        elif isinstance(e, Ctor):
            for sub in (x for _, x in e.fields) if e.named else e.fields:
                self.rec_calls(sub, name, False, out)
        elif isinstance(e, ListLit):
            for sub in e.items:
                self.rec_calls(sub, name, False, out)
        elif isinstance(e, Cons):
            self.rec_calls(e.head, name, False, out)
            self.rec_calls(e.tail, name, False, out)
        return out

    def emit_plain(self, d: Def):
        env = dict(d.params)
        self.check(d.body, env, d.ret)
        args = ", ".join(f"{p}: {py_type(t)}" for p, t in d.params)
        self.lines += [f"def {d.name}({args}) -> {py_type(d.ret)}:",
                       f"    return {self.py(d.body)}", "", ""]

    def emit_list(self, d: Def):
        head, tail, cons = d.cons
        lst = "_list"
        env = dict(d.params)
        self.check(d.nil, env, d.ret)
        cenv = {**env, head: d.list_elem, tail: f"List {d.list_elem}"}
        self.check(cons, cenv, d.ret)
        calls = self.rec_calls(cons, d.name)
        for call, _ in calls:
            last = call.args[-1]
            if not (isinstance(last, Var) and last.name == tail):
                raise GenerationError(f"{d.name}: recursive calls must be on the tail '{tail}'")
        for e in (d.nil,):
            if self.rec_calls(e, d.name):
                raise GenerationError(f"{d.name}: recursion in the [] case")
        pnames = [p for p, _ in d.params]
        constant = all(
            all(isinstance(a, Var) and a.name == p for a, p in zip(c.args[:-1], pnames))
            for c, _ in calls)
        sig = ", ".join([f"{p}: {py_type(t)}" for p, t in d.params]
                        + [f"{lst}: {py_type('List ' + d.list_elem)}"])
        sig += f") -> {py_type(d.ret)}"
        bind_head = [f"        {head} = {lst}[_i]"] if self.uses(cons, head) else []
        if (constant and d.ret.startswith("List ") and isinstance(cons, Cons)
                and isinstance(cons.tail, Call)
                and cons.tail.func == d.name and not self.rec_calls(cons.head, d.name)):
            # a map: f (x :: xs) = h x :: f xs, built front to back in linear time
            self.lines += [
                f"def {d.name}({sig}:",
                f"    {lst} = tuple({lst})",
                f"    _out: list[{py_type(d.ret.split(' ', 1)[1])}] = []",
                f"    for _i in range(len({lst})):",
            ] + bind_head + [
                f"        _out.append({self.py(cons.head)})",
                f"    return tuple(_out) + tuple({self.py(d.nil)})", "", ""]
            return
        if constant:  # right fold: value(i) from value(i + 1)
            self.lines += [
                f"def {d.name}({sig}:",
                f"    {lst} = tuple({lst})",
                f"    _acc = {self.py(d.nil)}",
                f"    for _i in range(len({lst}) - 1, -1, -1):",
            ] + bind_head + [
                f"        _acc = {self.py(cons, (d.name, lambda c: '_acc'))}",
                "    return _acc", "", ""]
            return
        if not all(is_tail for _, is_tail in calls):
            raise GenerationError(f"{d.name}: recursion that changes its parameters must be in "
                                  "tail position")

        def tail_stmt(e, indent):
            pad = " " * indent
            if isinstance(e, If) and self.rec_calls(e, d.name):
                return ([f"{pad}if {self.py(e.cond)}:"] + tail_stmt(e.then, indent + 4)
                        + [f"{pad}else:"] + tail_stmt(e.other, indent + 4))
            if isinstance(e, Call) and e.func == d.name:
                new = [self.py(a) for a in e.args[:-1]]
                targets = ", ".join(pnames + ["_i"])
                values = ", ".join(new + ["_i + 1"])
                return [f"{pad}{targets} = {values}", f"{pad}continue"]
            return [f"{pad}return {self.py(e)}"]

        self.lines += [
            f"def {d.name}({sig}:",
            f"    {lst} = tuple({lst})",
            "    _i = 0",
            "    while True:",
            f"        if _i == len({lst}):",
            f"            return {self.py(d.nil)}",
        ] + bind_head + tail_stmt(cons, 8) + ["", ""]


def emit_list2(gen: "Gen", d: Def) -> None:
    """Simultaneous recursion on two lists (``| [], [] | x :: xs, y :: ys | _, _``): the
    recursive calls must pass the leading parameters unchanged and ``xs ys`` last; evaluated
    as a right fold over the common prefix, started from the ``[], []`` case when the lists
    have the same length and from the ``_, _`` case otherwise."""
    elem_a, elem_b, nil, (x, xs, y, ys, cons), other = d.list2
    env = dict(d.params)
    gen.check(nil, env, d.ret)
    gen.check(other, env, d.ret)
    gen.check(cons, {**env, x: elem_a, xs: f"List {elem_a}", y: elem_b, ys: f"List {elem_b}"},
              d.ret)
    pnames = [p for p, _ in d.params]
    for e in (nil, other):
        if gen.rec_calls(e, d.name):
            raise GenerationError(f"{d.name}: recursion outside the 'x :: xs, y :: ys' case")
    for call, _ in gen.rec_calls(cons, d.name):
        last = call.args[-2:]
        if not (len(last) == 2 and all(isinstance(a, Var) for a in last)
                and [a.name for a in last] == [xs, ys]):
            raise GenerationError(f"{d.name}: recursive calls must be on the tails '{xs} {ys}'")
        if not all(isinstance(a, Var) and a.name == p for a, p in zip(call.args[:-2], pnames)):
            raise GenerationError(f"{d.name}: recursion on two lists must keep its leading "
                                  "parameters")
    def outside(e) -> bool:  # does e use the tails other than in a recursive call?
        if isinstance(e, Call) and e.func == d.name:
            return any(outside(a) for a in e.args[:-2])
        if isinstance(e, Var):
            return e.name in (xs, ys)
        if isinstance(e, (Num, Const)):
            return False
        children = {Field: lambda: [e.obj], Call: lambda: e.args,
                    BinOp: lambda: [e.left, e.right], Decide: lambda: [e.left, e.right],
                    Not: lambda: [e.arg], Some: lambda: [e.arg],
                    If: lambda: [e.cond, e.then, e.other], ListLit: lambda: e.items,
                    Cons: lambda: [e.head, e.tail],
                    Ctor: lambda: [x for _, x in e.fields] if e.named else e.fields}
        return any(outside(c) for c in children[type(e)]())

    if outside(cons):
        raise GenerationError(f"{d.name}: the tails '{xs}', '{ys}' may only be passed to the "
                              "recursive call")
    sig = ", ".join([f"{p}: {py_type(t)}" for p, t in d.params]
                    + [f"_a: {py_type('List ' + elem_a)}", f"_b: {py_type('List ' + elem_b)}"])
    binds = ([f"        {x} = _a[_i]"] if gen.uses(cons, x) else []) + (
        [f"        {y} = _b[_i]"] if gen.uses(cons, y) else [])
    gen.lines += [
        f"def {d.name}({sig}) -> {py_type(d.ret)}:",
        "    _a, _b = tuple(_a), tuple(_b)",
        f"    _acc = {gen.py(nil)} if len(_a) == len(_b) else {gen.py(other)}",
        "    for _i in range(min(len(_a), len(_b)) - 1, -1, -1):",
    ] + binds + [
        f"        _acc = {gen.py(cons, (d.name, lambda c: '_acc'))}",
        "    return _acc", "", ""]


def generate(source: Path, root: Path = ROOT) -> str:
    text = source.read_text(encoding="utf-8")
    structs, defs = parse_region(text)
    gen = Gen(structs, defs)
    rel = source.resolve()
    try:
        rel_name = str(rel.relative_to(root.resolve()))
    except ValueError:
        rel_name = source.name
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    theorems = scan_theorems(root)
    cited = {}
    for name in list(CITED_FILES) + sorted(set(theorems.values())):
        p = root / name
        if name == rel_name:
            cited[name] = digest
        elif p.exists():
            cited[name] = hashlib.sha256(p.read_bytes()).hexdigest()
    out = [
        f'"""GENERATED by scripts/gen_rules.py from {rel_name} — do not edit.',
        "",
        f"Source: {rel_name}",
        f"SHA-256: {digest}",
        "",
        "The ledger rules of the Lean specification (namespace Odp.LedgerCore), translated",
        "one definition at a time.  ℕ subtraction is truncated at 0, as in Lean.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Sequence",
        "from dataclasses import dataclass",
        "",
        f"SOURCE = {rel_name!r}",
        f"SOURCE_SHA256 = {digest!r}",
        "#: SHA-256 of the Lean files that certificates cite.",
        "LEAN_SOURCES = {",
    ] + [f"    {k!r}: {v!r}," for k, v in cited.items()] + [
        "}",
        f"LEAN_NAMESPACE = {'Odp.LedgerCore'!r}",
        f"#: Theorems of the compiled Lean modules under {' and '.join(THEOREM_DIRS)} (full name -> file): what",
        "#: a certificate may cite as proving a round's guarantee (odp.certs.mechanisms).",
        "LEAN_THEOREMS: dict[str, str] = {",
    ] + [f"    {k!r}: {v!r}," for k, v in sorted(theorems.items())] + [
        "}",
        "#: The whole Lean source, for kernel checks of certificates (`odp verify --kernel`).",
        "LEAN_TEXT = (",
    ] + [f"    {line!r}" for line in text.splitlines(keepends=True)] + [
        ")",
        f"DEFINITIONS = {tuple(defs)!r}",
        "",
        "",
        "def _nat_sub(a: int, b: int) -> int:",
        '    """ℕ subtraction: a - b, or 0 when b > a."""',
        "    return a - b if a >= b else 0",
        "",
        "",
        "def _nat(value: object, name: str) -> int:",
        "    if isinstance(value, bool) or not isinstance(value, int) or value < 0:",
        '        raise ValueError(f"{name} must be a natural number, got {value!r}")',
        "    return value",
        "",
        "",
    ]
    for s in structs.values():
        out += ["@dataclass(frozen=True)", f"class {s.name}:"]
        out += [f"    {f}: int" for f in s.fields]
        out += ["", "    def __post_init__(self) -> None:"]
        out += [f"        _nat(self.{f}, {s.name + '.' + f!r})" for f in s.fields]
        out += ["", ""]
    for d in defs.values():
        if d.list2 is not None:
            emit_list2(gen, d)
        elif d.list_elem is None:
            gen.emit_plain(d)
        else:
            gen.emit_list(d)
    while out and gen.lines and gen.lines[-1] == "":
        gen.lines.pop()
    body = "\n".join(out + gen.lines) + "\n"
    if {"State", "Entry", "StepGroup"} <= set(structs) and all(
            name in defs and defs[name].params == params
            for name, params in STEP_CHECK_NEEDS.items()):
        body += STEP_CHECK
    return body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=ROOT / DEFAULT_SOURCE)
    parser.add_argument("--output", type=Path, default=ROOT / DEFAULT_OUTPUT)
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="repository root (for the relative source name and cited files)")
    args = parser.parse_args(argv)
    try:
        code = generate(args.source, args.root)
    except GenerationError as exc:
        print(f"gen_rules: {args.source}: {exc}", file=sys.stderr)
        return 1
    args.output.write_text(code, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
