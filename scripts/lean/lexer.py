"""A tokenizer for the Lean 4 sources the check reads, and what the check reads with it: the
module header (imports), and the tokens the source scan refuses.

Part of the checker's trusted base (docs/lean.md, "The trusted base"); standard library only.

Lean reads a file as a stream of tokens separated by whitespace and comments. This module reads
it the same way for the constructs the checked modules may contain:

* comments: ``--`` to the end of the line, and ``/- … -/`` (nested; doc comments ``/--`` and
  module docs ``/-!`` are comments here too);
* string literals ``"…"`` with escapes, raw strings ``r"…"`` / ``r#"…"#``, character literals
  ``'a'``; an *interpolated* string (``s!"…"``, ``m!"…"``, ``f!"…"``, and any string with a
  ``{``) can hold terms with their own strings and comments, so it is reported as a problem
  rather than guessed at;
* identifiers: dot-separated parts, each an ordinary word or a guillemet-quoted ``«…»`` part;
  a token's :attr:`Token.name` is the identifier with the guillemets removed, so
  ``«command_elab»`` and ``command_elab`` are the same name to the scan;
* ``#``-words (``#eval``, ``#exit``, ``#print``, …) as one token, as Lean's keywords are;
* numbers, and every other character as a one-character symbol.

Where the reading could differ from Lean's (an unterminated comment or string, an interpolated
string, a ``»'`` sequence), the tokenizer reports a problem and the scan refuses the file: up to
the first problem, this reading and Lean's agree.

The header (:func:`header`) is read from the tokens, so line breaks and comments between
``public``, ``import`` and the module name change nothing. What the compiler itself read is
checked afterwards: the audit prints each compiled module's imports from its ``.olean`` file,
and ``scripts/lean_check.py`` requires them to equal what this module read.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

#: Characters that may start an identifier part besides letters: Lean's ``isLetterLike``
#: (Greek, Coptic, letter-like symbols, subscripts) is approximated by Unicode letters, plus
#: ``_``; digits, ``'``, ``!``, ``?`` and subscripts may continue one.
_SUBSCRIPTS = set("₀₁₂₃₄₅₆₇₈₉ₐₑₒₓₔₕₖₗₘₙₚₛₜᵢᵣᵤᵥⱼ")


def _id_start(c: str) -> bool:
    if c == "_" or c.isalpha():
        return c not in "λΠΣ"  # Lean reserves these three as tokens
    return unicodedata.category(c) in ("Lu", "Ll", "Lt", "Lm", "Lo") or "\u1d00" <= c <= "\u1dbf"


def _id_rest(c: str) -> bool:
    return _id_start(c) or c.isdigit() or c in "'!?" or c in _SUBSCRIPTS


@dataclass(frozen=True)
class Token:
    kind: str  # "ident", "hash" (#word), "string", "char", "number", "symbol"
    text: str  # the source text
    line: int
    #: for identifiers and #-words: the name with guillemets removed ("Lean.Elab", "#eval")
    name: str = ""


@dataclass(frozen=True)
class Problem:
    line: int
    reason: str


def tokenize(text: str) -> tuple[list[Token], list[Problem]]:
    """The tokens of ``text`` and the places where this reading could differ from Lean's."""
    tokens: list[Token] = []
    problems: list[Problem] = []
    i, n, line = 0, len(text), 1

    def advance(j: int) -> None:
        nonlocal i, line
        line += text.count("\n", i, j)
        i = j

    while i < n:
        c = text[i]
        if c.isspace():
            advance(i + 1)
            continue
        if text.startswith("--", i):
            j = text.find("\n", i)
            advance(n if j < 0 else j)
            continue
        if text.startswith("/-", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/-", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("-/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if depth:
                problems.append(Problem(line, "an unterminated comment"))
            advance(j)
            continue
        start_line = line
        # raw strings r"…", r#"…"#
        m = re.match(r'r(#*)"', text[i:i + 260])
        if m and not (tokens and tokens[-1].kind == "ident" and _glued(text, i)):
            close = '"' + m.group(1)
            j = text.find(close, i + len(m.group(0)))
            if j < 0:
                problems.append(Problem(line, "an unterminated raw string"))
                j = n
            else:
                j += len(close)
            tokens.append(Token("string", text[i:j], start_line))
            advance(j)
            continue
        # interpolated strings: s!"…", m!"…", f!"…" (an identifier ending in ! before a quote)
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            body = text[i:j + 1]
            if j >= n:
                problems.append(Problem(line, "an unterminated string literal"))
            elif "{" in body or (tokens and tokens[-1].kind == "ident"
                                 and tokens[-1].text.endswith("!") and _glued(text, i)):
                problems.append(Problem(line, "a string literal with `{` or an interpolated "
                                              "string (it can hold terms, strings and comment "
                                              "marks, so the scan could not tell where it ends)"))
            tokens.append(Token("string", body, start_line))
            advance(min(n, j + 1))
            continue
        if c == "'":
            m = re.match(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'", text[i:])
            prev_glued = tokens and _glued(text, i) and tokens[-1].kind in ("ident",)
            if m and not prev_glued:
                tokens.append(Token("char", m.group(0), start_line))
                advance(i + len(m.group(0)))
                continue
            if i and text[i - 1] == "»":
                problems.append(Problem(line, "`»'` (whether this starts a character literal "
                                              "is unclear)"))
            tokens.append(Token("symbol", c, start_line))
            advance(i + 1)
            continue
        if c == "#" and i + 1 < n and (_id_start(text[i + 1])):
            j = i + 1
            while j < n and _id_rest(text[j]):
                j += 1
            word = text[i:j]
            tokens.append(Token("hash", word, start_line, word))
            advance(j)
            continue
        if c == "«" or _id_start(c):
            j, parts = i, []
            while True:
                if j < n and text[j] == "«":
                    k = text.find("»", j + 1)
                    if k < 0:
                        problems.append(Problem(line, "an unterminated «quoted name»"))
                        k = n - 1
                    parts.append(text[j + 1:k])
                    j = k + 1
                elif j < n and _id_start(text[j]):
                    k = j + 1
                    while k < n and _id_rest(text[k]):
                        k += 1
                    parts.append(text[j:k])
                    j = k
                else:
                    break
                # a dot continues the identifier only when a part follows it directly
                if j + 1 < n and text[j] == "." and (text[j + 1] == "«" or _id_start(text[j + 1])):
                    j += 1
                    continue
                break
            tokens.append(Token("ident", text[i:j], start_line, ".".join(parts)))
            advance(j)
            continue
        if c in "0123456789":
            m = re.match(r"0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|[0-9][0-9_]*(?:\.[0-9]+)?"
                         r"(?:[eE][+-]?[0-9]+)?", text[i:])
            assert m is not None
            tokens.append(Token("number", m.group(0), start_line))
            advance(i + len(m.group(0)))
            continue
        tokens.append(Token("symbol", c, start_line))
        advance(i + 1)
    return tokens, problems


def _glued(text: str, i: int) -> bool:
    """Whether the character before position ``i`` ends an identifier with no space between."""
    return i > 0 and (_id_rest(text[i - 1]) or text[i - 1] == "»")


# --- the header ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Import:
    module: str
    modifiers: tuple[str, ...]  # "public", "private", "meta", "all"
    line: int


@dataclass(frozen=True)
class Header:
    is_module: bool
    imports: tuple[Import, ...]
    #: "prelude", or a malformed header; the check refuses a file with any
    problems: tuple[Problem, ...]


def header(text: str) -> Header:
    """The ``module`` keyword and the imports at the head of a file, read from its tokens (so
    comments and line breaks anywhere between the words change nothing)."""
    tokens, lexing = tokenize(text)
    problems = list(lexing)
    k = 0
    is_module = bool(tokens) and tokens[0].kind == "ident" and tokens[0].name == "module"
    if is_module:
        k = 1
    if k < len(tokens) and tokens[k].kind == "ident" and tokens[k].name == "prelude":
        problems.append(Problem(tokens[k].line, "`prelude`: a module without the core library"))
        k += 1
    imports: list[Import] = []
    while k < len(tokens):
        mods: list[str] = []
        j = k
        while j < len(tokens) and tokens[j].kind == "ident" and tokens[j].name in (
                "public", "private", "meta"):
            mods.append(tokens[j].name)
            j += 1
        if not (j < len(tokens) and tokens[j].kind == "ident" and tokens[j].name == "import"):
            if mods:  # `public theorem …` after the header: the header has ended
                break
            break
        line = tokens[j].line
        j += 1
        if j < len(tokens) and tokens[j].kind == "ident" and tokens[j].name == "all":
            mods.append("all")
            j += 1
        if not (j < len(tokens) and tokens[j].kind == "ident"):
            problems.append(Problem(line, "an `import` without a module name"))
            break
        imports.append(Import(tokens[j].name, tuple(mods), line))
        k = j + 1
    # an `import` anywhere after the header is an error for Lean; refuse it here too, so that
    # the header this module reads is the only one there is
    for t in tokens[k:]:
        if t.kind == "ident" and t.name == "import":
            problems.append(Problem(t.line, "`import` after the header"))
    return Header(is_module, tuple(imports), tuple(problems))


# --- the scan -----------------------------------------------------------------------------------

#: Identifiers refused anywhere, with the reason. (Compared after guillemets are removed; a
#: dotted name is refused when any of its parts is, e.g. ``Foo.sorry``.)
REFUSED_WORDS: dict[str, str] = {
    "sorry": "`sorry`: an unfinished proof",
    "admit": "`admit`: an unfinished proof",
    "native_decide": "`native_decide`: trusts compiled code (Lean.ofReduceBool)",
    "native": "`native` (as in `decide +native`): trusts compiled code (Lean.ofReduceBool)",
    "ofReduceBool": "`Lean.ofReduceBool`: trusts compiled code",
    "ofReduceNat": "`Lean.ofReduceNat`: trusts compiled code",
    "trustCompiler": "`Lean.trustCompiler`: trusts compiled code",
    "implemented_by": "`implemented_by`: replaces a definition's code",
    "extern": "`extern`: a definition implemented outside Lean",
    "axiom": "`axiom`: a new axiom (hypotheses are theorem arguments)",
    "unsafe": "`unsafe`: declarations the kernel does not check",
    "partial": "`partial`: a definition opaque to the kernel",
    "opaque": "`opaque`: a constant the kernel cannot unfold",
    "prelude": "`prelude`: a module without the core library",
    "export": "`export`: aliases (or exported code) in the theory",
    "meta": "`meta`: code compiled to run while elaborating",
    "initialize": "`initialize`: code run when the module is loaded",
    "builtin_initialize": "`initialize`: code run when the module is loaded",
    "run_cmd": "metaprogramming (runs code while elaborating)",
    "run_elab": "metaprogramming (runs code while elaborating)",
    "run_meta": "metaprogramming (runs code while elaborating)",
    "run_tac": "metaprogramming (runs code while elaborating)",
    "by_elab": "metaprogramming (runs code while elaborating)",
    "elab": "new syntax, notation, macros or elaborators (they change what the source reads as)",
    "elab_rules": "new syntax, notation, macros or elaborators (they change what the source "
                  "reads as)",
    "macro": "new syntax, notation, macros or elaborators (they change what the source reads as)",
    "macro_rules": "new syntax, notation, macros or elaborators (they change what the source "
                   "reads as)",
    "syntax": "new syntax, notation, macros or elaborators (they change what the source reads as)",
    "notation": "new syntax, notation, macros or elaborators (they change what the source reads "
                "as)",
    "infix": "new syntax, notation, macros or elaborators (they change what the source reads as)",
    "infixl": "new syntax, notation, macros or elaborators (they change what the source reads as)",
    "infixr": "new syntax, notation, macros or elaborators (they change what the source reads as)",
    "prefix": "new syntax, notation, macros or elaborators (they change what the source reads as)",
    "postfix": "new syntax, notation, macros or elaborators (they change what the source reads "
               "as)",
    "simproc": "new syntax, notation, macros or elaborators (they change what the source reads "
               "as)",
    "dsimproc": "new syntax, notation, macros or elaborators (they change what the source reads "
                "as)",
    "unif_hint": "`unif_hint`: changes how terms elaborate",
    "addDecl": "metaprogramming (the environment or the kernel from code)",
    "addDeclCore": "metaprogramming (the environment or the kernel from code)",
    "addAndCompile": "metaprogramming (the environment or the kernel from code)",
}

#: Name prefixes refused (the metaprogramming and I/O APIs). The import allow-list already keeps
#: the ``Lean`` library out of reach; these make the message clear.
REFUSED_PREFIXES: dict[str, str] = {
    prefix: "metaprogramming or I/O (the environment, the kernel, files or processes from code)"
    for prefix in ("Lean.Elab", "Lean.Meta", "Lean.Environment", "Lean.Kernel", "Lean.Compiler",
                   "Lean.Parser", "Lean.Macro", "Lean.Syntax", "Lean.Expr", "Lean.Name",
                   "Lean.Core", "Lean.IR", "IO", "EIO", "BaseIO", "EStateM", "System",
                   "unsafeIO", "unsafeBaseIO", "unsafeEIO", "unsafeCast", "ST")
}

_REGISTER = re.compile(r"(?:register|declare)_\w+")

#: The only ``#``-token a checked module may contain: ``#[`` (an array literal) is a symbol pair,
#: never a ``#``-word, so every ``#``-word is refused: ``#eval``, ``#exit``, ``#print``,
#: ``#check``, ``#guard``, ``#reduce``, … (they run code, stop the file, or print).
HASH_REASON = "a `#` command ({word}): it runs code, stops reading the file, or prints"

#: Attributes a checked module may use (an allow-list; anything else is refused).
ALLOWED_ATTRIBUTES = frozenset({
    "expose", "simp", "reducible", "irreducible", "semireducible", "instance", "inline",
    "specialize", "grind", "ext", "local", "scoped", "-", "=", "←", "→", "elab_as_elim",
    "macro_inline", "match_pattern", "induction_eliminator", "cases_eliminator", "refl",
    "symm", "trans", "congr", "simps", "norm_cast", "push_cast", "default_instance_never",
})

#: Options a checked module may set (an allow-list).
ALLOWED_OPTIONS = re.compile(r"(?:autoImplicit|relaxedAutoImplicit|maxRecDepth|maxHeartbeats"
                             r"|linter(?:\.[A-Za-z_][\w]*)+)")


def _word_problem(name: str) -> str | None:
    for part in name.split("."):
        if part in REFUSED_WORDS:
            return REFUSED_WORDS[part]
        if _REGISTER.fullmatch(part):
            return REFUSED_WORDS["syntax"]
    for prefix, why in REFUSED_PREFIXES.items():
        if name == prefix or name.startswith(prefix + "."):
            return why
    return None


def _attribute_names(tokens: list[Token], k: int) -> tuple[list[Token], int]:
    """The attribute names in the bracket that opens at ``tokens[k]`` (``[``), and where it
    ends. An entry's name is its first identifier (``simp``, ``grind``, ``instance``, …), after
    ``local``/``scoped``/``-``; its arguments follow."""
    names, depth, j, first = [], 0, k, True
    while j < len(tokens):
        t = tokens[j]
        if t.kind == "symbol" and t.text == "[":
            depth += 1
            first = first if depth > 1 else True
        elif t.kind == "symbol" and t.text == "]":
            depth -= 1
            if depth == 0:
                return names, j + 1
        elif depth == 1 and t.kind == "symbol" and t.text == ",":
            first = True
        elif depth == 1 and first and t.kind == "ident":
            if t.name in ("local", "scoped"):
                pass
            else:
                names.append(t)
                first = False
        elif depth == 1 and first and t.kind == "symbol" and t.text == "-":
            pass
        j += 1
    return names, j


def scan(text: str) -> list[tuple[int, str]]:
    """(line, reason) for everything the source scan refuses in a checked module."""
    tokens, lexing = tokenize(text)
    hits = {(p.line, p.reason) for p in lexing}
    k = 0
    while k < len(tokens):
        t = tokens[k]
        if t.kind == "hash":
            hits.add((t.line, HASH_REASON.format(word=t.text)))
        elif t.kind == "ident":
            why = _word_problem(t.name)
            if why:
                hits.add((t.line, f"{why} ({t.text!r})"))
            if t.name == "set_option" and k + 1 < len(tokens):
                option = tokens[k + 1].name if tokens[k + 1].kind == "ident" else tokens[k + 1].text
                if not ALLOWED_OPTIONS.fullmatch(option):
                    hits.add((t.line, f"`set_option {option}` is not on the allow-list "
                                      "(autoImplicit, relaxedAutoImplicit, maxRecDepth, "
                                      "maxHeartbeats, linter.*)"))
            if t.name == "attribute" and k + 1 < len(tokens) and tokens[k + 1].text == "[":
                hits |= _attribute_hits(_attribute_names(tokens, k + 1)[0])
        elif t.kind == "symbol" and t.text == "@" and k + 1 < len(tokens) \
                and tokens[k + 1].text == "[":
            hits |= _attribute_hits(_attribute_names(tokens, k + 1)[0])
        k += 1
    return sorted(hits)


def _attribute_hits(names: list[Token]) -> set[tuple[int, str]]:
    out = set()
    for t in names:
        if t.name not in ALLOWED_ATTRIBUTES:
            out.add((t.line, f"attribute `{t.name}` is not on the allow-list of attributes "
                             "(ALLOWED_ATTRIBUTES in scripts/lean/lexer.py): it may run or "
                             "replace code, or change how the source is parsed or elaborated"))
    return out
