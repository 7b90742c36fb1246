/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Linking certificates to the proofs: PTR, M_IQR, test-and-release, the exponential median

For each of these kinds of `mech` row (`Odp.LedgerCore.mechOk`), as in `Odp/Certs/LinkLaplace.lean`:

1. **Cost link**: the round's blocks, read with `amt D`, are the cost function `Odp/Mech` proves
   the guarantee for, at the row's parameters read with `amt D`, in the certificate's class order
   (values, ⊥) (`vobIndex`): `ptrCosts`, `iqrCosts` (`δ` = the row's `δ`), `testReleaseCosts`
   (`δ = 0`; the row is checked with products by `units`, and `testRelease_cost_link` derives the
   real `max`/`min` form), the median's one class (`δ = 0`).
2. **Honesty** (`PtrBuiltin.odpCost`, `IqrBuiltin.odpCost`, `TestReleaseBuiltin.odpCost`,
   `MedianBuiltin.odpCost`; on the model's own output type `ptr_honest`, `iqr_honest`,
   `testRelease_honest`, `median_honest`): a request that releases the model's output, labelled
   by the model's partition, with rows passing `mech` for that kind with the model's parameters,
   satisfies the ODP conjunct of `Request.Honest`, from the Mech theorem (`ptr_odp`,
   `iqr_logBinLap_odp`, `test_release_odp`, `expMedian_dp` with Lemma 3).

**What stays assumed**: neighbours; that the release is the model's; Definition 9's conditions
for a PTR function (`IsPTRFunction`, the PTR kind's interface); for `M_IQR` the noise hypotheses
`TailNoise`, `IntLaw.ShiftWithin`, the tail bound `Pr(Z ≥ K) ≤ δ/2` and the stated data facts
`IQRDataFacts`; for test-and-release `TailNoise`, the stated `ERMRelease` (Alg. 4's DP and the
coupling of App. D) and `TestSensitivity`, and that the run's neighbour relation maps to
`trNbr` (one training or one test record); for the median the stated `UtilitySensitivity`. All in
the trust boundary `Odp/Mech/Noise.lean` (`IsPTRFunction`, Definition 9, in `Odp/Mech/PTR.lean`).
-/
module

public import Odp.Certs.LinkCore
public import Odp.Mech.IQR
public import Odp.Mech.TestRelease
public import Odp.Mech.IQRMedian

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Link

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Mech

noncomputable section

variable {R X O : Type} [ExpField R]

/-- The position of a class of the partition `{values, ⊥}` in the certificate's class order. -/
def vobIndex : ValueOrBottom → Nat
  | .value => 0
  | .bottom => 1

theorem amt_two (D a : Nat) : (amt D (2 * a) : R) = 2 * amt D a := by
  rw [show 2 * a = a + a by omega, amt_add]
  grind

theorem amt_three (D a : Nat) : (amt D (3 * a) : R) = 3 * amt D a := by
  rw [show 3 * a = a + a + a by omega, amt_add, amt_add]
  grind

theorem vob_range {V : Type} (o : Option V) (l : List Nat) (hl : listLen l = 2) :
    vobIndex (vob o) < listLen l := by
  rw [hl]
  cases o
  · show 1 < 2; decide
  · show 0 < 2; decide

/-! ### PTR (Sec. 4.2, Definition 9) -/

/-- **Cost link, PTR**: an accepted `mech ptr` row with parameters `ε, δ` lists (values, ⊥) at
`ptrCosts (ε/D)` and the round's `δ` is `δ`. -/
theorem ptr_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindPtr ps gs = true) :
    (∀ b, (amt D (blockAt (vobIndex b) bs) : R) = ptrCosts (amt D (blockAt 0 ps)) b) ∧
      e.delta = blockAt 1 ps ∧ listLen bs = 2 := by
  obtain ⟨hb, hd⟩ := mechOk_ptr h
  refine ⟨fun b => ?_, hd, by rw [hb]; rfl⟩
  rw [hb]
  cases b
  · exact amt_two D _
  · rfl

/-- A request that is a round of a **PTR function** `T` at the proposal `s` (Sec. 4.2): it
releases `f` of `T s`'s output, labels values `0` and ⊥ `1`, and its rows pass `mech ptr` with
parameters `e, d`. Carried hypothesis: `T` is an `(e/D, d/D)`-PTR function (Definition 9). -/
inductive PtrBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro {C V : Type} [Enum V] (e d : Nat) (T : Option C → Mechanism X (Option V) R)
      (hT : IsPTRFunction Nbr T (amt D e) (amt D d)) (s : Option C) (f : Option V → O)
      (hreal : Realizes r (T s) f (fun o => vobIndex (vob o)))
      (hrow : mechOk r.rowEntry r.blocks true kindPtr [e, d] [] = true)

theorem PtrBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat} (hD : 0 < D)
    {r : Request X O R} (h : PtrBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, d, T, hT, s, f, hreal, hrow⟩ := h
  have hl := ptr_cost_link (R := R) D hrow
  have h1 := (ODP_iff_ODPcost Nbr _ vob (ptrCosts (amt D e)) (amt D d)).mp
    (ptr_odp Nbr T (amt D e) (amt D d) (amt_nonneg hD e) (amt_nonneg hD d) hT s)
  exact odp_of_realizes Nbr D hreal
    (odpCost_congr h1 (fun o => (hl.1 (vob o)).symm) (congrArg (amt D) hl.2.1.symm))

/-- **Honesty, PTR, on its own output type**. -/
theorem ptr_honest {C V : Type} [Enum V] [DecidableEq V] (Nbr : X → X → Prop) (D : Nat)
    (hD : 0 < D) (e d : Nat) (T : Option C → Mechanism X (Option V) R)
    (hT : IsPTRFunction Nbr T (amt D e) (amt D d)) (s : Option C) (r : Request X (Option V) R)
    (hM : r.M = T s) (hb : ∀ o, r.block o = vobIndex (vob o))
    (hrow : mechOk r.rowEntry r.blocks true kindPtr [e, d] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := PtrBuiltin.odpCost hD
    (PtrBuiltin.intro e d T hT s (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o]
  exact vob_range o _ (ptr_cost_link (R := R) D hrow).2.2

/-! ### M_IQR (Lemma 10, odp's log-bin discretisations) -/

/-- **Cost link, M_IQR**: an accepted `mech iqr` row with parameters `ε, δ` lists (values, ⊥) at
`iqrCosts (ε/D)` and the round's `δ` is `δ`. -/
theorem iqr_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindIqr ps gs = true) :
    (∀ b, (amt D (blockAt (vobIndex b) bs) : R) = iqrCosts (amt D (blockAt 0 ps)) b) ∧
      e.delta = blockAt 1 ps ∧ listLen bs = 2 := by
  obtain ⟨hb, hd⟩ := mechOk_iqr h
  refine ⟨fun b => ?_, hd, by rw [hb]; rfl⟩
  rw [hb]
  cases b
  · exact amt_three D _
  · exact amt_two D _

/-- A request that is a round of **odp's `M_IQR(ε, δ)`** with its laws written out
(`iqrLogBinLap`: the log-bin PTR function on the first discretisation and, on its ⊥, on the
second, each with `δ/2`; test noise the discrete Laplace of scale `1/ε`, release the sub-bin
index plus the discrete Laplace of scale `(L − 1)/ε` clamped to the declared index window): it
releases `f` of the output, labels values `0` and ⊥ `1`, and its rows pass `mech iqr` with
parameters `e, d`. Carried hypotheses: the pass tail `Pr(Z ≥ K) ≤ δ/2` (a fact about the number
`K`) and the stated data facts of both discretisations (`IQRDataFacts`); no noise hypothesis. -/
inductive IqrBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro {V : Type} [Enum V] [DecidableEq V] (e d : Nat) (hε : (0 : R) ≤ amt D e) (K : Int)
      (L : Nat) (lo₁ hi₁ : Int) (h₁ : lo₁ ≤ hi₁) (out₁ : Option (Window lo₁ hi₁) → V)
      (lo₂ hi₂ : Int) (h₂ : lo₂ ≤ hi₂) (out₂ : Option (Window lo₂ hi₂) → V) (A₁ A₂ : X → Int)
      (sub₁ sub₂ : X → Option Int) (htail : discreteLaplaceTail (amt D e : R) K ≤ amt D d / 2)
      (hd₁ : IQRDataFacts Nbr A₁ sub₁ L) (hd₂ : IQRDataFacts Nbr A₂ sub₂ L) (f : Option V → O)
      (hreal : Realizes r (iqrLogBinLap (amt D e) hε K L lo₁ hi₁ h₁ out₁ lo₂ hi₂ h₂ out₂ A₁ A₂
        sub₁ sub₂) f (fun o => vobIndex (vob o)))
      (hrow : mechOk r.rowEntry r.blocks true kindIqr [e, d] [] = true)

theorem IqrBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat} (hD : 0 < D)
    {r : Request X O R} (h : IqrBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, d, hε, K, L, lo₁, hi₁, h₁, out₁, lo₂, hi₂, h₂, out₂, A₁, A₂, sub₁, sub₂, htail, hd₁,
    hd₂, f, hreal, hrow⟩ := h
  have hl := iqr_cost_link (R := R) D hrow
  have h1 := (ODP_iff_ODPcost Nbr _ vob (iqrCosts (amt D e)) (amt D d)).mp
    (iqr_logBinLap_odp Nbr hε (amt_nonneg hD d) K L lo₁ hi₁ h₁ out₁ lo₂ hi₂ h₂ out₂ A₁ A₂ sub₁
      sub₂ htail hd₁ hd₂)
  exact odp_of_realizes Nbr D hreal
    (odpCost_congr h1 (fun o => (hl.1 (vob o)).symm) (congrArg (amt D) hl.2.1.symm))

/-- **Honesty, M_IQR, on its own output type**. -/
theorem iqr_honest {V : Type} [Enum V] [DecidableEq V] (Nbr : X → X → Prop) (D : Nat)
    (hD : 0 < D) (e d : Nat) (K : Int) (L : Nat) (lo₁ hi₁ : Int) (h₁ : lo₁ ≤ hi₁)
    (out₁ : Option (Window lo₁ hi₁) → V) (lo₂ hi₂ : Int) (h₂ : lo₂ ≤ hi₂)
    (out₂ : Option (Window lo₂ hi₂) → V) (A₁ A₂ : X → Int) (sub₁ sub₂ : X → Option Int)
    (htail : discreteLaplaceTail (amt D e : R) K ≤ amt D d / 2)
    (hd₁ : IQRDataFacts Nbr A₁ sub₁ L) (hd₂ : IQRDataFacts Nbr A₂ sub₂ L)
    (r : Request X (Option V) R)
    (hM : r.M = iqrLogBinLap (amt D e) (amt_nonneg hD e) K L lo₁ hi₁ h₁ out₁ lo₂ hi₂ h₂ out₂ A₁ A₂
      sub₁ sub₂)
    (hb : ∀ o, r.block o = vobIndex (vob o))
    (hrow : mechOk r.rowEntry r.blocks true kindIqr [e, d] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := IqrBuiltin.odpCost hD (IqrBuiltin.intro e d (amt_nonneg hD e) K L lo₁ hi₁ h₁ out₁
    lo₂ hi₂ h₂ out₂ A₁ A₂ sub₁ sub₂ htail hd₁ hd₂ (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o]
  exact vob_range o _ (iqr_cost_link (R := R) D hrow).2.2

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

/-! ### The exponential median (one class, Lemma 3) -/

/-- **Cost link, median**: one class costing `ε`, `δ = 0`. -/
theorem median_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindMedian ps gs = true) :
    (amt D (blockAt 0 bs) : R) = amt D (blockAt 0 ps) ∧ e.delta = 0 := by
  obtain ⟨hb, hd⟩ := mechOk_median h
  rw [hb]
  exact ⟨rfl, hd⟩

/-- A request that is a round of **odp's exponential median** (`expMech y₀ u (e/D)` on a public
finite grid `Y`): it releases `f` of the output, one class, rows passing `mech median` with
parameter `e`. Carried hypothesis: the stated `UtilitySensitivity`. -/
inductive MedianBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro {Y : Type} [Enum Y] (e : Nat) (y₀ : Y) (u : X → Y → Int)
      (hu : UtilitySensitivity Nbr u) (f : Y → O)
      (hreal : Realizes r (expMech y₀ u (amt D e)) f (fun _ => 0))
      (hrow : mechOk r.rowEntry r.blocks true kindMedian [e] [] = true)

theorem MedianBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    (hD : 0 < D) {r : Request X O R} (h : MedianBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, y₀, u, hu, f, hreal, hrow⟩ := h
  obtain ⟨hb, hd⟩ := mechOk_median hrow
  have hdp := expMedian_dp (R := R) Nbr y₀ u hu (amt D e) (amt_nonneg hD e)
  have hd' : r.delta = 0 := hd
  have hdp' : DP Nbr (expMech y₀ u (amt (R := R) D e)) (amt D e) (amt D r.delta) := by
    rw [hd', amt_zero]; exact hdp
  exact odp_of_realizes Nbr D hreal (dp_model_odpCost Nbr D _ hb hdp')

/-- **Honesty, median, on its own output type**. -/
theorem median_honest {Y : Type} [Enum Y] [DecidableEq Y] (Nbr : X → X → Prop) (D : Nat)
    (hD : 0 < D) (e : Nat) (y₀ : Y) (u : X → Y → Int) (hu : UtilitySensitivity Nbr u)
    (r : Request X Y R) (hM : r.M = expMech y₀ u (amt D e)) (hb : ∀ o, r.block o = 0)
    (hrow : mechOk r.rowEntry r.blocks true kindMedian [e] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := MedianBuiltin.odpCost hD
    (MedianBuiltin.intro e y₀ u hu (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o, (mechOk_median hrow).1]
  exact Nat.zero_lt_succ _

end

end Odp.Certs.Link
