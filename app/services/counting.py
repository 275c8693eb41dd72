"""Who counts (issue 29): each volunteer of a campaign under the one rule
(``quality.left_out_volunteer``) that the dashboard's figures, the analysis
and the raffle share. The protocol says who its judge test leaves out
(``dropped``, DA) and whether a volunteer can be untested (pairwise)."""
from sqlalchemy import select

from .. import protocols
from ..extensions import db
from ..models import Participation
from . import quality, research

_PARTICIPATIONS = select(Participation.id, Participation.dismissed_at, Participation.held_at,
                         Participation.items_answered)


def dropped(campaign):
    """The participation ids the protocol's judge test leaves out (DA), else none."""
    protocol = protocols.of(campaign)
    return protocol.dropped(campaign) if hasattr(protocol, "dropped") else set()


def dropped_condition(campaign):
    """The same as a condition on a participation, for grouped counts
    (the dashboard's figures, the raffle list's length), or None."""
    protocol = protocols.of(campaign)
    return protocol.dropped_condition(campaign) if hasattr(protocol, "dropped_condition") else None


def reasons(campaign, at=None, rows=None, ids=None, left_out=None):
    """{participation id: why they do not count, or None}; with ``at`` (the
    moment the raffle's list froze) a dismissal or hold from then on does
    not count, as the frozen list says. ``rows`` are the participations'
    (id, dismissed_at, held_at, items_answered) when the caller read them
    already, ``ids`` limits the read to these participations, and
    ``left_out`` is ``dropped(campaign)`` when the caller has it."""
    protocol = protocols.of(campaign)
    left_out = dropped(campaign) if left_out is None else left_out
    if rows is None:
        query = _PARTICIPATIONS.where(Participation.campaign_id == campaign.id)
        if ids is not None:
            query = query.where(Participation.id.in_(ids))
        rows = db.session.execute(query)
    return {
        pid: quality.left_out_volunteer(
            dismissed=dismissed_at is not None and (at is None or dismissed_at < at),
            held=held_at is not None and (at is None or held_at < at),
            dropped=pid in left_out,
            untested=protocol.USES_CONTROLS and research.pairwise_untested(answered, campaign.check_every))
        for pid, dismissed_at, held_at, answered in rows
    }
