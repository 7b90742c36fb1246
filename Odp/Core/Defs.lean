/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Definitions 1, 2 and 5 of the paper (Hartmann et al. 2022), on finite output spaces

* `X`: databases; `Nbr : X → X → Prop`: the neighbouring relation (any relation; symmetry is
  never used).
* A mechanism `M : X → Dist O R` gives for each database a distribution on the finite output
  type `O`.
* A partition `𝒫 = {P_k}` of the outputs is a labelling `κ : O → K` into a finite label type `K`,
  with blocks `P_k = {o | κ o = k}`; `E k = ℰ(P_k)`.

Definition 2 has three equivalent forms here:
* `ODP` — the paper's, with a sum over the blocks;
* `ODPcost` — output-wise: `cost o = ℰ(P_k)` for the block `P_k ∋ o` (`ODP_iff_ODPcost`);
* `ODPsum` — the sum form `∑_o max(0, p o − e^{cost o} q o) ≤ δ` (`ODPcost_iff_ODPsum`): the worst
  event is `S* = {o | p o ≥ e^{cost o} q o}`, so one inequality replaces the one per event.
-/
module

public import Odp.Core.Prob

@[expose] public section

set_option autoImplicit false

namespace Odp.Core

noncomputable section

open ExpField

variable {R X O K : Type} [ExpField R] [Enum O]

/-- A mechanism: for each database, a distribution on the outputs. -/
abbrev Mechanism (X O R : Type) [ExpField R] [Enum O] := X → Dist O R

