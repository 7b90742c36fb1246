"""Optional dependencies: which extra of the ``odp-accounting`` distribution provides a module,
and the one install hint every error message uses.

The distribution is named ``odp-accounting`` (the name ``odp`` on PyPI belongs to an unrelated
project); the import name and the command stay ``odp``.  odp is installed from its source
checkout, so the hint is ``pip install -e ".[EXTRA]"`` run in that directory.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import OdpError

#: The distribution name on PyPI (checked free with ``pip index versions odp-accounting``).
DISTRIBUTION = "odp-accounting"

#: top-level module -> (extra that provides it, what needs it)
EXTRAS = {
    "matplotlib": ("plots", "figures (odp figure)"),
    "sklearn": ("demo", "the demo's bundled data (odp demo)"),
    "pexpect": ("lean", "talking to the compiled Lean checker (odp verify --lean)"),
    "psycopg": ("postgres", "PostgreSQL ledgers (postgresql:// URLs)"),
    "cryptography": ("sign", "Ed25519 signatures of certificates (odp certify --sign-key)"),
    "mpmath": ("bench", "high-precision references in benchmarks"),
    "opendp": ("opendp", "OpenDP measurements (odp.from_opendp)"),
    "dp_accounting": ("dp-accounting", "dp-accounting events (odp.buckets.from_dp_event)"),
    "hypothesis": ("test", "the test suite"),
    "pytest": ("test", "the test suite"),
}


class MissingDependency(OdpError):
    """An optional package is not installed; the message names the extra that provides it."""

    def __init__(self, module: str, purpose: str | None = None):
        top = module.split(".")[0]
        extra, needed_for = EXTRAS.get(top, (None, None))
        self.module, self.extra = top, extra
        what = purpose or needed_for or "this feature"
        hint = install_hint(extra) if extra else f"pip install {top}"
        super().__init__(f"{what} needs the Python package {top!r}, which is not installed: "
                         f"run {hint}")


def install_hint(extra: str) -> str:
    """``pip install -e ".[EXTRA]"`` (in the odp source directory)."""
    return f'pip install -e ".[{extra}]" in the odp source directory'


def require(module: str, purpose: str | None = None) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependency` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.split(".")[0] != module.split(".")[0]:
            raise  # the module exists but one of *its* imports is missing: a real bug
        raise MissingDependency(module, purpose) from exc
