"""Research exports, streamed row by row (docs/export-format.md).

No export contains emails, real names, IP addresses or password hashes:
volunteers appear under a pseudonym stable within the campaign.

A served export streams after its view has returned and Flask-SQLAlchemy
has removed the request's session: the stream reads the campaign from a
``Source`` of plain values and the rows on connections of its own
(services/answered.py).
"""
import csv
import io
import json
import time
from dataclasses import dataclass

from flask_babel import lazy_gettext as _l
from sqlalchemy import func, select
from sqlalchemy.orm import aliased

from .. import protocols
from ..extensions import db
from ..formats import iso_utc
from ..models import Control, Item, Participation, Sentence, Slot, Ticket, User
from ..stats.bozka_reader import BOZKA_COLUMNS
from . import decisions, research
from .answered import answered_batches
from .pseudonyms import pseudonym

# The analysis's own column names (app/stats/bozka_reader.py): writer and reader cannot drift apart.
JUDGMENT_COLUMNS = list(BOZKA_COLUMNS)
_PROFILE_COLUMNS = [
    "campaign", "volunteer", "age_group", "studies_level", "studies_field", "source_level",
    "target_level", "joined_at", "email_confirmed", "items_answered",
]
_STATE_COLUMNS = ["tickets", "dismissed", "dismissed_at", "dismissed_reason"]
CONTROL_COLUMNS = ["controls_answered", "controls_failed", "controls_seen_all"]
VOLUNTEER_COLUMNS = _PROFILE_COLUMNS + CONTROL_COLUMNS + _STATE_COLUMNS  # pairwise
WMT_COLUMNS = [
    "system2rank", "segmentId", "system1Id", "system2Number", "system1Number", "trglang",
    "system1rank", "srcIndex", "judgeID", "srclang", "system2Id", "documentId",
]
BETTER, WORSE = "<better>", "<worse>"
CHUNK = 500  # rows per chunk written; between chunks the stream gives way to other requests


@dataclass(frozen=True)
class Source:
    """What an export reads of its campaign, as plain values."""
    id: int
    slug: str
    protocol: str
    source_language: str
    target_language: str
    da_dimension: str
    pseudonym_salt: str
    check_every: int  # the untested rules' settings (services/research.py)
    qc_min_pairs: int
    system_names: dict  # system id -> name


def source(campaign):
    """The Source of a campaign (read while its session is open)."""
    return Source(
        id=campaign.id, slug=campaign.slug, protocol=campaign.protocol,
        source_language=campaign.source_language, target_language=campaign.target_language,
        da_dimension=campaign.da_dimension, pseudonym_salt=campaign.pseudonym_salt,
        check_every=campaign.check_every, qc_min_pairs=campaign.qc_min_pairs,
        system_names={system.id: system.name for system in campaign.systems},
    )


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


def volunteer_columns(campaign):
    """The volunteers export's columns: the protocol's quality columns
    (pairwise's controls; another protocol's own, ``VOLUNTEER_QUALITY``)."""
    protocol = protocols.of(campaign)
    return (VOLUNTEER_COLUMNS if protocol.USES_CONTROLS
            else _PROFILE_COLUMNS + protocol.VOLUNTEER_QUALITY + _STATE_COLUMNS)


def volunteer_rows(campaign, engine):
    protocol = protocols.of(campaign)
    uses_controls = protocol.USES_CONTROLS
    quality_of = None if uses_controls else protocol.volunteer_quality(campaign, engine)
    tickets = aliased(Ticket)
    ticket_count = (
        select(db.func.count(tickets.id))
        .where(tickets.participation_id == Participation.id, tickets.voided_at.is_(None))
        .scalar_subquery()
        .label("tickets")
    )
    query = (
        select(Participation.id, Participation.source_level, Participation.target_level, Participation.joined_at,
               Participation.items_answered, Participation.controls_answered, Participation.controls_failed,
               Participation.controls_seen_all, Participation.dismissed_at, Participation.dismissed_reason,
               User.id, User.age_group, User.studies_level, User.studies_field, User.email_confirmed_at,
               ticket_count)
        .join(User, User.id == Participation.user_id)
        .where(Participation.campaign_id == campaign.id)
        .order_by(Participation.joined_at, Participation.id)
    )
    with engine.connect() as connection:  # one row per volunteer: a short read
        volunteers = connection.execute(query).all()
    for p in volunteers:
        yield {
            "campaign": campaign.slug,
            "volunteer": pseudonym(campaign, p.id),
            "age_group": p.age_group,
            "studies_level": p.studies_level,
            "studies_field": p.studies_field,
            "source_level": p.source_level,
            "target_level": p.target_level,
            "joined_at": iso_utc(p.joined_at),
            "email_confirmed": p.email_confirmed_at is not None,
            "items_answered": p.items_answered,
            "tickets": p.tickets,
            "dismissed": p.dismissed_at is not None,
            "dismissed_at": iso_utc(p.dismissed_at),
            "dismissed_reason": p.dismissed_reason,
        } | ({"controls_answered": p.controls_answered, "controls_failed": p.controls_failed,
              "controls_seen_all": p.controls_seen_all} if uses_controls else quality_of(p))


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


