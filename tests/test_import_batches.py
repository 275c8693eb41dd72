"""``flask campaign import`` commits in batches (issue 21, item 1): the same
campaign as one transaction, a draft until its last batch, and nothing left
behind when a batch fails. (Judgments flowing during a 5,000-sentence
import into a running server: tests/security/test_security_busy_live.py.)"""
import pytest
from sqlalchemy import func, select

from app.cli import import_campaign
from app.extensions import db
from app.models import Campaign, Control, Output, PracticeItem, Sentence, Slot, System
from app.services import campaign_writer
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from helpers import write_campaign

TABLES = (Campaign, System, Sentence, Output, Slot, Control, PracticeItem)


def counts():
    return {table.__tablename__: db.session.scalar(select(func.count()).select_from(table)) for table in TABLES}


def units(campaign_id):
    return db.session.execute(
        select(Sentence.number, Slot.system_a_id, Slot.system_b_id, Slot.target)
        .join(Slot, Slot.sentence_id == Sentence.id).where(Sentence.campaign_id == campaign_id)
        .order_by(Sentence.number, Slot.id)
    ).all()


@pytest.fixture
def folder(tmp_path):
    return write_campaign(str(tmp_path / "c"), sentences=23, systems=("A", "B", "C"), controls=20, practice=2)


def test_batches_make_the_same_campaign_as_one_transaction(app, folder):
    app.config["BOZKA_IMPORT_BATCH"] = 5
    _spec, batched = import_campaign(folder)
    assert batched.status == "draft" and batched.target_judgments == 23 * 3 * 5
    made = counts()
    assert made == {"campaigns": 1, "systems": 3, "sentences": 23, "outputs": 69, "slots": 69, "controls": 20,
                    "practice_items": 2}
    by_name = {system.id: system.name for system in batched.systems}
    in_batches = [(n, by_name[a], by_name[b], t) for n, a, b, t in units(batched.id)]

    spec = read_campaign(folder)
    spec.slug = "whole"
    whole = create_campaign(spec)
    db.session.commit()
    by_name = {system.id: system.name for system in whole.systems}
    assert [(n, by_name[a], by_name[b], t) for n, a, b, t in units(whole.id)] == in_batches


def test_the_campaign_is_a_draft_until_the_last_batch(app, folder, monkeypatch):
    app.config["BOZKA_IMPORT_BATCH"] = 5
    seen = []
    write = campaign_writer.write_sentences

    def spy(spec, campaign_id, *args):
        seen.append(db.session.scalar(select(Campaign.status).where(Campaign.id == campaign_id)))
        return write(spec, campaign_id, *args)

    monkeypatch.setattr(campaign_writer, "write_sentences", spy)
    _spec, campaign = import_campaign(folder, status="open")
    assert seen == ["draft"] * 5  # 23 sentences in batches of 5
    assert campaign.status == "open"


def test_a_failing_batch_leaves_nothing_behind(app, folder, monkeypatch):
    app.config["BOZKA_IMPORT_BATCH"] = 5
    write, calls = campaign_writer.write_sentences, []

    def third_fails(*args):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("the disk is full")
        return write(*args)

    monkeypatch.setattr(campaign_writer, "write_sentences", third_fails)
    with pytest.raises(RuntimeError):
        import_campaign(folder)
    assert len(calls) == 3  # two batches had been committed
    assert set(counts().values()) == {0}
    monkeypatch.setattr(campaign_writer, "write_sentences", write)
    _spec, campaign = import_campaign(folder)  # the same folder imports again afterwards
    assert campaign.status == "draft" and counts()["sentences"] == 23
