"""What every protocol's charts share: the colours, matplotlib and saving.

matplotlib is imported only when a chart is drawn, with the non-interactive
Agg backend, so the rest of ``app.stats`` never needs it.
"""

from __future__ import annotations

import os

__all__ = ["COLOURS", "pyplot", "save_figure"]

# blue shades for A, grey for equal, orange shades for B
COLOURS = ("#08519c", "#6baed6", "#bdbdbd", "#fdae6b", "#d94801")


def pyplot():
    """matplotlib's pyplot on the file-only backend (imported when a plot is asked for)."""
    import matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def save_figure(fig, directory: str, name: str) -> list[str]:
    """Save ``fig`` as PNG and SVG in ``directory``; the paths."""
    paths = []
    for ext in ("png", "svg"):
        path = os.path.join(directory, f"{name}.{ext}")
        fig.savefig(path, dpi=150, bbox_inches="tight")
        paths.append(path)
    return paths
