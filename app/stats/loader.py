"""Reading judgment files into integer-coded arrays.

Two input formats are understood:

* **bozka** - the web application's judgment export, either CSV with a
  header row or JSON Lines with the same keys (one object per line).
* **wmt** - the WMT / Appraise relative-ranking CSV
  (``system1rank, system2rank, ..., srcIndex, judgeID, ...``).

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
import re
from array import array
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "BOZKA_COLUMNS",
    "InputError",
    "Judgments",
    "detect_format",
    "filter_judges",
    "from_records",
    "load",
]

BOZKA_COLUMNS = (
    "campaign", "judgment_id", "sentence_id", "system_a", "system_b",
    "shown_first", "choice", "volunteer", "age_group", "studies_level",
    "studies_field", "source_level", "target_level", "served_at",
    "answered_at", "seconds", "is_control", "control_passed", "discarded",
    "discard_reason",
)
#: Columns the analysis cannot do without (Bozka format).
BOZKA_REQUIRED = ("sentence_id", "system_a", "system_b", "choice", "volunteer")

#: The fixed (non system-numbered) columns of the WMT/Appraise CSV.
WMT_FIXED_COLUMNS = ("segmentId", "trglang", "srcIndex", "judgeID", "srclang",
                     "documentId")
WMT_REQUIRED = ("srcIndex", "judgeID")
_WMT_SYSTEM_COLUMN = re.compile(r"^system(\d+)(rank|Id|Number)$")

EQUAL = "equal"
#: Answers of the Bozka export's ``choice`` column and of the stored answers
#: (``items.choice``).  A system of one of these names, in any case, would make
#: a choice ambiguous ("equal" would count every tie as its win), so it is
#: refused, as the campaign importer refuses it.
ANSWER_LABELS = ("equal", "left", "right")

_BOOLEANS = {"true": True, "false": False, "1": True, "0": False,
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

    def __len__(self) -> int:
        return int(self.outcome.shape[0])


# --------------------------------------------------------------------------
# format detection


def detect_format(path: str, first_line: str) -> str:
    """Return ``"wmt"``, ``"bozka"`` (CSV) or ``"bozka-jsonl"`` for a file
    whose first non-blank line is ``first_line``; raise InputError otherwise.
    """
    stripped = first_line.lstrip()
    if stripped.startswith("{"):
        return "bozka-jsonl"
    try:
        header = {c.strip() for c in next(csv.reader([first_line]), [])}
    except csv.Error:       # e.g. a field over the csv module's size limit
        header = set()
    if {"system1rank", "system2rank", "judgeID"} <= header:
        return "wmt"
    if {"choice", "system_a", "system_b"} <= header:
        return "bozka"
    raise InputError(path, 1, "unrecognised format: expected a Bozka export "
                     "(CSV with choice,system_a,system_b or JSON Lines) or a "
                     "WMT/Appraise CSV (system1rank,system2rank,judgeID)")


def _bad_utf8_line(path: str) -> int | None:
    """Number of the first line that is not valid UTF-8 (None if none)."""
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return None


def _first_nonblank_line(text: io.TextIOBase) -> tuple[str, int]:
    lineno = 0
    for line in text:
        lineno += 1
        if line.strip():
            return line, lineno
    return "", lineno


def load(path: str, fmt: str | None = None, *, include_controls: bool = False,
         include_discarded: bool = False, campaign: str | None = None) -> Judgments:
    """Read ``path`` (format detected unless ``fmt`` is ``"bozka"``/``"wmt"``).

    ``campaign`` keeps only that campaign's rows of a Bozka export; without
    it a file holding several campaigns is refused.
    """
    try:
        handle = open(path, encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise InputError(path, None, f"cannot open: {exc.strerror}") from None
    with handle:
        try:
            line, lineno = _first_nonblank_line(handle)
        except UnicodeDecodeError:
            raise InputError(path, _bad_utf8_line(path), "not UTF-8 text") from None
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
            if detected == "wmt":
                if campaign is not None:
                    raise InputError(path, None, "a WMT/Appraise file has no "
                                     "campaign column to choose from")
                return _load_wmt(path, handle)
            if detected == "bozka-jsonl":
                return _load_bozka_jsonl(path, handle, include_controls,
                                         include_discarded, campaign)
            return _load_bozka_csv(path, handle, include_controls,
                                   include_discarded, campaign)
        except UnicodeDecodeError:
            raise InputError(path, _bad_utf8_line(path), "not UTF-8 text") from None


def _csv_rows(path: str, reader):
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


class _Builder:
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
                             f"holds {len(names)} campaigns ({_campaign_list(names)}); "
                             "analyse one at a time with --campaign SLUG")
        if self.campaign is not None and names and self.campaign not in names:
            raise InputError(self.path, None, f"campaign {self.campaign!r} is "
                             f"not in the file, which holds {_campaign_list(names)}")
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
                             + _skipped_note(self.counts))
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
        )


def _campaign_list(names) -> str:
    return ", ".join(repr(name) if name else "rows without a campaign"
                     for name in names)


def _skipped_note(counts: dict) -> str:
    skipped = {k: v for k, v in counts.items() if k.startswith("skipped")}
    if not skipped:
        return ""
    return " (" + ", ".join(f"{k.replace('_', ' ')}: {v}"
                            for k, v in sorted(skipped.items())) + ")"


def _header(path: str, reader, rows, known, required) -> tuple[list[str], dict]:
    """The header row (read from ``rows``, the reader's :func:`_csv_rows`)."""
    header = []
    while not any(h.strip() for h in header):     # skip leading blank lines
        try:
            header = next(rows)
        except StopIteration:
            raise InputError(path, 1, "empty file") from None
    header = [h.strip() for h in header]
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


# --------------------------------------------------------------------------
# Bozka export


def _parse_bool(path: str, line: int, column: str, value) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    result = _BOOLEANS.get(str(value).strip().lower())
    if result is None:
        raise InputError(path, line, f"{column}: expected true or false, "
                         f"got {value!r}")
    return result


def _bozka_row(b: _Builder, line: int, sentence, sys_a, sys_b, choice, judge,
               is_control, discarded, include_controls, include_discarded):
    """Add one Bozka judgment (all values already plain strings/bools)."""
    b.counts["rows"] += 1
    if is_control and not include_controls:
        b.skip("skipped_controls")
        return
    if discarded and not include_discarded:
        b.skip("skipped_discarded")
        return
    if not choice:
        b.skip("skipped_unanswered")
        return
    if not sys_a or not sys_b:
        raise InputError(b.path, line, "system_a and system_b must not be empty")
    if sys_a == sys_b:
        raise InputError(b.path, line, f"system_a and system_b are both {sys_a!r}")
    if not sentence:
        raise InputError(b.path, line, "sentence_id must not be empty")
    if not judge:
        raise InputError(b.path, line, "volunteer must not be empty")
    for name in (sys_a, sys_b):
        if name not in b.systems and name.lower() in ANSWER_LABELS:
            raise InputError(b.path, line, f"system {name!r} is named like an "
                             f"answer ({', '.join(ANSWER_LABELS)}, in any case), "
                             f"so a choice of {name!r} is ambiguous; rename "
                             "the system")
    if choice == sys_a:
        outcome = 1
    elif choice == sys_b:
        outcome = -1
    elif choice == EQUAL:
        outcome = 0
    else:
        raise InputError(b.path, line, f"choice {choice!r} is neither "
                         f"{sys_a!r}, {sys_b!r} nor 'equal'")
    systems = b.systems
    b.first.append(systems.setdefault(sys_a, len(systems)))
    b.second.append(systems.setdefault(sys_b, len(systems)))
    b.outcome.append(outcome)
    b.sentence.append(b.sentences.setdefault(sentence, len(b.sentences)))
    b.judge.append(b.judges.setdefault(judge, len(b.judges)))


def _load_bozka_csv(path, handle, include_controls, include_discarded, campaign):
    reader = csv.reader(handle, strict=True)
    rows_read = _csv_rows(path, reader)
    known = set(BOZKA_COLUMNS)
    header, index = _header(path, reader, rows_read, known.__contains__,
                            BOZKA_REQUIRED)
    ncols = len(header)
    i_sent, i_a, i_b = index["sentence_id"], index["system_a"], index["system_b"]
    i_choice, i_judge = index["choice"], index["volunteer"]
    i_ctrl = index.get("is_control")
    i_disc = index.get("discarded")
    i_camp, i_id = index.get("campaign"), index.get("judgment_id")
    if campaign is not None and i_camp is None:
        raise InputError(path, reader.line_num, "no campaign column to choose "
                         f"campaign {campaign!r} from")
    b = _Builder(path, "bozka", campaign)
    keep = b.keep
    bools = _BOOLEANS
    systems, sentences, judges = b.systems, b.sentences, b.judges
    add_first, add_second = b.first.append, b.second.append
    add_outcome, add_sentence = b.outcome.append, b.sentence.append
    add_judge = b.judge.append
    rows = skipped_controls = skipped_discarded = 0
    for row in rows_read:
        line = reader.line_num
        if len(row) != ncols:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            raise InputError(path, line, f"expected {ncols} fields, found {len(row)}")
        if not keep("" if i_camp is None else row[i_camp],
                    "" if i_id is None else row[i_id], line):
            continue
        ctrl = disc = False
        if i_ctrl is not None:
            ctrl = bools.get(row[i_ctrl].lower())
            if ctrl is None:
                ctrl = _parse_bool(path, line, "is_control", row[i_ctrl])
        if i_disc is not None:
            disc = bools.get(row[i_disc].lower())
            if disc is None:
                disc = _parse_bool(path, line, "discarded", row[i_disc])
        if ctrl and not include_controls:
            rows += 1
            skipped_controls += 1
            continue
        if disc and not include_discarded:
            rows += 1
            skipped_discarded += 1
            continue
        sys_a, sys_b, choice, sentence = row[i_a], row[i_b], row[i_choice], row[i_sent]
        if choice == sys_a:
            outcome = 1
        elif choice == sys_b:
            outcome = -1
        elif choice == EQUAL:
            outcome = 0
        else:
            outcome = None
        if outcome is None or not choice or not sys_a or not sys_b \
                or sys_a == sys_b or not sentence or not row[i_judge] \
                or sys_a not in systems or sys_b not in systems:
            # unusual or first seen: the general routine checks it, skips it
            # or raises the error
            _bozka_row(b, line, sentence, sys_a, sys_b, choice, row[i_judge],
                       ctrl, disc, include_controls, include_discarded)
            continue
        rows += 1
        add_first(systems.setdefault(sys_a, len(systems)))
        add_second(systems.setdefault(sys_b, len(systems)))
        add_outcome(outcome)
        add_sentence(sentences.setdefault(sentence, len(sentences)))
        add_judge(judges.setdefault(row[i_judge], len(judges)))
    b.counts["rows"] += rows
    for key, value in (("skipped_controls", skipped_controls),
                       ("skipped_discarded", skipped_discarded)):
        if value:
            b.counts[key] = b.counts.get(key, 0) + value
    return b.finish(1, canonical=True)


def _load_bozka_jsonl(path, handle, include_controls, include_discarded,
                      campaign):
    known = set(BOZKA_COLUMNS)
    b = _Builder(path, "bozka", campaign)
    first_line = None
    loads = json.loads
    for line_no, text in enumerate(handle, start=1):
        if not text.strip():
            continue
        if first_line is None:
            first_line = line_no
        try:
            obj = loads(text)
        except ValueError as exc:
            raise InputError(path, line_no, f"invalid JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise InputError(path, line_no, "expected a JSON object")
        if not known.issuperset(obj):
            unknown = sorted(set(obj) - known)[0]
            raise InputError(path, line_no, f"unknown key {unknown!r}")
        for key in BOZKA_REQUIRED:
            if key not in obj:
                raise InputError(path, line_no, f"missing key {key!r}")
        if not b.keep(_json_text(obj.get("campaign")),
                      _json_text(obj.get("judgment_id")), line_no):
            continue
        values = []
        for key in ("sentence_id", "system_a", "system_b", "choice", "volunteer"):
            value = obj[key]
            if value is None:
                value = ""
            elif not isinstance(value, str):
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    value = str(value)
                else:
                    raise InputError(path, line_no, f"{key}: expected a string")
            values.append(value)
        ctrl = _parse_bool(path, line_no, "is_control", obj.get("is_control"))
        disc = _parse_bool(path, line_no, "discarded", obj.get("discarded"))
        _bozka_row(b, line_no, *values, ctrl, disc, include_controls,
                   include_discarded)
    return b.finish(first_line or 1, canonical=True)


def _json_text(value) -> str:
    """A JSON value as the text a CSV cell would hold (null: empty)."""
    return "" if value is None else str(value)


# --------------------------------------------------------------------------
# WMT / Appraise relative ranking


def _wmt_known(name: str) -> bool:
    return name in WMT_FIXED_COLUMNS or bool(_WMT_SYSTEM_COLUMN.match(name))


def _load_wmt(path, handle):
    reader = csv.reader(handle, strict=True)
    rows_read = _csv_rows(path, reader)
    header, index = _header(path, reader, rows_read, _wmt_known, WMT_REQUIRED)
    numbers = sorted({int(m.group(1)) for m in map(_WMT_SYSTEM_COLUMN.match, header)
                      if m})
    for n in numbers:
        for suffix in ("rank", "Id"):
            if f"system{n}{suffix}" not in index:
                raise InputError(path, reader.line_num, f"missing column system{n}{suffix}")
    if len(numbers) < 2:
        raise InputError(path, reader.line_num, "need at least system1 and system2 columns")
    ncols = len(header)
    rank_cols = [index[f"system{n}rank"] for n in numbers]
    id_cols = [index[f"system{n}Id"] for n in numbers]
    i_src, i_judge = index["srcIndex"], index["judgeID"]
    pairs = [(x, y) for x in range(len(numbers)) for y in range(x + 1, len(numbers))]
    b = _Builder(path, "wmt")
    systems, sentences, judges = b.systems, b.sentences, b.judges
    for row in rows_read:
        line = reader.line_num
        if len(row) != ncols:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            raise InputError(path, line, f"expected {ncols} fields, found {len(row)}")
        if not row[i_src] or not row[i_judge]:
            raise InputError(path, line, "srcIndex and judgeID must not be empty")
        b.counts["rows"] += 1
        try:
            ranks = [int(row[c]) for c in rank_cols]
        except ValueError:
            bad = next(row[c] for c in rank_cols if not _is_int(row[c]))
            raise InputError(path, line, f"unparseable rank {bad!r}") from None
        ids = [row[c] for c in id_cols]
        src = row[i_src]
        sent_code = judge_code = None
        for x, y in pairs:
            rx, ry = ranks[x], ranks[y]
            if rx == -1 or ry == -1:
                # -1 means "not given": the comparison carries no judgment
                b.skip("skipped_unranked")
                continue
            if rx < 1 or ry < 1:
                raise InputError(path, line, f"invalid rank {min(rx, ry)}")
            sx, sy = ids[x], ids[y]
            if not sx or not sy or sx == "-1" or sy == "-1":
                raise InputError(path, line, "missing system id")
            if sx == sy:
                raise InputError(path, line, f"system{x + 1}Id and system{y + 1}Id "
                                 f"are both {sx!r}")
            if sent_code is None:
                sent_code = sentences.setdefault(src, len(sentences))
                judge_code = judges.setdefault(row[i_judge], len(judges))
            b.first.append(systems.setdefault(sx, len(systems)))
            b.second.append(systems.setdefault(sy, len(systems)))
            b.outcome.append(1 if rx < ry else (-1 if rx > ry else 0))
            b.sentence.append(sent_code)
            b.judge.append(judge_code)
    return b.finish(1, canonical=False)


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------
# building and filtering in memory


def from_records(records, *, fmt: str = "bozka") -> Judgments:
    """Build :class:`Judgments` from ``(sentence, system_a, system_b, choice,
    judge)`` tuples, where ``choice`` is a system name or ``"equal"``.

    ``fmt="bozka"`` normalises the pair order (as for a Bozka export);
    ``fmt="wmt"`` keeps it (as for an Appraise file).  Meant for tests and
    for callers that already hold judgments in memory.
    """
    b = _Builder("<records>", fmt)
    for n, (sentence, sys_a, sys_b, choice, judge) in enumerate(records, start=1):
        _bozka_row(b, n, str(sentence), sys_a, sys_b, choice, str(judge),
                   False, False, False, False)
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
    return Judgments(
        systems=systems, sentences=sentences, judges=judges,
        first=first, second=second, outcome=data.outcome[keep],
        sentence=sentence, judge=judge, source_format=data.source_format,
        path=data.path, counts=counts,
    )


def _compact(names, *codes):
    used = np.unique(np.concatenate(codes)) if codes[0].size else \
        np.zeros(0, dtype=np.int32)
    remap = np.full(len(names), -1, dtype=np.int32)
    remap[used] = np.arange(used.size, dtype=np.int32)
    return [names[i] for i in used], tuple(remap[c] for c in codes)
