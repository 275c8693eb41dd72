"""Reading judgment files into integer-coded arrays.

Two input formats are understood:

* **bozka** - the web application's judgment export, either CSV with a
  header row or JSON Lines with the same keys (one object per line).
* **wmt** - the WMT / Appraise relative-ranking CSV
  (``system1rank, system2rank, ..., srcIndex, judgeID, ...``): WMT12-13
  five-way rankings, WMT14-16 pairwise files, WMT18-19 Appraise exports
  (see :mod:`app.stats.pairwise.wmt_reader`).

Whatever the source, the result is a :class:`Judgments` object: one row per
pairwise comparison, every name replaced by an integer code, so that the
statistics can run vectorised over a million rows.

Orientation of an item
    ``first`` and ``second`` give the two systems of a row, and ``outcome``
    is ``+1`` when ``first`` was judged better, ``0`` for a tie and ``-1``
    when ``second`` was judged better.  For WMT input the order is the order
    stored in the file (system1, system2), because Appraise keys agreement
    items that way and that is what reproduces the published kappa figures.
    For Bozka input the pair is normalised (``first`` is the system whose
    name sorts first), because the sides shown to a volunteer were random.

Everything that goes wrong is raised as :class:`InputError`, which carries
the file name and the line number.  What could be read in two ways is refused
rather than guessed: a system named like an answer, a file of several
campaigns (unless one is chosen), a judgment id seen twice.
"""
from __future__ import annotations

import csv
import io
import json

import numpy as np

from ..reading import Builder, InputError, Judgments, bad_utf8_line, open_text
from ..research import kept_reasons
from .bozka_reader import ANSWER_LABELS, BOZKA_COLUMNS, bozka_row, load_bozka_csv, load_bozka_jsonl
from .wmt_reader import load_wmt

__all__ = [
    "ANSWER_LABELS",
    "BOZKA_COLUMNS",
    "InputError",
    "Judgments",
    "detect_format",
    "filter_judges",
    "from_records",
    "load",
    "sniff",
]


# format detection

# A Bozka volunteers export (one row per volunteer) has these; no judgments file does.
VOLUNTEERS_KEYS = {"volunteer", "items_answered", "joined_at"}
VOLUNTEERS_FILE = ("this is a Bozka volunteers export (one row per volunteer), not a judgments "
                   "file: analyse the judgments export (pairwise) or da-judgments (Direct Assessment)")


def detect_format(path: str, first_line: str) -> str:
    """Return ``"wmt"``, ``"bozka"`` (CSV) or ``"bozka-jsonl"`` for a file
    whose first non-blank line is ``first_line``; raise InputError otherwise.
    """
    stripped = first_line.lstrip()
    if stripped.startswith("{"):
        try:
            keys = json.loads(stripped)
        except ValueError:
            keys = None     # the reader says where the JSON is wrong
        if isinstance(keys, dict) and VOLUNTEERS_KEYS <= set(keys):
            raise InputError(path, 1, VOLUNTEERS_FILE)
        return "bozka-jsonl"
    try:
        header = {c.strip() for c in next(csv.reader([first_line]), [])}
    except csv.Error:       # e.g. a field over the csv module's size limit
        header = set()
    if VOLUNTEERS_KEYS <= header:
        raise InputError(path, 1, VOLUNTEERS_FILE)
    if {"system1rank", "system2rank", "judgeid"} <= {c.lower() for c in header}:
        return "wmt"
    if {"choice", "system_a", "system_b"} <= header:
        return "bozka"
    raise InputError(path, 1, "unrecognised format: expected a Bozka export "
                     "(CSV with choice,system_a,system_b or JSON Lines) or a "
                     "WMT/Appraise CSV (system1rank,system2rank,judgeID)")


def sniff(path: str) -> str | None:
    """The pairwise format (``bozka``, ``wmt``) of the file at ``path``, or
    None (not pairwise, or unreadable: :func:`load` then reports the problem).
    Any JSON Lines file reads as Bozka's, so the registry asks the others first."""
    try:
        with open_text(path) as handle:
            line, _lineno = _first_nonblank_line(handle)
        found = detect_format(path, line)
    except (OSError, UnicodeDecodeError, InputError):
        return None
    return "wmt" if found == "wmt" else "bozka"


def _first_nonblank_line(text: io.TextIOBase) -> tuple[str, int]:
    lineno = 0
    for line in text:
        lineno += 1
        if line.strip():
            return line, lineno
    return "", lineno


