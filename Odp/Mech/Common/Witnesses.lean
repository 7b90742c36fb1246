/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Genuine witnesses of the trust boundary's hypotheses (non-vacuity with real laws)

`Odp/Mech/Common/Noise.lean` defines every hypothesis the theorems of `Odp/Mech` take. A hypothesis that
no law satisfies would make every theorem that takes it vacuous. This file shows, over every
`ExpField`, that the hypotheses are satisfied by **genuine** instances of the kind the trust
boundary names — probability laws that depend on the data, the laws odp samples where that can
be written without an infinite sum — not by degenerate ones (a law ignoring the data, a tail
`G ≡ 0` that is no law on ℤ, a constant statistic):

| hypothesis | witness | what it is |
|---|---|---|
| `TailNoise α` | `dlapTailNoise` (`Odp/Mech/Laplace/Law.lean`) | the discrete Laplace tail `Pr[Z ≥ t]`, closed form: odp's PTR and test noise |
| `LapTail β` | `discreteLaplaceTail_isLapTail` (`NoiseSat.lean`) | the same tail: SVT's query noise |
| `Iter.ShiftDominated N r` | `Iter.shiftDominated_clampedLaplace` (`Odp/Mech/Laplace/Law.lean`) | the clamped discrete Laplace: odp's noisy-gradient coordinate |
| `IntLaw` with `ShiftWithin 0` | `IntLaw.dirac` (`NoiseSat.lean`) | the point mass: odp's IQR release with `resolution = 1` (no noise) |
| `Iter.StepsDP`, `Iter.PrefixDP` | `Iter.stepsDP_noisy`, `Iter.prefixDP_noisy` | the clamped-Laplace noisy step of a data-dependent query |
| `Iter.L1Sensitive` | `Iter.l1Sensitive_id` (`NoiseSat.lean`) | the identity query |
| `IQRDataFacts` | `IQRDataFacts.witness` (`NoiseSat.lean`) | a non-constant statistic, every `L ≥ 1` |
| `ERMRelease`, `TestSensitivity` | `ermRelease_rr`, `testSensitivity_shift` | randomized response on the training bit, a score that moves with the test set |
| `UtilitySensitivity`, `MedianDP` | `utilitySensitivity_dist`, `medianDP_dist` | the distance utility and odp's exponential median on it |

Jointly: `iqr_logBin_hyps_satisfiable`, `iqr_logBinLap_hyps_satisfiable` (`Odp/Mech/PTR/IQR.lean`),
`testRelease_hyps_satisfiable`, `noisyGD_hyps_satisfiable` (here).

**Not witnessed** (see the trust boundary, "Which hypotheses have genuine witnesses"): `LapNoise` (SVT's
threshold noise, unclamped), `GaussNoise` (the discrete Gaussian's δ) and `IntLaw.ShiftBound`
(so `IntLaw.ShiftWithin n` for `n ≥ 1`): no finitely supported law satisfies them, and the real
laws are infinite sums. The grid Laplace mechanism, M_toy and odp's `M_IQR` no longer need any of
them: their laws are written out (`laplace_odp`, `toy_odp`, `iqr_logBinLap_odp`).
-/
module

public import Odp.Mech.Laplace.Law
public import Odp.Mech.RandomizedResponse.Privacy
public import Odp.Mech.Iterative.Privacy
public import Odp.Mech.TestRelease.Privacy
public import Odp.Mech.PTR.Median

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

variable {R : Type} [ExpField R]

/-! ### The iterative mechanism: a genuine noisy step -/

namespace Iter

/-- The noisy step of the witness: one coordinate, the exact value `x ∈ ℤ` (the database itself,
a data-dependent query), released as `clamp(x + Z, lo, hi)` with `Z` discrete Laplace of scale
`1/r`. -/
def witnessStep (r : R) (hr : 0 ≤ r) (lo hi : Int) (hlh : lo ≤ hi) :
    Step Int (Vec (Window lo hi) 1) R :=
  noisyStep (fun u => clampedLaplace r hr lo hi hlh u) 1 (fun _ x => ⟨[x], rfl⟩)

/-- **Witness of `Iter.StepsDP`**: every step of the clamped-Laplace noisy step is `(r, 0)`-DP
for databases at distance at most 1, for any number `K` of steps. -/
theorem stepsDP_noisy (r : R) (hr : 0 ≤ r) (lo hi : Int) (hlh : lo ≤ hi) (K : Nat) :
    StepsDP (fun x x' : Int => (x - x').natAbs ≤ 1) (witnessStep r hr lo hi hlh)
      (List.replicate K r) [] := by
  intro h hlen
  rw [getD_replicate, if_pos (by simpa using hlen), List.getD_nil]
  exact noisyStep_dp _ _ 1 _ r r 1 hr (shiftDominated_clampedLaplace hr lo hi hlh)
    (l1Sensitive_id (C := Window lo hi)) (by rw [natR_one]; grind) h

