"""Where a campaign stands in its schedule, as volunteers are told it."""

UPCOMING, OPEN, ENDED = "upcoming", "open", "ended"


def ended(status, ends_at, now):
    """Closed by the organiser, or past its end. Times are naive UTC, as stored."""
    return status == "closed" or (ends_at is not None and now >= ends_at)


def phase(status, starts_at, ends_at, now):
    """"upcoming" before the start (a draft too), "ended" once closed or past
    the end, else "open"."""
    if ended(status, ends_at, now):
        return ENDED
    if status == "draft" or (starts_at is not None and now < starts_at):
        return UPCOMING
    return OPEN


def phase_of(campaign, now):
    return phase(campaign.status, campaign.starts_at, campaign.ends_at, now)


def is_closed(campaign, now):
    """Closed by the organiser, or past its end: no ticket is won any more."""
    return ended(campaign.status, campaign.ends_at, now)
