"""Reading a campaign's decisions export (``scripts/analyse.py --decisions``):
which system pairs the site decided sequentially, and at what level, checked
against the judgments being analysed (issue 32; app/stats/sequential.py)."""
from __future__ import annotations

import csv
import io

import numpy as np

from ..reading import InputError, csv_rows, json_object, read_text

__all__ = ["DECISION_REQUIRED", "read_decisions"]


#: what a decisions file must have (app/protocols/pairwise/decisions.EXPORT_COLUMNS)
DECISION_REQUIRED = ("system_a", "system_b", "wins_a", "wins_b", "decided_better", "level")


def _decision_records(path):
    """(line, dict of text or JSON values) per row of a decisions export."""
    text = read_text(path)
    lines = text.split("\n")
    first = next((n for n, line in enumerate(lines, start=1) if line.strip()), None)
    if first is None:
        raise InputError(path, 1, "empty file")
    if lines[first - 1].lstrip().startswith("{"):
        records = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            records.append((number, json_object(path, number, line)))
        header = set(records[0][1])
    else:
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        rows = csv_rows(path, reader)
        names = [c.strip() for c in next((r for r in rows if any(c.strip() for c in r)), [])]
        header = set(names)
        records = []
        for row in rows:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(names):
                raise InputError(path, reader.line_num, f"expected {len(names)} fields, found {len(row)}")
            records.append((reader.line_num, dict(zip(names, row))))
    missing = [c for c in DECISION_REQUIRED if c not in header]
    if missing:
        raise InputError(path, first, f"missing column(s) {', '.join(missing)}: expected the "
                         "decisions export of a pairwise campaign (docs/export-format.md)")
    return records


def _count(path, line, record, column):
    value = record.get(column)
    try:
        number = int(value) if not isinstance(value, (bool, float)) else None
    except (TypeError, ValueError):
        number = None
    if number is None or number < 0:
        raise InputError(path, line, f"{column} {value!r} is not a count (an integer, 0 or more)")
    return number


def _text(value):
    """A name as written (the judgments' names are not stripped either)."""
    return "" if value is None else str(value)


def read_decisions(path, data, campaign=None):
    """The decisions export ``path`` (CSV or JSON Lines) as the
    ``sequential`` argument of :func:`analysis.analyse`, checked against the
    judgments ``data`` (a loader.Judgments): a system the judgments do not
    have (or one of theirs the file lacks), a pair they compared that has no
    row, a pair twice, a decision for neither of its systems, a bad count or
    level, several campaigns without ``campaign`` are refused (InputError
    naming the file and, where there is one, the line)."""
    systems = data.systems
    records = _decision_records(path)
    campaigns = {}
    for line, record in records:
        campaigns.setdefault(_text(record.get("campaign")), line)
    if campaign is not None and "campaign" in records[0][1]:
        if campaign not in campaigns:
            raise InputError(path, None, f"campaign {campaign!r} is not in the file")
        records = [(line, r) for line, r in records if _text(r.get("campaign")) == campaign]
    elif len(campaigns) > 1:
        second = sorted(campaigns.values())[1]
        raise InputError(path, second, "the file holds the decisions of several campaigns: "
                         "choose one with --campaign")
    if not records:
        raise InputError(path, None, "no system pair in the file")
    known = set(systems)
    seen, rows, level = {}, [], None
    for line, record in records:
        a, b = _text(record.get("system_a")), _text(record.get("system_b"))
        for name in (a, b):
            if name not in known:
                raise InputError(path, line, f"system {name!r} is not among the judgments' systems "
                                 f"({', '.join(sorted(known))}): decisions of another campaign?")
        if a == b:
            raise InputError(path, line, f"system {a!r} paired with itself")
        key = frozenset((a, b))
        if key in seen:
            raise InputError(path, line, f"the pair {a} - {b} again (first on line {seen[key]})")
        seen[key] = line
        better = _text(record.get("decided_better"))
        if better and better not in (a, b):
            raise InputError(path, line, f"decided_better {better!r} is neither {a!r} nor {b!r}")
        try:
            value = float(record.get("level"))
        except (TypeError, ValueError):
            value = float("nan")
        if not 0.0 < value < 1.0:
            raise InputError(path, line, f"level {record.get('level')!r} is not a level between 0 and 1")
        if level is not None and value != level:
            raise InputError(path, line, f"level {value:g} differs from the first row's {level:g}")
        level = value
        wins_a, wins_b = _count(path, line, record, "wins_a"), _count(path, line, record, "wins_b")
        judgments = (_count(path, line, record, "judgments")
                     if _text(record.get("judgments")) else wins_a + wins_b)
        rows.append({"systems": [a, b], "wins": {a: wins_a, b: wins_b}, "judgments": judgments,
                     "better": better or None, "decided_at": _text(record.get("decided_at")) or None,
                     "line": line})
    listed = {name for key in seen for name in key}
    absent = sorted(known - listed)
    if absent:
        raise InputError(path, None, f"the judgments' system(s) {', '.join(absent)} are in no row "
                         "of this file: decisions of another campaign?")
    k = len(systems)
    lo = np.minimum(data.first, data.second).astype(np.int64)
    hi = np.maximum(data.first, data.second).astype(np.int64)
    for code in np.unique(lo * k + hi).tolist():
        a, b = systems[code // k], systems[code % k]
        if frozenset((a, b)) not in seen:
            raise InputError(path, None, f"no row for the pair {a} - {b}, which the judgments compare")
    first = records[0][1]
    return {"path": path, "level": level, "pairs": rows,
            "campaign": _text(first.get("campaign")) or None,
            "assignment": _text(first.get("assignment")) or None,
            "goal": _text(first.get("goal")) or None}
