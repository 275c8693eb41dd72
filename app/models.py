"""Database models.

Counters that the hot path needs (judgments per slot and per sentence,
items answered per volunteer) are maintained in place, so choosing the next
item is a handful of indexed look-ups and never a scan of all judgments.
"""
import hashlib
import secrets
from datetime import datetime, timezone
from fractions import Fraction

from flask_login import UserMixin
from sqlalchemy import CheckConstraint, Index, UniqueConstraint, text
from sqlalchemy.orm import validates
from werkzeug.security import check_password_hash, generate_password_hash

from .choices import ROLES as _ROLE_CHOICES
from .extensions import db
from .services.names import email_key, skeleton


def utcnow():
    return datetime.now(timezone.utc).replace(tzinfo=None)


# The codes stored in users.role (their labels: app/choices.py).
ROLES = tuple(code for code, _label in _ROLE_CHOICES)


class User(UserMixin, db.Model):
    __tablename__ = "users"
    # The unconfirmed, apart: the ranking counts those ahead from its index alone, less these.
    __table_args__ = (Index("ix_users_unconfirmed", "id", sqlite_where=text("email_confirmed_at IS NULL"),
                            postgresql_where=text("email_confirmed_at IS NULL")),)
    id = db.Column(db.Integer, primary_key=True)
    email = db.Column(db.String(254), nullable=False, unique=True)
    # One key per mailbox (services.names.email_key: no "+tag", no Gmail
    # dots): a new account whose key exists is refused; mail goes to ``email``.
    email_key = db.Column(db.String(254), nullable=False, unique=True, index=True)
    username = db.Column(db.String(40), nullable=False, unique=True)
    # The username's TR39 skeleton (services.names): a new name whose
    # skeleton is here looks like an existing one and is refused.
    username_skeleton = db.Column(db.Text, nullable=False, index=True)
    real_name = db.Column(db.String(120))
    password_hash = db.Column(db.String(256), nullable=False)
    # When the password was last set: every server process looks for recent
    # ones and closes the sockets the old sessions hold (app/socket_accounts.py).
    password_changed_at = db.Column(db.DateTime, index=True)
    # Part of every session's id (User.get_id): a new one
    # at logout and at a new password ends every copy of every session.
    session_token = db.Column(db.String(32))
    # volunteer, organiser (of the campaigns in campaign_organisers),
    # researcher or admin (choices.ROLES).
    role = db.Column(db.String(16), nullable=False, default="volunteer")
    age_group = db.Column(db.String(16))
    studies_level = db.Column(db.String(32))
    studies_field = db.Column(db.String(32))
    locale = db.Column(db.String(16))
    hide_from_ranking = db.Column(db.Boolean, nullable=False, default=False)
    email_confirmed_at = db.Column(db.DateTime)
    # Keyed hash of the address used to register (the suspicious-pattern
    # report groups accounts by it); never exported, never shown.
    signup_address = db.Column(db.String(20), index=True)
    created_at = db.Column(db.DateTime, nullable=False, default=utcnow)

    @validates("username")
    def keep_skeleton(self, _key, username):
        self.username_skeleton = skeleton(username)
        return username

    @validates("email")
    def keep_email_key(self, _key, email):
        self.email_key = email_key(email)
        return email

    def end_sessions(self):
        """Every session and remember-me cookie of the account, on every
        device and every copy of it, no longer logs in."""
        self.session_token = secrets.token_hex(16)

    def set_password(self, password):
        self.password_hash = generate_password_hash(password, method="scrypt")
        self.password_changed_at = utcnow()
        self.end_sessions()

    def check_password(self, password):
        return check_password_hash(self.password_hash, password)

    def get_id(self):
        """What the session and the remember-me cookie store: the id and a
        digest of the password hash and the session token, so that a new
        password (a reset after an account was taken over) or a logout (a
        new token) ends every copy of every session, on every device. Before
        any logout the token is empty: the digest is the password's alone."""
        state = self.password_hash + (self.session_token or "")
        return f"{self.id}:{hashlib.sha256(state.encode()).hexdigest()[:16]}"

    @property
    def is_confirmed(self):
        return self.email_confirmed_at is not None


