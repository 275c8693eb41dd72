"""The exports of a Direct Assessment campaign (docs/export-format.md):
``da-judgments``, what ``scripts/analyse.py`` reads as ``bozka-da``, and
``wmt-da``, WMT's published layout, which WMT's scripts and ours read.

The column names are the analysis's own (``app.stats.da.loader``), so the
writer and the reader cannot drift apart.
"""
from sqlalchemy import select

from ...formats import iso_utc
from ...models import DaJudge, Item, Participation, Sentence, User
from ...stats.da.loader import DA_COLUMNS
from ...services import research
from ...services.answered import answered_batches
from ...services.pseudonyms import pseudonym

CHUNK = 500  # rows per chunk written (as export.CHUNK)
SYSTEM = "system"  # the kind of a test item (quality.KINDS are the others)
DA_JUDGMENT_COLUMNS = list(DA_COLUMNS)
# The volunteers export's quality columns in a DA campaign, in place of
# pairwise's control columns (docs/export-format.md).
DA_VOLUNTEER_QUALITY = ["qc_items", "qc_pairs", "qc_mean_drop", "judge_pairs", "judge_status"]
WMT_DA_COLUMNS = ["HITId", "WorkerId", "Input.src", "Input.trg", "Input.item", "hit",
                  "sys_id", "rid", "type", "sid", "score", "time"]
# WMT's names of the kinds of item (its MTurk files).
WMT_TYPES = {SYSTEM: "SYSTEM", "repeat": "REPEAT", "bad_reference": "BAD_REF", "reference": "REF"}
WMT_ITEMS = {"adequacy": "ad", "fluency": "fl"}  # Input.item, as WMT names its files
NOT_AVAILABLE = "NA"


def da_judgment_rows(campaign, engine, counted_only=False):
    """Dicts in DA_JUDGMENT_COLUMNS order, one per answered item, in the
    order the scores were given; ``counted_only`` keeps only those that
    count for research. ``campaign`` is an export.Source."""
    query = (
        select(
            Item.id, Item.left_system_id, Item.qc_kind, Item.original_item_id, Item.score, Item.served_at,
            Item.answered_at, Item.seconds, Item.discarded_at, Item.discarded_reason, Item.too_fast,
            Item.participation_id, Sentence.number,
            Participation.user_id, Participation.source_level, Participation.target_level,
            User.age_group, User.studies_level, User.studies_field,
        )
        .join(Participation, Participation.id == Item.participation_id)
        .join(User, User.id == Participation.user_id)
        .join(Sentence, Sentence.id == Item.sentence_id)
        .where(Item.campaign_id == campaign.id, Item.answered_at.is_not(None),
               # a bad reference served first counts once its original is scored (protocols/da/protocol.py)
               Item.qc_kind.is_(None) | Item.original_item_id.is_not(None))
    )
    if counted_only:
        query = query.where(Item.discarded_at.is_(None))

    def volunteers(connection, rows):
        return research.volunteer_flags(connection, {row.participation_id for row in rows})

    pseudonyms = {}
    for batch, flags in answered_batches(engine, query, volunteers):
        yield from _score_batch(campaign, batch, flags, pseudonyms, counted_only)


def _score_batch(campaign, batch, flags, pseudonyms, counted_only):
    names = campaign.system_names
    for row in batch:
        (item_id, system_id, qc_kind, original_id, score, served_at, answered_at, seconds, discarded_at,
         discarded_reason, too_fast, participation_id, sentence_number, user_id, source_level, target_level,
         age_group, studies_level, studies_field) = row
        values = research.flag_values(flags[participation_id], False, discarded_at is not None, too_fast)
        if counted_only and values["left_out"] is not None:
            continue
        if user_id not in pseudonyms:
            pseudonyms[user_id] = pseudonym(campaign, user_id)
        yield {
            "campaign": campaign.slug,
            "judgment_id": item_id,
            "sentence_id": sentence_number,
            "system": names[system_id],
            "kind": qc_kind or SYSTEM,
            "original_judgment_id": original_id,
            "score": score,
            "volunteer": pseudonyms[user_id],
            "age_group": age_group,
            "studies_level": studies_level,
            "studies_field": studies_field,
            "source_level": source_level,
            "target_level": target_level,
            "served_at": iso_utc(served_at),
            "answered_at": iso_utc(answered_at),
            "seconds": round(seconds, 3) if seconds is not None else None,
            "discarded": discarded_at is not None,
            "discard_reason": discarded_reason,
            **values,
        }


def wmt_da_rows(campaign, engine):
    """WMT's DA rows: the scores that count for research only (WMT publishes
    the judges it kept; its layout has no column for a flag),
    quality-control items included under WMT's type names with the system
    and sentence of their original, which is how WMT pairs them."""
    item = WMT_ITEMS[campaign.da_dimension]
    for row in da_judgment_rows(campaign, engine, counted_only=True):
        yield {
            "HITId": NOT_AVAILABLE, "WorkerId": row["volunteer"], "Input.src": campaign.source_language,
            "Input.trg": campaign.target_language, "Input.item": item, "hit": NOT_AVAILABLE,
            "sys_id": row["system"], "rid": NOT_AVAILABLE, "type": WMT_TYPES[row["kind"]],
            "sid": row["sentence_id"], "score": row["score"],
            "time": row["seconds"] if row["seconds"] is not None else NOT_AVAILABLE,
        }


def as_wmt_table(columns, records):
    """Yield WMT's whitespace-separated text: tab-separated, a header line,
    the system name in double quotes as WMT writes it (a name may hold a
    space; the importer allows no quote in one)."""
    yield "\t".join(columns) + "\n"
    lines = []
    for n, record in enumerate(records, start=1):
        values = [f'"{record[c]}"' if c == "sys_id" else str(record[c]) for c in columns]
        lines.append("\t".join(values) + "\n")
        if n % CHUNK == 0:
            yield "".join(lines)
            lines = []
    yield "".join(lines)


_QUALITY = select(DaJudge.participation_id, DaJudge.pairs, DaJudge.drop_sum, DaJudge.tested_pairs, DaJudge.status)


def volunteer_quality(campaign, engine):
    """{participation id: the ``DA_VOLUNTEER_QUALITY`` values but
    ``qc_items``} from the volunteers' running sums (one row each): the
    live rule's bad-reference pairs and their mean drop (original - bad
    reference), the judge test's pairs and verdict."""
    with engine.connect() as connection:
        rows = connection.execute(_QUALITY.where(DaJudge.campaign_id == campaign.id)).all()
    return {pid: {"qc_pairs": pairs, "qc_mean_drop": round(drop / pairs, 2) if pairs else None,
                  "judge_pairs": tested, "judge_status": status}
            for pid, pairs, drop, tested, status in rows}


NO_QUALITY = {"qc_pairs": 0, "qc_mean_drop": None, "judge_pairs": 0, "judge_status": "untested"}


def volunteer_quality_of(campaign, engine):
    """A volunteer row's ``DA_VOLUNTEER_QUALITY`` values, for the volunteers
    export; DA counts its quality-control items answered in
    ``controls_answered`` (``protocol.counters``)."""
    quality = volunteer_quality(campaign, engine)
    return lambda row: {"qc_items": row.controls_answered} | quality.get(row.id, NO_QUALITY)
