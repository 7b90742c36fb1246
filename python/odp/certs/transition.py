"""One budget transition of Alg. 1 as a one-step certificate text (for the Lean checker) and as
natural numbers in units of 1/D (for the generated checker).

Shared by :mod:`odp.certs.enforce` (which may start the Lean checker) and :mod:`odp.certs.lean`
(which runs it); neither imports the other for it.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from .format import to_units

if TYPE_CHECKING:  # pragma: no cover
    from .mechanisms import Derived

__all__ = ["scale", "transition_text"]


def scale(*values: Fraction) -> tuple[int, list[int]]:
    """(D, [v·D]) in the certificate's units of 1/D (non-negative values; a negative one raises
    :class:`~odp.errors.CertificateError`)."""
    return to_units(values)


def transition_text(eps_r: Fraction, delta_r: Fraction, sup: Fraction, charged: Fraction,
                    delta: Fraction, blocks: list[Fraction] | None = None,
                    realized: int | None = None, *, mech: "Derived | None" = None
                    ) -> tuple[str, int, tuple[int, int]]:
    """A one-step certificate text for a transition (with its ``blocks`` row when a class is
    realised, and its ``mech`` row when ``mech`` is given), its D, and the expected final
    state."""
    n = len(blocks or [])
    d, scaled = scale(eps_r, delta_r, sup, charged, delta, *(blocks or []),
                      *(mech.amounts() if mech is not None else []))
    e_r, d_r, s, c, dl = scaled[:5]
    text = f"D {d}\nbudget {e_r} {d_r}\nstep {s} {c} {dl}\n"
    if blocks is not None:
        text += "blocks " + " ".join(map(str, scaled[5:5 + n])) + f" ; realized {realized}\n"
    if mech is not None:
        text += mech.row(d).render() + "\n"
    expected = (e_r - c, d_r - dl)
    return text, d, expected