class Campaign(db.Model):
    __tablename__ = "campaigns"
    id = db.Column(db.Integer, primary_key=True)
    slug = db.Column(db.String(64), nullable=False, unique=True)
    name = db.Column(db.String(200), nullable=False)
    description = db.Column(db.Text, nullable=False, default="")
    instructions = db.Column(db.Text, nullable=False, default="")
    source_language = db.Column(db.String(35), nullable=False)
    target_language = db.Column(db.String(35), nullable=False)
    interface_language = db.Column(db.String(16), nullable=False, default="en")
    # name, description and instructions in other languages than the
    # interface_language's: {"eu": {"name": ...}} (services/campaign_texts.py).
    texts = db.Column(db.JSON)
    status = db.Column(db.String(10), nullable=False, default="open")
    # The evaluation protocol (app/protocols): "pairwise" or "da".
    protocol = db.Column(db.String(16), nullable=False, default="pairwise", server_default="pairwise")
    starts_at = db.Column(db.DateTime)
    ends_at = db.Column(db.DateTime)
    # Settings (see docs/campaign-format.md).
    judgments_per_pair = db.Column(db.Integer, nullable=False, default=5)
    control_first = db.Column(db.Integer, nullable=False, default=2)
    control_every = db.Column(db.Integer, nullable=False, default=5)
    # "fixed": every control_every-th item; "random": one at a secret place
    # in each block of control_every items (protocols/pairwise/controls.is_control_position).
    control_placement = db.Column(db.String(8), nullable=False, default="fixed")
    # A new volunteer's first early_control_items items may have one control
    # in early_control_every (0 items, the default: the paper's schedule).
    early_control_items = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    early_control_every = db.Column(db.Integer, nullable=False, default=2, server_default="2")
    # Each volunteer is served from their own subset of this many controls
    # (0: the whole pool); expected_volunteers sizes the importer's warning.
    controls_per_volunteer = db.Column(db.Integer, nullable=False, default=0)
    # "generated": controls made for each volunteer from the campaign's own
    # outputs (protocols/pairwise/controls.CONTROL_SOURCES); "imported": the controls file's pool.
    control_source = db.Column(db.String(16), nullable=False, default="generated", server_default="generated")
    expected_volunteers = db.Column(db.Integer, nullable=False, default=0)
    failure_cutoff = db.Column(db.String(16), nullable=False, default="1/3")
    check_every = db.Column(db.Integer, nullable=False, default=10)
    control_window = db.Column(db.Integer, nullable=False, default=0)
    raffle_every = db.Column(db.Integer, nullable=False, default=10)
    reservation_timeout = db.Column(db.Integer, nullable=False, default=600)
    daily_cap = db.Column(db.Integer, nullable=False, default=0)  # 0: no cap
    # A judgment faster than this many seconds per word of the two
    # translations is flagged (1.5 s for two 20-word translations).
    fast_seconds_per_word = db.Column(db.Float, nullable=False, default=0.0375)
    # The signs that hold a volunteer for review (services/holds.py): the
    # binomial tests need this many test answers (0: off) and a p-value
    # below hold_alpha; hold_fast_run answers below the reading floor in a
    # row (0: off).
    hold_min_tests = db.Column(db.Integer, nullable=False, default=20)
    hold_alpha = db.Column(db.Float, nullable=False, default=0.00001)
    hold_fast_run = db.Column(db.Integer, nullable=False, default=5)
    # Direct Assessment (app/protocols/da/protocol.py): what is scored, the share of
    # quality-control items (in 100), how many items after its original one
    # is served at the earliest, and the live rule's thresholds.
    da_dimension = db.Column(db.String(10), nullable=False, default="adequacy", server_default="adequacy")
    da_context = db.Column(db.String(10), nullable=False, default="source", server_default="source")
    qc_share = db.Column(db.Integer, nullable=False, default=30, server_default="30")
    qc_distance = db.Column(db.Integer, nullable=False, default=10, server_default="10")
    qc_min_pairs = db.Column(db.Integer, nullable=False, default=5, server_default="5")
    qc_min_spread = db.Column(db.Float, nullable=False, default=3.0, server_default="3.0")
    # Pairwise repeats (protocols/pairwise/repeats.py): about repeat_share in 100 items
    # (0: none) show again a test item judged at least repeat_distance items before.
    repeat_share = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    repeat_distance = db.Column(db.Integer, nullable=False, default=10, server_default="10")
    # The first this many of the ranking win the organisers' prizes (0: the
    # ranking wins none; at most leaderboard.TOP, the top a page shows).
    leaderboard_prizes = db.Column(db.Integer, nullable=False, default=5, server_default="5")
    # Issue 32: "ebaluatoia" (the paper's rule) or "sequential" (pairs decided by
    # an anytime-valid test are retired); the goal: the whole ordering or the top system.
    assignment = db.Column(db.String(16), nullable=False, default="ebaluatoia", server_default="ebaluatoia")
    goal = db.Column(db.String(16), nullable=False, default="ordering", server_default="ordering")
    # Maintained counters.
    target_judgments = db.Column(db.Integer, nullable=False, default=0)
    collected_judgments = db.Column(db.Integer, nullable=False, default=0)
    over_collected = db.Column(db.Integer, nullable=False, default=0)
    equal_judgments = db.Column(db.Integer, nullable=False, default=0)  # the crowd's "equal" answers
    # Volunteers joined and not dismissed: the ranking's public figure (counters.count_for_campaign).
    volunteers = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    next_ticket = db.Column(db.Integer, nullable=False, default=1)
    # Moved with every change of who counts or of a ticket's validity, in its
    # transaction (rewards.list_changed): the raffle's cached list checks it.
    raffle_version = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    # Salt of the pseudonymous volunteer ids in exports (stable per campaign).
    pseudonym_salt = db.Column(db.String(32), nullable=False, default=lambda: secrets.token_hex(16))
    created_at = db.Column(db.DateTime, nullable=False, default=utcnow)

    systems = db.relationship("System", order_by="System.position", lazy="selectin")

    @property
    def cutoff(self):
        return Fraction(self.failure_cutoff)

    def is_serving_at(self, now):
        """Open, and within the optional start and end times."""
        if self.status != "open":
            return False
        if self.starts_at is not None and now < self.starts_at:
            return False
        return self.ends_at is None or now < self.ends_at

    @property
    def is_serving(self):
        return self.is_serving_at(utcnow())


