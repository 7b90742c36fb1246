/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# THE TRUST BOUNDARY of `Odp/Mech`

**This file is the trust boundary of `Odp/Mech`.** Every hypothesis that a theorem of
`Odp/Mech` takes about odp's noise primitives, about numbers that odp's Python code computes, or
about the data statistics of the mechanisms is defined here, and nowhere else. They are
structures and predicates passed as theorem *arguments* (never `axiom`s): a theorem that takes
one says "if this holds, the mechanism has this guarantee". Nothing here is proved about odp's
Python samplers or its Python arithmetic — that link is the trust boundary, and it is stated
below, hypothesis by hypothesis: what it says, which real distribution, tested computation or
data fact satisfies it, and why. Which hypotheses are shown satisfiable by genuine laws (so the
theorems are not vacuous), and which are not and why, is said at the end of this header.

The definitions they mention (the expectation shape `Expect`, and for the iterative mechanism
`Step`, `prefixMech`, `Vec`, `l1`) are model definitions, not assumptions: `Expect` is below,
the others are in `Odp/Mech/Iterative/Steps.lean` and `Odp/Mech/Common/Enum.lean`, which this file imports.

## How a noise variable is seen: an expectation, not a sum
A noise variable `Z` on `ℤ` is seen only through its expectation `E f = 𝔼[f(Z)]` on non-negative
bounded functions `f : ℤ → R` (`Expect`): `E` is non-negative, additive, non-negatively
homogeneous, and `E 1 = 1`. For a probability mass function `p` on `ℤ` and `R = ℝ`,
`E f = ∑_{z ∈ ℤ} p(z) f(z)` has these properties (the series converges absolutely because `f` is
bounded). Nothing in `Odp/Mech` needs an infinite sum: the mechanisms' outputs are finite
(clamped releases, answer lists of bounded length), so their laws are finite distributions
(`Odp.Core.Dist`) whose masses are values of `E`, and Theorem 7 (`Odp.Core.odp_composition`)
applies to them. Other noises are seen through their tail (`LapTail`, `TailNoise`), through their
law on all subsets of ℤ (`IntLaw`), or through the law of the clamped release (`ShiftDominated`).

## 1. Noise primitives (the laws of odp's samplers)

* `LapNoise α` — a discrete Laplace law of scale `b = 1/α` (odp:
  `odp.samplers.discrete_laplace(scale)`, Canonne–Kamath–Steinke 2020, Alg. 2, with
  `P[Z = z] ∝ e^{−|z|/b}`): a unit shift of the noise costs at most `e^α`:
  `E[f(Z + 1)] ≤ e^α E[f(Z)]` and `E[f(Z − 1)] ≤ e^α E[f(Z)]`.
  *Why it holds*: re-index the sum, `∑_z p(z) f(z ± 1) = ∑_w p(w ∓ 1) f(w)`, and use the pointwise
  ratio `p(w ∓ 1) = e^{(|w| − |w ∓ 1|)/b} p(w) ≤ e^{1/b} p(w)`. SampCert proves the same two steps
  with Mathlib for its discrete Laplace sampler (`tsum_shift` and `laplace_inequality` in
  `SampCert/DifferentialPrivacy/Queries/AboveThresh/Privacy.lean`; the sampler's mass function
  in `SampCert/Samplers/LaplaceGen/Properties.lean`, `DiscreteLaplaceGenSample_apply`).
  Used for: SVT's threshold noise ρ (`b = m/ε1`), which odp does not clamp. (The grid Laplace
  mechanism and M_toy no longer take it: their releases are clamped, so their law is a finite
  distribution, written out in `Odp/Mech/Laplace/Law.lean`.)
