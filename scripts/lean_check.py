#!/usr/bin/env python3
"""Compile, scan, audit and kernel-replay the Mathlib-free Lean modules (WebAssembly Lean).

    python3 scripts/lean_check.py [--src DIR] [--only MODULE] [--audit] [--jobs N] [--keep]
                                  [--cache | --no-cache] [--no-audit] [--no-source-scan]

1. **Every file is checked or refused.** Each ``.lean`` file under ``DIR/Odp`` and at the top of
   ``DIR`` is either a ``module`` (its first non-comment word), which is compiled, or one of the
   external files of :data:`EXTERNAL` (the Mathlib layer, stated only, and the lake files), which
   are not compiled here. Any other file fails the check, named. A checked module may import
   only checked modules (``Odp.*``) and the core library's ``Init``/``Std``.
2. **Source scan** of every checked module (comments skipped; string literals read as units, so
   a comment mark inside one hides nothing): the rules of :data:`RULES` — no ``sorry``,
   ``admit``, ``native_decide``, ``+native``, ``implemented_by``, ``extern``, ``axiom``,
   ``unsafe``, ``partial``, ``prelude``, ``export``, no ``set_option`` outside
   :data:`ALLOWED_OPTIONS`, no metaprogramming (``run_cmd``, ``#eval``, ``elab``, ``macro``,
   ``syntax``, ``notation``, ``initialize``, ``addDecl``, …) and no attribute that runs or
   replaces code (:func:`attribute_problems`). Each hit is a line naming the file, the line and
   the reason.
3. **Compile** the modules in dependency order, ``--jobs`` at a time; a module fails on any
   error and on an unfinished proof (the warning "declaration uses `sorry`").
4. **Audit and replay** (``scripts/lean/AxiomAudit.lean``, given the list of modules compiled):
   no declaration of ours is unsafe, partial or an axiom, or reaches an axiom other than
   ``propext``, ``Classical.choice``, ``Quot.sound``; every declaration is sent through the
   kernel again (a replay, as lean4checker does); the theorems of ``scripts/lean/pinned.txt``
   exist and reach exactly the axioms pinned there. ``Odp/Core/Spec.lean`` (the statements in
   the paper's words) is one of the compiled modules, so every statement it pins is checked.

``--cache`` reuses a module's compiled files from the toolchain cache when they were built from
the same source bytes (of the module and of everything it imports) by the same toolchain, with
the hash of each file recorded beside it (:func:`odp.lean_toolchain.stamp_problem`); the audit
and the replay still run on every declaration. It is on by default with ``--only`` (developing
one module), off by default for a full run (what CI runs).

Exit status: 0 when everything checked, 1 when a check failed, 2 when the toolchain could not be
obtained or its cache is not safe to use (never a silent skip).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _load_toolchain_module():
    """``python/odp/lean_toolchain.py`` by its path: it uses the standard library only, so this
    script runs without odp (or numpy) installed."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "odp_lean_toolchain", REPO / "python" / "odp" / "lean_toolchain.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


lt = _load_toolchain_module()

AUDIT = REPO / "scripts" / "lean" / "AxiomAudit.lean"
PINNED = REPO / "scripts" / "lean" / "pinned.txt"
#: The module that states every claimed result in full; a full run requires it.
SPEC = "Odp.Core.Spec"

#: Lean files that are not compiled here, and why. Everything else must be a ``module``.
EXTERNAL = {
    **{f"Odp/{name}.lean": "Mathlib layer (stated only; the external lake/Mathlib workflow)"
       for name in ("Prob", "Defs", "Lemmas", "Lemma20", "Composition", "Rules", "Axioms", "Real")},
    "OdpCheck.lean": "the odpcheck executable (lake; imports Odp.LedgerCore only)",
    "Odp.lean": "the lake library root (imports the Mathlib layer)",
    "lakefile.lean": "the lake build configuration",
}

#: Options a checked module may set. Anything else (``debug.skipKernelTC`` first of all) is
#: refused.
ALLOWED_OPTIONS = re.compile(r"(?:autoImplicit|relaxedAutoImplicit|maxRecDepth|maxHeartbeats"
                             r"|linter(?:\.[A-Za-z_][\w]*)+)")