class CampaignOrganiser(db.Model):
    """An organiser given a campaign (by an admin, the importer or the demo):
    they manage it and no other (services/organisers.py)."""

    __tablename__ = "campaign_organisers"
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), primary_key=True)
    user_id = db.Column(db.Integer, db.ForeignKey("users.id"), primary_key=True, index=True)
    given_at = db.Column(db.DateTime, nullable=False, default=utcnow)


class System(db.Model):
    __tablename__ = "systems"
    __table_args__ = (UniqueConstraint("campaign_id", "name"),)
    id = db.Column(db.Integer, primary_key=True)
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), nullable=False)
    name = db.Column(db.String(64), nullable=False)
    position = db.Column(db.Integer, nullable=False)


class Sentence(db.Model):
    __tablename__ = "sentences"
    __table_args__ = (
        UniqueConstraint("campaign_id", "number"),
        # The next-item query walks this index: open sentences, fullest first.
        Index("ix_sentences_next", "campaign_id", "is_open", text("collected DESC"), "id"),
        # DA's new sources walk this one: open sentences, emptiest first (protocols/da/protocol.py).
        Index("ix_sentences_emptiest", "campaign_id", "is_open", "pending", "id"),
    )
    id = db.Column(db.Integer, primary_key=True)
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), nullable=False)
    number = db.Column(db.Integer, nullable=False)  # line number in the import files
    source = db.Column(db.Text, nullable=False)
    reference = db.Column(db.Text)
    # The document the sentence belongs to and its domain (the campaign's
    # documents file; None without one): segments of a document are
    # consecutive sentence numbers.
    document = db.Column(db.String(120))
    domain = db.Column(db.String(40))
    capacity = db.Column(db.Integer, nullable=False)  # judgments wanted in all
    collected = db.Column(db.Integer, nullable=False, default=0)  # valid judgments
    pending = db.Column(db.Integer, nullable=False, default=0)  # collected + held
    is_open = db.Column(db.Boolean, nullable=False, default=True)  # pending < capacity


class Output(db.Model):
    __tablename__ = "outputs"
    __table_args__ = (UniqueConstraint("sentence_id", "system_id"),)
    id = db.Column(db.Integer, primary_key=True)
    sentence_id = db.Column(db.Integer, db.ForeignKey("sentences.id"), nullable=False)
    system_id = db.Column(db.Integer, db.ForeignKey("systems.id"), nullable=False)
    text = db.Column(db.Text, nullable=False)
    # DA campaigns: the bad reference made from ``text`` by the importer
    # (None when the text is too short to degrade).
    degraded = db.Column(db.Text)


