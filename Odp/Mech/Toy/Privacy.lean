/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# M_toy (Hartmann et al. 2022, Sec. 1 and Sec. 3) is (𝒫, ℰ, 0)-ODP

**M_toy** (`toy_odp`; odp's `ToyMechanism`). A fair coin: heads → the clamped grid Laplace
release (`laplaceMech`, `Odp/Mech/Laplace/Privacy.lean`), tails → ⊥. It is (𝒫, ℰ, 0)-ODP with
𝒫 = {values, {⊥}}, ℰ(values) = ε, ℰ({⊥}) = 0 (`toyCosts ε`), with no noise hypothesis (the
Laplace law is written out). The general form (`coinOrBottom_odp`): the coin in front of any
(ε, δ)-DP mechanism gives (𝒫, ℰ, δ/2)-ODP.

Narrower than the paper: the paper's M_toy adds continuous Laplace noise to a real value; here
(as in odp) the noise is the discrete Laplace on the grid and the release is clamped to a
window — the mechanism odp runs.
-/
module

public import Odp.Mech.Laplace.Privacy

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

variable {R : Type} [ExpField R] {X O : Type} [Enum O] [DecidableEq O]

/-! ### M_toy -/

/-- The block of an output: `⊥` (`none`) or a value. -/
def toyBlock {α : Type} : Option α → ToyBlock
  | none => .bottom
  | some _ => .value

/-- **M_toy's costs** `ℰ(values) = ε`, `ℰ({⊥}) = 0` (paper, Sec. 3; odp:
`ToyMechanism.guarantee`). -/
def toyCosts (ε : R) : ToyBlock → R
  | .value => ε
  | .bottom => 0

/-- `Pr[⊥] = 1/2`, `Pr[v] = 1/2 · p(v)`. -/
def coinMass (p : O → R) : Option O → R
  | none => (2 : R)⁻¹
  | some v => (2 : R)⁻¹ * p v

theorem half_pos : (0 : R) < (2 : R)⁻¹ := inv_pos' (by grind)

/-- A fair coin: tails → `⊥`, heads → a release of `M`. -/
def coinOrBottom (M : Mechanism X O R) : Mechanism X (Option O) R := fun x =>
  { mass := coinMass (M x).mass
    nonneg := fun o => by
      cases o with
      | none => exact Std.le_of_lt half_pos
      | some v => exact mul_nonneg' (Std.le_of_lt half_pos) ((M x).nonneg v)
    total := by
      rw [fsum_option]
      simp only [coinMass]
      rw [fsum_mul_left, (M x).total]
      grind }

omit [DecidableEq O] in
theorem Pr_coinOrBottom (M : Mechanism X O R) (x : X) (S : Event (Option O)) :
    Pr (coinOrBottom M x) S
      = (if S none then (2 : R)⁻¹ else 0) + (2 : R)⁻¹ * Pr (M x) (fun v => S (some v)) := by
  unfold Pr
  rw [fsum_option, ← fsum_mul_left]
  congr 1
  apply fsum_congr
  intro v
  by_cases hS : S (some v) = true
  · rw [if_pos hS, if_pos hS]; rfl
  · rw [if_neg hS, if_neg hS]; grind

omit [DecidableEq O] in
/-- **The coin in front of an (ε, δ)-DP mechanism** is (𝒫, ℰ, δ/2)-ODP with
𝒫 = {values, {⊥}}, ℰ(values) = ε, ℰ({⊥}) = 0. -/
theorem coinOrBottom_odp (Nbr : X → X → Prop) (M : Mechanism X O R) (ε δ : R)
    (h : DP Nbr M ε δ) :
    ODP Nbr (coinOrBottom M) toyBlock (toyCosts ε) ((2 : R)⁻¹ * δ) := by
  rw [ODP_iff_ODPcost]
  intro x x' hx S
  rw [Pr_coinOrBottom]
  have hR : fsum (fun o => if S o then exp (toyCosts ε (toyBlock o)) * (coinOrBottom M x').mass o
        else 0)
      = (if S none then (2 : R)⁻¹ else 0)
        + (2 : R)⁻¹ * (exp ε * Pr (M x') (fun v => S (some v))) := by
    rw [fsum_option]
    congr 1
    · show (if S none then exp 0 * (2 : R)⁻¹ else 0) = _
      rw [exp_zero]
      by_cases hS : S none = true
      · rw [if_pos hS, if_pos hS]; grind
      · rw [if_neg hS, if_neg hS]
    · unfold Pr
      rw [← fsum_mul_left, ← fsum_mul_left]
      apply fsum_congr
      intro v
      show (if S (some v) then exp ε * ((2 : R)⁻¹ * (M x').mass v) else 0) = _
      by_cases hS : S (some v) = true
      · rw [if_pos hS, if_pos hS]; grind
      · rw [if_neg hS, if_neg hS]; grind
  rw [hR]
  have h1 := h x x' hx (fun v => S (some v))
  have h2 := mul_le_mul_left' (2 : R)⁻¹ h1 (Std.le_of_lt half_pos)
  generalize Pr (M x) (fun v => S (some v)) = a at h2
  generalize Pr (M x') (fun v => S (some v)) = b at h2
  grind

/-- **M_toy** (paper, Sec. 1; `odp.mechanisms.noise.ToyMechanism`): a fair coin; heads → the
clamped grid Laplace release `clamp(n(x) + Z, lo, hi)`, tails → ⊥. -/
def toyMech (m : Nat) (ε : R) (hε : 0 ≤ ε) (n : X → Int) (lo hi : Int)
    (hlh : lo ≤ hi) : Mechanism X (Option (Window lo hi)) R :=
  coinOrBottom (laplaceMech m ε hε n lo hi hlh)

/-- **M_toy is (𝒫, ℰ, 0)-ODP** with 𝒫 = {values, {⊥}}, ℰ(values) = ε, ℰ({⊥}) = 0
(paper, Sec. 3, the example after Def. 2). -/
theorem toy_odp (Nbr : X → X → Prop) (m : Nat) (hm : 0 < m) (ε : R) (hε : 0 ≤ ε)
    (n : X → Int) (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int)
    (hlh : lo ≤ hi) :
    ODP Nbr (toyMech m ε hε n lo hi hlh) toyBlock (toyCosts ε) 0 := by
  have h := coinOrBottom_odp Nbr _ ε 0 (laplace_dp Nbr m hm ε hε n hn lo hi hlh)
  have h0 : (2 : R)⁻¹ * 0 = 0 := by grind
  rw [h0] at h
  exact h

end

end Odp.Mech
