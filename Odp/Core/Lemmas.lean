/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Lemmas 3, 4 and 6 of the paper (Hartmann et al. 2022), on finite output spaces

* Lemma 3 (`odp_of_dp`, `odpCost_of_dp`): DP gives ODP for any partition with `ℰ ≡ ε`.
* Lemma 4 (`dp_of_odp`, `dp_of_odp_sup`, `dp_of_odpCost`): ODP gives DP with `ε = sup_k ℰ(P_k)`.
  The bound form needs only an upper bound of the costs; `supCost E` is the maximum over the
  (finite) labels, starting from `0` — the paper's costs are nonnegative, and then `supCost E` is
  attained by a block (`supCost_attained`).
* Lemma 6 (`odp_of_subsetDP`): subset-DP guarantees on the blocks give ODP with `δ = ∑_k Δ(P_k)`.

The costs may be any elements of `R` in Lemmas 3, 4 and 6 (the paper asks `ℰ ≥ 0`, which these
proofs never use).
-/
module

public import Odp.Core.Defs

@[expose] public section

set_option autoImplicit false

namespace Odp.Core

noncomputable section

open ExpField

variable {R X O K : Type} [ExpField R] [Enum O]

theorem le_add_comm' {a b δ : R} (h : a ≤ b + δ) : a ≤ δ + b := by grind

theorem le_trans_add {a b c δ : R} (h1 : a ≤ δ + b) (h2 : b ≤ c) : a ≤ c + δ := by grind

