"""The exports of an ESA campaign (docs/export-format.md): ``esa-judgments``,
JSON Lines with the spans (``scripts/analyse.py`` reads it as ``bozka-esa``),
and ``wmt24-esa``, the CSV layout of WMT24's released ESA files, no header
(``--format wmt24-esa``). Both hold the judgments that count for research,
and the bad references paired with their originals as type ``BAD``, as
WMT24's files do (the analysis leaves them out).
Span ends are inclusive there, as WMT writes them (``end_i``); Bozka stores
them exclusive, as Python slices the text.
"""
import csv
import io
import json

from sqlalchemy import or_, select

from ...models import Item, Participation, Sentence
from ...services import research
from ...services.answered import answered_batches
from ...services.pseudonyms import pseudonym

CHUNK = 500  # rows per chunk written (as export.CHUNK)
JSONL_COLUMNS = ["campaign", "judgment_id", "annotator", "system", "segment", "type", "document", "domain", "score",
                 "spans", "start", "end", "seconds"]
WMT24_COLUMNS = ["annotator", "system", "segment", "type", "source_language", "target_language", "score",
                 "document", "flag", "spans", "start", "end"]


def _unix(moment):
    return round(moment.timestamp(), 3) if moment is not None else None


def judgment_rows(campaign, engine):
    """Dicts in JSONL_COLUMNS order, one per answer that counts for research
    (and per paired bad reference, type BAD), in the order given. ``campaign`` is an export.Source."""
    query = (
        select(Item.id, Item.left_system_id, Item.qc_kind, Item.score, Item.spans, Item.served_at, Item.answered_at,
               Item.seconds, Item.discarded_at, Item.too_fast, Item.participation_id, Participation.user_id,
               Sentence.number, Sentence.document, Sentence.domain)
        .join(Participation, Participation.id == Item.participation_id)
        .join(Sentence, Sentence.id == Item.sentence_id)
        .where(Item.campaign_id == campaign.id, Item.answered_at.is_not(None),
               or_(Item.qc_kind.is_(None), Item.original_item_id.is_not(None)),
               Item.discarded_at.is_(None))
    )

    def volunteers(connection, rows):
        return research.volunteer_flags(connection, {row.participation_id for row in rows})

    names, pseudonyms = campaign.system_names, {}
    for batch, flags in answered_batches(engine, query, volunteers):
        for row in batch:
            if research.flag_values(flags[row.participation_id], False, False, row.too_fast)["left_out"]:
                continue
            if row.user_id not in pseudonyms:
                pseudonyms[row.user_id] = pseudonym(campaign, row.user_id)
            yield {
                "campaign": campaign.slug, "judgment_id": row.id, "annotator": pseudonyms[row.user_id],
                "system": names[row.left_system_id], "segment": row.number,
                "type": "TGT" if row.qc_kind is None else "BAD",
                # Without a documents file each sentence is its own document.
                "document": row.document if row.document is not None else f"sentence-{row.number}",
                "domain": row.domain, "score": row.score,
                "spans": [{"start": s["start"], "end": s["end"] - 1 if s["end"] is not None else None,
                           "severity": s["severity"]} for s in row.spans or []],
                "start": _unix(row.served_at), "end": _unix(row.answered_at),
                "seconds": round(row.seconds, 3) if row.seconds is not None else None,
            }


def wmt24_rows(campaign, engine):
    """The same judgments in WMT24's column order."""
    for row in judgment_rows(campaign, engine):
        yield {
            "annotator": row["annotator"], "system": row["system"], "segment": row["segment"], "type": row["type"],
            "source_language": campaign.source_language, "target_language": campaign.target_language,
            "score": row["score"], "document": row["document"], "flag": "False",
            "spans": json.dumps([{"start_i": "missing" if s["start"] is None else s["start"],
                                  "end_i": "missing" if s["end"] is None else s["end"],
                                  "severity": s["severity"]} for s in row["spans"]], ensure_ascii=False),
            "start": row["start"], "end": row["end"],
        }


def as_wmt24_table(columns, records):
    """Yield WMT24's CSV text: no header line, CHUNK rows at a time."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for n, record in enumerate(records, start=1):
        writer.writerow(["" if record[c] is None else record[c] for c in columns])
        if n % CHUNK == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()