* `LapTail β` — the tail `G t = Pr[ν ≥ t]` of a discrete Laplace law of scale `b' = 1/β`
  (SVT's query noise ν_i, `b' = 2cm/ε2`): `0 ≤ G ≤ 1`, `G` is antitone, and
  `G t ≤ e^β G (t + 1)`.
  *Why it holds*: `Pr[ν ≥ t] = ∑_{w ≥ t+1} p(w − 1) ≤ e^{β} ∑_{w ≥ t+1} p(w)` (the pointwise ratio
  above), and `{ν ≥ t + 1} ⊆ {ν ≥ t}`. `odp.samplers.discrete_laplace_tail(k, r)` is the closed
  form `G` with `r = e^{−β}`; `discreteLaplaceTail` (`Odp/Mech/Common/NoiseSat.lean`) is that closed
  form over any `ExpField`, and `discreteLaplaceTail_isLapTail` proves it satisfies `LapTail β`
  for every `β ≥ 0` — so this hypothesis is satisfiable (not vacuous), in every `ExpField`, by
  the very function odp's exact SVT audit uses.
* `TailNoise c` — an integer noise `Z`, seen only through its tail `G t = Pr(Z ≥ t)`:
  `0 ≤ G ≤ 1`, `G` antitone, and one step of the threshold costs `e^c`:
  `G t ≤ e^c · G (t + 1)` and `1 − G (t + 1) ≤ e^c · (1 − G t)`.
  *Satisfied by* the discrete Laplace distribution with scale `b` (`p(z) ∝ e^{−|z|/b}`) for
  `c = 1/b`: `p(z) ≤ e^{1/b} p(z + 1)` and `p(z + 1) ≤ e^{1/b} p(z)`, hence
  `G t = ∑_{z ≥ t} p z = ∑_{z ≥ t+1} p (z − 1) ≤ e^{1/b} G (t + 1)` and
  `1 − G (t + 1) = ∑_{z ≤ t} p z = ∑_{z ≤ t − 1} p (z + 1) ≤ e^{1/b} (1 − G t)`.
  Used for the PTR test noise (scale `1/ε`, so `c = ε`) and for the test noise of Alg. 5 (scale
  `M/ε₂` grid units, so `c = ε₂/M`). Only threshold events `{Z ≥ t}` of this noise occur in the
  mechanisms, so nothing more about `Z` is assumed. *Witness*: the discrete Laplace tail itself,
  in closed form (`dlapTailNoise`, `Odp/Mech/Laplace/Law.lean`); odp's `M_IQR` is also proved
  with that tail written in (`iqr_logBinLap_odp`), so it takes no `TailNoise`.
* The pass tail `δ'` of the PTR test is not a structure: the theorems take `Z.G K ≤ δ'`
  (`Pr(Z ≥ K) ≤ δ'`), which odp's `pass_threshold` (`odp.mechanisms.ptr.mechanism`) chooses `K`
  to satisfy (`r^K/(1 + r) ≤ δ'` with `r = e^{−ε}` is exactly the discrete Laplace tail at
  `K ≥ 1`).
* `IntLaw` — the law of an integer noise on *all* subsets of ℤ: a finitely additive
  probability (`P B ≥ 0`, `P ℤ = 1`, `P (B ∪ C) = P B + P C` for disjoint `B, C`). *Satisfied by*
  every probability distribution on ℤ, `P B = ∑_{z ∈ B} p z` (ℤ is countable: every subset is
  measurable, and the sum of a nonnegative summable family is additive).
* `IntLaw.ShiftBound W c` — a shift of the noise by `±1` costs `e^c` on every event:
  `P {z | z + 1 ∈ B} ≤ e^c P B` and `P {z | z − 1 ∈ B} ≤ e^c P B`. *Satisfied by* the discrete
  Laplace with scale `b` for `c = 1/b` (re-index the sum and use the pointwise ratio above).
* `IntLaw.ShiftWithin W n ε` — a shift by any `s` with `|s| ≤ n` costs `e^ε` on every event.
  Follows from `ShiftBound W c` when `n·c ≤ ε` (proved: `IntLaw.shiftWithin_of_shiftBound` in
  `Odp/Mech/Common/NoiseLaws.lean`); for `n = 0` every law satisfies it (`IntLaw.shiftWithin_zero`).
  Used for the release noise of the log-bin IQR PTR function in the generic theorems
  (`logBinIQR_ptr`, `iqr_logBin_odp`): scale `(L − 1)/ε` (one step costs `ε/(L − 1)`, `L − 1`
  steps cost `ε`), and no noise at all for `L = 1` (the point mass at 0). odp clamps the released
  index to a declared window, so its release law is finite and written out instead
  (`lapRelease`, `Odp/Mech/PTR/IQR.lean`): `iqr_logBinLap_odp` and the certificate link's `iqr` kind
  take no `IntLaw`.
* `Iter.ShiftDominated N r` — the noise on one integer coordinate of an iterative step: `N u` is
  the distribution of the released value (in a finite window `C`) when the exact value is
  `u ∈ ℤ`, and a shift of the centre by `s` multiplies any output's probability by at most
  `e^{|s| r}`: `Pr(N u = c) ≤ e^{|u − u'| r} Pr(N u' = c)`.
  *Satisfied by:* the discrete Laplace distribution of scale `b` (pmf `p(z) ∝ e^{−|z|/b}` on `ℤ`,
  `odp.samplers.discrete_laplace`) added to `u`, with `r = 1/b`:
  `p(c − u) ≤ e^{|u − u'|/b} p(c − u')` by the triangle inequality. Clamping `u + Z` to a window
  `[lo, hi]` keeps it: an end point's mass is a tail sum `Σ_{z ≤ lo − u} p(z)`, and re-indexing
  the sum by the shift bounds it term by term by `e^{|u − u'|/b}` times the other tail. In
  `NoisyGradientDescent` the scale is `m/ε_k`, so `r = ε_k/m`. *Witness*: that clamped law in
  closed form (`Iter.shiftDominated_clampedLaplace`, `Odp/Mech/Laplace/Law.lean`).

Every sampler's correctness — that odp's code draws exactly the law named (discrete Laplace and
Gaussian by Canonne–Kamath–Steinke's exact samplers; randomized response by uniform category,
kept with probability 1 or `e^{−ε}`, else redrawn; the exponential median by uniform proposal and
exact `Bernoulli(exp(−γ))` acceptance) — is part of this boundary: a property of the noise
primitive, not proved in Lean. (Randomized response and the exponential median need no
hypothesis here: their laws are written out in `Odp/Mech/RandomizedResponse/Privacy.lean` and
`Odp/Mech/PTR/Median.lean`, and their guarantees are proved about those laws.)

## 2. Numerical bounds computed by tested Python code (and declared step parameters)

* `GaussNoise m ε δ` — a discrete Gaussian law (odp: `odp.samplers.discrete_gaussian(sigma2)`,
  Canonne–Kamath–Steinke 2020, Alg. 3) whose additive mechanism on `ℤ` with sensitivity `m` is
  (ε, δ)-DP: for every shift `|d| ≤ m` and every set `S ⊆ ℤ`,
  `Pr[Z + d ∈ S] ≤ e^ε Pr[Z ∈ S] + δ`.
  *Why it holds*: Canonne–Kamath–Steinke, Theorem 7, for the δ of their formula; odp computes
  an upper bound of that δ with `odp.gaussian_dp.discrete_gaussian_delta_upper(ε, σ², m)`
  (a tested Python bound, not proved here) and declares it.
* `Iter.PrefixDP Nbr M ks epsK delK` — Lemma 11's COMP hypothesis: the prefix mechanism
  `M^{k_i} = (M_1, …, M_{k_i})` (all `k_i` steps, adaptively) is `(ε^{k_i}, δ^{k_i})`-DP for every
  stop `i`. With basic composition it is *proved* from `StepsDP`
  (`Odp.Mech.prefixDP_basic`, `Odp/Mech/Iterative/Composition.lean`). With odp's other COMP rules —
  privacy buckets (`odp.composition.BucketsComposition`, Meiser and Mohammadi 2018) on the steps' worst-case
  pairs, the optimal composition of Kairouz, Oh, Viswanath 2015 / Murtagh and Vadhan 2016 (the `approximate_dp`
  worst case), or Rényi DP (`odp.composition.RDPComposition`; DP-SGD's subsampled Gaussian steps,
  `odp.subsampled_rdp`) — `δ^{k_i}` is a number computed by tested Python code
  (`odp.buckets.composition_delta_upper`, `odp.composition.Lemma11.per_stop`), and `PrefixDP`
  with those numbers is the hypothesis; the general Lemma 11 (`Odp.Mech.lemma11`) then gives the
  ODP guarantee (and `Odp.Certs.Lemma11.lemma11_le` for a declared `δ ≥ Σ_i δ^{k_i}`).
* `Iter.StepsDP Nbr M eps dl` — step `k` of Alg. 3 is `(ε_k, δ_k)`-DP (Definition 1) for every
  released history `(s_1, …, s_{k−1})`, `k = 1 … |eps|`. This is Lemma 11's and Sec. 5.2's
  premise "`M_k` is `(ε_k, δ_k)`-DP", and what an `odp.composition.StepSpec(ε_k, δ_k)` declares.
  For a user's `IterativeMechanism` it is the user's declaration (odp cannot check it). For
  `NoisyGradientDescent` it is *proved* (`Odp.Mech.noisyStep_dp`, `Odp/Mech/Iterative/Privacy.lean`) from
  `ShiftDominated` and `L1Sensitive`, with `δ_k = 0`.

## 3. Stated data facts (deterministic functions; tested in Python, **not proved** here)

* The query sensitivity on the grid, `|n(x) − n(x')| ≤ m` for neighbours (`n(x) = ⌊f(x)/g + 1/2⌋`,
  `m = ⌈Δ/g⌉`), is not a definition: it is written out as the argument `hn` of the grid
  Laplace/Gaussian theorems and M_toy (`Odp/Mech/{Laplace,Gaussian,Toy}/Privacy.lean`), and as `hA`/`hqs` for SVT's
  queries (`Odp/Mech/SVT/Privacy.lean`). odp rounds to the grid in `odp.mechanisms.noise` /
  `odp.mechanisms.svt`; the rounding bound is tested in Python, not proved.
* `IQRDataFacts Nbr A sub L` — for one discretisation of the IQR estimator of Dwork and Lei 2009
  (`python/odp/mechanisms/ptr/__init__.py`): `A : X → ℤ` is the stability statistic
  (`stability`), `sub x` the sub-bin index `⌊L·(log_b IQR(x) − o)⌋` of the IQR (`none` when the
  IQR is 0). The two facts of the Python docstring:
  1. `A` is 1-Lipschitz for neighbours;
  2. `A x ≥ 2` implies that every neighbour's IQR lies in the same bin `B_k` as `x`'s (both IQRs
     positive). A value in bin `k` has its sub-bin index in `[k·L, k·L + L)` (the bin index is
     `⌊y⌋` and the sub-bin index `⌊L·y⌋` for `y = log_b IQR − o`), and that is how the fact is
     written here.
  These are properties of order statistics and logarithmic bins, argued in the Python docstring
  and tested by `tests/test_ptr.py` (every neighbouring pair of small databases); they are not
  proved in Lean.
* `ERMRelease NbrTr rel score ε₁ m` — Alg. 4 on the grid (`python/odp/mechanisms/erm.py`): the
  released model `p̃ = round(p_min(x_train) + q)` has, for each training set, a distribution
  `rel x_train` on a finite set `V` of grid vectors, and
  1. `rel` is `ε₁`-DP for a change of one training record (Thm. 16 of Hartmann et al. 2022: the L2
     sensitivity of `p_min` is `2/(n Λ)` and `q` has density `∝ exp(−(nΛε₁/2)‖q‖)`; rounding
     is post-processing);
  2. *the coupling of App. D*: running Alg. 4 on neighbouring training sets with the *same*
     continuous noise `q` gives a joint distribution `π` of `(p̃, p̃')` with marginals `rel a`
     and `rel a'`, and on its support the test score (in grid units) moves by at most `m`
     for every test set (`‖p̃ − p̃'‖ ≤ Δ + h√d`, then Lemma 21's Lipschitz bound of the
     mean absolute error; the Python constant `units_train`).
  The first is a statement about the continuous noise of Alg. 4 (its DP); the second combines
  the coupling with the deterministic sensitivity bound of Lemma 21. Stated, not proved.
* `TestSensitivity NbrTe score m` — changing one test record moves the test score (grid units)
  of every model by at most `m` (Lemma 21, part 2: `2/n_test`, plus float error, in units:
  the Python constant `units_test`). Stated, not proved.
* `UtilitySensitivity Nbr u` — the median's utility `u(y) = −max(#{xᵢ < y}, #{xᵢ > y})`
  (odp's `ExponentialMedian.utilities`) changes by at most 1 between neighbours (replacing one
  record moves each count by at most 1). A property of counts; stated (tested in Python), not
  proved.
* `Iter.L1Sensitive Nbr d g m` — the one fact about the gradient computation that the noise
  argument of `NoisyGradientDescent` needs: for every released history, the integer vectors
  `g h x, g h x' ∈ ℤ^d` (the gridded mean gradients at the weights computed from the history) of
  neighbouring databases differ by at most `m` in L1 norm.
  *Satisfied by:* `NoisyGradientDescent.grid_gradient` with `m = NoisyGradientDescent.units`, by
  the floating-point analysis in the docstring of `python/odp/mechanisms/iterative.py` (per-record
  clipping verified in floats, `math.fsum` column sums, rounding to the grid): argued and tested in
  Python, not checked by Lean (Lean does not model IEEE floats here).

## 4. An interface, proved for odp's own mechanism

* `MedianDP Nbr med` — the median of the IQR-then-median pipeline, run with budget `e ≥ 0`, is
  `e`-DP: the interface of `Odp/Mech/PTR/Pipeline.lean`. For odp's `ExponentialMedian` (the
  exponential mechanism of McSherry and Talwar 2007 on a public grid, `P(y) ∝ exp(e·u(y)/2)`) it is
  *proved* (`expMedian_dp`, `Odp/Mech/PTR/Median.lean`) from `UtilitySensitivity` (group 3).

