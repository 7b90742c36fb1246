"""The mechanism protocol: a declared guarantee, JSON-able parameters, and a release.

A mechanism declares its privacy guarantee (``DP`` or ``ODP``) *before* it runs; the guarantee
must not depend on the data.  ``release(data, rng)`` draws all its randomness from ``rng`` (an
exact, by default cryptographically secure, source: :mod:`odp.samplers`).

A mechanism also says which neighbouring relation its guarantee holds for
(:attr:`Mechanism.neighbours`, an :class:`odp.Neighbours`): every built-in mechanism states
replace-one (DP-SGD the relation it is built with); a mechanism of your own may state one, and
without it its guarantee is taken to hold for the accountant's relation — your claim, as the
guarantee itself is.  :meth:`odp.Accountant.run` refuses a mechanism of another relation than
its own before anything is reserved (:mod:`odp.neighbours`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from ..guarantees import DP, ODP
from ..neighbours import Neighbours
from ..types import Data, RandomSource, Release


class _Bottom:
    """The symbol ⊥ ("no answer"), independent of the data.  A singleton."""

    _instance = None

    def __new__(cls) -> "_Bottom":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "⊥"

    def __reduce__(self) -> tuple[type["_Bottom"], tuple[()]]:
        return (_Bottom, ())

    def __bool__(self) -> bool:
        return False


#: The ⊥ output of M_toy, Propose-Test-Release and test-and-release mechanisms.
BOTTOM = _Bottom()


def query_name(query: Any) -> str:
    """A short name for a query function (recorded in ledgers and certificates)."""
    return getattr(query, "__name__", type(query).__name__)


class Mechanism(ABC):
    """Base class of odp mechanisms (see the module docstring)."""

    #: Short name recorded in the ledger and certificates.
    name: str = "mechanism"

    #: The neighbouring relation the guarantee holds for (:mod:`odp.neighbours`).  ``None``:
    #: the accountant's — the author's claim, like the guarantee (a built-in mechanism states
    #: its own; the accountant refuses one of another relation than its own).
    neighbours: Neighbours | None = None

    @property
    @abstractmethod
    def guarantee(self) -> DP | ODP:
        """The declared guarantee (data-independent)."""

    def params(self) -> dict[str, Any]:
        """JSON-able description of the mechanism's parameters (for ledgers and certificates)."""
        return {}

    def check_public(self, data: Any) -> None:
        """Validate the *public* shape of ``data`` (e.g. its declared size or dimension) before
        any budget is reserved; raise :class:`~odp.errors.InvalidParameter` if it is wrong.

        :meth:`odp.Accountant.run` calls this before the reservation, so a caller's mistake
        costs nothing.  Only facts that the neighbouring relation keeps public may be checked
        here (e.g. ``n`` under replace-one neighbours): the check must not depend on private
        values.  A failure inside :meth:`release` happens after the reservation and is charged
        the worst case."""

    @abstractmethod
    def release(self, data: Data, rng: RandomSource) -> Release:
        """Run the mechanism on ``data`` with randomness from ``rng``."""

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in self.params().items())
        return f"{type(self).__name__}({params})"
