"""Reading Direct Assessment (0-100) scores.

Two input formats are understood:

* **bozka-da** - the web application's ``da-judgments`` export
  (docs/export-format.md), CSV with a header row or JSON Lines;
* **wmt-da** - WMT's published DA files (``ad-good-raw.csv`` and the like):
  whitespace-separated, ``HITId WorkerId Input.src Input.trg Input.item hit
  sys_id rid type sid score time``, with quoted names in some years.

Whatever the source, the result is a :class:`DAScores` object: one row per
score, names replaced by integer codes, and for every quality-control item
(repeat, bad reference, reference) the row of the system score it is paired
with.  Everything that goes wrong is an :class:`InputError` naming the line.
"""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..research import COLUMNS as FLAG_OF, FLAG_COLUMNS, REASONS, SKIPPED, kept_reasons, left_out
from ..reading import InputError, bad_utf8_line, csv_rows, json_object, open_text, parse_bool, read_header

__all__ = ["ALL_PAIRS", "DA_COLUMNS", "DA_FORMATS", "KINDS", "DAScores", "detect_da_format",
           "from_da_records", "load_da", "sniff_da"]

#: Kinds of item, in code order (``DAScores.kind`` holds the index).
KINDS = ("system", "repeat", "bad_reference", "reference")
SYSTEM, REPEAT, BAD_REFERENCE, REFERENCE = range(4)

DA_FORMATS = ("wmt-da", "bozka-da")
#: ``load_da(pair=ALL_PAIRS)``: every language pair of a WMT file, none refused.
ALL_PAIRS = "*"

DA_COLUMNS = (
    "campaign", "judgment_id", "sentence_id", "system", "kind",
    "original_judgment_id", "score", "volunteer", "age_group",
    "studies_level", "studies_field", "source_level", "target_level",
    "served_at", "answered_at", "seconds", "discarded", "discard_reason",
) + FLAG_COLUMNS
DA_REQUIRED = ("judgment_id", "sentence_id", "system", "kind",
               "original_judgment_id", "score", "volunteer")

WMT_DA_REQUIRED = ("WorkerId", "sys_id", "type", "sid", "score")

# WMT's MTurk files say SYSTEM/REPEAT/BAD_REF/REF; Appraise's exports say
# TGT/CHK/BAD/REF.  Matched without regard to case.
TYPE_NAMES = {
    "system": SYSTEM, "tgt": SYSTEM,
    "repeat": REPEAT, "chk": REPEAT,
    "bad_ref": BAD_REFERENCE, "bad": BAD_REFERENCE, "bad_reference": BAD_REFERENCE,
    "ref": REFERENCE, "reference": REFERENCE,
}

_TOKEN = re.compile(r'"[^"]*"|\S+')
_MISSING = {"", "NA", "NaN", "nan", "null", "NULL"}


@dataclass
class DAScores:
    """DA scores as integer-coded numpy arrays (one entry per score).

    ``original[i]`` is the row of the system score that quality-control item
    ``i`` repeats, degrades or stands beside (-1 for system items and for
    items whose original is not in the data).
    """

    systems: list[str]
    sentences: list[str]
    judges: list[str]
    system: np.ndarray     # int32, index into systems
    sentence: np.ndarray   # int32, index into sentences
    judge: np.ndarray      # int32, index into judges
    kind: np.ndarray       # int8, index into KINDS
    score: np.ndarray      # float64, 0-100
    original: np.ndarray   # int64, row index or -1
    source_format: str = "bozka-da"
    path: str = ""
    counts: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.score.shape[0])


# --------------------------------------------------------------------------
# format detection