## Not here, and why

* Definition 9 (`PTRAt`, `IsPTRFunction`, `Odp/Mech/PTR/Privacy.lean`) is the paper's definition of a PTR
  function, the premise of the generic theorems `ptr_odp` and `iqr_odp` (Sec. 4.2, Lemma 10); for
  odp's log-bin IQR PTR function it is *proved* (`logBinIQR_ptr`, `logBinPTR_isPTR`) from
  `TailNoise`, `IntLaw.ShiftWithin`, the pass tail and `IQRDataFacts`.
* `Iter.Stops`, `SVTQuery`/`Analyst` and the mechanisms' definitions are the model, not
  assumptions.

## Finiteness (narrower than the real mechanisms, said, not hidden)

The Core's Theorem 7 needs finite output types (`Enum`, `Odp/Mech/Common/Enum.lean`). odp's Python
mechanisms give every release a finite output space by construction: the grid releases, the
released IQR sub-bin index (`LogBinIQR`, `python/odp/mechanisms/ptr/mechanism.py`) and each
coordinate of a noisy gradient step (`python/odp/mechanisms/iterative.py`) are clamped to a
declared public window after the noise (post-processing), so the Lean models, which take such
finite windows (`Window`, `Vec C d`; clamping each coordinate keeps `ShiftDominated`, above),
cover odp's releases. Each coordinate of Alg. 4's released model is clamped to a public window
too (`python/odp/mechanisms/erm.py`). The statement for unclamped, countable outputs is the limit of growing windows;
that limit is not formalised (it is not needed for what odp runs).

