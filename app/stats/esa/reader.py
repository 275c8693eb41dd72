"""Error Span Annotation (ESA) judgments: WMT24's released CSV (no header;
Bozka's ESA export writes the same layout) and Bozka's JSON Lines export,
with the test set's documents file giving each segment's domain.

Rows that are not test data are left out as WMT's organisers did: type
``BAD``, a system named ``*tutorial*``, a document named ``*#incomplete*``,
``*#dup*`` or ``*canary*``.  When an annotator scored the same (system,
document, segment) twice, the later score is kept.  A malformed line raises
InputError naming it, before anything is returned.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from ..reading import InputError, bad_utf8_line, csv_rows, json_object, open_text

__all__ = ["COLUMNS", "ESA_FORMATS", "ESAScores", "Judgment", "Span", "from_judgments",
           "load_esa", "read_documents", "sniff_esa"]

ESA_FORMATS = ("wmt24-esa", "bozka-esa")
COLUMNS = ("annotator", "system", "segment", "type", "source_lang", "target_lang", "score",
           "document", "flag", "spans", "start", "end")
SEVERITIES = ("minor", "major", "undecided")   # WMT24's release holds a few "undecided"
ONE_DOMAIN = "all"


class Span(NamedTuple):
    start: int | None   # inclusive character offsets; None for an omission
    end: int | None
    severity: str


@dataclass(frozen=True, slots=True)
class Judgment:
    annotator: str
    system: str
    document: str
    segment: int
    domain: str
    score: float
    spans: tuple
    end_time: float | None
    line: int


@dataclass
class ESAScores:
    """The kept judgments of one language pair, one per (annotator, system,
    document, segment)."""

    judgments: list
    path: str = ""
    source_format: str = "wmt24-esa"
    pair: str | None = None
    counts: dict = field(default_factory=dict)     # rows read, left out, replaced
    warnings: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.judgments)


def skip_reason(kind: str, system: str, document: str) -> str | None:
    """Why a row is not test data (the key of ``counts``), or None."""
    if kind == "BAD":
        return "skipped_bad"
    if "tutorial" in system:
        return "skipped_tutorial"
    if "#incomplete" in document:
        return "skipped_incomplete"
    if "#dup" in document:
        return "skipped_dup"
    if "canary" in document:
        return "skipped_canary"
    return None


def read_documents(path: str) -> list[tuple[str, str]]:
    """(domain, document) of each line of a ``.docs`` file: segment ``s``'s
    is item ``s`` (file line ``s + 1``; line 1 is the canary, segment 0)."""
    rows = []
    with open_text(path) as fh:
        try:
            for number, text in enumerate(fh, start=1):
                text = text.rstrip("\r\n")
                if not text and number > 1:
                    continue    # a blank last line
                parts = text.split("\t")
                if len(parts) != 2:
                    raise InputError(path, number, "expected two tab-separated fields: domain, document")
                rows.append((parts[0], parts[1]))
        except UnicodeDecodeError:
            raise InputError(path, bad_utf8_line(path), "not UTF-8 text") from None
    return rows


def number(path: str, line: int, what: str, text, low=None, high=None, integer=False):
    """``text`` as a number within [low, high]; else InputError naming the line."""
    try:
        value = int(text) if integer else float(text)
    except (TypeError, ValueError):
        raise InputError(path, line, f"{what} is not a number: {text!r}") from None
    if (not integer and not math.isfinite(value)) or isinstance(text, bool) \
            or (low is not None and value < low) or (high is not None and value > high):
        raise InputError(path, line, f"{what} out of range: {text!r}")
    return value


def optional_time(path: str, line: int, what: str, text) -> float | None:
    return None if text in ("", None) else number(path, line, what, text)


def parse_spans(path: str, line: int, spans, keys=("start_i", "end_i")) -> tuple:
    """The error spans of a row: a list of objects with inclusive offsets
    (``"missing"`` or null for both: an omission) and a severity."""
    if not isinstance(spans, list):
        raise InputError(path, line, "error spans are not a JSON list")
    out = []
    for span in spans:
        if not isinstance(span, dict):
            raise InputError(path, line, "an error span is not a JSON object")
        start, end = span.get(keys[0]), span.get(keys[1])
        severity = span.get("severity")
        if severity not in SEVERITIES:
            raise InputError(path, line, f"error span severity {severity!r} is not minor or major")
        if start in ("missing", None) and end in ("missing", None):
            out.append(Span(None, None, severity))
            continue
        start = number(path, line, "error span start", start, low=0, integer=True)
        end = number(path, line, "error span end", end, low=start, integer=True)
        out.append(Span(start, end, severity))
    return tuple(out)


def csv_judgments(path: str, counts: dict, pairs: dict):
    """(Judgment without domain, source-target) of each test row of a
    WMT24 ESA CSV; rows that are not test data counted in ``counts``."""
    with open_text(path) as fh:
        reader = csv.reader(fh)
        try:
            for row in csv_rows(path, reader):
                line = reader.line_num
                if not row or not any(cell.strip() for cell in row):
                    continue
                counts["rows"] += 1
                if len(row) != len(COLUMNS):
                    raise InputError(path, line, f"expected {len(COLUMNS)} columns "
                                     f"({', '.join(COLUMNS)}), found {len(row)}")
                (annotator, system, segment, kind, src, trg, score, document, _flag,
                 spans, _start, end) = row
                if kind not in ("TGT", "BAD"):
                    raise InputError(path, line, f"item type {kind!r} is neither TGT nor BAD")
                reason = skip_reason(kind, system, document)
                if reason:
                    counts[reason] = counts.get(reason, 0) + 1
                    continue
                if not annotator or not system or not document:
                    raise InputError(path, line, "empty annotator, system or document")
                try:
                    parsed = json.loads(spans) if spans.strip() else []
                except ValueError as exc:
                    raise InputError(path, line, f"error spans are not JSON: {exc.msg}") from None
                pairs.setdefault(f"{src}-{trg}", line)
                yield Judgment(annotator, system, document,
                               number(path, line, "segment", segment, low=0, integer=True), None,
                               number(path, line, "score", score, 0, 100),
                               parse_spans(path, line, parsed),
                               optional_time(path, line, "end time", end), line)
        except UnicodeDecodeError:
            raise InputError(path, bad_utf8_line(path), "not UTF-8 text") from None


def jsonl_judgments(path: str, counts: dict, pairs: dict):
    """The same from Bozka's JSON Lines export (``domain`` may be given)."""
    with open_text(path) as fh:
        try:
            for line, text in enumerate(fh, start=1):
                if not text.strip():
                    continue
                counts["rows"] += 1
                record = json_object(path, line, text)
                missing = [k for k in ("annotator", "system", "segment", "document", "score")
                           if record.get(k) in (None, "")]
                if missing:
                    raise InputError(path, line, f"missing field(s): {', '.join(missing)}")
                system, document = str(record["system"]), str(record["document"])
                reason = skip_reason(record.get("type", "TGT"), system, document)
                if reason:
                    counts[reason] = counts.get(reason, 0) + 1
                    continue
                domain = record.get("domain")
                yield Judgment(str(record["annotator"]), system, document,
                               number(path, line, "segment", record["segment"], low=0, integer=True),
                               str(domain) if domain not in (None, "") else None,
                               number(path, line, "score", record["score"], 0, 100),
                               parse_spans(path, line, record.get("spans") or [], ("start", "end")),
                               optional_time(path, line, "end time", record.get("end")), line)
        except UnicodeDecodeError:
            raise InputError(path, bad_utf8_line(path), "not UTF-8 text") from None


