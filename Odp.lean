/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

Root of the `Odp` library: the formal core of the ODP paper (Sec. 3 and App. B) and the ledger
rules used by the accountant's certificates. See `Odp/NOTES.md` for the paper → Lean map.
-/
import Odp.Core.Field
import Odp.Core.Sum
import Odp.Core.Prob
import Odp.Core.Defs
import Odp.Core.Lemmas
import Odp.Core.Lemma20
import Odp.Core.Composition
import Odp.Core.Ledger
import Odp.Core.Spec
import Odp.Real
import Odp.Prob
import Odp.Defs
import Odp.Lemmas
import Odp.Lemma20
import Odp.Composition
import Odp.LedgerCore
import Odp.Rules
import Odp.Certs.Example
import Odp.Mech.Basic
import Odp.Mech.Enum
import Odp.Mech.IQR
import Odp.Mech.IQRMedian
import Odp.Mech.IQRPipeline
import Odp.Mech.IterComposition
import Odp.Mech.IterModel
import Odp.Mech.IterSteps
import Odp.Mech.Iterative
import Odp.Mech.Laplace
import Odp.Mech.Noise
import Odp.Mech.NoiseSat
import Odp.Mech.PTR
import Odp.Mech.PTRLaws
import Odp.Mech.SVT
import Odp.Mech.Spec
import Odp.Mech.TestRelease
import Odp.Certs.Lemma11
import Odp.Certs.LinkCore
import Odp.Certs.LinkLaplace
import Odp.Certs.LinkPTR
import Odp.Certs.LinkIter
import Odp.Certs.Link
import Odp.Certs.Spec
import Odp.Certs.Witness
import Odp.Axioms

set_option autoImplicit false
