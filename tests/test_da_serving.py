"""Which DA item comes next: ties between a source's systems drawn at
random (the first system listed is not always served first, nor scored
most), and a source not served again within the revisit distance while
another one qualifies; the importer's warning about identical outputs."""
import random
from collections import Counter

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Campaign, Item, System, utcnow
from app.services import evaluation
from app.protocols.da import quality as da_quality
from app.services.campaign_writer import create_campaign
from app.services.importer import identical_outputs, read_campaign
from helpers import QUIET_SIGNS, join_directly, write_campaign

SYSTEMS = tuple("ABCDEFGHI")  # nine, as in the campaign that showed the bias


@pytest.fixture
def da_campaign(app, tmp_path):
    def make(salt="da-serving", **kwargs):
        folder = write_campaign(str(tmp_path / "da"), protocol="da", **(QUIET_SIGNS | kwargs))
        campaign = create_campaign(read_campaign(folder))
        campaign.pseudonym_salt = salt  # the secret schedule of quality items, the same in every run
        db.session.commit()
        return campaign
    return make


def _run(campaign_id, participation_id, rng, limit):
    """Answer up to ``limit`` items with random scores."""
    campaign = db.session.get(Campaign, campaign_id)
    step = evaluation.show(campaign, participation_id, utcnow(), rng)
    answered = 0
    while step.item is not None and answered < limit:
        step = evaluation.answer(campaign, participation_id, step.item.token, rng.randrange(101), utcnow(), rng)
        answered += 1


def _items(participation_id):
    """(position, sentence id, system name, quality-control kind) of the volunteer's items."""
    return db.session.execute(
        select(Item.position, Item.sentence_id, System.name, Item.qc_kind)
        .join(System, System.id == Item.left_system_id)
        .where(Item.participation_id == participation_id).order_by(Item.position)
    ).all()


def test_a_campaign_stopped_short_spreads_first_looks_and_scores_over_the_systems(da_campaign):
    campaign = da_campaign(sentences=20, systems=SYSTEMS, judgments_per_pair=5, qc_share=30, qc_distance=4,
                           qc_min_pairs=1000)  # random scores: no live rule
    campaign_id = campaign.id
    rng = random.Random(20)
    first_looks, scores = Counter(), Counter()
    for n in range(40):  # each stops after 25 items: the campaign stops short of its 900 scores
        participation_id = join_directly(db.session.get(Campaign, campaign_id), f"v{n}")
        _run(campaign_id, participation_id, rng, limit=25)
        seen = set()
        for _position, sentence_id, system, kind in _items(participation_id):
            if kind is None:
                scores[system] += 1
                if sentence_id not in seen:
                    first_looks[system] += 1
            seen.add(sentence_id)
    # Before: the first system listed had every first look and the most scores (20, 9, 7, ... 4).
    assert set(first_looks) == set(SYSTEMS)
    assert max(first_looks.values()) <= 2.5 * sum(first_looks.values()) / len(SYSTEMS)
    mean = sum(scores.values()) / len(SYSTEMS)
    assert set(scores) == set(SYSTEMS)
    assert max(scores.values()) - min(scores.values()) <= 0.2 * mean, scores


@pytest.mark.parametrize("seed", range(12))
def test_a_source_comes_back_only_after_the_distance_and_never_twice_in_a_row(da_campaign, seed):
    # Four systems give the same output of every fourth sentence (as the Hindi one did).
    campaign = da_campaign(sentences=12, systems=("A", "B", "C", "D"), identical=(4, 8, 12),
                           judgments_per_pair=1, qc_share=30, qc_distance=5, qc_min_pairs=1000, salt=f"s{seed}")
    campaign_id, raffle_every = campaign.id, campaign.raffle_every
    participation_id = join_directly(campaign, "reader")
    _run(campaign_id, participation_id, random.Random(seed), limit=400)
    items = _items(participation_id)
    assert len([item for item in items if item.qc_kind is None]) == 48  # every output once
    last_seen = {}
    first_positions = {}
    for position, sentence_id, *_rest in items:
        first_positions.setdefault(sentence_id, position)
    last_fresh = max(first_positions.values())
    repeats_in_a_row = 0
    for position, sentence_id, _system, kind in items:
        if sentence_id in last_seen and position < last_fresh:  # other sources were still to come
            gap = position - last_seen[sentence_id]
            distance = da_quality.EARLY_DISTANCE if position <= raffle_every else 5
            if kind is None:  # a test item revisits a source at least the distance after it was last seen
                assert gap >= distance, (position, sentence_id, last_seen[sentence_id])
            repeats_in_a_row += gap == 1
        last_seen[sentence_id] = position
    assert repeats_in_a_row == 0, " ".join(f"{p}:{s}{n}{k and k[0] or ''}" for p, s, n, k in items)


def test_identical_outputs_are_warned_of_not_refused(tmp_path):
    assert identical_outputs({"X": ["a", "b"], "Y": ["c", "d"]}) == []
    outputs = {"X": ["Same.", "b", "c"], "Y": ["Same. ", "b", "z"], "Z": ["Same.", "y", "z"]}
    assert identical_outputs(outputs) == [
        "3 of 3 sentences have systems giving the same translation (first 3 below)",
        "sentence 1: systems X, Y and Z give the same translation; a volunteer scores it once per system",
        "sentence 2: systems X and Y give the same translation; a volunteer scores it once per system",
        "sentence 3: systems Y and Z give the same translation; a volunteer scores it once per system",
    ]
    folder = write_campaign(str(tmp_path / "da"), protocol="da", sentences=12, systems=("A", "B"),
                            identical=(2, 5, 7, 12))
    warnings = read_campaign(folder).warnings
    assert warnings[0] == "4 of 12 sentences have systems giving the same translation (first 3 below)"
    assert [line.split(":")[0] for line in warnings[1:4]] == ["sentence 2", "sentence 5", "sentence 7"]
    assert len(warnings) == 4  # the first few only