## Which hypotheses have genuine witnesses, and which do not

Genuine witnesses — laws of the kind named above, depending on the data, the law odp samples
where it has no infinite sum — are in `Odp/Mech/Common/Witnesses.lean` (table there),
`Odp/Mech/Laplace/Law.lean` and `Odp/Mech/Common/NoiseSat.lean`: `TailNoise`, `LapTail`,
`Iter.ShiftDominated` (the discrete Laplace tail and the clamped discrete Laplace law, in closed
form), `IntLaw` with `ShiftWithin 0` (the point mass: odp's `resolution = 1`), `Iter.StepsDP`,
`Iter.PrefixDP`, `Iter.L1Sensitive`, `IQRDataFacts`, `ERMRelease`, `TestSensitivity`,
`UtilitySensitivity`, `MedianDP`.

**Not witnessed, and why.** No instance of `LapNoise` or `GaussNoise` is built, and
`IntLaw.ShiftBound` (so `IntLaw.ShiftWithin n` for `n ≥ 1`) has none either:

* A finitely supported law cannot be one: if `z` is its largest support point,
  `E[1_{z+1}(Z + 1)] = Pr[Z = z] > 0` while `e^α E[1_{z+1}(Z)] = e^α Pr[Z = z + 1] = 0` (for
  `ShiftBound`: shift the event just past the largest point of the support). So every instance
  has infinite support, and its expectation of a bounded function is an infinite series: defining
  it needs the completeness of the reals (a least upper bound of the partial sums), which an
  `ExpField` does not provide (the rationals with `exp ≡ 1` are an `ExpField`). That is real
  analysis — the Mathlib layer, not compiled here.
* `LapNoise` is used only for **SVT's threshold noise ρ**, which odp draws unclamped
  (`odp.mechanisms.svt`: `rho = discrete_laplace(threshold_scale)`, compared with each noisy
  query); its answer probabilities are sums over all of ℤ (odp's exact audit,
  `odp.mechanisms.svt.audit.answer_probability`, sums the two tails as geometric series). Clamping
  ρ would give a finite law, but it is not what odp samples, so it is not done here. So Lemma 8
  (`svt_odp`) and the certificate kinds `svt` rest on `LapNoise` for the discrete Laplace of scale
  `m/ε1`, which SampCert proves with Mathlib for its sampler (cited above).
* `GaussNoise`'s `δ` is Canonne–Kamath–Steinke's Theorem 7 bound for the discrete Gaussian, a
  statement about an infinite sum (its normaliser is a theta series), computed by tested Python
  code; the clamped Gaussian's masses have no closed form either. So the Gaussian results rest
  on `GaussNoise`.
* `IntLaw.ShiftBound` (release noise of the generic log-bin theorems for `L ≥ 2`) is not needed
  for odp's `M_IQR`: its release is clamped, and `iqr_logBinLap_odp` is proved about that finite
  law. The generic theorems (`logBinIQR_ptr`, `iqr_logBin_odp`) keep it, for any noise law.

The grid Laplace mechanism, M_toy, randomized response, the exponential median and odp's
`M_IQR` take **no noise hypothesis**: their laws are written out and proved to be probability
distributions (`clampedLaplace`, `rrMech`, `expMech`, `lapRelease` with the discrete Laplace
tail). What remains for them is that odp's Python samplers draw exactly these laws (tested in
Python against the exact laws, not proved).
-/
module