class Slot(db.Model):
    """One system pair of one sentence (pairwise), or one system's output of
    one sentence (DA: ``system_b_id`` is None): the unit that collects judgments."""

    __tablename__ = "slots"
    __table_args__ = (
        UniqueConstraint("sentence_id", "system_a_id", "system_b_id"),
        # Sequential assignment walks one pair's slots, emptiest first, in a random order of its own.
        Index("ix_slots_pair", "system_a_id", "system_b_id", "pending", "shuffle"),
    )
    id = db.Column(db.Integer, primary_key=True)
    sentence_id = db.Column(db.Integer, db.ForeignKey("sentences.id"), nullable=False, index=True)
    system_a_id = db.Column(db.Integer, db.ForeignKey("systems.id"), nullable=False)
    system_b_id = db.Column(db.Integer, db.ForeignKey("systems.id"))
    # Identical outputs are never shown: target 0, recorded as a tie by rule.
    identical = db.Column(db.Boolean, nullable=False, default=False)
    target = db.Column(db.Integer, nullable=False)
    collected = db.Column(db.Integer, nullable=False, default=0)
    pending = db.Column(db.Integer, nullable=False, default=0)
    # Pairwise: collected answers preferring system a, system b ("equal" in
    # neither); the sentence's winner for the pair is the side with more.
    votes_a = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    votes_b = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    # A random order per pair (set at import): the walk above meets a volunteer's
    # seen sentences no more often than their share of the campaign.
    shuffle = db.Column(db.Integer, nullable=False, default=0, server_default="0")


class PairTotal(db.Model):
    """A campaign's slots of one system pair (pairwise), or of one system (DA:
    ``system_b_id`` None), summed: target and identical slots written at
    import, collected and over-collected judgments moved with the slots'
    counters at each commit (``services/totals.py``). The dashboard reads
    these rows, never the slots."""

    __tablename__ = "pair_totals"
    __table_args__ = (Index("ix_pair_totals_campaign", "campaign_id", "system_a_id", "system_b_id"),)
    id = db.Column(db.Integer, primary_key=True)
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), nullable=False)
    system_a_id = db.Column(db.Integer, db.ForeignKey("systems.id"), nullable=False)
    system_b_id = db.Column(db.Integer, db.ForeignKey("systems.id"))
    target = db.Column(db.Integer, nullable=False, default=0)
    identical = db.Column(db.Integer, nullable=False, default=0)  # slots with identical outputs
    collected = db.Column(db.Integer, nullable=False, default=0)
    over_collected = db.Column(db.Integer, nullable=False, default=0)  # judgments beyond their slot's target
    # Sentences each system won (its slot's votes_a > votes_b, or the reverse):
    # the counts of the pair's anytime-valid test (protocols/pairwise/plan.py).
    wins_a = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    wins_b = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    # The latest plan (protocols/pairwise/decisions.py): the system decided better, and
    # whether the pair still gets judgments.
    decided_id = db.Column(db.Integer, db.ForeignKey("systems.id"))
    decided_at = db.Column(db.DateTime)
    is_open = db.Column(db.Boolean, nullable=False, default=True, server_default=text("true"))


class SentenceBin(db.Model):
    """How many of a campaign's sentences are in one completeness bin
    (``services/totals.bin_of``), moved when a sentence's collected
    judgments cross a bin, at the commit."""

    __tablename__ = "sentence_bins"
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), primary_key=True)
    bin = db.Column(db.Integer, primary_key=True, autoincrement=False)
    sentences = db.Column(db.Integer, nullable=False, default=0)


class AnswerMinute(db.Model):
    """A campaign's answers in one minute (minutes since 2000-01-01 UTC),
    one more with each answer's commit: the dashboard's rate chart."""

    __tablename__ = "answer_minutes"
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), primary_key=True)
    minute = db.Column(db.Integer, primary_key=True, autoincrement=False)
    answers = db.Column(db.Integer, nullable=False, default=0)


class Control(db.Model):
    __tablename__ = "controls"
    __table_args__ = (
        UniqueConstraint("campaign_id", "number"),
        # Whether a sentence's output was made into a control yet (protocols.pairwise).
        Index("ix_controls_sentence_system", "sentence_id", "system_id"),
    )
    id = db.Column(db.Integer, primary_key=True)
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), nullable=False)
    number = db.Column(db.Integer)  # the line of the controls file; None for a generated control
    source = db.Column(db.Text, nullable=False)
    better = db.Column(db.Text, nullable=False)
    worse = db.Column(db.Text, nullable=False)
    # A generated control (protocols.pairwise): made for one volunteer from
    # the output of ``system_id`` for ``sentence_id``; None in the pool.
    sentence_id = db.Column(db.Integer, db.ForeignKey("sentences.id"))
    system_id = db.Column(db.Integer, db.ForeignKey("systems.id"))


