/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

# Ledger rules over natural numbers (core Lean only, no Mathlib)

A run of the accountant is exported as natural numbers in units of `1/D` (`D` is the lcm of all
denominators), so the rules of Alg. 1 become linear facts over `Nat`:

* `admits s e`: line 4 (`charged ≤ supEps`, `supEps ≤ ε_r`, `δ_i ≤ δ_r`);
* `update s e`: lines 7–8 (`ε_r := ε_r − ℰ_i(P_{i,k})`, `δ_r := δ_r − δ_i`);
* `replay`: the whole ledger;
* `blocksOk`: a Lemma 4 row (`supEps` is the maximum of the declared block costs and `charged`
  is the cost of the realised block);
* `deltasOk`: a Lemma 6 row (`δ_i ≥ ∑_k Δ_k`);
* `refundJustified`: a step charged below its declared sup must carry a `blocks` row.

`Odp/Core/Ledger.lean` relates these rules to Theorem 7 (compiled with this file in CI);
`Odp/Rules.lean` relates them to the real and `ℝ≥0∞` budgets of the Mathlib statement (stated
only: never compiled here).

The definitions between the GENERATOR SUBSET markers are read by `scripts/gen_rules.py` and
translated to Python. They use only: `structure` with `Nat` fields; `def` with one expression
built from literals, variables, field access, application of defs of this file, `+`, `-`
(truncated), `*`, `decide (a ≤ b)`, `decide (a < b)`, `decide (a = b)`, `&&`, `||`, `!`,
`if c then a else b` (with `c : Bool`), anonymous constructors, structure instances, `some`,
`none`, `true`, `false`; and list recursion written as two lines `| [] => …` and
`| x :: xs => …`.
-/
module

@[expose] public section

set_option autoImplicit false
-- `listLen` names the head of the list without using it (generator grammar: `| x :: xs`).
set_option linter.unusedVariables false

namespace Odp.LedgerCore

-- BEGIN GENERATOR SUBSET

/-- Remaining budget of Alg. 1, in units of `1/D`. -/
structure State where
  eps : Nat    -- remaining ε budget ε_r
  delta : Nat  -- remaining δ budget δ_r
  deriving Repr, DecidableEq

/-- One realised round of Alg. 1, in units of `1/D`. -/
structure Entry where
  supEps : Nat   -- sup over the blocks of ℰ_i (the DP ε of M_i by Lemma 4)
  charged : Nat  -- ℰ_i(P_{i,k}) for the block k that contains the released output
  delta : Nat    -- δ_i, fixed before the output is seen
  deriving Repr, DecidableEq

/-- Alg. 1, line 4. -/
def admits (s : State) (e : Entry) : Bool :=
  decide (e.charged ≤ e.supEps) && decide (e.supEps ≤ s.eps) && decide (e.delta ≤ s.delta)

/-- Alg. 1, lines 7–8. -/
def update (s : State) (e : Entry) : State :=
  { eps := s.eps - e.charged, delta := s.delta - e.delta }

/-- Replay a ledger: `some t` with the final budget if every row is admitted, else `none`. -/
def replay (s : State) : List Entry → Option State
  | [] => some s
  | e :: es => if admits s e then replay (update s e) es else none

/-- Maximum of a list (`0` for the empty list). -/
def listMax : List Nat → Nat
  | [] => 0
  | x :: xs => if decide (listMax xs ≤ x) then x else listMax xs

/-- Length of a list. -/
def listLen : List Nat → Nat
  | [] => 0
  | x :: xs => listLen xs + 1

/-- The `k`-th element of a list (0-based; `0` past the end). -/
def blockAt (k : Nat) : List Nat → Nat
  | [] => 0
  | b :: bs => if decide (k = 0) then b else blockAt (k - 1) bs

/-- Sum of a list. -/
def listSum : List Nat → Nat
  | [] => 0
  | x :: xs => x + listSum xs

