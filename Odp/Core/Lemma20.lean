/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Lemma 20 of the paper (Hartmann et al. 2022, App. B): one ODP round followed by anything

The paper proves Lemma 20 with the Hahn decomposition of the signed measure
`μ(S) = Pr(M₁(x⁰) ∈ S) − ∑_k e^{ℰ(P_k)} Pr(M₁(x¹) ∈ S ∩ P_k)`. On a finite output space its
positive part is the function `r o = max(0, p o − e^{cost o} q o)`, whose total is the `excess` of
Definition 2's sum form, and the rest `p − r` lies between `0` and `e^{cost} q`. That split is all
the proof needs (`step_pointwise`, `step_bound`); `lemma20` is the paper's statement.

The two-round experiment draws `v ∼ M₁(x)` and then `w ∼ M₂(v)`; by the chain rule the
probability that the pair `(v, w)` falls in `V` is `∑_v Pr(M₁(x) = v) · Pr(M₂(v) ∈ V_v)`, where
`V_v = {w | (v, w) ∈ V}` (`Pr2`).
-/
module

public import Odp.Core.Lemmas

@[expose] public section

set_option autoImplicit false

namespace Odp.Core

noncomputable section

open ExpField

variable {R X O O₂ K : Type} [ExpField R] [Enum O] [Enum O₂]

/-- One output of the first round: `p·a ≤ (E·F)(q·b) + (p − r)·d + r` with
`r = max(0, p − E·q)`, whenever `a ≤ 1` and `a ≤ F·b + d`. -/
theorem step_pointwise (pm qm a b E F d : R) (hp : 0 ≤ pm) (hq : 0 ≤ qm) (hE : 0 < E)
    (hF : 0 ≤ F) (hb : 0 ≤ b) (ha1 : a ≤ 1) (hab : a ≤ F * b + d) :
    pm * a ≤ (E * F) * (qm * b) + (pm - posPart (pm - E * qm)) * d + posPart (pm - E * qm) := by
  have hEq : 0 ≤ E * qm := mul_nonneg' (by grind) hq
  have hr0 := posPart_nonneg (pm - E * qm)
  have hr1 := le_posPart (pm - E * qm)
  have hr2 : posPart (pm - E * qm) ≤ pm := by
    by_cases h : 0 ≤ pm - E * qm
    · rw [posPart_of_nonneg h]; grind
    · rw [posPart_of_not_nonneg h]; exact hp
  generalize posPart (pm - E * qm) = r at hr0 hr1 hr2
  have hμ0 : 0 ≤ pm - r := by grind
  have hμ1 : pm - r ≤ E * qm := by grind
  have i1 : r * a ≤ r := mul_le_self ha1 hr0
  have i2 : (pm - r) * a ≤ (pm - r) * (F * b + d) := mul_le_mul_left' (pm - r) hab hμ0
  have i3 : (pm - r) * (F * b) ≤ (E * qm) * (F * b) := mul_le_mul_right' (F * b) hμ1 (mul_nonneg' hF hb)
  grind

