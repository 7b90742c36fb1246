/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The grid Laplace and Gaussian mechanisms (clamped), Lemma 3 for them, and M_toy

odp releases a real query `f` with sensitivity Δ on the grid `g·ℤ`
(`odp.mechanisms.noise`): the query value in grid units is `n(x) = ⌊f(x)/g + 1/2⌋`, with
`|n(x) − n(x')| ≤ m = ⌈Δ/g⌉` for neighbours, integer noise `Z` is added, and the release is
clamped to a declared window `[lo, hi]` (in grid units) so that every output space is finite:
`clamp(n(x) + Z, lo, hi)`. The release `g·v` is a data-independent relabelling of the grid value
`v`, so the mechanisms below output `v` itself (`Window lo hi = {v ∈ ℤ | lo ≤ v ≤ hi}`).

* **Laplace** (`laplace_dp`, `laplace_odp`). `Z` discrete Laplace of scale `m/ε` grid units.
  The mechanism's law is written out — `clampedLaplace (ε/m)` (`Odp/Mech/ClampedLaplace.lean`):
  closed-form masses on the window, proved to sum to 1 — so **no noise hypothesis** is taken.
  For `ε ≥ 0` it is ε-DP (Def. 1, δ = 0): moving the centre by `s`, `|s| ≤ m`, costs at most
  `e^{|s|·ε/m} ≤ e^ε` at every output. By Lemma 3 (`Odp.Core.odp_of_dp`) it is
  (𝒫, ℰ ≡ ε, 0)-ODP for every partition 𝒫.
* **Gaussian** (`gaussian_dp`, `gaussian_odp`). `Z` discrete Gaussian whose additive mechanism
  on ℤ with sensitivity `m` is (ε, δ)-DP (hypothesis `GaussNoise m ε δ`; odp computes δ with a
  tested Python bound, CKS Thm. 7). Then the clamped mechanism is (ε, δ)-DP and, by Lemma 3,
  (𝒫, ℰ ≡ ε, δ)-ODP for every 𝒫.
* **M_toy** (paper, Sec. 1 and Sec. 3: `toy_odp`). A fair coin: heads → the clamped Laplace
  release, tails → ⊥. It is (𝒫, ℰ, 0)-ODP with 𝒫 = {values, {⊥}}, ℰ(values) = ε, ℰ({⊥}) = 0
  (`toyCosts ε`). The general form (`coinOrBottom_odp`): the coin in front of any (ε, δ)-DP
  mechanism gives (𝒫, ℰ, δ/2)-ODP.

The Gaussian theorem holds for any map `out : ℤ → O` into a finite type in place of the clamp
(`grid_dp_of_shift`, from any noise whose shifts up to `m` are (ε, δ)-bounded); the clamp is the
instance odp uses.

Narrower than the paper: the paper's M_toy adds continuous Laplace noise to a real value; here
(as in odp) the noise is the discrete Laplace on the grid and the release is clamped to a
window — the mechanism odp runs. The neighbour relation is any relation `Nbr` with
`|n(x) − n(x')| ≤ m` on neighbours; `m ≥ 1` (odp: `m = ⌈Δ/g⌉ ≥ 1`).
-/
module

public import Odp.Mech.Basic
public import Odp.Mech.ClampedLaplace

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

/-! ### The window `[lo, hi]` and the clamp -/

-- The window `Window lo hi` and its `Enum` instance are in `Odp/Mech/Enum.lean`.

/-- `clamp(z, lo, hi) = min(max(z, lo), hi)` as an element of the window. -/
def clamp (lo hi : Int) (h : lo ≤ hi) (z : Int) : Window lo hi :=
  ⟨if z < lo then lo else if hi < z then hi else z, by
    by_cases h1 : z < lo
    · rw [if_pos h1]; omega
    · rw [if_neg h1]
      by_cases h2 : hi < z
      · rw [if_pos h2]; omega
      · rw [if_neg h2]; omega⟩

variable {R : Type} [ExpField R] {X O : Type} [Enum O] [DecidableEq O]

/-! ### A grid mechanism is DP when every noise shift up to `m` is -/