public import Odp.Mech.Iterative.Steps

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

variable {R : Type} [ExpField R]

/-! ## 1. Noise primitives -/

/-- `f` is non-negative and bounded: the functions on which an expectation is taken. -/
def Bdd (f : Int → R) : Prop := ∃ B : R, ∀ z, 0 ≤ f z ∧ f z ≤ B

/-- The indicator function of a set `S ⊆ ℤ`. -/
def ind (S : Int → Bool) : Int → R := fun z => if S z then 1 else 0

/-- **Hypothesis shape.** The expectation `E f = 𝔼[f(Z)]` of a noise variable `Z` on `ℤ`, on
non-negative bounded functions. For a mass function `p` on `ℤ` (and `R = ℝ`),
`E f = ∑_z p(z) f(z)` satisfies every field. -/
structure Expect (R : Type) [ExpField R] where
  /-- `E f = 𝔼[f(Z)]` -/
  E : (Int → R) → R
  nonneg : ∀ f, Bdd f → 0 ≤ E f
  add : ∀ f g, Bdd f → Bdd g → E (fun z => f z + g z) = E f + E g
  smul : ∀ (a : R) (f : Int → R), 0 ≤ a → Bdd f → E (fun z => a * f z) = a * E f
  one : E (fun _ => 1) = 1

