/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# A finite model of Alg. 3 (`M_iter`, Hartmann et al. 2022, Sec. 5) and its cost functions

**The mechanism.** `M_iter[{k_i}_{i=1}^n, {M_k}_{k=1}^{k_n}, {h^{k_i}}_{i=1}^{n−1}]` runs the
steps `s_k = M_k((s_1, …, s_{k−1}), x)` and, after step `k_i` (`i < n`), returns
`(s_1, …, s_{k_i})` if `h^{k_i}(s_1, …, s_{k_i}) = 1`; after step `k_n` it returns
`(s_1, …, s_{k_n})`. Here:

* every step's output lies in a finite type `W` (odp clamps a step's release to a declared
  window; the Core's definitions need a finite output type);
* `M : Step X W R = List W → Mechanism X W R`: step `k` is the mechanism `M (s_1, …, s_{k−1})`,
  any function of the released history (adaptive steps; `Step`, the chain rule `chain` and the
  prefix mechanism `prefixMech` are in `Odp/Mech/Iterative/Steps.lean`, which the trust boundary
  `Odp/Mech/Common/Noise.lean` imports to state `StepsDP` and `PrefixDP`);
* the stops are `S.ks = [k_1, …, k_n]` (`Stops`), `n ≥ 1`, nondecreasing (the paper has
  `k_1 < … < k_n`; nothing below needs strictness);
* the stopping rules are `rule : Fin n → List W → Bool`, `rule i = h^{k_{i+1}}` (indices from 0),
  deterministic functions of the released history (the paper's w.l.o.g. assumption; a rule
  with its own coins or that reads the data is a further step, Sec. 5); `rule (n−1)` is never
  used (Alg. 3 always returns after `k_n` steps);
* the output is the stop index together with the history of that length,
  `IterOut W S.ks = Σ i : Fin n, Vec W (k_i)`; for strictly increasing stops the index is the
  length of the history, so this is the paper's output `(s_1, …, s_{k_i})`, and the partition
  `P_i = {s | |s| = k_i}` of Sec. 5 is `Sigma.fst` (block `i`).

By the chain rule the probability that Alg. 3 returns `(s_1, …, s_{k_i})` at stop `i` is
`∏_{k ≤ k_i} Pr(M_k((s_1, …, s_{k−1}), x) = s_k)` (`chain`) times the indicator that
`h^{k_j}(s_1, …, s_{k_j}) = 0` for every `j < i` and that `h^{k_i}(s_1, …, s_{k_i}) = 1` or
`i = n` (`Stopped`): that is `iterMass`, and `iterMass_total` proves that these masses sum to 1
(every run of all `k_n` steps stops at exactly one stop, and the steps after it do not change
the probability of the prefix: `chain_marginal`). The prefix mechanism `M^{k} = (M_1, …, M_k)`
of Lemma 11's proof is `prefixMech M k` (all `k` steps, no stopping).

**The costs** (`Odp.Mech.iterCosts`, `Odp.Mech.iterDeltaBasic`): with step parameters
`eps = [ε_1, …, ε_{k_n}]`, `dl = [δ_1, …, δ_{k_n}]`, the basic-composition cost of the class
"stopped after `k_i` steps" is `ℰ(P_i) = Σ_{k ≤ k_i} ε_k` (`prefSum eps k_i`), and Lemma 11's δ
with basic composition is `Σ_i Σ_{k ≤ k_i} δ_k`, exactly `odp.composition.basic_costs` and
`Lemma11(BasicComposition())`.

**The steps of `NoisyGradientDescent`** (`noisyStep`): the centre is an integer vector
`g (history) x` of dimension `d` (`l1`, in `Steps.lean`, is the distance of two centres); each coordinate `u_j` is released as a draw from `N u_j`, a
distribution on a finite window `C` (the clamped `u_j + Z_j`, `Z_j` discrete Laplace), the
coordinates independent (`prodDist`).

