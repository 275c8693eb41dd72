"""A Direct Assessment campaign judged through the services, for the tests of
its exports and dashboard (imported as ``da_simulation``)."""
import os
import random
import re

from sqlalchemy import select

from app.extensions import db
from app.models import Item, Participation, Sentence, System, User, utcnow
from app.services import evaluation
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from app.services.pseudonyms import pseudonym
from helpers import QUIET_SIGNS, join_directly, write_campaign

# How good each system is (an honest judge's mean score of its outputs).
QUALITY = {"A": 80, "B": 60, "C": 40}
_OUTPUT = re.compile(r"Output (\d+) of (\w+)\.")


def make_da_campaign(folder, **settings):
    settings = QUIET_SIGNS | dict(sentences=30, systems=tuple(QUALITY), qc_share=40, qc_distance=2,
                                  qc_min_pairs=3, judgments_per_pair=6, reference=True) | settings
    write_campaign(folder, protocol="da", **settings)
    manifest = os.path.join(folder, "campaign.toml")
    with open(manifest, encoding="utf-8") as handle:
        text = handle.read()
    for name in settings["systems"]:  # a TOML key with a space is quoted
        text = text.replace(f'\n{name} = "', f'\n"{name}" = "')
    with open(manifest, "w", encoding="utf-8") as handle:
        handle.write(text)
    campaign = create_campaign(read_campaign(folder))
    campaign.pseudonym_salt = "da-tests"  # the secret schedule of quality items, the same in every run
    db.session.commit()
    return campaign


def honest(rng, quality=QUALITY):
    """A judge who scores a system's outputs by its quality, bad references
    much lower and references high."""
    def score(texts, kind=None):
        match = _OUTPUT.fullmatch(texts[2])
        if kind == "bad_reference":  # they read it: a phrase is wrong (it may look like an output here)
            return rng.randint(0, 25)
        if match:
            return max(0, min(100, quality[match.group(2)] + rng.randint(-15, 15)))
        if texts[2].startswith("The reference translation"):
            return rng.randint(85, 100)
        return rng.randint(0, 25)  # a bad reference: words are missing
    return score


def optimiser(texts, kind=None):
    return 70  # the same score whatever is shown: held before the first ticket, dismissed by the live rule


def join(campaign, username):
    """A confirmed volunteer with the form's answers (and a real name), joined
    to ``campaign``; their participation id."""
    return join_directly(campaign, username, "password-123", confirmed=True, age_group="26-35",
                         studies_level="university", studies_field="humanities", real_name=f"Real {username}")


def run(campaign, participation_id, score_of, limit=400, rng=None):
    """Answer every item the volunteer is served; returns the last status."""
    rng = rng or random.Random(1)
    step = evaluation.show(campaign, participation_id, utcnow(), rng)
    status, n = step.status, 0
    while step.item is not None and n < limit:
        step = evaluation.answer(campaign, participation_id, step.item.token, score_of(step.texts, step.item.qc_kind), utcnow(), rng)
        status, n = step.status, n + 1
    return status


def judge(campaign, honest_judges=4, optimisers=1, seed=7):
    """Honest volunteers and aggressive optimisers judging until nothing is
    left (or they are dismissed); returns {username: last status}."""
    rng = random.Random(seed)
    statuses = {}
    for n in range(honest_judges):
        statuses[f"honest{n}"] = run(campaign, join(campaign, f"honest{n}"), honest(rng), rng=rng)
    for n in range(optimisers):
        statuses[f"optimiser{n}"] = run(campaign, join(campaign, f"optimiser{n}"), optimiser, rng=rng)
    return statuses


def database_records(campaign, valid_only=True):
    """(judge, system, sentence, kind, score) straight from the database, in
    the order the scores were given: the analysis's in-memory input."""
    query = (
        select(Participation.user_id, System.name, Sentence.number, Item.qc_kind, Item.score)
        .join(Participation, Participation.id == Item.participation_id)
        .join(System, System.id == Item.left_system_id)
        .join(Sentence, Sentence.id == Item.sentence_id)
        .where(Item.campaign_id == campaign.id, Item.answered_at.is_not(None))
        .order_by(Item.answered_at, Item.id)
    )
    if valid_only:
        query = query.where(Item.discarded_at.is_(None))
    return [(pseudonym(campaign, user_id), name, str(number), kind or "system", score)
            for user_id, name, number, kind, score in db.session.execute(query)]


def user_id(username):
    return db.session.scalar(select(User.id).where(User.username == username))