/-- If every shift `|d| ≤ m` of the noise is (ε, δ)-bounded on events, then `x ↦ out (n x + Z)`
is (ε, δ)-DP for any map `out` into a finite type and any `n` with `|n x − n x'| ≤ m` on
neighbours. -/
theorem grid_dp_of_shift (N : Expect R) (Nbr : X → X → Prop) (n : X → Int) (m : Nat)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (out : Int → O) (ε δ : R)
    (hshift : ∀ d : Int, -(m : Int) ≤ d → d ≤ (m : Int) → ∀ S : Int → Bool,
      N.E (fun z => ind S (z + d)) ≤ exp ε * N.E (ind S) + δ) :
    DP Nbr (fun x => N.lawOf out (n x)) ε δ := by
  intro x x' hx S
  rw [N.Pr_lawOf, N.Pr_lawOf]
  have hxx := hn x x' hx
  have h1 := hshift (n x - n x') (by omega) (by omega) (fun z => S (out (n x' + z)))
  have h2 : N.E (fun z => ind (fun w => S (out w)) (n x + z))
      = N.E (fun z => ind (fun z => S (out (n x' + z))) (z + (n x - n x'))) := by
    apply Expect.E_congr
    intro z
    unfold ind
    have : n x + z = n x' + (z + (n x - n x')) := by omega
    rw [this]
  have h3 : N.E (fun z => ind (fun w => S (out w)) (n x' + z))
      = N.E (ind (fun z => S (out (n x' + z)))) := rfl
  rw [h2, h3]
  exact h1

/-! ### Laplace -/

/-- The rate `ε/m ≥ 0` of the grid Laplace noise (scale `m/ε` grid units). -/
theorem rate_nonneg {ε : R} (hε : 0 ≤ ε) (m : Nat) : 0 ≤ ε / natR m := by
  rw [Lean.Grind.Field.div_eq_mul_inv]
  cases m with
  | zero => rw [natR_zero, Lean.Grind.Field.inv_zero]; grind
  | succ k => exact mul_nonneg' hε (Std.le_of_lt (inv_pos' (natR_pos (Nat.succ_pos k))))

/-- **The grid Laplace mechanism, clamped** (`odp.mechanisms.noise.LaplaceMechanism` with a
window): `x ↦ clamp(n(x) + Z, lo, hi)`, `Z` discrete Laplace of scale `m/ε` grid units — its law
written out (`clampedLaplace (ε/m)`, `Odp/Mech/ClampedLaplace.lean`: closed-form masses, total
1), not a hypothesis. -/
def laplaceMech (m : Nat) (ε : R) (hε : 0 ≤ ε) (n : X → Int) (lo hi : Int) (hlh : lo ≤ hi) :
    Mechanism X (Window lo hi) R :=
  fun x => clampedLaplace (ε / natR m) (rate_nonneg hε m) lo hi hlh (n x)

theorem natR_mul_rate {m : Nat} (hm : 0 < m) (ε : R) : natR m * (ε / natR m) = ε := by
  have h := natR_pos (R := R) hm
  have hi : natR m * (natR m : R)⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
  rw [Lean.Grind.Field.div_eq_mul_inv]
  generalize (natR m : R)⁻¹ = i at hi
  grind

/-- **The grid Laplace mechanism is ε-DP** (Def. 1, δ = 0), for `ε ≥ 0`, with no hypothesis
about the noise: its law is `clampedLaplace`, and moving the centre by at most `m` costs at most
`e^{m·ε/m} = e^ε` at every output (`clampedLaplace_shift`). -/
theorem laplace_dp (Nbr : X → X → Prop) (m : Nat) (hm : 0 < m) (ε : R) (hε : 0 ≤ ε)
    (n : X → Int) (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int)
    (hlh : lo ≤ hi) :
    DP Nbr (laplaceMech m ε hε n lo hi hlh) ε 0 := by
  apply dp_of_pointwise
  intro x x' hx c
  have h := clampedLaplace_shift (rate_nonneg hε m) lo hi hlh (n x) (n x') m
    (by have := hn x x' hx; omega) c
  rw [natR_mul_rate hm] at h
  exact h

/-- **Lemma 3 for the grid Laplace mechanism**: (𝒫, ℰ ≡ ε, 0)-ODP for every partition `κ`. -/
theorem laplace_odp {K : Type} [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (m : Nat)
    (hm : 0 < m) (ε : R) (hε : 0 ≤ ε) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    (κ : Window lo hi → K) :
    ODP Nbr (laplaceMech m ε hε n lo hi hlh) κ (fun _ => ε) 0 :=
  odp_of_dp Nbr _ ε 0 (laplace_dp Nbr m hm ε hε n hn lo hi hlh) κ

/-! ### Gaussian -/

/-- **The grid Gaussian mechanism, clamped** (`odp.mechanisms.noise.GaussianMechanism` with a
window): `x ↦ clamp(n(x) + Z, lo, hi)`, `Z` discrete Gaussian, (ε, δ) for shifts up to `m`. -/
def gaussianMech (m : Nat) (ε δ : R) (Z : GaussNoise R m ε δ) (n : X → Int) (lo hi : Int)
    (hlh : lo ≤ hi) : Mechanism X (Window lo hi) R :=
  fun x => Z.toExpect.lawOf (clamp lo hi hlh) (n x)

/-- **The grid Gaussian mechanism is (ε, δ)-DP.** -/
theorem gaussian_dp (Nbr : X → X → Prop) (m : Nat) (ε δ : R) (Z : GaussNoise R m ε δ)
    (n : X → Int) (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int)
    (hlh : lo ≤ hi) : DP Nbr (gaussianMech m ε δ Z n lo hi hlh) ε δ :=
  grid_dp_of_shift Z.toExpect Nbr n m hn (clamp lo hi hlh) ε δ Z.shift

/-- **Lemma 3 for the grid Gaussian mechanism**: (𝒫, ℰ ≡ ε, δ)-ODP for every partition `κ`. -/
theorem gaussian_odp {K : Type} [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (m : Nat)
    (ε δ : R) (Z : GaussNoise R m ε δ) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    (κ : Window lo hi → K) :
    ODP Nbr (gaussianMech m ε δ Z n lo hi hlh) κ (fun _ => ε) δ :=
  odp_of_dp Nbr _ ε δ (gaussian_dp Nbr m ε δ Z n hn lo hi hlh) κ

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