class PracticeItem(db.Model):
    """A practice sentence shown before item 1, with feedback (``why``); its
    answers are never stored. Pairwise: ``better`` and ``worse`` translations;
    ESA: ``better`` is the translation and ``spans`` its known errors."""

    __tablename__ = "practice_items"
    __table_args__ = (UniqueConstraint("campaign_id", "number"),)
    id = db.Column(db.Integer, primary_key=True)
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), nullable=False)
    number = db.Column(db.Integer, nullable=False)
    source = db.Column(db.Text, nullable=False)
    better = db.Column(db.Text, nullable=False)
    worse = db.Column(db.Text, nullable=False)
    why = db.Column(db.Text, nullable=False)
    # The explanation in other interface languages ({"eu": ...}, babel's
    # codes; practice.tsv's why.<code> columns), None when it has none.
    why_texts = db.Column(db.JSON)
    # An ESA practice item's known errors ({"start", "end", "severity"} in
    # code points of ``better``, its translation; ``worse`` is empty), None
    # for a pairwise one.
    spans = db.Column(db.JSON)


class Participation(db.Model):
    """A volunteer's membership of one campaign, with running counters."""

    __tablename__ = "participations"
    __table_args__ = (
        UniqueConstraint("campaign_id", "user_id"),
        # The ranking's order (services/leaderboard.py): its top, a volunteer's
        # neighbours and the count of those ahead are ranges of this index.
        Index("ix_participations_ranking", "campaign_id", text("items_counted DESC"), "reached_count_at", "id",
              "user_id", sqlite_where=text("dismissed_at IS NULL AND held_at IS NULL"),
              postgresql_where=text("dismissed_at IS NULL AND held_at IS NULL")),
        # The last comer (not dismissed).
        Index("ix_participations_newest", "campaign_id", "joined_at", "id", "held_at",
              sqlite_where=text("dismissed_at IS NULL"), postgresql_where=text("dismissed_at IS NULL")),
    )
    id = db.Column(db.Integer, primary_key=True)
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), nullable=False)
    user_id = db.Column(db.Integer, db.ForeignKey("users.id"), nullable=False, index=True)
    source_level = db.Column(db.String(8), nullable=False)
    target_level = db.Column(db.String(8), nullable=False)
    consent_at = db.Column(db.DateTime, nullable=False)
    joined_at = db.Column(db.DateTime, nullable=False, default=utcnow)
    items_served = db.Column(db.Integer, nullable=False, default=0)
    items_answered = db.Column(db.Integer, nullable=False, default=0)
    # Answers that count toward tickets and the ranking: not faster than
    # the reading floor (quality.too_fast).
    items_counted = db.Column(db.Integer, nullable=False, default=0)
    # When items_counted last changed: the leaderboard tie-break.
    reached_count_at = db.Column(db.DateTime)
    controls_seen_all = db.Column(db.Boolean, nullable=False, default=False)
    controls_answered = db.Column(db.Integer, nullable=False, default=0)
    controls_failed = db.Column(db.Integer, nullable=False, default=0)
    dismissed_at = db.Column(db.DateTime)
    dismissed_reason = db.Column(db.String(200))
    finished_at = db.Column(db.DateTime)  # nothing left to judge
    # Held for review (services/holds.py): out of the ranking and the
    # published tickets until an organiser clears or dismisses them.
    held_at = db.Column(db.DateTime)
    held_reason = db.Column(db.String(40))
    # The signs' counters, on test items answered since joining or since
    # the last hold was cleared.
    tests_left = db.Column(db.Integer, nullable=False, default=0)
    tests_right = db.Column(db.Integer, nullable=False, default=0)
    tests_equal = db.Column(db.Integer, nullable=False, default=0)
    fast_run = db.Column(db.Integer, nullable=False, default=0)
    # The suspicious-patterns report's counters (services/suspicious.py), on
    # every answer since joining: sides, answers below the reading floor, and
    # the most answers in one clock minute (the current minute and its count).
    answers_total = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    answers_left = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    answers_right = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    answers_equal = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    answers_too_fast = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    minute_at = db.Column(db.DateTime)
    minute_answers = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    busiest_minute = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    # The volunteer's rows in the judgments exports (services/research.py):
    # controls, tests, and tests below the reading floor.
    research_controls = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    research_tests = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    research_tests_too_fast = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    # The volunteer's part of the campaign's collected_judgments and
    # equal_judgments (answered test items with a slot), so that the "equal"
    # sign compares them with the crowd without them (services/holds.py).
    crowd_answers = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    crowd_equal = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    # Valid raffle tickets (services/rewards.py): moved by statements of
    # their own with each award and void, never by the counters above.
    tickets_valid = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    # The latest announcement the volunteer dismissed (services/announcements.py).
    announcement_seen_id = db.Column(db.Integer)

    user = db.relationship("User", lazy="joined")
    campaign = db.relationship("Campaign")

    @property
    def is_dismissed(self):
        return self.dismissed_at is not None

    @property
    def is_held(self):
        return self.held_at is not None


