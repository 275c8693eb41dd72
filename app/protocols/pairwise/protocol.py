"""The Ebaluatoia pairwise protocol (paper, sections 2-3): a source sentence
and two translations, in random order; the volunteer says which is better
or that they are equal. Quality control: control sentences with a known
answer, at fixed or secret places (``controls``). Optionally, at
secret places, a repeat: a test item the volunteer judged at least
``repeat_distance`` items before, shown again for intra-annotator agreement
(``repeats``)."""
import hashlib
from itertools import combinations

from flask_babel import lazy_gettext as _l
from sqlalchemy import and_, bindparam, exists, func, insert, select
from sqlalchemy.orm import aliased

from ...database import execute
from ...models import Control, Item, Output, Sentence, Slot
from ...services import degrade, holds, quality, volunteer_figures
from . import control_pool, controls, controls_file
from . import dashboard as dashboard_panel, decisions, export as pairwise_export, plan as pair_plan, repeats, review
from . import practice as pairwise_practice
from ...services.pseudonyms import pseudonym
from ...services.slots import take_pair_slot, take_slot
from ...services.texts import same_output

NAME = "pairwise"
TEMPLATE = "volunteer/item_pairwise.html"
# Practice items: two translations, the better one told (practice.py).
PRACTICE = pairwise_practice
TEXTS = "volunteer/protocol_pairwise.html"  # task, instructions, rule, dismissal
CHOICES = ("left", "right", "equal")
# The importer reads the campaign's control sentences (``read_controls``) and practice items.
USES_CONTROLS = True
read_controls = controls_file.read_controls
# What makes a pool of controls from held-out sentences (``flask campaign controls``).
CONTROL_POOL = control_pool
# The control settings are the importer's (they predate protocols); repeats
# are off by default. name: (type, default, minimum[, maximum]) (docs/campaign-format.md)
SETTINGS = {
    "repeat_share": (int, 0, 0, 50),
    "repeat_distance": (int, 10, 1),
    # Issue 32: the paper's rule, or pairs decided by an anytime-valid test retired (plan.py).
    "assignment": (str, pair_plan.SEQUENTIAL, None),
    "goal": (str, pair_plan.ORDERING, None),
}
# The control settings are checked by these words whatever the protocol (they predate protocols).
WORDS = {"assignment": pair_plan.ASSIGNMENTS, "goal": pair_plan.GOALS,
         "control_placement": controls.PLACEMENTS, "control_source": controls.CONTROL_SOURCES}
LIVE_SETTINGS = ()
# What the organisers' pages show and offer (services/export.py, dashboard.py, review.py).
EXPORTS = ("judgments", "controls", "discarded", "volunteers", "wmt", "decisions")
# The exports only pairwise has, {kind: (columns, rows, formats)}: services.export adds them.
EXPORT_KINDS = {
    "judgments": (pairwise_export.JUDGMENT_COLUMNS, pairwise_export.judgment_rows, ("csv", "jsonl")),
    "controls": (pairwise_export.JUDGMENT_COLUMNS, pairwise_export.control_rows, ("csv", "jsonl")),
    "discarded": (pairwise_export.JUDGMENT_COLUMNS, pairwise_export.discarded_rows, ("csv", "jsonl")),
    # WMT's relative-ranking layout is a CSV file (what WMT's tools and scripts/analyse.py read).
    "wmt": (pairwise_export.WMT_COLUMNS, pairwise_export.wmt_rows, ("csv",)),
    # Per system pair its live decision: what scripts/analyse.py --decisions reads.
    "decisions": (decisions.EXPORT_COLUMNS, decisions.export_rows, ("csv", "jsonl")),
}
# The volunteers export's quality columns.
VOLUNTEER_QUALITY = pairwise_export.CONTROL_COLUMNS
volunteer_quality = pairwise_export.volunteer_quality
PANEL = "organiser/_panel_pairwise.html"
REVIEW = "organiser/_review_pairwise.html"
SIGNS = ("same_side", "equal", "fast")  # the signs of services/holds.py that apply


def generates_controls(settings):
    """Whether the campaign makes each volunteer's controls (``control_source``
    "generated", the default) rather than serving its imported pool."""
    return settings.get("control_source", controls.GENERATED) == controls.GENERATED


def check_settings(settings, has_references):
    """What is wrong with a campaign's settings for this protocol, or None."""
    return None