/-- **Lemma 3.** An (ε,δ)-DP mechanism is (𝒫, ℰ ≡ ε, δ)-ODP for every partition `κ`. -/
theorem odp_of_dp [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (M : Mechanism X O R) (ε δ : R)
    (h : DP Nbr M ε δ) (κ : O → K) : ODP Nbr M κ (fun _ => ε) δ := by
  intro x x' hx S
  rw [fsum_blocks_const (M x') κ (exp ε) S]
  exact le_add_comm' (h x x' hx S)

/-- Lemma 3, output-wise form (the constant cost `ε`). -/
theorem odpCost_of_dp (Nbr : X → X → Prop) (M : Mechanism X O R) (ε δ : R)
    (h : DP Nbr M ε δ) : ODPcost Nbr M (fun _ => ε) δ :=
  (ODP_iff_ODPcost Nbr M (fun _ : O => ()) (fun _ => ε) δ).mp
    (odp_of_dp Nbr M ε δ h (fun _ => ()))

/-- **Lemma 4** (bound form). If every block cost is at most `ε`, an ODP mechanism is
(ε,δ)-DP. -/
theorem dp_of_odp [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (M : Mechanism X O R)
    (κ : O → K) (E : K → R) (δ ε : R) (hE : ∀ k, E k ≤ ε) (h : ODP Nbr M κ E δ) :
    DP Nbr M ε δ := by
  intro x x' hx S
  have h2 : fsum (fun k => exp (E k) * Pr (M x') (fun o => S o && decide (κ o = k)))
      ≤ fsum (fun k => exp ε * Pr (M x') (fun o => S o && decide (κ o = k))) :=
    fsum_le (fun k => mul_le_mul_right' _ (exp_le_exp _ _ (hE k)) (Pr_nonneg _ _))
  rw [fsum_blocks_const (M x') κ (exp ε) S] at h2
  exact le_trans_add (h x x' hx S) h2

/-- Lemma 4, output-wise form: costs bounded by `ε` give (ε,δ)-DP. -/
theorem dp_of_odpCost (Nbr : X → X → Prop) (M : Mechanism X O R) (cost : O → R) (δ ε : R)
    (hc : ∀ o, cost o ≤ ε) (h : ODPcost Nbr M cost δ) : DP Nbr M ε δ := by
  intro x x' hx S
  have h2 : fsum (fun o => if S o then exp (cost o) * (M x').mass o else 0)
      ≤ exp ε * Pr (M x') S := by
    unfold Pr
    rw [← fsum_mul_left]
    apply fsum_le
    intro o
    cases hS : S o
    · simp; grind
    · simp; exact mul_le_mul_right' _ (exp_le_exp _ _ (hc o)) ((M x').nonneg o)
  exact le_trans_add (h x x' hx S) h2

open Classical in
/-- The largest value of `f` on a list, or `0` if that is larger (or the list is empty). -/
def lmax {α : Type} : List α → (α → R) → R
  | [], _ => 0
  | a :: l, f => if f a ≤ lmax l f then lmax l f else f a

open Classical in
theorem lmax_cons {α : Type} (a : α) (l : List α) (f : α → R) :
    lmax (a :: l) f = (if f a ≤ lmax l f then lmax l f else f a) := rfl

theorem le_lmax {α : Type} (l : List α) (f : α → R) : ∀ a ∈ l, f a ≤ lmax l f := by
  induction l with
  | nil => intro a ha; cases ha
  | cons b l ih =>
    intro a ha
    rw [lmax_cons]
    by_cases hb : f b ≤ lmax l f
    · rw [if_pos hb]
      cases ha with
      | head => exact hb
      | tail _ h => exact ih a h
    · rw [if_neg hb]
      cases ha with
      | head => grind
      | tail _ h => have := ih a h; grind

theorem lmax_nonneg {α : Type} (l : List α) (f : α → R) : 0 ≤ lmax l f := by
  induction l with
  | nil => exact Std.le_refl 0
  | cons b l ih =>
    rw [lmax_cons]
    by_cases hb : f b ≤ lmax l f
    · rw [if_pos hb]; exact ih
    · rw [if_neg hb]; grind

theorem lmax_attained {α : Type} (l : List α) (f : α → R) (hf : ∀ a ∈ l, 0 ≤ f a)
    (hl : l ≠ []) : ∃ a ∈ l, lmax l f = f a := by
  induction l with
  | nil => exact absurd rfl hl
  | cons b l ih =>
    rw [lmax_cons]
    by_cases hb : f b ≤ lmax l f
    · rw [if_pos hb]
      cases l with
      | nil =>
        refine ⟨b, List.mem_cons_self, ?_⟩
        have h0 : lmax ([] : List α) f = 0 := rfl
        have := hf b List.mem_cons_self
        grind
      | cons c l' =>
        obtain ⟨a, ha, he⟩ := ih (fun a h => hf a (List.mem_cons_of_mem b h)) (by simp)
        exact ⟨a, List.mem_cons_of_mem b ha, he⟩
    · rw [if_neg hb]
      exact ⟨b, List.mem_cons_self, rfl⟩

/-- `sup_k ℰ(P_k)` over a finite label type (taken with `0`, the paper's costs being `≥ 0`). -/
def supCost [Enum K] (E : K → R) : R := lmax Enum.elems E

theorem le_supCost [Enum K] (E : K → R) (k : K) : E k ≤ supCost E :=
  le_lmax _ E k (Enum.complete k)

/-- With nonnegative costs, `supCost E` is attained by a block: it is the supremum of Lemma 4. -/
theorem supCost_attained [Enum K] (E : K → R) (hE : ∀ k, 0 ≤ E k) (k₀ : K) :
    ∃ k, supCost E = E k := by
  have hne : (Enum.elems : List K) ≠ [] := by
    intro h
    have := Enum.complete k₀
    rw [h] at this
    cases this
  obtain ⟨k, _, hk⟩ := lmax_attained Enum.elems E (fun k _ => hE k) hne
  exact ⟨k, hk⟩

/-- **Lemma 4** (the paper's form): an ODP mechanism is `(sup_k ℰ(P_k), δ)`-DP. -/
theorem dp_of_odp_sup [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (M : Mechanism X O R)
    (κ : O → K) (E : K → R) (δ : R) (h : ODP Nbr M κ E δ) : DP Nbr M (supCost E) δ :=
  dp_of_odp Nbr M κ E δ (supCost E) (le_supCost E) h

/-- **Lemma 6.** If `M` is `(P_k, ℰ(P_k), Δ(P_k))`-subset DP for every block, then `M` is
`(𝒫, ℰ, ∑_k Δ(P_k))`-ODP. -/
theorem odp_of_subsetDP [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (M : Mechanism X O R)
    (κ : O → K) (E Δ : K → R)
    (h : ∀ k, SubsetDP Nbr M (fun o => decide (κ o = k)) (E k) (Δ k)) :
    ODP Nbr M κ E (fsum Δ) := by
  intro x x' hx S
  rw [Pr_regroup (M x) κ S]
  have h1 : fsum (fun k => Pr (M x) (fun o => S o && decide (κ o = k)))
      ≤ fsum (fun k => exp (E k) * Pr (M x') (fun o => S o && decide (κ o = k)) + Δ k) := by
    apply fsum_le
    intro k
    apply h k x x' hx
    intro o ho
    simp only [Bool.and_eq_true] at ho
    exact ho.2
  rw [fsum_add] at h1
  exact le_add_comm' h1

end

end Odp.Core
