/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Lemma 11 with a declared `δ` above `Σ_i δ^{k_i}` (the `lemma11` rows of certificates)

A certificate's `mech lemma11 ; k_1 ε^{k_1} δ^{k_1} …` row (`Odp.LedgerCore.lemma11Ok`) accepts a
round whose classes cost `ε^{k_i}` and whose declared `δ` is **at least** `Σ_i δ^{k_i}`: odp's
iterative mechanisms with privacy buckets or the optimal composition as COMP declare the sum,
DP-SGD declares its target `δ`, which is above the sum (`odp.mechanisms.dpsgd`).
`Odp.Mech.lemma11` proves the guarantee with `δ = Σ_i δ^{k_i}`; this file adds the step to a
larger `δ`:

* `odp_of_le_delta` — Definition 2 is monotone in `δ`: a `(𝒫, ℰ, δ)`-ODP mechanism is
  `(𝒫, ℰ, δ')`-ODP for every `δ' ≥ δ`.
* `lemma11_le` — Lemma 11 for any COMP with a declared `δ ≥ Σ_i δ^{k_i}`, from the same
  hypothesis `PrefixDP` (each prefix `M^{k_i}` is `(ε^{k_i}, δ^{k_i})`-DP). For odp's
  privacy-buckets, optimal-composition and RDP rules the `δ^{k_i}` are numbers computed by
  tested Python code (`odp.composition.Lemma11.per_stop`): `PrefixDP` with them is the stated
  hypothesis, not proved here.
-/
module

public import Odp.Mech.Iterative.Privacy

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Lemma11

open Odp.Core Odp.Core.ExpField Odp.Mech.Iter

noncomputable section

variable {R X O K W : Type} [ExpField R] [Enum O]

/-- Definition 2 is monotone in `δ`. -/
theorem odp_of_le_delta [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (M : Mechanism X O R)
    (κ : O → K) (E : K → R) {δ δ' : R} (h : ODP Nbr M κ E δ) (hle : δ ≤ δ') :
    ODP Nbr M κ E δ' := by
  intro x x' hN S
  have h1 := h x x' hN S
  generalize Pr (M x) S = a at h1 ⊢
  generalize fsum (fun k => exp (E k) * Pr (M x') (fun o => S o && decide (κ o = k))) = b
    at h1 ⊢
  grind

/-- **Lemma 11 with a declared `δ ≥ Σ_i δ^{k_i}`**: if the prefix mechanism `M^{k_i}` is
`(ε^{k_i}, δ^{k_i})`-DP for every stop `i` (`PrefixDP`), Alg. 3 is `(𝒫, ℰ, δ)`-ODP with
`ℰ(P_i) = ε^{k_i}` for every `δ ≥ Σ_i δ^{k_i}`. -/
theorem lemma11_le [Enum W] (Nbr : X → X → Prop) (M : Step X W R) (S : Stops)
    (rule : Fin S.ks.length → List W → Bool) (epsK delK : Fin S.ks.length → R) {δ : R}
    (hcomp : PrefixDP Nbr M S.ks epsK delK) (hδ : fsum delK ≤ δ) :
    ODP Nbr (iterMech M S rule) Sigma.fst epsK δ :=
  odp_of_le_delta Nbr _ _ _ (Odp.Mech.lemma11 Nbr M S rule epsK delK hcomp) hδ

end

end Odp.Certs.Lemma11