#: Where a checked module may import from, besides the checked ``Odp`` modules.
ALLOWED_IMPORT_ROOTS = ("Init", "Std")

_T = r"(?<![\w'!?.])"  # start of a token: not inside or right after an identifier
_E = r"(?![\w'!?])"    # end of a token

#: (pattern, reason) for the source scan, applied to the code without comments.
RULES: list[tuple[re.Pattern[str], str]] = [(re.compile(p, re.M), why) for p, why in [
    (_T + r"sorry" + _E, "`sorry`: an unfinished proof"),
    (_T + r"admit" + _E, "`admit`: an unfinished proof"),
    (r"native_decide", "`native_decide`: trusts compiled code (Lean.ofReduceBool)"),
    (r"\+\s*native" + _E, "`decide +native`: trusts compiled code (Lean.ofReduceBool)"),
    (_T + r"implemented_by" + _E, "`implemented_by`: replaces a definition's code"),
    (_T + r"extern" + _E, "`extern`: a definition implemented outside Lean"),
    (_T + r"axiom" + _E, "`axiom`: a new axiom (hypotheses are theorem arguments)"),
    (_T + r"unsafe" + _E, "`unsafe`: declarations the kernel does not check"),
    (_T + r"partial" + _E, "`partial`: a definition opaque to the kernel"),
    (_T + r"opaque" + _E, "`opaque`: a constant the kernel cannot unfold"),
    (_T + r"prelude" + _E, "`prelude`: a module without the core library"),
    (_T + r"export" + _E, "`export`: aliases (or exported code) in the theory"),
    (_T + r"(?:builtin_)?initialize" + _E, "`initialize`: code run when the module is loaded"),
    (_T + r"(?:run_cmd|run_elab|run_meta|run_tac|by_elab)" + _E,
     "metaprogramming (runs code while elaborating)"),
    (r"#eval!?" + _E, "`#eval`: runs code while elaborating (it can change the environment)"),
    (_T + r"(?:elab|elab_rules|macro|macro_rules|syntax|notation|infix|infixl|infixr|prefix"
     r"|postfix|simproc|dsimproc|register_\w+|declare_\w+)" + _E,
     "new syntax, notation, macros or elaborators (they change what the source reads as)"),
    (r"(?<![\w'!?])(?:addDecl|addAndCompile|Lean\.Elab|Lean\.Meta|Lean\.Environment|Lean\.Kernel"
     r"|Lean\.Compiler)" + _E, "metaprogramming (the environment or the kernel from code)"),
]]

#: Attributes that run code, replace code, or change how the source is parsed or elaborated.
_BAD_ATTRIBUTES = re.compile(
    r"(?:builtin_\w*|init|export|extern|implemented_by|csimp|never_extract|macro|elab|tactic"
    r"|\w*_elab|\w*_parser|\w*delab|\w*unexpander|\w*formatter|\w*parenthesizer|\w*simproc"
    r"|\w*_code_action|code_action|env_extension|command_elab|term_elab|widget\w*|cpass)")
_ATTRIBUTE_BLOCK = re.compile(r"@\[(.*?)\]|" + _T + r"attribute\s*\[(.*?)\]", re.S)


@dataclass
class Module:
    name: str
    path: Path
    imports: list[str]  # every module it imports
    odp_imports: list[str] = field(default_factory=list)


@dataclass
class Tree:
    """What ``collect`` found: the modules to compile, the external files, the refused ones."""
    modules: dict[str, Module]
    external: list[tuple[str, str]]
    refused: list[tuple[str, str]]