def units(sentence_id, outputs, target, settings, rng):
    """The slots of one sentence: every system pair; identical outputs are
    never shown (target 0, a tie by rule)."""
    slots = []
    for a, b in combinations(outputs, 2):
        identical = same_output(a.text, b.text)
        slots.append(Slot(sentence_id=sentence_id, system_a_id=a.system_id, system_b_id=b.system_id,
                          identical=identical, target=0 if identical else target,
                          shuffle=scramble(sentence_id, a.system_id, b.system_id)))
    return slots


def scramble(sentence_id, system_a_id, system_b_id):
    """A slot's place in its pair's random order (``Slot.shuffle``): fixed by
    its ids, independent between pairs, without drawing from the import's
    random source. (Not crc32: linear, it gave every pair nearly the same
    order, so a keen volunteer's seen sentences led every pair's walk.)"""
    key = f"{sentence_id}:{system_a_id}:{system_b_id}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=4).digest(), "big") >> 2


def question(campaign):
    return _l("Which translation is better?")


def is_control(campaign, position, seed):
    """Whether the volunteer's item at ``position`` is a control, by the campaign's schedule."""
    return controls.is_control_position(
        position, campaign.control_first, campaign.control_every, campaign.control_placement, seed,
        early_items=campaign.early_control_items, early_every=campaign.early_control_every,
    )


def serve(campaign, participation, position, rng):
    """The fields of the volunteer's item at ``position`` (with ``texts``:
    source, left, right), or None when nothing is left to judge.

    A control is generated for the volunteer (``control_source`` "generated")
    or taken from the imported pool; a generated campaign falls back on its
    pool, if it has one, when no control can be made, and serves a test item
    when neither can."""
    seed = quality.volunteer_seed(campaign.pseudonym_salt, participation.id)
    control = is_control(campaign, position, seed)
    repeat = not control and repeats.is_repeat_position(position, campaign.repeat_share, seed)
    if (control or repeat) and decisions.goal_reached(campaign):
        return None  # the goal is reached: no check of answers that no test item can follow
    if control:
        fields = None
        if campaign.control_source == controls.GENERATED:
            fields = _generate_control(campaign, participation, position, seed)
        if fields is None:
            fields = _serve_control(campaign, participation, rng, seed)
        if fields is not None:
            return fields
    elif repeat:
        fields = _serve_repeat(campaign, participation, position, rng)
        if fields is not None:
            return fields
    if campaign.assignment == pair_plan.SEQUENTIAL:
        taken = take_pair_slot(campaign, participation, rng, pair_plan.fewest_first)
    else:
        taken = take_slot(campaign, participation, rng)
    if taken is None:
        return None
    slot, sentence_id, (source, text_a, text_b) = taken
    pair = [(slot.system_a_id, text_a), (slot.system_b_id, text_b)]
    rng.shuffle(pair)
    return dict(
        slot_id=slot.id,
        sentence_id=sentence_id,
        left_system_id=pair[0][0],
        right_system_id=pair[1][0],
        holding=True,
        texts=(source, pair[0][1], pair[1][1]),
    )


# How far back (items before the latest allowed) a repeat's original is
# looked for: the look-up stays flat however many items the volunteer has.
REPEAT_WINDOW = 200
_repeat = aliased(Item)
_original_left, _original_right = aliased(Output), aliased(Output)
# The volunteer's latest answered test item in the range, counted (not too
# fast, not discarded) and not repeated yet, with its texts: one statement
# walking the (participation, position) index backwards.
_DUE_ORIGINAL = (
    select(Item.id, Item.sentence_id, Item.left_system_id, Item.right_system_id,
           Sentence.source, _original_left.text, _original_right.text)
    .join(Sentence, Sentence.id == Item.sentence_id)
    .join(_original_left, (_original_left.sentence_id == Item.sentence_id)
          & (_original_left.system_id == Item.left_system_id))
    .join(_original_right, (_original_right.sentence_id == Item.sentence_id)
          & (_original_right.system_id == Item.right_system_id))
    .where(
        Item.participation_id == bindparam("participation_id"),
        Item.position <= bindparam("latest"), Item.position > bindparam("earliest"),
        Item.control_id.is_(None), Item.qc_kind.is_(None), Item.answered_at.is_not(None),
        Item.discarded_at.is_(None), Item.too_fast.is_(False),
        ~exists().where(_repeat.original_item_id == Item.id),
    )
    .order_by(Item.position.desc())
    .limit(1)
)


