"""``python -m odp``: the ``odp`` command line (:func:`odp.cli.main`), for an environment whose
scripts directory is not on ``PATH``."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
