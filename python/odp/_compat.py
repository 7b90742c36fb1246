"""Not public: the module-level ``__getattr__`` that :mod:`odp.buckets` still uses for its two
renamed classes.  Another change is editing :mod:`odp.buckets`; once its old names
(``Mechanism``, ``RandomizedResponse``) are gone, delete this file."""

from __future__ import annotations

import warnings
from typing import Any, Callable

__all__ = ["renamed_attributes"]


def renamed_attributes(module: str, namespace: dict[str, Any],
                       renames: dict[str, str]) -> Callable[[str], object]:
    """A module-level ``__getattr__`` (PEP 562): ``module.old`` returns ``namespace[new]`` with
    a :class:`DeprecationWarning`."""

    def __getattr__(name: str) -> object:
        new = renames.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is deprecated: use {module}.{new} (same class)",
                      DeprecationWarning, stacklevel=2)
        return namespace[new]

    return __getattr__