/-- Lemma 4 row `blocks E_1 … E_m ; realized k`: the declared DP ε is the maximum block cost,
the realised index is in range, and the charge is the cost of the realised block. -/
def blocksOk (e : Entry) (bs : List Nat) (k : Nat) : Bool :=
  decide (e.supEps = listMax bs) && decide (k < listLen bs) && decide (e.charged = blockAt k bs)

/-- Lemma 6 row `deltas Δ_1 … Δ_m`: the declared `δ_i` covers the sum of the subset-DP deltas. -/
def deltasOk (e : Entry) (ds : List Nat) : Bool :=
  decide (listSum ds ≤ e.delta)

/-- A step charged below its declared `supEps` claims an ODP refund; the refund must be backed by
a `blocks` row (Lemma 4: then the charge is the cost of the realised block). -/
def refundJustified (e : Entry) (hasBlocks : Bool) : Bool :=
  decide (e.supEps ≤ e.charged) || hasBlocks

-- END GENERATOR SUBSET

/-- Total charge of a ledger. -/
def totalCharged : List Entry → Nat
  | [] => 0
  | e :: es => e.charged + totalCharged es

/-- Total `δ` of a ledger. -/
def totalDelta : List Entry → Nat
  | [] => 0
  | e :: es => e.delta + totalDelta es

/-! ### Equations (all by `rfl`) -/

theorem replay_nil (s : State) : replay s [] = some s := rfl

theorem replay_cons (s : State) (e : Entry) (es : List Entry) :
    replay s (e :: es) = if admits s e then replay (update s e) es else none := rfl

theorem update_eps (s : State) (e : Entry) : (update s e).eps = s.eps - e.charged := rfl

theorem update_delta (s : State) (e : Entry) : (update s e).delta = s.delta - e.delta := rfl

theorem totalCharged_nil : totalCharged [] = 0 := rfl

theorem totalCharged_cons (e : Entry) (es : List Entry) :
    totalCharged (e :: es) = e.charged + totalCharged es := rfl

theorem totalDelta_nil : totalDelta [] = 0 := rfl

theorem totalDelta_cons (e : Entry) (es : List Entry) :
    totalDelta (e :: es) = e.delta + totalDelta es := rfl

theorem listMax_cons (x : Nat) (xs : List Nat) :
    listMax (x :: xs) = if decide (listMax xs ≤ x) then x else listMax xs := rfl

theorem blockAt_cons (k b : Nat) (bs : List Nat) :
    blockAt k (b :: bs) = if decide (k = 0) then b else blockAt (k - 1) bs := rfl

/-! ### Booleans -/

theorem band_left {a b : Bool} (h : (a && b) = true) : a = true := by
  revert h
  cases a <;> cases b <;> decide

theorem band_right {a b : Bool} (h : (a && b) = true) : b = true := by
  revert h
  cases a <;> cases b <;> decide

theorem band_intro {a b : Bool} (ha : a = true) (hb : b = true) : (a && b) = true := by
  revert ha hb
  cases a <;> cases b <;> decide

/-! ### Soundness -/