/-- **Definition 1** ((ε,δ)-differential privacy). -/
def DP (Nbr : X → X → Prop) (M : Mechanism X O R) (ε δ : R) : Prop :=
  ∀ x x', Nbr x x' → ∀ S : Event O, Pr (M x) S ≤ exp ε * Pr (M x') S + δ

/-- **Definition 2** ((𝒫,ℰ,δ)-output differential privacy):
`Pr(M x ∈ S) ≤ δ + ∑_k e^{ℰ(P_k)} Pr(M x' ∈ S ∩ P_k)`. -/
def ODP [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (M : Mechanism X O R) (κ : O → K)
    (E : K → R) (δ : R) : Prop :=
  ∀ x x', Nbr x x' → ∀ S : Event O,
    Pr (M x) S ≤ δ + fsum (fun k => exp (E k) * Pr (M x') (fun o => S o && decide (κ o = k)))

/-- Definition 2, output-wise form: `cost o` is `ℰ` of the block that contains `o`. -/
def ODPcost (Nbr : X → X → Prop) (M : Mechanism X O R) (cost : O → R) (δ : R) : Prop :=
  ∀ x x', Nbr x x' → ∀ S : Event O,
    Pr (M x) S ≤ δ + fsum (fun o => if S o then exp (cost o) * (M x').mass o else 0)

/-- `∑_o max(0, p o − e^{cost o} q o)`: the mass of `p` not covered by `e^{cost}·q`. -/
def excess (p q : Dist O R) (cost : O → R) : R :=
  fsum (fun o => posPart (p.mass o - exp (cost o) * q.mass o))

/-- Definition 2, sum form. -/
def ODPsum (Nbr : X → X → Prop) (M : Mechanism X O R) (cost : O → R) (δ : R) : Prop :=
  ∀ x x', Nbr x x' → excess (M x) (M x') cost ≤ δ

/-- **Definition 5** ((R,ε,δ)-subset differential privacy), for the output subset `Rg`. -/
def SubsetDP (Nbr : X → X → Prop) (M : Mechanism X O R) (Rg : Event O) (ε δ : R) : Prop :=
  ∀ x x', Nbr x x' → ∀ S : Event O, (∀ o, S o = true → Rg o = true) →
    Pr (M x) S ≤ exp ε * Pr (M x') S + δ

/-- The block sum `∑_k c_k Pr(q ∈ S ∩ P_k)` is the output-wise sum `∑_{o ∈ S} c_{κ o} q o`. -/
theorem fsum_blocks [Enum K] [DecidableEq K] (q : Dist O R) (κ : O → K) (c : K → R)
    (S : Event O) :
    fsum (fun k => c k * Pr q (fun o => S o && decide (κ o = k)))
      = fsum (fun o => if S o then c (κ o) * q.mass o else 0) := by
  rw [← fsum_regroup κ (fun o => if S o then c (κ o) * q.mass o else 0)]
  apply fsum_congr
  intro k
  unfold Pr
  rw [← fsum_mul_left]
  apply fsum_congr
  intro o
  by_cases hk : κ o = k
  · subst hk
    cases hS : S o <;> simp [hS]
    grind
  · cases hS : S o <;> simp [hS, hk] <;> grind

/-- With a constant cost the block sum is `c · Pr(q ∈ S)`. -/
theorem fsum_blocks_const [Enum K] [DecidableEq K] (q : Dist O R) (κ : O → K) (c : R)
    (S : Event O) :
    fsum (fun k => c * Pr q (fun o => S o && decide (κ o = k))) = c * Pr q S := by
  rw [fsum_blocks q κ (fun _ => c) S]
  unfold Pr
  rw [← fsum_mul_left]
  apply fsum_congr
  intro o
  cases hS : S o <;> simp
  grind

/-- The partition form and the output-wise form of Definition 2 are equivalent. -/
theorem ODP_iff_ODPcost [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (M : Mechanism X O R)
    (κ : O → K) (E : K → R) (δ : R) :
    ODP Nbr M κ E δ ↔ ODPcost Nbr M (fun o => E (κ o)) δ := by
  unfold ODP ODPcost
  constructor
  · intro h x x' hx S
    have h1 := h x x' hx S
    rw [fsum_blocks (M x') κ (fun k => exp (E k)) S] at h1
    exact h1
  · intro h x x' hx S
    rw [fsum_blocks (M x') κ (fun k => exp (E k)) S]
    exact h x x' hx S

theorem sub_le_of_le_add {a b δ : R} (h : a ≤ δ + b) : a - b ≤ δ := by grind

theorem add_le_add_of_le_right {a b δ : R} (h : b ≤ δ) : a + b ≤ δ + a := by grind

theorem le_trans' {a b c : R} (h1 : a ≤ b) (h2 : b ≤ c) : a ≤ c := by grind

open Classical in
/-- For one pair of distributions, the event form of Definition 2 is the sum form. -/
theorem events_iff_excess (p q : Dist O R) (cost : O → R) (δ : R) :
    (∀ S : Event O, Pr p S ≤ δ + fsum (fun o => if S o then exp (cost o) * q.mass o else 0))
      ↔ excess p q cost ≤ δ := by
  constructor
  · intro h
    -- the worst event S* = {o | p o ≥ e^{cost o} q o}
    have hS := h (fun o => decide (0 ≤ p.mass o - exp (cost o) * q.mass o))
    have hsplit : excess p q cost
        = Pr p (fun o => decide (0 ≤ p.mass o - exp (cost o) * q.mass o))
          - fsum (fun o => if decide (0 ≤ p.mass o - exp (cost o) * q.mass o) then
              exp (cost o) * q.mass o else 0) := by
      unfold excess Pr
      rw [← fsum_sub]
      apply fsum_congr
      intro o
      by_cases h0 : 0 ≤ p.mass o - exp (cost o) * q.mass o
      · rw [posPart_of_nonneg h0]
        simp [h0]
      · rw [posPart_of_not_nonneg h0]
        simp [h0]
        grind
    rw [hsplit]
    exact sub_le_of_le_add hS
  · intro h S
    have hsplit : Pr p S
        = fsum (fun o => if S o then exp (cost o) * q.mass o else 0)
          + fsum (fun o => if S o then p.mass o - exp (cost o) * q.mass o else 0) := by
      unfold Pr
      rw [← fsum_add]
      apply fsum_congr
      intro o
      cases hS : S o <;> simp
      · grind
      · grind
    have hle : fsum (fun o => if S o then p.mass o - exp (cost o) * q.mass o else 0)
        ≤ excess p q cost := by
      unfold excess
      apply fsum_le
      intro o
      cases hS : S o <;> simp
      · exact posPart_nonneg _
      · exact le_posPart _
    rw [hsplit]
    exact add_le_add_of_le_right (le_trans' hle h)

/-- The output-wise form and the sum form of Definition 2 are equivalent. -/
theorem ODPcost_iff_ODPsum (Nbr : X → X → Prop) (M : Mechanism X O R) (cost : O → R) (δ : R) :
    ODPcost Nbr M cost δ ↔ ODPsum Nbr M cost δ := by
  unfold ODPcost ODPsum
  constructor
  · intro h x x' hx
    exact (events_iff_excess (M x) (M x') cost δ).mp (h x x' hx)
  · intro h x x' hx
    exact (events_iff_excess (M x) (M x') cost δ).mpr (h x x' hx)

end

end Odp.Core
