"""Static checks of the Lean sources (stdlib only; no Lean toolchain needed).

* no escape hatches (the words for an unfinished proof, the admit tactic, native_decide, new
  axioms) in any Lean file;
* `set_option autoImplicit false` in every Lean file, and `autoImplicit` off in the lakefile;
* `Odp/paper_mapping.md` (paper → Lean → Python → test): every declaration named in a "Lean
  declarations" column exists, every file of a "Lean file" column exists, every `odp.…` name of a
  "Python" column imports and every `tests/…` file or test of a "Test" column exists, and every
  pinned theorem of the mechanisms and certificates (`scripts/lean/pinned.txt`) is mapped;
* every Lean file under `Odp/` is imported (transitively) by `Odp.lean`, except generated run
  certificates `Odp/Certs/Run_*.lean`; `OdpCheck.lean` is the executable root: it is not part of
  the library and imports only `Odp.LedgerCore` (no Mathlib);
* the toolchain, lakefile and manifest agree on the pin;
* the generator-visible part of `Odp/LedgerCore.lean` stays in the small grammar;
* each `examples/*.ledger` gives the verdict written in its `# expected:` line (checked with a
  small independent reading of the format in `docs/lean.md`, section "The ledger format of
  `odpcheck`").
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ODP_DIR = ROOT / "Odp"
MATHLIB_DIR = ROOT / "OdpMathlib"
MATHLIB_ROOT = ROOT / "OdpMathlib.lean"
MAPPING = ODP_DIR / "paper_mapping.md"
PINNED = ROOT / "scripts" / "lean" / "pinned.txt"
EXE_ROOT = ROOT / "OdpCheck.lean"
LIB_ROOT = ROOT / "Odp.lean"
PIN = "v4.29.0"
MATHLIB_REV = "8a178386ffc0f5fef0b77738bb5449d50efeea95"

FORBIDDEN = re.compile(r"\bsorry\b|\badmit\b|native_decide|^[ \t]*(private |protected )?axiom\s", re.M)
DECL = re.compile(
    r"^[ \t]*(?:@\[[^\]]*\][ \t]*)?(?:(?:private|protected|noncomputable|nonrec|partial)[ \t]+)*"
    r"(?:theorem|lemma|def|abbrev|structure|inductive|instance|class)[ \t]+([^\s(:{\[]+)",
    re.M,
)


def lean_files() -> list[Path]:
    files = [LIB_ROOT, MATHLIB_ROOT, EXE_ROOT] + sorted(ODP_DIR.rglob("*.lean")) \
        + sorted(MATHLIB_DIR.rglob("*.lean"))
    return [f for f in files if f.exists() and ".lake" not in f.parts]


def is_run_certificate(path: Path) -> bool:
    return path.parent == ODP_DIR / "Certs" and path.name.startswith("Run_")


def module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def imports_of(path: Path) -> list[str]:
    return re.findall(r"^(?:public\s+)?import\s+(\S+)", path.read_text(encoding="utf-8"), re.M)


def declared_names() -> set[str]:
    """Fully qualified names of the declarations, tracking `namespace` / `section` / `end`."""
    names: set[str] = set()
    for path in lean_files():
        stack: list[tuple[str, str]] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            m = re.match(r"^\s*namespace\s+(\S+)", line)
            if m:
                stack.append(("ns", m.group(1)))
                continue
            m = re.match(r"^\s*(?:noncomputable\s+)?section\b\s*(\S*)", line)
            if m:
                stack.append(("sec", m.group(1)))
                continue
            m = re.match(r"^\s*end\b\s*(\S*)\s*$", line)
            if m and stack:
                stack.pop()
                continue
            m = DECL.match(line)
            if m:
                prefix = ".".join(name for kind, name in stack if kind == "ns")
                names.add(f"{prefix}.{m.group(1)}" if prefix else m.group(1))
    return names


def mapping_column(title: str) -> list[str]:
    """Backticked words in the column titled `title` of the tables of `Odp/paper_mapping.md`."""
    found: list[str] = []
    column = None
    for line in MAPPING.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            column = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if column is None:
            column = cells.index(title) if title in cells else -1
            continue
        if column < 0 or column >= len(cells) or set(cells[0]) <= {"-", ":", " "}:
            continue
        found += re.findall(r"`([^`]+)`", cells[column])
    return found


def mapping_declarations() -> list[str]:
    """The Lean names of the "Lean declarations" columns of `Odp/paper_mapping.md`."""
    return [w for w in mapping_column("Lean declarations") if re.fullmatch(r"[A-Za-z_][\w.']*", w)]


def test_lean_files_exist():
    for rel in ["lean-toolchain", "lakefile.lean", "lake-manifest.json", "Odp.lean", "OdpCheck.lean",
                "Odp/paper_mapping.md", "Odp/VERIFICATION_LOG.md", "Odp/Certs/Example.lean", "OdpMathlib/Axioms.lean",
                "Odp/LedgerCore.lean", "OdpMathlib.lean"]:
        assert (ROOT / rel).exists(), rel


@pytest.mark.parametrize("path", lean_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_escape_hatches(path):
    hits = [m.group(0).strip() for m in FORBIDDEN.finditer(path.read_text(encoding="utf-8"))]
    assert not hits, f"{path.relative_to(ROOT)}: {hits}"


@pytest.mark.parametrize("path", lean_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_auto_implicit_off(path):
    text = path.read_text(encoding="utf-8")
    assert re.search(r"^set_option autoImplicit false\s*$", text, re.M), path


def test_lakefile_and_pin():
    lakefile = (ROOT / "lakefile.lean").read_text(encoding="utf-8")
    assert re.search(r"⟨`autoImplicit,\s*false⟩", lakefile)
    assert f'@ "{PIN}"' in lakefile
    assert "lean_exe odpcheck" in lakefile and "root := `OdpCheck" in lakefile
    assert "@[default_target]\nlean_lib «Odp»" in lakefile
    assert "@[default_target]\nlean_lib «OdpMathlib»" in lakefile
    assert (ROOT / "lean-toolchain").read_text().strip() == f"leanprover/lean4:{PIN}"
    manifest = json.loads((ROOT / "lake-manifest.json").read_text())
    assert manifest["name"] == "odp"
    mathlib = next(p for p in manifest["packages"] if p["name"] == "mathlib")
    assert mathlib["inputRev"] == PIN and mathlib["rev"] == MATHLIB_REV


def test_mapping_declarations_exist():
    wanted = mapping_declarations()
    assert len(wanted) >= 150, "the paper map should name the main declarations"
    have = declared_names()
    missing = [n for n in wanted if not any(q == n or q.endswith("." + n) for q in have)]
    assert not missing, f"named in Odp/paper_mapping.md but not declared: {missing}"


def test_mapping_files_python_and_tests_exist():
    """The "Lean file", "Python" and "Test" columns name files, objects and tests that exist."""
    files = [f.strip() for cell in mapping_column("Lean file") for f in cell.split(",")]
    assert len(files) >= 40
    missing = [f for f in files if not (ROOT / f).is_file()]
    assert not missing, f"Lean files named in Odp/paper_mapping.md that do not exist: {missing}"
    names = [w for w in mapping_column("Python") if re.fullmatch(r"odp(\.\w+)+", w)]
    assert len(names) >= 40
    unresolved = []
    for name in names:
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            try:
                for attr in parts[cut:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                unresolved.append(name)
            break
        else:
            unresolved.append(name)
    assert not unresolved, f"Python names in Odp/paper_mapping.md that do not resolve: {unresolved}"
    tests = [w for w in mapping_column("Test") if w.startswith("tests/")]
    assert len(tests) >= 40
    absent = []
    for ref in tests:
        path, _, func = ref.partition("::")
        source = (ROOT / path).read_text(encoding="utf-8") if (ROOT / path).is_file() else None
        if source is None or (func and not re.search(rf"^def {re.escape(func)}\(", source, re.M)):
            absent.append(ref)
    assert not absent, f"tests named in Odp/paper_mapping.md that do not exist: {absent}"


def test_every_pinned_mechanism_theorem_is_mapped():
    """A pinned theorem of the mechanisms or the certificates (scripts/lean/pinned.txt) is named
    in the paper map: a new proved result cannot stay out of it."""
    mapped = set(mapping_declarations())
    pinned = [line.split("|")[0].strip() for line in PINNED.read_text(encoding="utf-8").splitlines()
              if line.strip() and not line.startswith("#")]
    wanted = [n for n in pinned if n.startswith(("Odp.Mech.", "Odp.Certs."))]
    assert len(wanted) >= 30
    unmapped = [n for n in wanted if not any(n == m or n.endswith("." + m) for m in mapped)]
    assert not unmapped, f"pinned but not in Odp/paper_mapping.md: {unmapped}"


def _reached(root: str) -> set[str]:
    reached: set[str] = set()
    todo = [root]
    while todo:
        mod = todo.pop()
        if mod in reached:
            continue
        reached.add(mod)
        path = ROOT.joinpath(*mod.split(".")).with_suffix(".lean")
        assert path.exists(), f"imported module {mod} has no file"
        todo += [m for m in imports_of(path) if m.split(".")[0] in ("Odp", "OdpMathlib")]
    return reached


def test_library_imports_every_module():
    """`Odp.lean` reaches every checked module and nothing of the Mathlib layer; `OdpMathlib.lean`
    reaches every file of the Mathlib layer (the layout keeps the two apart)."""
    reached = _reached("Odp")
    modules = {module_of(p) for p in ODP_DIR.rglob("*.lean") if not is_run_certificate(p)}
    assert not modules - reached, f"not imported from Odp.lean: {sorted(modules - reached)}"
    assert "Odp.Certs.Example" in reached
    assert "OdpCheck" not in reached
    assert not any(m.startswith("OdpMathlib") for m in reached), reached
    mathlib = {module_of(p) for p in MATHLIB_DIR.rglob("*.lean")}
    assert not mathlib - _reached("OdpMathlib"), "not imported from OdpMathlib.lean"
    for path in MATHLIB_DIR.rglob("*.lean"):  # the Mathlib layer is not a checked `module`
        assert not re.match(r"\s*module\b", path.read_text(encoding="utf-8")), path


def test_executable_and_ledger_core_are_core_only():
    assert imports_of(EXE_ROOT) == ["Odp.LedgerCore"]
    assert imports_of(ODP_DIR / "LedgerCore.lean") == []
    assert imports_of(ODP_DIR / "Certs" / "Example.lean") == ["Odp.LedgerCore"]
    assert re.search(r"^def main \(args : List String\) : IO UInt32", EXE_ROOT.read_text(), re.M)


def test_generator_subset_grammar():
    text = (ODP_DIR / "LedgerCore.lean").read_text(encoding="utf-8")
    start, end = "-- BEGIN GENERATOR SUBSET", "-- END GENERATOR SUBSET"
    assert text.count(start) == 1 and text.count(end) == 1
    body = re.sub(r"/-.*?-/", "", text.split(start)[1].split(end)[0], flags=re.S)
    code = "\n".join(line.split("--")[0] for line in body.splitlines())
    for word in ["match", "let", "fun", "where", "theorem", "termination_by", "λ", "instance"]:
        if word == "where":
            assert all(re.match(r"^structure \w+ where$", l) for l in code.splitlines() if " where" in l)
            continue
        assert not re.search(rf"\b{word}\b", code), word
    defs = re.findall(r"^def (\w+)", code, re.M)
    for name in ["admits", "update", "replay", "listMax", "listLen", "blockAt", "listSum",
                 "blocksOk", "deltasOk"]:
        assert name in defs, name
    assert re.findall(r"^structure (\w+) where", code, re.M) == ["State", "Entry", "StepGroup",
                                                                 "Share", "Slot", "Cost", "GaussRow"]


# --- ledger examples -------------------------------------------------------------------------

def check_ledger(text: str) -> tuple[int, str]:
    """Independent reading of ledger format v1: returns (exit code, stdout line)."""
    rows = []
    for line in text.splitlines():
        toks = line.replace(";", " ; ").split()
        if not toks or toks[0].startswith("#"):
            continue
        rows.append(toks)
    if len(rows) < 2 or rows[0][0] != "D" or rows[1][0] != "budget" or int(rows[0][1]) == 0:
        return 2, ""
    eps, delta = int(rows[1][1]), int(rows[1][2])
    steps: list[dict] = []
    for toks in rows[2:]:
        nums = [int(t) for t in toks[1:] if t not in (";", "realized")]
        if toks[0] == "step":
            steps.append({"e": nums, "blocks": None, "deltas": None})
        elif toks[0] == "blocks":
            steps[-1]["blocks"] = (nums[:-1], nums[-1])
        elif toks[0] == "deltas":
            steps[-1]["deltas"] = nums
        else:
            return 2, ""
    for i, st in enumerate(steps, start=1):
        sup, charged, dlt = st["e"]
        if st["blocks"] is not None:
            bs, k = st["blocks"]
            if sup != max(bs):
                return 1, f"FAIL at row {i}: blocks: supEps != max(blocks)"
            if k >= len(bs):
                return 1, f"FAIL at row {i}: blocks: realized index out of range"
            if charged != bs[k]:
                return 1, f"FAIL at row {i}: blocks: charged != blocks[realized]"
        if st["deltas"] is not None and sum(st["deltas"]) > dlt:
            return 1, f"FAIL at row {i}: deltas: sum(deltas) > delta"
        if charged < sup and st["blocks"] is None:
            return 1, f"FAIL at row {i}: refund: charged < supEps without a blocks row"
        if charged > sup:
            return 1, f"FAIL at row {i}: admits: charged > supEps"
        if sup > eps:
            return 1, f"FAIL at row {i}: admits: supEps > eps"
        if dlt > delta:
            return 1, f"FAIL at row {i}: admits: delta > delta"
        eps, delta = eps - charged, delta - dlt
    return 0, f"OK eps={eps} delta={delta}"


EXAMPLES = sorted((ROOT / "examples").glob("*.ledger"))


def test_examples_present():
    names = {p.name for p in EXAMPLES}
    for required in ["ok_basic.ledger", "ok_blocks.ledger", "bad_overspend.ledger", "bad_blocks.ledger"]:
        assert required in names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_verdict(path):
    text = path.read_text(encoding="utf-8")
    expected = re.search(r"^# expected: (.*)$", text, re.M)
    assert expected, f"{path.name} has no '# expected:' line"
    code, out = check_ledger(text)
    assert out == expected.group(1).strip()
    assert code == (0 if path.name.startswith("ok_") else 1)
