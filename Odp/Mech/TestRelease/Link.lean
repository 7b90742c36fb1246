/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Linking certificates to the proofs: test-and-release (Alg. 5, Theorem 17 on the grid)

For this kind of `mech` row (`Odp.LedgerCore.mechOk`), as for every linked kind (the shared
part is `Odp/Certs/LinkCore.lean`, the capstone `Odp/Certs/Link.lean`):

1. **Cost link**: if `mechOk` accepts the round's rows with the row's parameters `ps` (natural
   numbers in units of `1/D`), then the round's blocks, read in `R` with `amt D`, are the cost
   function that the mechanism's theorem is proved for, evaluated at the parameters read with
   `amt D`, in the certificate's class order, and the round's `δ` is the mechanism's.
2. **Honesty**: a request that releases `f` of a draw of the Lean model (with its hypotheses),
   labels outputs by the model's partition in the certificate's class order, and whose declared
   rows pass `mechOk` for this kind with the model's parameters satisfies the ODP conjunct of
   `Request.Honest`; on the model's own output type, all of `Request.Honest`, given the
   neighbours and that `supEps` is the largest block (what `blocksOk` checks on every accepted
   step).

Here: `mechOk_testRelease` (the row over `Nat`, checked with products by `units`),
`testRelease_cost_link` (the real `max`/`min` form of `testReleaseCosts`, `δ = 0`, in the class
order (values, ⊥) of `vobIndex`, `Odp/Mech/PTR/Link.lean`) and its arithmetic (`natMax_eq`,
`perUnit`, …), `TestReleaseBuiltin`, `TestReleaseBuiltin.odpCost` (from `test_release_odp`),
`testRelease_honest`.

**What stays assumed**: neighbours, and that the run's neighbour relation maps to `trNbr` (one
training or one test record); that the release is the model's; `TailNoise` and the stated
`ERMRelease` (Alg. 4's DP and the coupling of Hartmann et al. 2022, App. D) and
`TestSensitivity`, all in the trust boundary `Odp/Mech/Common/Noise.lean`.
-/
module

public import Odp.Mech.PTR.Link
public import Odp.Mech.TestRelease.Privacy

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Link

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Mech

noncomputable section

variable {R X O : Type} [ExpField R]

/-! ### The `mech` row (over `Nat`) -/

theorem mechOk_testRelease {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindTestRelease ps gs = true) :
    0 < blockAt 2 ps ∧ e.delta = 0 ∧ listLen bs = 2 ∧
      blockAt 0 bs * blockAt 2 ps
        = natMax (blockAt 0 ps * blockAt 2 ps) (blockAt 3 ps * blockAt 1 ps) ∧
      blockAt 1 bs * blockAt 2 ps
        = natMin (blockAt 0 bs * blockAt 2 ps) (natMax (blockAt 4 ps) (blockAt 3 ps) * blockAt 1 ps)
    := by
  have h' : (arity ps gs 5 && testReleaseOk e bs true (blockAt 0 ps) (blockAt 1 ps) (blockAt 2 ps)
      (blockAt 3 ps) (blockAt 4 ps)) = true := h
  have h2 : (decide (0 < blockAt 2 ps) && decide (e.delta = 0) &&
      (decide (listLen bs = 2) &&
        decide (blockAt 0 bs * blockAt 2 ps
          = natMax (blockAt 0 ps * blockAt 2 ps) (blockAt 3 ps * blockAt 1 ps)) &&
        decide (blockAt 1 bs * blockAt 2 ps
          = natMin (blockAt 0 bs * blockAt 2 ps)
              (natMax (blockAt 4 ps) (blockAt 3 ps) * blockAt 1 ps)))) = true := band_right h'
  exact ⟨of_decide_eq_true (band_left (band_left h2)),
    of_decide_eq_true (band_right (band_left h2)),
    of_decide_eq_true (band_left (band_left (band_right h2))),
    of_decide_eq_true (band_right (band_left (band_right h2))),
    of_decide_eq_true (band_right (band_right h2))⟩

/-! ### Test-and-release (Alg. 5, Theorem 17 on the grid) -/

theorem natMax_eq (a b : Nat) : natMax a b = max a b := by
  unfold natMax
  by_cases h : a ≤ b
  · rw [if_pos (decide_eq_true h), Nat.max_eq_right h]
  · rw [if_neg (fun h' : decide (a ≤ b) = true => h (of_decide_eq_true h')),
      Nat.max_eq_left (by omega)]

/-- `x ↦ x / (u·D)`: a quantity checked after multiplying by `u`. -/
def perUnit (D u x : Nat) : R := natR x * (natR u)⁻¹ * (natR D)⁻¹

