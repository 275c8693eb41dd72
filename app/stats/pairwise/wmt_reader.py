"""Reading WMT / Appraise relative-ranking CSV files.

Three layouts are read, told apart by their columns only:

* WMT12-13 rankings: one row per ranking of up to five outputs
  (``judgeId``, ``system1Id`` .. ``system5Id``, ``system1rank`` ..
  ``system5rank``); each row is expanded into the pairs of its ranking
  (10 for five systems), as WMT and Appraise's agreement script did.
* WMT14-16 pairwise files (``srclang,trglang,srcIndex,segmentId,judgeID,
  system1Id,system1rank,system2Id,system2rank,rankingID``): one row per pair,
  ``rankingID`` naming the ranking the pair came from.
* WMT18-19 Appraise exports (one row per pair, columns in any order).

Column names are matched without regard to case (``judgeId`` and ``judgeID``
are one column); a column none of these layouts has is named in a warning
and ignored. A pair keeps the stored order (system1 before system2), as
Appraise keys agreement items that way. A system whose rank is -1 (not
given), or a slot left empty in a ranking of fewer systems, takes no part
in the ranking's pairs.
"""

from __future__ import annotations

import csv
import re

from ..reading import Builder, InputError, csv_rows, first_row

#: The fixed (non system-numbered) columns, as WMT spells them.
WMT_FIXED_COLUMNS = ("srclang", "trglang", "srcIndex", "documentId",
                     "segmentId", "judgeID", "rankingID")
WMT_REQUIRED = ("srcIndex", "judgeID")
#: lower-case name -> the spelling used in messages
_FIXED = {name.lower(): name for name in WMT_FIXED_COLUMNS}
_SYSTEM_COLUMN = re.compile(r"^system(\d+)(rank|id|number)$")


def wmt_header(path, reader, rows) -> tuple[dict, list[str]]:
    """``{lower-case column: position}`` and the unknown column names, from
    the first non-blank row of ``rows``."""
    header = first_row(path, rows)
    index, unknown = {}, []
    for position, name in enumerate(h.strip() for h in header):
        key = name.lower()
        if key not in _FIXED and not _SYSTEM_COLUMN.match(key):
            unknown.append(name)
            continue
        if key in index:
            raise InputError(path, reader.line_num, f"duplicate column {name!r}"
                             " (names are matched without regard to case)")
        index[key] = position
    missing = [c for c in WMT_REQUIRED if c.lower() not in index]
    if missing:
        raise InputError(path, reader.line_num,
                         "missing column(s) " + ", ".join(missing))
    return index, unknown


def load_wmt(path, handle, language_pair: str | None = None):
    """Read a WMT/Appraise file; ``language_pair`` (``srclang-trglang``)
    keeps that pair's rows of a file holding several."""
    reader = csv.reader(handle, strict=True)
    rows_read = csv_rows(path, reader)
    index, unknown = wmt_header(path, reader, rows_read)
    header_line = reader.line_num
    numbers = sorted({int(m.group(1)) for m in map(_SYSTEM_COLUMN.match, index) if m})
    for n in numbers:
        for suffix in ("rank", "Id"):
            if f"system{n}{suffix}".lower() not in index:
                raise InputError(path, header_line, f"missing column system{n}{suffix}")
    if len(numbers) < 2:
        raise InputError(path, header_line, "need at least system1 and system2 columns")
    has_pairs = "srclang" in index and "trglang" in index
    if language_pair is not None and not has_pairs:
        raise InputError(path, None, "a WMT/Appraise file has no campaign column "
                         "to choose from (its campaign is the language pair, "
                         "and it has no srclang and trglang columns)")
    ncols = len(index) + len(unknown)
    rank_cols = [index[f"system{n}rank"] for n in numbers]
    id_cols = [index[f"system{n}id"] for n in numbers]
    i_src, i_judge = index["srcindex"], index["judgeid"]
    i_ranking = index.get("rankingid")
    pairs = [(x, y) for x in range(len(numbers)) for y in range(x + 1, len(numbers))]
    b = Builder(path, "wmt")
    if unknown:
        b.warnings.append(f"{path}: column(s) not used: " + ", ".join(map(repr, unknown)))
    language_pairs: dict[str, int] = {}     # language pair -> its first line
    rankings = set()
    for row in rows_read:
        line = reader.line_num
        if len(row) != ncols:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            raise InputError(path, line, f"expected {ncols} fields, found {len(row)}")
        if not row[i_src] or not row[i_judge]:
            raise InputError(path, line, "srcIndex and judgeID must not be empty")
        b.counts["rows"] += 1
        if has_pairs:
            pair = language_pair_of(row[index["srclang"]], row[index["trglang"]])
            language_pairs.setdefault(pair, line)
            if language_pair is not None and pair != language_pair:
                b.skip("skipped_other_language_pairs")
                continue
        slots = ranking_slots(path, line, row, id_cols, rank_cols)
        kept = add_pairs(b, path, line, row[i_src], row[i_judge], slots, pairs)
        if kept:
            rankings.add(row[i_ranking] if i_ranking is not None else line)
    check_language_pairs(path, language_pairs, language_pair)
    if i_ranking is not None or len(numbers) > 2:
        b.counts["rankings"] = len(rankings)
    return b.finish(header_line, canonical=False)