def load(path: str, fmt: str | None = None, *, include_controls: bool = False,
         include_discarded: bool = False, keep_flagged: bool = False,
         campaign: str | None = None) -> Judgments:
    """Read ``path`` (format detected unless ``fmt`` is ``"bozka"``/``"wmt"``).

    ``campaign`` keeps only that campaign's rows of a Bozka export (of a
    WMT file: that language pair, ``srclang-trglang``); without it a file
    holding several campaigns (language pairs) is refused. Rows that do not count
    for research (``research.left_out``) are left out, except those the
    ``include_*`` and ``keep_flagged`` options keep.
    """
    keep = kept_reasons(include_controls, include_discarded, keep_flagged)
    with open_text(path) as handle:
        try:
            line, lineno = _first_nonblank_line(handle)
        except UnicodeDecodeError:
            raise InputError(path, bad_utf8_line(path), "not UTF-8 text") from None
        if not line.strip():
            raise InputError(path, 1, "empty file")
        detected = detect_format(path, line) if fmt is None else None
        if fmt == "bozka":
            detected = "bozka-jsonl" if line.lstrip().startswith("{") else "bozka"
        elif fmt == "wmt":
            detected = "wmt"
        elif fmt is not None:
            raise ValueError(f"unknown format {fmt!r}")
        handle.seek(0)
        try:
            if detected == "wmt":     # its campaign is a language pair
                return load_wmt(path, handle, campaign)
            if detected == "bozka-jsonl":
                return load_bozka_jsonl(path, handle, keep, campaign)
            return load_bozka_csv(path, handle, keep, campaign)
        except UnicodeDecodeError:
            raise InputError(path, bad_utf8_line(path), "not UTF-8 text") from None


# --------------------------------------------------------------------------
# building and filtering in memory


def from_records(records, *, fmt: str = "bozka") -> Judgments:
    """Build :class:`Judgments` from ``(sentence, system_a, system_b, choice,
    judge)`` tuples, where ``choice`` is a system name or ``"equal"``.

    ``fmt="bozka"`` normalises the pair order (as for a Bozka export);
    ``fmt="wmt"`` keeps it (as for an Appraise file).  Meant for tests and
    for callers that already hold judgments in memory.
    """
    b = Builder("<records>", fmt)
    for n, (sentence, sys_a, sys_b, choice, judge) in enumerate(records, start=1):
        bozka_row(b, n, str(sentence), sys_a, sys_b, choice, str(judge), {})
    return b.finish(1, canonical=(fmt == "bozka"))


def filter_judges(data: Judgments, judge_ids) -> Judgments:
    """Keep only the rows of the given judges (unknown ids are ignored;
    check :func:`unknown_judges` first if that matters)."""
    wanted = [data.judges.index(j) for j in judge_ids if j in data.judges]
    keep = np.isin(data.judge, np.asarray(wanted, dtype=np.int32))
    return subset(data, keep)


def unknown_judges(data: Judgments, judge_ids) -> list[str]:
    present = set(data.judges)
    return [j for j in judge_ids if j not in present]


def subset(data: Judgments, keep: np.ndarray) -> Judgments:
    """Rows selected by the boolean mask ``keep``.

    Systems, sentences and judges left without rows are dropped from the name
    tables and the codes renumbered (alphabetical system order is kept, so
    canonical pairs stay canonical).
    """
    counts = dict(data.counts)
    counts["kept"] = int(keep.sum())
    first, second = data.first[keep], data.second[keep]
    sentence, judge = data.sentence[keep], data.judge[keep]
    systems, (first, second) = _compact(data.systems, first, second)
    sentences, (sentence,) = _compact(data.sentences, sentence)
    judges, (judge,) = _compact(data.judges, judge)
    kept_judges = set(judges)
    return Judgments(
        systems=systems, sentences=sentences, judges=judges,
        first=first, second=second, outcome=data.outcome[keep],
        sentence=sentence, judge=judge, source_format=data.source_format,
        path=data.path, counts=counts, warnings=list(data.warnings),
        repeats=[r for r in data.repeats if r[0] in kept_judges],  # a repeat goes with its judge
    )


def _compact(names, *codes):
    used = np.unique(np.concatenate(codes)) if codes[0].size else \
        np.zeros(0, dtype=np.int32)
    remap = np.full(len(names), -1, dtype=np.int32)
    remap[used] = np.arange(used.size, dtype=np.int32)
    return [names[i] for i in used], tuple(remap[c] for c in codes)
