"""The exports only a pairwise campaign has (docs/export-format.md): its
judgments (``judgments``, ``controls``, ``discarded``: what
``scripts/analyse.py`` reads as ``bozka``) and WMT's relative-ranking layout
(``wmt``), and its volunteers' control columns. ``campaign`` is an
``export.Source`` of plain values; rows are read on the engine's own
connections (``services.answered``).
"""
from sqlalchemy import func, select
from sqlalchemy.orm import aliased

from ...formats import iso_utc
from ...models import Control, Item, Participation, Sentence, Slot, User
from ...services import research
from ...services.answered import answered_batches
from ...services.pseudonyms import pseudonym
from ...stats.pairwise.bozka_reader import BOZKA_COLUMNS

# The analysis's own column names (app/stats/pairwise/bozka_reader.py): writer and reader cannot drift apart.
JUDGMENT_COLUMNS = list(BOZKA_COLUMNS)
CONTROL_COLUMNS = ["controls_answered", "controls_failed", "controls_seen_all"]
WMT_COLUMNS = [
    "system2rank", "segmentId", "system1Id", "system2Number", "system1Number", "trglang",
    "system1rank", "srcIndex", "judgeID", "srclang", "system2Id", "documentId",
]
BETTER, WORSE = "<better>", "<worse>"


_original = aliased(Item)


def judgment_rows(campaign, engine, kind="judgments"):
    """Dicts in JUDGMENT_COLUMNS order, one per answered item (``campaign``:
    a Source). ``wmt``: the test judgments that count for research."""
    query = (
        select(
            Item.id, Item.left_system_id, Item.right_system_id, Item.better_left, Item.choice,
            Item.passed, Item.control_id, Item.served_at, Item.answered_at, Item.seconds,
            Item.discarded_at, Item.discarded_reason, Item.too_fast, Item.participation_id,
            Item.qc_kind, Item.original_item_id, Sentence.number, Control.number,
            Slot.system_a_id, Slot.system_b_id, Participation.user_id, Participation.source_level,
            Participation.target_level, User.age_group, User.studies_level, User.studies_field,
        )
        .join(Participation, Participation.id == Item.participation_id)
        .join(User, User.id == Participation.user_id)
        .outerjoin(Sentence, Sentence.id == Item.sentence_id)
        .outerjoin(Control, Control.id == Item.control_id)
        # A repeat has no slot of its own: its pair is its original's slot's.
        .outerjoin(_original, _original.id == Item.original_item_id)
        .outerjoin(Slot, Slot.id == func.coalesce(Item.slot_id, _original.slot_id))
        .where(Item.campaign_id == campaign.id, Item.answered_at.is_not(None))
    )
    if kind == "controls":
        query = query.where(Item.control_id.is_not(None))
    elif kind == "discarded":
        query = query.where(Item.discarded_at.is_not(None))
    elif kind == "wmt":
        # A repeat would count twice there: its layout cannot mark one (docs/export-format.md).
        query = query.where(Item.control_id.is_(None), Item.qc_kind.is_(None), Item.discarded_at.is_(None))

    def volunteers(connection, rows):
        return research.volunteer_flags(connection, {row.participation_id for row in rows},
                                        check_every=campaign.check_every)

    pseudonyms = {}
    for batch, flags in answered_batches(engine, query, volunteers):
        yield from _judgment_batch(campaign, batch, flags, pseudonyms, kind)


def control_rows(campaign, engine):
    return judgment_rows(campaign, engine, "controls")


def discarded_rows(campaign, engine):
    return judgment_rows(campaign, engine, "discarded")


def _judgment_batch(campaign, batch, flags, pseudonyms, kind):
    names = campaign.system_names
    for row in batch:
        (item_id, left_id, right_id, better_left, choice, passed, control_id, served_at, answered_at,
         seconds, discarded_at, discarded_reason, too_fast, participation_id, qc_kind, original_id,
         sentence_number, control_number,
         a_id, b_id, user_id, source_level, target_level, age_group, studies_level, studies_field) = row
        values = research.flag_values(flags[participation_id], control_id is not None, discarded_at is not None,
                                      too_fast)
        if kind == "wmt" and values["left_out"] is not None:
            continue
        if control_id is not None:
            system_a, system_b = BETTER, WORSE
            left, right = (BETTER, WORSE) if better_left else (WORSE, BETTER)
            # A generated control has no line in controls.tsv: its own id (docs/export-format.md).
            sentence_id = f"control-{control_number}" if control_number is not None else f"control-g{control_id}"
        else:
            system_a, system_b = names[a_id], names[b_id]
            left, right = names[left_id], names[right_id]
            sentence_id = sentence_number
        if user_id not in pseudonyms:
            pseudonyms[user_id] = pseudonym(campaign, user_id)
        yield {
            "campaign": campaign.slug,
            "judgment_id": item_id,
            "sentence_id": sentence_id,
            "system_a": system_a,
            "system_b": system_b,
            "shown_first": left,
            "choice": {"left": left, "right": right}.get(choice, "equal"),
            "volunteer": pseudonyms[user_id],
            "age_group": age_group,
            "studies_level": studies_level,
            "studies_field": studies_field,
            "source_level": source_level,
            "target_level": target_level,
            "served_at": iso_utc(served_at),
            "answered_at": iso_utc(answered_at),
            "seconds": round(seconds, 3) if seconds is not None else None,
            "is_control": control_id is not None,
            "control_passed": passed if control_id is not None else None,
            "discarded": discarded_at is not None,
            "discard_reason": discarded_reason,
            **values,
            "kind": "control" if control_id is not None else qc_kind or "test",
            "original_judgment_id": original_id,
        }


def wmt_row(row, source_language, target_language):
    """One judgments-export row as a WMT/Appraise row.

    system1 is the system whose name sorts first, not the side shown first:
    WMT tools (and scripts/analyse.py) key an agreement item by the stored
    order, so a random order would split each item in two.
    """
    first, second = sorted((row["system_a"], row["system_b"]))
    rank1, rank2 = {first: (1, 2), second: (2, 1)}.get(row["choice"], (1, 1))
    return {
        "system2rank": rank2, "segmentId": row["sentence_id"], "system1Id": first,
        "system2Number": -1, "system1Number": -1, "trglang": target_language,
        "system1rank": rank1, "srcIndex": row["sentence_id"], "judgeID": row["volunteer"],
        "srclang": source_language, "system2Id": second, "documentId": -1,
    }


def wmt_rows(campaign, engine):
    """The WMT/Appraise relative-ranking CSV: the test judgments that count
    for research only (its layout has no column for a flag); a lower rank
    is better and a tie gives both rank 1."""
    for row in judgment_rows(campaign, engine, "wmt"):
        yield wmt_row(row, campaign.source_language, campaign.target_language)


def volunteer_quality(campaign, engine):
    """A volunteer row's ``CONTROL_COLUMNS`` values (kept on the row itself)."""
    return lambda row: {"controls_answered": row.controls_answered, "controls_failed": row.controls_failed,
                        "controls_seen_all": row.controls_seen_all}