Nothing in this file is a hypothesis: it defines the model and proves it is a distribution.
-/
module

public import Odp.Mech.Iterative.Steps

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech.Iter

open Odp.Core Odp.Core.ExpField

noncomputable section

variable {R X W : Type} [ExpField R] [Enum W]

/-! ### Stops, stopping rules and Alg. 3 -/

/-- The stopping points `k_1, …, k_n` (`ks`, indexed from 0), `n ≥ 1`, nondecreasing. -/
structure Stops where
  ks : List Nat
  pos : 0 < ks.length
  mono : ∀ i j : Fin ks.length, i ≤ j → ks.get i ≤ ks.get j

/-- The output of Alg. 3: a stop index `i` and a history of length `k_i`. -/
abbrev IterOut (W : Type) (ks : List Nat) := Σ i : Fin ks.length, Vec W (ks.get i)

/-- Alg. 3 returns the history `h` (of length `k_i`) at stop `i`: no earlier rule fired on its
prefix (line 5 with `h^{k_j} = 0` for `j < i`), and the rule of stop `i` fired or `i` is the last
stop (line 7). -/
def Stopped (ks : List Nat) (rule : Fin ks.length → List W → Bool) (i : Fin ks.length)
    (h : List W) : Prop :=
  (∀ j : Fin ks.length, j < i → rule j (h.take (ks.get j)) = false) ∧
    (i.val + 1 = ks.length ∨ rule i h = true)

open Classical in
/-- `Pr(M_iter(x) = (i, h))` by the chain rule (see the header). -/
def iterMass (M : Step X W R) (ks : List Nat) (rule : Fin ks.length → List W → Bool) (x : X)
    (o : IterOut W ks) : R :=
  chain M x [] o.2.1 * (if Stopped ks rule o.1 o.2.1 then 1 else 0)

theorem fin_lt_iff {n : Nat} (a b : Fin n) : a < b ↔ a.val < b.val := Iff.rfl

/-- Exactly one index is the first `true` of a sequence of Booleans that has a `true`. -/
theorem fsum_first_true : ∀ (n : Nat) (b : Fin n → Bool), (∃ i, b i = true) →
    fsum (fun i => if (b i = true ∧ ∀ j, j < i → b j = false) then (1 : R) else 0) = 1
  | 0, _, ⟨i, _⟩ => i.elim0
  | n + 1, b, hex => by
    rw [fsum_fin_succ]
    have h0 : (b 0 = true ∧ ∀ j, j < (0 : Fin (n + 1)) → b j = false) ↔ b 0 = true := by
      constructor
      · exact fun h => h.1
      · intro h
        refine ⟨h, fun j hj => ?_⟩
        rw [fin_lt_iff] at hj
        simp at hj
    have hs : ∀ i : Fin n, (∀ j, j < i.succ → b j = false)
        ↔ (b 0 = false ∧ ∀ j, j < i → b j.succ = false) := by
      intro i
      constructor
      · intro h
        refine ⟨h 0 (Fin.succ_pos i), fun j hj => h j.succ (Fin.succ_lt_succ_iff.mpr hj)⟩
      · intro ⟨h1, h2⟩ j hj
        cases j using Fin.cases with
        | zero => exact h1
        | succ j' => exact h2 j' (Fin.succ_lt_succ_iff.mp hj)
    by_cases hb : b 0 = true
    · have hz : ∀ i : Fin n,
          (if (b i.succ = true ∧ ∀ j, j < i.succ → b j = false) then (1 : R) else 0) = 0 := by
        intro i
        have hn : ¬ (b i.succ = true ∧ ∀ j, j < i.succ → b j = false) := by
          intro ⟨_, h⟩
          have := ((hs i).mp h).1
          rw [hb] at this
          cases this
        rw [if_neg hn]
      rw [fsum_congr hz, fsum_zero, if_pos (h0.mpr hb)]
      grind
    · have hbf : b 0 = false := by
        cases h : b 0
        · rfl
        · exact absurd h hb
      have hex' : ∃ i : Fin n, b i.succ = true := by
        obtain ⟨i, hi⟩ := hex
        cases i using Fin.cases with
        | zero => exact absurd hi hb
        | succ i' => exact ⟨i', hi⟩
      have ih := fsum_first_true n (fun i => b i.succ) hex'
      have he : ∀ i : Fin n,
          (if (b i.succ = true ∧ ∀ j, j < i.succ → b j = false) then (1 : R) else 0)
          = (if (b i.succ = true ∧ ∀ j, j < i → b j.succ = false) then (1 : R) else 0) := by
        intro i
        have hiff : (b i.succ = true ∧ ∀ j, j < i.succ → b j = false)
            ↔ (b i.succ = true ∧ ∀ j, j < i → b j.succ = false) := by
          rw [hs i]
          constructor
          · exact fun h => ⟨h.1, h.2.2⟩
          · exact fun h => ⟨h.1, hbf, h.2⟩
        by_cases hc : (b i.succ = true ∧ ∀ j, j < i → b j.succ = false)
        · rw [if_pos (hiff.mpr hc), if_pos hc]
        · rw [if_neg (fun h => hc (hiff.mp h)), if_neg hc]
      have hn0 : ¬ (b 0 = true ∧ ∀ j, j < (0 : Fin (n + 1)) → b j = false) :=
        fun h => hb h.1
      rw [fsum_congr he, ih, if_neg hn0]
      grind

