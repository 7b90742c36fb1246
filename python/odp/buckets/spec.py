"""Composition specs: several mechanisms, each with a count, from a JSON/TOML file or from the
command line's repeated ``--mechanism`` groups.

A spec is a list of entries; each entry is a mechanism's :meth:`~PLDMechanism.describe` form plus an
optional ``count`` (default 1).  JSON::

    {"mechanisms": [
        {"mechanism": "gaussian", "sigma": "1", "count": 500},
        {"mechanism": "laplace", "scale": "10", "count": 500}
    ]}

(a bare list is accepted too).  TOML (Python >= 3.11)::

    [[mechanism]]
    mechanism = "gaussian"
    sigma = "1"
    count = 500

Numbers may be strings (``"0.1"`` is exactly 1/10) or numbers.  Mechanism names:
``gaussian`` (sigma, sensitivity), ``laplace`` (scale, sensitivity), ``randomized_response``
(epsilon, num_values), ``approximate_dp`` (epsilon, delta), ``discrete_laplace`` (scale,
sensitivity), ``discrete_gaussian`` (sigma, sensitivity), ``finite_pair`` (p, q),
``poisson_gaussian`` (sampling_rate, sigma, sensitivity: a DP-SGD step) and ``poisson_laplace``
(sampling_rate, scale, sensitivity) -- Poisson subsampling under add/remove neighbours
(:mod:`odp.buckets.subsampled`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..budget import parse_positive_int
from ..errors import InvalidParameter
from .mechanisms import PLDMechanism, mechanism_from_dict

__all__ = ["MAX_SPEC_BYTES", "load_spec", "parse_spec"]

#: A spec file larger than this is refused (a composition spec is a few lines).
MAX_SPEC_BYTES = 1 << 20

_FIELDS = {
    "gaussian": {"sigma", "sensitivity"},
    "laplace": {"scale", "sensitivity"},
    "randomized_response": {"epsilon", "num_values"},
    "approximate_dp": {"epsilon", "delta"},
    "discrete_laplace": {"scale", "sensitivity"},
    "discrete_gaussian": {"sigma", "sensitivity"},
    "finite_pair": {"p", "q"},
    "poisson_gaussian": {"sampling_rate", "sigma", "sensitivity"},
    "poisson_laplace": {"sampling_rate", "scale", "sensitivity"},
}


def parse_spec(data: Any, *, source: str = "spec") -> list[tuple[PLDMechanism, int]]:
    """``[(mechanism, count), ...]`` from a decoded spec (see the module docstring)."""
    if isinstance(data, dict):
        keys = set(data) & {"mechanisms", "mechanism"}
        if len(keys) != 1 or set(data) - keys:
            raise InvalidParameter(
                f"{source}: expected a list of mechanisms, or an object with one key "
                f"'mechanisms' (JSON) / '[[mechanism]]' tables (TOML); got keys {sorted(data)}")
        data = data[keys.pop()]
    if not isinstance(data, list) or not data:
        raise InvalidParameter(f"{source}: expected a non-empty list of mechanisms")
    out = []
    for i, entry in enumerate(data, start=1):
        where = f"{source}: mechanism {i}"
        if not isinstance(entry, dict):
            raise InvalidParameter(f"{where}: expected an object such as "
                                   '{"mechanism": "gaussian", "sigma": "1", "count": 10}')
        entry = dict(entry)
        kind = entry.get("mechanism")
        if kind not in _FIELDS:
            raise InvalidParameter(f"{where}: unknown mechanism {kind!r}; known: "
                                   f"{', '.join(_FIELDS)}")
        count = entry.pop("count", 1)
        try:
            count = parse_positive_int(count, name="count")
        except InvalidParameter as exc:
            raise InvalidParameter(f"{where}: {exc}") from None
        unknown = set(entry) - _FIELDS[kind] - {"mechanism"}
        if unknown:
            raise InvalidParameter(f"{where}: unknown field(s) {sorted(unknown)} for {kind}; "
                                   f"allowed: {sorted(_FIELDS[kind])} and count")
        if kind == "finite_pair":
            for key in ("p", "q"):
                if not isinstance(entry.get(key), list):
                    raise InvalidParameter(f"{where}: finite_pair needs lists p and q")
        try:
            mech = mechanism_from_dict(entry)
        except TypeError as exc:  # a missing required field
            raise InvalidParameter(f"{where}: {exc}") from None
        except InvalidParameter as exc:
            raise InvalidParameter(f"{where}: {exc}") from None
        out.append((mech, count))
    return out


def load_spec(path: str | Path) -> list[tuple[PLDMechanism, int]]:
    """Read a JSON (``.json`` or anything else) or TOML (``.toml``) composition spec."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_SPEC_BYTES:
            raise InvalidParameter(f"{path}: {size} bytes is too large for a composition spec "
                                   f"(at most {MAX_SPEC_BYTES})")
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise InvalidParameter(f"cannot read the spec {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InvalidParameter(f"{path}: not a UTF-8 text file (expected a JSON or TOML "
                               "composition spec)") from None
    if path.suffix.lower() == ".toml":
        try:
            import tomllib  # type: ignore[import-not-found,unused-ignore]  # Python >= 3.11
        except ModuleNotFoundError:  # Python 3.10
            raise InvalidParameter("TOML specs need Python >= 3.11; use JSON") from None
        try:
            data = tomllib.loads(text, parse_float=str)
        except tomllib.TOMLDecodeError as exc:
            raise InvalidParameter(f"{path}: not valid TOML: {exc}") from None
    else:
        try:
            data = json.loads(text, parse_float=str)
        except ValueError as exc:
            raise InvalidParameter(f"{path}: not valid JSON: {exc}") from None
    return parse_spec(data, source=str(path))