def strip_comments(text: str, problems: list[tuple[int, str]] | None = None) -> str:
    """Lean source without comments: each comment character becomes a space (newlines stay, so
    line numbers hold). Nested block comments, doc comments and line comments are comments;
    string literals (with escapes), raw strings ``r#"…"#``, character literals and «quoted
    names» are kept verbatim but read as units, so that a comment mark inside one is not taken
    for a comment (Lean reads them the same way).

    One construct could make this reading differ from Lean's: an interpolated string
    (``s!"…{term}…"``), where the term may hold its own strings and comment marks. So a string
    literal with ``{`` in it is reported in ``problems`` (position, reason) and the scan refuses
    it: up to the first such string, this reading and Lean's agree. Unterminated comments and
    strings are reported too."""
    out: list[str] = []
    i, n = 0, len(text)
    report = problems.append if problems is not None else (lambda item: None)

    def blank(j: int, k: int) -> None:
        out.append("".join("\n" if c == "\n" else " " for c in text[j:k]))

    while i < n:
        c = text[i]
        prev = text[i - 1] if i else ""
        ident_before = prev.isalnum() or prev in "_'!?.»"
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
                report((i, "an unterminated comment"))
            blank(i, j)
            i = j
        elif text.startswith("--", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                report((i, "an unterminated string literal"))
            elif "{" in text[i:j]:
                report((i, "a string literal with `{` (an interpolated string can hold terms, "
                           "strings and comment marks, so the scan could not tell where it ends)"))
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "r" and not ident_before and re.match(r'r#*"', text[i:]):
            hashes = len(re.match(r"r(#*)", text[i:]).group(1))
            close = '"' + "#" * hashes
            j = text.find(close, i + 2 + hashes)
            j = n if j < 0 else j + len(close)
            out.append(text[i:j])
            i = j
        elif c == "'" and not ident_before and (m := re.match(r"'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])'", text[i:])):
            out.append(m.group(0))
            i += len(m.group(0))
        elif c == "'" and prev == "»":
            report((i, "`»'` (whether this starts a character literal is unclear)"))
            out.append(c)
            i += 1
        elif c == "«":
            j = text.find("»", i)
            j = n if j < 0 else j + 1
            out.append(text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def is_module(text: str) -> bool:
    return re.match(r"\s*module" + _E, strip_comments(text)) is not None


def module_name(src: Path, path: Path) -> str:
    return ".".join(path.relative_to(src).with_suffix("").parts)


_IMPORT = re.compile(r"^[ \t]*(?:(?:public|private|meta)[ \t]+)*import[ \t]+(?:all[ \t]+)?([^\n]*)", re.M)


def imports(text: str) -> list[str]:
    """The modules a file imports (``public``/``meta``/``import all`` forms included)."""
    found = []
    for m in _IMPORT.finditer(strip_comments(text)):
        found += m.group(1).split()
    return found


def _line(code: str, pos: int) -> int:
    return code.count("\n", 0, pos) + 1


def attribute_problems(code: str) -> list[tuple[int, str]]:
    """Attributes (``@[…]``, ``attribute […]``) that run code, replace code, or change parsing
    or elaboration (:data:`_BAD_ATTRIBUTES`)."""
    hits = []
    for m in _ATTRIBUTE_BLOCK.finditer(code):
        body = m.group(1) if m.group(1) is not None else m.group(2)
        for entry in body.split(","):
            words = [w for w in re.split(r"[\s←→=]+", entry.strip()) if w]
            while words and words[0] in ("local", "scoped", "-"):
                words = words[1:]
            if words and _BAD_ATTRIBUTES.fullmatch(words[0].lstrip("-")):
                hits.append((_line(code, m.start()),
                             f"attribute `{words[0]}`: it runs or replaces code, or changes how "
                             "the source is parsed or elaborated"))
    return hits


def escape_hatches(text: str) -> list[tuple[int, str]]:
    """(line, reason) for every rule the source breaks (comments excluded)."""
    lexing: list[tuple[int, str]] = []
    code = strip_comments(text, lexing)
    hits = [(_line(text, pos), why) for pos, why in lexing]
    for pattern, why in RULES:
        for m in pattern.finditer(code):
            hits.append((_line(code, m.start()), f"{why} ({m.group(0).strip()!r})"))
    for m in re.finditer(_T + r"set_option" + _E + r"\s*([^\s]*)", code):
        option = m.group(1)
        if not ALLOWED_OPTIONS.fullmatch(option):
            hits.append((_line(code, m.start()),
                         f"`set_option {option}` is not on the allow-list (autoImplicit, "
                         "relaxedAutoImplicit, maxRecDepth, maxHeartbeats, linter.*)"))
    hits += attribute_problems(code)
    return sorted(set(hits))


def lean_files(src: Path) -> list[Path]:
    """Every Lean file the project holds: under ``Odp/`` and at the top of the tree."""
    files = sorted(p for p in src.glob("*.lean") if p.is_file())
    files += sorted(p for p in (src / "Odp").rglob("*.lean")
                    if ".lake" not in p.relative_to(src).parts)
    return files


def collect(src: Path) -> Tree:
    """Sort every Lean file of the project: a ``module`` is compiled; an external file
    (:data:`EXTERNAL`) is not; any other file is refused. Imports are checked too."""
    modules: dict[str, Module] = {}
    external, refused = [], []
    for path in lean_files(src):
        rel = path.relative_to(src).as_posix()
        text = path.read_text(encoding="utf-8")
        if is_module(text):
            name = module_name(src, path)
            modules[name] = Module(name, path, imports(text))
        elif rel in EXTERNAL:
            external.append((rel, EXTERNAL[rel]))
        else:
            refused.append((rel, "not a `module` file and not on the external list (the Mathlib "
                                 "layer), so it would be neither compiled nor checked; make it a "
                                 "`module` (first line `module`) or remove it"))
    for mod in modules.values():
        rel = mod.path.relative_to(src).as_posix()
        for imp in mod.imports:
            root = imp.split(".")[0]
            if root == "Odp":
                if imp in modules:
                    mod.odp_imports.append(imp)
                else:
                    file = "/".join(imp.split(".")) + ".lean"
                    why = ("is external (not compiled here)" if file in EXTERNAL
                           else "has no file" if not (src / file).exists()
                           else "is not a checked module")
                    refused.append((rel, f"imports {imp}, which {why}"))
            elif root not in ALLOWED_IMPORT_ROOTS:
                refused.append((rel, f"imports {imp}: a checked module may import only Odp "
                                     f"modules and the core library's {'/'.join(ALLOWED_IMPORT_ROOTS)}"))
    return Tree(modules, external, refused)


def closure(mods: dict[str, Module], roots: list[str]) -> set[str]:
    todo, seen = list(roots), set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        if m not in mods:
            raise SystemExit(f"unknown module {m}")
        seen.add(m)
        todo += mods[m].odp_imports
    return seen


def report(result, limit: int = 40) -> None:
    lines = result.output.splitlines()
    for line in lines[:limit]:
        print("      " + line)
    if len(lines) > limit:
        print(f"      … ({len(lines) - limit} more lines)")
    if result.stderr.strip():
        for line in result.stderr.strip().splitlines()[:10]:
            print("      stderr: " + line)


# --- pinned theorems ---------------------------------------------------------------------------

@dataclass
class Pin:
    name: str
    axioms: frozenset[str]
    label: str


def read_pins(path: Path = PINNED) -> list[Pin]:
    pins = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 3 or not re.fullmatch(r"[\w.']+", parts[0]):
            raise SystemExit(f"{path}:{number}: expected 'name | axioms | label'")
        axioms = frozenset() if parts[1] == "(none)" else frozenset(
            a.strip() for a in parts[1].split(",") if a.strip())
        pins.append(Pin(parts[0], axioms, parts[2]))
    return pins


def audit_source(modules: list[str], theorems: list[str]) -> str:
    """``AxiomAudit.lean`` with its two lists filled in."""
    text = AUDIT.read_text(encoding="utf-8")
    for marker, names in (("@odp-audit-modules", modules), ("@odp-audit-theorems", theorems)):
        pattern = re.compile(r"^(def \w+ : List Name :=) \[\] -- " + re.escape(marker) + "$", re.M)
        if len(pattern.findall(text)) != 1:
            raise SystemExit(f"{AUDIT} has no line '… := [] -- {marker}'")
        array = ", ".join(f"`{n}" for n in names)
        text = pattern.sub(lambda m, array=array: f"{m.group(1)} [{array}]", text)
    return text


def audit(tc, modules: list[str], work: Path, partial: bool = False) -> bool:
    """Run the audit and the replay on the compiled modules. With ``partial`` (a subset of the
    modules), pinned theorems outside them are not required."""
    pins = read_pins()
    path = work / "audit" / AUDIT.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(audit_source(sorted(modules), [p.name for p in pins]), encoding="utf-8")
    res = tc.compile(path, lean_path=[work / "build"])
    lines = res.output.splitlines()
    fails = [line for line in lines if line.startswith("AUDIT-FAIL")
             and not (partial and line.startswith("AUDIT-FAIL main theorem") and "not found" in line)]
    axioms = {}
    for line in lines:
        if line.startswith("AXIOMS "):
            name, _, rest = line[len("AXIOMS "):].partition(": ")
            listed, _, trusted = rest.partition(" (and ")
            axioms[name] = (frozenset() if listed == "(none)" else frozenset(listed.split(", ")),
                            trusted.rstrip(")"))
    loaded = next((line for line in lines if line.startswith("AUDIT modules ")), "")
    loaded_set = set(loaded[len("AUDIT modules "):].split(", ")) if loaded else set()
    problems = []
    if loaded_set != set(modules):
        problems.append(f"the audit loaded {sorted(loaded_set)}, not the compiled modules "
                        f"{sorted(modules)}")
    for pin in pins:
        if pin.name not in axioms:
            if not partial:
                problems.append(f"pinned theorem {pin.name} ({pin.label}) was not audited")
            continue
        got = axioms[pin.name][0]
        if got != pin.axioms:
            problems.append(f"{pin.name} ({pin.label}) reaches the axioms "
                            f"{{{', '.join(sorted(got)) or 'none'}}}, but pinned.txt pins "
                            f"{{{', '.join(sorted(pin.axioms)) or 'none'}}}")
    replayed = next((line for line in lines if line.startswith("AUDIT replayed")), None)
    checked = next((line for line in lines if line.startswith("AUDIT checked")), None)
    # AxiomAudit prints AUDIT-OK only when no AUDIT-FAIL line was printed. With ``partial``, the
    # pinned theorems outside the selected modules are "not found" (filtered out of ``fails``
    # above); every other problem, the replay's included, prints an AUDIT-FAIL line kept in it.
    missing_only = partial and any(line.startswith("AUDIT-FAIL") for line in lines)
    good = (res.returncode == 0 and not res.errors and not fails and not problems
            and ("AUDIT-OK" in lines or missing_only) and replayed is not None)
    print(f"  {'ok  ' if good else 'FAIL'} axiom audit and kernel replay {res.seconds:6.1f} s")
    for line in (checked, replayed):
        if line:
            print("      " + line[len("AUDIT "):])
    for line in fails:
        print("      " + line)
    for line in problems:
        print("      AUDIT-FAIL " + line)
    if res.errors or res.returncode or (not good and not fails and not problems):
        report(res)
    labels = {p.name: p for p in pins}
    for name, (got, trusted) in axioms.items():
        pin = labels.get(name)
        mark = "" if pin is None or pin.axioms == got else "   ← pinned: " + (
            ", ".join(sorted(pin.axioms)) or "(none)")
        print(f"      {name}: {', '.join(sorted(got)) or '(none)'} (and {trusted})"
              + (f"   [{pin.label}]" if pin else "") + mark)
    return good


# --- module cache ------------------------------------------------------------------------------

def module_keys(mods: dict[str, Module], selected: set[str]) -> dict[str, str]:
    """For each module, the SHA-256 of the toolchain, its name, its source bytes and the keys of
    the modules it imports: equal keys mean the same input to the compiler."""
    keys: dict[str, str] = {}

    def key(m: str) -> str:
        if m not in keys:
            h = hashlib.sha256()
            h.update(lt.LEAN_PACKAGE[2].encode())
            h.update(m.encode() + b"\0")
            h.update(hashlib.sha256(mods[m].path.read_bytes()).digest())
            for dep in sorted(mods[m].odp_imports):
                h.update(key(dep).encode())
            keys[m] = h.hexdigest()
        return keys[m]

    for m in selected:
        key(m)
    return keys


def _outputs(build: Path, m: str) -> list[Path]:
    base = build / Path(*m.split("."))
    return sorted(p for p in base.parent.glob(base.name + ".*")
                  if p.is_file() and p.name.split(".")[0] == base.name)


class ModuleCache:
    """Compiled modules kept in the toolchain cache by key (:func:`module_keys`), each with a
    record of its key and of the SHA-256 of every file (:func:`odp.lean_toolchain.write_stamp`).
    At most :attr:`KEEP` entries are kept; the ones used least recently go first."""

    KEEP = 300

    def __init__(self, root: Path):
        self.root = lt.secure_dir(root)

    def fetch(self, m: str, key: str, build: Path) -> bool:
        entry = self.root / key[:32]
        if lt.stamp_problem(entry, key) is not None:
            return False
        for f in sorted(entry.rglob("*")):
            if f.is_file() and f.name != lt.STAMP:
                dest = build / f.relative_to(entry)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, dest)
        # the copies must be the files the record describes
        same = all(lt.sha256_file(build / f.relative_to(entry)) == lt.sha256_file(f)
                   for f in entry.rglob("*") if f.is_file() and f.name != lt.STAMP)
        if same:
            (entry / lt.STAMP).touch()  # recently used
        return same

    def prune(self) -> None:
        entries = sorted((p for p in self.root.iterdir()
                          if re.fullmatch(r"[0-9a-f]{32}", p.name) and (p / lt.STAMP).exists()),
                         key=lambda p: (p / lt.STAMP).stat().st_mtime, reverse=True)
        for old in entries[self.KEEP:]:
            shutil.rmtree(old, ignore_errors=True)

    def store(self, m: str, key: str, build: Path) -> None:
        entry = self.root / key[:32]
        outputs = _outputs(build, m)
        if not outputs:
            return
        staging = Path(tempfile.mkdtemp(prefix=key[:32] + ".", dir=self.root))
        try:
            for f in outputs:
                dest = staging / f.relative_to(build)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, dest)
            lt.write_stamp(staging, key, module=m)
            with lt.file_lock(self.root / (key[:32] + ".lock")):
                if lt.stamp_problem(entry, key) is None:
                    return
                if entry.exists():
                    shutil.rmtree(entry)
                staging.rename(entry)
                self.prune()
        finally:
            shutil.rmtree(staging, ignore_errors=True)


