"""Deprecation paths for public signatures that changed in 0.2 (kept for one release)."""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, TypeVar, cast

__all__ = ["positional_deprecated", "renamed_attributes"]

F = TypeVar("F", bound=Callable[..., Any])


def positional_deprecated(keep: int) -> Callable[[F], F]:
    """Parameters after the first ``keep`` became keyword-only in 0.2.  Calls that still pass
    them by position keep working for one release: the extra positional values are bound to
    the keyword-only parameters in order, with a :class:`DeprecationWarning` naming them.  A
    call in the new form costs one length check."""

    def decorate(func: F) -> F:
        names = [p.name for p in inspect.signature(func).parameters.values()
                 if p.kind is inspect.Parameter.KEYWORD_ONLY]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:  # Any: forwards func's own arguments
            if len(args) > keep:
                extra = args[keep:]
                if len(extra) > len(names):
                    raise TypeError(f"{func.__qualname__}() takes {keep + len(names)} arguments "
                                    f"but {len(args)} were given")
                moved = names[: len(extra)]
                for name in moved:
                    if name in kwargs:
                        raise TypeError(
                            f"{func.__qualname__}() got multiple values for argument {name!r}")
                warnings.warn(
                    f"{func.__qualname__}(): pass {', '.join(moved)} by keyword (positional use "
                    "is deprecated since odp 0.2 and will be removed in the next release)",
                    DeprecationWarning, stacklevel=2)
                kwargs.update(zip(moved, extra))
                args = args[:keep]
            return func(*args, **kwargs)

        return cast(F, wrapper)

    return decorate


def renamed_attributes(module: str, namespace: dict[str, Any],
                       renames: dict[str, str]) -> Callable[[str], object]:
    """A module-level ``__getattr__`` (PEP 562) for names renamed in 0.2: ``module.old`` keeps
    returning ``namespace[new]`` for one release, with a :class:`DeprecationWarning`."""

    def __getattr__(name: str) -> object:
        new = renames.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is deprecated: use {module}.{new} (same class)",
                      DeprecationWarning, stacklevel=2)
        return namespace[new]

    return __getattr__
