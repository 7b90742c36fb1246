#!/usr/bin/env python3
"""Compile, scan, audit and kernel-replay the Mathlib-free Lean modules (WebAssembly Lean).

    python3 -I -S scripts/lean_check.py [--src DIR] [--only MODULE] [--audit] [--jobs N]
                                        [--keep] [--cache | --no-cache] [--no-audit]
                                        [--no-source-scan] [--scan-only]

The check assumes that every file of the tree it checks may be adversarial except its
**trusted base** (docs/lean.md, "The trusted base"): the toolchain (pinned by hash, checked on
every run), this script, ``scripts/check_lean.sh``, ``scripts/lean/*`` (the lexer, the sandbox,
the audit, the pins), ``python/odp/lean_toolchain.py`` (loaded by path, standard library only)
and the statement files (:data:`STATEMENT_FILES`). Run it with ``python3 -I -S`` (as
``check_lean.sh`` does), so that no file of the tree is imported in its place.

1. **The trusted base is read first.** The audit program, the pins and every source file are
   read into memory and hashed before anything is compiled; the hashes are printed. Every later
   step uses these in-memory copies, never the files again.
2. **Every file is checked or refused.** Each ``.lean`` file under ``DIR/Odp`` and at the top of
   ``DIR`` is either a ``module``, which is compiled, or one of :data:`EXTERNAL` (the Mathlib
   layer in ``OdpMathlib/`` and the lake files), which is not. Any other file fails the check,
   named; so does a symbolic link. The statement files must all be there.
3. **Imports** are read from the header by a tokenizer (``scripts/lean/lexer.py``: a comment or
   a line break between ``public`` and ``import`` changes nothing): a checked module may import
   only checked modules (``Odp.*``) and the core library's ``Init``; no ``meta`` import. The
   compiler enforces the same: it is given a library path holding only ``Init`` and the
   compiled ``Odp`` modules. The audit then prints each module's imports as its ``.olean``
   records them, and they must equal what the tokenizer read.
4. **Source scan** of the tokens (comments skipped, «quoted names» normalised, so
   ``«command_elab»`` is ``command_elab``): the words of ``lexer.REFUSED_WORDS`` and
   ``lexer.REFUSED_PREFIXES``, every ``#`` command (``#eval``, ``#exit``, ``#print``, …),
   options outside ``lexer.ALLOWED_OPTIONS`` and attributes outside
   ``lexer.ALLOWED_ATTRIBUTES``. The scan is a first line that names the problem early; the
   layers below do not rely on it.
5. **Compile in a sandbox** (``scripts/lean/sandbox.py``): each module, in dependency order,
   ``--jobs`` at a time, under a user id of its own (as root) or in a read-only mount namespace
   (otherwise), able to write only its own fresh output directory. When it has exited (and
   every process it left has been killed), its ``.olean`` files — regular files of its own,
   nothing else — are copied into the checker's store, which no compile can write. A module
   fails on any error, on an unfinished proof, and (a statement file) on any warning.
6. **Audit and replay** (``scripts/lean/AxiomAudit.lean``, from the in-memory copy, written to
   a fresh directory after every compile has exited, run in a fresh sandboxed process that
   loads only the stored ``.olean`` files and the pinned core library, with extensions not
   loaded, so no code of the tree runs): no declaration of ours is unsafe, partial or an
   axiom, or reaches an axiom other than ``propext``, ``Classical.choice``, ``Quot.sound``;
   **every** constant of every checked module is sent through the kernel again (lean4checker's
   replay); only ``Init`` is loaded from outside ``Odp``; each module's environment-extension
   entries are of the kinds of :data:`ALLOWED_EXTENSIONS` (no macros, elaborators, parsers,
   initialisers, aliases, coercions); every instance of a class from outside ``Odp`` is pinned
   in ``scripts/lean/instances.txt``; the theorems of ``scripts/lean/pinned.txt`` exist and
   reach exactly the axioms pinned there.
7. The toolchain is checked against its pinned tree hashes before the first compile and again
   before the audit.

``--cache`` reuses a module's compiled files from the toolchain cache when they were built from
the same source bytes (of the module and of everything it imports) by the same toolchain, with
the hash of each file recorded beside it (:func:`odp.lean_toolchain.stamp_problem`); the audit
and the replay still run on every declaration. It is on by default with ``--only`` (developing
one module), off by default for a full run (what CI runs).

Exit status: 0 when everything checked, 1 when a check failed, 2 when the toolchain could not be
obtained, its cache is not safe to use, or no sandbox can be set up (never a silent skip).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def _load(name: str, path: Path):
    """A module of the trusted base by its path (never through ``sys.path``)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


