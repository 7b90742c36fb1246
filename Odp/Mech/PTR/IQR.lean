/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# `M_IQR` (Hartmann et al. 2022, Sec. 4.2, Lemma 10) and odp's log-bin IQR PTR function

The paper, Lemma 10: "Let `P₁ = ℝ`, `P₂ = {⊥}` and `ℰ(P₁) = 3ε`, `ℰ(P₂) = 2ε`. Then `M_IQR`
is `({P₁, P₂}, ℰ, δ)`-ODP", where `M_IQR` runs the PTR function `M₁ᴰ` and, only if it returns
`⊥`, the PTR function `M₂ᴰ` (independent randomness), and returns the last output.

What is proved here:

* `iqr_odp` (**Lemma 10**): for any two mechanisms that satisfy Definition 9's conditions 2–4
  with parameters `(ε, δ₁)` and `(ε, δ₂)` (`PTRAt`, `Odp/Mech/PTR/Privacy.lean`), their composition
  `iqrMech` (the second runs only on a `⊥` of the first, with independent noise) is
  `({values, ⊥}, iqrCosts ε, δ₁ + δ₂)`-ODP, `iqrCosts ε = (value ↦ 3ε, ⊥ ↦ 2ε)`, for `ε ≥ 0`.
  The paper's proof takes "`M_IQR` is `(3ε, δ)`-DP" from Dwork and Lei 2009; here the value events are
  proved directly by the case analysis of the Python docstring (a discretisation whose proposal
  is bad for `x` leaks at most its own `δᵢ`), so the slack is `δ₁ + δ₂`: **`δ` when each PTR
  function is run with `δ/2`**, which is what odp does (`IQRMechanism` builds `LogBinIQR` with
  `delta / 2`). With two `(ε, δ)`-PTR functions this proof gives `2δ`, not the paper's `δ`; the
  paper's `δ` rests on Dwork and Lei's DP analysis of `M_IQR`, which is not reproduced.
* `logBinIQR_ptr`: odp's log-bin IQR PTR function (`LogBinIQR.apply`: pass iff
  `A(x) + Z ≥ K + 1`, then release the sub-bin index `⌊L·(log_b IQR − o)⌋ + W`, or the IQR-0
  marker) satisfies Definition 9's conditions 2–4 with `G(T, x) = {s | A(x) ≥ 2}`, from: the
  test noise `Z` (tail form, one step costs `e^ε`: discrete Laplace of scale `1/ε`), the pass
  tail `Pr(Z ≥ K) ≤ δ'`, the release noise `W` (a shift by at most `L − 1` costs `e^ε`:
  discrete Laplace of scale `(L − 1)/ε`, none for `L = 1`), and the two **stated** data facts
  `IQRDataFacts` (`A` 1-Lipschitz; `A ≥ 2` fixes the bin for every neighbour) — see
  `Odp/Mech/Common/Noise.lean`. `logBinPTR_isPTR`: the same as a PTR function of its proposal
  (Definition 9 with condition 1).
* `iqr_logBin_odp`: odp's `M_IQR(ε, δ)` — both discretisations with `δ/2` — is
  `({values, ⊥}, iqrCosts ε, δ)`-ODP from those hypotheses; `iqr_logBin_hyps_satisfiable`:
  those hypotheses are jointly satisfiable over any `ExpField` with genuine laws for `L = 1`
  (the discrete Laplace test tail, the point mass as release noise, a non-constant statistic).
* **odp's `M_IQR` with its laws written out** (`logBinLapIQR_ptr`, `iqr_logBinLap_odp`): odp
  clamps the released index to a declared window, so the release law is finite
  (`clampedIndex`, `lapRelease`: the clamped discrete Laplace of scale `(L − 1)/ε`, no noise for
  `L = 1`) and the test is the discrete Laplace through its closed-form tail (`dlapTailNoise`).
  Lemma 10 then rests only on the pass tail `Pr(Z ≥ K) ≤ δ/2` and `IQRDataFacts` — no noise
  hypothesis; `iqr_logBinLap_hyps_satisfiable` for `L = 4`. The generic theorems above are
  instances of one proof for any release kernel (`logBinIQRK_ptr`, `ReleaseWithin`).

In the generic theorems the released value is any finite post-processing `out` of the released
index (see `Odp/Mech/Common/Noise.lean`, "Finiteness").
-/
module

public import Odp.Mech.PTR.Privacy
public import Odp.Mech.Common.NoiseLaws
public import Odp.Mech.Common.NoiseSat
public import Odp.Mech.Common.Grid
public import Odp.Mech.Laplace.Law

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core

noncomputable section

open ExpField

variable {R X V : Type} [ExpField R]

/-! ### Lemma 10 for any two PTR functions -/

section Lemma10

variable [Enum V]

