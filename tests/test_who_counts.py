"""One rule of who counts (issue 29, items 6 and 7): the dashboard's
figures, the analysis and the raffle count the same volunteers, in a DA
campaign (an honest, an untested and a dropped volunteer) and a pairwise one
(a held and a dismissed volunteer); a reference that is a system's output is
never shown as a reference check."""
import csv
import io
import os
import random
import re
from datetime import timedelta

from sqlalchemy import select

from app.extensions import db
from app.models import Item, Participation, User, utcnow
from app.services import export, quality, raffle
from app.services import score_quality
from app.protocols.da import quality as da_quality
from app.protocols.pairwise import controls as control_rules
from app.services.importer import read_campaign
from app.services.pseudonyms import pseudonym
from app.stats.da.analysis import analyse_da
from app.stats.da.loader import load_da
from da_simulation import honest, join, make_da_campaign, run
from helpers import csrf_token, register, staff_client

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- the rules, as plain values ------------------------------------------------

def test_a_volunteer_counts_unless_a_reason_says_otherwise_first_reason_first():
    assert quality.left_out_volunteer(dismissed=False, held=False) is None
    assert quality.left_out_volunteer(dismissed=False, held=False, dropped=False, untested=False) is None
    assert quality.left_out_volunteer(dismissed=True, held=True, dropped=True, untested=True) == quality.DISMISSED
    assert quality.left_out_volunteer(dismissed=False, held=True, dropped=True) == quality.HELD
    assert quality.left_out_volunteer(dismissed=False, held=False, dropped=True, untested=True) == quality.DROPPED
    assert quality.left_out_volunteer(dismissed=False, held=False, untested=True) == quality.UNTESTED


def test_a_reference_that_is_a_system_output_is_no_reference_check():
    assert da_quality.reference_check_possible("Good one.", ["Other.", "Another."])
    assert not da_quality.reference_check_possible("Good  one. ", ["Other.", "Good one."])  # spaces aside
    assert not da_quality.reference_check_possible(None, ["Other."])
    assert da_quality.reference_warnings(["A b.", "C d."], {"S": ["A b.", "x"], "T": ["y", "z"]}) == [
        "1 of 2 references are a system's output (lines 1): those sentences are never shown as reference checks"]


def test_the_da_demo_names_its_references_that_are_the_neural_output():
    spec = read_campaign(os.path.join(ROOT, "app", "demo", "en-eu-da"))
    same = [n for n, reference in enumerate(spec.references)
            if reference in [lines[n] for lines in spec.outputs.values()]]
    assert len(same) == 10  # the demo as written: the warning says so, the checks skip them
    assert spec.warnings and "10 of 40 references are a system's output" in spec.warnings[0]