def detect_da_format(first_line: str) -> str | None:
    """``"wmt-da"``, ``"bozka-da"`` or None for a file's first non-blank line."""
    if first_line.lstrip().startswith("{"):
        try:
            obj = json.loads(first_line)
        except ValueError:
            return None
        return "bozka-da" if isinstance(obj, dict) and "score" in obj \
            and "kind" in obj else None
    tokens = {t.strip('"') for t in _TOKEN.findall(first_line)}
    if set(WMT_DA_REQUIRED) <= tokens:
        return "wmt-da"
    header = {c.strip() for c in next(csv.reader([first_line]), [])}
    if {"score", "kind", "system"} <= header:
        return "bozka-da"
    return None


def sniff_da(path: str) -> str | None:
    """The DA format of the file at ``path``, or None (not DA, or unreadable:
    the caller's loader then reports the problem)."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            for line in fh:
                if line.strip():
                    return detect_da_format(line)
    except (OSError, UnicodeDecodeError):
        return None
    return None


# --------------------------------------------------------------------------
# accumulation


class _Builder:
    """Collects scores; names are interned on first sight."""

    def __init__(self, path: str, fmt: str):
        self.path, self.fmt = path, fmt
        self.systems: dict[str, int] = {}
        self.sentences: dict[str, int] = {}
        self.judges: dict[str, int] = {}
        self.rows: list[tuple] = []   # (system, sentence, judge, kind, score)
        self.counts = {"rows": 0}

    def skip(self, reason: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1

    def add(self, system: str, sentence: str, judge: str, kind: int,
            score: float) -> int:
        self.rows.append((self.systems.setdefault(system, len(self.systems)),
                          self.sentences.setdefault(sentence, len(self.sentences)),
                          self.judges.setdefault(judge, len(self.judges)),
                          kind, score))
        return len(self.rows) - 1

    def finish(self, header_line: int, original) -> DAScores:
        if not self.rows:
            left = ", ".join(f"{v} {k.replace('skipped_', '')}"
                             for k, v in sorted(self.counts.items())
                             if k.startswith("skipped"))
            raise InputError(self.path, header_line, "no scores to analyse"
                             + (f" (left out {left})" if left else ""))
        names = sorted(self.systems)
        remap = np.empty(len(names), dtype=np.int32)
        for new, name in enumerate(names):
            remap[self.systems[name]] = new
        columns = list(zip(*self.rows))
        counts = dict(self.counts)
        counts["kept"] = len(self.rows)
        return DAScores(
            systems=names, sentences=list(self.sentences), judges=list(self.judges),
            system=remap[np.asarray(columns[0], dtype=np.int32)],
            sentence=np.asarray(columns[1], dtype=np.int32),
            judge=np.asarray(columns[2], dtype=np.int32),
            kind=np.asarray(columns[3], dtype=np.int8),
            score=np.asarray(columns[4], dtype=np.float64),
            original=np.asarray(original, dtype=np.int64),
            source_format=self.fmt, path=self.path, counts=counts)


def _score(path: str, line: int, text: str, integer: bool) -> float:
    """A score of 0-100 (an integer when ``integer``)."""
    try:
        value = int(text) if integer else float(text)
    except (TypeError, ValueError):
        kind = "an integer" if integer else "a number"
        raise InputError(path, line, f"score: expected {kind} from 0 to 100, "
                         f"got {text!r}") from None
    if not (math.isfinite(value) and 0 <= value <= 100):
        hint = "" if integer else " (an already standardised file?)"
        raise InputError(path, line, f"score {text!r} is outside 0-100{hint}")
    return float(value)


def load_da(path: str, fmt: str | None = None, *, include_discarded: bool = False,
            keep_flagged: bool = False, pair: str | None = None,
            campaign: str | None = None) -> DAScores:
    """Read ``path``; the format is detected unless ``fmt`` is given.

    Rows of a Bozka export that do not count for research
    (``research.left_out``) are left out unless ``include_discarded`` and
    ``keep_flagged`` keep them.

    ``pair`` ("hi-bn") keeps one language pair of a WMT file that holds
    several (Input.src-Input.trg); such a file is refused without it, and
    ``ALL_PAIRS`` keeps them all (for the judge test, which spans pairs).
    ``campaign`` does the same for the campaigns of a Bozka export.
    """
    if fmt is not None and fmt not in DA_FORMATS:
        raise ValueError(f"unknown DA format {fmt!r}")
    with open_text(path) as handle:
        try:
            first = next((line for line in handle if line.strip()), "")
            if not first:
                raise InputError(path, 1, "empty file")
            detected = fmt or detect_da_format(first)
            if detected is None:
                raise InputError(path, 1, "unrecognised format: expected a Bozka "
                                 "da-judgments export or a WMT DA file")
            handle.seek(0)
            if detected == "wmt-da":
                if campaign is not None:
                    raise InputError(path, None, "--campaign applies to Bozka exports; "
                                     "a WMT file has no campaign column")
                return _load_wmt_da(path, handle, pair)
            rows = _BozkaRows(path, kept_reasons(include_discarded=include_discarded,
                                                 keep_flagged=keep_flagged), campaign)
            if first.lstrip().startswith("{"):
                return _load_bozka_jsonl(path, handle, rows)
            return _load_bozka_csv(path, handle, rows)
        except UnicodeDecodeError:
            raise InputError(path, bad_utf8_line(path), "not UTF-8 text") from None
        except csv.Error as exc:
            raise InputError(path, None, f"malformed CSV: {exc}") from None


# --------------------------------------------------------------------------
# WMT


def _load_wmt_da(path, handle, wanted_pair=None):
    header, header_line = [], 0
    for header_line, text in enumerate(handle, start=1):
        header = [t.strip('"') for t in _TOKEN.findall(text)]
        if header:
            break
    missing = [c for c in WMT_DA_REQUIRED if c not in header]
    if missing:
        raise InputError(path, header_line, "missing column(s) " + ", ".join(missing))
    ncols = len(header)
    col = {name: i for i, name in enumerate(header)}
    i_hit = col.get("HITId")
    i_src, i_trg = col.get("Input.src"), col.get("Input.trg")
    b = _Builder(path, "wmt-da")
    hits, pairs = [], {}          # pairs: language pair -> its first line
    for line, text in enumerate(handle, start=header_line + 1):
        fields = [t.strip('"') for t in _TOKEN.findall(text)]
        if not fields:
            continue
        if len(fields) != ncols:
            raise InputError(path, line, f"expected {ncols} fields, found {len(fields)}")
        b.counts["rows"] += 1
        if i_src is not None and i_trg is not None:
            pair = f"{fields[i_src]}-{fields[i_trg]}"
            pairs.setdefault(pair, line)
            if wanted_pair not in (None, ALL_PAIRS) and pair != wanted_pair:
                b.skip("skipped_other_pairs")
                continue
        kind = TYPE_NAMES.get(fields[col["type"]].lower())
        if kind is None:
            raise InputError(path, line, f"unknown type {fields[col['type']]!r} "
                             "(expected SYSTEM, REPEAT, BAD_REF or REF)")
        if fields[col["score"]] in _MISSING:
            b.skip("skipped_unanswered")
            continue
        score = _score(path, line, fields[col["score"]], integer=False)
        system, sentence, judge = (fields[col["sys_id"]], fields[col["sid"]],
                                   fields[col["WorkerId"]])
        for name, value in (("sys_id", system), ("sid", sentence), ("WorkerId", judge)):
            if value in _MISSING:
                raise InputError(path, line, f"{name} must not be empty")
        b.add(system, sentence, judge, kind, score)
        hits.append(fields[i_hit] if i_hit is not None else "")
    # judges, systems and z scores belong to one language pair (WMT: a track)
    if wanted_pair not in (None, ALL_PAIRS) and pairs and wanted_pair not in pairs:
        raise InputError(path, header_line, f"no rows of language pair {wanted_pair} "
                         f"(the file has {', '.join(sorted(pairs))})")
    if wanted_pair is None and len(pairs) > 1:
        second = sorted(pairs.values())[1]
        raise InputError(path, second, f"{len(pairs)} language pairs in one file "
                         f"({', '.join(sorted(pairs))}): choose one with --pair")
    return b.finish(header_line, _match_wmt(b.rows, hits))


def _match_wmt(rows, hits) -> list[int]:
    """Pair each quality-control row with its original system score.

    WMT's files give a quality-control item the sys_id and sid of the
    translation it is made from, so the original is the SYSTEM row of the
    same worker, sys_id and sid: in the same HIT if there is one there,
    else in any HIT of that worker; the first in file order if several.
    """
    in_hit, anywhere = {}, {}
    for i, (system, sentence, judge, kind, _score) in enumerate(rows):
        if kind == SYSTEM:
            in_hit.setdefault((judge, hits[i], system, sentence), i)
            anywhere.setdefault((judge, system, sentence), i)
    original = []
    for i, (system, sentence, judge, kind, _score) in enumerate(rows):
        if kind == SYSTEM:
            original.append(-1)
        else:
            original.append(in_hit.get((judge, hits[i], system, sentence),
                                       anywhere.get((judge, system, sentence), -1)))
    return original


# --------------------------------------------------------------------------
# Bozka da-judgments export


class _BozkaRows:
    """Rows of a Bozka export, with the judgment ids needed to pair
    quality-control items with their originals."""

    def __init__(self, path: str, keep, campaign: str | None):
        self.b = _Builder(path, "bozka-da")
        self.keep = keep                        # the reasons kept (research.kept_reasons)
        self.campaign = campaign                # the one to keep; None: the only one
        self.campaigns: dict[str, int] = {}     # campaign -> its first line
        self.row_of_id: dict[str, int] = {}
        self.seen_ids: set[str] = set()
        self.wanted: list[tuple[int, int, str]] = []   # (row, line, original id)

    def add(self, line: int, values: dict, flags: dict) -> None:
        b, path = self.b, self.b.path
        b.counts["rows"] += 1
        # Sentence numbers of two campaigns would collide: one at a time.
        slug = values.get("campaign", "")
        self.campaigns.setdefault(slug, line)
        if self.campaign is None and len(self.campaigns) > 1:
            raise InputError(path, line, f"the file holds several campaigns ({', '.join(map(repr, self.campaigns))}); "
                             "analyse one at a time with --campaign SLUG")
        if self.campaign is not None and slug != self.campaign:
            b.skip("skipped_other_campaigns")
            return
        jid = values["judgment_id"]
        if not jid:
            raise InputError(path, line, "judgment_id must not be empty")
        if jid in self.seen_ids:
            raise InputError(path, line, f"duplicate judgment_id {jid!r}")
        self.seen_ids.add(jid)
        if values["kind"] not in KINDS:
            raise InputError(path, line, f"kind {values['kind']!r} is not one of "
                             + ", ".join(KINDS))
        kind = KINDS.index(values["kind"])
        original = values["original_judgment_id"]
        if kind == SYSTEM and original:
            raise InputError(path, line, "a system item has no original_judgment_id")
        if kind != SYSTEM and not original:
            raise InputError(path, line, f"a {KINDS[kind]} item needs its "
                             "original_judgment_id")
        reason = left_out(flags, self.keep)
        if reason is not None:
            b.skip(SKIPPED[reason])
            return
        if values["score"] in ("", None):
            b.skip("skipped_unanswered")
            return
        score = _score(path, line, values["score"], integer=True)
        for name in ("system", "sentence_id", "volunteer"):
            if not values[name]:
                raise InputError(path, line, f"{name} must not be empty")
        row = b.add(values["system"], values["sentence_id"], values["volunteer"],
                    kind, score)
        self.row_of_id[jid] = row
        if original:
            self.wanted.append((row, line, original))

    def finish(self, header_line: int) -> DAScores:
        b, path = self.b, self.b.path
        if self.campaign is not None and self.campaign not in self.campaigns:
            raise InputError(path, None, f"campaign {self.campaign!r} is not in the file, which holds "
                             + ", ".join(map(repr, self.campaigns)))
        original = [-1] * len(b.rows)
        for row, line, jid in self.wanted:
            if jid not in self.seen_ids:
                raise InputError(path, line, f"original_judgment_id {jid!r} "
                                 "matches no judgment in the file")
            target = self.row_of_id.get(jid)
            if target is None:          # its original was left out (discarded)
                continue
            if b.rows[target][3] != SYSTEM:
                raise InputError(path, line, f"original_judgment_id {jid!r} is "
                                 "not a system item")
            if b.rows[target][2] != b.rows[row][2]:
                raise InputError(path, line, f"original_judgment_id {jid!r} is "
                                 "another volunteer's judgment")
            original[row] = target
        return b.finish(header_line, original)


def _load_bozka_csv(path, handle, rows):
    reader = csv.reader(handle, strict=True)
    rows_read = csv_rows(path, reader)
    header, index = read_header(path, reader, rows_read, set(DA_COLUMNS).__contains__, DA_REQUIRED)
    header_line = reader.line_num
    i_flags = [(reason, index[FLAG_OF[reason]]) for reason in REASONS if FLAG_OF[reason] in index]
    i_campaign = index.get("campaign")
    for row in rows_read:
        line = reader.line_num
        if len(row) != len(header):
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            raise InputError(path, line, f"expected {len(header)} fields, "
                             f"found {len(row)}")
        values = {name: row[index[name]].strip() for name in DA_REQUIRED}
        values["campaign"] = row[i_campaign].strip() if i_campaign is not None else ""
        flags = {reason: parse_bool(path, line, FLAG_OF[reason], row[i]) for reason, i in i_flags}
        rows.add(line, values, flags)
    return rows.finish(header_line)


def _load_bozka_jsonl(path, handle, rows):
    known = set(DA_COLUMNS)
    first_line = None
    for line, text in enumerate(handle, start=1):
        if not text.strip():
            continue
        first_line = first_line or line
        obj = json_object(path, line, text)
        unknown = sorted(set(obj) - known)
        if unknown:
            raise InputError(path, line, f"unknown key {unknown[0]!r}")
        values = {}
        for key in DA_REQUIRED:
            if key not in obj:
                raise InputError(path, line, f"missing key {key!r}")
            value = obj[key]
            if value is None:
                value = ""
            elif isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise InputError(path, line, f"{key}: expected a string or a number")
            elif isinstance(value, float) and key == "score":
                value = str(int(value)) if value.is_integer() else str(value)
            values[key] = str(value).strip()
        values["campaign"] = str(obj.get("campaign") or "").strip()
        flags = {reason: parse_bool(path, line, FLAG_OF[reason], obj.get(FLAG_OF[reason]))
                 for reason in REASONS}
        rows.add(line, values, flags)
    return rows.finish(first_line or 1)


# --------------------------------------------------------------------------
# in memory


def from_da_records(records) -> DAScores:
    """Build :class:`DAScores` from ``(judge, system, sentence, kind, score)``
    tuples; a quality-control item (``kind`` not ``"system"``) is paired with
    that judge's first system score of the same system and sentence, as in a
    WMT file.  Meant for tests and callers holding scores in memory."""
    b = _Builder("<records>", "records")
    for n, (judge, system, sentence, kind, score) in enumerate(records, start=1):
        b.counts["rows"] += 1
        if kind not in KINDS:
            raise InputError(b.path, n, f"kind {kind!r} is not one of " + ", ".join(KINDS))
        b.add(str(system), str(sentence), str(judge), KINDS.index(kind), float(score))
    return b.finish(1, _match_wmt(b.rows, [""] * len(b.rows)))