def _serve_repeat(campaign, participation, position, rng):
    """A repeat of a test item the volunteer judged at least
    ``repeat_distance`` items back (up to twice that, drawn), or None when
    none is due. The same sentence and two translations, on sides drawn
    afresh: a volunteer who always clicks one side agrees with themselves
    only by chance."""
    earliest, latest = repeats.original_range(
        position, campaign.repeat_distance, rng.randint(0, campaign.repeat_distance), REPEAT_WINDOW)
    row = execute(_DUE_ORIGINAL, {"participation_id": participation.id, "earliest": earliest,
                                  "latest": latest}).first()
    if row is None:
        return None
    original_id, sentence_id, left_id, right_id, source, left, right = row
    if rng.random() < 0.5:
        left_id, right_id, left, right = right_id, left_id, right, left
    return dict(sentence_id=sentence_id, left_system_id=left_id, right_system_id=right_id,
                qc_kind=repeats.REPEAT, original_item_id=original_id, texts=(source, left, right))


# Where the volunteer last saw each control: one pass over their controls
# (the index on participation and control). A correlated max() per control
# took SQLite's index on participation and position instead, reading all
# the volunteer's items once per control (250 µs at 400 items, growing).
_last_seen = (
    select(Item.control_id, func.max(Item.position).label("position"))
    .where(Item.participation_id == bindparam("participation_id"), Item.control_id.is_not(None))
    .group_by(Item.control_id)
    .subquery("last_seen")
)
# Every control of the campaign, with the position where the volunteer last saw it (or None).
_CONTROLS_SEEN = (
    select(Control.id, _last_seen.c.position)
    .select_from(Control.__table__.outerjoin(_last_seen, _last_seen.c.control_id == Control.id))
    .where(Control.campaign_id == bindparam("campaign_id"), Control.number.is_not(None))  # the pool only
    .order_by(Control.id)
)


def _serve_control(campaign, participation, rng, seed):
    """A control from the volunteer's subset: one not seen yet, else the one
    seen longest ago."""
    rows = execute(_CONTROLS_SEEN, {"campaign_id": campaign.id, "participation_id": participation.id}).all()
    # Only the volunteer's own subset of the pool (all of it by default).
    control_ids = controls.volunteer_controls([cid for cid, _position in rows], campaign.controls_per_volunteer, seed)
    if not control_ids:
        return None  # no pool
    last_seen = {cid: position for cid, position in rows if position is not None}
    unseen = [cid for cid in control_ids if cid not in last_seen]
    reused = not unseen
    if unseen:
        control_id = rng.choice(unseen)
    else:
        # Every control seen: reuse the one seen longest ago, and record it.
        control_id = min(control_ids, key=lambda cid: last_seen[cid])
        if not participation.controls_seen_all:  # set again, it would cost a flush at every control
            participation.controls_seen_all = True
    return dict(control_id=control_id, better_left=rng.random() < 0.5, control_reused=reused)


# Draws before giving up on a generated control (each finds a sentence the
# volunteer has not seen, long enough, with a long enough donor at once
# unless the campaign is nearly used up for them). The first half takes
# only outputs never shown: of a sentence nobody is judging or has judged,
# never made into a control before, so neither a collection of the texts
# other accounts saw nor what their feedback told holds them.
GENERATE_TRIES = 20
UNSHOWN_TRIES = 10
_SENTENCE_COUNT = select(func.max(Sentence.number)).where(Sentence.campaign_id == bindparam("campaign_id"))
# The outputs of the sentence numbered ``number``, unless the volunteer has
# seen it (as a test or a control: never both, never twice).
_UNSEEN_OUTPUTS = (
    select(
        Sentence.id, Sentence.source, Output.system_id, Output.text,
        (Sentence.pending > 0)
        | exists().where(Control.sentence_id == Sentence.id, Control.system_id == Output.system_id),
    )
    .join(Output, Output.sentence_id == Sentence.id)
    .where(
        Sentence.campaign_id == bindparam("campaign_id"),
        Sentence.number == bindparam("number"),
        ~exists().where(Item.participation_id == bindparam("participation_id"), Item.sentence_id == Sentence.id),
    )
    .order_by(Output.system_id)
)
_DONOR_OUTPUTS = (
    select(Output.text)
    .join(Sentence, Sentence.id == Output.sentence_id)
    .where(Sentence.campaign_id == bindparam("campaign_id"), Sentence.number == bindparam("number"))
    .order_by(Output.system_id)
)
# The numbers of the sentences the volunteer has not seen (when the draws miss).
_UNSEEN_NUMBERS = (
    select(Sentence.number)
    .where(
        Sentence.campaign_id == bindparam("campaign_id"),
        ~exists().where(Item.participation_id == bindparam("participation_id"), Item.sentence_id == Sentence.id),
    )
    .order_by(Sentence.number)
)
_INSERT_CONTROL = insert(Control.__table__).returning(Control.id)