/-- Run `d₁`; on a value return it, on `⊥` return an independent draw of `d₂`. -/
def orElse (d₁ d₂ : Dist (Option V) R) : Dist (Option V) R where
  mass o := match o with
    | none => d₁.mass none * d₂.mass none
    | some v => d₁.mass (some v) + d₁.mass none * d₂.mass (some v)
  nonneg o := by
    cases o with
    | none => exact mul_nonneg' (d₁.nonneg _) (d₂.nonneg _)
    | some v =>
      have := mul_nonneg' (d₁.nonneg none) (d₂.nonneg (some v))
      have := d₁.nonneg (some v)
      show 0 ≤ d₁.mass (some v) + d₁.mass none * d₂.mass (some v)
      grind
  total := by
    rw [fsum_option]
    show d₁.mass none * d₂.mass none
      + fsum (fun v => d₁.mass (some v) + d₁.mass none * d₂.mass (some v)) = 1
    rw [fsum_add, fsum_mul_left]
    have h1 := d₁.total
    have h2 := d₂.total
    rw [fsum_option] at h1 h2
    generalize fsum (fun v => d₁.mass (some v)) = a at h1 ⊢
    generalize fsum (fun v => d₂.mass (some v)) = b at h2 ⊢
    generalize d₁.mass none = n₁ at h1 ⊢
    generalize d₂.mass none = n₂ at h2 ⊢
    have e : n₁ * n₂ + n₁ * b = n₁ * (n₂ + b) := by grind
    rw [h2] at e
    grind

/-- `M_IQR`: the PTR function `M₁` and, on its `⊥`, the PTR function `M₂`. -/
def iqrMech (M₁ M₂ : Mechanism X (Option V) R) : Mechanism X (Option V) R :=
  fun x => orElse (M₁ x) (M₂ x)

/-- The ODP costs of `M_IQR` (Lemma 10): `ℰ(values) = 3ε`, `ℰ({⊥}) = 2ε`. -/
def iqrCosts (ε : R) : ValueOrBottom → R
  | .value => 3 * ε
  | .bottom => 2 * ε

theorem Pr_orElse_valEvent (d₁ d₂ : Dist (Option V) R) (C : Event V) :
    Pr (orElse d₁ d₂) (valEvent C)
      = Pr d₁ (valEvent C) + d₁.mass none * Pr d₂ (valEvent C) := by
  rw [Pr_valEvent, Pr_valEvent, Pr_valEvent, ← fsum_mul_left, ← fsum_add]
  apply fsum_congr
  intro v
  cases C v
  · simp; grind
  · simp; rfl

/-- **Lemma 10.** Two mechanisms satisfying Definition 9 (conditions 2–4) with `(ε, δ₁)` and
`(ε, δ₂)`, composed as in `M_IQR`, give a `({values, ⊥}, ℰ, δ₁ + δ₂)`-ODP mechanism with
`ℰ(values) = 3ε`, `ℰ({⊥}) = 2ε`. -/
theorem iqr_odp (Nbr : X → X → Prop) (M₁ M₂ : Mechanism X (Option V) R) (G₁ G₂ : X → Prop)
    (ε δ₁ δ₂ : R) (hε : 0 ≤ ε) (hδ₁ : 0 ≤ δ₁) (hδ₂ : 0 ≤ δ₂)
    (h₁ : PTRAt Nbr M₁ G₁ ε δ₁) (h₂ : PTRAt Nbr M₂ G₂ ε δ₂) :
    ODP Nbr (iqrMech M₁ M₂) vob (iqrCosts ε) (δ₁ + δ₂) := by
  have e3 : exp (3 * ε) = exp ε * exp (2 * ε) := by rw [← exp_add]; congr 1; grind
  have e2 : exp (2 * ε) = exp ε * exp ε := by rw [← exp_add]; congr 1; grind
  have he0 := exp_pos ε
  have he1 := one_le_exp hε
  have h23 : exp (2 * ε) ≤ exp (3 * ε) := exp_le_exp _ _ (by grind)
  have he2 := exp_pos (2 * ε)
  apply odp_valueOrBottom
  · intro x x' hx C
    show Pr (iqrMech M₁ M₂ x) (valEvent C)
      ≤ exp (3 * ε) * Pr (iqrMech M₁ M₂ x') (valEvent C) + (δ₁ + δ₂)
    unfold iqrMech
    rw [Pr_orElse_valEvent, Pr_orElse_valEvent]
    have hn := h₁.bot_close x x' hx
    rw [Pr_botEvent, Pr_botEvent] at hn
    have ha' := Pr_nonneg (M₁ x') (valEvent C)
    have hb' := Pr_nonneg (M₂ x') (valEvent C)
    have hb0 := Pr_nonneg (M₂ x) (valEvent C)
    have hn0 := (M₁ x).nonneg none
    have hn'0 := (M₁ x').nonneg none
    have hn1 : (M₁ x).mass none ≤ 1 := by
      have := Pr_le_one (M₁ x) botEvent; rw [Pr_botEvent] at this; exact this
    -- the first discretisation
    have hA : Pr (M₁ x) (valEvent C) ≤ exp (3 * ε) * Pr (M₁ x') (valEvent C) + δ₁ := by
      have hm := mul_le_mul_right' (Pr (M₁ x') (valEvent C)) h23 ha'
      by_cases hG : G₁ x
      · have := h₁.good x hG x' hx C
        grind
      · have := h₁.bad x hG
        have := Pr_valEvent_le_isValue (M₁ x) C
        have := mul_nonneg' (exp_nonneg (3 * ε)) ha'
        grind
    -- the second discretisation, reached only through a `⊥` of the first
    have hB : (M₁ x).mass none * Pr (M₂ x) (valEvent C)
        ≤ exp (3 * ε) * ((M₁ x').mass none * Pr (M₂ x') (valEvent C)) + δ₂ := by
      have hp := mul_nonneg' (exp_nonneg (3 * ε)) (mul_nonneg' hn'0 hb')
      by_cases hG : G₂ x
      · have hg := h₂.good x hG x' hx C
        have s1 := mul_le_mul_left' ((M₁ x).mass none) hg hn0
        have s2 := mul_le_mul_right' (exp (2 * ε) * Pr (M₂ x') (valEvent C)) hn
          (mul_nonneg' (by grind) hb')
        have eq : exp ε * (M₁ x').mass none * (exp (2 * ε) * Pr (M₂ x') (valEvent C))
            = exp (3 * ε) * ((M₁ x').mass none * Pr (M₂ x') (valEvent C)) := by
          rw [e3]; grind
        grind
      · have h1 := h₂.bad x hG
        have h2 := Pr_valEvent_le_isValue (M₂ x) C
        have h3 := mul_le_mul_right' (Pr (M₂ x) (valEvent C)) hn1 hb0
        grind
    grind
  · intro x x' hx
    show (M₁ x).mass none * (M₂ x).mass none
      ≤ exp (2 * ε) * ((M₁ x').mass none * (M₂ x').mass none)
    have hn1 := h₁.bot_close x x' hx
    have hn2 := h₂.bot_close x x' hx
    rw [Pr_botEvent, Pr_botEvent] at hn1 hn2
    have s1 := mul_le_mul_right' ((M₂ x).mass none) hn1 ((M₂ x).nonneg none)
    have s2 := mul_le_mul_left' (exp ε * (M₁ x').mass none) hn2
      (mul_nonneg' (by grind) ((M₁ x').nonneg none))
    rw [e2]
    grind