# Loaded by path on purpose, not imported as ``odp.lean_toolchain``: the checker runs as
# ``python3 -I -S`` and must not import the ``odp`` package, whose code is not part of its
# trusted base (docs/lean.md, "The trusted base"); this one standard-library-only file is.
lt = _load("odp_lean_toolchain", REPO / "python" / "odp" / "lean_toolchain.py")
lexer = _load("odp_lean_lexer", HERE / "lean" / "lexer.py")
sandbox = _load("odp_lean_sandbox", HERE / "lean" / "sandbox.py")

AUDIT = HERE / "lean" / "AxiomAudit.lean"
PINNED = HERE / "lean" / "pinned.txt"
INSTANCES = HERE / "lean" / "instances.txt"
#: The module that states the core's claimed results in full; every run requires it.
SPEC = "Odp.Core.Spec"
#: The statement files: each states a layer's results in full (docs/lean.md). A full run
#: requires every one, compiles it in full and fails on any warning in it.
STATEMENT_FILES = ("Odp/Core/Spec.lean", "Odp/Mech/Spec.lean", "Odp/Certs/Spec.lean")

#: Lean files that are not compiled here, and why. Everything else must be a ``module``.
EXTERNAL = {
    **{f"OdpMathlib/{name}.lean": "Mathlib layer (stated only; the external lake/Mathlib "
                                   "workflow, never compiled here)"
       for name in ("Prob", "Defs", "Lemmas", "Lemma20", "Composition", "Rules", "Axioms",
                    "Real")},
    "OdpMathlib.lean": "the Mathlib layer's library root (lake)",
    "OdpCheck.lean": "the odpcheck executable (lake; imports Odp.LedgerCore only)",
    "Odp.lean": "the lake library root of the checked modules",
    "lakefile.lean": "the lake build configuration",
}

#: Where a checked module may import from, besides the checked ``Odp`` modules.
ALLOWED_IMPORT_ROOTS = ("Init",)

#: Environment extensions a checked module may have entries in (printed by the audit from the
#: ``.olean`` files). Anything else — macros, elaborators, parsers, notation, initialisers,
#: aliases, coercions, default instances, unification hints — fails the audit, naming it.
ALLOWED_EXTENSIONS = frozenset({
    # declarations and their metadata
    "Lean.declRangeExt", "Lean.docStringExt", "_private.Lean.DocString.Extension.0.Lean.moduleDocExt",
    "Lean.namespacesExt", "Lean.protectedExt", "_private.Lean.AddDecl.0.Lean.privateConstKindsExt",
    "Lean.extraModUses", "_private.Lean.Compiler.ModPkgExt.0.Lean.modPkgExt",
    "Lean.Linter.deprecatedAttr", "Lean.Meta.completionBlackListExt",
    # what the elaborator derives from inductive types, structures, recursion and matches
    "recExt", "Lean.auxRecExt", "Lean.noConfusionExt", "_private.Lean.Structure.0.Lean.structureExt",
    "Lean.projectionFnInfoExt", "Lean.classExtension", "Lean.Elab.Structural.eqnInfoExt",
    "Lean.Meta.Match.Extension.extension", "Lean.Meta.congrKindsExt",
    "_private.Lean.AuxRecursor.0.Lean.sparseCasesOnExt",
    "_private.Lean.Meta.Constructions.SparseCasesOn.0.Lean.Meta.sparseCasesOnInfoExt",
    "Lean.Elab.WF.eqnInfoExt", "Lean.Meta.Eqns.eqnsExt", "Lean.Elab.Term.elabAsElim",
    # reducibility, simp and grind sets, rfl lemmas (how proofs search, not what they prove)
    "reducibilityCore", "Lean.defeqAttr", "Lean.Meta.simpExtension", "Lean.Meta.Grind.grindExt",
    "symbolFrequency", "sineQueNon",
    # instances (each also checked against scripts/lean/instances.txt)
    "Lean.Meta.instanceExtension", "Lean.Meta.globalInstanceExtension",
    # the code generator's data (run only inside the sandboxed compiles)
    "Lean.IR.declMapExt", "Lean.Compiler.LCNF.baseExt", "Lean.Compiler.LCNF.monoExt",
    "Lean.Compiler.LCNF.UnreachableBranches.functionSummariesExt", "Lean.Compiler.inlineAttrs",
    "Lean.Compiler.LCNF.specExtension", "Lean.Compiler.LCNF.Specialize.specCacheExt",
})

