/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Lemma 8 (Hartmann et al. 2022): the Sparse Vector Technique (Alg. 2) is (𝒫, ℰ, 0)-ODP

**Alg. 2** (`M_SVT`, Lyu, Su, Li 2017's variant with per-query thresholds, an explicit STOP and a
cut-off `c`), as odp runs it on the grid (`odp.mechanisms.svt`): query values and thresholds are
integers in grid units, every query has sensitivity `m` in grid units
(`|q_i(x) − q_i(x')| ≤ m` on neighbours); the threshold noise `ρ` is drawn once, discrete Laplace
of scale `m/ε1`; each query gets fresh noise `ν_i`, discrete Laplace of scale `2cm/ε2`; the
answer is ⊤ iff `q_i(x) + ν_i ≥ T_i + ρ`, else ⊥. The analyst chooses the next query and its
threshold, or STOP, as a function of the answers so far (`Analyst`). The run ends at STOP, at the
`c`-th ⊤, or after `N` queries. The output is the answer sequence (`Answers N`: lists of at most
`N` answers, a finite type).

**Lemma 8** (`svt_odp`). With 𝒫 the classes `S_{c'}` of outputs with `c'` ⊤ answers
(`svtBlock`, labels `c' ∈ {0, …, c}`) and `ℰ(S_{c'}) = ε1 + (c'/c)·ε2` (`svtCosts c ε1 ε2`),
`M_SVT` is (𝒫, ℰ, 0)-ODP.

*Hypotheses* (the trust boundary, `Odp/Mech/Common/Noise.lean`): `ρ` is a `LapNoise (ε1/m)` (a unit
shift of ρ costs `e^{ε1/m}`) and the tail `G t = Pr[ν_i ≥ t]` is a `LapTail (ε2/(2cm))`
(`G t ≤ e^{ε2/(2cm)} G (t + 1)`, antitone, in `[0, 1]`); the queries the analyst may choose have
sensitivity `m`. Nothing else.