class Item(db.Model):
    """One item served to one volunteer; once answered it is a judgment.

    The left/right order shown is stored. A control has ``control_id`` and
    ``better_left``; a test item has ``slot_id``, ``sentence_id`` and the two
    systems in the order shown (DA: the one system, as ``left_system_id``).
    """

    __tablename__ = "items"
    __table_args__ = (
        UniqueConstraint("participation_id", "position"),
        # A volunteer never takes the same slot twice. Pairwise serves a
        # source sentence once (services/slots); DA serves several systems'
        # outputs of one source on purpose (protocols/da/protocol.py, issue 28).
        Index(
            "uq_items_participation_slot",
            "participation_id",
            "slot_id",
            unique=True,
            sqlite_where=text("slot_id IS NOT NULL"),
            postgresql_where=text("slot_id IS NOT NULL"),
        ),
        Index("ix_items_participation_sentence", "participation_id", "sentence_id"),
        Index("ix_items_original", "original_item_id"),
        Index("ix_items_participation_control", "participation_id", "control_id"),
        Index("ix_items_hold", "campaign_id", "holding", "expires_at"),
        Index("ix_items_answered", "campaign_id", "answered_at"),
        CheckConstraint("choice IN ('left', 'right', 'equal')", name="valid_choice"),
        CheckConstraint("score >= 0 AND score <= 100", name="valid_score"),
    )
    id = db.Column(db.Integer, primary_key=True)
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), nullable=False)
    participation_id = db.Column(db.Integer, db.ForeignKey("participations.id"), nullable=False)
    position = db.Column(db.Integer, nullable=False)  # 1-based, per volunteer
    token = db.Column(db.String(32), nullable=False)  # ties a form to this item
    # Test item.
    slot_id = db.Column(db.Integer, db.ForeignKey("slots.id"))
    sentence_id = db.Column(db.Integer, db.ForeignKey("sentences.id"))
    left_system_id = db.Column(db.Integer, db.ForeignKey("systems.id"))
    right_system_id = db.Column(db.Integer, db.ForeignKey("systems.id"))
    # Control item.
    control_id = db.Column(db.Integer, db.ForeignKey("controls.id"))
    better_left = db.Column(db.Boolean)
    control_reused = db.Column(db.Boolean, nullable=False, default=False)
    # DA quality-control item: its kind (protocols/da/quality.KINDS) and the
    # volunteer's item it repeats; it shows that item's sentence and system.
    # A pairwise repeat (protocols/pairwise/repeats.py) has qc_kind "repeat", no slot,
    # and its original's sentence and systems.
    qc_kind = db.Column(db.String(16))
    original_item_id = db.Column(db.Integer, db.ForeignKey("items.id"))
    # Reservation of the slot while the item is unanswered.
    served_at = db.Column(db.DateTime, nullable=False, default=utcnow)
    expires_at = db.Column(db.DateTime)
    holding = db.Column(db.Boolean, nullable=False, default=False)
    # Answer.
    answered_at = db.Column(db.DateTime)
    choice = db.Column(db.String(8))  # pairwise
    score = db.Column(db.Integer)  # DA and ESA, 0-100
    # ESA: the error spans marked, [{"start", "end", "severity"}] (protocols/esa/spans.py).
    spans = db.Column(db.JSON)
    seconds = db.Column(db.Float)
    passed = db.Column(db.Boolean)  # controls only
    too_fast = db.Column(db.Boolean, nullable=False, default=False)
    discarded_at = db.Column(db.DateTime)
    discarded_reason = db.Column(db.String(200))
    # Reported by the volunteer as broken and skipped (services/reports.py):
    # never answered, its slot back in the pool.
    skipped_at = db.Column(db.DateTime)

    slot = db.relationship("Slot")
    sentence = db.relationship("Sentence")
    control = db.relationship("Control")
    left_system = db.relationship("System", foreign_keys=[left_system_id])
    right_system = db.relationship("System", foreign_keys=[right_system_id])

    # (source, left, right) as shown, when serving the item read them (not a column).
    texts = None

    @property
    def is_control(self):
        return self.control_id is not None