#: Kept for the tests and the lake branch: the options and attribute allow-lists live in the
#: lexer.
ALLOWED_OPTIONS = lexer.ALLOWED_OPTIONS


@dataclass
class Module:
    name: str
    path: Path
    imports: list[str]  # every module it imports
    odp_imports: list[str] = field(default_factory=list)
    text: str = ""  # the source, read once
    statement: bool = False  # one of STATEMENT_FILES


@dataclass
class Tree:
    """What ``collect`` found: the modules to compile, the external files, the refused ones."""
    modules: dict[str, Module]
    external: list[tuple[str, str]]
    refused: list[tuple[str, str]]


def is_module(text: str) -> bool:
    return lexer.header(text).is_module


def imports(text: str) -> list[str]:
    """The modules a file imports, read from its header's tokens."""
    return [imp.module for imp in lexer.header(text).imports]


def escape_hatches(text: str) -> list[tuple[int, str]]:
    """(line, reason) for every rule the source breaks (``lexer.scan``)."""
    return lexer.scan(text)


def module_name(src: Path, path: Path) -> str:
    return ".".join(path.relative_to(src).with_suffix("").parts)


def lean_files(src: Path) -> list[Path]:
    """Every Lean file the project holds: under ``Odp/`` and ``OdpMathlib/`` and at the top of
    the tree (symbolic links included: :func:`collect` refuses them)."""
    files = sorted(p for p in src.glob("*.lean") if p.is_file() or p.is_symlink())
    for folder in ("Odp", "OdpMathlib"):
        files += sorted(p for p in (src / folder).rglob("*.lean")
                        if ".lake" not in p.relative_to(src).parts)
    return files


def collect(src: Path) -> Tree:
    """Sort every Lean file of the project: a ``module`` is compiled; an external file
    (:data:`EXTERNAL`) is not; any other file is refused, and so is a symbolic link. Imports
    are read from the tokens and checked against the allow-list."""
    modules: dict[str, Module] = {}
    external, refused = [], []
    for path in lean_files(src):
        rel = path.relative_to(src).as_posix()
        if path.is_symlink() or any((src / p).is_symlink()
                                    for p in path.relative_to(src).parents if p.parts):
            refused.append((rel, "a symbolic link: the check reads only plain files of the tree"))
            continue
        text = path.read_text(encoding="utf-8")
        head = lexer.header(text)
        if rel in EXTERNAL:
            external.append((rel, EXTERNAL[rel]))
        elif head.is_module and rel.startswith("Odp/"):
            name = module_name(src, path)
            modules[name] = Module(name, path, [imp.module for imp in head.imports], text=text,
                                   statement=rel in STATEMENT_FILES)
            for problem in head.problems:
                refused.append((rel, f"line {problem.line}: {problem.reason}"))
            for imp in head.imports:
                if "meta" in imp.modifiers:
                    refused.append((rel, f"line {imp.line}: `meta import {imp.module}`: a meta "
                                         "import brings code to run while elaborating"))
        else:
            refused.append((rel, "not a `module` file and not on the external list (the "
                                 "Mathlib layer in OdpMathlib/, the lake files), so it "
                                 "would be neither compiled nor checked; make it a `module` "
                                 "(first line `module`) or remove it"))
    for mod in modules.values():
        rel = mod.path.relative_to(src).as_posix()
        for imp in mod.imports:
            root = imp.split(".")[0]
            if root == "Odp":
                if imp in modules:
                    mod.odp_imports.append(imp)
                else:
                    file = "/".join(imp.split(".")) + ".lean"
                    why = ("has no file" if not (src / file).exists()
                           else "is not a checked module")
                    refused.append((rel, f"imports {imp}, which {why}"))
            elif root not in ALLOWED_IMPORT_ROOTS:
                refused.append((rel, f"imports {imp}: a checked module may import only Odp "
                                     f"modules and the core library's "
                                     f"{'/'.join(ALLOWED_IMPORT_ROOTS)} (not Lean, Std, Lake: "
                                     "no metaprogramming library)"))
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


# --- the trusted base, read once -----------------------------------------------------------------

class TrustedBaseError(Exception):
    """The checker's own files are not safe to run from (the message says why)."""