/-- The last stop `k_n`. -/
def Stops.last (S : Stops) : Fin S.ks.length := ⟨S.ks.length - 1, by have := S.pos; omega⟩

theorem Stops.le_last (S : Stops) (i : Fin S.ks.length) : S.ks.get i ≤ S.ks.get S.last :=
  S.mono i S.last (by show i.val ≤ S.ks.length - 1; have := i.2; omega)

omit [Enum W] in
open Classical in
/-- A run of all `k_n` steps stops at exactly one stop. -/
theorem stopped_unique (S : Stops) (rule : Fin S.ks.length → List W → Bool) (t : List W) :
    fsum (fun i : Fin S.ks.length =>
      if Stopped S.ks rule i (t.take (S.ks.get i)) then (1 : R) else 0) = 1 := by
  let b : Fin S.ks.length → Bool :=
    fun j => decide (j.val + 1 = S.ks.length) || rule j (t.take (S.ks.get j))
  have hiff : ∀ i, Stopped S.ks rule i (t.take (S.ks.get i))
      ↔ (b i = true ∧ ∀ j, j < i → b j = false) := by
    intro i
    unfold Stopped
    have htk : ∀ j : Fin S.ks.length, j < i →
        (t.take (S.ks.get i)).take (S.ks.get j) = t.take (S.ks.get j) := by
      intro j hj
      rw [List.take_take]
      have := S.mono j i (Std.le_of_lt hj)
      rw [Nat.min_eq_left this]
    have hlast : ∀ j : Fin S.ks.length, j < i → ¬ (j.val + 1 = S.ks.length) := by
      intro j hj
      have := i.2
      rw [fin_lt_iff] at hj
      omega
    constructor
    · intro ⟨h1, h2⟩
      refine ⟨?_, ?_⟩
      · simp only [b, Bool.or_eq_true, decide_eq_true_eq]
        exact h2
      · intro j hj
        simp only [b, Bool.or_eq_false_iff, decide_eq_false_iff_not]
        refine ⟨hlast j hj, ?_⟩
        rw [← htk j hj]
        exact h1 j hj
    · intro ⟨h1, h2⟩
      refine ⟨?_, ?_⟩
      · intro j hj
        have := h2 j hj
        simp only [b, Bool.or_eq_false_iff] at this
        rw [htk j hj]
        exact this.2
      · simp only [b, Bool.or_eq_true, decide_eq_true_eq] at h1
        exact h1
  have hex : ∃ i, b i = true := by
    refine ⟨S.last, ?_⟩
    simp only [b, Bool.or_eq_true, decide_eq_true_eq]
    left
    show S.ks.length - 1 + 1 = S.ks.length
    have := S.pos
    omega
  refine Eq.trans ?_ (fsum_first_true S.ks.length b hex)
  apply fsum_congr
  intro i
  by_cases h : Stopped S.ks rule i (t.take (S.ks.get i))
  · rw [if_pos h, if_pos ((hiff i).mp h)]
  · rw [if_neg h, if_neg (fun h' => h ((hiff i).mpr h'))]

