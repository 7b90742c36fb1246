"""Certificates: every budget transition of a run, checkable against the Lean rules.

* :func:`build_certificate` / ``Accountant.certificate()`` / ``odp certify`` export a run;
* :func:`verify` / ``odp verify`` replay it with the checker *generated* from
  ``Odp/LedgerCore.lean`` (``odp._lean_rules``), check the ledger's hash chain it records
  and say what was and was not established (:mod:`odp.certs.trust`), including per round
  whether its guarantee is proved in Lean or declared (:mod:`odp.certs.mechanisms`: each
  round's ``mech`` row, the mechanism and its parameters, and the table of built-ins);
* :mod:`odp.certs.lean` runs the compiled Lean checker ``odpcheck`` (and kernel-checked
  certificates) where a Lean toolchain exists;
* :mod:`odp.certs.enforce` re-checks each transition at run time (``Accountant(enforce=…)``).
"""

from .export import Certificate, build_certificate, certificate_of, sidecar_path
from .format import CertificateText, Step, parse
from .verify import VerifyResult, read_certificate, verify, verify_file

__all__ = ["Certificate", "build_certificate", "certificate_of", "sidecar_path", "CertificateText", "Step", "parse",
           "VerifyResult", "read_certificate", "verify", "verify_file"]
