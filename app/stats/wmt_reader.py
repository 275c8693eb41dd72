"""Reading the WMT / Appraise relative-ranking CSV (``system1rank,
system2rank, ..., srcIndex, judgeID, ...``). The pair keeps the stored order,
as Appraise keys agreement items that way.
"""

from __future__ import annotations

import csv
import re

from .reading import Builder, InputError, csv_rows, read_header

#: The fixed (non system-numbered) columns of the WMT/Appraise CSV.
WMT_FIXED_COLUMNS = ("segmentId", "trglang", "srcIndex", "judgeID", "srclang",
                     "documentId")
WMT_REQUIRED = ("srcIndex", "judgeID")
_WMT_SYSTEM_COLUMN = re.compile(r"^system(\d+)(rank|Id|Number)$")



def _wmt_known(name: str) -> bool:
    return name in WMT_FIXED_COLUMNS or bool(_WMT_SYSTEM_COLUMN.match(name))


def load_wmt(path, handle):
    reader = csv.reader(handle, strict=True)
    rows_read = csv_rows(path, reader)
    header, index = read_header(path, reader, rows_read, _wmt_known, WMT_REQUIRED)
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
    b = Builder(path, "wmt")
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
