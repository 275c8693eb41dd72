"""Reports of broken items: the volunteer says why, the item is skipped
(never a judgment, its slot back in the pool) and the organisers see the
report on their dashboard.

A volunteer may report only the item currently served to them, once. The
allowance keeps reporting from becoming a way around the control items: see
``may_report``.
"""
from dataclasses import dataclass

from sqlalchemy import func, select

from .. import protocols
from ..choices import REPORT_REASONS
from ..extensions import db
from ..models import Item, ItemReport, Participation, Sentence, User
from . import assignment
from .pseudonyms import pseudonym
from .reservations import release_hold

TEXT_MAX = 200
REASONS = tuple(code for code, _label in REPORT_REASONS)
# One report, then one more for every REPORT_EVERY items answered.
REPORT_EVERY = 20


def may_report(reports_made, items_answered, position, first_controls, every=REPORT_EVERY):
    """Whether a volunteer who made ``reports_made`` reports and answered
    ``items_answered`` items may report their item at ``position``.

    The first ``first_controls`` items are always controls (a public rule):
    they cannot be skipped, so the first check cannot be dodged. After that
    a volunteer has one report, and one more per ``every`` items answered:
    at most one item in ``every`` is skipped, and since controls look like
    any other item, skipping dodges a control only by chance, no more often
    than the control rate."""
    if position <= first_controls:
        return False
    return reports_made < 1 + items_answered // every


@dataclass
class Outcome:
    status: str  # "reported", "stale" (not the current item), "refused" (allowance used up)
    report: ItemReport = None


def report(campaign, user_id, token, reason, text, now):
    """Report the volunteer's current item (``token``) and skip it, in the
    caller's transaction (the caller commits). None if the user has not
    joined the campaign."""
    if reason not in REASONS:
        raise ValueError(f"unknown report reason {reason!r}")
    participation, _tickets = assignment.lock_volunteer(user_id=user_id, campaign_id=campaign.id)
    if participation is None:
        return None
    row = db.session.execute(protocols.of(campaign).CURRENT_ITEM, {"participation_id": participation.id}).first()
    item = row[0] if row is not None else None
    if participation.is_dismissed or item is None or item.token != token:
        return Outcome("stale")
    made = db.session.scalar(select(func.count(ItemReport.id)).where(ItemReport.participation_id == participation.id))
    first = campaign.control_first if protocols.of(campaign).USES_CONTROLS else 0
    if not may_report(made, participation.items_counted, item.position, first):
        return Outcome("refused")
    release_hold(item)  # the slot goes back to the pool, once (reloads the item)
    item.skipped_at = now
    made_report = ItemReport(
        campaign_id=campaign.id, sentence_id=item.sentence_id, item_id=item.id, participation_id=participation.id,
        reason=reason, text=(text or "").strip()[:TEXT_MAX] or None, created_at=now,
    )
    db.session.add(made_report)
    return Outcome("reported", made_report)


@dataclass(frozen=True)
class Listed:
    created_at: object
    reason: str
    text: str
    volunteer: str  # the export pseudonym (all a researcher is shown)
    username: str  # None unless the caller manages the campaign
    participation_id: int
    sentence_number: int  # None for a control or quality-control item
    kind: str  # "test", "control" or "quality"


def campaign_reports(campaign, names=False, limit=100):
    """The campaign's latest reports, newest first, with the sentence's
    number and who made them: the export pseudonym, and the username only
    with ``names`` (for those who manage the campaign)."""
    rows = db.session.execute(
        select(ItemReport, Participation.user_id, User.username, Sentence.number, Item.control_id, Item.qc_kind)
        .join(Item, Item.id == ItemReport.item_id)
        .join(Participation, Participation.id == ItemReport.participation_id)
        .join(User, User.id == Participation.user_id)
        .outerjoin(Sentence, Sentence.id == ItemReport.sentence_id)
        .where(ItemReport.campaign_id == campaign.id)
        .order_by(ItemReport.created_at.desc(), ItemReport.id.desc())
        .limit(limit)
    ).all()
    return [
        Listed(
            report.created_at, report.reason, report.text, pseudonym(campaign, user_id),
            username if names else None, report.participation_id,
            number if control_id is None and qc_kind is None else None,
            "control" if control_id is not None else "quality" if qc_kind is not None else "test",
        )
        for report, user_id, username, number, control_id, qc_kind in rows
    ]