/-- **Hypothesis (discrete Laplace, scale `1/α`).** A unit shift of the noise costs `e^α`:
`𝔼[f(Z + 1)] ≤ e^α 𝔼[f(Z)]` and `𝔼[f(Z − 1)] ≤ e^α 𝔼[f(Z)]` for non-negative bounded `f`.
Satisfied by `odp.samplers.discrete_laplace(1/α)`: re-index the sum and use
`p(w ∓ 1) ≤ e^α p(w)` (see the file header). -/
structure LapNoise (R : Type) [ExpField R] (α : R) extends Expect R where
  shift_up : ∀ f, Bdd f → E (fun z => f (z + 1)) ≤ exp α * E f
  shift_down : ∀ f, Bdd f → E (fun z => f (z - 1)) ≤ exp α * E f

/-- **Hypothesis (discrete Laplace tail, scale `1/β`).** `G t = Pr[ν ≥ t]`: in `[0, 1]`,
antitone, and `G t ≤ e^β G (t + 1)`. Satisfied by the tail of
`odp.samplers.discrete_laplace(1/β)` (`odp.samplers.discrete_laplace_tail`); see
`discreteLaplaceTail_isLapTail` (`Odp/Mech/Common/NoiseSat.lean`) for the closed form in any
`ExpField`. -/
structure LapTail (R : Type) [ExpField R] (β : R) where
  /-- `G t = Pr[ν ≥ t]` -/
  G : Int → R
  nonneg : ∀ t, 0 ≤ G t
  le_one : ∀ t, G t ≤ 1
  anti : ∀ t, G (t + 1) ≤ G t
  ratio : ∀ t, G t ≤ exp β * G (t + 1)

