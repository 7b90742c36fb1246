/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The IQR-then-median pipeline (Hartmann et al. 2022, Sec. 4.2, "Application") through Theorem 7

The paper: "one could first invoke `M_IQR` … and then another DP mechanism `M_median` … The
total privacy budget `(ε_t, δ_t)` would be divided into a budget `(3ε₁, δ₁)` for `M_IQR` and a
budget `(ε₂, δ₂)` for `M_median` … with ODP composition and when using our second ODP analysis
(Lemma 10), `M_IQR` only uses up `(2ε₁, δ₁)` in the case of a `⊥`-output, and thus the budget
remaining for `M_median` increases to `(ε₁ + ε₂, δ₂)` in that case."

odp's `iqr_then_median` (`python/odp/mechanisms/ptr/pipeline.py`) checks the plan
`(3ε₁ + ε₂, δ₁)` against the budget, runs `M_IQR` with `(ε₁, δ₁)`, then the ε-DP median with
`ε = ε₂` after a value and `ε = ε₁ + ε₂` after `⊥` (with `δ₂ = 0`: the median is pure DP).

What is proved here: the two accountant rounds form an adaptive adversary tree of the Core's
Alg. 1 (`iqrMedianAdv x x'`: round 1 is `M_IQR` with its Lemma 10 costs, round 2 the median
whose ε depends on round 1's block), the tree is valid for the budget `(3ε₁ + ε₂, δ₁)`
(`iqrMedian_valid`: every round passes Alg. 1's line 4, the ⊥ branch's median included), and so
Theorem 7 (`Odp.Core.odp_composition`) gives, for every set `𝒱` of views `(o_IQR, o_median)`,
`Pr(view ∈ 𝒱 | x) ≤ e^{3ε₁ + ε₂} Pr(view ∈ 𝒱 | x') + δ₁` (`iqr_median_dp`).
`iqr_median_dp_logBin` instantiates it with odp's `M_IQR` (`Odp/Mech/PTR/IQR.lean`), from the noise
hypotheses and stated data facts there. The median's ε-DP is the interface `MedianDP`
(`Odp/Mech/Common/Noise.lean`); for odp's exponential median it is proved in
`Odp/Mech/PTR/Median.lean` (`expMedian_dp`, from the stated utility sensitivity), which also
states the pipeline with both of odp's mechanisms (`iqr_median_dp_expMedian`).

Scope: the theorem is about the two rounds on their own, for the plan `(3ε₁ + ε₂, δ₁)` that
`iqr_then_median` checks; inside a longer accountant session the same tree is a subtree of a
larger valid adversary, and Theorem 7 applies to that adversary as a whole.

The single output type of the Core's adversary trees is `Option V ⊕ Y` (IQR outputs on the left,
median outputs on the right; its `Enum` instance and `fsum_sum` are in `Odp/Mech/Common/Enum.lean`); a
round's mechanism is embedded on its side (`embL`, `embR`), which keeps its ODP guarantee
(`odpCost_embL`, `odpCost_embR`).
-/
module

public import Odp.Mech.PTR.IQR
public import Odp.Core.Composition

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core

noncomputable section

open ExpField

variable {R X A B V Y : Type} [ExpField R]

variable [Enum A] [Enum B]

/-! ### A round's mechanism on one side of `A ⊕ B` -/

/-- A distribution on `A`, seen on `A ⊕ B`. -/
def Dist.inlD (d : Dist A R) : Dist (A ⊕ B) R where
  mass o := match o with
    | .inl a => d.mass a
    | .inr _ => 0
  nonneg o := by cases o with | inl a => exact d.nonneg a | inr _ => exact Std.le_refl 0
  total := by
    rw [fsum_sum]
    show fsum d.mass + fsum (fun _ : B => (0 : R)) = 1
    rw [fsum_zero, d.total]
    grind

