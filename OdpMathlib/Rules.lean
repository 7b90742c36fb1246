/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

# Bridge: ledger rules (ℕ, units of `1/D`) ↔ budgets of Theorem 7 (ℝ, ℝ≥0∞)

* `amt D n = n / D` is the real amount of a ledger number, `eamt D n` the same in `ℝ≥0∞`.
* `admits_spec`: a ledger row is accepted exactly when Alg. 1, line 4 holds for the real amounts,
  and then `update` is lines 7–8 in the real / `ℝ≥0∞` budgets.
* `valid_of_ledgerValid`: an adversary every reachable round of which has a ledger row that the
  checker admits (with costs and `δ_i` bounded by the row) is `Adv.Valid` for the budget of the
  ledger, so Theorem 7 applies (`odp_composition_ledger`).
* `replay_spec`, `blocks_spec`, `deltas_spec`: what an accepted ledger, `blocks` row or `deltas`
  row means in real numbers.
-/
import Mathlib
import OdpMathlib.Prob
import OdpMathlib.Defs
import OdpMathlib.Composition
import Odp.LedgerCore

set_option autoImplicit false

noncomputable section

open scoped ENNReal

namespace Odp

/-- The real amount of the ledger number `n` with denominator `D`. -/
def amt (D n : ℕ) : ℝ := (n : ℝ) / (D : ℝ)

/-- `amt` in `ℝ≥0∞` (used for `δ`). -/
def eamt (D n : ℕ) : ℝ≥0∞ := ENNReal.ofReal (amt D n)

theorem amt_nonneg (D n : ℕ) : 0 ≤ amt D n := by
  unfold amt
  positivity

theorem amt_sub (D : ℕ) {a b : ℕ} (h : b ≤ a) : amt D (a - b) = amt D a - amt D b := by
  unfold amt
  rw [Nat.cast_sub h, sub_div]

theorem amt_le (D : ℕ) {a b : ℕ} (h : a ≤ b) : amt D a ≤ amt D b := by
  have h1 : 0 ≤ amt D (b - a) := amt_nonneg D (b - a)
  rw [amt_sub D h] at h1
  exact sub_nonneg.mp h1