open Classical in
/-- The masses of Alg. 3's outputs sum to one. -/
theorem iterMass_total (M : Step X W R) (S : Stops) (rule : Fin S.ks.length → List W → Bool)
    (x : X) : fsum (iterMass M S.ks rule x) = 1 := by
  rw [fsum_sigma]
  have hi : ∀ i : Fin S.ks.length,
      fsum (fun h : Vec W (S.ks.get i) => iterMass M S.ks rule x ⟨i, h⟩)
        = fsum (fun t : Vec W (S.ks.get S.last) => chain M x [] t.1 *
            (if Stopped S.ks rule i (t.1.take (S.ks.get i)) then (1 : R) else 0)) := by
    intro i
    exact (chain_marginal M x (fun h => if Stopped S.ks rule i h then (1 : R) else 0)
      (S.ks.get i) (S.ks.get S.last) (S.le_last i)).symm
  rw [fsum_congr hi, fsum_comm]
  refine Eq.trans ?_ (prefixMech M (S.ks.get S.last) x).total
  apply fsum_congr
  intro t
  rw [fsum_mul_left, stopped_unique S rule t.1]
  show chain M x [] t.1 * 1 = chain M x [] t.1
  grind

theorem iterMass_nonneg (M : Step X W R) (ks : List Nat) (rule : Fin ks.length → List W → Bool)
    (x : X) (o : IterOut W ks) : 0 ≤ iterMass M ks rule x o := by
  unfold iterMass
  apply mul_nonneg' (chain_nonneg M x _ _)
  split <;> grind

/-- **Alg. 3**, `M_iter[{k_i}, {M_k}, {h^{k_i}}]`, as a mechanism on the finite output type
`IterOut W S.ks`. -/
def iterMech (M : Step X W R) (S : Stops) (rule : Fin S.ks.length → List W → Bool) :
    Mechanism X (IterOut W S.ks) R := fun x =>
  { mass := iterMass M S.ks rule x
    nonneg := iterMass_nonneg M S.ks rule x
    total := iterMass_total M S rule x }

/-! ### The cost functions -/

/-- `prefSum l k = l_1 + … + l_k` (entries beyond the list count as 0):
`Σ_{k' ≤ k} ε_{k'}` for `l = [ε_1, ε_2, …]`. -/
def prefSum (l : List R) : Nat → R
  | 0 => 0
  | k + 1 => prefSum l k + l.getD k 0

/-- **The basic-composition costs of Alg. 3** (`odp.composition.basic_costs`):
`ℰ(P_i) = Σ_{k ≤ k_i} ε_k`, for the stops `ks` and the step ε's `eps`. -/
def _root_.Odp.Mech.iterCosts (ks : List Nat) (eps : List R) : Fin ks.length → R :=
  fun i => prefSum eps (ks.get i)

/-- **Lemma 11's δ with basic composition** (`Lemma11(BasicComposition())`):
`δ = Σ_i Σ_{k ≤ k_i} δ_k`, for the stops `ks` and the step δ's `dl`. -/
def _root_.Odp.Mech.iterDeltaBasic (ks : List Nat) (dl : List R) : R := lsum ks (prefSum dl)