def _generate_control(campaign, participation, position, seed):
    """A control made for this volunteer from the campaign's own material
    (``degrade.known_worse``): a sentence they have not seen, one system's
    output as the better translation, the same output with a run of words
    replaced by words of another sentence's output as the worse; everything
    drawn from their secret seed. None when no control can be made."""
    last = execute(_SENTENCE_COUNT, {"campaign_id": campaign.id}).scalar()
    if not last or last < 2:
        return None
    draw = controls.control_draw(seed, position)
    for attempt in range(GENERATE_TRIES):
        fields = _make_control(campaign, participation, draw.randrange(1, last + 1), last, draw,
                               unshown_only=attempt < UNSHOWN_TRIES)
        if fields is not None:
            return fields
    # The draws missed: the volunteer has seen most sentences. Go through the
    # ones left, in their seed's order, so the pool is used only when none can serve.
    numbers = execute(_UNSEEN_NUMBERS, {"campaign_id": campaign.id, "participation_id": participation.id}).scalars().all()
    draw.shuffle(numbers)
    for attempt in range(GENERATE_TRIES if numbers else 0):
        fields = _make_control(campaign, participation, numbers[attempt % len(numbers)], last, draw)
        if fields is not None:
            return fields
    return None


def _make_control(campaign, participation, number, last, draw, unshown_only=False):
    """A control from sentence ``number``, degraded with a random other
    sentence's output; None when the volunteer has seen the sentence or this
    draw makes no usable worse side."""
    donor_number = draw.randrange(1, last + 1)
    rows = execute(
        _UNSEEN_OUTPUTS, {"campaign_id": campaign.id, "number": number, "participation_id": participation.id}
    ).all()
    fresh = [row for row in rows if not row[4]] if unshown_only else rows
    if not fresh or donor_number == number:
        return None
    donors = execute(_DONOR_OUTPUTS, {"campaign_id": campaign.id, "number": donor_number}).scalars().all()
    sentence_id, source, system_id, better, _shown = fresh[draw.randrange(len(fresh))]
    # Never another system's translation of the sentence: that is no worse.
    worse = degrade.known_worse(better, donors[draw.randrange(len(donors))], draw,
                                avoid={row.text for row in rows}) if donors else None
    if worse is None:
        return None
    control_id = execute(_INSERT_CONTROL, dict(
        campaign_id=campaign.id, number=None, source=source, better=better, worse=worse,
        sentence_id=sentence_id, system_id=system_id,
    )).scalar_one()
    better_left = draw.random() < 0.5
    return dict(control_id=control_id, sentence_id=sentence_id, better_left=better_left, control_reused=False,
                texts=(source, better, worse) if better_left else (source, worse, better))


_shown_left, _shown_right = aliased(Output), aliased(Output)
# The volunteer's current item with the texts it shows, in one statement.
CURRENT_ITEM = (
    select(Item, Sentence.source, _shown_left.text, _shown_right.text, Control.source, Control.better, Control.worse)
    # A generated control names its sentence too: its texts are the control's (read once).
    .outerjoin(Sentence, (Sentence.id == Item.sentence_id) & Item.control_id.is_(None))
    .outerjoin(
        _shown_left,
        (_shown_left.sentence_id == Item.sentence_id) & (_shown_left.system_id == Item.left_system_id),
    )
    .outerjoin(
        _shown_right,
        (_shown_right.sentence_id == Item.sentence_id) & (_shown_right.system_id == Item.right_system_id),
    )
    .outerjoin(Control, Control.id == Item.control_id)
    .where(Item.participation_id == bindparam("participation_id"), Item.answered_at.is_(None),
           Item.skipped_at.is_(None))
    .order_by(Item.position.desc())
    .limit(1)
    .execution_options(populate_existing=True)
)
_left, _right = aliased(Output), aliased(Output)
_TEST_TEXTS = (
    select(Sentence.source, _left.text, _right.text)
    .join(_left, and_(_left.sentence_id == Sentence.id, _left.system_id == bindparam("left")))
    .join(_right, and_(_right.sentence_id == Sentence.id, _right.system_id == bindparam("right")))
    .where(Sentence.id == bindparam("sentence"))
)
_CONTROL_TEXTS = (
    select(Control.source, Control.better, Control.worse).where(Control.id == bindparam("control"))
)