theorem perUnit_le (D u : Nat) (hD : 0 < D) (hu : 0 < u) {a b : Nat} (h : a ≤ b) :
    (perUnit D u a : R) ≤ perUnit D u b := by
  unfold perUnit
  have iu := inv_pos' (natR_pos (R := R) hu)
  have iD := inv_pos' (natR_pos (R := R) hD)
  have h1 := mul_le_mul_right' (natR u)⁻¹ (natR_le (R := R) h) (by grind)
  exact mul_le_mul_right' (natR D)⁻¹ h1 (by grind)

theorem rmax_perUnit (D u : Nat) (hD : 0 < D) (hu : 0 < u) (a b : Nat) :
    rmax (perUnit D u a : R) (perUnit D u b) = perUnit D u (natMax a b) := by
  unfold rmax natMax
  by_cases h : a ≤ b
  · rw [if_pos (decide_eq_true h), if_pos (perUnit_le D u hD hu h)]
  · rw [if_neg (fun h' : decide (a ≤ b) = true => h (of_decide_eq_true h'))]
    have h2 := perUnit_le (R := R) D u hD hu (show b ≤ a by omega)
    by_cases h3 : (perUnit D u a : R) ≤ perUnit D u b
    · rw [if_pos h3]; grind
    · rw [if_neg h3]

theorem rmin_perUnit (D u : Nat) (hD : 0 < D) (hu : 0 < u) (a b : Nat) :
    rmin (perUnit D u a : R) (perUnit D u b) = perUnit D u (natMin a b) := by
  unfold rmin natMin
  by_cases h : a ≤ b
  · rw [if_pos (decide_eq_true h), if_pos (perUnit_le D u hD hu h)]
  · rw [if_neg (fun h' : decide (a ≤ b) = true => h (of_decide_eq_true h'))]
    have h2 := perUnit_le (R := R) D u hD hu (show b ≤ a by omega)
    by_cases h3 : (perUnit D u a : R) ≤ perUnit D u b
    · rw [if_pos h3]; grind
    · rw [if_neg h3]

/-- A block checked as `b·u = x` is `x/(u·D)`. -/
theorem amt_of_mul_eq (D u : Nat) (hu : 0 < u) {b x : Nat} (h : b * u = x) :
    (amt D b : R) = perUnit D u x := by
  unfold amt perUnit
  rw [← h, natR_mul_nat]
  have hc1 := inv_natR_mul (R := R) hu
  generalize (natR b : R) = nb
  generalize (natR u : R)⁻¹ = iu at hc1 ⊢
  generalize (natR u : R) = nu at hc1 ⊢
  generalize (natR D : R)⁻¹ = iD
  have : nb * nu * iu * iD = nb * (nu * iu) * iD := by grind
  rw [this, hc1]
  grind

theorem perUnit_mul_right (D u a : Nat) (hu : 0 < u) : (perUnit D u (a * u) : R) = amt D a :=
  (amt_of_mul_eq D u hu rfl).symm

theorem perUnit_mul_left (D u k a : Nat) :
    (perUnit D u (k * a) : R) = natR k / natR u * amt D a := by
  unfold perUnit amt
  rw [natR_mul_nat, Lean.Grind.Field.div_eq_mul_inv]
  grind

/-- **Cost link, test-and-release**: an accepted `mech test_release` row with parameters
`ε1, ε2, units, units_test, units_train` (checked over `Nat` after multiplying by `units`) lists
(values, ⊥) at `testReleaseCosts (ε1/D) (ε2/D) units units_test units_train`, `units ≥ 1` and
`δ = 0`. -/
theorem testRelease_cost_link (D : Nat) (hD : 0 < D) {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup} (h : mechOk e bs true kindTestRelease ps gs = true) :
    0 < blockAt 2 ps ∧ e.delta = 0 ∧ listLen bs = 2 ∧
      ∀ b, (amt D (blockAt (vobIndex b) bs) : R)
        = testReleaseCosts (amt D (blockAt 0 ps)) (amt D (blockAt 1 ps)) (blockAt 2 ps)
            (blockAt 3 ps) (blockAt 4 ps) b := by
  obtain ⟨hu, hd, hlen, h0, h1⟩ := mechOk_testRelease h
  have hv : (amt D (blockAt 0 bs) : R)
      = rmax (amt D (blockAt 0 ps)) (natR (blockAt 3 ps) / natR (blockAt 2 ps)
          * amt D (blockAt 1 ps)) := by
    rw [amt_of_mul_eq D _ hu h0, ← rmax_perUnit D _ hD hu, perUnit_mul_right D _ _ hu,
      perUnit_mul_left]
  refine ⟨hu, hd, hlen, fun b => ?_⟩
  cases b
  · exact hv
  · show (amt D (blockAt 1 bs) : R) = rmin (rmax (amt D (blockAt 0 ps))
      (natR (blockAt 3 ps) / natR (blockAt 2 ps) * amt D (blockAt 1 ps)))
      (natR (max (blockAt 4 ps) (blockAt 3 ps)) / natR (blockAt 2 ps) * amt D (blockAt 1 ps))
    rw [amt_of_mul_eq D _ hu h1, ← rmin_perUnit D _ hD hu, perUnit_mul_right D _ _ hu, hv,
      perUnit_mul_left, natMax_eq]