end Lemma10

/-! ### odp's log-bin IQR PTR function (one discretisation) -/

section LogBin

variable [Enum V] [DecidableEq V]

/-- The release of one discretisation: the unnoised sub-bin index `u` (or `none` for an IQR of
0) plus the release noise, post-processed by `out` onto the finite output type. -/
def logBinRelease (W : IntLaw R) (out : Option Int → V) (u : Option Int) : Dist V R :=
  W.map (fun w => out (u.map (· + w)))

/-- `LogBinIQR.apply` at one proposal (bin offset), with the release given by a kernel `rel`
(the law of the released value for the unnoised sub-bin index `u`, or `u = none` for an IQR of
0): pass iff `A(x) + Z ≥ K + 1`, i.e. `Z ≥ K + 1 − A(x)`, with probability `G(K + 1 − A(x))`; on a
pass release a draw of `rel (sub x)`, else `⊥`. -/
def logBinIQRK {c : R} (Z : TailNoise R c) (rel : Option Int → Dist V R) (K : Int)
    (A : X → Int) (sub : X → Option Int) : Mechanism X (Option V) R :=
  fun x => gate (rel (sub x)) (fun _ => Z.G (K + 1 - A x))
    (fun _ => Z.nonneg _) (fun _ => Z.le_one _)

/-- `LogBinIQR.apply` at one proposal with the release `out(sub(x) + W)` for a noise law `W`. -/
def logBinIQR {c : R} (Z : TailNoise R c) (W : IntLaw R) (K : Int) (out : Option Int → V)
    (A : X → Int) (sub : X → Option Int) : Mechanism X (Option V) R :=
  logBinIQRK Z (logBinRelease W out) K A sub

