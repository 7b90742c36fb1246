"""Public-shape checks for :meth:`odp.Mechanism.check_public` (one place for all mechanisms).

Under replace-one neighbours the number of records (and the number of features) is the same
for every neighbouring database, so it is public: a mechanism declared for ``n`` records may
refuse other sizes *before* its round is reserved, which costs the caller nothing.  These
helpers look only at sizes and array shapes, and at labels, whose domain {−1, +1} is part of
the declared record domain (a database with another label is not one the guarantee is about,
so refusing it says nothing about the databases it is about).  Each raises
:class:`~odp.errors.InvalidParameter` with a message that says what was expected.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidParameter

__all__ = ["public_size", "array_shape", "unpack", "check_labelled", "check_sign_labels"]


def public_size(data: Any, *, what: str = "data") -> int:
    """``len(data)``: the public number of records."""
    try:
        return len(data)
    except TypeError:
        raise InvalidParameter(
            f"{what} must be a sized collection of records (a list or an array), "
            f"got {type(data).__name__}") from None


def array_shape(value: Any, *, what: str) -> tuple[int, ...]:
    """The shape of an array-like (``numpy.shape``); a ragged nested list is refused."""
    try:
        return tuple(int(k) for k in np.shape(value))
    except ValueError:
        raise InvalidParameter(f"{what} must be a rectangular array (rows of equal length)") \
            from None


def unpack(data: Any, parts: tuple[str, ...], *, mechanism: str) -> tuple[Any, ...]:
    """``data`` as a tuple of ``len(parts)`` pieces (e.g. ``(features, labels)``)."""
    try:
        pieces = tuple(data)
    except TypeError:
        pieces = ()
    if len(pieces) != len(parts):
        raise InvalidParameter(f"{mechanism} expects its data as ({', '.join(parts)})")
    return pieces


def check_labelled(features: Any, labels: Any, n: int, dim: int, *, what: str) -> None:
    """``features`` of shape ``(n, dim)`` and ``labels`` of shape ``(n,)`` with values in
    {−1, +1} (:func:`check_sign_labels`)."""
    shape = array_shape(features, what=f"the {what} features")
    label_shape = array_shape(labels, what=f"the {what} labels")
    if shape != (n, dim) or label_shape != (n,):
        raise InvalidParameter(
            f"expected {what} features of shape ({n}, {dim}) and {n} labels (the declared "
            f"public sizes), got features of shape {shape} and labels of shape {label_shape}; "
            "nothing was reserved or charged")
    check_sign_labels(labels, what=what)


def check_sign_labels(labels: Any, *, what: str) -> None:
    """Every label is −1 or +1 (the record domain of the logistic-regression mechanisms)."""
    try:
        values = np.asarray(labels, dtype=float)
    except (TypeError, ValueError):
        values = None
    if values is None or not np.all((values == 1) | (values == -1)):
        raise InvalidParameter(
            f"the {what} labels must all be -1 or +1 (the declared record domain; for 0/1 "
            "labels pass 2*y - 1); nothing was reserved or charged")
