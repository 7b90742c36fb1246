"""The neighbouring relation of a certificate: read from both halves, checked against the rounds.

Theorem 7 of Hartmann et al. 2022 composes guarantees for one neighbouring relation
(:mod:`odp.neighbours`), and an accountant refuses a round of another than its own.  A
certificate records its ledger's relation twice — a comment of the text
(:func:`odp.certs.export.relation_line`) and the sidecar's ``"neighbours"`` — and, for a
version-2 sidecar, a third time in the chain's genesis (checked by :mod:`odp.certs.trust`, which
rebuilds the text from it).  :func:`check_relation` requires the halves to agree and every
built-in round to hold for that relation (its kind's relation, :meth:`odp.certs.mechanisms.Kind.
relation`: replace-one, or DP-SGD's as recorded); a declared or DP round's relation is its
caller's claim.  A round's kind is read from its ``mech`` row (text version 3) *and* from the
built-in key its chain-bound params record (:data:`~odp.mechanisms.builtin.BUILTIN_KEY`, in every
text version), so a certificate rebuilt at an older text version, without ``mech`` rows, hides
no built-in round; and an older text version that records a relation is refused outright (odp
records the relation only in text version 3 and later).  A certificate made before odp
recorded the relation has none: it means replace-one, and a built-in round of another relation
is then reported, not failed (such a run was accepted by the odp that made it), and Theorem 7
is not said to cover it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Iterator, Mapping, Sequence

from ..errors import InvalidParameter
from ..mechanisms.builtin import BUILTIN_KEY
from ..neighbours import Neighbours
from .export import relations_in_text
from .format import CertificateText
from .mechanisms import RECORDED, round_neighbours

__all__ = ["RelationReport", "check_relation"]


@dataclass(frozen=True)
class RelationReport:
    """What a certificate says of its neighbouring relation."""

    relation: Neighbours
    recorded: bool  #: False: made before odp recorded it (the relation is then replace-one)
    #: rounds (1-based; ``"lane round k"`` for a notion lane's) of an unrecorded certificate
    #: whose built-in mechanism holds for another relation, with that relation
    others: tuple[tuple[str, Neighbours], ...] = field(default=())

    @property
    def one_relation(self) -> bool:
        """Whether every built-in round holds for :attr:`relation`."""
        return not self.others

    def statements(self) -> tuple[list[str], list[str]]:
        """(established, not established) about the relation, for ``odp verify``."""
        rel = self.relation
        if self.recorded:
            return [f"every round holds for {rel} neighbours — the one relation Theorem 7 "
                    "composes: the ledger records it with its budget, the accountant refuses a "
                    "round of another relation, and the rounds of odp's own mechanisms hold for "
                    "it (a declared round's relation is its caller's claim, like its "
                    "guarantee)"], []
        if not self.others:
            return [f"every round holds for {rel} neighbours — the one relation Theorem 7 "
                    "composes (the certificate records no relation: it was made before odp "
                    "recorded one, which means replace-one)"], []
        shown = ", ".join(f"{where} ({other})" for where, other in self.others[:12])
        more = f" and {len(self.others) - 12} more" if len(self.others) > 12 else ""
        return [], [f"that every round holds for one neighbouring relation: the certificate "
                    "records none (made before odp recorded it, which means replace-one), but "
                    f"built-in round(s) {shown}{more} hold for another relation; Theorem 7 "
                    "composes guarantees for one relation, so it does not cover this run as "
                    "recorded"]

    def to_json(self) -> dict[str, Any]:
        return {"relation": self.relation.value, "recorded": self.recorded,
                "others": [[where, other.value] for where, other in self.others]}


#: The first certificate text version that records the relation (no odp wrote it in another).
RELATION_TEXT_VERSION = 3


def _recorded_relation(params: Any) -> Neighbours | None:
    """A round's relation by the built-in key its params record (odp's own mechanism, written
    only by odp: replace-one, or DP-SGD's as recorded); any other round's is the caller's
    claim (``None``)."""
    key = params.get(BUILTIN_KEY) if isinstance(params, Mapping) else None
    kinds = RECORDED.get(key, ()) if isinstance(key, str) else ()
    return kinds[0].relation(params) if kinds else None


def check_relation(cert: CertificateText, sidecar: Mapping[str, Any],
                   rounds: Sequence[Any]) -> tuple[RelationReport | None, str | None, int | None]:
    """``(report, failure, row)``: the certificate's relation, or why it fails (and the 1-based
    step it fails at, if one): the text and the sidecar record different relations (or one
    records one and the other none), a relation odp does not know, or — with a relation
    recorded — a built-in round of another relation."""
    in_text = relations_in_text(cert)
    in_sidecar = sidecar.get("neighbours")
    if len(in_text) > 1:
        return None, "the text records its neighbouring relation more than once", None
    text_relation = in_text[0] if in_text else None
    if text_relation != in_sidecar:
        def say(x: Any) -> str:
            return "none" if x is None else repr(x)
        return None, (f"the text records the neighbouring relation {say(text_relation)} but "
                      f"the sidecar {say(in_sidecar)}"), None
    try:
        relation = Neighbours.of_record(text_relation)
    except InvalidParameter:
        return None, f"the certificate records an unknown neighbouring relation {in_sidecar!r}", None
    recorded = text_relation is not None
    others: list[tuple[str, Neighbours]] = []
    for where, row, claim in _claims(cert, sidecar, rounds):
        try:
            claimed = claim()
        except InvalidParameter as exc:
            return None, f"round {where} records an unknown neighbouring relation ({exc})", row
        if claimed is None or claimed is relation:
            continue
        if recorded:
            return None, (f"round {where} is of a built-in mechanism that holds for {claimed} "
                          f"neighbours, but the certificate records {relation}: one ledger "
                          "holds rounds of one relation (Theorem 7)"), row
        if (where, claimed) not in others:  # a step's row and its key may both say it
            others.append((where, claimed))
    version = sidecar.get("text_version", 1)
    if recorded and (not isinstance(version, int) or version < RELATION_TEXT_VERSION):
        return None, (f"the certificate records the neighbouring relation {relation} in text "
                      f"version {version!r}, which no odp wrote: odp records the relation only "
                      f"in text version {RELATION_TEXT_VERSION} and later (a downgraded "
                      "certificate?)"), None
    return RelationReport(relation, recorded, tuple(others)), None, None


def _claims(cert: CertificateText, sidecar: Mapping[str, Any], rounds: Sequence[Any]
            ) -> Iterator[tuple[str, int | None, Callable[[], Neighbours | None]]]:
    """Per round: where it is (for messages), its step number (``None`` for a lane round) and
    how to read the relation its mechanism holds for — for a step, once from its ``mech`` row
    and once from its params' built-in key (module docstring)."""
    for i, (step, rnd) in enumerate(zip(cert.steps, rounds), 1):
        params = rnd.get("params") if isinstance(rnd, Mapping) else None
        yield str(i), i, partial(round_neighbours, step.mech, params)
        yield str(i), i, partial(_recorded_relation, params)
    lane_rounds = sidecar.get("lane_rounds")
    for k, rnd in enumerate(lane_rounds if isinstance(lane_rounds, list) else [], 1):
        if isinstance(rnd, Mapping):
            # a built-in's (odp's Gaussian, DP-SGD in a Rényi lane) by its recorded key
            yield f"lane round {k}", None, partial(_recorded_relation, rnd.get("params"))