def texts_of(item):
    """(source, left, right) as the item shows them, controls and tests alike."""
    if item.is_control:
        source, better, worse = execute(_CONTROL_TEXTS, {"control": item.control_id}).one()
        if item.better_left:
            return source, better, worse
        return source, worse, better
    return tuple(
        execute(
            _TEST_TEXTS, {"sentence": item.sentence_id, "left": item.left_system_id, "right": item.right_system_id}
        ).one()
    )


def reading_words(campaign, texts):
    """Words a volunteer reads before answering: the source and both translations."""
    return sum(len(text.split()) for text in texts if text is not None)


def parse(data):
    """The answer in a JSON judgment, or None."""
    choice = data.get("choice")
    return choice if choice in CHOICES else None


def form():
    from .form import JudgmentForm

    return JudgmentForm()


def form_answer(form):
    return form.choice.data


def answer_values(item, answer):
    """The item's columns an answer sets."""
    if answer not in CHOICES:
        raise ValueError("invalid choice")
    return dict(choice=answer, passed=controls.control_passed(item.better_left, answer) if item.is_control else None)


def counters(participation, item, values):
    """How the answer moves the volunteer's counters."""
    if item.is_control:
        return dict(
            controls_answered=participation.controls_answered + 1,
            controls_failed=participation.controls_failed + (0 if values["passed"] else 1),
        )
    return {key: getattr(participation, key) + n for key, n in holds.test_counts(values["choice"]).items()}


_CONTROL_RESULTS = (
    select(Item.passed)
    .where(
        Item.participation_id == bindparam("participation_id"),
        Item.control_id.is_not(None),
        Item.answered_at.is_not(None),
    )
    .order_by(Item.position)
)


def dismissal_reason(campaign, participation, item):
    """Why the volunteer must stop now (``controls.dismissal_reason``), or None.
    The results are read only where the rule can dismiss."""
    if not controls.may_dismiss(item.position, check_every=campaign.check_every):
        return None
    results = execute(_CONTROL_RESULTS, {"participation_id": participation.id}).scalars().all()
    return controls.dismissal_reason(
        item.position,
        results,
        first=campaign.control_first,
        check_every=campaign.check_every,
        cutoff=campaign.cutoff,
        window=campaign.control_window,
    )


def payload(campaign, texts):
    """The item as the page and the JSON API show it. Nothing in it tells a
    control from a test."""
    source, left, right = texts
    return {"source": source, "left": left, "right": right}


def dashboard(campaign, volunteers):
    """The pairwise part of the dashboard: completion per system pair and the
    control record (``volunteers``: the dashboard's ``volunteer_figures``)."""
    answered, failed = volunteers.controls_answered, volunteers.controls_failed
    return {
        "pairs": dashboard_panel.pair_completion(campaign),
        "decisions": decisions.overview(campaign),
        "decision_level": pair_plan.SEQUENTIAL_ALPHA,
        "controls_answered": answered,
        "control_pass_rate": round(100 * (answered - failed) / answered, 2) if answered else None,
        "control_pool_exhausted": volunteers.seen_all,
        # Who has seen every control (organisers see usernames, researchers pseudonyms).
        "control_pool_volunteers": [
            {"username": username, "volunteer": pseudonym(campaign, user_id)}
            for username, user_id in volunteer_figures.control_pool_volunteers(campaign.id)
        ],
    }


def review_judgments(participation):
    """The volunteer's answered items as the organiser's page shows them."""
    return review.judgments_of(participation)


def settled(campaign_id, assignment):
    """The community's progress towards a sequential campaign's goal."""
    return decisions.settled(campaign_id) if assignment == pair_plan.SEQUENTIAL else None


goal_reached = decisions.goal_reached
decided = decisions.decided
refresh = decisions.refresh
