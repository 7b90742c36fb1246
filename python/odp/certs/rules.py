"""Which Lean declarations each certificate row relies on, with the file and its SHA-256.

The SHA-256 values come from the generated checker module (``odp._lean_rules.LEAN_SOURCES``),
which ``scripts/gen_rules.py`` computes from the Lean files themselves; a test fails when the
generated module is stale, and another when a cited declaration is missing from its file.
"""

from __future__ import annotations

from typing import Iterable

from .. import _lean_rules as lean

LEDGER = "Odp/LedgerCore.lean"
LINK = "Odp/Core/Ledger.lean"
COMPOSITION = "Odp/Core/Composition.lean"
LEMMAS = "Odp/Core/Lemmas.lean"

#: Every step: Alg. 1 line 4 and lines 7–8 over ℕ, their link to Alg. 1, Theorem 7.
STEP_RULES = (
    ("Odp.LedgerCore.admits", LEDGER, "Alg. 1 line 4 over ℕ"),
    ("Odp.LedgerCore.update", LEDGER, "Alg. 1 lines 7–8 over ℕ"),
    ("Odp.LedgerCore.refundJustified", LEDGER,
     "a charge below the declared sup is backed by a blocks row (the realised class)"),
    ("Odp.LedgerCore.replay_sound", LEDGER, "a replayed ledger never overspends"),
    ("Odp.Core.enforce_valid", LINK,
     "the accountant's admission and update rules enforce Alg. 1's validity condition"),
    ("Odp.Core.certificate_sound", LINK,
     "a replayed certificate lists exactly the accountant's rows for that run and fits the "
     "budget; with honest requests the run is (ε_t, δ_t)-DP (Theorem 7)"),
    ("Odp.Core.odp_composition", COMPOSITION, "Theorem 7 (ODP composition is (ε_t, δ_t)-DP)"),
)
#: A ``blocks`` row: supEps is the maximum class cost, charged the realised class (Lemma 4).
BLOCKS_RULES = (
    ("Odp.LedgerCore.blocksOk", LEDGER, "Lemma 4 row check over ℕ"),
    ("Odp.LedgerCore.blocksOk_bound", LEDGER, "an accepted blocks row bounds every class cost by supEps"),
    ("Odp.Core.dp_of_odp_sup", LEMMAS, "Lemma 4: (𝒫, ℰ, δ)-ODP implies (sup ℰ, δ)-DP"),
)
#: A DP guarantee used with its trivial partition (Lemma 3).
DP_RULES = (("Odp.Core.odp_of_dp", LEMMAS, "Lemma 3: DP implies ODP for any partition"),)
#: A ``deltas`` row: δ_i covers the per-class subset-DP deltas (Lemma 6).
DELTAS_RULES = (
    ("Odp.LedgerCore.deltasOk", LEDGER, "Lemma 6 row check over ℕ"),
    ("Odp.LedgerCore.deltasOk_sound", LEDGER, "an accepted deltas row bounds Σ Δ_k by δ_i"),
    ("Odp.Core.odp_of_subsetDP", LEMMAS, "Lemma 6: subset DP per class implies ODP with δ = Σ Δ_k"),
)


#: A ``mech`` row: the round's classes, costs and δ are the named mechanism's for its parameters.
MECH_RULES = (
    ("Odp.LedgerCore.mechOk", LEDGER,
     "the round's classes, costs and δ are those of the named mechanism for its recorded "
     "parameters (or a declared round)"),
    ("Odp.LedgerCore.checkCert_mech", LEDGER, "a kernel-accepted certificate passes every mech row"),
)


LANES = "Odp/Core/Lanes.lean"
#: A ``charge`` row (a round of a notion lane) and the session it is part of.
LANE_RULES = (
    ("Odp.LedgerCore.lanesOk", LEDGER,
     "the lanes' shares add up to the budget and every lane holds its charges"),
    ("Odp.LedgerCore.costSum", LEDGER, "a lane coordinate's charges, summed"),
    ("Odp.Core.Lanes.session_dp", LANES,
     "the session — the concurrent composition of its lanes — is (ε_t, δ_t)-DP, from the "
     "lanes' filter theorems and Haney et al. 2023, Thm. 1.8, stated as named hypotheses"),
)
#: A zCDP-lane charge of odp's discrete Gaussian: the cost is the noise's ρ.
GAUSSIAN_LANE_RULES = (
    ("Odp.LedgerCore.gaussianRhoOk", LEDGER,
     "the charge is ρ = m²/(2σ²) of the discrete Gaussian it names (Canonne–Kamath–Steinke "
     "2020, Thm. 4)"),
)


def mech_rules(kind: str) -> list[tuple[str, str, str]]:
    """What a round's ``mech`` row cites: ``mechOk``, and the Lean theorem proving the named
    mechanism's guarantee when this build's sources have it (:mod:`odp.certs.mechanisms`)."""
    from .mechanisms import theorem_of

    out = list(MECH_RULES)
    theorem = theorem_of(kind)
    if theorem is not None:
        out.append((theorem, lean.LEAN_THEOREMS[theorem],
                    "proves the mechanism's (𝒫, ℰ, δ)-ODP guarantee with these costs"))
    return out


def cite(rules: Iterable[tuple[str, str, str]]) -> list[dict[str, str]]:
    return [{"name": name, "file": path, "sha256": lean.LEAN_SOURCES.get(path, ""), "role": role}
            for name, path, role in rules]


def all_cited() -> list[tuple[str, str]]:
    """(declaration, file) for every rule a certificate can cite."""
    return [(n, p) for group in (STEP_RULES, BLOCKS_RULES, DP_RULES, DELTAS_RULES, MECH_RULES,
                                 LANE_RULES, GAUSSIAN_LANE_RULES)
            for n, p, _ in group]
