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
from sqlalchemy import select
from sqlalchemy.orm import aliased

from .. import protocols
from ..extensions import db
from ..formats import iso_utc
from ..models import Participation, Ticket, User
from .pseudonyms import pseudonym

_PROFILE_COLUMNS = [
    "campaign", "volunteer", "age_group", "studies_level", "studies_field", "source_level",
    "target_level", "joined_at", "email_confirmed", "items_answered",
]
_STATE_COLUMNS = ["tickets", "dismissed", "dismissed_at", "dismissed_reason"]
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


def volunteer_columns(campaign):
    """The volunteers export's columns: the profile, the protocol's quality
    columns (``VOLUNTEER_QUALITY``: pairwise's controls, DA's judge test)
    and the volunteer's state."""
    return _PROFILE_COLUMNS + protocols.of(campaign).VOLUNTEER_QUALITY + _STATE_COLUMNS


def volunteer_rows(campaign, engine):
    quality_of = protocols.of(campaign).volunteer_quality(campaign, engine)
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
        } | quality_of(p)


@dataclass(frozen=True)
class Kind:
    columns: object  # a list, or (Source) -> the campaign's list
    rows: object  # (Source, engine) -> dicts with those columns
    formats: tuple  # the first is the default
    writers: dict = None  # {format: writer} of its own (WMT24's CSV has no header), else WRITERS'

    def columns_of(self, campaign):
        return self.columns(campaign) if callable(self.columns) else self.columns


# Every export; a campaign offers those its protocol names (``EXPORTS``).
EXPORTS = {
    "volunteers": Kind(volunteer_columns, volunteer_rows, ("csv", "jsonl")),
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
    writer = (EXPORTS[kind].writers or {}).get(fmt, WRITERS[fmt])
    for chunk in writer(EXPORTS[kind].columns_of(campaign), EXPORTS[kind].rows(campaign, engine)):
        yield chunk
        # Give way: under gevent a fast client never blocks the send, so
        # without this a large export would hold the worker to the end.
        time.sleep(0)
