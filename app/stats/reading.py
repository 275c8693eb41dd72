"""What the pairwise readers share: the error they raise, the judgments they
build, and the CSV helpers that name the line at fault.

Every name in a file becomes an integer code as it is read (:class:`Builder`),
so that the statistics can run vectorised over a million rows.
"""

from __future__ import annotations

import csv
import json
from array import array
from dataclasses import dataclass, field

import numpy as np

BOOLEANS = {"true": True, "false": False, "1": True, "0": False,
           "yes": True, "no": False, "": False}


class InputError(Exception):
    """Bad input; ``str(error)`` is the one-line message ``FILE:LINE: text``."""

    def __init__(self, path: str, line: int | None, message: str):
        self.path = path
        self.line = line
        self.message = message
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {message}")


@dataclass
class Judgments:
    """Pairwise judgments as integer-coded numpy arrays (one entry per row).

    ``systems``, ``sentences`` and ``judges`` are the name tables; the arrays
    hold indices into them.  ``systems`` is sorted by name, so a pair
    ``(i, j)`` with ``i < j`` is in canonical (alphabetical) order.
    """

    systems: list[str]
    sentences: list[str]
    judges: list[str]
    first: np.ndarray      # int32, index into systems
    second: np.ndarray     # int32, index into systems
    outcome: np.ndarray    # int8: +1 first better, 0 tie, -1 second better
    sentence: np.ndarray   # int32, index into sentences
    judge: np.ndarray      # int32, index into judges
    source_format: str = "bozka"
    path: str = ""
    counts: dict = field(default_factory=dict)   # rows read / skipped
    warnings: list = field(default_factory=list)  # read, but worth a word
    # A Bozka export's repeats, for intra-annotator agreement only:
    # (judge, sentence, system_a, system_b, outcome) names (bozka_reader.repeat_row).
    repeats: list = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.outcome.shape[0])


