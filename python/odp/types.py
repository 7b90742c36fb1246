"""The type aliases and protocols odp's values are made of, depending on nothing else in odp.

What the API *accepts* — unions over the guarantees and costs of :mod:`odp.guarantees`, the
protocol of a mechanism — is in :mod:`odp.protocols`, one layer up (it needs those classes,
which need these names).

* :data:`Number` — an exact or float input for a privacy parameter, parsed exactly by
  :mod:`odp.budget`;
* :data:`Label`, :data:`Partition` — a class label and the partition of the output space that
  an ODP guarantee declares (Hartmann, Bindschaedler, Bentkamp, West 2022, Def. 2);
* :data:`Data`, :data:`Release` — a mechanism's dataset and its output;
* :class:`RandomSource` — where samplers and mechanisms draw their randomness.
"""

from __future__ import annotations

import decimal
import numbers
from fractions import Fraction
from typing import Any, Callable, Protocol, Union

__all__ = ["Number", "Label", "Partition", "Data", "Release", "RandomSource"]

#: A privacy parameter as a caller may give it: text (``"0.1"``, ``"1e-6"``, ``"1/3"``), an
#: integer, a ``Fraction``, a ``Decimal`` or a float (:func:`odp.budget.parse_epsilon`).
Number = Union[str, int, float, Fraction, decimal.Decimal, numbers.Real]

#: A class label of a partition: ``str`` or ``int`` (JSON scalars, so a ledger can record it).
Label = Union[str, int]
#: A partition of the output space: a total, data-independent map release -> class label.  A
#: release is whatever a mechanism outputs (a number, an array, a tuple, ⊥ …), hence ``Any``.
Partition = Callable[[Any], Label]

#: A mechanism's dataset and its release (a number, an array, a tuple of answers, ⊥ …) are
#: opaque to the accounting, which sees a release only through the declared partition: ``Any``.
Data = Any
Release = Any


class RandomSource(Protocol):
    """Uniform integers in ``[0, n)``.  ``secure`` says whether this is fit for real releases
    (:class:`odp.samplers.SecureRandom`; :class:`odp.samplers.SeededRandom` is not)."""

    secure: bool

    def randbelow(self, n: int) -> int: ...
