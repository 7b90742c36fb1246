"""Quick and full example counts for the heaviest property tests.

``@examples(quick=40, full=250)`` runs a test twice under one name: ``test_x[quick]`` draws 40
hypothesis examples in the default run (``python -m pytest``), ``test_x[full]`` is marked
``slow`` and draws the full 250 (``python -m pytest -m slow``, which CI runs).  The test passes
``max_examples`` to its own ``@settings``::

    @examples(quick=40, full=250)
    def test_x(max_examples):
        @settings(max_examples=max_examples, deadline=None)
        @given(st.integers())
        def check(n):
            ...

        check()

Both variants assert the same thing; only the number of random cases differs.
"""

from __future__ import annotations

import pytest


def examples(*, quick: int, full: int):
    if not 0 < quick < full:
        raise ValueError(f"need 0 < quick < full, got quick={quick}, full={full}")
    return pytest.mark.parametrize("max_examples", [
        pytest.param(quick, id="quick"),
        pytest.param(full, id="full", marks=pytest.mark.slow),
    ])