/-- The core inequality of Lemma 20 and Theorem 7. If the first round's output distributions
`p, q` have `excess p q c ≤ δ₁ ≤ δ`, and after each output `o` the rest of the experiment gives
`a o ≤ e^{ε − c o} b o + (δ − δ₁)` with `a o ≤ 1`, then
`∑_o p o · a o ≤ e^ε ∑_o q o · b o + δ`. -/
theorem step_bound (p q : Dist O R) (c : O → R) (ε δ δ₁ : R) (a b : O → R)
    (hδ₁ : δ₁ ≤ δ) (hex : excess p q c ≤ δ₁) (ha1 : ∀ o, a o ≤ 1) (hb0 : ∀ o, 0 ≤ b o)
    (hab : ∀ o, a o ≤ exp (ε - c o) * b o + (δ - δ₁)) :
    fsum (fun o => p.mass o * a o) ≤ exp ε * fsum (fun o => q.mass o * b o) + δ := by
  have hpt : ∀ o, p.mass o * a o
      ≤ exp ε * (q.mass o * b o)
        + (p.mass o - posPart (p.mass o - exp (c o) * q.mass o)) * (δ - δ₁)
        + posPart (p.mass o - exp (c o) * q.mass o) := by
    intro o
    have h := step_pointwise (p.mass o) (q.mass o) (a o) (b o) (exp (c o)) (exp (ε - c o))
      (δ - δ₁) (p.nonneg o) (q.nonneg o) (exp_pos _) (exp_nonneg _) (hb0 o) (ha1 o) (hab o)
    rw [← exp_split ε (c o)] at h
    exact h
  have h1 := fsum_le hpt
  rw [fsum_add, fsum_add, fsum_mul_left] at h1
  -- `∑ (p − r) ≤ ∑ p = 1`
  have hμ : fsum (fun o => p.mass o - posPart (p.mass o - exp (c o) * q.mass o)) ≤ 1 := by
    rw [← p.total]
    apply fsum_le
    intro o
    have := posPart_nonneg (p.mass o - exp (c o) * q.mass o)
    grind
  have hd : fsum (fun o => (p.mass o - posPart (p.mass o - exp (c o) * q.mass o)) * (δ - δ₁))
      ≤ δ - δ₁ := by
    have e : fsum (fun o => (p.mass o - posPart (p.mass o - exp (c o) * q.mass o)) * (δ - δ₁))
        = (δ - δ₁) * fsum (fun o => p.mass o - posPart (p.mass o - exp (c o) * q.mass o)) := by
      rw [← fsum_mul_left]
      apply fsum_congr
      intro o
      grind
    rw [e]
    exact mul_le_self hμ (by grind)
  have hr : fsum (fun o => posPart (p.mass o - exp (c o) * q.mass o)) ≤ δ₁ := hex
  generalize fsum (fun o => p.mass o * a o) = A at h1 ⊢
  generalize fsum (fun o => q.mass o * b o) = B at h1 ⊢
  generalize fsum (fun o => (p.mass o - posPart (p.mass o - exp (c o) * q.mass o)) * (δ - δ₁))
    = C at h1 hd
  generalize fsum (fun o => posPart (p.mass o - exp (c o) * q.mass o)) = D at h1 hr
  grind

/-- `Pr((M₁(x), M₂(M₁(x))) ∈ V)` by the chain rule: first `v ∼ p`, then `w ∼ k v`. -/
def Pr2 (p : Dist O R) (k : O → Dist O₂ R) (V : O → Event O₂) : R :=
  fsum (fun v => p.mass v * Pr (k v) (V v))

/-- **Lemma 20.** Let `x⁰ ~ x¹`, let `M₁` be `(𝒫, ℰ, δ)`-ODP with `ℰ(P_k) ≤ ε_t` and `δ ≤ δ_t`,
and let `M₂⁰(v), M₂¹(v)` satisfy `Pr(M₂⁰(v) ∈ 𝒱) ≤ e^{ε_t − ℰ(P_k)} Pr(M₂¹(v) ∈ 𝒱) + δ_t − δ`
for `v ∈ P_k`. Then `Pr((M₁(x⁰), M₂⁰(M₁(x⁰))) ∈ 𝒱) ≤ e^{ε_t} Pr((M₁(x¹), M₂¹(M₁(x¹))) ∈ 𝒱) + δ_t`
for every `𝒱 ⊆ 𝒪₁ × 𝒪₂`. (`ℰ(P_k) ≤ ε_t` is not needed by the proof.) -/
theorem lemma20 [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (x₀ x₁ : X) (hN : Nbr x₀ x₁)
    (M₁ : Mechanism X O R) (κ : O → K) (E : K → R) (δ εt δt : R)
    (hodp : ODP Nbr M₁ κ E δ) (hδ : δ ≤ δt) (M₂₀ M₂₁ : O → Dist O₂ R)
    (h2 : ∀ (v : O) (W : Event O₂),
      Pr (M₂₀ v) W ≤ exp (εt - E (κ v)) * Pr (M₂₁ v) W + (δt - δ))
    (V : O → Event O₂) :
    Pr2 (M₁ x₀) M₂₀ V ≤ exp εt * Pr2 (M₁ x₁) M₂₁ V + δt := by
  have hcost := (ODP_iff_ODPcost Nbr M₁ κ E δ).mp hodp
  have hsum := (ODPcost_iff_ODPsum Nbr M₁ _ δ).mp hcost x₀ x₁ hN
  exact step_bound (M₁ x₀) (M₁ x₁) (fun o => E (κ o)) εt δt δ
    (fun v => Pr (M₂₀ v) (V v)) (fun v => Pr (M₂₁ v) (V v)) hδ hsum
    (fun v => Pr_le_one _ _) (fun v => Pr_nonneg _ _) (fun v => h2 v (V v))

end

end Odp.Core