def bad_utf8_line(path: str) -> int | None:
    """Number of the first line that is not valid UTF-8 (None if none)."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return None


def open_text(path: str):
    """The file opened as UTF-8 text (a BOM dropped, newlines as written);
    a file that cannot be opened raised as InputError naming it."""
    try:
        return open(path, encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None


def read_text(path: str) -> str:
    """A small file's whole text (``open_text``); bad UTF-8 raised as
    InputError naming the file and the line."""
    with open_text(path) as handle:
        try:
            return handle.read()
        except UnicodeDecodeError:
            raise InputError(path, bad_utf8_line(path), "not UTF-8 text") from None


def json_object(path: str, line: int, text: str) -> dict:
    """One JSON Lines record, which must be an object; else an InputError naming the line."""
    try:
        record = json.loads(text)
    except ValueError as exc:
        raise InputError(path, line, f"invalid JSON: {exc.msg}") from None
    if not isinstance(record, dict):
        raise InputError(path, line, "expected a JSON object")
    return record


def csv_rows(path: str, reader):
    """The rows of a ``csv.reader``; a CSV error (a field over the size limit,
    an unclosed quote) becomes an InputError naming the line its record starts."""
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(path, start, f"malformed CSV: {exc}") from None
        yield row


# --------------------------------------------------------------------------
# accumulation of integer codes


class Builder:
    """Collects rows as integer codes; names are interned on first sight."""

    def __init__(self, path: str, fmt: str, campaign: str | None = None):
        self.path = path
        self.fmt = fmt
        self.campaign = campaign        # the campaign to keep; None: the only one
        self.campaigns: dict[str, int] = {}     # campaign -> its first line
        # judgment ids and their lines, checked once read (a list and an
        # array take half the memory of a dict of a million ids)
        self.ids: list[str] = []
        self.id_lines = array("i")
        self.systems: dict[str, int] = {}
        self.sentences: dict[str, int] = {}
        self.judges: dict[str, int] = {}
        self.first = array("i")
        self.second = array("i")
        self.outcome = array("b")
        self.sentence = array("i")
        self.judge = array("i")
        self.counts = {"rows": 0}
        self.warnings: list[str] = []

    def skip(self, reason: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1

    def keep(self, campaign: str, judgment_id: str, line: int) -> bool:
        """Whether a Bozka row belongs to the campaign analysed; notes its
        campaign and (if not empty) its judgment id for :meth:`check_rows`."""
        if campaign not in self.campaigns:
            self.campaigns[campaign] = line
        if self.campaign is not None and campaign != self.campaign:
            self.counts["rows"] += 1
            self.skip("skipped_other_campaigns")
            return False
        if judgment_id:
            self.ids.append(judgment_id)
            self.id_lines.append(line)
        return True

    def check_rows(self) -> None:
        """Refuse several campaigns (none chosen), an absent chosen campaign,
        and a judgment id on more than one line."""
        names = list(self.campaigns)
        if self.campaign is None and len(names) > 1:
            raise InputError(self.path, self.campaigns[names[1]], f"the file "
                             f"holds {len(names)} campaigns ({campaign_list(names)}); "
                             "analyse one at a time with --campaign SLUG")
        if self.campaign is not None and names and self.campaign not in names:
            raise InputError(self.path, None, f"campaign {self.campaign!r} is "
                             f"not in the file, which holds {campaign_list(names)}")
        if len(set(self.ids)) < len(self.ids):
            lines_of: dict[str, list] = {}
            for judgment_id, line in zip(self.ids, self.id_lines):
                lines_of.setdefault(judgment_id, []).append(line)
            repeated = [(lines, i) for i, lines in lines_of.items() if len(lines) > 1]
            lines, judgment_id = min(repeated)      # the first repeated on
            where = ", ".join(map(str, lines[:-1])) + f" and {lines[-1]}"
            others = len(repeated) - 1
            more = f" (and {others} other id{'s' if others > 1 else ''} on " \
                "more than one line)" if others else ""
            raise InputError(self.path, lines[1], f"judgment_id {judgment_id!r} "
                             f"is on lines {where}{more}: each judgment must be "
                             "counted once")

    def finish(self, header_line: int, canonical: bool) -> Judgments:
        self.check_rows()
        if not self.outcome:
            raise InputError(self.path, header_line, "no judgments to analyse"
                             + skipped_note(self.counts))
        if len(self.systems) < 2:
            only = next(iter(self.systems))
            raise InputError(self.path, header_line, f"only one system "
                             f"({only!r}); need at least two to compare")
        names = sorted(self.systems)
        # recode systems so that codes follow alphabetical order
        remap = np.empty(len(names), dtype=np.int32)
        for new, name in enumerate(names):
            remap[self.systems[name]] = new
        first = remap[np.frombuffer(self.first, dtype=np.int32)]
        second = remap[np.frombuffer(self.second, dtype=np.int32)]
        outcome = np.frombuffer(self.outcome, dtype=np.int8).copy()
        if canonical:
            swap = first > second
            first, second = np.where(swap, second, first), np.where(swap, first, second)
            outcome[swap] = -outcome[swap]
        counts = dict(self.counts)
        counts["kept"] = len(outcome)
        return Judgments(
            systems=names,
            sentences=list(self.sentences),
            judges=list(self.judges),
            first=first.astype(np.int32),
            second=second.astype(np.int32),
            outcome=outcome,
            sentence=np.frombuffer(self.sentence, dtype=np.int32).copy(),
            judge=np.frombuffer(self.judge, dtype=np.int32).copy(),
            source_format=self.fmt,
            path=self.path,
            counts=counts,
            warnings=list(self.warnings),
        )


def campaign_list(names) -> str:
    return ", ".join(repr(name) if name else "rows without a campaign"
                     for name in names)


def skipped_note(counts: dict) -> str:
    skipped = {k: v for k, v in counts.items() if k.startswith("skipped")}
    if not skipped:
        return ""
    return " (" + ", ".join(f"{k.replace('_', ' ')}: {v}"
                            for k, v in sorted(skipped.items())) + ")"


def first_row(path: str, rows) -> list[str]:
    """The first row of ``rows`` with a non-blank cell (leading blank lines skipped)."""
    header = []
    while not any(h.strip() for h in header):
        try:
            header = next(rows)
        except StopIteration:
            raise InputError(path, 1, "empty file") from None
    return header


def read_header(path: str, reader, rows, known, required) -> tuple[list[str], dict]:
    """The header row (read from ``rows``, the reader's :func:`csv_rows`)."""
    header = [h.strip() for h in first_row(path, rows)]
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(path, reader.line_num,
                         "missing column(s) " + ", ".join(missing))
    index = {}
    for name in header:
        if name in index:
            raise InputError(path, reader.line_num, f"duplicate column {name!r}")
        if not known(name):
            raise InputError(path, reader.line_num, f"unknown column {name!r}")
        index[name] = len(index)
    return header, index


def parse_bool(path: str, line: int, column: str, value) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    result = BOOLEANS.get(str(value).strip().lower())
    if result is None:
        raise InputError(path, line, f"{column}: expected true or false, "
                         f"got {value!r}")
    return result
