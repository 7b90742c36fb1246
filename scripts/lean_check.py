#!/usr/bin/env python3
"""Compile and audit the Mathlib-free Lean modules with the WebAssembly Lean toolchain.

    python3 scripts/lean_check.py [--src DIR] [--only MODULE] [--jobs N] [--no-audit] [--keep]

* Every Lean file under ``DIR/Odp`` whose header is ``module`` is compiled, in dependency order
  (its ``import`` lines), at most ``--jobs`` at a time; one line per module with its time.
  The others (``import Mathlib``) are the general statement for the external Mathlib workflow
  and are not compiled here.
* A module fails on any error, on an unfinished proof (the warning "declaration uses `sorry`"),
  and — before anything is compiled — on a source scan for escape hatches: ``sorry``, ``admit``,
  ``native_decide``, ``+native``, ``implemented_by``, ``extern``, ``axiom`` (comments excluded).
* Then ``scripts/lean/AxiomAudit.lean`` loads the compiled modules and checks every declaration
  for new axioms and for ``sorryAx``/``ofReduceBool``/``ofReduceNat``/``trustCompiler``; it
  prints the axioms of the main theorems (Theorem 7 and the ledger's soundness among them).

Exit status: 0 when everything checked, 1 when a check failed, 2 when the toolchain could not be
obtained (never a silent skip).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
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

#: What the main theorems are, for the summary.
MAIN = {
    "Odp.Core.odp_composition": "Theorem 7 (Alg. 1, deterministic adaptive adversary)",
    "Odp.Core.odp_composition_randomized": "Theorem 7 (randomised adversary)",
    "Odp.Core.odp_composition_alg1": "Theorem 7 (Alg. 1 with I rounds, explicit partitions)",
    "Odp.Core.lemma20": "Lemma 20",
    "Odp.Core.odp_of_dp": "Lemma 3",
    "Odp.Core.dp_of_odp_sup": "Lemma 4",
    "Odp.Core.odp_of_subsetDP": "Lemma 6",
    "Odp.Core.ODP_iff_ODPcost": "Definition 2: partition form = output-wise form",
    "Odp.Core.ODPcost_iff_ODPsum": "Definition 2: event form = sum form",
    "Odp.Core.enforce_valid": "ledger rules enforce Alg. 1's validity condition",
    "Odp.Core.accountant_composition": "Theorem 7 for the accountant's ledger",
    "Odp.Core.certificate_sound": "certificate (ledger replay) soundness",
    "Odp.Core.checkCert_certificate_sound": "a kernel-accepted certificate (checkCert) and Theorem 7",
    "Odp.LedgerCore.replay_sound": "ledger replay arithmetic",
    "Odp.Certs.Example.run_ok": "example certificate, replayed by the kernel",
}

_ESCAPES = re.compile(
    r"\bsorry\b|\badmit\b|native_decide|\+native|implemented_by|\bextern\b|^\s*(?:private\s+|protected\s+)?axiom\b",
    re.M,
)


def strip_comments(text: str) -> str:
    """Lean source without comments (nested block comments, doc comments, line comments);
    string literals are kept as they are (our modules have none that contain comment marks)."""
    out, i, depth = [], 0, 0
    while i < len(text):
        if text.startswith("/-", i):
            depth += 1
            i += 2
        elif depth and text.startswith("-/", i):
            depth -= 1
            i += 2
        elif depth:
            out.append("\n" if text[i] == "\n" else " ")
            i += 1
        elif text.startswith("--", i):
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def is_module(text: str) -> bool:
    return re.match(r"\s*module\b", strip_comments(text)) is not None


def module_name(src: Path, path: Path) -> str:
    return ".".join(path.relative_to(src).with_suffix("").parts)


def imports(text: str) -> list[str]:
    return re.findall(r"^\s*(?:public\s+)?(?:meta\s+)?import\s+(\S+)", strip_comments(text), re.M)


def escape_hatches(text: str) -> list[tuple[int, str]]:
    code = strip_comments(text)
    hits = []
    for m in _ESCAPES.finditer(code):
        line = code.count("\n", 0, m.start()) + 1
        hits.append((line, m.group(0).strip()))
    return hits


def collect(src: Path) -> dict[str, tuple[Path, list[str]]]:
    """Module name → (file, imported Odp modules) for every ``module`` file under src/Odp."""
    mods = {}
    for path in sorted((src / "Odp").rglob("*.lean")):
        text = path.read_text(encoding="utf-8")
        if is_module(text):
            mods[module_name(src, path)] = (path, [m for m in imports(text) if m.startswith("Odp.")])
    return mods


def closure(mods: dict[str, tuple[Path, list[str]]], roots: list[str]) -> set[str]:
    todo, seen = list(roots), set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        if m not in mods:
            raise SystemExit(f"unknown module {m}")
        seen.add(m)
        todo += mods[m][1]
    return seen


def report(result: lt.CompileResult, limit: int = 40) -> None:
    lines = result.output.splitlines()
    for line in lines[:limit]:
        print("      " + line)
    if len(lines) > limit:
        print(f"      … ({len(lines) - limit} more lines)")
    if result.stderr.strip():
        for line in result.stderr.strip().splitlines()[:10]:
            print("      stderr: " + line)


_IMPORTS = re.compile(r"importModules\s*#\[(.*?)\]", re.S)


def audit(tc: lt.Toolchain, mods, work: Path, partial: bool = False) -> bool:
    """Run the axiom audit on the compiled modules. With ``partial`` (a subset of the modules,
    for tests), the audit loads just those and main theorems outside them are not required."""
    text = AUDIT.read_text(encoding="utf-8")
    m = _IMPORTS.search(text)
    listed = set(re.findall(r"module\s*:=\s*`([\w.]+)", m.group(1))) if m else set()
    missing = set(mods) - listed
    if missing and not partial:
        print(f"  FAIL the axiom audit does not load {sorted(missing)}: add them to {AUDIT.name}")
        return False
    if partial:
        array = ", ".join(f"{{ module := `{name} }}" for name in sorted(mods))
        text = text[:m.start(1)] + array + text[m.end(1):]
    path = work / "audit" / AUDIT.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    res = tc.compile(path, lean_path=[work / "build"])
    lines = res.output.splitlines()
    fails = [l for l in lines if l.startswith("AUDIT-FAIL")
             and not (partial and "main theorem" in l and "not found" in l)]
    axioms = [l for l in lines if l.startswith("AXIOMS ")]
    checked = next((l for l in lines if l.startswith("AUDIT checked")), None)
    good = res.returncode == 0 and not res.errors and not fails and "AUDIT-OK" in lines
    print(f"  {'ok  ' if good else 'FAIL'} axiom audit                  {res.seconds:6.1f} s"
          + (f" ({checked[6:]})" if checked else ""))
    for line in fails:
        print("      " + line)
    if res.errors or res.returncode:
        report(res)
    for line in axioms:
        name, _, rest = line[len("AXIOMS "):].partition(": ")
        label = MAIN.get(name, "")
        print(f"      {name}: {rest}" + (f"   [{label}]" if label else ""))
    names = {l[len("AXIOMS "):].partition(":")[0] for l in axioms}
    absent = [] if partial else [n for n in ("Odp.Core.odp_composition",
                                             "Odp.Core.certificate_sound") if n not in names]
    if absent:
        print(f"      missing from the audit output: {absent}")
        good = False
    return good


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", type=Path, default=REPO, help="repository root holding Odp/")
    ap.add_argument("--only", action="append", default=[],
                    help="compile only this module and what it imports (repeatable; no audit)")
    ap.add_argument("--jobs", type=int, default=2, help="modules compiled at once (default 2)")
    ap.add_argument("--no-audit", action="store_true", help="skip the axiom audit")
    ap.add_argument("--audit", action="store_true",
                    help="with --only: also run the axiom audit on the selected modules")
    ap.add_argument("--no-source-scan", action="store_true",
                    help="skip the source scan (only to test that the compiler and the audit "
                         "catch what it would have caught)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary build directory")
    args = ap.parse_args(argv)

    src = args.src.resolve()
    mods = collect(src)
    selected = closure(mods, args.only) if args.only else set(mods)
    t0 = time.monotonic()
    print(f"Lean check: {len(selected)} module(s) from {src / 'Odp'} with Lean {lt.LEAN_VERSION} "
          "(WebAssembly, no Mathlib)")

    hatches = False
    for m in sorted(selected) if not args.no_source_scan else []:
        for line, word in escape_hatches(mods[m][0].read_text(encoding="utf-8")):
            print(f"  FAIL {m}: line {line}: escape hatch '{word}' is not allowed")
            hatches = True
    if hatches:
        return 1

    try:
        tc = lt.ensure_toolchain(say=lambda s: print("  " + s, flush=True))
    except lt.ToolchainError as exc:
        print(f"  FAIL no Lean toolchain: {exc}")
        return 2

    work = Path(tempfile.mkdtemp(prefix="odp-lean-check."))
    try:
        for m in selected:
            path = mods[m][0]
            dest = work / "src" / path.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, dest)
            mods[m] = (dest, mods[m][1])
        ok = compile_all_copied(tc, mods, selected, work, args.jobs)
        if ok and not args.no_audit and (args.audit or not args.only):
            ok = audit(tc, {m: mods[m] for m in selected}, work, partial=bool(args.only))
    finally:
        if args.keep:
            print(f"  build kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    total = time.monotonic() - t0
    if ok:
        print(f"Lean check passed in {total:.0f} s: every module compiled with no error and no "
              "unfinished proof" + ("" if args.only or args.no_audit else
                                     "; the axiom audit found no sorry, native code or new axiom"))
        return 0
    print(f"Lean check FAILED after {total:.0f} s")
    return 1


def compile_all_copied(tc, mods, selected, work, jobs) -> bool:
    """Compile the selected modules (their files copied to ``work/src``) in dependency order,
    ``jobs`` at a time; a module whose imports failed is skipped and counted as failed."""
    build = work / "build"
    done: set[str] = set()
    failed: set[str] = set()
    pending = set(selected)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        running: dict = {}
        while pending or running:
            for m in sorted(pending):
                if any(d in failed for d in mods[m][1]):
                    pending.discard(m)
                    failed.add(m)
                    print(f"  SKIP {m}: it imports a module that failed", flush=True)
            ready = [m for m in sorted(pending) if all(d in done for d in mods[m][1])]
            for m in ready[: max(0, jobs - len(running))]:
                pending.discard(m)
                out = build / Path(*m.split(".")).with_suffix(".olean")
                running[pool.submit(tc.compile, mods[m][0], root=work / "src", out=out,
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
