"""Plots of the sweep, as PNG and SVG with byte-stable output.

How it works. matplotlib with the Agg backend draws three figures from the sweep summary:
failing runs per system and tier, a heat map of fault kind against system, and the
distribution of time to resolution. Metadata that would vary (dates, software version) is
dropped and the SVG hash salt is fixed, so the same summary gives the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from faults.systems import SYSTEM_NAMES  # noqa: E402
from sim.tiers import TIER_NAMES  # noqa: E402

COLORS = {"naive": "#c0392b", "idempotency": "#e67e22", "durable": "#8e44ad",
          "kernel": "#27ae60"}


def save(fig: Any, out: Path, name: str) -> None:
    plt.rcParams["svg.hashsalt"] = "exactly-once-sim"
    fig.savefig(out / f"{name}.png", dpi=100, metadata={"Software": None})
    fig.savefig(out / f"{name}.svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)


def violations(out: Path, summary: dict[str, Any]) -> None:
    table = summary["table"]
    fig, (ax, amb) = plt.subplots(1, 2, figsize=(10, 4.2), width_ratios=(3, 1.2))
    width = 0.8 / len(TIER_NAMES)
    for i, tier in enumerate(TIER_NAMES):
        rates = [100 * table[f"{s}/{tier}"]["rate"] for s in SYSTEM_NAMES]
        xs = [j + (i - (len(TIER_NAMES) - 1) / 2) * width for j in range(len(SYSTEM_NAMES))]
        bars = ax.bar(xs, rates, width, label=tier, color=plt.cm.Blues(0.35 + 0.18 * i))
        for bar, rate in zip(bars, rates, strict=True):
            ax.annotate(f"{rate:.0f}", (bar.get_x() + bar.get_width() / 2, rate),
                        ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(SYSTEM_NAMES)), SYSTEM_NAMES)
    ax.set_ylabel("runs with a violation (%)")
    ax.set_ylim(0, 105)
    ax.set_title(f"Violations, {summary['cases']} seeded cases")
    ax.legend(title="tier", fontsize=8)
    runs = [table[f"kernel/{t}"]["runs"] for t in TIER_NAMES]
    shares = [100 * table[f"kernel/{t}"]["ambiguous"] / max(1, n)
              for t, n in zip(TIER_NAMES, runs, strict=True)]
    bars = amb.bar(TIER_NAMES, shares, color=COLORS["kernel"], alpha=0.7)
    for bar, share in zip(bars, shares, strict=True):
        amb.annotate(f"{share:.0f}", (bar.get_x() + bar.get_width() / 2, share),
                     ha="center", va="bottom", fontsize=7)
    amb.set_ylim(0, 105)
    amb.set_title("Kernel: AMBIGUOUS (%)")
    amb.set_xlabel("tier (availability lost, never a violation)", fontsize=8)
    fig.tight_layout()
    save(fig, out, "violations_by_system_tier")


def heatmap(out: Path, summary: dict[str, Any]) -> None:
    kinds = sorted(summary["kinds"])
    if not kinds:
        return
    grid = []
    for kind in kinds:
        info = summary["kinds"][kind]
        runs = info["cases"] * len(TIER_NAMES)
        grid.append([100 * info["failing_runs"].get(s, 0) / runs for s in SYSTEM_NAMES])
    fig, ax = plt.subplots(figsize=(7, 0.32 * len(kinds) + 1.6))
    im = ax.imshow(grid, cmap="Reds", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(range(len(SYSTEM_NAMES)), SYSTEM_NAMES)
    ax.set_yticks(range(len(kinds)), kinds, fontsize=8)
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            ax.text(c, r, f"{value:.0f}", ha="center", va="center", fontsize=7,
                    color="white" if value > 60 else "black")
    fig.colorbar(im, ax=ax, label="failing runs among cases with this fault (%)")
    ax.set_title("Fault kind x system: share of runs that fail")
    fig.tight_layout()
    save(fig, out, "heatmap_fault_system")


def resolution(out: Path, summary: dict[str, Any]) -> None:
    samples = summary["resolution_samples"]
    names = [f"{s}/{t}" for s in SYSTEM_NAMES for t in TIER_NAMES if samples.get(f"{s}/{t}")]
    if not names:
        return
    fig, ax = plt.subplots(figsize=(9, 4.5))
    data = [[max(1, v) for v in samples[n]] for n in names]
    parts = ax.boxplot(data, vert=False, whis=(5, 95), showfliers=False, patch_artist=True)
    for patch, name in zip(parts["boxes"], names, strict=True):
        patch.set_facecolor(COLORS[name.split("/")[0]])
        patch.set_alpha(0.6)
    ax.set_yticks(range(1, len(names) + 1), names, fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("time to resolution (ms of simulated time, log scale; whiskers 5-95%)")
    ax.set_title("Time to resolution per system and tier")
    fig.tight_layout()
    save(fig, out, "time_to_resolution")


def write(out: Path, rows: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    if not summary["cases"]:
        return
    violations(out, summary)
    heatmap(out, summary)
    resolution(out, summary)