# --- main --------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, default=REPO, help="repository root holding Odp/")
    ap.add_argument("--only", action="append", default=[],
                    help="compile only this module and what it imports (repeatable; no audit "
                         "unless --audit)")
    ap.add_argument("--jobs", type=int, default=2, help="modules compiled at once (default 2)")
    ap.add_argument("--no-audit", action="store_true", help="skip the axiom audit and replay")
    ap.add_argument("--audit", action="store_true",
                    help="with --only: also audit and replay the selected modules")
    ap.add_argument("--no-source-scan", action="store_true",
                    help="skip the source scan (only to test that the compiler, the audit and "
                         "the replay catch what it would have caught)")
    cache = ap.add_mutually_exclusive_group()
    cache.add_argument("--cache", dest="cache", action="store_true", default=None,
                       help="reuse compiled modules built from the same source (default with --only)")
    cache.add_argument("--no-cache", dest="cache", action="store_false",
                       help="compile every module (default for a full run)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary build directory")
    ap.add_argument("--scan-only", action="store_true",
                    help="only sort the files and scan the sources (no toolchain needed; the "
                         "lake branch of scripts/check_lean.sh runs this first)")
    args = ap.parse_args(argv)

    src = args.src.resolve()
    tree = collect(src)
    mods = tree.modules
    t0 = time.monotonic()
    for m in args.only:
        if m not in mods:
            print(f"  FAIL unknown module {m}")
            return 1
    selected = closure(mods, args.only) if args.only else set(mods)
    use_cache = bool(args.only) if args.cache is None else args.cache
    print(f"Lean check: {len(selected)} module(s) from {src / 'Odp'} with Lean {lt.LEAN_VERSION} "
          "(WebAssembly, no Mathlib)")
    if tree.external:
        print("  external, not compiled here: " + ", ".join(rel for rel, _ in tree.external))

    bad = False
    for rel, why in tree.refused:
        print(f"  FAIL {rel}: {why}")
        bad = True
    if not args.only and SPEC not in mods:
        print(f"  FAIL {SPEC} is missing: the statements of every claimed result must be "
              "compiled (Odp/Core/Spec.lean)")
        bad = True
    for m in sorted(selected) if not args.no_source_scan else []:
        rel = mods[m].path.relative_to(src).as_posix()
        for line, why in escape_hatches(mods[m].path.read_text(encoding="utf-8")):
            print(f"  FAIL {rel}:{line}: {why}")
            bad = True
    if bad:
        print("Lean check FAILED before compiling: see the FAIL lines above")
        return 1
    if args.scan_only:
        print(f"Lean source scan passed: {len(selected)} module(s) checked, every Lean file "
              "is a checked module or listed as external")
        return 0

    try:
        tc = lt.ensure_toolchain(say=lambda s: print("  " + s, flush=True))
        module_cache = ModuleCache(lt.cache_root() / "modules") if use_cache else None
    except lt.ToolchainError as exc:
        print(f"  FAIL no Lean toolchain: {exc}")
        return 2

    work = Path(tempfile.mkdtemp(prefix="odp-lean-check."))
    try:
        for m in selected:
            path = mods[m].path
            dest = work / "src" / path.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
            mods[m] = Module(m, dest, mods[m].imports, mods[m].odp_imports)
        keys = module_keys(mods, selected)
        ok = compile_all_copied(tc, mods, selected, work, args.jobs, module_cache, keys)
        if ok and not args.no_audit and (args.audit or not args.only):
            ok = audit(tc, sorted(selected), work, partial=bool(args.only))
    finally:
        if args.keep:
            print(f"  build kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    total = time.monotonic() - t0
    if ok:
        print(f"Lean check passed in {total:.0f} s: every module compiled with no error and no "
              "unfinished proof" + ("" if args.only and not args.audit or args.no_audit else
                                     "; the audit found no unsafe or partial declaration and no "
                                     "axiom beyond propext, Classical.choice, Quot.sound, the "
                                     "pinned axiom sets hold, and the kernel replay accepted "
                                     "every declaration"))
        return 0
    print(f"Lean check FAILED after {total:.0f} s")
    return 1


def compile_all_copied(tc, mods: dict[str, Module], selected: set[str], work: Path, jobs: int,
                       module_cache: ModuleCache | None = None,
                       keys: dict[str, str] | None = None) -> bool:
    """Compile the selected modules (their files copied to ``work/src``) in dependency order,
    ``jobs`` at a time; a module whose imports failed is skipped and counted as failed. With a
    cache, a module whose key is cached is taken from it instead."""
    build = work / "build"
    done: set[str] = set()
    failed: set[str] = set()
    pending = set(selected)
    tried: set[str] = set()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        running: dict = {}
        while pending or running:
            for m in sorted(pending):
                if any(d in failed for d in mods[m].odp_imports):
                    pending.discard(m)
                    failed.add(m)
                    print(f"  SKIP {m}: it imports a module that failed", flush=True)
            ready = [m for m in sorted(pending) if all(d in done for d in mods[m].odp_imports)]
            progressed = False
            for m in ready:
                if m in tried:
                    continue
                tried.add(m)
                if module_cache is not None and keys and module_cache.fetch(m, keys[m], build):
                    pending.discard(m)
                    done.add(m)
                    progressed = True
                    print(f"  ok   {m:<28} (cached build of the same source)", flush=True)
            if progressed:
                continue
            for m in ready[: max(0, jobs - len(running))]:
                pending.discard(m)
                out = build / Path(*m.split(".")).with_suffix(".olean")
                running[pool.submit(tc.compile, mods[m].path, root=work / "src", out=out,
                                    lean_path=[build])] = m
            if not running:
                if pending:
                    print(f"  FAIL cannot order {sorted(pending)} (import cycle or missing file)")
                    return False
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                m = running.pop(fut)
                res = fut.result()
                if res.ok:
                    done.add(m)
                    warnings = [d for d in res.diagnostics if d.severity == "warning"]
                    note = f"  ({len(warnings)} warning(s))" if warnings else ""
                    print(f"  ok   {m:<28} {res.seconds:6.1f} s{note}", flush=True)
                    if warnings:
                        report(res, limit=20)
                    if module_cache is not None and keys:
                        try:
                            module_cache.store(m, keys[m], build)
                        except OSError as exc:  # a cache that cannot be written is not an error
                            print(f"      (not kept in the cache: {exc})")
                else:
                    failed.add(m)
                    why = ("an unfinished proof (declaration uses `sorry`)"
                           if res.unfinished and not res.errors
                           else f"{len(res.errors)} error(s)" if res.errors
                           else f"exit status {res.returncode}")
                    print(f"  FAIL {m:<28} {res.seconds:6.1f} s: {why}", flush=True)
                    report(res)
    return not failed


if __name__ == "__main__":
    raise SystemExit(main())
