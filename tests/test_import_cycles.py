"""No import cycles in the odp package.

* Static: every ``import`` of an odp module by another — at the top *or inside a function* (a
  lazy import hides a cycle but does not remove it) — forms a graph that must have no cycle.
  Implicit edges to parent packages (importing ``odp.a.b`` runs ``odp/__init__``) are not
  counted: they are how packages work, not a dependency of ``b``.
* Dynamic: each module is imported alone, in a fresh subprocess per group of modules whose
  ``odp`` entries are all removed from ``sys.modules`` before each import, so every import
  starts from nothing but the third-party libraries.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "odp"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, is_package, node.level, node.module)
                # ``from .. import x`` names the parent package only to reach its submodule x
                targets = [base] if node.module is not None else []
                # ``from . import x`` / ``from .pkg import sub`` import submodules too
                targets += [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                if target in modules and target != module:
                    graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_static_import_graph_has_no_cycle():
    graph = import_graph()
    assert len(graph) > 80 and "odp.certs.enforce" in graph["odp.accountant"]
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = import_graph()
    # the two cycles this package used to have: put back one edge of each
    assert "odp.optdel" in graph["odp.composition"]  # lazy, inside BucketsComposition/OptDel
    graph["odp.optdel.problem"].add("odp.composition")  # parse_stops used to live there
    assert "odp.certs.lean" in graph["odp.certs.enforce"]  # lazy, for enforce="lean"
    graph["odp.certs.lean"].add("odp.certs.enforce")  # transition_text used to live there
    found = cycles(graph)
    assert len(found) == 2
    assert any({"odp.composition", "odp.optdel.problem"} <= set(c) for c in found)
    assert ["odp.certs.enforce", "odp.certs.lean"] in found
    lazy = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert cycles(lazy) == [["a", "b", "c"]]


_IMPORT_ALONE = """
import importlib, json, sys, warnings
warnings.simplefilter("ignore", DeprecationWarning)
failures = {}
for name in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m == "odp" or m.startswith("odp.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:  # an ImportError from a partially initialised module, typically
        failures[name] = repr(exc)
print(json.dumps(failures))
"""


@pytest.mark.slow  # every module imported afresh: ~9 CPU-s; the static graph check runs by default
def test_every_module_imports_alone():
    names = sorted(_modules())
    proc = subprocess.run([sys.executable, "-c", _IMPORT_ALONE, json.dumps(names)],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {}