@dataclass(frozen=True)
class TrustedBase:
    """The checker's own files, read (and hashed) before anything of the tree is compiled."""
    audit: str
    pinned: str
    instances: str
    digests: tuple[tuple[str, str], ...]

    FILES = ("scripts/lean_check.py", "scripts/check_lean.sh", "scripts/lean/lexer.py",
             "scripts/lean/sandbox.py", "scripts/lean/AxiomAudit.lean", "scripts/lean/pinned.txt",
             "scripts/lean/instances.txt", "python/odp/lean_toolchain.py")

    @classmethod
    def read(cls) -> TrustedBase:
        for rel in cls.FILES:  # a file others may write could be changed for the next run
            for p in [REPO / rel, *(REPO / rel).parents]:
                if p == REPO.parent:
                    break
                if os.stat(p).st_mode & 0o002:
                    raise TrustedBaseError(f"{p} can be written by every user: the checker's own "
                                           "files must not be (chmod o-w)")
        files = {rel: (REPO / rel).read_bytes() for rel in cls.FILES}
        digests = tuple((rel, hashlib.sha256(data).hexdigest()) for rel, data in files.items())
        return cls(files["scripts/lean/AxiomAudit.lean"].decode("utf-8"),
                   files["scripts/lean/pinned.txt"].decode("utf-8"),
                   files["scripts/lean/instances.txt"].decode("utf-8"), digests)


# --- pinned theorems and instances ------------------------------------------------------------

@dataclass
class Pin:
    name: str
    axioms: frozenset[str]
    label: str


def read_pins(path: Path = PINNED, text: str | None = None) -> list[Pin]:
    pins = []
    text = path.read_text(encoding="utf-8") if text is None else text
    for number, raw in enumerate(text.splitlines(), start=1):
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


def read_instances(text: str) -> dict[str, str]:
    """``scripts/lean/instances.txt``: ``name | class`` per line — the instances of classes from
    outside ``Odp`` that the checked modules may declare (each changes how a statement about
    that class elaborates, so each is reviewed and pinned)."""
    out = {}
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            name, _, cls = (p.strip() for p in line.partition("|"))
            out[name] = cls
    return out


def audit_source(modules: list[str], theorems: list[str], text: str | None = None) -> str:
    """``AxiomAudit.lean`` (the in-memory copy) with its three lists filled in (the statement
    modules from :data:`STATEMENT_FILES`)."""
    text = AUDIT.read_text(encoding="utf-8") if text is None else text
    statements = [".".join(Path(rel).with_suffix("").parts) for rel in STATEMENT_FILES]
    for marker, names in (("@odp-audit-modules", modules), ("@odp-audit-theorems", theorems),
                          ("@odp-statement-modules", statements)):
        pattern = re.compile(r"^(def \w+ : List Name :=) \[\] -- " + re.escape(marker) + "$", re.M)
        if len(pattern.findall(text)) != 1:
            raise SystemExit(f"{AUDIT} has no line '… := [] -- {marker}'")
        array = ", ".join(f"`{n}" for n in names)
        text = pattern.sub(lambda m, array=array: f"{m.group(1)} [{array}]", text)
    return text


def _list_after(lines: list[str], prefix: str) -> dict[str, list[str]]:
    """``PREFIX module: a, b, c`` lines as {module: [a, b, c]} (``(none)`` is empty)."""
    out = {}
    for line in lines:
        if line.startswith(prefix):
            name, _, rest = line[len(prefix):].partition(": ")
            out[name] = [] if rest in ("", "(none)") else rest.split(", ")
    return out


