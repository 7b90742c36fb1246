"""Figures 1 and 2 of Hartmann et al. 2022 regenerate from the CLI as viewable PNGs with labelled
axes, and their plotted numbers agree with independent computations."""

from __future__ import annotations

import json
import math

import matplotlib
import matplotlib.figure
import numpy as np
import pytest
from scipy import integrate, stats

from odp.cli import main
from odp.figures import fig1

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def captured_axes(monkeypatch):
    """Record the axes of every figure the renderers save."""
    axes = []
    original = matplotlib.figure.Figure.savefig

    def savefig(self, *args, **kwargs):
        axes.extend(self.axes)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    return axes


def _run(name, path, capsys):
    assert main(["figure", name, "-o", str(path), "--quick", "--seed", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    image = matplotlib.image.imread(str(path))
    assert image.shape[0] > 300 and image.shape[1] > 400
    return report["data"]


def test_figure_1_from_the_cli(tmp_path, capsys, captured_axes):
    data = _run("1", tmp_path / "fig1.png", capsys)
    ax = captured_axes[-1]
    assert "large entries" in ax.get_xlabel() and "noise" in ax.get_ylabel()
    exact, sim = data["exact"], data["simulation"]
    assert all(v == pytest.approx(40) for v in exact["no_odp"])  # cΔ/ε3
    odp = exact["odp"]
    assert all(a < b for a, b in zip(odp, odp[1:])) and odp[-1] <= 40.5 and odp[0] < 3
    for key in ("odp", "no_odp"):
        for mean, se, ref in zip(sim[key], sim[key + "_se"], exact[key]):
            assert abs(mean - ref) <= 4.5 * se + 0.02 * ref


def test_figure_1_count_distribution_against_direct_quadrature():
    """P(c' = k) of the figure's exact curve vs scipy's adaptive quadrature of the same
    integral written directly (one k), and total mass 1."""
    eps1, eps2 = 0.5 / (1 + 40 ** (2 / 3)), 0.5 - 0.5 / (1 + 40 ** (2 / 3))
    large = 3
    pk = fig1.count_distribution(large, eps1, eps2)
    assert pk.sum() == pytest.approx(1, abs=1e-9)
    nu = 2 * 20 / eps2

    def sf(x):
        return 0.5 * math.exp(-x / nu) if x >= 0 else 1 - 0.5 * math.exp(x / nu)

    def integrand(z):
        pb, ps = sf(z - 500), sf(500 + z)
        prob = sum(stats.binom.pmf(i, large, pb) * stats.binom.pmf(large - i, 97, ps)
                   for i in range(large + 1))
        return prob * math.exp(-abs(z) * eps1) * eps1 / 2

    direct = sum(integrate.quad(integrand, lo, hi, limit=200)[0]
                 for lo, hi in ((-2000, -500), (-500, 0), (0, 500), (500, 2000)))
    assert pk[large] == pytest.approx(direct, rel=1e-6)


def test_figure_2_from_the_cli(tmp_path, capsys, captured_axes):
    data = _run("2", tmp_path / "fig2.png", capsys)
    ax = captured_axes[-1]
    assert "database size" in ax.get_xlabel() and "95th percentile" in ax.get_ylabel()
    for eps2, values in data["percentile"].items():
        for n, value in zip(data["sizes"], values):
            n_train, n_test = 0.7 * n, 0.3 * n
            a = max(2 / n_test, 2 * math.expm1(2 / n_train))
            assert value == pytest.approx(stats.laplace(scale=a / float(eps2)).ppf(0.95))
        # the mechanism's own grid noise: its sampled percentile is close to the formula
        for n, sampled in zip(data["sampled_sizes"], data["sampled_percentile"][eps2]):
            i = data["sizes"].index(n)
            assert sampled == pytest.approx(data["percentile"][eps2][i], rel=0.25)
    assert np.all(np.diff(data["percentile"]["0.1"]) < 0)  # more data, less noise
