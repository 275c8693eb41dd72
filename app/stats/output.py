"""What every protocol's report shares: terminal text that cannot forge
lines, number formats, plain tables, and the JSON and CSV files."""

from __future__ import annotations

import csv
import json
import math
import os
import unicodedata

__all__ = ["clean_json", "fmt_num", "fmt_p", "printable", "table", "write_json", "write_tables"]


# --------------------------------------------------------------------------
# text for a terminal

#: Characters never printed raw: controls (C0, C1), format characters (the
#: bidi embeddings, overrides, isolates and marks among them), lone
#: surrogates, line and paragraph separators.
_HIDDEN = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def printable(text: str) -> str:
    """``text`` with each hidden character written as an escape (``\\u202e``),
    so that a system name, judge id or file name cannot reorder, recolour or
    forge lines of the terminal's text.  The JSON and CSV files keep names exact."""
    if text.isprintable():          # the usual case: nothing to replace
        return text
    return "".join(ch.encode("unicode_escape").decode("ascii")
                   if unicodedata.category(ch) in _HIDDEN else ch for ch in text)


# --------------------------------------------------------------------------
# number formatting


def fmt_num(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def fmt_p(value) -> str:
    if value is None:
        return "n/a"
    if value == 0:
        return "0"
    if value < 1e-4:
        return f"{value:.1e}"
    return f"{value:.4f}"


def table(headers, rows, align=None) -> str:
    """Plain-text table; ``align`` is a string of 'l'/'r' per column."""
    headers = [printable(str(h)) for h in headers]
    rows = [[printable(str(c)) for c in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]
    align = align or "l" + "r" * (len(headers) - 1)

    def line(cells):
        out = [c.ljust(w) if a == "l" else c.rjust(w)
               for c, w, a in zip(cells, widths, align)]
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule] + [line(r) for r in rows])


# --------------------------------------------------------------------------
# JSON


def clean_json(value):
    """Recursively replace NaN/inf by None and numpy scalars by Python ones."""
    if isinstance(value, dict):
        return {str(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_json(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json(result, path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(clean_json(result), fh, ensure_ascii=False, indent=2,
                  allow_nan=False)
        fh.write("\n")


# --------------------------------------------------------------------------
# CSV


def write_tables(tables: dict, directory: str) -> list[str]:
    """Write each ``{file name: rows}`` table into ``directory`` (missing
    values and NaN empty, booleans true/false); returns the paths."""
    os.makedirs(directory, exist_ok=True)
    written = []
    for name, rows in tables.items():
        path = os.path.join(directory, name)
        with open(path, "w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            for row in rows:
                writer.writerow(["" if v is None or v != v else
                                 ("true" if v is True else "false" if v is False else v)
                                 for v in row])
        written.append(path)
    return written