theorem fsum_get (f : Nat → R) : ∀ ks : List Nat,
    fsum (fun i : Fin ks.length => f (ks.get i)) = lsum ks f
  | [] => rfl
  | a :: l => by
    show fsum (fun i : Fin (l.length + 1) => f ((a :: l).get i)) = f a + lsum l f
    rw [fsum_fin_succ, ← fsum_get f l]
    rfl

/-- The δ of Lemma 11 summed over the blocks is `iterDeltaBasic`. -/
theorem fsum_iterDelta (ks : List Nat) (dl : List R) :
    fsum (fun i : Fin ks.length => prefSum dl (ks.get i)) = iterDeltaBasic ks dl :=
  fsum_get (prefSum dl) ks

theorem prefSum_zero (l : List R) : prefSum l 0 = 0 := rfl

theorem prefSum_succ (l : List R) (k : Nat) : prefSum l (k + 1) = prefSum l k + l.getD k 0 := rfl

theorem prefSum_nonneg (l : List R) (hl : ∀ j, 0 ≤ l.getD j 0) : ∀ k, 0 ≤ prefSum l k
  | 0 => by show (0 : R) ≤ 0; grind
  | k + 1 => by
    show 0 ≤ prefSum l k + l.getD k 0
    have := prefSum_nonneg l hl k
    have := hl k
    grind

theorem prefSum_mono (l : List R) (hl : ∀ j, 0 ≤ l.getD j 0) (k : Nat) :
    ∀ m, prefSum l k ≤ prefSum l (k + m)
  | 0 => by show prefSum l k ≤ prefSum l k; grind
  | m + 1 => by
    rw [← Nat.add_assoc, prefSum_succ]
    have := prefSum_mono l hl k m
    have := hl (k + m)
    grind

/-! ### The steps of `NoisyGradientDescent` -/

/-- `∏_{j < |v|} Pr(N(u_j) = v_j)`: independent noise on each coordinate. -/
def prodMass {C : Type} [Enum C] (N : Int → Dist C R) : List Int → List C → R
  | _, [] => 1
  | u, c :: v => (N (u.headD 0)).mass c * prodMass N u.tail v

theorem prodMass_nonneg {C : Type} [Enum C] (N : Int → Dist C R) :
    ∀ (v : List C) (u : List Int), 0 ≤ prodMass N u v
  | [], _ => by show (0 : R) ≤ 1; grind
  | c :: v, u => mul_nonneg' ((N (u.headD 0)).nonneg c) (prodMass_nonneg N v u.tail)

theorem prodMass_total {C : Type} [Enum C] (N : Int → Dist C R) :
    ∀ (d : Nat) (u : List Int), fsum (fun v : Vec C d => prodMass N u v.1) = 1
  | 0, u => by rw [fsum_vec_zero]; rfl
  | d + 1, u => by
    rw [fsum_vec_succ, ← (N (u.headD 0)).total]
    apply fsum_congr
    intro c
    show fsum (fun v : Vec C d => (N (u.headD 0)).mass c * prodMass N u.tail v.1)
      = (N (u.headD 0)).mass c
    rw [fsum_mul_left, prodMass_total N d u.tail]
    grind

/-- The release of an integer vector `u` (`d` coordinates) with independent noise `N` on each
coordinate. -/
def prodDist {C : Type} [Enum C] (N : Int → Dist C R) (d : Nat) (u : List Int) :
    Dist (Vec C d) R where
  mass := fun v => prodMass N u v.1
  nonneg := fun v => prodMass_nonneg N v.1 u
  total := prodMass_total N d u

/-- A step of `NoisyGradientDescent`: the gridded mean gradient `g (history) x ∈ ℤ^d` at the
weights computed from the history, released with independent noise `N` on each coordinate. -/
def noisyStep {C : Type} [Enum C] (N : Int → Dist C R) (d : Nat)
    (g : List (Vec C d) → X → Vec Int d) : Step X (Vec C d) R :=
  fun h x => prodDist N d (g h x).1

end

end Odp.Mech.Iter
