/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

Root of the `Odp` library (lake): the checked modules — the formal core of the ODP paper
(Sec. 3 and App. B), the ledger rules used by the accountant's certificates, the mechanisms and
the certificate link. The Mathlib layer (stated only) is the separate library `OdpMathlib`.
See `Odp/NOTES.md` for the paper → Lean map.
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
import Odp.LedgerCore
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

set_option autoImplicit false