/-- **Witness of `Iter.PrefixDP`** (Lemma 11's COMP, by basic composition) for the same step. -/
theorem prefixDP_noisy (r : R) (hr : 0 ≤ r) (lo hi : Int) (hlh : lo ≤ hi) (K : Nat)
    (ks : List Nat) (hks : ∀ i : Fin ks.length, ks.get i ≤ K) :
    PrefixDP (fun x x' : Int => (x - x').natAbs ≤ 1) (witnessStep r hr lo hi hlh) ks
      (iterCosts ks (List.replicate K r)) (fun i => prefSum ([] : List R) (ks.get i)) :=
  prefixDP_basic _ _ ks (List.replicate K r) []
    (fun j => by rw [getD_replicate]; split <;> grind)
    (fun j => by rw [List.getD_nil]; grind)
    (stepsDP_noisy r hr lo hi hlh K) (fun i => by simpa using hks i)

/-- The hypotheses of `noisyGD_odp` hold jointly for the clamped discrete Laplace and the
identity query (`m = 1`, `ε = r`). -/
theorem noisyGD_hyps_satisfiable (r : R) (hr : 0 ≤ r) (lo hi : Int) (hlh : lo ≤ hi) :
    ShiftDominated (fun u => clampedLaplace r hr lo hi hlh u) r ∧
      L1Sensitive (C := Window lo hi) (fun x x' : Int => (x - x').natAbs ≤ 1) 1
        (fun _ x => ⟨[x], rfl⟩) 1 ∧ natR 1 * r ≤ r :=
  ⟨shiftDominated_clampedLaplace hr lo hi hlh, l1Sensitive_id, by rw [natR_one]; grind⟩

end Iter

/-! ### Test-and-release: a training release that depends on the training set -/

/-- The score of the witness: `1` for the model `true`, `0` for `false`, plus the test statistic
`t ∈ ℤ` (it moves with the test set). -/
def witnessScore (v : Bool) (t : Int) : Int := (if v then 1 else 0) + t