/-- A request that is a round of **test-and-release** (Alg. 5 on the grid, `testRelease`), fed
the (training, test) pair `g x` of the run's input: it releases `f` of the output, labels values
`0` and ⊥ `1`, and its rows pass `mech test_release` with parameters
`e1, e2, units, units_test, units_train`. Carried hypotheses: the test noise `Z` (`TailNoise`,
scale `units/ε2` grid units), `ERMRelease` (stated: Alg. 4 is `ε1`-DP in the training set, and
its coupling moves the score by at most `units_train`), `TestSensitivity` (stated:
`units_test`), and that the run's neighbours are neighbours of Alg. 5 (`trNbr`). -/
inductive TestReleaseBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro {Xtr Xte V : Type} [Enum V] (NbrTr : Xtr → Xtr → Prop) (NbrTe : Xte → Xte → Prop)
      (g : X → Xtr × Xte) (hg : ∀ x x', Nbr x x' → trNbr NbrTr NbrTe (g x) (g x'))
      (e1 e2 u ut utr : Nat) (Z : TailNoise R (amt D e2 / natR u)) (rel : Xtr → Dist V R)
      (score : V → Xte → Int) (thr : Int) (hrel : ERMRelease NbrTr rel score (amt D e1) utr)
      (htest : TestSensitivity NbrTe score ut) (f : Option V → O)
      (hreal : Realizes r (fun x => testRelease Z rel score thr (g x)) f
        (fun o => vobIndex (vob o)))
      (hrow : mechOk r.rowEntry r.blocks true kindTestRelease [e1, e2, u, ut, utr] [] = true)

theorem TestReleaseBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    (hD : 0 < D) {r : Request X O R} (h : TestReleaseBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨NbrTr, NbrTe, g, hg, e1, e2, u, ut, utr, Z, rel, score, thr, hrel, htest, f, hreal,
    hrow⟩ := h
  have hl := testRelease_cost_link (R := R) D hD hrow
  have h1 := (ODP_iff_ODPcost _ _ vob (testReleaseCosts (amt D e1) (amt D e2) u ut utr) 0).mp
    (test_release_odp NbrTr NbrTe (amt D e1) (amt D e2) u ut utr hl.1 (amt_nonneg hD e2) Z rel
      score thr hrel htest)
  have h2 := odpCost_comap Nbr (trNbr NbrTr NbrTe) g hg _ _ _ h1
  have e2' : (0 : R) = amt D r.delta := by
    have : r.delta = 0 := hl.2.1
    rw [this, amt_zero]
  exact odp_of_realizes Nbr D hreal
    (odpCost_congr h2 (fun o => (hl.2.2.2 (vob o)).symm) e2')

/-- **Honesty, test-and-release, on its own output type** (input: the (training, test) pair,
neighbours `trNbr`). -/
theorem testRelease_honest {Xtr Xte V : Type} [Enum V] [DecidableEq V] (NbrTr : Xtr → Xtr → Prop)
    (NbrTe : Xte → Xte → Prop) (D : Nat) (hD : 0 < D) (e1 e2 u ut utr : Nat)
    (Z : TailNoise R (amt D e2 / natR u)) (rel : Xtr → Dist V R) (score : V → Xte → Int)
    (thr : Int) (hrel : ERMRelease NbrTr rel score (amt D e1) utr)
    (htest : TestSensitivity NbrTe score ut) (r : Request (Xtr × Xte) (Option V) R)
    (hM : r.M = testRelease Z rel score thr) (hb : ∀ o, r.block o = vobIndex (vob o))
    (hrow : mechOk r.rowEntry r.blocks true kindTestRelease [e1, e2, u, ut, utr] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : trNbr NbrTr NbrTe r.x₀ r.x₁) :
    r.Honest (trNbr NbrTr NbrTe) D := by
  have hodp := TestReleaseBuiltin.odpCost hD
    (TestReleaseBuiltin.intro NbrTr NbrTe (fun p => p) (fun _ _ h => h) e1 e2 u ut utr Z rel
      score thr hrel htest (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of _ D r hN hodp hsup (fun o => ?_)
  rw [hb o]
  exact vob_range o _ (testRelease_cost_link (R := R) D hD hrow).2.2.1

end

end Odp.Certs.Link
