"""Choices people read: the registration form's profile options (paper,
section 3), campaign statuses and staff roles, with their translated labels."""
from flask_babel import lazy_gettext as _l


def with_prompt(choices):
    """Nothing chosen in advance: the volunteer must answer."""
    return [("", _l("Choose…"))] + choices


AGE_GROUPS = [
    ("under-18", _l("Under 18")),
    ("18-25", _l("18 to 25")),
    ("26-35", _l("26 to 35")),
    ("36-45", _l("36 to 45")),
    ("46-55", _l("46 to 55")),
    ("56-65", _l("56 to 65")),
    ("over-65", _l("Over 65")),
]

STUDIES_LEVELS = [
    ("secondary", _l("Secondary school")),
    ("vocational", _l("Vocational training")),
    ("university", _l("University")),
    ("other", _l("Other")),
]

STUDIES_FIELDS = [
    ("technical", _l("Technical studies")),
    ("experimental", _l("Experimental sciences")),
    ("health", _l("Health sciences")),
    ("social-law", _l("Social sciences and law")),
    ("humanities", _l("Humanities")),
    ("services", _l("Services")),
    ("language", _l("Translators, linguists and philologists")),
    ("other", _l("Other")),
]

LANGUAGE_LEVELS = [
    ("A1-A2", _l("Elementary (A1-A2)")),
    ("B1-B2", _l("Intermediate (B1-B2)")),
    ("C1-C2", _l("Advanced (C1-C2)")),
    ("native", _l("Native speaker")),  # above C1-C2: the speakers the site recruits
]

CAMPAIGN_STATUSES = [("draft", _l("Draft")), ("open", _l("Open")), ("closed", _l("Closed"))]

# Where a campaign stands in its lifecycle (services/lifecycle.py), as organisers see it.
CAMPAIGN_STAGES = [("draft", _l("Draft")), ("ready", _l("Ready to open")), ("scheduled", _l("Scheduled")),
                   ("open", _l("Open")), ("closed", _l("Closed")), ("drawn", _l("Raffle drawn"))]

# An organiser manages the campaigns an admin gave them; an admin manages
# every campaign and gives them (services/organisers.py); a researcher reads.
STAFF_ROLES = [("organiser", _l("Organiser")), ("researcher", _l("Researcher")), ("admin", _l("Administrator"))]

ROLES = STAFF_ROLES + [("volunteer", _l("Volunteer"))]

# Why a volunteer is held for review (Participation.held_reason, set by services/holds.py).
HOLD_REASONS = [
    ("same_side", _l("one side far more often than chance")),  # the codes of services/holds.SIGNS
    ("equal", _l("“equal” far more often than the crowd")),
    ("fast", _l("answers faster than reading, in a row")),
    # DA's early checks (protocols/da/quality.early_reason), the codes of its live rule.
    ("bad_references_not_lower", _l("bad references scored no lower than their originals")),
    ("scores_barely_vary", _l("scores barely vary")),
]

EXPORTS = [
    ("judgments", _l("Every judgment")),
    ("controls", _l("Control answers")),
    ("discarded", _l("Discarded judgments")),
    ("volunteers", _l("Volunteer profiles")),
    ("wmt", _l("WMT / Appraise relative ranking")),
    ("decisions", _l("Decisions per pair (for the final analysis)")),
    ("da-judgments", _l("Every score")),
    ("wmt-da", _l("WMT Direct Assessment")),
]

# Why the live rules dismissed a volunteer (Participation.dismissed_reason):
# the codes of protocols/pairwise/controls and protocols/da/quality. An organiser's own
# reason is free text and shown as written.
DISMISSAL_REASONS = [
    ("first_controls_failed", _l("failed one of the first control sentences")),
    ("control_share_exceeded", _l("failed more than the allowed share of control sentences")),
    ("bad_references_not_lower", _l("bad references scored no lower than their originals")),
    ("scores_barely_vary", _l("scores barely vary")),
]


def by_live_rule(reason):
    """Whether a stored dismissal reason is a live rule's code; anything else
    is an organiser's own words (services/review.dismiss)."""
    return reason in dict(DISMISSAL_REASONS)


# The kinds of dismissal the dashboard counts: each live rule's code, and
# every organiser's reason (free text) as one kind.
BY_ORGANISER = "by_organiser"
DISMISSAL_KINDS = DISMISSAL_REASONS + [(BY_ORGANISER, _l("dismissed by an organiser, with a reason of their own"))]


def dismissal_kind(reason):
    """The kind of a stored dismissal reason (a code of ``DISMISSAL_KINDS``)."""
    return reason if by_live_rule(reason) else BY_ORGANISER


# The kinds of DA quality-control item (Item.qc_kind, protocols/da/quality.KINDS).
QUALITY_KINDS = [
    ("bad_reference", _l("bad reference")),
    ("repeat", _l("repeat")),
    ("reference", _l("reference as translation")),
]


# Why a volunteer reported an item and skipped it (ItemReport.reason, services/reports.py).
REPORT_REASONS = [
    ("source-broken", _l("The source text is broken or garbled")),
    ("translation-empty", _l("A translation is empty")),
    ("wrong-language", _l("A translation is in the wrong language")),
    ("offensive", _l("Offensive content")),
    ("other", _l("Another problem")),
]


# What an organiser did (AuditLog.action, written by the organiser views).
AUDIT_ACTIONS = [
    ("campaign.status", _l("Campaign status and dates")),
    ("campaign.announce", _l("Announcement")),
    ("raffle.commit", _l("Raffle commitment")),
    ("raffle.draw", _l("Raffle draw")),
    ("raffle.winners", _l("Winners viewed")),
    ("raffle.notify", _l("Winner notified")),
    ("export", _l("Export")),
    ("account.create", _l("Account created")),
    ("campaign.organiser_add", _l("Organiser given the campaign")),
    ("campaign.organiser_remove", _l("Organiser's campaign taken away")),
    ("volunteer.view", _l("Volunteer viewed")),
    ("volunteer.clear_hold", _l("Hold cleared")),
    ("volunteer.dismiss", _l("Volunteer dismissed")),
    ("ticket.void", _l("Raffle number voided")),
    # Only from the command line (app/cli.py).
    ("campaign.import", _l("Campaign imported")),
    ("campaign.settings", _l("Campaign settings changed")),
    ("account.role", _l("Account's role changed")),
    ("account.password", _l("Account's password set")),
    ("raffle.beacon", _l("Raffle beacon named")),
]


def label(choices, value):
    """The translated label of a stored code (the code itself if unknown)."""
    return dict(choices).get(value, value)