def test_no_reference_check_shows_a_system_output(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"), qc_share=60)
    # Sentences 1-15: the reference is system A's output.
    from app.models import Output, Sentence, System

    a = db.session.scalar(select(System.id).where(System.name == "A"))
    for sentence in db.session.scalars(select(Sentence).where(Sentence.number <= 15)):
        sentence.reference = db.session.scalar(select(Output.text).where(
            Output.sentence_id == sentence.id, Output.system_id == a))
    db.session.commit()
    run(campaign, join(campaign, "ane"), honest(random.Random(3)), rng=random.Random(3))
    checks = db.session.execute(select(Sentence.number).join(Item, Item.sentence_id == Sentence.id).where(
        Item.qc_kind == da_quality.REFERENCE, Item.answered_at.is_not(None))).scalars().all()
    assert checks and all(number > 15 for number in checks)


# --- DA: an honest, an untested and a dropped volunteer --------------------------

def _dropped_judge():
    """Scores each sentence's outputs alike (by the source's number) and its
    bad references 18 below, then 12 above: lower on average, so the live
    rule keeps them (no copies, no reversal of 20 points), but no judge test
    can tell their bad references from the originals."""
    turn = [0]

    def score(texts, kind=None):
        original = 20 + (int(re.search(r"\d+", texts[0]).group()) * 37) % 60
        if kind != score_quality.BAD_REFERENCE:
            return original
        turn[0] += 1
        return original - 18 if turn[0] % 2 else original + 12
    return score


def _counted_figures(page):
    return {name: int(value) for name, value in
            re.findall(r'data-figure="who-([a-z]+)">([0-9]+)<', page)}


def _tickets_csv(client):
    return [line.split(",")[1] for line in client.get("/c/test/raffle/tickets.csv").get_data(as_text=True)
            .splitlines()[1:]]


def test_da_dashboard_analysis_and_raffle_count_the_same_volunteers(app, tmp_path):
    campaign = make_da_campaign(str(tmp_path / "da"), sentences=60, raffle_every=10)
    rng = random.Random(11)
    people = {}
    for name, score, limit in (("honest", honest(rng), 400), ("untested", honest(rng), 10),
                               ("dropped", _dropped_judge(), 400)):
        people[name] = join(campaign, name)
        run(campaign, people[name], score, limit=limit, rng=rng)
    names = {pseudonym(campaign, db.session.get(Participation, pid).user_id): name for name, pid in people.items()}
    for pid in people.values():
        participation = db.session.get(Participation, pid)
        assert participation.dismissed_at is None and participation.held_at is None  # the live rule kept them all

    # The analysis of the export.
    path = tmp_path / "scores.csv"
    assert app.test_cli_runner().invoke(args=["export", "da-judgments", "test", "-o", str(path)]).exit_code == 0
    judges = {names[entry["judge"]]: entry for entry in analyse_da(load_da(str(path)))["judges"]}
    assert judges["honest"]["status"] == "reliable" and judges["honest"]["kept"]
    assert judges["untested"]["status"] == "untested" and judges["untested"]["kept"]
    assert judges["dropped"]["status"] == "unreliable" and not judges["dropped"]["kept"]
    kept = {name for name, entry in judges.items() if entry["kept"]}

    # The dashboard, through the organiser's page.
    page = staff_client(app, "organiser").get("/organiser/c/test/panel").get_data(as_text=True)
    assert _counted_figures(page) == {"counted": len(kept), "dismissed": 0, "held": 0, "dropped": 1, "untested": 0}
    assert 'id="who-counts-rule"' in page
    assert f'data-figure="judges-untested">{1}<' in page

    # The raffle: everyone has a ticket; the dropped volunteer's is not drawn.
    from app.models import Ticket

    holders = {names[pseudonym(campaign, user)] for user in db.session.scalars(
        select(Participation.user_id).join(Ticket, Ticket.participation_id == Participation.id))}
    assert holders == {"honest", "untested", "dropped"}
    public = app.test_client()
    assert {names[holder] for holder in _tickets_csv(public)} == kept == {"honest", "untested"}
    assert "analysis's quality test" in public.get("/c/test/raffle").get_data(as_text=True)
    assert f'data-figure="raffle-eligible">{len(raffle.eligible_tickets(campaign))}<' in page

    # The judge test runs again for the volunteers who answered since (only them):
    # one who judges like the dropped judge counts while too new to test, then is dropped.
    from app.protocols.da import dashboard as da_dashboard

    late = join(campaign, "late")
    run(campaign, late, _dropped_judge(), limit=10, rng=rng)
    assert da_dashboard.dropped(campaign) == {people["dropped"]}
    run(campaign, late, _dropped_judge(), limit=400, rng=rng)
    assert app.test_cli_runner().invoke(args=["export", "da-judgments", "test", "-o", str(path)]).exit_code == 0
    by_pseudonym = {pseudonym(campaign, db.session.get(Participation, pid).user_id): pid
                    for pid in (*people.values(), late)}
    assert {by_pseudonym[entry["judge"]] for entry in analyse_da(load_da(str(path)))["judges"]
            if not entry["kept"]} == da_dashboard.dropped(campaign) == {people["dropped"], late}


# --- pairwise: a held and a dismissed volunteer -----------------------------------

def _answer(client, count):
    from app.models import Control

    better = set(db.session.scalars(select(Control.better)))
    token = csrf_token(client, "/c/test/instructions")
    for _ in range(count):
        item = client.get("/c/test/api/item").get_json()["item"]
        if item is None:
            return
        choice = "right" if item["right"] in better else "left"
        client.post("/c/test/api/judgment", json={"token": item["token"], "choice": choice},
                    headers={"X-CSRFToken": token})


def test_pairwise_dashboard_analysis_and_raffle_count_the_same_volunteers(app, make_campaign):
    campaign = make_campaign(sentences=30, fast_seconds_per_word=0.0)
    for name in ("ane", "held", "gone", "new"):
        client = app.test_client()
        register(client, username=name, email=f"{name}@example.org")
        db.session.scalar(select(User).where(User.username == name)).email_confirmed_at = utcnow()
        db.session.commit()
        _answer(client, 3 if name == "new" else 20)

    def participation(name):
        return db.session.scalar(select(Participation).join(User).where(User.username == name))

    held, gone = participation("held"), participation("gone")
    held.held_at, held.held_reason = utcnow() - timedelta(minutes=5), "same_side"
    gone.dismissed_at, gone.dismissed_reason = utcnow() - timedelta(minutes=5), control_rules.CONTROL_FAILURE_RATE
    db.session.commit()
    names = {pseudonym(campaign, participation(name).user_id): name for name in ("ane", "held", "gone", "new")}

    # The analysis's input: the export's rows that count.
    text = "".join(export.stream(export.source(campaign), "judgments", "csv", db.engine))
    rows = list(csv.DictReader(io.StringIO(text)))
    counted = {names[row["volunteer"]] for row in rows if not row["left_out"]}
    assert counted == {"ane"}

    page = staff_client(app, "organiser").get("/organiser/c/test/panel").get_data(as_text=True)
    assert _counted_figures(page) == {"counted": 1, "dismissed": 1, "held": 1, "dropped": 0, "untested": 1}
    assert {names[holder] for holder in _tickets_csv(app.test_client())} == counted
