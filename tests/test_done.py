"""The end of a volunteer's work (issue 22): a volunteer who judged every
sentence there is for them is thanked, not told to come back; one whose
remaining sentences are reserved by others is told to come back. (The
dismissal page's way home: tests/test_volunteer_flow.py.)"""
from sqlalchemy import select

from app.extensions import db
from app.models import Participation
from app.services import assignment
from helpers import register
from test_volunteer_flow import judge_items


def _judge_until_done(client, html, limit=40):
    for _ in range(limit):
        if 'name="choice"' not in html:
            return html
        html = judge_items(client, html).get_data(as_text=True)
    raise AssertionError("still judging")


def test_a_volunteer_who_judged_every_sentence_is_thanked_not_asked_to_come_back(client, make_campaign):
    make_campaign(sentences=3, systems=("A", "B"))
    register(client)
    html = _judge_until_done(client, client.get("/c/test/evaluate").get_data(as_text=True))
    assert "Thank you: you have judged every sentence!" in html
    assert "come back in a while" not in html
    participation = db.session.scalar(select(Participation))
    assert not assignment.more_may_come(participation.campaign_id, participation.id)


def test_a_volunteer_whose_last_sentences_are_reserved_is_asked_to_come_back(app, client, make_campaign):
    make_campaign(sentences=3, systems=("A", "B"), judgments_per_pair=1)
    other = app.test_client()
    register(other, username="miren", email="miren@example.org")
    html = other.get("/c/test/evaluate").get_data(as_text=True)
    for _ in range(2):  # the two first controls; then miren holds a sentence
        html = judge_items(other, html).get_data(as_text=True)
    assert 'name="choice"' in html
    register(client)
    html = _judge_until_done(client, client.get("/c/test/evaluate").get_data(as_text=True))
    assert "come back in a while" in html and "you have judged every sentence" not in html