/-- **Hypothesis (tail noise).** An integer noise `Z` through its tail `G t = Pr(Z ≥ t)`, with
one threshold step costing `e^c` in both directions (the discrete Laplace with scale `1/c`). -/
structure TailNoise (R : Type) [ExpField R] (c : R) where
  /-- `G t = Pr(Z ≥ t)` -/
  G : Int → R
  nonneg : ∀ t, 0 ≤ G t
  le_one : ∀ t, G t ≤ 1
  antitone : ∀ t, G (t + 1) ≤ G t
  /-- `Pr(Z ≥ t) ≤ e^c Pr(Z ≥ t + 1)` -/
  up : ∀ t, G t ≤ exp c * G (t + 1)
  /-- `Pr(Z < t + 1) ≤ e^c Pr(Z < t)` -/
  down : ∀ t, 1 - G (t + 1) ≤ exp c * (1 - G t)

/-- **Hypothesis shape.** The law of an integer noise on all subsets of ℤ: a finitely additive
probability (every distribution on ℤ is one). -/
structure IntLaw (R : Type) [ExpField R] where
  /-- `P B = Pr(W ∈ B)` -/
  P : (Int → Bool) → R
  nonneg : ∀ B, 0 ≤ P B
  total : P (fun _ => true) = 1
  additive : ∀ B C : Int → Bool, (∀ z, B z = true → C z = false) →
    P (fun z => B z || C z) = P B + P C

/-- **Hypothesis (unit shifts of an integer noise).** Shifting the noise by `±1` costs `e^c` on
every event (the discrete Laplace with scale `1/c`). -/
def IntLaw.ShiftBound (W : IntLaw R) (c : R) : Prop :=
  ∀ B : Int → Bool, W.P (fun z => B (z + 1)) ≤ exp c * W.P B ∧
    W.P (fun z => B (z - 1)) ≤ exp c * W.P B

/-- **Hypothesis (bounded shifts of an integer noise).** Shifting the noise by any `s` with
`|s| ≤ n` costs `e^ε` on every event (from `ShiftBound` when `n·c ≤ ε`). -/
def IntLaw.ShiftWithin (W : IntLaw R) (n : Nat) (ε : R) : Prop :=
  ∀ (B : Int → Bool) (s : Int), s.natAbs ≤ n → W.P (fun z => B (z + s)) ≤ exp ε * W.P B

namespace Iter