@dataclass(frozen=True)
class Kind:
    columns: object  # a list, or (Source) -> the campaign's list
    rows: object  # (Source, engine) -> dicts with those columns
    formats: tuple  # the first is the default

    def columns_of(self, campaign):
        return self.columns(campaign) if callable(self.columns) else self.columns


# Every export; a campaign offers those its protocol names (``EXPORTS``).
EXPORTS = {
    "judgments": Kind(JUDGMENT_COLUMNS, judgment_rows, ("csv", "jsonl")),
    "controls": Kind(JUDGMENT_COLUMNS, lambda campaign, engine: judgment_rows(campaign, engine, "controls"),
                     ("csv", "jsonl")),
    "discarded": Kind(JUDGMENT_COLUMNS, lambda campaign, engine: judgment_rows(campaign, engine, "discarded"),
                      ("csv", "jsonl")),
    "volunteers": Kind(volunteer_columns, volunteer_rows, ("csv", "jsonl")),
    # Per system pair its live decision: what scripts/analyse.py --decisions reads.
    "decisions": Kind(decisions.EXPORT_COLUMNS, decisions.export_rows, ("csv", "jsonl")),
    # WMT's relative-ranking layout is a CSV file (what WMT's tools and scripts/analyse.py read).
    "wmt": Kind(WMT_COLUMNS, wmt_rows, ("csv",)),
} | {kind: Kind(*kind_of) for kind, kind_of in protocols.export_kinds().items()}
KINDS = tuple(EXPORTS)
FORMATS = ("csv", "jsonl", "tsv")


class ExportError(ValueError):
    """An export the campaign does not offer; the message (translated when
    shown) says which it offers."""


def offered(campaign):
    """The campaign's exports, as (kind, formats), in its protocol's order."""
    return [(kind, EXPORTS[kind].formats) for kind in protocols.of(campaign).EXPORTS]


def check(campaign, kind, fmt=None):
    """Refuse (ExportError) an export, or a format of it, that the campaign does not offer."""
    kinds = protocols.of(campaign).EXPORTS
    if kind not in kinds:
        raise ExportError(_l("The campaign %(slug)s does not offer the export %(kind)s; it offers: %(kinds)s.",
                             slug=campaign.slug, kind=kind, kinds=", ".join(kinds)))
    formats = EXPORTS[kind].formats
    if fmt is not None and fmt not in formats:
        raise ExportError(_l("The export %(kind)s comes as %(formats)s, not %(format)s.",
                             kind=kind, formats=", ".join(formats), format=fmt))


def rows(campaign, kind, engine):
    """(columns, rows) of an export the campaign (a Source) offers."""
    check(campaign, kind)
    return EXPORTS[kind].columns_of(campaign), EXPORTS[kind].rows(campaign, engine)


def neutralise(value):
    """Keep spreadsheets from running a cell as a formula."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _csv_value(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return neutralise(value)


def as_csv(columns, records):
    """Yield CSV text chunks: the header, then CHUNK rows at a time."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for n, record in enumerate(records, start=1):
        writer.writerow([_csv_value(record[column]) for column in columns])
        if n % CHUNK == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def as_jsonl(columns, records):
    """Yield JSON Lines text, CHUNK lines at a time."""
    lines = []
    for record in records:
        lines.append(json.dumps({column: record[column] for column in columns}, ensure_ascii=False) + "\n")
        if len(lines) == CHUNK:
            yield "".join(lines)
            lines = []
    yield "".join(lines)


WRITERS = {"csv": as_csv, "jsonl": as_jsonl} | protocols.writers()


def stream(campaign, kind, fmt, engine):
    """The export's text in chunks, read through ``engine`` (never the
    request's session); ``campaign`` is a Source. ExportError at once if
    the campaign does not offer the export."""
    check(campaign, kind, fmt)
    return _chunks(campaign, kind, fmt, engine)


def _chunks(campaign, kind, fmt, engine):
    for chunk in WRITERS[fmt](EXPORTS[kind].columns_of(campaign), EXPORTS[kind].rows(campaign, engine)):
        yield chunk
        # Give way: under gevent a fast client never blocks the send, so
        # without this a large export would hold the worker to the end.
        time.sleep(0)
