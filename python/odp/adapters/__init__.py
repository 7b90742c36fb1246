"""Mechanisms of other libraries as odp mechanisms.

* :func:`from_opendp` — an OpenDP ``Measurement`` at an input distance ``d_in``, with the
  guarantee its privacy map states (:mod:`odp.adapters.opendp`; needs the ``opendp`` extra).

Importing this package does not import OpenDP: it is loaded when first used.
"""

from __future__ import annotations

from .opendp import OpenDPMechanism, from_opendp

__all__ = ["OpenDPMechanism", "from_opendp"]