/-- A distribution on `B`, seen on `A ⊕ B`. -/
def Dist.inrD (d : Dist B R) : Dist (A ⊕ B) R where
  mass o := match o with
    | .inl _ => 0
    | .inr b => d.mass b
  nonneg o := by cases o with | inl _ => exact Std.le_refl 0 | inr b => exact d.nonneg b
  total := by
    rw [fsum_sum]
    show fsum (fun _ : A => (0 : R)) + fsum d.mass = 1
    rw [fsum_zero, d.total]
    grind

/-- The mechanism `M` with its outputs on the left of `A ⊕ B`. -/
def embL (M : Mechanism X A R) : Mechanism X (A ⊕ B) R := fun x => Dist.inlD (M x)

/-- The mechanism `M` with its outputs on the right of `A ⊕ B`. -/
def embR (M : Mechanism X B R) : Mechanism X (A ⊕ B) R := fun x => Dist.inrD (M x)

theorem posPart_zero_sub (c : R) : posPart ((0 : R) - exp c * 0) = 0 := by
  have e : (0 : R) - exp c * 0 = 0 := by grind
  rw [e, posPart_of_nonneg (Std.le_refl 0)]

/-- Embedding keeps an output-wise ODP guarantee (the other side has probability 0). -/
theorem odpCost_embL (Nbr : X → X → Prop) (M : Mechanism X A R) (c : A → R) (δ : R)
    (cost : A ⊕ B → R) (hc : ∀ a, cost (Sum.inl a) = c a) (h : ODPcost Nbr M c δ) :
    ODPcost Nbr (embL (B := B) M) cost δ := by
  rw [ODPcost_iff_ODPsum] at h ⊢
  intro x x' hx
  have h1 := h x x' hx
  unfold excess at h1 ⊢
  rw [fsum_sum]
  show fsum (fun a => posPart ((M x).mass a - exp (cost (Sum.inl a)) * (M x').mass a))
    + fsum (fun b => posPart ((0 : R) - exp (cost (Sum.inr b)) * 0)) ≤ δ
  have e1 : fsum (fun b => posPart ((0 : R) - exp (cost (Sum.inr b)) * 0)) = 0 := by
    rw [fsum_congr (g := fun _ : B => (0 : R)) (fun b => posPart_zero_sub _), fsum_zero]
  have e2 : fsum (fun a => posPart ((M x).mass a - exp (cost (Sum.inl a)) * (M x').mass a))
      = fsum (fun a => posPart ((M x).mass a - exp (c a) * (M x').mass a)) :=
    fsum_congr (fun a => by rw [hc a])
  rw [e1, e2]
  grind

theorem odpCost_embR (Nbr : X → X → Prop) (M : Mechanism X B R) (c : B → R) (δ : R)
    (cost : A ⊕ B → R) (hc : ∀ b, cost (Sum.inr b) = c b) (h : ODPcost Nbr M c δ) :
    ODPcost Nbr (embR (A := A) M) cost δ := by
  rw [ODPcost_iff_ODPsum] at h ⊢
  intro x x' hx
  have h1 := h x x' hx
  unfold excess at h1 ⊢
  rw [fsum_sum]
  show fsum (fun a => posPart ((0 : R) - exp (cost (Sum.inl a)) * 0))
    + fsum (fun b => posPart ((M x).mass b - exp (cost (Sum.inr b)) * (M x').mass b)) ≤ δ
  have e1 : fsum (fun a => posPart ((0 : R) - exp (cost (Sum.inl a)) * 0)) = 0 := by
    rw [fsum_congr (g := fun _ : A => (0 : R)) (fun a => posPart_zero_sub _), fsum_zero]
  have e2 : fsum (fun b => posPart ((M x).mass b - exp (cost (Sum.inr b)) * (M x').mass b))
      = fsum (fun b => posPart ((M x).mass b - exp (c b) * (M x').mass b)) :=
    fsum_congr (fun b => by rw [hc b])
  rw [e1, e2]
  grind

/-! ### The two accountant rounds as an adversary of Alg. 1 -/

variable [Enum V] [Enum Y]

/-- Round 2: the median with budget `e`, then stop. -/
def medianRound (x x' : X) (med : R → Mechanism X Y R) (e : R) : Adv X (Option V ⊕ Y) R :=
  .node ⟨x, x', embR (med e), fun _ => e, 0⟩ (fun _ => .leaf)

/-- `iqr_then_median` on the pair `x, x'` (Alg. 1 with the secret bit choosing the database):
`M_IQR` with its Lemma 10 costs and `δ₁`; then the median with `ε₂` after a value and with
`ε₁ + ε₂` after `⊥`. -/
def iqrMedianAdv (x x' : X) (Miqr : Mechanism X (Option V) R) (med : R → Mechanism X Y R)
    (ε₁ ε₂ δ₁ : R) : Adv X (Option V ⊕ Y) R :=
  .node ⟨x, x', embL Miqr, Sum.elim (fun o => iqrCosts ε₁ (vob o)) (fun _ => 0), δ₁⟩
    (fun o => match o with
      | .inl (some _) => medianRound x x' med ε₂
      | .inl none => medianRound x x' med (ε₁ + ε₂)
      | .inr _ => .leaf)

theorem medianRound_valid (Nbr : X → X → Prop) (x x' : X) (hx : Nbr x x')
    (med : R → Mechanism X Y R) (hmed : MedianDP Nbr med) (e ε δ : R) (he : 0 ≤ e)
    (hε : e ≤ ε) (hδ : 0 ≤ δ) : (medianRound (V := V) x x' med e).Valid Nbr ε δ := by
  refine ⟨hx, ?_, fun _ => hε, hδ, fun _ => trivial⟩
  exact odpCost_embR Nbr (med e) (fun _ => e) 0 (fun _ => e) (fun _ => rfl)
    (odpCost_of_dp Nbr (med e) e 0 (hmed e he))

/-- The pipeline passes Alg. 1's checks for the budget `(3ε₁ + ε₂, δ₁)` in every round. -/
theorem iqrMedian_valid (Nbr : X → X → Prop) (x x' : X) (hx : Nbr x x')
    (Miqr : Mechanism X (Option V) R) (med : R → Mechanism X Y R) (ε₁ ε₂ δ₁ : R)
    (hε₁ : 0 ≤ ε₁) (hε₂ : 0 ≤ ε₂) (hiqr : ODP Nbr Miqr vob (iqrCosts ε₁) δ₁)
    (hmed : MedianDP Nbr med) :
    (iqrMedianAdv x x' Miqr med ε₁ ε₂ δ₁).Valid Nbr (3 * ε₁ + ε₂) δ₁ := by
  refine ⟨hx, ?_, ?_, Std.le_refl δ₁, ?_⟩
  · exact odpCost_embL Nbr Miqr (fun o => iqrCosts ε₁ (vob o)) δ₁ _ (fun _ => rfl)
      ((ODP_iff_ODPcost Nbr Miqr vob (iqrCosts ε₁) δ₁).mp hiqr)
  · intro o
    cases o with
    | inl o =>
      cases o with
      | none => show 2 * ε₁ ≤ 3 * ε₁ + ε₂; grind
      | some _ => show 3 * ε₁ ≤ 3 * ε₁ + ε₂; grind
    | inr _ => show (0 : R) ≤ 3 * ε₁ + ε₂; grind
  · intro o
    cases o with
    | inl o =>
      cases o with
      | none =>
        exact medianRound_valid Nbr x x' hx med hmed (ε₁ + ε₂) _ _ (by grind)
          (show ε₁ + ε₂ ≤ 3 * ε₁ + ε₂ - 2 * ε₁ by grind) (by grind)
      | some _ =>
        exact medianRound_valid Nbr x x' hx med hmed ε₂ _ _ hε₂
          (show ε₂ ≤ 3 * ε₁ + ε₂ - 3 * ε₁ by grind) (by grind)
    | inr _ => trivial

/-- **The IQR-then-median pipeline** (Sec. 4.2, "Application"), by Theorem 7: for neighbours
`x, x'` and every set `𝒱` of views, `Pr(view ∈ 𝒱 | x) ≤ e^{3ε₁ + ε₂} Pr(view ∈ 𝒱 | x') + δ₁`,
although after a `⊥` of `M_IQR` the median runs with `ε₁ + ε₂`. -/
theorem iqr_median_dp (Nbr : X → X → Prop) (x x' : X) (hx : Nbr x x')
    (Miqr : Mechanism X (Option V) R) (med : R → Mechanism X Y R) (ε₁ ε₂ δ₁ : R)
    (hε₁ : 0 ≤ ε₁) (hε₂ : 0 ≤ ε₂) (hδ₁ : 0 ≤ δ₁) (hiqr : ODP Nbr Miqr vob (iqrCosts ε₁) δ₁)
    (hmed : MedianDP Nbr med) (𝒱 : List (Option V ⊕ Y) → Bool) :
    (iqrMedianAdv x x' Miqr med ε₁ ε₂ δ₁).prob false 𝒱
      ≤ exp (3 * ε₁ + ε₂) * (iqrMedianAdv x x' Miqr med ε₁ ε₂ δ₁).prob true 𝒱 + δ₁ :=
  odp_composition Nbr _ (3 * ε₁ + ε₂) δ₁ (by grind) hδ₁
    (iqrMedian_valid Nbr x x' hx Miqr med ε₁ ε₂ δ₁ hε₁ hε₂ hiqr hmed) 𝒱

/-- The pipeline with odp's `M_IQR(ε₁, δ₁)` (`iqrLogBin`, both discretisations at `δ₁/2`), from
the noise hypotheses and the stated data facts of `Odp/Mech/Common/Noise.lean`. -/
theorem iqr_median_dp_logBin [DecidableEq V] (Nbr : X → X → Prop) (x x' : X) (hx : Nbr x x')
    {ε₁ : R} (ε₂ δ₁ : R) (hε₁ : 0 ≤ ε₁) (hε₂ : 0 ≤ ε₂) (hδ₁ : 0 ≤ δ₁)
    (Z : TailNoise R ε₁) (W : IntLaw R) (K : Int) (L : Nat) (out₁ out₂ : Option Int → V)
    (A₁ A₂ : X → Int) (sub₁ sub₂ : X → Option Int)
    (htail : Z.G K ≤ δ₁ / 2) (hW : W.ShiftWithin (L - 1) ε₁)
    (hd₁ : IQRDataFacts Nbr A₁ sub₁ L) (hd₂ : IQRDataFacts Nbr A₂ sub₂ L)
    (med : R → Mechanism X Y R) (hmed : MedianDP Nbr med) (𝒱 : List (Option V ⊕ Y) → Bool) :
    (iqrMedianAdv x x' (iqrLogBin Z W K out₁ out₂ A₁ A₂ sub₁ sub₂) med ε₁ ε₂ δ₁).prob false 𝒱
      ≤ exp (3 * ε₁ + ε₂)
        * (iqrMedianAdv x x' (iqrLogBin Z W K out₁ out₂ A₁ A₂ sub₁ sub₂) med ε₁ ε₂ δ₁).prob
            true 𝒱 + δ₁ :=
  iqr_median_dp Nbr x x' hx _ med ε₁ ε₂ δ₁ hε₁ hε₂ hδ₁
    (iqr_logBin_odp Nbr hε₁ hδ₁ Z W K L out₁ out₂ A₁ A₂ sub₁ sub₂ htail hW hd₁ hd₂) hmed 𝒱

end

end Odp.Mech
