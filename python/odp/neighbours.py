"""The neighbouring relation: which pairs of databases a privacy guarantee speaks about.

A DP or ODP guarantee bounds the privacy loss between the outputs on two *neighbouring*
databases.  Hartmann et al. 2022 (Sec. 2, before Def. 1) name the two relations in use:

* :attr:`Neighbours.REPLACE_ONE` — the databases have the same size and differ in one record's
  value.  The number of records is public.  Every built-in mechanism of odp (Laplace, Gaussian,
  randomized response, SVT, PTR, noisy gradient descent, ERM) is analysed for it, and it is the
  relation of an accountant unless another is asked for.
* :attr:`Neighbours.ADD_REMOVE` — one database is the other with one record added or removed.
  The number of records is private.  Poisson-subsampled DP-SGD (:mod:`odp.rdp`,
  :mod:`odp.buckets`, dp-accounting, Opacus) is analysed for it; :class:`odp.mechanisms.DPSGD`
  and :class:`odp.dpsgd.Accounting` declare the relation they are built with (add/remove by
  default, replace-one by group privacy).

**One relation per accountant.**  Theorem 7 of Hartmann et al. 2022 composes ODP guarantees
in the game of Alg. 1, where each round's adversary picks a pair of neighbouring databases — of
*one* relation, the one every mechanism's guarantee is stated for.  A replace-one guarantee and
an add/remove one bound the loss over different pairs, and their sum bounds neither.  So an
:class:`odp.Accountant` carries one relation (recorded in its ledger's genesis), and a round
declared for another is refused before any noise is drawn, nothing recorded
(:class:`~odp.errors.NeighboursMismatch`).  Converting is the caller's choice: by group privacy
an add/remove (ε, δ)-DP guarantee is a replace-one (2ε, (1 + e^ε)·δ)-DP guarantee — replacing a
record is removing it and adding another (Dwork and Roth 2014, Thm. 2.2 for δ = 0, the same two
steps for δ > 0) — which :class:`odp.composition.ReplaceOneComposition` applies to a composition
(``neighbours="replace-one"`` of :class:`odp.mechanisms.DPSGD` and :class:`odp.dpsgd.
Accounting`).  A replace-one guarantee does not convert to add/remove in general: it may use the
number of records, which add/remove neighbours keep private.

:class:`Neighbours` parses the two strings odp has always written (``"replace-one"``,
``"add-remove"``), so ledgers, certificates and DP-SGD records keep their JSON.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from .errors import InvalidParameter, NeighboursMismatch

__all__ = ["Neighbours", "mismatch"]


class Neighbours(Enum):
    """A neighbouring relation (module docstring): :attr:`REPLACE_ONE` or :attr:`ADD_REMOVE`.

    Its value is the string a ledger or a certificate records; ``str(x)`` is that string."""

    REPLACE_ONE = "replace-one"
    ADD_REMOVE = "add-remove"

    @classmethod
    def parse(cls, value: Any, *, name: str = "neighbours") -> "Neighbours":
        """``value`` as a relation: a :class:`Neighbours`, or one of the strings
        ``"replace-one"`` and ``"add-remove"``; anything else is an
        :class:`~odp.errors.InvalidParameter` naming ``name``."""
        if isinstance(value, cls):
            return value
        member = cls._value2member_map_.get(value) if isinstance(value, str) else None
        if member is not None:
            return member  # type: ignore[return-value]
        raise InvalidParameter(
            f"{name} must be odp.Neighbours.REPLACE_ONE or odp.Neighbours.ADD_REMOVE (or the "
            f"strings 'replace-one', 'add-remove'), got {value!r}")

    @classmethod
    def of_record(cls, text: str | None) -> "Neighbours":
        """The relation a ledger or a certificate records: none recorded (made before odp
        recorded it) is :attr:`REPLACE_ONE`, the relation of every built-in mechanism then."""
        return cls.REPLACE_ONE if text is None else cls.parse(text)

    @property
    def public_size(self) -> bool:
        """Whether the number of records is the same for all neighbours (public)."""
        return self is Neighbours.REPLACE_ONE

    def describe(self) -> str:
        """One line: which databases are neighbours."""
        if self is Neighbours.REPLACE_ONE:
            return ("replace-one neighbours: two databases of the same size that differ in one "
                    "record's value (the number of records is public)")
        return ("add/remove neighbours: one database is the other with one record added or "
                "removed (the number of records is private)")

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Neighbours.{self.name}"


def _how_to_convert(round_relation: Neighbours, accountant: Neighbours) -> str:
    if round_relation is Neighbours.ADD_REMOVE and accountant is Neighbours.REPLACE_ONE:
        return ("To use it here, convert it by group privacy — replacing a record is removing "
                "it and adding another, so an add/remove (ε, δ)-DP guarantee is a replace-one "
                "(2ε, (1 + e^ε)·δ)-DP one: odp.composition.ReplaceOneComposition for a "
                "composition, neighbours='replace-one' for odp.mechanisms.DPSGD and "
                "odp.dpsgd.Accounting — or account add/remove rounds in an accountant of their "
                "own, odp.Accountant(…, neighbours=odp.Neighbours.ADD_REMOVE)")
    return ("A replace-one guarantee does not convert to add/remove neighbours in general (it "
            "may use the number of records, which add/remove neighbours keep private): run it "
            "with a replace-one accountant (the default), or state this accountant's rounds "
            "for replace-one neighbours instead (by group privacy: "
            "odp.composition.ReplaceOneComposition, neighbours='replace-one' for DP-SGD)")


def mismatch(what: str, round_relation: Neighbours, accountant: Neighbours
             ) -> NeighboursMismatch:
    """The error for a round (``what``) declared for ``round_relation`` offered to an
    accountant whose relation is ``accountant``: both named, and how to convert."""
    return NeighboursMismatch(
        f"{what} holds for {round_relation} neighbours, but this accountant's rounds hold for "
        f"{accountant} neighbours: Theorem 7 (Hartmann et al. 2022) composes guarantees for one "
        f"neighbouring relation, so the round is refused; nothing was reserved or charged.  "
        + _how_to_convert(round_relation, accountant),
        round_relation=round_relation, accountant=accountant)