/-- An accepted row is exactly the three inequalities of Alg. 1, line 4. -/
theorem admits_iff (s : State) (e : Entry) :
    admits s e = true ↔ (e.charged ≤ e.supEps ∧ e.supEps ≤ s.eps ∧ e.delta ≤ s.delta) := by
  constructor
  · intro h
    have h' : (decide (e.charged ≤ e.supEps) && decide (e.supEps ≤ s.eps)
        && decide (e.delta ≤ s.delta)) = true := h
    exact ⟨of_decide_eq_true (band_left (band_left h')),
      of_decide_eq_true (band_right (band_left h')), of_decide_eq_true (band_right h')⟩
  · intro h
    exact band_intro (band_intro (decide_eq_true h.1) (decide_eq_true h.2.1))
      (decide_eq_true h.2.2)

/-- **Replay soundness.** If the ledger replays to `t`, the total charge and the total `δ` fit in
the starting budget, and the final budget is the starting budget minus the totals. -/
theorem replay_sound (es : List Entry) :
    ∀ (s t : State), replay s es = some t →
      totalCharged es ≤ s.eps ∧ totalDelta es ≤ s.delta ∧
        t.eps = s.eps - totalCharged es ∧ t.delta = s.delta - totalDelta es := by
  induction es with
  | nil =>
    intro s t h
    rw [replay_nil] at h
    have hst : s = t := Option.some.inj h
    subst hst
    rw [totalCharged_nil, totalDelta_nil]
    refine ⟨Nat.zero_le _, Nat.zero_le _, ?_, ?_⟩ <;> omega
  | cons e es ih =>
    intro s t h
    rw [replay_cons] at h
    by_cases ha : admits s e = true
    · rw [if_pos ha] at h
      obtain ⟨a1, a2, a3⟩ := (admits_iff s e).mp ha
      have ih' := ih (update s e) t h
      rw [update_eps, update_delta] at ih'
      obtain ⟨i1, i2, i3, i4⟩ := ih'
      rw [totalCharged_cons, totalDelta_cons]
      refine ⟨?_, ?_, ?_, ?_⟩ <;> omega
    · rw [if_neg ha] at h
      cases h

/-- The head of a list and the maximum of its tail are at most the maximum of the list. -/
theorem listMax_cons_ge (x : Nat) (xs : List Nat) :
    x ≤ listMax (x :: xs) ∧ listMax xs ≤ listMax (x :: xs) := by
  rw [listMax_cons]
  by_cases h : listMax xs ≤ x
  · rw [if_pos (decide_eq_true h)]
    exact ⟨Nat.le_refl x, h⟩
  · rw [if_neg (fun h' : decide (listMax xs ≤ x) = true => h (of_decide_eq_true h'))]
    exact ⟨by omega, Nat.le_refl _⟩

/-- Every block is at most the maximum (Lemma 4: `ℰ(P_j) ≤ sup_k ℰ(P_k)`). -/
theorem blockAt_le_listMax (bs : List Nat) : ∀ (k : Nat), blockAt k bs ≤ listMax bs := by
  induction bs with
  | nil =>
    intro k
    exact Nat.zero_le _
  | cons b bs ih =>
    intro k
    have hm := listMax_cons_ge b bs
    rw [blockAt_cons]
    by_cases hk : k = 0
    · rw [if_pos (decide_eq_true hk)]
      exact hm.1
    · rw [if_neg (fun h' : decide (k = 0) = true => hk (of_decide_eq_true h'))]
      exact Nat.le_trans (ih (k - 1)) hm.2

/-- What an accepted `blocks` row certifies. -/
theorem blocksOk_sound {e : Entry} {bs : List Nat} {k : Nat} (h : blocksOk e bs k = true) :
    e.supEps = listMax bs ∧ k < listLen bs ∧ e.charged = blockAt k bs := by
  have h' : (decide (e.supEps = listMax bs) && decide (k < listLen bs)
      && decide (e.charged = blockAt k bs)) = true := h
  exact ⟨of_decide_eq_true (band_left (band_left h')),
    of_decide_eq_true (band_right (band_left h')), of_decide_eq_true (band_right h')⟩

/-- An accepted `blocks` row bounds every block by `supEps`, and in particular the charge. -/
theorem blocksOk_bound {e : Entry} {bs : List Nat} {k : Nat} (h : blocksOk e bs k = true) :
    (∀ j, blockAt j bs ≤ e.supEps) ∧ e.charged ≤ e.supEps := by
  obtain ⟨h1, _, h3⟩ := blocksOk_sound h
  refine ⟨fun j => ?_, ?_⟩
  · have hj := blockAt_le_listMax bs j
    omega
  · have hk := blockAt_le_listMax bs k
    omega

theorem bor_false {a : Bool} (h : (a || false) = true) : a = true := by
  revert h
  cases a <;> decide

/-- A step without a `blocks` row that passes `refundJustified` is charged at least its declared
`supEps` (so, with `admits`, exactly its sup): no refund without a realised block. -/
theorem refundJustified_no_blocks {e : Entry} (h : refundJustified e false = true) :
    e.supEps ≤ e.charged := by
  have h' : (decide (e.supEps ≤ e.charged) || false) = true := h
  exact of_decide_eq_true (bor_false h')

/-- What an accepted `deltas` row certifies. -/
theorem deltasOk_sound {e : Entry} {ds : List Nat} (h : deltasOk e ds = true) :
    listSum ds ≤ e.delta := by
  have h' : decide (listSum ds ≤ e.delta) = true := h
  exact of_decide_eq_true h'

/-! ### Whole certificates (what `odp verify --kernel` asks the kernel to decide) -/

/-- One step of a certificate: its row, and its optional `blocks E… ; realized k` (Lemma 4) and
`deltas Δ…` (Lemma 6) rows. -/
structure CertStep where
  entry : Entry
  blocks : Option (List Nat × Nat)
  deltas : Option (List Nat)

/-- The rules of a step besides `admits`: its Lemma 4 row, its Lemma 6 row, and no refund without
a `blocks` row (`refundJustified`). The generated Python checker applies the same four rules. -/
def stepRowsOk (c : CertStep) : Bool :=
  (match c.blocks with
    | some (bs, k) => blocksOk c.entry bs k
    | none => true) &&
  (match c.deltas with
    | some ds => deltasOk c.entry ds
    | none => true) &&
  refundJustified c.entry c.blocks.isSome

/-- Replay a whole certificate: every step passes `admits` and `stepRowsOk`. -/
def checkCert (s : State) : List CertStep → Option State
  | [] => some s
  | c :: cs => if admits s c.entry && stepRowsOk c then checkCert (update s c.entry) cs else none

theorem checkCert_nil (s : State) : checkCert s [] = some s := rfl

theorem checkCert_cons (s : State) (c : CertStep) (cs : List CertStep) :
    checkCert s (c :: cs)
      = if admits s c.entry && stepRowsOk c then checkCert (update s c.entry) cs else none := rfl

/-- A certificate read in chunks: the first chunk ends where the second starts. -/
theorem checkCert_append (l₁ : List CertStep) :
    ∀ (l₂ : List CertStep) (s t u : State), checkCert s l₁ = some t → checkCert t l₂ = some u →
      checkCert s (l₁ ++ l₂) = some u := by
  induction l₁ with
  | nil =>
    intro l₂ s t u h1 h2
    rw [checkCert_nil] at h1
    have hst : s = t := Option.some.inj h1
    subst hst
    exact h2
  | cons c cs ih =>
    intro l₂ s t u h1 h2
    rw [checkCert_cons] at h1
    rw [List.cons_append, checkCert_cons]
    by_cases h : (admits s c.entry && stepRowsOk c) = true
    · rw [if_pos h] at h1
      rw [if_pos h]
      exact ih l₂ (update s c.entry) t u h1 h2
    · rw [if_neg h] at h1
      cases h1

/-- **What an accepted certificate means**: its rows replay under Alg. 1's rules to the final
budget `t`, and every step's Lemma 4, Lemma 6 and refund rows hold. -/
theorem checkCert_sound (cs : List CertStep) :
    ∀ (s t : State), checkCert s cs = some t →
      replay s (cs.map CertStep.entry) = some t ∧ ∀ c ∈ cs, stepRowsOk c = true := by
  induction cs with
  | nil =>
    intro s t h
    rw [checkCert_nil] at h
    refine ⟨h, ?_⟩
    intro c hc
    cases hc
  | cons c cs ih =>
    intro s t h
    rw [checkCert_cons] at h
    by_cases hc : (admits s c.entry && stepRowsOk c) = true
    · rw [if_pos hc] at h
      have ha : admits s c.entry = true := band_left hc
      have hr : stepRowsOk c = true := band_right hc
      obtain ⟨h1, h2⟩ := ih (update s c.entry) t h
      refine ⟨?_, ?_⟩
      · rw [List.map_cons, replay_cons, if_pos ha]
        exact h1
      · intro d hd
        cases hd with
        | head => exact hr
        | tail _ hmem => exact h2 d hmem
    · rw [if_neg hc] at h
      cases h

end Odp.LedgerCore
