"""Charts (PNG and SVG) for a DA analysis result; matplotlib is imported
only when drawing, as in :mod:`app.stats.charts`."""

from __future__ import annotations

import os

from .report import significance
from ..charts import COLOURS, pyplot, save_figure

__all__ = ["write_da_plots"]


def z_scores_chart(result, directory: str) -> list[str]:
    """System z scores (best on top) with their 95% intervals."""
    plt = pyplot()
    rows = [s for s in result["systems"] if s["z"] is not None][::-1]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.4))
    ys = list(range(len(rows)))
    zs = [r["z"] for r in rows]
    low = [r["z"] - r["z_ci_low"] if r["z_ci_low"] is not None else 0 for r in rows]
    high = [r["z_ci_high"] - r["z"] if r["z_ci_high"] is not None else 0 for r in rows]
    ax.errorbar(zs, ys, xerr=[low, high], fmt="o", color=COLOURS[0],
                ecolor="#555555", capsize=3)
    ax.axvline(0, color="#999999", linewidth=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels([f"{r['system']} (N={r['z_segments']})" for r in rows])
    ax.set_xlabel("mean z score over segments")
    ax.set_title("System z scores with 95% intervals")
    paths = save_figure(fig, directory, "da_z_scores")
    plt.close(fig)
    return paths


def significance_chart(result, directory: str) -> list[str]:
    """Heat map of the Wilcoxon matrix: darker where the row system is
    better than the column system at a smaller p (as in WMT's figures)."""
    plt = pyplot()
    import numpy as np
    from matplotlib.colors import BoundaryNorm, ListedColormap

    names = [s["system"] for s in result["systems"]]
    matrix = significance(result)  # the report's stars: Holm unless asked otherwise
    level = np.full((len(names), len(names)), np.nan)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            p = matrix[a].get(b)
            if p is not None:
                level[i, j] = 3 if p < 0.001 else 2 if p < 0.01 else \
                    1 if p < 0.05 else 0
    size = 0.55 * len(names) + 2
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    cmap = ListedColormap(["#f0f0f0", "#c7e9c0", "#74c476", "#238b45"])
    image = ax.imshow(level, cmap=cmap, norm=BoundaryNorm([-0.5, 0.5, 1.5, 2.5, 3.5], 4))
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    ax.set_xlabel("worse")
    ax.set_ylabel("better")
    corrected = ", Holm" if result["settings"].get("correction") == "holm" else ""
    ax.set_title(f"One-sided Wilcoxon rank-sum{corrected}: row better than column")
    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, ticks=[0, 1, 2, 3])
    bar.ax.set_yticklabels(["p >= 0.05", "p < 0.05", "p < 0.01", "p < 0.001"])
    paths = save_figure(fig, directory, "da_significance")
    plt.close(fig)
    return paths


def write_da_plots(result, directory: str) -> list[str]:
    """Draw the charts into ``directory`` (the heat map only when there are two
    systems to compare, neither when no system has a z score); returns the
    file paths."""
    os.makedirs(directory, exist_ok=True)
    with_z = [s for s in result["systems"] if s["z"] is not None]
    paths = z_scores_chart(result, directory) if with_z else []
    if len(result["systems"]) > 1:
        paths += significance_chart(result, directory)
    return paths
