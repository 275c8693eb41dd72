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


def reasons(campaign, at=None):
    """{participation id: why they do not count, or None}; with ``at`` (the
    moment the raffle's list froze) a dismissal or hold from then on does
    not count, as the frozen list says."""
    protocol = protocols.of(campaign)
    dropped = protocol.dropped(campaign) if hasattr(protocol, "dropped") else set()
    rows = db.session.execute(_PARTICIPATIONS.where(Participation.campaign_id == campaign.id))
    return {
        pid: quality.left_out_volunteer(
            dismissed=dismissed_at is not None and (at is None or dismissed_at < at),
            held=held_at is not None and (at is None or held_at < at),
            dropped=pid in dropped,
            untested=protocol.USES_CONTROLS and research.pairwise_untested(answered, campaign.check_every))
        for pid, dismissed_at, held_at, answered in rows
    }