def audit(tc, modules: list[str], work: Path, *, trusted: TrustedBase, box, store: Path,
          mods: dict[str, Module], partial: bool = False) -> bool:
    """Run the audit and the replay on the stored modules, in a fresh sandboxed process. With
    ``partial`` (a subset of the modules), pinned theorems outside them are not required."""
    pins = read_pins(text=trusted.pinned)
    allowed_instances = read_instances(trusted.instances)
    folder = Path(tempfile.mkdtemp(prefix="audit.", dir=work))
    folder.chmod(0o755)
    path = folder / AUDIT.name
    path.write_text(audit_source(sorted(modules), [p.name for p in pins], trusted.audit),
                    encoding="utf-8")
    path.chmod(0o644)
    uid = box.identity()
    cmd, env = tc.command(path, lean_path=[store])
    t0 = time.monotonic()
    proc = box.run(cmd, uid=uid, writable=None, env=env, cwd="/tmp", timeout=3600)
    res = tc.result(path, returncode=proc.returncode, stdout=proc.stdout, stderr=proc.stderr,
                    seconds=time.monotonic() - t0)
    lines = res.output.splitlines()
    fails = [line for line in lines if line.startswith("AUDIT-FAIL")
             and not (partial and line.startswith("AUDIT-FAIL main theorem") and "not found" in line)]
    axioms = {}
    for line in lines:
        if line.startswith("AXIOMS "):
            name, _, rest = line[len("AXIOMS "):].partition(": ")
            listed, _, trusted_count = rest.partition(" (and ")
            axioms[name] = (frozenset() if listed == "(none)" else frozenset(listed.split(", ")),
                            trusted_count.rstrip(")"))
    loaded = next((line for line in lines if line.startswith("AUDIT modules ")), "")
    loaded_set = set(loaded[len("AUDIT modules "):].split(", ")) if loaded else set()
    problems = []
    if loaded_set != set(modules):
        problems.append(f"the audit loaded {sorted(loaded_set)}, not the compiled modules "
                        f"{sorted(modules)}")
    # what the compiler read: each module's imports as its .olean records them
    lean_imports = _list_after(lines, "AUDIT imports ")
    for m in modules:
        if m not in lean_imports:
            problems.append(f"the audit printed no imports for {m}")
            continue
        recorded = [i.split(" [")[0] for i in lean_imports[m]]
        flags = [i for i in lean_imports[m] if "[meta]" in i]
        expected = set(mods[m].imports) | {"Init"}  # every module but a `prelude` imports Init
        if set(recorded) != expected:
            problems.append(f"{m}: its .olean records the imports {sorted(set(recorded))}, but "
                            f"its header reads {sorted(expected)} (with Init)")
        if flags:
            problems.append(f"{m}: meta import(s) {flags}")
    outside = next((line for line in lines if line.startswith("AUDIT outside ")), None)
    if outside is None:
        problems.append("the audit printed no list of the modules loaded from outside Odp")
    else:
        foreign = [n for n in outside[len("AUDIT outside "):].split(", ")
                   if n and n != "(none)" and n.split(".")[0] not in ALLOWED_IMPORT_ROOTS]
        if foreign:
            problems.append("modules from outside Odp and Init were loaded: "
                            + ", ".join(foreign[:10]))
    for m, entries in _list_after(lines, "AUDIT entries ").items():
        for entry in entries:
            ext = entry.split("=")[0]
            if ext not in ALLOWED_EXTENSIONS:
                problems.append(f"{m} has entries in the environment extension {ext}, which a "
                                "checked module may not use (macros, elaborators, parsers, "
                                "notation, initialisers, aliases and coercions are refused; "
                                "ALLOWED_EXTENSIONS in scripts/lean_check.py)")
    if not any(line.startswith("AUDIT entries ") for line in lines) and modules:
        problems.append("the audit printed no environment-extension entries")
    for line in lines:
        if line.startswith("AUDIT instance "):
            name, _, rest = line[len("AUDIT instance "):].partition(" of ")
            rest, _, proj = rest.rpartition(" | proj ")
            cls, _, args = rest.partition(" on ")
            # an instance of an Odp class, or one that applies only to an Odp inductive type, is
            # part of the theory like any definition (an Odp `def`/`abbrev` head is marked
            # "(def)" by the audit: instance search sees through it, so it is not exempt); any
            # other instance of a core class is pinned, and must be what the pin says: a parent
            # projection of an Odp structure, not a hand-written instance under its name
            if cls.startswith("Odp.") or any(a.startswith("Odp.") and not a.endswith("(def)")
                                             for a in args.split(", ")):
                continue
            if allowed_instances.get(name) != cls:
                problems.append(f"instance {name} of the class {cls} on ({args}) is not pinned "
                                "in scripts/lean/instances.txt: an instance of a core class "
                                "on a type from outside Odp can change what a statement means")
            elif not proj.startswith("Odp.") or not name.startswith(proj + "."):
                problems.append(f"instance {name} of the class {cls} is pinned in "
                                "scripts/lean/instances.txt as a parent projection, but it is "
                                f"not a projection of its structure (projects: {proj or 'none'})")
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
    for name, (got, count) in axioms.items():
        pin = labels.get(name)
        mark = "" if pin is None or pin.axioms == got else "   ← pinned: " + (
            ", ".join(sorted(pin.axioms)) or "(none)")
        print(f"      {name}: {', '.join(sorted(got)) or '(none)'} (and {count})"
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
            h.update(hashlib.sha256(mods[m].text.encode("utf-8")).digest())
            for dep in sorted(mods[m].odp_imports):
                h.update(key(dep).encode())
            keys[m] = h.hexdigest()
        return keys[m]

    for m in selected:
        key(m)
    return keys


class ModuleCache:
    """Compiled modules kept in the toolchain cache by key (:func:`module_keys`), each with a
    record of its key and of the SHA-256 of every file (:func:`odp.lean_toolchain.write_stamp`).
    At most :attr:`KEEP` entries are kept; the ones used least recently go first."""

    KEEP = 300

    def __init__(self, root: Path):
        self.root = lt.secure_dir(root)

    def fetch(self, m: str, key: str, build: Build) -> bool:
        """Take a cached build of ``m`` into the store (only its expected file names)."""
        entry = self.root / key[:32]
        if lt.stamp_problem(entry, key) is not None:
            return False
        rel = str(Path(*m.split(".")))
        files = {}
        for suffix in OUTPUT_SUFFIXES:
            f = entry / (rel + suffix)
            if f.is_file() and not f.is_symlink():
                files[rel + suffix] = f.read_bytes()
        if rel + ".olean" not in files:
            return False
        for name, data in files.items():
            dest = build.store / name
            _mkdirs(dest.parent, build.store)
            dest.write_bytes(data)
            dest.chmod(0o644)
            build.digests[name] = hashlib.sha256(data).hexdigest()
        # the copies must be the files the record describes (stamp_problem checked them above)
        if lt.stamp_problem(entry, key) is not None:
            return False
        (entry / lt.STAMP).touch()  # recently used
        return True

    def prune(self) -> None:
        entries = sorted((p for p in self.root.iterdir()
                          if re.fullmatch(r"[0-9a-f]{32}", p.name) and (p / lt.STAMP).exists()),
                         key=lambda p: (p / lt.STAMP).stat().st_mtime, reverse=True)
        for old in entries[self.KEEP:]:
            shutil.rmtree(old, ignore_errors=True)

    def store(self, m: str, key: str, build: Build) -> None:
        entry = self.root / key[:32]
        rel = str(Path(*m.split(".")))
        outputs = [name for name in (rel + suffix for suffix in OUTPUT_SUFFIXES)
                   if name in build.digests]
        if not outputs:
            return
        staging = Path(tempfile.mkdtemp(prefix=key[:32] + ".", dir=self.root))
        try:
            for name in outputs:
                dest = staging / name
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(build.store / name, dest)
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


# --- the sandboxed build ---------------------------------------------------------------------

#: What the compiler writes for a module ``M``: ``M.olean`` (required) and these beside it.
OUTPUT_SUFFIXES = (".olean", ".olean.private", ".olean.server", ".ilean", ".ir")


class Build:
    """The work directory of one run: ``src/`` (the sources, from memory), ``initlib/`` (the
    core library's ``Init`` only: what a checked module may import), ``store/`` (the compiled
    modules, written only by this process, after each compile has exited) and one fresh
    output directory per compile, writable by that compile alone."""

    def __init__(self, tc, box, work: Path, mods: dict[str, Module]):
        self.tc, self.box, self.work = tc, box, work
        work.chmod(0o755)  # the sandboxed compiles must reach src/, initlib/ and store/
        self.src = work / "src"
        self.store = work / "store"
        self.initlib = work / "initlib"
        for d in (self.src, self.store, self.initlib, work / "out"):
            d.mkdir(mode=0o755)
            d.chmod(0o755)
        for m in mods.values():
            rel = Path(*m.name.split(".")).with_suffix(".lean")
            dest = self.src / rel
            _mkdirs(dest.parent, self.src)
            dest.write_text(m.text, encoding="utf-8")  # the bytes read at the start, not again
            dest.chmod(0o644)
            m.path = dest
        self._link_init(Path(tc.lib))
        self.digests: dict[str, str] = {}
        self._count = 0
        self._lock = threading.Lock()

    def _link_init(self, lib: Path) -> None:
        """``initlib/``: hard links (copies where impossible) to the pinned core library's
        ``Init`` files, so that ``import Lean`` (or Std, Lake) finds nothing."""
        def link(a: str, b: str) -> None:
            try:
                os.link(a, b)
            except OSError:
                shutil.copy2(a, b)
        for name in ("Init.olean", "Init.olean.private", "Init.olean.server", "Init.ilean",
                     "Init.ir"):
            if (lib / name).exists():
                link(str(lib / name), str(self.initlib / name))
        shutil.copytree(lib / "Init", self.initlib / "Init", copy_function=link)
        for d, _, _ in os.walk(self.initlib):
            os.chmod(d, 0o755)

    def compile(self, m: Module):
        """Compile ``m`` in the sandbox and take its outputs into the store."""
        with self._lock:
            self._count += 1
            uid = self.box.identity()
            out = self.box.make_writable_dir(self.work / "out" / str(self._count), uid)
        rel = Path(*m.name.split("."))
        target = out / rel.with_suffix(".olean")
        parent = out
        for part in rel.parts[:-1]:
            parent = parent / part
            parent.mkdir(mode=0o700)
            if self.box.kind == "uid":
                os.chown(parent, uid, uid)
        cmd, env = self.tc.command(m.path, root=self.src, out=target, lean_path=[self.store],
                                   library=self.initlib)
        t0 = time.monotonic()
        proc = self.box.run(cmd, uid=uid, writable=out, env=env, cwd="/tmp", timeout=3600)
        res = self.tc.result(m.path, returncode=proc.returncode, stdout=proc.stdout,
                             stderr=proc.stderr, seconds=time.monotonic() - t0)
        if res.ok:
            with self._lock:
                problem = self._take(out, rel, uid)
            if problem:
                res.returncode = res.returncode or 1
                res.output += "\n" + problem
                res.taken = problem
        shutil.rmtree(out, ignore_errors=True)
        return res

    def _take(self, out: Path, rel: Path, uid: int) -> str | None:
        """Copy the compile's outputs into the store: only the expected file names, each a
        regular file owned by the compile's user with one link (never a symbolic link or a link
        to someone else's file); the ``.olean`` must be there."""
        for suffix in OUTPUT_SUFFIXES:
            src = out / (str(rel) + suffix)
            try:
                fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
            except FileNotFoundError:
                if suffix == ".olean":
                    return f"the compile wrote no {rel}.olean"
                continue
            except OSError as exc:
                return f"{rel}{suffix} could not be read safely: {exc}"
            with os.fdopen(fd, "rb") as handle:
                st = os.fstat(handle.fileno())
                if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or (
                        self.box.kind == "uid" and st.st_uid != uid):
                    return (f"{rel}{suffix} is not a plain file of the compile's own "
                            "(a link, or owned by someone else): refused")
                data = handle.read()
            dest = self.store / (str(rel) + suffix)
            _mkdirs(dest.parent, self.store)
            dest.write_bytes(data)
            dest.chmod(0o644)
            self.digests[str(rel) + suffix] = hashlib.sha256(data).hexdigest()
        return None

    def store_intact(self) -> str | None:
        """Whether the store still holds exactly the files this process wrote into it."""
        found = {p.relative_to(self.store).as_posix(): p for p in self.store.rglob("*")
                 if not p.is_dir()}
        if set(found) != set(self.digests):
            return f"the store holds {sorted(set(found) ^ set(self.digests))[:3]} unexpectedly"
        for rel, digest in self.digests.items():
            if found[rel].is_symlink() or lt.sha256_file(found[rel]) != digest:
                return f"{rel} in the store changed after it was written"
        return None


def _mkdirs(path: Path, top: Path) -> None:
    """``path`` and its parents below ``top``, each mode 0755."""
    missing = []
    p = path
    while p != top and not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        d.mkdir(mode=0o755)
        d.chmod(0o755)


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
                    help="skip the source scan (only to test that the sandbox, the compiler, "
                         "the audit and the replay catch what it would have caught)")
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

    try:
        trusted = TrustedBase.read()
    except (TrustedBaseError, OSError) as exc:
        print(f"  FAIL the checker's trusted base: {exc}")
        return 2
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
    print("  trusted base read: " + ", ".join(f"{rel} {digest[:12]}"
                                             for rel, digest in trusted.digests))
    statements = {f"{rel} {hashlib.sha256(mods[module_name(src, src / rel)].text.encode()).hexdigest()[:12]}"
                  for rel in STATEMENT_FILES if module_name(src, src / rel) in mods}
    if statements:
        print("  statement files read: " + ", ".join(sorted(statements)))
    if tree.external:
        print("  external, not compiled here: " + ", ".join(rel for rel, _ in tree.external))

    bad = False
    for rel, why in tree.refused:
        print(f"  FAIL {rel}: {why}")
        bad = True
    if not args.only:
        for rel in STATEMENT_FILES:
            if module_name(src, src / rel) not in mods:
                print(f"  FAIL {rel} is missing: every statement file must be compiled in a "
                      "full run (STATEMENT_FILES in scripts/lean_check.py)")
                bad = True
    for m in sorted(selected) if not args.no_source_scan else []:
        rel = mods[m].path.relative_to(src).as_posix()
        for line, why in escape_hatches(mods[m].text):
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
        lt.verify_toolchain(tc, again=True)
        module_cache = ModuleCache(lt.cache_root() / "modules") if use_cache else None
        box = sandbox.Sandbox.detect()
        if box.kind == "uid":  # the compiles' users must read the toolchain
            _readable_toolchain(Path(tc.lib).parent.parent)
    except lt.ToolchainError as exc:
        print(f"  FAIL no Lean toolchain: {exc}")
        return 2
    except sandbox.SandboxError as exc:
        print(f"  FAIL no sandbox for the compiles: {exc}")
        return 2
    print(f"  toolchain checked against its pinned hashes; compiles sandboxed "
          f"({'a user id of their own each' if box.kind == 'uid' else 'read-only mount namespace'})",
          flush=True)

    work = Path(tempfile.mkdtemp(prefix="odp-lean-check."))
    try:
        build = Build(tc, box, work, {m: mods[m] for m in selected})
        keys = module_keys(mods, selected)
        ok = compile_all(build, mods, selected, args.jobs, module_cache, keys)
        box.reap_all()
        if ok:
            problem = build.store_intact()
            try:
                lt.verify_toolchain(tc, again=True)
            except lt.ToolchainError as exc:
                problem = problem or str(exc)
            if problem:
                print(f"  FAIL after the compiles: {problem}")
                ok = False
        if ok and not args.no_audit and (args.audit or not args.only):
            ok = audit(tc, sorted(selected), work, trusted=trusted, box=box,
                       store=build.store, mods=mods, partial=bool(args.only))
    finally:
        if args.keep:
            print(f"  build kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    total = time.monotonic() - t0
    if ok:
        print(f"Lean check passed in {total:.0f} s: every module compiled in a sandbox with no "
              "error and no unfinished proof" + (
                  "" if args.only and not args.audit or args.no_audit else
                  "; the audit found no unsafe or partial declaration, no axiom beyond "
                  "propext, Classical.choice, Quot.sound, no import beyond Init, no extension "
                  "or instance outside the allow-lists; the pinned axiom sets hold, and the "
                  "kernel replay accepted every declaration"))
        return 0
    print(f"Lean check FAILED after {total:.0f} s")
    return 1


def _readable_toolchain(base: Path) -> None:
    """Let other users read (not write) the toolchain: the sandboxed compiles run as users of
    their own. The cache above it stays owned by the user and unwritable by others. Every
    directory above the cache must let others pass (``o+x``), else the compiles cannot reach
    the toolchain: that is refused, naming the directory."""
    for p in base.parent.parents:
        if not os.stat(p).st_mode & 0o001:
            raise sandbox.SandboxError(
                f"the sandboxed compiles cannot reach the toolchain in {base}: {p} does not let "
                "other users pass (mode o-x); set ODP_LEAN_CACHE to a directory under /tmp")
    for p in (base.parent, base):
        p.chmod(0o755)
    for d, _, files in os.walk(base):
        os.chmod(d, 0o755)
        for f in files:
            path = os.path.join(d, f)
            mode = os.lstat(path).st_mode
            os.chmod(path, 0o755 if mode & 0o111 else 0o644)


def compile_all(build: Build, mods: dict[str, Module], selected: set[str], jobs: int,
                module_cache: ModuleCache | None = None,
                keys: dict[str, str] | None = None) -> bool:
    """Compile the selected modules in dependency order, ``jobs`` at a time, each in the
    sandbox; a module whose imports failed is skipped and counted as failed. With a cache, a
    module whose key is cached is taken from it instead."""
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
                running[pool.submit(build.compile, mods[m])] = m
            if not running:
                if pending:
                    print(f"  FAIL cannot order {sorted(pending)} (import cycle or missing file)")
                    return False
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                m = running.pop(fut)
                res = fut.result()
                warnings = [d for d in res.diagnostics if d.severity == "warning"]
                if res.ok and mods[m].statement and warnings:
                    res.returncode = 1  # a statement file compiles with no warning at all
                    note = "a statement file must compile with no warning"
                else:
                    note = ""
                if res.ok and not note:
                    done.add(m)
                    extra = f"  ({len(warnings)} warning(s))" if warnings else ""
                    print(f"  ok   {m:<28} {res.seconds:6.1f} s{extra}", flush=True)
                    if warnings:
                        report(res, limit=20)
                    if module_cache is not None and keys:
                        try:
                            module_cache.store(m, keys[m], build)
                        except OSError as exc:  # a cache that cannot be written is not an error
                            print(f"      (not kept in the cache: {exc})")
                else:
                    failed.add(m)
                    why = (note or getattr(res, "taken", None)
                           or ("an unfinished proof (declaration uses `sorry`)"
                               if res.unfinished and not res.errors
                               else f"{len(res.errors)} error(s)" if res.errors
                               else f"exit status {res.returncode}"))
                    print(f"  FAIL {m:<28} {res.seconds:6.1f} s: {why}", flush=True)
                    report(res)
    return not failed


if __name__ == "__main__":
    raise SystemExit(main())