def sniff_esa(path: str) -> str | None:
    """The ESA format of the file at ``path``, or None (not ESA, or
    unreadable: the caller's loader then reports the problem)."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            first = next((line for line in fh if line.strip()), "")
    except (OSError, UnicodeDecodeError):
        return None
    if first.lstrip().startswith("{"):
        try:
            record = json.loads(first)
        except ValueError:
            return None
        return "bozka-esa" if isinstance(record, dict) and "spans" in record else None
    row = next(csv.reader([first]), [])
    return "wmt24-esa" if len(row) == len(COLUMNS) and row[3] in ("TGT", "BAD") else None


def with_domains(path: str, judgments, documents: str | None) -> list:
    """The judgments with the domain of the documents file; a judgment whose
    document is not its segment's there raised as InputError."""
    if documents is None:
        return [replace(j, domain=j.domain or ONE_DOMAIN) for j in judgments]
    docs = read_documents(documents)
    out = []
    for j in judgments:
        if j.segment >= len(docs):
            raise InputError(path, j.line, f"segment {j.segment} is not in {documents} "
                             f"({len(docs)} lines)")
        domain, document = docs[j.segment]
        if document != j.document:
            raise InputError(path, j.line, f"document {j.document} is not segment {j.segment}'s: "
                             f"{documents}:{j.segment + 1} has {document}")
        out.append(replace(j, domain=domain))
    return out


def from_judgments(judgments, path="", source_format="wmt24-esa", counts=None,
                   warnings=None, pair=None) -> ESAScores:
    """ESAScores of judgments (with domains): the later of an annotator's two
    scores of the same (system, document, segment) kept."""
    counts = dict(counts or {})
    kept = {}
    for j in judgments:
        key = (j.annotator, j.system, j.document, j.segment)
        old = kept.get(key)
        if old is not None:
            counts["replaced_repeats"] = counts.get("replaced_repeats", 0) + 1
            # the later by end time; the later line when a time is missing or equal
            if old.end_time is not None and j.end_time is not None and j.end_time < old.end_time:
                continue
        kept[key] = j
    counts["judgments"] = len(kept)
    return ESAScores(sorted(kept.values(), key=lambda j: j.line), path, source_format, pair,
                     counts, list(warnings or []))


def load_esa(path: str, fmt: str | None = None, documents: str | None = None) -> ESAScores:
    """Read an ESA file (``wmt24-esa`` CSV or ``bozka-esa`` JSON Lines,
    detected when ``fmt`` is None); ``documents``: the test set's ``.docs``."""
    fmt = fmt or sniff_esa(path)
    if fmt not in ESA_FORMATS:
        with open_text(path):   # a file that cannot be opened says so first
            pass
        raise InputError(path, 1, "not an ESA file (WMT24 ESA CSV or Bozka ESA JSON Lines)")
    counts, pairs = {"rows": 0}, {}
    read = csv_judgments if fmt == "wmt24-esa" else jsonl_judgments
    judgments = list(read(path, counts, pairs))
    if len(pairs) > 1:
        raise InputError(path, list(pairs.values())[1], "the file holds several language pairs "
                         f"({', '.join(pairs)}); keep one")
    if not judgments:
        raise InputError(path, None, "no test judgments in the file")
    warnings = []
    if documents is None and any(j.domain is None for j in judgments):
        warnings.append("no documents file (--documents) and no domain in the file: "
                        "all segments are taken as one domain")
    judgments = with_domains(path, judgments, documents)
    return from_judgments(judgments, path, fmt, counts, warnings,
                          next(iter(pairs), None))