*Proof* (the paper's, with sums for integrals and without division). Fix an output `a` with `c'`
⊤'s. Given `ρ = z`, the probability of `a` is a product over the answers
(`svtRun`; the analyst's choices depend on the answers only, so they are the same on `x` and
`x'`). Pointwise in `z`, database `x` at `z` is dominated by `x'` at `z + m` (`svtRun_couple`):
a ⊥ factor `1 − G(T + z − q(x)) ≤ 1 − G(T + z + m − q(x'))` (G antitone), a ⊤ factor
`G(T + z − q(x)) ≤ e^{ε2/c} G(T + z − q(x) + 2m) ≤ e^{ε2/c} G(T + z + m − q(x'))` — the shift of
the positive answers' noise by `2m` and of the threshold noise by `m`. Taking `𝔼_ρ` and shifting ρ
by `m` costs `e^{ε1}` (`svt_mass_le`): `Pr[a | x] ≤ e^{ε1 + c'ε2/c} Pr[a | x']`. This holds for every
output, hence for every event inside a class (`odp_of_pointwise`). Outputs with more than `c` ⊤'s
have probability 0 (`svtRun_eq_zero_of_many`).

The batch form (`odp.mechanisms.svt.SparseVectorMechanism`: a list of queries, `N` = its length,
STOP at its end) is the constant analyst `batchAnalyst` (`svt_batch_odp`); the interactive session
(`SVTSession`) is a general `Analyst` with its declared maximum number of queries `N`
(`svt_odp` itself). With `ε2 ≥ 0`, Lemma 4 gives Lyu, Su, Li 2017's (ε1 + ε2)-DP (`svt_dp`).

Narrower than the paper: the analyst is deterministic (a function of the answers so far); a
randomized analyst is a mixture of deterministic ones, drawn independently of the data, and
Theorem 7's randomized adversary (`Odp.Core.odp_composition_randomized`) covers that mixture. The
number of queries is bounded by `N` (the paper's stream is unbounded; odp's runs are bounded).
Queries and thresholds are integers on the grid (odp rounds them there); the noise is discrete.
-/
module

public import Odp.Mech.Common.Basic

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

/-! ### Answer sequences -/

/-- The number `c'` of ⊤ answers (odp: `count_top`). -/
def tops : List Bool → Nat
  | [] => 0
  | b :: l => (if b then 1 else 0) + tops l

theorem tops_nil : tops [] = 0 := rfl

theorem tops_cons_false (l : List Bool) : tops (false :: l) = tops l := by
  simp [tops]

theorem tops_cons_true (l : List Bool) : tops (true :: l) = tops l + 1 := by
  simp [tops]; omega

theorem tops_append (h : List Bool) (b : Bool) :
    tops (h ++ [b]) = tops h + (if b then 1 else 0) := by
  induction h with
  | nil => cases b <;> simp [tops]
  | cons a h ih =>
    rw [List.cons_append]
    cases a
    · rw [tops_cons_false, tops_cons_false, ih]
    · rw [tops_cons_true, tops_cons_true, ih]; omega

-- `boolLists n` (all answer lists of length at most `n`), the output type `Answers N` and its
-- `Enum` instance are in `Odp/Mech/Common/Enum.lean`.

/-- **The partition of Lemma 8**: the class `S_{c'}` of an output, `c'` its number of ⊤'s
(at most `c` for every output of positive probability; the others — probability 0 — are put
in the last class). -/
def svtBlock (c N : Nat) (a : Answers N) : Fin (c + 1) := ⟨min (tops a.val) c, by omega⟩

variable {R : Type} [ExpField R]

/-- **The costs of Lemma 8**: `ℰ(S_{c'}) = ε1 + (c'/c)·ε2`. -/
def svtCosts (c : Nat) (ε1 ε2 : R) (k : Fin (c + 1)) : R := ε1 + natR k.val / natR c * ε2

/-! ### Alg. 2 -/

/-- One query of Alg. 2 on the grid: its value `q x` on each database and its threshold `T`. -/
structure SVTQuery (X : Type) where
  /-- the query value in grid units -/
  q : X → Int
  /-- the threshold in grid units -/
  T : Int

/-- The analyst: from the answers so far (oldest first), the next query and threshold, or STOP
(`none`). -/
abbrev Analyst (X : Type) := List Bool → Option (SVTQuery X)

/-- The batch form: the queries of a list in order; STOP at its end. -/
def batchAnalyst {X : Type} (qs : List (SVTQuery X)) : Analyst X := fun h => qs[h.length]?

/-- `svtRun G A c x z n h a`: given the threshold noise `ρ = z`, with at most `n` more queries
allowed and the answers `h` so far, the probability that Alg. 2 on database `x` answers exactly
`a` next and then ends. `G t = Pr[ν ≥ t]`; the answer to `(q, T)` is ⊤ iff `q x + ν ≥ T + z`,
i.e. `ν ≥ T + z − q x`. It ends (probability 1 for `a = []`) at the cut-off `c ≤ c'`, at STOP,
or when no query is left. -/
def svtRun {X : Type} (G : Int → R) (A : Analyst X) (c : Nat) (x : X) (z : Int) :
    Nat → List Bool → List Bool → R
  | 0, _, a => if a = [] then 1 else 0
  | n + 1, h, a =>
    if c ≤ tops h then (if a = [] then 1 else 0) else
    match A h with
    | none => if a = [] then 1 else 0
    | some Q =>
      match a with
      | [] => 0
      | b :: a' =>
        (if b then G (Q.T + z - Q.q x) else 1 - G (Q.T + z - Q.q x))
          * svtRun G A c x z n (h ++ [b]) a'

section Run

variable {X : Type} (G : Int → R) (A : Analyst X) (c : Nat) (x : X) (z : Int)

theorem svtRun_zero (h a : List Bool) : svtRun G A c x z 0 h a = if a = [] then 1 else 0 := by
  simp [svtRun]

theorem svtRun_cut {n : Nat} {h : List Bool} (hc : c ≤ tops h) (a : List Bool) :
    svtRun G A c x z (n + 1) h a = if a = [] then 1 else 0 := by
  simp [svtRun, hc]

theorem svtRun_stop {n : Nat} {h : List Bool} (hc : ¬ c ≤ tops h) (hA : A h = none)
    (a : List Bool) : svtRun G A c x z (n + 1) h a = if a = [] then 1 else 0 := by
  simp [svtRun, hc, hA]

theorem svtRun_nil {n : Nat} {h : List Bool} {Q : SVTQuery X} (hc : ¬ c ≤ tops h)
    (hA : A h = some Q) : svtRun G A c x z (n + 1) h [] = 0 := by
  simp [svtRun, hc, hA]

theorem svtRun_cons {n : Nat} {h : List Bool} {Q : SVTQuery X} (hc : ¬ c ≤ tops h)
    (hA : A h = some Q) (b : Bool) (a : List Bool) :
    svtRun G A c x z (n + 1) h (b :: a)
      = (if b then G (Q.T + z - Q.q x) else 1 - G (Q.T + z - Q.q x))
          * svtRun G A c x z n (h ++ [b]) a := by
  simp [svtRun, hc, hA]

variable {G}

theorem svtRun_unit (hG0 : ∀ t, 0 ≤ G t) (hG1 : ∀ t, G t ≤ 1) :
    ∀ n h a, 0 ≤ svtRun G A c x z n h a ∧ svtRun G A c x z n h a ≤ 1
  | 0, h, a => by rw [svtRun_zero]; exact ite_unit _
  | n + 1, h, a => by
    by_cases hc : c ≤ tops h
    · rw [svtRun_cut G A c x z hc]; exact ite_unit _
    · cases hAh : A h with
      | none => rw [svtRun_stop G A c x z hc hAh]; exact ite_unit _
      | some Q =>
        cases a with
        | nil => rw [svtRun_nil G A c x z hc hAh]; grind
        | cons b a =>
          rw [svtRun_cons G A c x z hc hAh]
          have ih := svtRun_unit hG0 hG1 n (h ++ [b]) a
          have hu0 := hG0 (Q.T + z - Q.q x)
          have hu1 := hG1 (Q.T + z - Q.q x)
          have hf : 0 ≤ (if b then G (Q.T + z - Q.q x) else 1 - G (Q.T + z - Q.q x)) ∧
              (if b then G (Q.T + z - Q.q x) else 1 - G (Q.T + z - Q.q x)) ≤ 1 := by
            cases b
            · simp only [Bool.false_eq_true, if_false]; grind
            · simp only [if_true]; grind
          generalize (if b then G (Q.T + z - Q.q x) else 1 - G (Q.T + z - Q.q x)) = f at hf ⊢
          generalize svtRun G A c x z n (h ++ [b]) a = r at ih ⊢
          exact ⟨mul_nonneg' hf.1 ih.1, by have := mul_le_mul_left' f ih.2 hf.1; grind⟩

/-- The answer sequences of length at most `n` have total probability 1 (given `ρ = z`). -/
theorem svtRun_total (hG0 : ∀ t, 0 ≤ G t) (hG1 : ∀ t, G t ≤ 1) :
    ∀ n h, lsum (boolLists n) (svtRun G A c x z n h) = 1
  | 0, h => by
    simp only [boolLists, lsum_cons, lsum_nil, svtRun_zero, if_true]
    grind
  | n + 1, h => by
    simp only [boolLists]
    rw [lsum_cons, lsum_append, lsum_map, lsum_map]
    have halt : (∀ a, svtRun G A c x z (n + 1) h a = if a = [] then 1 else 0) →
        svtRun G A c x z (n + 1) h []
          + (lsum (boolLists n) (fun a => svtRun G A c x z (n + 1) h (false :: a))
            + lsum (boolLists n) (fun a => svtRun G A c x z (n + 1) h (true :: a))) = 1 := by
      intro hh
      rw [hh [], if_pos rfl]
      have h0 : ∀ b, lsum (boolLists n) (fun a => svtRun G A c x z (n + 1) h (b :: a)) = 0 := by
        intro b
        rw [← lsum_zero (R := R) (boolLists n)]
        apply lsum_congr
        intro a _
        rw [hh, if_neg (by simp)]
      rw [h0 false, h0 true]
      grind
    by_cases hc : c ≤ tops h
    · exact halt (svtRun_cut G A c x z hc)
    · cases hAh : A h with
      | none => exact halt (svtRun_stop G A c x z hc hAh)
      | some Q =>
        rw [svtRun_nil G A c x z hc hAh]
        have hF : lsum (boolLists n) (fun a => svtRun G A c x z (n + 1) h (false :: a))
            = (1 - G (Q.T + z - Q.q x))
              * lsum (boolLists n) (svtRun G A c x z n (h ++ [false])) := by
          rw [← lsum_mul_left]
          apply lsum_congr
          intro a _
          rw [svtRun_cons G A c x z hc hAh]
          simp only [Bool.false_eq_true, if_false]
        have hT : lsum (boolLists n) (fun a => svtRun G A c x z (n + 1) h (true :: a))
            = G (Q.T + z - Q.q x) * lsum (boolLists n) (svtRun G A c x z n (h ++ [true])) := by
          rw [← lsum_mul_left]
          apply lsum_congr
          intro a _
          rw [svtRun_cons G A c x z hc hAh]
          simp only [if_true]
        rw [hF, hT, svtRun_total hG0 hG1 n (h ++ [false]), svtRun_total hG0 hG1 n (h ++ [true])]
        grind

/-- An answer sequence with more than `c` ⊤'s (after at most `c` so far) has probability 0. -/
theorem svtRun_eq_zero_of_many :
    ∀ n h a, tops h ≤ c → c < tops h + tops a → svtRun G A c x z n h a = 0
  | 0, h, a, h1, h2 => by
    rw [svtRun_zero]
    cases a with
    | nil => rw [tops_nil] at h2; omega
    | cons b a => rfl
  | n + 1, h, a, h1, h2 => by
    by_cases hc : c ≤ tops h
    · rw [svtRun_cut G A c x z hc]
      cases a with
      | nil => rw [tops_nil] at h2; omega
      | cons b a => rfl
    · cases hAh : A h with
      | none =>
        rw [svtRun_stop G A c x z hc hAh]
        cases a with
        | nil => rw [tops_nil] at h2; omega
        | cons b a => rfl
      | some Q =>
        cases a with
        | nil => exact svtRun_nil G A c x z hc hAh
        | cons b a =>
          rw [svtRun_cons G A c x z hc hAh]
          have hz := svtRun_eq_zero_of_many n (h ++ [b]) a
            (by rw [tops_append]; cases b <;> simp <;> omega)
            (by
              rw [tops_append]
              cases b
              · rw [tops_cons_false] at h2; simp; omega
              · rw [tops_cons_true] at h2; simp; omega)
          rw [hz]
          grind

end Run

/-! ### The noise tail, iterated -/

namespace LapTail

variable {β : R} (ν : LapTail R β)

theorem anti_nat : ∀ (k : Nat) (t : Int), ν.G (t + k) ≤ ν.G t
  | 0, t => by
    have : t + ((0 : Nat) : Int) = t := by omega
    rw [this]; grind
  | k + 1, t => by
    have h1 := ν.anti (t + k)
    have h2 := anti_nat k t
    have : t + ((k + 1 : Nat) : Int) = t + k + 1 := by omega
    rw [this]; grind

theorem G_le_of_le {t t' : Int} (h : t ≤ t') : ν.G t' ≤ ν.G t := by
  have h1 := ν.anti_nat (t' - t).toNat t
  have : t + ((t' - t).toNat : Int) = t' := by omega
  rw [this] at h1
  exact h1

theorem ratio_nat : ∀ (k : Nat) (t : Int), ν.G t ≤ exp (natR k * β) * ν.G (t + k)
  | 0, t => by
    have : t + ((0 : Nat) : Int) = t := by omega
    rw [this, natR_zero]
    have h0 : (0 : R) * β = 0 := by grind
    rw [h0, exp_zero]; grind
  | k + 1, t => by
    have h1 := ratio_nat k t
    have h2 := ν.ratio (t + k)
    have h3 := mul_le_mul_left' (exp (natR k * β)) h2 (exp_nonneg _)
    have h4 : exp (natR (k + 1) * β) = exp (natR k * β) * exp β := by
      rw [← exp_add, natR_succ]; congr 1; grind
    have : t + ((k + 1 : Nat) : Int) = t + k + 1 := by omega
    rw [this, h4]
    generalize ν.G (t + k + 1) = g at h3
    generalize ν.G (t + k) = g' at h1 h3
    grind

end LapTail

/-! ### The coupling: `x` at `ρ = z` against `x'` at `ρ = z + m` -/

theorem halt_le (γ : R) (a : List Bool) :
    (if a = [] then (1 : R) else 0) ≤ exp (natR (tops a) * γ) * (if a = [] then 1 else 0) := by
  cases a with
  | nil =>
    rw [if_pos rfl, tops_nil, natR_zero]
    have : (0 : R) * γ = 0 := by grind
    rw [this, exp_zero]; grind
  | cons b a =>
    rw [if_neg (by simp)]; grind

/-- Pointwise in the threshold noise: `Pr[a | x, ρ = z] ≤ e^{c'·γ} Pr[a | x', ρ = z + m]`,
where `e^γ` bounds a shift of the query noise by `2m` and `c'` is the number of ⊤'s in `a`. -/
theorem svtRun_couple {X : Type} {β : R} (ν : LapTail R β) (A : Analyst X) (c m : Nat)
    (x x' : X) (hA : ∀ h Q, A h = some Q → Q.q x ≤ Q.q x' + m ∧ Q.q x' ≤ Q.q x + m) (γ : R)
    (hγ : ∀ t, ν.G t ≤ exp γ * ν.G (t + 2 * (m : Int))) (z : Int) :
    ∀ n h a, svtRun ν.G A c x z n h a
      ≤ exp (natR (tops a) * γ) * svtRun ν.G A c x' (z + m) n h a
  | 0, h, a => by
    rw [svtRun_zero, svtRun_zero]; exact halt_le γ a
  | n + 1, h, a => by
    by_cases hc : c ≤ tops h
    · rw [svtRun_cut _ A c x z hc, svtRun_cut _ A c x' (z + m) hc]; exact halt_le γ a
    · cases hAh : A h with
      | none =>
        rw [svtRun_stop _ A c x z hc hAh, svtRun_stop _ A c x' (z + m) hc hAh]
        exact halt_le γ a
      | some Q =>
        cases a with
        | nil =>
          rw [svtRun_nil _ A c x z hc hAh, svtRun_nil _ A c x' (z + m) hc hAh]; grind
        | cons b a =>
          rw [svtRun_cons _ A c x z hc hAh, svtRun_cons _ A c x' (z + m) hc hAh]
          have hq := hA h Q hAh
          have ih := svtRun_couple ν A c m x x' hA γ hγ z n (h ++ [b]) a
          have hr := (svtRun_unit A c x z ν.nonneg ν.le_one n (h ++ [b]) a).1
          have hr' := (svtRun_unit A c x' (z + m) ν.nonneg ν.le_one n (h ++ [b]) a).1
          have he := exp_nonneg (natR (tops a) * γ)
          generalize svtRun ν.G A c x z n (h ++ [b]) a = r at ih hr ⊢
          generalize svtRun ν.G A c x' (z + m) n (h ++ [b]) a = r' at ih hr' ⊢
          cases b
          · -- a ⊥ answer: `1 − G` is larger on `x'` at `z + m`
            rw [tops_cons_false]
            simp only [Bool.false_eq_true, if_false]
            have hG : ν.G (Q.T + (z + m) - Q.q x') ≤ ν.G (Q.T + z - Q.q x) :=
              ν.G_le_of_le (by omega)
            have hG1 := ν.le_one (Q.T + (z + m) - Q.q x')
            generalize ν.G (Q.T + (z + m) - Q.q x') = g' at hG hG1
            generalize ν.G (Q.T + z - Q.q x) = g at hG
            generalize exp (natR (tops a) * γ) = e at ih he
            have h1 := mul_le_mul_right' r (show 1 - g ≤ 1 - g' by grind) hr
            have h2 := mul_le_mul_left' (1 - g') ih (by grind)
            grind
          · -- a ⊤ answer: the query noise shifted by `2m` costs `e^γ`
            rw [tops_cons_true]
            simp only [if_true]
            have hG1 := hγ (Q.T + z - Q.q x)
            have hG2 : ν.G (Q.T + z - Q.q x + 2 * (m : Int)) ≤ ν.G (Q.T + (z + m) - Q.q x') :=
              ν.G_le_of_le (by omega)
            have hg0 := ν.nonneg (Q.T + (z + m) - Q.q x')
            have hγ0 := exp_nonneg γ
            have hG3 := mul_le_mul_left' (exp γ) hG2 hγ0
            have h4 : exp (natR (tops a + 1) * γ) = exp γ * exp (natR (tops a) * γ) := by
              rw [← exp_add, natR_succ]; congr 1; grind
            rw [h4]
            generalize ν.G (Q.T + (z + m) - Q.q x') = g' at hG2 hG3 hg0
            generalize ν.G (Q.T + z - Q.q x) = g at hG1
            generalize ν.G (Q.T + z - Q.q x + 2 * (m : Int)) = g2 at hG1 hG2 hG3
            generalize exp (natR (tops a) * γ) = e at ih he
            generalize exp γ = eγ at hG1 hG3 hγ0
            -- g ≤ eγ·g', r ≤ e·r'
            have h5 : g ≤ eγ * g' := by grind
            have h6 := mul_le_mul_right' r h5 hr
            have h7 := mul_le_mul_left' (eγ * g') ih (mul_nonneg' hγ0 hg0)
            grind

/-! ### The mechanism and Lemma 8 -/

/-- **`M_SVT`** (Alg. 2) on the grid: `Pr[a | x] = 𝔼_ρ[svtRun G A c x ρ N [] a]`, with `ρ` the
threshold noise and `G` the query noise's tail. -/
def svtMech {X : Type} {α β : R} (ρ : LapNoise R α) (ν : LapTail R β) (A : Analyst X)
    (c N : Nat) : Mechanism X (Answers N) R := fun x =>
  { mass := fun a => ρ.E (fun z => svtRun ν.G A c x z N [] a.val)
    nonneg := fun a => ρ.nonneg _ (Expect.bdd_unit
      (fun z => svtRun_unit A c x z ν.nonneg ν.le_one N [] a.val))
    total := by
      rw [Expect.E_fsum ρ.toExpect (fun (a : Answers N) (z : Int) => svtRun ν.G A c x z N [] a.val)
        (fun a => Expect.bdd_unit (fun z => svtRun_unit A c x z ν.nonneg ν.le_one N [] a.val))]
      have h : (fun z => fsum (fun a : Answers N => svtRun ν.G A c x z N [] a.val))
          = (fun _ => (1 : R)) := by
        funext z
        have h1 := fsum_ofSubtype (R := R) (fun a : List Bool => a.length ≤ N) (boolLists N)
          (nodup_boolLists N) (fun a h => (mem_boolLists N a).2 h)
          (fun a ha => (mem_boolLists N a).1 ha) (svtRun ν.G A c x z N [])
        exact h1.trans (svtRun_total A c x z ν.nonneg ν.le_one N [])
      rw [h, ρ.one] }

/-- The per-output bound of Lemma 8's proof:
`Pr[a | x] ≤ e^{m·α + c'·γ} Pr[a | x']` (then `m·α = ε1`, `γ = ε2/c`). -/
theorem svt_mass_le {X : Type} {α β : R} (ρ : LapNoise R α) (ν : LapTail R β) (A : Analyst X)
    (c m N : Nat) (x x' : X) (hA : ∀ h Q, A h = some Q → Q.q x ≤ Q.q x' + m ∧ Q.q x' ≤ Q.q x + m)
    (γ : R) (hγ : ∀ t, ν.G t ≤ exp γ * ν.G (t + 2 * (m : Int))) (a : Answers N) :
    (svtMech ρ ν A c N x).mass a
      ≤ exp (natR m * α + natR (tops a.val) * γ) * (svtMech ρ ν A c N x').mass a := by
  show ρ.E (fun z => svtRun ν.G A c x z N [] a.val)
    ≤ exp (natR m * α + natR (tops a.val) * γ) * ρ.E (fun z => svtRun ν.G A c x' z N [] a.val)
  have hb : ∀ y w, Bdd (fun z => svtRun ν.G A c y (z + w) N [] a.val) := fun y w =>
    Expect.bdd_unit (fun z => svtRun_unit A c y (z + w) ν.nonneg ν.le_one N [] a.val)
  have hb0 : ∀ y, Bdd (fun z => svtRun ν.G A c y z N [] a.val) := fun y =>
    Expect.bdd_unit (fun z => svtRun_unit A c y z ν.nonneg ν.le_one N [] a.val)
  have he := exp_nonneg (natR (tops a.val) * γ)
  have h1 : ρ.E (fun z => svtRun ν.G A c x z N [] a.val)
      ≤ ρ.E (fun z => exp (natR (tops a.val) * γ) * svtRun ν.G A c x' (z + m) N [] a.val) :=
    Expect.E_mono ρ.toExpect (hb0 x) (Expect.bdd_smul he (hb x' m))
      (fun z => svtRun_couple ν A c m x x' hA γ hγ z N [] a.val)
  have h2 := ρ.smul (exp (natR (tops a.val) * γ))
    (fun z => svtRun ν.G A c x' (z + m) N [] a.val) he (hb x' m)
  have h3 := ρ.shift_nat_up m (fun w => svtRun ν.G A c x' w N [] a.val) (hb0 x')
  have h4 := mul_le_mul_left' (exp (natR (tops a.val) * γ)) h3 he
  rw [h2] at h1
  have h5 : exp (natR m * α + natR (tops a.val) * γ)
      = exp (natR (tops a.val) * γ) * exp (natR m * α) := by
    rw [← exp_add]; congr 1; grind
  rw [h5]
  generalize ρ.E (fun z => svtRun ν.G A c x z N [] a.val) = p at h1
  generalize ρ.E (fun z => svtRun ν.G A c x' (z + m) N [] a.val) = p' at h1 h4
  generalize ρ.E (fun z => svtRun ν.G A c x' z N [] a.val) = q at h4
  generalize exp (natR (tops a.val) * γ) = e at h1 h4
  generalize exp (natR m * α) = f at h4
  grind

theorem natR_mul (a b : Nat) : (natR (a * b) : R) = natR a * natR b := by
  induction b with
  | zero => rw [Nat.mul_zero, natR_zero]; grind
  | succ b ih => rw [Nat.mul_succ, natR_add, ih, natR_succ]; grind

/-- **Lemma 8** (paper, Sec. 4.1): Alg. 2 with threshold noise of scale `m/ε1`, query noise of
scale `2cm/ε2`, cut-off `c` and at most `N` queries, chosen adaptively by the analyst `A` among
queries of sensitivity `m`, is (𝒫, ℰ, 0)-ODP with 𝒫 = {S_{c'}} (number of ⊤ answers) and
`ℰ(S_{c'}) = ε1 + (c'/c)·ε2`. -/
theorem svt_odp {X : Type} (Nbr : X → X → Prop) (m c N : Nat) (hm : 0 < m) (hc : 0 < c)
    (ε1 ε2 : R) (ρ : LapNoise R (ε1 / natR m)) (ν : LapTail R (ε2 / natR (2 * c * m)))
    (A : Analyst X)
    (hA : ∀ h Q, A h = some Q → ∀ x x', Nbr x x' → Q.q x ≤ Q.q x' + m ∧ Q.q x' ≤ Q.q x + m) :
    ODP Nbr (svtMech ρ ν A c N) (svtBlock c N) (svtCosts c ε1 ε2) 0 := by
  apply odp_of_pointwise
  intro x x' hx a
  by_cases hk : tops a.val ≤ c
  · have hγ : ∀ t, ν.G t
        ≤ exp (natR (2 * m) * (ε2 / natR (2 * c * m))) * ν.G (t + 2 * (m : Int)) := by
      intro t
      have h1 := ν.ratio_nat (2 * m) t
      have : t + ((2 * m : Nat) : Int) = t + 2 * (m : Int) := by omega
      rw [this] at h1
      exact h1
    have h := svt_mass_le ρ ν A c m N x x' (fun h Q hQ => hA h Q hQ x x' hx) _ hγ a
    have he : natR m * (ε1 / natR m)
          + natR (tops a.val) * (natR (2 * m) * (ε2 / natR (2 * c * m)))
        = svtCosts c ε1 ε2 (svtBlock c N a) := by
      unfold svtCosts svtBlock
      simp only
      rw [Nat.min_eq_left hk]
      have hmul : (natR (2 * c * m) : R) = natR c * natR (2 * m) := by
        rw [show 2 * c * m = c * (2 * m) by rw [Nat.mul_comm 2 c, Nat.mul_assoc]]
        exact natR_mul c (2 * m)
      rw [hmul]
      have hm0 := natR_pos (R := R) hm
      have hc0 := natR_pos (R := R) hc
      have h2m := natR_pos (R := R) (show 0 < 2 * m by omega)
      generalize (natR (tops a.val) : R) = nk
      generalize (natR m : R) = nm at hm0 ⊢
      generalize (natR c : R) = nc at hc0 ⊢
      generalize (natR (2 * m) : R) = n2m at h2m ⊢
      grind
    rw [he] at h
    exact h
  · have h0 : (svtMech ρ ν A c N x).mass a = 0 := by
      show ρ.E (fun z => svtRun ν.G A c x z N [] a.val) = 0
      have : (fun z => svtRun ν.G A c x z N [] a.val) = (fun _ => 0) := by
        funext z
        exact svtRun_eq_zero_of_many A c x z N [] a.val (by rw [tops_nil]; omega)
          (by rw [tops_nil]; omega)
      rw [this]
      exact Expect.E_zero ρ.toExpect
    rw [h0]
    exact mul_nonneg' (exp_nonneg _) ((svtMech ρ ν A c N x').nonneg a)

/-- **Lemma 8, batch form** (`odp.mechanisms.svt.SparseVectorMechanism`): the queries of a list,
in order, `N` = its length, STOP at its end. -/
theorem svt_batch_odp {X : Type} (Nbr : X → X → Prop) (m c : Nat) (hm : 0 < m) (hc : 0 < c)
    (ε1 ε2 : R) (ρ : LapNoise R (ε1 / natR m)) (ν : LapTail R (ε2 / natR (2 * c * m)))
    (qs : List (SVTQuery X))
    (hqs : ∀ Q ∈ qs, ∀ x x', Nbr x x' → Q.q x ≤ Q.q x' + m ∧ Q.q x' ≤ Q.q x + m) :
    ODP Nbr (svtMech ρ ν (batchAnalyst qs) c qs.length) (svtBlock c qs.length)
      (svtCosts c ε1 ε2) 0 :=
  svt_odp Nbr m c qs.length hm hc ε1 ε2 ρ ν (batchAnalyst qs)
    (fun _ Q hQ => hqs Q (List.mem_of_getElem? hQ))

/-- Lyu, Su, Li 2017's DP bound from Lemma 8 and Lemma 4: with `ε2 ≥ 0`, Alg. 2 is (ε1 + ε2)-DP. -/
theorem svt_dp {X : Type} (Nbr : X → X → Prop) (m c N : Nat) (hm : 0 < m) (hc : 0 < c)
    (ε1 ε2 : R) (hε2 : 0 ≤ ε2) (ρ : LapNoise R (ε1 / natR m))
    (ν : LapTail R (ε2 / natR (2 * c * m))) (A : Analyst X)
    (hA : ∀ h Q, A h = some Q → ∀ x x', Nbr x x' → Q.q x ≤ Q.q x' + m ∧ Q.q x' ≤ Q.q x + m) :
    DP Nbr (svtMech ρ ν A c N) (ε1 + ε2) 0 := by
  apply dp_of_odp Nbr _ (svtBlock c N) (svtCosts c ε1 ε2) 0 (ε1 + ε2) _
    (svt_odp Nbr m c N hm hc ε1 ε2 ρ ν A hA)
  intro k
  unfold svtCosts
  have hk := natR_le (R := R) (show k.val ≤ c by omega)
  have hc0 := natR_pos (R := R) hc
  have hinv := inv_pos' hc0
  have h1 : natR c * (natR c)⁻¹ = (1 : R) := Lean.Grind.Field.mul_inv_cancel (by grind)
  have h2 := mul_le_mul_right' (natR c)⁻¹ hk (by grind)
  have h3 : natR k.val / natR c ≤ (1 : R) := by
    rw [Lean.Grind.Field.div_eq_mul_inv]; grind
  have h4 := mul_le_mul_right' ε2 h3 hε2
  grind

end

end Odp.Mech