class DaJudge(db.Model):
    """A scoring volunteer's running sums (DA, and ESA since; named for DA),
    moved in each answer's transaction (services/score_sums.py), so the live
    rules, the judge test and the dashboard read a few rows instead of every
    score."""

    __tablename__ = "da_judges"
    __table_args__ = (Index("ix_da_judges_status", "campaign_id", "status"),)
    participation_id = db.Column(db.Integer, db.ForeignKey("participations.id"), primary_key=True)
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), nullable=False)
    # The live rules' sums (protocols/da/quality.Tally): every score and pair.
    pairs = db.Column(db.Integer, nullable=False, default=0)
    drop_sum = db.Column(db.Integer, nullable=False, default=0)
    suspects = db.Column(db.Integer, nullable=False, default=0)
    informative = db.Column(db.Integer, nullable=False, default=0)
    copied_first = db.Column(db.Integer, nullable=False, default=0)
    scores = db.Column(db.Integer, nullable=False, default=0)
    score_sum = db.Column(db.Integer, nullable=False, default=0)
    score_squares = db.Column(db.Integer, nullable=False, default=0)
    first_scores = db.Column(db.Integer, nullable=False, default=0)
    first_sum = db.Column(db.Integer, nullable=False, default=0)
    first_squares = db.Column(db.Integer, nullable=False, default=0)
    # The research sums: the scores the analysis reads while the volunteer is
    # neither held nor dismissed (not too fast; a bad reference once paired),
    # and its judge test's pairs (differences bad - original) and verdict.
    counted = db.Column(db.Integer, nullable=False, default=0)
    counted_sum = db.Column(db.Integer, nullable=False, default=0)
    counted_squares = db.Column(db.Integer, nullable=False, default=0)
    tested_pairs = db.Column(db.Integer, nullable=False, default=0)
    diff_sum = db.Column(db.Integer, nullable=False, default=0)
    diff_squares = db.Column(db.Integer, nullable=False, default=0)
    status = db.Column(db.String(16), nullable=False, default="untested")
    # A counted score's z is score * z_scale - z_shift (1 / sd, mean / sd; 0
    # without a deviation), so the dashboard sums z scores in SQL.
    z_scale = db.Column(db.Float, nullable=False, default=0.0)
    z_shift = db.Column(db.Float, nullable=False, default=0.0)


class DaJudgeSystem(db.Model):
    """A scoring volunteer's counted system and repeat scores of one system,
    and (ESA) the errors marked on them."""

    __tablename__ = "da_judge_systems"
    participation_id = db.Column(db.Integer, db.ForeignKey("da_judges.participation_id"), primary_key=True)
    system_id = db.Column(db.Integer, db.ForeignKey("systems.id"), primary_key=True)
    scores = db.Column(db.Integer, nullable=False, default=0)
    total = db.Column(db.Integer, nullable=False, default=0)
    minor = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    major = db.Column(db.Integer, nullable=False, default=0, server_default="0")
    omissions = db.Column(db.Integer, nullable=False, default=0, server_default="0")


class DaJudgeKind(db.Model):
    """A DA volunteer's paired quality-control items of one kind: how many,
    the sum of their scores and of their originals' (all answers)."""

    __tablename__ = "da_judge_kinds"
    participation_id = db.Column(db.Integer, db.ForeignKey("da_judges.participation_id"), primary_key=True)
    kind = db.Column(db.String(16), primary_key=True)
    items = db.Column(db.Integer, nullable=False, default=0)
    total = db.Column(db.Integer, nullable=False, default=0)
    original_total = db.Column(db.Integer, nullable=False, default=0)


class Announcement(db.Model):
    """An organiser's announcement to a campaign's volunteers, shown on the
    judging page until dismissed, replaced by a newer one, or expired
    (services/announcements.py). The text is untrusted: always escaped."""

    __tablename__ = "announcements"
    __table_args__ = (Index("ix_announcements_campaign", "campaign_id", "id"),)
    id = db.Column(db.Integer, primary_key=True)
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), nullable=False)
    text = db.Column(db.String(500), nullable=False)
    created_by = db.Column(db.Integer, db.ForeignKey("users.id"))
    created_at = db.Column(db.DateTime, nullable=False, default=utcnow)
    expires_at = db.Column(db.DateTime, nullable=False)


class ItemReport(db.Model):
    """A volunteer's report that an item is broken (services/reports.py);
    the item was skipped. One report per item."""

    __tablename__ = "item_reports"
    __table_args__ = (Index("ix_item_reports_campaign", "campaign_id", "created_at"),)
    id = db.Column(db.Integer, primary_key=True)
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), nullable=False)
    sentence_id = db.Column(db.Integer, db.ForeignKey("sentences.id"))  # None for a control
    item_id = db.Column(db.Integer, db.ForeignKey("items.id"), nullable=False, unique=True)
    participation_id = db.Column(db.Integer, db.ForeignKey("participations.id"), nullable=False)
    reason = db.Column(db.String(32), nullable=False)  # a code of choices.REPORT_REASONS
    text = db.Column(db.String(200))
    created_at = db.Column(db.DateTime, nullable=False, default=utcnow)

    item = db.relationship("Item")
    sentence = db.relationship("Sentence")
    participation = db.relationship("Participation")


