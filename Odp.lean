/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

Root of the `Odp` library (lake): the checked modules — the formal core of the ODP paper
(Sec. 3 and App. B), the ledger rules used by the accountant's certificates, the mechanisms and
the certificate link. The Mathlib layer (stated only) is the separate library `OdpMathlib`.
See `Odp/paper_mapping.md` for the paper → Lean → Python → test map.
-/
import Odp.Core.Field
import Odp.Core.Sum
import Odp.Core.Prob
import Odp.Core.Defs
import Odp.Core.Lemmas
import Odp.Core.Lemma20
import Odp.Core.Composition
import Odp.Core.Ledger
import Odp.Core.Lanes
import Odp.Core.Spec
import Odp.LedgerCore
import Odp.Certs.Example
import Odp.Mech.Common.Enum
import Odp.Mech.Common.Noise
import Odp.Mech.Common.NoiseLaws
import Odp.Mech.Common.NoiseSat
import Odp.Mech.Common.Basic
import Odp.Mech.Common.Grid
import Odp.Mech.Laplace.Law
import Odp.Mech.Laplace.Privacy
import Odp.Mech.Gaussian.Privacy
import Odp.Mech.Toy.Privacy
import Odp.Mech.RandomizedResponse.Privacy
import Odp.Mech.SVT.Privacy
import Odp.Mech.PTR.Privacy
import Odp.Mech.PTR.IQR
import Odp.Mech.PTR.Pipeline
import Odp.Mech.PTR.Median
import Odp.Mech.TestRelease.Privacy
import Odp.Mech.Iterative.Steps
import Odp.Mech.Iterative.Model
import Odp.Mech.Iterative.Composition
import Odp.Mech.Iterative.Privacy
import Odp.Mech.Iterative.Lemma11
import Odp.Mech.Common.Witnesses
import Odp.Mech.Spec
import Odp.Certs.LinkCore
import Odp.Mech.Toy.Link
import Odp.Mech.Laplace.Link
import Odp.Mech.Gaussian.Link
import Odp.Mech.RandomizedResponse.Link
import Odp.Mech.SVT.Link
import Odp.Mech.PTR.Link
import Odp.Mech.TestRelease.Link
import Odp.Mech.Iterative.Link
import Odp.Certs.Link
import Odp.Certs.Spec
import Odp.Certs.Witness

set_option autoImplicit false
