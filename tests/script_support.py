"""Load a repository script (``scripts/``, ``bench/``) or a generated file as a module, for the
tests that exercise it: scripts are not part of the package, so they are imported by path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_module(path: Path, name: str) -> ModuleType:
    """Execute ``path`` as module ``name`` (registered in ``sys.modules``: dataclasses look
    their module up there)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_script(relative: str, name: str) -> ModuleType:
    """A script of this repository, e.g. ``load_script("scripts/gen_rules.py", "gen_rules")``."""
    return load_module(ROOT / relative, name)