/-- A release kernel whose releases for sub-bin indices at most `n` apart are `e^ε`-close on
every event (what the release noise of `LogBinIQR` gives for `n = L − 1`). -/
def ReleaseWithin (rel : Option Int → Dist V R) (n : Nat) (ε : R) : Prop :=
  ∀ j j' : Int, (j - j').natAbs ≤ n → ∀ C : Event V,
    Pr (rel (some j)) C ≤ exp ε * Pr (rel (some j')) C

omit [DecidableEq V] in
theorem logBinIQRK_bot {c : R} (Z : TailNoise R c) (rel : Option Int → Dist V R) (K : Int)
    (A : X → Int) (sub : X → Option Int) (x : X) :
    Pr (logBinIQRK Z rel K A sub x) botEvent = 1 - Z.G (K + 1 - A x) := by
  rw [Pr_botEvent]
  exact gate_none_const _ _ _ _

omit [DecidableEq V] in
theorem logBinIQRK_val {c : R} (Z : TailNoise R c) (rel : Option Int → Dist V R) (K : Int)
    (A : X → Int) (sub : X → Option Int) (x : X) (C : Event V) :
    Pr (logBinIQRK Z rel K A sub x) (valEvent C) = Z.G (K + 1 - A x) * Pr (rel (sub x)) C :=
  Pr_gate_const _ _ _ _ C

omit [DecidableEq V] in
theorem logBinIQRK_isValue {c : R} (Z : TailNoise R c) (rel : Option Int → Dist V R) (K : Int)
    (A : X → Int) (sub : X → Option Int) (x : X) :
    Pr (logBinIQRK Z rel K A sub x) isValue = Z.G (K + 1 - A x) := by
  rw [isValue_eq, logBinIQRK_val, Pr_univ]
  grind

/-- Two sub-bin indices of one bin differ by at most `L − 1`. -/
theorem natAbs_sub_le_of_same_bin (k j j' : Int) (L : Nat) (h1 : k * L ≤ j)
    (h2 : j < k * L + L) (h3 : k * L ≤ j') (h4 : j' < k * L + L) :
    (j - j').natAbs ≤ L - 1 := by
  generalize k * (L : Int) = m at h1 h2 h3 h4
  omega

omit [DecidableEq V] in
/-- **The log-bin IQR PTR function satisfies Definition 9** (conditions 2–4) with
`G(T, x) = {s | A(x) ≥ 2}`, for any release kernel whose releases for indices at most `L − 1`
apart are `e^ε`-close: from the test noise `Z` with one step costing `e^ε`, `Pr(Z ≥ K) ≤ δ'` and
`IQRDataFacts`. -/
theorem logBinIQRK_ptr (Nbr : X → X → Prop) {ε δ' : R} (Z : TailNoise R ε)
    (rel : Option Int → Dist V R) (K : Int) (L : Nat) (A : X → Int) (sub : X → Option Int)
    (htail : Z.G K ≤ δ') (hrel : ReleaseWithin rel (L - 1) ε)
    (hdata : IQRDataFacts Nbr A sub L) :
    PTRAt Nbr (logBinIQRK Z rel K A sub) (fun x => 2 ≤ A x) ε δ' where
  bot_close x x' hx := by
    rw [logBinIQRK_bot, logBinIQRK_bot]
    have hl := (hdata.lipschitz x x' hx).2
    have h1 := Z.G_anti (show K + 1 - A x ≤ (K + 1 - A x') + 1 by omega)
    have h2 := Z.down (K + 1 - A x')
    grind
  value_close x x' hx := by
    rw [logBinIQRK_isValue, logBinIQRK_isValue]
    have hl := (hdata.lipschitz x x' hx).1
    have h1 := Z.G_anti (show (K + 1 - A x') - 1 ≤ K + 1 - A x by omega)
    have h2 := Z.up (K + 1 - A x' - 1)
    have e : K + 1 - A x' - 1 + 1 = K + 1 - A x' := by omega
    rw [e] at h2
    grind
  good x hA x' hx C := by
    rw [logBinIQRK_val, logBinIQRK_val]
    obtain ⟨k, j, j', hj, hj', h1, h2, h3, h4⟩ := hdata.same_bin x x' hx hA
    -- the test: one step of the threshold
    have hl := (hdata.lipschitz x x' hx).1
    have t1 := Z.G_anti (show (K + 1 - A x') - 1 ≤ K + 1 - A x by omega)
    have t2 := Z.up (K + 1 - A x' - 1)
    have e : K + 1 - A x' - 1 + 1 = K + 1 - A x' := by omega
    rw [e] at t2
    -- the release: indices `j, j'` of one bin, `|j − j'| ≤ L − 1`
    have hr : Pr (rel (sub x)) C ≤ exp ε * Pr (rel (sub x')) C := by
      rw [hj, hj']
      exact hrel j j' (natAbs_sub_le_of_same_bin k j j' L h1 h2 h3 h4) C
    have e2 : exp (2 * ε) = exp ε * exp ε := by rw [← exp_add]; congr 1; grind
    rw [e2]
    have g0 := Z.nonneg (K + 1 - A x)
    have p0 := Pr_nonneg (rel (sub x)) C
    have p0' := Pr_nonneg (rel (sub x')) C
    have s1 := mul_le_mul_left' (Z.G (K + 1 - A x)) hr g0
    have s2 := mul_le_mul_right' (exp ε * Pr (rel (sub x')) C) (le_trans' t1 t2)
      (mul_nonneg' (exp_nonneg ε) p0')
    grind
  bad x hA := by
    rw [logBinIQRK_isValue]
    have h := Z.G_anti (show K ≤ K + 1 - A x by omega)
    grind

/-- A noise law whose shifts by at most `n` cost `e^ε` gives a release kernel `ReleaseWithin n`. -/
theorem releaseWithin_of_shiftWithin (W : IntLaw R) (out : Option Int → V) (n : Nat) {ε : R}
    (hW : W.ShiftWithin n ε) : ReleaseWithin (logBinRelease W out) n ε := by
  intro j j' hjj C
  unfold logBinRelease
  rw [IntLaw.Pr_map, IntLaw.Pr_map]
  have hs := hW (fun w => C (out (some (j' + w)))) (j - j') hjj
  have e2 : W.P (fun z => C (out ((some j).map (· + z))))
      = W.P (fun w => (fun w => C (out (some (j' + w)))) (w + (j - j'))) :=
    W.P_congr (fun z => by
      show C (out (some (j + z))) = C (out (some (j' + (z + (j - j')))))
      congr 3; omega)
  rw [e2]
  exact hs

/-- **odp's log-bin IQR PTR function satisfies Definition 9** (conditions 2–4) with
`G(T, x) = {s | A(x) ≥ 2}`, from the noise hypotheses and the stated data facts of
`Odp/Mech/Common/Noise.lean`: test noise `Z` with one step costing `e^ε` (discrete Laplace of scale
`1/ε`), `Pr(Z ≥ K) ≤ δ'`, a release noise `W` whose shifts by at most `L − 1` cost `e^ε`, and
`IQRDataFacts`. (`logBinLapIQR_ptr`: the same for odp's laws written out, no noise
hypothesis.) -/
theorem logBinIQR_ptr (Nbr : X → X → Prop) {ε δ' : R} (Z : TailNoise R ε) (W : IntLaw R)
    (K : Int) (L : Nat) (out : Option Int → V) (A : X → Int) (sub : X → Option Int)
    (htail : Z.G K ≤ δ') (hW : W.ShiftWithin (L - 1) ε) (hdata : IQRDataFacts Nbr A sub L) :
    PTRAt Nbr (logBinIQR Z W K out A sub) (fun x => 2 ≤ A x) ε δ' :=
  logBinIQRK_ptr Nbr Z (logBinRelease W out) K L A sub htail
    (releaseWithin_of_shiftWithin W out (L - 1) hW) hdata

/-- odp's log-bin IQR PTR function as a function of its proposal (the bin offset `s`;
`none` is `⊥`, and then the test never passes). -/
def logBinPTR {C : Type} {c : R} (Z : TailNoise R c) (W : IntLaw R) (K : Int)
    (out : Option Int → V) (A : C → X → Int) (sub : C → X → Option Int) :
    Option C → Mechanism X (Option V) R
  | none => fun _ => gate (logBinRelease W out none) (fun _ => 0) (fun _ => by grind)
      (fun _ => by grind)
  | some s => logBinIQR Z W K out (A s) (sub s)

/-- **Definition 9 holds** for odp's log-bin IQR PTR function, with every proposal `s` whose
statistic `A s` satisfies the stated data facts. -/
theorem logBinPTR_isPTR {C : Type} (Nbr : X → X → Prop) {ε δ' : R} (Z : TailNoise R ε)
    (W : IntLaw R) (K : Int) (L : Nat) (out : Option Int → V) (A : C → X → Int)
    (sub : C → X → Option Int) (htail : Z.G K ≤ δ') (hW : W.ShiftWithin (L - 1) ε)
    (hdata : ∀ s, IQRDataFacts Nbr (A s) (sub s) L) :
    IsPTRFunction Nbr (logBinPTR Z W K out A sub) ε δ' := by
  refine ⟨?_, fun s x => 2 ≤ A s x, fun s => logBinIQR_ptr Nbr Z W K L out (A s) (sub s) htail hW (hdata s)⟩
  intro x
  simp only [logBinPTR]
  rw [Pr_botEvent, gate_none_const]
  grind

/-- odp's `M_IQR(ε, δ)`: the log-bin PTR function on the first discretisation and, on its `⊥`,
on the second (the same noise parameters, each with `δ/2`; `out₁`, `out₂` tag the
discretisation as `IQREstimate` does). -/
def iqrLogBin {c : R} (Z : TailNoise R c) (W : IntLaw R) (K : Int) (out₁ out₂ : Option Int → V)
    (A₁ A₂ : X → Int) (sub₁ sub₂ : X → Option Int) : Mechanism X (Option V) R :=
  iqrMech (logBinIQR Z W K out₁ A₁ sub₁) (logBinIQR Z W K out₂ A₂ sub₂)

theorem half_add_half (δ : R) : δ / 2 + δ / 2 = δ := by
  have h2 : (2 : R) ≠ 0 := by
    have : (0 : R) < 1 := Lean.Grind.OrderedRing.zero_lt_one
    grind
  have hi : (2 : R) * 2⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel h2
  rw [Lean.Grind.Field.div_eq_mul_inv]
  grind

/-- **Lemma 10 for odp's `M_IQR`**: from the noise hypotheses (test noise of scale `1/ε` with
`Pr(Z ≥ K) ≤ δ/2`, release noise whose shifts by at most `L − 1` cost `e^ε`) and the stated data
facts of both discretisations, `M_IQR` is `({values, ⊥}, iqrCosts ε, δ)`-ODP. -/
theorem iqr_logBin_odp (Nbr : X → X → Prop) {ε δ : R} (hε : 0 ≤ ε) (hδ : 0 ≤ δ)
    (Z : TailNoise R ε) (W : IntLaw R) (K : Int) (L : Nat) (out₁ out₂ : Option Int → V)
    (A₁ A₂ : X → Int) (sub₁ sub₂ : X → Option Int)
    (htail : Z.G K ≤ δ / 2) (hW : W.ShiftWithin (L - 1) ε)
    (hd₁ : IQRDataFacts Nbr A₁ sub₁ L) (hd₂ : IQRDataFacts Nbr A₂ sub₂ L) :
    ODP Nbr (iqrLogBin Z W K out₁ out₂ A₁ A₂ sub₁ sub₂) vob (iqrCosts ε) δ := by
  have hδ2 : 0 ≤ δ / 2 := by
    have := half_add_half δ
    grind
  have h := iqr_odp Nbr _ _ _ _ ε (δ / 2) (δ / 2) hε hδ2 hδ2
    (logBinIQR_ptr Nbr Z W K L out₁ A₁ sub₁ htail hW hd₁)
    (logBinIQR_ptr Nbr Z W K L out₂ A₂ sub₂ htail hW hd₂)
  rw [half_add_half] at h
  exact h

/-- The hypotheses of `iqr_logBin_odp` are jointly satisfiable over any `ExpField` with genuine
laws, for `L = 1` (odp's `resolution=1`: no release noise): the test noise is the discrete
Laplace of scale `1/ε` (`dlapTailNoise`, its tail in closed form) with any pass threshold `K`
and `δ` such that `Pr(Z ≥ K) ≤ δ/2` (what odp's `pass_threshold` chooses `K` for), the release
noise is the point mass at 0 (no noise), and the data facts hold for a non-constant statistic
(`IQRDataFacts.witness`). For `L ≥ 2` see `iqr_logBinLap_odp`, which needs no noise law at all. -/
theorem iqr_logBin_hyps_satisfiable {ε δ : R} (hε : 0 ≤ ε) (K : Int)
    (hK : discreteLaplaceTail ε K ≤ δ / 2) :
    ∃ (Z : TailNoise R ε) (W : IntLaw R), Z.G = discreteLaplaceTail ε ∧ Z.G K ≤ δ / 2 ∧
      W.ShiftWithin (1 - 1) ε ∧
      IQRDataFacts (fun x x' : Int => (x - x').natAbs ≤ 1) (fun x => x) (witSub 1) 1 :=
  ⟨dlapTailNoise ε hε, IntLaw.dirac 0, rfl, hK, IntLaw.shiftWithin_zero _ hε,
    IQRDataFacts.witness 1 (by omega)⟩

/-! ### odp's `M_IQR` with its laws written out: no noise hypothesis

odp's `LogBinIQR.apply` (`python/odp/mechanisms/ptr/mechanism.py`): pass iff `A(x) + Z ≥ K + 1`
with `Z` the discrete Laplace of scale `1/ε` (`test_scale`); on a pass the sub-bin index
`j = sub(x)` (or the IQR-0 marker) plus `W`, the discrete Laplace of scale `(L − 1)/ε`
(`release_scale`; no noise for `L = 1`), **clamped** to the declared index window `[lo, hi]`,
tagged with its discretisation. Both laws are written out: the test through its closed-form tail
`discreteLaplaceTail ε` (`dlapTailNoise`), the release through the clamped discrete Laplace law
`clampedLaplace (ε/(L − 1))` (`Odp/Mech/Laplace/Law.lean`). So Lemma 10 for odp's `M_IQR`
(`iqr_logBinLap_odp`) rests only on the pass tail `Pr(Z ≥ K) ≤ δ/2` (a fact about the number `K`
odp's `pass_threshold` computes) and the stated data facts `IQRDataFacts`. -/

/-- The point mass at `v`. -/
def pointDist (v : V) : Dist V R where
  mass w := if w = v then 1 else 0
  nonneg w := (ite_unit (w = v)).1
  total := fsum_single v 1

/-- The law of `f(o)` for `o ∼ d` (post-processing). -/
def pushDist {O : Type} [Enum O] (f : O → V) (d : Dist O R) : Dist V R :=
  postProcess f (fun (_ : Unit) => d) ()

theorem Pr_pushDist {O : Type} [Enum O] (f : O → V) (d : Dist O R) (C : Event V) :
    Pr (pushDist f d) C = Pr d (fun o => C (f o)) :=
  Pr_postProcess f (fun (_ : Unit) => d) () C

/-- A bound at every output is a bound on every event. -/
theorem Pr_le_of_mass_le {O : Type} [Enum O] (p q : Dist O R) (k : R)
    (h : ∀ o, p.mass o ≤ k * q.mass o) (S : Event O) : Pr p S ≤ k * Pr q S := by
  unfold Pr
  rw [← fsum_mul_left]
  apply fsum_le
  intro o
  by_cases hS : S o = true
  · rw [if_pos hS, if_pos hS]; exact h o
  · rw [if_neg hS, if_neg hS]; grind

/-- **The released sub-bin index of `LogBinIQR`** (`resolution = L`) for the exact index `j`:
`clamp(j + W, lo, hi)`, `W` the discrete Laplace of scale `(L − 1)/ε` for `L ≥ 2` (the law
`clampedLaplace (ε/(L − 1))`), and `clamp(j, lo, hi)` with no noise for `L = 1`. -/
def clampedIndex (ε : R) (hε : 0 ≤ ε) (L : Nat) (lo hi : Int) (hlh : lo ≤ hi) (j : Int) :
    Dist (Window lo hi) R :=
  if L = 1 then pointDist (clamp lo hi hlh j)
  else clampedLaplace (ε / natR (L - 1)) (rate_nonneg hε (L - 1)) lo hi hlh j

/-- Exact indices at most `L − 1` apart give `e^ε`-close released indices, at every output. -/
theorem clampedIndex_shift {ε : R} (hε : 0 ≤ ε) (L : Nat) (lo hi : Int) (hlh : lo ≤ hi)
    (j j' : Int) (hjj : (j - j').natAbs ≤ L - 1) (c : Window lo hi) :
    (clampedIndex ε hε L lo hi hlh j).mass c ≤ exp ε * (clampedIndex ε hε L lo hi hlh j').mass c := by
  by_cases hL : L ≤ 1
  · have e : j = j' := by omega
    rw [e]
    have h1 := one_le_exp hε
    have h0 := (clampedIndex ε hε L lo hi hlh j').nonneg c
    have := mul_le_mul_right' ((clampedIndex ε hε L lo hi hlh j').mass c) h1 h0
    grind
  · unfold clampedIndex
    rw [if_neg (show ¬ L = 1 by omega), if_neg (show ¬ L = 1 by omega)]
    have h := clampedLaplace_shift (rate_nonneg hε (L - 1)) lo hi hlh j j' (L - 1) hjj c
    rw [natR_mul_rate (show 0 < L - 1 by omega)] at h
    exact h

/-- **odp's `LogBinIQR` release** for the exact sub-bin index `u`: `out none` for an IQR of 0
(`u = none`), else `out (some ĵ)` for the released index `ĵ` (`clampedIndex`); `out` tags the
discretisation, as `IQREstimate` does. -/
def lapRelease (ε : R) (hε : 0 ≤ ε) (L : Nat) (lo hi : Int) (hlh : lo ≤ hi)
    (out : Option (Window lo hi) → V) : Option Int → Dist V R
  | none => pointDist (out none)
  | some j => pushDist (fun w => out (some w)) (clampedIndex ε hε L lo hi hlh j)

theorem lapRelease_within {ε : R} (hε : 0 ≤ ε) (L : Nat) (lo hi : Int) (hlh : lo ≤ hi)
    (out : Option (Window lo hi) → V) : ReleaseWithin (lapRelease ε hε L lo hi hlh out) (L - 1) ε := by
  intro j j' hjj C
  show Pr (pushDist (fun w => out (some w)) (clampedIndex ε hε L lo hi hlh j)) C
    ≤ exp ε * Pr (pushDist (fun w => out (some w)) (clampedIndex ε hε L lo hi hlh j')) C
  rw [Pr_pushDist, Pr_pushDist]
  exact Pr_le_of_mass_le _ _ _ (clampedIndex_shift hε L lo hi hlh j j' hjj) _

/-- **odp's `LogBinIQR.apply` at one proposal, its laws written out**: test noise the discrete
Laplace of scale `1/ε` (tail `discreteLaplaceTail ε`), release `lapRelease`. -/
def logBinLapIQR (ε : R) (hε : 0 ≤ ε) (K : Int) (L : Nat) (lo hi : Int) (hlh : lo ≤ hi)
    (out : Option (Window lo hi) → V) (A : X → Int) (sub : X → Option Int) :
    Mechanism X (Option V) R :=
  logBinIQRK (dlapTailNoise ε hε) (lapRelease ε hε L lo hi hlh out) K A sub

/-- **odp's log-bin IQR PTR function satisfies Definition 9** (conditions 2–4), with no noise
hypothesis: from the pass tail `Pr(Z ≥ K) ≤ δ'` and `IQRDataFacts`. -/
theorem logBinLapIQR_ptr (Nbr : X → X → Prop) {ε δ' : R} (hε : 0 ≤ ε) (K : Int) (L : Nat)
    (lo hi : Int) (hlh : lo ≤ hi) (out : Option (Window lo hi) → V) (A : X → Int)
    (sub : X → Option Int) (htail : discreteLaplaceTail ε K ≤ δ')
    (hdata : IQRDataFacts Nbr A sub L) :
    PTRAt Nbr (logBinLapIQR ε hε K L lo hi hlh out A sub) (fun x => 2 ≤ A x) ε δ' :=
  logBinIQRK_ptr Nbr (dlapTailNoise ε hε) _ K L A sub htail
    (lapRelease_within hε L lo hi hlh out) hdata

/-- **odp's `M_IQR(ε, δ)` with its laws written out** (`IQRMechanism`): the log-bin PTR function
on the first discretisation (index window `[lo₁, hi₁]`, tagged by `out₁`) and, on its `⊥`, on
the second (`[lo₂, hi₂]`, `out₂`), with the same `ε`, `K` and `L`. -/
def iqrLogBinLap (ε : R) (hε : 0 ≤ ε) (K : Int) (L : Nat) (lo₁ hi₁ : Int) (h₁ : lo₁ ≤ hi₁)
    (out₁ : Option (Window lo₁ hi₁) → V) (lo₂ hi₂ : Int) (h₂ : lo₂ ≤ hi₂)
    (out₂ : Option (Window lo₂ hi₂) → V) (A₁ A₂ : X → Int) (sub₁ sub₂ : X → Option Int) :
    Mechanism X (Option V) R :=
  iqrMech (logBinLapIQR ε hε K L lo₁ hi₁ h₁ out₁ A₁ sub₁)
    (logBinLapIQR ε hε K L lo₂ hi₂ h₂ out₂ A₂ sub₂)

/-- **Lemma 10 for odp's `M_IQR(ε, δ)`, with no noise hypothesis**: `({values, ⊥}, ℰ, δ)`-ODP with
`ℰ(values) = 3ε`, `ℰ({⊥}) = 2ε`, from the pass tail `Pr(Z ≥ K) ≤ δ/2` of the discrete Laplace
test noise and the stated data facts of both discretisations. -/
theorem iqr_logBinLap_odp (Nbr : X → X → Prop) {ε δ : R} (hε : 0 ≤ ε) (hδ : 0 ≤ δ) (K : Int)
    (L : Nat) (lo₁ hi₁ : Int) (h₁ : lo₁ ≤ hi₁) (out₁ : Option (Window lo₁ hi₁) → V)
    (lo₂ hi₂ : Int) (h₂ : lo₂ ≤ hi₂) (out₂ : Option (Window lo₂ hi₂) → V) (A₁ A₂ : X → Int)
    (sub₁ sub₂ : X → Option Int) (htail : discreteLaplaceTail ε K ≤ δ / 2)
    (hd₁ : IQRDataFacts Nbr A₁ sub₁ L) (hd₂ : IQRDataFacts Nbr A₂ sub₂ L) :
    ODP Nbr (iqrLogBinLap ε hε K L lo₁ hi₁ h₁ out₁ lo₂ hi₂ h₂ out₂ A₁ A₂ sub₁ sub₂) vob
      (iqrCosts ε) δ := by
  have hδ2 : 0 ≤ δ / 2 := by
    have := half_add_half δ
    grind
  have h := iqr_odp Nbr _ _ _ _ ε (δ / 2) (δ / 2) hε hδ2 hδ2
    (logBinLapIQR_ptr Nbr hε K L lo₁ hi₁ h₁ out₁ A₁ sub₁ htail hd₁)
    (logBinLapIQR_ptr Nbr hε K L lo₂ hi₂ h₂ out₂ A₂ sub₂ htail hd₂)
  rw [half_add_half] at h
  exact h

/-- The hypotheses of `iqr_logBinLap_odp` are jointly satisfiable with odp's default
`resolution = 4` (`L = 4`) and a non-constant statistic, for every `K` and `δ` with
`Pr(Z ≥ K) ≤ δ/2` (e.g. `δ = 2·Pr(Z ≥ K)`). -/
theorem iqr_logBinLap_hyps_satisfiable {ε : R} (K : Int) :
    discreteLaplaceTail ε K ≤ (2 * discreteLaplaceTail ε K) / 2 ∧
      IQRDataFacts (fun x x' : Int => (x - x').natAbs ≤ 1) (fun x => x) (witSub 4) 4 := by
  refine ⟨?_, IQRDataFacts.witness 4 (by omega)⟩
  have h2 : (2 : R) ≠ 0 := by
    have : (0 : R) < 1 := Lean.Grind.OrderedRing.zero_lt_one
    grind
  have hi : (2 : R) * 2⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel h2
  rw [Lean.Grind.Field.div_eq_mul_inv]
  generalize discreteLaplaceTail ε K = g
  generalize (2 : R)⁻¹ = i at hi
  have : 2 * g * i = g * (2 * i) := by grind
  rw [this, hi]
  grind

end LogBin

end

end Odp.Mech
