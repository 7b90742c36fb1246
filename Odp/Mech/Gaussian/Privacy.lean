/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The grid Gaussian mechanism (clamped) is (ε, δ)-DP, and Lemma 3 for it

The grid, the window and the clamp are in `Odp/Mech/Common/Grid.lean`: odp releases
`clamp(n(x) + Z, lo, hi)` with `|n(x) − n(x')| ≤ m` for neighbours (`odp.mechanisms.noise`).

**Gaussian** (`gaussian_dp`, `gaussian_odp`; odp's `GaussianMechanism`). `Z` discrete Gaussian
whose additive mechanism on ℤ with sensitivity `m` is (ε, δ)-DP (hypothesis `GaussNoise m ε δ` of
the trust boundary `Odp/Mech/Common/Noise.lean`; odp computes δ with a tested Python bound,
Canonne, Kamath, Steinke 2020, Theorem 7). Then the clamped mechanism is (ε, δ)-DP
(`grid_dp_of_shift`) and, by Lemma 3 of Hartmann et al. 2022, (𝒫, ℰ ≡ ε, δ)-ODP for every 𝒫.

The theorem holds for any map `out : ℤ → O` into a finite type in place of the clamp
(`grid_dp_of_shift`); the clamp is the instance odp uses. Narrower than the paper: the noise is
discrete on the grid and the release is clamped to a window (the mechanism odp runs).
-/
module

public import Odp.Mech.Common.Grid

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

variable {R : Type} [ExpField R] {X O : Type} [Enum O] [DecidableEq O]

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

end

end Odp.Mech
