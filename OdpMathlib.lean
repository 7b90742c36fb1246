/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

Root of the `OdpMathlib` library (lake): the Mathlib layer — Theorem 7 for countable output
spaces with Mathlib's `PMF` and ℝ, the bridge from the ℕ ledger to real budgets, and
`#print axioms` of the main theorems. Stated for the external elan/Mathlib workflow
(`.github/workflows/lean.yml`); never compiled by `scripts/check_lean.sh` on our machines (no
Mathlib there). The checked modules are the library `Odp`.
-/
import OdpMathlib.Real
import OdpMathlib.Prob
import OdpMathlib.Defs
import OdpMathlib.Lemmas
import OdpMathlib.Lemma20
import OdpMathlib.Composition
import OdpMathlib.Rules
import OdpMathlib.Axioms

set_option autoImplicit false