def language_pair_of(src: str, trg: str) -> str:
    # Appraise's WMT19 export writes -1 where it has no language
    src, trg = src.strip(), trg.strip()
    if src in ("", "-1") and trg in ("", "-1"):
        return ""
    return f"{src}-{trg}"


def ranking_slots(path, line, row, id_cols, rank_cols) -> list:
    """``(system, rank)`` of each slot of the row, None for a slot that takes
    no part: rank -1 (not given), or id and rank both empty."""
    slots = []
    for n, (i_id, i_rank) in enumerate(zip(id_cols, rank_cols), start=1):
        system, text = row[i_id].strip(), row[i_rank].strip()
        if text == "" and system in ("", "-1"):
            slots.append(None)
            continue
        try:
            rank = int(text)
        except ValueError:
            raise InputError(path, line, f"unparseable rank {row[i_rank]!r}") from None
        if rank == -1:
            slots.append(None)
            continue
        if rank < 1:
            raise InputError(path, line, f"invalid rank {rank}")
        if system in ("", "-1"):
            raise InputError(path, line, f"missing system id (system{n}Id)")
        slots.append((system, rank))
    return slots


def add_pairs(b: Builder, path, line, src, judge, slots, pairs) -> int:
    """Append the pairs of one ranking; returns how many were kept."""
    kept = 0
    for x, y in pairs:
        if slots[x] is None or slots[y] is None:
            b.skip("skipped_unranked")
            continue
        (sx, rx), (sy, ry) = slots[x], slots[y]
        if sx == sy:
            raise InputError(path, line, f"system{x + 1}Id and system{y + 1}Id "
                             f"are both {sx!r}")
        b.first.append(b.systems.setdefault(sx, len(b.systems)))
        b.second.append(b.systems.setdefault(sy, len(b.systems)))
        b.outcome.append(1 if rx < ry else (-1 if rx > ry else 0))
        b.sentence.append(b.sentences.setdefault(src, len(b.sentences)))
        b.judge.append(b.judges.setdefault(judge, len(b.judges)))
        kept += 1
    return kept


def check_language_pairs(path, seen: dict, wanted: str | None) -> None:
    """Refuse a file of several language pairs (none chosen) and a chosen
    pair that is not in the file."""
    names = list(seen)
    listed = ", ".join(repr(n) if n else "rows without a language" for n in names)
    if wanted is None and len(names) > 1:
        raise InputError(path, seen[names[1]], f"the file holds {len(names)} "
                         f"language pairs ({listed}); analyse one at a time "
                         "with --campaign SRCLANG-TRGLANG")
    if wanted is not None and wanted not in seen:
        raise InputError(path, None, f"language pair {wanted!r} is not in the "
                         f"file, which holds {listed}")