/-- **Witness of `ERMRelease`**: the training set is a bit `a`, the release is randomized response
on it (`ε₁`-DP, a law that depends on the data), the coupling of neighbouring training sets is
the independent one, and the score moves by at most 1 between any two models. -/
theorem ermRelease_rr {ε₁ : R} (hε : 0 ≤ ε₁) :
    ERMRelease (fun _ _ : Bool => True) (rrMech ε₁ (fun a : Bool => a)) witnessScore ε₁ 1 where
  dp := rr_dp _ ε₁ hε _
  coupling a a' _ := by
    refine ⟨fun v v' => (rrMech ε₁ (fun a : Bool => a) a).mass v
        * (rrMech ε₁ (fun a : Bool => a) a').mass v', ?_, ?_, ?_, ?_⟩
    · intro v v'
      exact mul_nonneg' ((rrMech ε₁ _ a).nonneg v) ((rrMech ε₁ _ a').nonneg v')
    · intro v
      show fsum (fun v' => (rrMech ε₁ (fun a : Bool => a) a).mass v
        * (rrMech ε₁ (fun a : Bool => a) a').mass v') = _
      rw [fsum_mul_left, (rrMech ε₁ _ a').total]
      grind
    · intro v'
      show fsum (fun v => (rrMech ε₁ (fun a : Bool => a) a).mass v
        * (rrMech ε₁ (fun a : Bool => a) a').mass v') = _
      have e : (fun v => (rrMech ε₁ (fun a : Bool => a) a).mass v
            * (rrMech ε₁ (fun a : Bool => a) a').mass v')
          = (fun v => (rrMech ε₁ (fun a : Bool => a) a').mass v'
            * (rrMech ε₁ (fun a : Bool => a) a).mass v) := by
        funext v
        generalize (rrMech ε₁ (fun a : Bool => a) a).mass v = p
        generalize (rrMech ε₁ (fun a : Bool => a) a').mass v' = q
        grind
      rw [e, fsum_mul_left, (rrMech ε₁ _ a).total]
      grind
    · intro v v' _ t
      unfold witnessScore
      cases v <;> cases v' <;> simp <;> omega

/-- **Witness of `TestSensitivity`**: test sets `t ∈ ℤ` at distance at most `m` move the score of
every model by at most `m`. -/
theorem testSensitivity_shift (m : Nat) :
    TestSensitivity (fun t t' : Int => (t - t').natAbs ≤ m) witnessScore m := by
  intro v t t' h
  unfold witnessScore
  omega

/-- The hypotheses of `test_release_odp` hold jointly with genuine laws: the test noise is the
discrete Laplace of scale `units/ε₂` (its tail in closed form), the training release is
randomized response on the training bit, the score moves with the test set. -/
theorem testRelease_hyps_satisfiable {ε₁ ε₂ : R} (hε₁ : 0 ≤ ε₁) (units : Nat)
    (h : 0 ≤ ε₂ / natR units) (mt : Nat) :
    ∃ Z : TailNoise R (ε₂ / natR units), Z.G = discreteLaplaceTail (ε₂ / natR units) ∧
      ERMRelease (fun _ _ : Bool => True) (rrMech ε₁ (fun a : Bool => a)) witnessScore ε₁ 1 ∧
      TestSensitivity (fun t t' : Int => (t - t').natAbs ≤ mt) witnessScore mt :=
  ⟨dlapTailNoise _ h, rfl, ermRelease_rr hε₁, testSensitivity_shift mt⟩

/-! ### The median: the distance utility and odp's exponential median -/

/-- The utility of the witness: `u(x, y) = −|x − f(y)|` for a database summarised by `x ∈ ℤ` and
a grid point `y` at `f(y) ∈ ℤ`. -/
def distUtility {Y : Type} (f : Y → Int) (x : Int) (y : Y) : Int := -(((x - f y).natAbs : Nat) : Int)

/-- **Witness of `UtilitySensitivity`**: the distance utility changes by at most 1 between
databases at distance at most 1. -/
theorem utilitySensitivity_dist {Y : Type} (f : Y → Int) :
    UtilitySensitivity (fun x x' : Int => (x - x').natAbs ≤ 1) (distUtility f) := by
  intro x x' y h
  unfold distUtility
  omega

/-- **Witness of `MedianDP`**: odp's exponential median with the distance utility (a law that
depends on the data). -/
theorem medianDP_dist {Y : Type} [Enum Y] (y₀ : Y) (f : Y → Int) :
    MedianDP (fun x x' : Int => (x - x').natAbs ≤ 1) (expMech (R := R) y₀ (distUtility f)) :=
  expMedian_dp _ y₀ (distUtility f) (utilitySensitivity_dist f)

end

end Odp.Mech
