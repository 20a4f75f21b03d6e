"""Plots of the sweep, as PNG and SVG with byte-stable output.

How it works. matplotlib with the Agg backend draws three figures from the sweep summary:
the harm kinds per system and tier, a heat map of fault kind (counted where it took effect)
against system, and the distribution of time to resolution (non-failing and failing apart);
and one from the coding sweep (``coding``): runs with each kind of harm per system, and runs
with a change refused for no reason per system, as counts. Metadata that would vary (dates,
software version) is dropped and the SVG hash salt is fixed, so the same summary gives the
same bytes.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from faults.systems import SYSTEM_NAMES  # noqa: E402
from sim.tiers import TIER_NAMES  # noqa: E402

COLORS = {"naive": "#c0392b", "idempotency": "#e67e22", "durable": "#8e44ad",
          "kernel": "#27ae60", "advisory": "#e67e22", "filehash": "#8e44ad",
          "symbol": "#2980b9"}


def save(fig: Any, out: Path, name: str) -> None:
    plt.rcParams["svg.hashsalt"] = "exactly-once-sim"
    fig.savefig(out / f"{name}.png", dpi=100, metadata={"Software": None})
    fig.savefig(out / f"{name}.svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)


HARM_COLORS = {"money": "#c0392b", "authority": "#e67e22", "dishonest": "#8e44ad",
               "unresolved": "#7f8c8d", "protocol": "#2c3e50"}


def violations(out: Path, summary: dict[str, Any]) -> None:
    """Harm kinds separated, per system (panel) and tier (group); kernel AMBIGUOUS beside."""
    table = summary["table"]
    harms = list(HARM_COLORS)
    fig, axes = plt.subplots(1, len(SYSTEM_NAMES) + 1, figsize=(14, 4.2), sharey=True)
    width = 0.8 / len(harms)
    for ax, system in zip(axes, SYSTEM_NAMES):
        for i, harm in enumerate(harms):
            shares = [100 * table[f"{system}/{t}"]["harm"][harm] /
                      max(1, table[f"{system}/{t}"]["runs"]) for t in TIER_NAMES]
            xs = [j + (i - (len(harms) - 1) / 2) * width for j in range(len(TIER_NAMES))]
            bars = ax.bar(xs, shares, width, label=harm, color=HARM_COLORS[harm])
            for bar, share in zip(bars, shares, strict=True):
                if share:
                    ax.annotate(f"{share:.0f}", (bar.get_x() + bar.get_width() / 2, share),
                                ha="center", va="bottom", fontsize=6)
        ax.set_xticks(range(len(TIER_NAMES)), TIER_NAMES)
        ax.set_title(system)
        ax.set_ylim(0, 105)
    axes[0].set_ylabel("runs with this harm (%)")
    axes[0].legend(fontsize=7, title="harm")
    amb = axes[-1]
    shares = [100 * table[f"kernel/{t}"]["ambiguous"] / max(1, table[f"kernel/{t}"]["runs"])
              for t in TIER_NAMES]
    bars = amb.bar(TIER_NAMES, shares, color=COLORS["kernel"], alpha=0.7)
    for bar, share in zip(bars, shares, strict=True):
        amb.annotate(f"{share:.0f}", (bar.get_x() + bar.get_width() / 2, share),
                     ha="center", va="bottom", fontsize=7)
    amb.set_title("kernel: AMBIGUOUS (%)")
    amb.set_xlabel("availability lost, not harm", fontsize=8)
    fig.suptitle(f"Harm by kind, system and tier, {summary['cases']} seeded cases")
    fig.tight_layout()
    save(fig, out, "violations_by_system_tier")


def heatmap(out: Path, summary: dict[str, Any]) -> None:
    """Rows: fault kinds; each cell: of the system's runs where the fault took effect (the
    count is printed), the share that failed; "-" where it never took effect for that
    system (a baseline keeps no journal to recover late from); colour 0-100%."""
    kinds = sorted(summary["kinds"])
    if not kinds:
        return
    grid: list[list[float]] = []
    labels: list[str] = []
    counts: list[list[int]] = []
    nan = float("nan")
    for kind in kinds:
        info = summary["kinds"][kind]
        took = info["took_effect_runs"]
        labels.append(kind)
        counts.append([took.get(s, 0) for s in SYSTEM_NAMES])
        grid.append([100 * info["failing_runs"].get(s, 0) / took[s] if took.get(s) else nan
                     for s in SYSTEM_NAMES])
    fig, ax = plt.subplots(figsize=(9, 0.36 * len(kinds) + 1.8))
    im = ax.imshow(grid, cmap="Reds", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(range(len(SYSTEM_NAMES)), SYSTEM_NAMES)
    ax.set_yticks(range(len(kinds)), labels, fontsize=8)
    for r, row in enumerate(grid):
        for c, value in enumerate(row):
            text = "-" if value != value else f"{value:.0f}% of {counts[r][c]}"
            ax.text(c, r, text, ha="center", va="center", fontsize=6.5,
                    color="white" if value > 60 else "black")
    fig.colorbar(im, ax=ax, label="failing (%)")
    ax.set_title("Fault kind (took effect) x system: share of runs that fail")
    fig.tight_layout()
    save(fig, out, "heatmap_fault_system")


def _expand(hist: list[list[int]]) -> list[int]:
    return [max(1, value) for value, count in hist for _ in range(count)]


def resolution(out: Path, summary: dict[str, Any]) -> None:
    """Time to resolution, measured alike for every system: non-failing runs (solid) and
    failing runs (hatched) apart."""
    hists = summary["resolution_hist"]
    rows = [(n, v) for s in SYSTEM_NAMES for t in TIER_NAMES for v in ("ok", "failing")
            for n in [f"{s}/{t}"] if hists.get(n, {}).get(v)]
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(9, 0.28 * len(rows) + 1.5))
    data = [_expand(hists[n][v]) for n, v in rows]
    parts = ax.boxplot(data, vert=False, whis=(5, 95), showfliers=False, patch_artist=True)
    for patch, (name, verdict) in zip(parts["boxes"], rows, strict=True):
        patch.set_facecolor(COLORS[name.split("/")[0]])
        patch.set_alpha(0.6)
        if verdict == "failing":
            patch.set_hatch("///")
    ax.set_yticks(range(1, len(rows) + 1), [f"{n} {v}" for n, v in rows], fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("submission until the caller can know the outcome (ms of simulated time, "
                  "log; whiskers 5-95%)")
    ax.set_title("Time to resolution per system and tier, non-failing and failing runs")
    fig.tight_layout()
    save(fig, out, "time_to_resolution")


def write(out: Path, rows: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    if not summary["cases"]:
        return
    violations(out, summary)
    heatmap(out, summary)
    resolution(out, summary)


CODING_HARMS = {  # the coding judge's harm kinds, as the plot's axis names them
    "broken_tree": "tree fails\nits tests", "implemented_twice": "symbol\nimplemented twice",
    "test_edited": "reference\ntest edited", "revoked_lease_write": "landed under\na revoked lease",
    "superseded_plan_write": "landed under a\nsuperseded plan",
    "stale_owner_write": "stale owner's\nwrite landed", "over_budget": "budget\noverrun",
    "dishonest": "receipt says\notherwise", "unresolved": "unit\nleft open",
    "journal_breach": "journal\nbreaks G1-G8", "driver_error": "driver\nerror"}


def _counted(ax: Any, bars: Any, counts: list[int], size: float) -> None:
    for bar, n in zip(bars, counts, strict=True):
        ax.annotate(str(n), (bar.get_x() + bar.get_width() / 2, n), xytext=(0, 1.5),
                    textcoords="offset points", ha="center", va="bottom", fontsize=size,
                    rotation=90 if size < 7 else 0)


def coding_figure(summary: dict[str, Any], systems: tuple[str, ...],
                  labels: dict[str, str]) -> Any:
    """Left: runs with each kind of harm (the kinds some system shows), one bar per system,
    the count on every bar; right: runs with a change refused for no reason, per system."""
    table = summary["systems"]
    kinds = [h for h in CODING_HARMS if any(table[s]["by_harm"].get(h) for s in systems)]
    wide = max(4, len(kinds))
    fig, (harm, lost) = plt.subplots(1, 2, figsize=(14, 4.8),
                                     gridspec_kw={"width_ratios": [wide, 2]})
    width = 0.8 / len(systems)
    top = 1
    for i, s in enumerate(systems):
        counts = [table[s]["by_harm"].get(h, 0) for h in kinds]
        xs = [j + (i - (len(systems) - 1) / 2) * width for j in range(len(kinds))]
        _counted(harm, harm.bar(xs, counts, width, label=labels[s], color=COLORS[s]), counts, 6)
        top = max([top, *counts])
    harm.set_xticks(range(len(kinds)), [CODING_HARMS[h] for h in kinds], fontsize=7)
    harm.set_ylim(0, top * 1.3)
    harm.set_ylabel(f"runs with this harm (of {summary['cases']})")
    harm.legend(fontsize=7, loc="upper center", ncol=len(systems))
    none = [CODING_HARMS[h].replace("\n", " ") for h in CODING_HARMS if h not in kinds]
    title = "Harm by kind" + (f" (none in any system: {', '.join(none)})" if none else "")
    harm.set_title(textwrap.fill(title, 14 * wide), fontsize=8)
    counts = [table[s]["lost_availability"] for s in systems]
    bars = lost.bar(range(len(systems)), counts, color=[COLORS[s] for s in systems], alpha=0.7)
    _counted(lost, bars, counts, 7)
    lost.set_xticks(range(len(systems)), [textwrap.fill(labels[s], 9) for s in systems],
                    fontsize=7)
    lost.set_ylim(0, max([1, *counts]) * 1.2)
    lost.set_title("Availability lost: runs that refused\na change that would have been correct",
                   fontsize=8)
    for ax in (harm, lost):
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle(f"Coding agents: {summary['cases']} seeded cases, every system")
    fig.tight_layout()
    return fig


def coding(out: Path, summary: dict[str, Any], systems: tuple[str, ...],
           labels: dict[str, str]) -> None:
    """``coding_harm_by_system.png/svg`` from the coding sweep's summary."""
    if summary["cases"]:
        save(coding_figure(summary, systems, labels), out, "coding_harm_by_system")