class Ticket(db.Model):
    __tablename__ = "tickets"
    __table_args__ = (
        UniqueConstraint("campaign_id", "number"),
        # The raffle page's latest voids, read at each view (raffle_list).
        Index("ix_tickets_voided", "campaign_id", "voided_at"),
        # A volunteer's latest valid numbers, which every judgment carries (assignment's lock).
        Index("ix_tickets_valid_latest", "participation_id", "number", sqlite_where=text("voided_at IS NULL"),
              postgresql_where=text("voided_at IS NULL")),
    )
    id = db.Column(db.Integer, primary_key=True)
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), nullable=False)
    participation_id = db.Column(
        db.Integer, db.ForeignKey("participations.id"), nullable=False, index=True
    )
    number = db.Column(db.Integer, nullable=False)
    item_position = db.Column(db.Integer, nullable=False)
    created_at = db.Column(db.DateTime, nullable=False, default=utcnow)
    voided_at = db.Column(db.DateTime)


class RaffleCommitment(db.Model):
    """The SHA-256 of a secret seed, published before the first ticket, and
    the time of the draw it names (the campaign's end)."""

    __tablename__ = "raffle_commitments"
    id = db.Column(db.Integer, primary_key=True)
    campaign_id = db.Column(db.Integer, db.ForeignKey("campaigns.id"), nullable=False, unique=True)
    seed_sha256 = db.Column(db.String(64), nullable=False)
    committed_at = db.Column(db.DateTime, nullable=False, default=utcnow)
    committed_by = db.Column(db.Integer, db.ForeignKey("users.id"))
    draw_at = db.Column(db.DateTime)  # NULL only for commitments made before it was required
    # The public draw or beacon whose value, published after the close, the
    # draw mixes in (NULL only for commitments made before it was required).
    beacon = db.Column(db.String(200))
    beacon_at = db.Column(db.DateTime)
    # When the ticket list froze: set by an organiser's early close or by the draw.
    closed_at = db.Column(db.DateTime)
    # Filled by the draw.
    seed = db.Column(db.String(200))
    beacon_value = db.Column(db.String(200))
    drawn_at = db.Column(db.DateTime)
    prizes = db.Column(db.Integer)
    tickets = db.Column(db.JSON)  # [[number, volunteer pseudonym]] used by the draw
    tickets_sha256 = db.Column(db.String(64))
    winners = db.Column(db.JSON)
    # {"prize number": "ISO time"}: when the winner was last sent the email.
    notified = db.Column(db.JSON)


class AuditLog(db.Model):
    """Organiser and researcher actions: who, what, when."""

    __tablename__ = "audit_log"
    id = db.Column(db.Integer, primary_key=True)
    at = db.Column(db.DateTime, nullable=False, default=utcnow, index=True)
    user_id = db.Column(db.Integer, db.ForeignKey("users.id"))
    username = db.Column(db.String(40))
    action = db.Column(db.String(40), nullable=False)
    target = db.Column(db.String(200), nullable=False, default="")
    details = db.Column(db.JSON)


class OutboxMail(db.Model):
    """An email waiting for, or done with, the background sender
    (services/outbox.py): written in the request's transaction, so a mail
    exists exactly when what it tells about was committed."""

    __tablename__ = "outbox_mails"
    id = db.Column(db.Integer, primary_key=True)
    recipient = db.Column(db.String(254), nullable=False)
    subject = db.Column(db.String(300), nullable=False)
    body = db.Column(db.Text, nullable=False)
    reply_to = db.Column(db.String(254))  # who the recipient's answer goes to (a winner's: the organiser)
    # queued -> sending (claimed by one sender) -> sent, or back to queued
    # for another try, or failed after the last try.
    status = db.Column(db.String(16), nullable=False, default="queued")
    attempts = db.Column(db.Integer, nullable=False, default=0)
    created_at = db.Column(db.DateTime, nullable=False, default=utcnow)
    next_attempt_at = db.Column(db.DateTime, nullable=False, default=utcnow)
    claimed_at = db.Column(db.DateTime)
    sent_at = db.Column(db.DateTime)
    last_error = db.Column(db.Text)
    last_error_at = db.Column(db.DateTime)

    __table_args__ = (Index("ix_outbox_mails_status_next", "status", "next_attempt_at"),)
