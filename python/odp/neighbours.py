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

from .errors import InvalidGuarantee, InvalidParameter, NeighboursMismatch

__all__ = ["Neighbours", "mismatch", "stated"]


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


def stated(value: Any, what: str) -> Neighbours | None:
    """The relation ``value`` states: its ``neighbours`` attribute (a mechanism's, an
    interactive mechanism's, a guarantee's such as the RDP curves odp computes for add/remove
    neighbours), or for a curve — a list or tuple of values — the one relation all its values
    state.  ``None``: none stated (the accountant's relation: the caller's claim).  A relation
    odp does not know is an :class:`~odp.errors.InvalidParameter` naming ``what``; a curve
    whose values state different relations (or some none) an
    :class:`~odp.errors.InvalidGuarantee`."""
    if isinstance(value, (list, tuple)):
        found = {stated(x, what) for x in value}
        if len(found) > 1:
            shown = ", ".join(sorted("none" if x is None else str(x) for x in found))
            raise InvalidGuarantee(
                f"the values of {what} state different neighbouring relations ({shown}): one "
                "guarantee holds for one relation; nothing was reserved or charged")
        return found.pop() if found else None
    raw = getattr(value, "neighbours", None)
    return None if raw is None else Neighbours.parse(raw, name=f"the neighbours of {what}")


def _how_to_convert(round_relation: Neighbours, holder: str) -> str:
    if round_relation is Neighbours.ADD_REMOVE:
        return ("To use it here, convert it by group privacy (replacing a record is removing it "
                "and adding another: an add/remove (ε, δ)-DP guarantee is a replace-one "
                "(2ε, (1 + e^ε)·δ)-DP one):\nodp.composition.ReplaceOneComposition, or "
                "neighbours='replace-one' for odp.mechanisms.DPSGD and odp.dpsgd.Accounting;\n"
                f"or keep add/remove rounds in {holder} of their own "
                "(neighbours=odp.Neighbours.ADD_REMOVE).")
    return ("A replace-one guarantee does not convert to add/remove neighbours in general (it "
            "may use the number of records, which add/remove neighbours keep private):\nrun it "
            f"in a replace-one {holder.split()[-1]} (the default); add/remove rounds convert to "
            "replace-one by group privacy\n(odp.composition.ReplaceOneComposition, "
            "neighbours='replace-one' for DP-SGD).")


def mismatch(what: str, round_relation: Neighbours, accountant: Neighbours, *,
             holder: str = "an accountant") -> NeighboursMismatch:
    """The error for a round (``what``) declared for ``round_relation`` offered to an
    accountant (``holder``: or ``"a composition"``) whose relation is ``accountant``: both
    named, why, and how to convert — on a few lines of at most about 200 characters."""
    this = "this " + holder.split()[-1]
    return NeighboursMismatch(
        f"{what} holds for {round_relation} neighbours, but {this}'s rounds hold for "
        f"{accountant} neighbours, so the round is refused; nothing was reserved or charged.\n"
        "Theorem 7 (Hartmann et al. 2022) composes guarantees for one neighbouring relation.\n"
        + _how_to_convert(round_relation, holder),
        round_relation=round_relation, accountant=accountant)