theorem amt_le_iff (D : ℕ) (hD : 0 < D) {a b : ℕ} : amt D a ≤ amt D b ↔ a ≤ b := by
  constructor
  · intro h
    by_contra hab
    have hba : b ≤ a := by omega
    have hab' : 0 < a - b := by omega
    have hpos : 0 < amt D (a - b) := by
      unfold amt
      exact div_pos (Nat.cast_pos.mpr hab') (Nat.cast_pos.mpr hD)
    rw [amt_sub D hba] at hpos
    linarith
  · exact amt_le D

theorem eamt_sub (D : ℕ) {a b : ℕ} (h : b ≤ a) : eamt D (a - b) = eamt D a - eamt D b := by
  unfold eamt
  rw [amt_sub D h, ENNReal.ofReal_sub _ (amt_nonneg D b)]

theorem eamt_le (D : ℕ) {a b : ℕ} (h : a ≤ b) : eamt D a ≤ eamt D b :=
  ENNReal.ofReal_le_ofReal (amt_le D h)

theorem eamt_le_iff (D : ℕ) (hD : 0 < D) {a b : ℕ} : eamt D a ≤ eamt D b ↔ a ≤ b := by
  unfold eamt
  rw [ENNReal.ofReal_le_ofReal_iff (amt_nonneg D b)]
  exact amt_le_iff D hD

/-- **Rule bridge.** With `D > 0`: a ledger row is admitted iff Alg. 1, line 4 holds for the real
amounts (`ℰ_i(P_{i,k}) ≤ sup ℰ_i ≤ ε_r`, `δ_i ≤ δ_r`), and then `update` performs exactly the
updates of lines 7–8 (`ε_r − ℰ_i(P_{i,k})` in `ℝ`, `δ_r − δ_i` in `ℝ≥0∞`). -/
theorem admits_spec (D : ℕ) (hD : 0 < D) (s : LedgerCore.State) (e : LedgerCore.Entry) :
    (LedgerCore.admits s e = true ↔
      (amt D e.charged ≤ amt D e.supEps ∧ amt D e.supEps ≤ amt D s.eps ∧
        eamt D e.delta ≤ eamt D s.delta)) ∧
    (LedgerCore.admits s e = true →
      amt D (LedgerCore.update s e).eps = amt D s.eps - amt D e.charged ∧
        eamt D (LedgerCore.update s e).delta = eamt D s.delta - eamt D e.delta) := by
  constructor
  · exact (LedgerCore.admits_iff s e).trans
      (and_congr (amt_le_iff D hD).symm (and_congr (amt_le_iff D hD).symm (eamt_le_iff D hD).symm))
  · intro h
    obtain ⟨h1, h2, h3⟩ := (LedgerCore.admits_iff s e).mp h
    have hc : e.charged ≤ s.eps := Nat.le_trans h1 h2
    exact ⟨amt_sub D hc, eamt_sub D h3⟩

/-- An accepted ledger in real numbers: the total charge is within `ε_t`, the total `δ` within
`δ_t`, and the final budget is what is left. -/
theorem replay_spec (D : ℕ) (es : List LedgerCore.Entry) (s t : LedgerCore.State)
    (h : LedgerCore.replay s es = some t) :
    amt D (LedgerCore.totalCharged es) ≤ amt D s.eps ∧
      eamt D (LedgerCore.totalDelta es) ≤ eamt D s.delta ∧
      amt D t.eps = amt D s.eps - amt D (LedgerCore.totalCharged es) ∧
      eamt D t.delta = eamt D s.delta - eamt D (LedgerCore.totalDelta es) := by
  obtain ⟨h1, h2, h3, h4⟩ := LedgerCore.replay_sound es s t h
  refine ⟨amt_le D h1, eamt_le D h2, ?_, ?_⟩
  · rw [h3]
    exact amt_sub D h1
  · rw [h4]
    exact eamt_sub D h2

/-- An accepted `blocks` row in real numbers (Lemma 4): every block cost is at most the declared
DP ε, and the charge is the cost of the realised block. -/
theorem blocks_spec (D : ℕ) {e : LedgerCore.Entry} {bs : List ℕ} {k : ℕ}
    (h : LedgerCore.blocksOk e bs k = true) :
    (∀ j, amt D (LedgerCore.blockAt j bs) ≤ amt D e.supEps) ∧
      k < LedgerCore.listLen bs ∧ amt D e.charged = amt D (LedgerCore.blockAt k bs) := by
  obtain ⟨_, h2, h3⟩ := LedgerCore.blocksOk_sound h
  obtain ⟨hb, _⟩ := LedgerCore.blocksOk_bound h
  refine ⟨fun j => amt_le D (hb j), h2, ?_⟩
  rw [h3]

/-- An accepted `deltas` row in `ℝ≥0∞` (Lemma 6): `∑_k Δ_k ≤ δ_i`. -/
theorem deltas_spec (D : ℕ) {e : LedgerCore.Entry} {ds : List ℕ}
    (h : LedgerCore.deltasOk e ds = true) : eamt D (LedgerCore.listSum ds) ≤ eamt D e.delta :=
  eamt_le D (LedgerCore.deltasOk_sound h)

variable {X O : Type}

/-- Every reachable round of the adversary `A`, started from the ledger budget `s`, has a ledger
row `⟨sE, chg o, dlt⟩` (the charge may depend on the realised output, `sE` (the declared sup) and `δ_i` may not)
that the checker admits, with the mechanism's costs and `δ_i` bounded by the row; the next round
starts from the updated ledger budget. -/
def LedgerValid (Nbr : X → X → Prop) (D : ℕ) : Adv X O → LedgerCore.State → Prop
  | .leaf, _ => True
  | .node c cont, s => ∃ (sE dlt : ℕ) (chg : O → ℕ),
      Nbr c.x₀ c.x₁ ∧ ODPcost Nbr c.M c.cost c.delta ∧
        (∀ o, c.cost o ≤ amt D (chg o)) ∧ c.delta ≤ eamt D dlt ∧
        (∀ o, LedgerCore.admits s ⟨sE, chg o, dlt⟩ = true) ∧
        ∀ o, LedgerValid Nbr D (cont o) (LedgerCore.update s ⟨sE, chg o, dlt⟩)

theorem ledgerValid_node_iff (Nbr : X → X → Prop) (D : ℕ) (c : Choice X O)
    (cont : O → Adv X O) (s : LedgerCore.State) :
    LedgerValid Nbr D (Adv.node c cont) s ↔
      ∃ (sE dlt : ℕ) (chg : O → ℕ),
        Nbr c.x₀ c.x₁ ∧ ODPcost Nbr c.M c.cost c.delta ∧
          (∀ o, c.cost o ≤ amt D (chg o)) ∧ c.delta ≤ eamt D dlt ∧
          (∀ o, LedgerCore.admits s ⟨sE, chg o, dlt⟩ = true) ∧
          ∀ o, LedgerValid Nbr D (cont o) (LedgerCore.update s ⟨sE, chg o, dlt⟩) :=
  Iff.rfl

/-- **Ledger ⇒ validity.** An adversary whose rounds are all admitted by the ledger checker is
valid for the budget `(amt D s.eps, eamt D s.delta)` of the ledger. -/
theorem valid_of_ledgerValid (Nbr : X → X → Prop) (D : ℕ) :
    ∀ (A : Adv X O) (s : LedgerCore.State), LedgerValid Nbr D A s →
      A.Valid Nbr (amt D s.eps) (eamt D s.delta) := by
  intro A
  induction A with
  | leaf =>
    intro s _
    exact trivial
  | node c cont ih =>
    intro s h
    obtain ⟨sE, dlt, chg, hN, hODP, hcost, hdel, hadm, hcont⟩ :=
      (ledgerValid_node_iff Nbr D c cont s).mp h
    have hrow : ∀ o, chg o ≤ sE ∧ sE ≤ s.eps ∧ dlt ≤ s.delta := fun o =>
      (LedgerCore.admits_iff s ⟨sE, chg o, dlt⟩).mp (hadm o)
    refine (Adv.valid_node_iff Nbr c cont (amt D s.eps) (eamt D s.delta)).mpr
      ⟨hN, hODP, ?_, ?_, ?_⟩
    · intro o
      have hc : chg o ≤ s.eps := Nat.le_trans (hrow o).1 (hrow o).2.1
      exact le_trans (hcost o) (amt_le D hc)
    · obtain ⟨o, _⟩ := (c.M c.x₀).support_nonempty
      exact le_trans hdel (eamt_le D (hrow o).2.2)
    · intro o
      have hc : chg o ≤ s.eps := Nat.le_trans (hrow o).1 (hrow o).2.1
      have hd : dlt ≤ s.delta := (hrow o).2.2
      have hv := ih o (LedgerCore.update s ⟨sE, chg o, dlt⟩) (hcont o)
      refine Adv.Valid.mono Nbr (cont o) _ _ _ _ hv ?_ ?_
      · show amt D (s.eps - chg o) ≤ amt D s.eps - c.cost o
        rw [amt_sub D hc]
        linarith [hcost o]
      · show eamt D (s.delta - dlt) ≤ eamt D s.delta - c.delta
        rw [eamt_sub D hd]
        exact tsub_le_tsub_left hdel (eamt D s.delta)

/-- **Theorem 7 from a ledger.** If the checker admits every reachable round of `A` starting from
the ledger budget `⟨εt, δt⟩` (units of `1/D`), then for every set of views `𝒱`,
`Pr(V⁰ ∈ 𝒱) ≤ e^{εt/D} Pr(V¹ ∈ 𝒱) + δt/D`. -/
theorem odp_composition_ledger (Nbr : X → X → Prop) (D : ℕ) (A : Adv X O) (εt δt : ℕ)
    (hA : LedgerValid Nbr D A ⟨εt, δt⟩) (V : Set (List O)) :
    Pr (Adv.view Choice.x₀ A) V
      ≤ ENNReal.ofReal (Real.exp (amt D εt)) * Pr (Adv.view Choice.x₁ A) V + eamt D δt :=
  odp_composition Nbr A (amt D εt) (eamt D δt) (amt_nonneg D εt)
    (valid_of_ledgerValid Nbr D A ⟨εt, δt⟩ hA) V

end Odp