/-- **Hypothesis (noise of one coordinate of an iterative step).** Shifting the centre of the
noise by `s` costs at most `e^{|s| r}` per output (the clamped discrete Laplace of scale
`1/r`). -/
def ShiftDominated {C : Type} [Enum C] (N : Int → Dist C R) (r : R) : Prop :=
  ∀ (u u' : Int) (c : C), (N u).mass c ≤ exp (natR (u - u').natAbs * r) * (N u').mass c

end Iter

/-! ## 2. Numerical bounds computed by tested Python code (and declared step parameters) -/

/-- **Hypothesis (discrete Gaussian, (ε, δ) for shifts up to `m`).** For every integer shift
`|d| ≤ m` and every set `S ⊆ ℤ`: `Pr[Z + d ∈ S] ≤ e^ε Pr[Z ∈ S] + δ`. Satisfied by
`odp.samplers.discrete_gaussian(σ²)` with δ from Canonne–Kamath–Steinke, Theorem 7 (odp declares
the upper bound `odp.gaussian_dp.discrete_gaussian_delta_upper(ε, σ², m)`, tested Python). -/
structure GaussNoise (R : Type) [ExpField R] (m : Nat) (ε δ : R) extends Expect R where
  shift : ∀ d : Int, -(m : Int) ≤ d → d ≤ (m : Int) → ∀ S : Int → Bool,
    E (fun z => ind S (z + d)) ≤ exp ε * E (ind S) + δ

namespace Iter

variable {X W : Type} [Enum W]

/-- **Hypothesis (COMP of Lemma 11).** For every stop `i`, the prefix mechanism
`M^{k_i} = (M_1, …, M_{k_i})` is `(ε^{k_i}, δ^{k_i})`-DP (proved for basic composition,
`Odp.Mech.prefixDP_basic`; numbers from tested Python code for privacy buckets, the optimal
composition and RDP). -/
def PrefixDP (Nbr : X → X → Prop) (M : Step X W R) (ks : List Nat)
    (epsK delK : Fin ks.length → R) : Prop :=
  ∀ i, DP Nbr (prefixMech M (ks.get i)) (epsK i) (delK i)

/-- **Hypothesis (steps).** Step `k` (history length `k − 1`) is `(ε_k, δ_k)`-DP for every
released history, `k = 1 … |eps|`; `eps = [ε_1, …]`, `dl = [δ_1, …]` (a user's declared
`StepSpec`s; proved for `NoisyGradientDescent`, `Odp.Mech.noisyStep_dp`). -/
def StepsDP (Nbr : X → X → Prop) (M : Step X W R) (eps dl : List R) : Prop :=
  ∀ h : List W, h.length < eps.length →
    DP Nbr (M h) (eps.getD h.length 0) (dl.getD h.length 0)

end Iter

/-! ## 3. Stated data facts -/

/-- **Stated data fact.** The two facts about one discretisation of the IQR estimator (Python
docstring of `odp.mechanisms.ptr`): the stability statistic `A` is 1-Lipschitz, and `A x ≥ 2`
puts the IQR of `x` and of every neighbour in one bin `k`, whose sub-bin indices are
`k·L, …, k·L + L − 1`. Stated (tested in Python), not proved. -/
structure IQRDataFacts {X : Type} (Nbr : X → X → Prop) (A : X → Int) (sub : X → Option Int)
    (L : Nat) : Prop where
  lipschitz : ∀ x x', Nbr x x' → A x ≤ A x' + 1 ∧ A x' ≤ A x + 1
  same_bin : ∀ x x', Nbr x x' → 2 ≤ A x →
    ∃ k j j' : Int, sub x = some j ∧ sub x' = some j' ∧
      k * L ≤ j ∧ j < k * L + L ∧ k * L ≤ j' ∧ j' < k * L + L

/-- **Stated data fact (and the DP of Alg. 4).** Alg. 4 on a finite grid `V`: `ε₁`-DP in the
training set, and the coupling of App. D (same continuous noise on neighbouring training sets)
under which the test score moves by at most `m` grid units. Stated, not proved. -/
structure ERMRelease {Xtr V T : Type} [Enum V] (NbrTr : Xtr → Xtr → Prop)
    (rel : Xtr → Dist V R) (score : V → T → Int) (ε₁ : R) (m : Nat) : Prop where
  dp : DP NbrTr rel ε₁ 0
  coupling : ∀ a a', NbrTr a a' → ∃ π : V → V → R, (∀ v v', 0 ≤ π v v') ∧
    (∀ v, fsum (fun v' => π v v') = (rel a).mass v) ∧
    (∀ v', fsum (fun v => π v v') = (rel a').mass v') ∧
    (∀ v v', π v v' ≠ 0 → ∀ t, (score v t - score v' t).natAbs ≤ m)

/-- **Stated data fact.** A change of one test record moves the test score of every model by at
most `m` grid units (Lemma 21, part 2, on the grid). Stated, not proved. -/
def TestSensitivity {V T : Type} (NbrTe : T → T → Prop) (score : V → T → Int) (m : Nat) : Prop :=
  ∀ v t t', NbrTe t t' → (score v t - score v t').natAbs ≤ m

/-- **Stated data fact.** The median's utility `u x y` (odp's `ExponentialMedian.utilities`:
`u(y) = −max(#{xᵢ < y}, #{xᵢ > y})`) changes by at most 1 between neighbours. Stated, not
proved. -/
def UtilitySensitivity {X Y : Type} (Nbr : X → X → Prop) (u : X → Y → Int) : Prop :=
  ∀ x x' y, Nbr x x' → u x y ≤ u x' y + 1 ∧ u x' y ≤ u x y + 1

namespace Iter

variable {X : Type}

/-- **Stated data fact (sensitivity of the gridded gradient).** For every released history,
neighbouring databases' integer centres differ by at most `m` in L1 norm. -/
def L1Sensitive {C : Type} (Nbr : X → X → Prop) (d : Nat) (g : List (Vec C d) → X → Vec Int d)
    (m : Nat) : Prop :=
  ∀ (h : List (Vec C d)) (x x' : X), Nbr x x' → l1 d (g h x).1 (g h x').1 ≤ m

end Iter

/-! ## 4. An interface, proved for odp's own mechanism -/

/-- **Interface.** The median mechanism of the IQR-then-median pipeline is `e`-DP (δ = 0) for
every budget `e ≥ 0` it is run with (proved for odp's exponential median, `expMedian_dp`). -/
def MedianDP {X Y : Type} [Enum Y] (Nbr : X → X → Prop) (med : R → Mechanism X Y R) : Prop :=
  ∀ e, 0 ≤ e → DP Nbr (med e) e 0

end

end Odp.Mech
