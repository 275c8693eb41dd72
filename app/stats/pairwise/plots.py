"""Charts (PNG and SVG) for a pairwise analysis result; matplotlib is
imported only when one is drawn (``app.stats.charts``).
"""

from __future__ import annotations

import os

from ..charts import COLOURS, pyplot, save_figure
from ..winners import CATEGORIES

__all__ = ["write_plots"]


def sentence_winners_chart(result, directory: str) -> list[str]:
    """Stacked horizontal bars: share of sentences per category and pair
    (like the paper's Figure 5)."""
    plt = pyplot()
    pairs = result["pairs"]
    fig, ax = plt.subplots(figsize=(9, 0.55 * len(pairs) + 1.6))
    labels = CATEGORIES
    for row, p in enumerate(reversed(pairs)):
        a, b = p["systems"]
        s = p["sentences"]
        counts = [s[c] for c in CATEGORIES]
        total = sum(counts) or 1
        left = 0.0
        for value, colour, label in zip(counts, COLOURS, labels):
            share = 100.0 * value / total
            ax.barh(row, share, left=left, color=colour,
                    label=label if row == 0 else None)
            if share >= 6:
                ax.text(left + share / 2, row, f"{share:.0f}", ha="center",
                        va="center", fontsize=7)
            left += share
        ax.text(-1, row, a, ha="right", va="center", fontsize=8)
        ax.text(101, row, b, ha="left", va="center", fontsize=8)
    ax.set_yticks([])
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of sentences (left system = A, right system = B)")
    ax.set_title("Per-sentence winners by system pair", pad=26)
    ax.legend(ncol=5, loc="lower center", bbox_to_anchor=(0.5, 1.0),
              frameon=False, fontsize=8)
    paths = save_figure(fig, directory, "sentence_winners")
    plt.close(fig)
    return paths


def bradley_terry_chart(result, directory: str) -> list[str]:
    """Bradley-Terry scores with bootstrap 95% intervals."""
    plt = pyplot()
    rows = list(reversed(result["bradley_terry"]))
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.4))
    ys = range(len(rows))
    scores = [r["score"] for r in rows]
    has_ci = all(r["ci_low"] is not None for r in rows)
    if has_ci:
        err = [[r["score"] - r["ci_low"] for r in rows],
               [r["ci_high"] - r["score"] for r in rows]]
        ax.errorbar(scores, list(ys), xerr=err, fmt="o", color=COLOURS[0],
                    ecolor="#555555", capsize=3)
    else:
        ax.plot(scores, list(ys), "o", color=COLOURS[0])
    ax.axvline(0, color="#999999", linewidth=0.8)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([r["system"] for r in rows])
    ax.set_xlabel("Bradley-Terry score (log strength, mean 0)")
    title = "Bradley-Terry scores"
    if has_ci:
        title += " with bootstrap 95% intervals"
    ax.set_title(title)
    paths = save_figure(fig, directory, "bradley_terry")
    plt.close(fig)
    return paths


def win_matrix_chart(result, directory: str) -> list[str]:
    """Heat map: share of the row system's wins among decided judgments."""
    plt = pyplot()
    import numpy as np

    m = result["win_matrix"]
    names = m["systems"]
    wins = np.asarray(m["wins"], dtype=float)
    decided = wins + wins.T
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(decided > 0, wins / decided, np.nan)
    size = 0.6 * len(names) + 2
    fig, ax = plt.subplots(figsize=(size + 1, size))
    image = ax.imshow(share, cmap="RdBu", vmin=0, vmax=1)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=45, ha="right")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names)
    for i in range(len(names)):
        for j in range(len(names)):
            if i != j and decided[i, j] > 0:
                ax.text(j, i, f"{share[i, j]:.2f}", ha="center", va="center",
                        fontsize=7)
    ax.set_xlabel("loser")
    ax.set_ylabel("winner")
    ax.set_title("Share of decided judgments won (row vs column)")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    paths = save_figure(fig, directory, "win_matrix")
    plt.close(fig)
    return paths


def write_plots(result, directory: str) -> list[str]:
    """Draw every chart into ``directory``; returns the file paths."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for chart in (sentence_winners_chart, bradley_terry_chart, win_matrix_chart):
        paths += chart(result, directory)
    return paths
