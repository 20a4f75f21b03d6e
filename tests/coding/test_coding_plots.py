"""The coding sweep's plot: counts of the sweep, nothing clipped, the same bytes every time.

Planted: a y range too short for the bars pushes their counts out of the axes (the clipping
check must say so), and saving without the fixed SVG hash salt and the stripped metadata
gives other bytes on a second run (the reproducibility check must say so).
Reproduce: python3 -m pytest tests/coding/test_coding_plots.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pytest
from matplotlib.text import Text

from sim import plots
from sim.coding import sweep
from sim.coding.registry import SYSTEM_NAMES
from sim.coding.report import SYSTEM_LABEL


@pytest.fixture(scope="module")
def summary() -> dict[str, Any]:
    return sweep.summarize([sweep.case(seed) for seed in range(6)])


def clipped(fig: Any) -> list[str]:
    """Texts outside the figure, bar counts outside their axes, tick labels that overlap."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    out = []
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        box = text.get_window_extent(renderer)
        if box.x0 < page.x0 or box.y0 < page.y0 or box.x1 > page.x1 or box.y1 > page.y1:
            out.append(f"outside the figure: {text.get_text()!r}")
    for ax in fig.axes:
        for note in ax.texts:
            box = note.get_window_extent(renderer)
            if not ax.bbox.contains(box.x0, box.y0) or not ax.bbox.contains(box.x1, box.y1):
                out.append(f"outside its axes: count {note.get_text()}")
        ticks = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
        out += [f"tick labels overlap on {ax.get_title()!r}" for a, b in zip(ticks, ticks[1:])
                if a.x1 > b.x0]
    return out


def test_the_plot_shows_the_sweeps_counts_and_nothing_is_clipped(summary):
    fig = plots.coding_figure(summary, SYSTEM_NAMES, SYSTEM_LABEL)
    try:
        assert clipped(fig) == []
        harm, lost = fig.axes
        shown = sorted(int(t.get_text()) for t in harm.texts)
        table = summary["systems"]
        kinds = [h for h in plots.CODING_HARMS
                 if any(table[s]["by_harm"][h] for s in SYSTEM_NAMES)]
        assert shown == sorted(table[s]["by_harm"][h] for h in kinds for s in SYSTEM_NAMES)
        assert [int(t.get_text()) for t in lost.texts] == [
            table[s]["lost_availability"] for s in SYSTEM_NAMES]
        harm.set_ylim(0, max(shown) / 2)  # planted: bars taller than the axes
        assert any("outside its axes" in c for c in clipped(fig))
    finally:
        plt.close(fig)


def _written(out: Path, summary: dict[str, Any]) -> dict[str, bytes]:
    out.mkdir()
    plots.coding(out, summary, SYSTEM_NAMES, SYSTEM_LABEL)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_the_same_summary_gives_the_same_bytes(summary, tmp_path, monkeypatch):
    first = _written(tmp_path / "a", summary)
    assert set(first) == {"coding_harm_by_system.png", "coding_harm_by_system.svg"}
    assert _written(tmp_path / "b", summary) == first

    def unstable(fig: Any, out: Path, name: str) -> None:  # planted: no salt, no stripping
        plt.rcParams["svg.hashsalt"] = None
        fig.savefig(out / f"{name}.png", dpi=100)
        fig.savefig(out / f"{name}.svg")
        plt.close(fig)

    monkeypatch.setattr(plots, "save", unstable)
    assert _written(tmp_path / "c", summary) != _written(tmp_path / "d", summary)
