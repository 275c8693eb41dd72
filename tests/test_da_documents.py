"""DA by document (issue 33): a DA campaign with documents serves its test
items document by document, in order, from one system, a document begun
finished beyond its target; quality-control items still come between them;
a campaign without documents is served as before."""
import random

from sqlalchemy import select

from app.extensions import db
from app.models import Campaign, Item, Participation, Sentence, User, utcnow
from app.services import evaluation
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from helpers import QUIET_SIGNS, add_documents, join_directly, register, write_campaign

DOCUMENTS = (["news\td1"] * 3 + ["social\td2"] * 2 + ["news\td3"] * 4 + ["speech\td4"] + ["news\td5"] * 5
             + ["social\td6"] * 3 + ["news\td7"] * 6)


def _campaign(tmp_path, documents=True, **settings):
    folder = write_campaign(str(tmp_path / "da"), sentences=len(DOCUMENTS), systems=("A", "B"), protocol="da",
                            **(QUIET_SIGNS | {"judgments_per_pair": 1, "qc_min_pairs": 1000} | settings))
    campaign = create_campaign(read_campaign(add_documents(folder, DOCUMENTS) if documents else folder))
    campaign.pseudonym_salt = "da-documents"  # the same secret schedule in every run
    db.session.commit()
    return campaign


def _walk(campaign, participation_id, rng, limit=200):
    """Answer every item served with a random score; the (sentence number,
    system, quality-control kind, texts) of each."""
    seen = []
    step = evaluation.show(campaign, participation_id, utcnow(), rng)
    while step.item is not None and len(seen) < limit:
        item = db.session.get(Item, step.item.id)
        seen.append((db.session.get(Sentence, item.sentence_id).number, item.left_system_id, item.qc_kind, step.texts))
        step = evaluation.answer(campaign, participation_id, step.item.token, rng.randrange(101), utcnow(), rng)
    return seen


def _document(number):
    return DOCUMENTS[number - 1].split("\t")[1]


def test_test_items_come_document_by_document_and_quality_items_between_them(app, tmp_path):
    campaign = _campaign(tmp_path, qc_share=30, qc_distance=3)
    seen = _walk(campaign, join_directly(campaign, "ane"), random.Random(4))
    tests = [(number, system) for number, system, kind, _texts in seen if kind is None]
    # Each document once, whole, its segments consecutive and in order, from one system.
    assert sorted(number for number, _ in tests) == list(range(1, len(DOCUMENTS) + 1))
    for previous, current in zip(tests, tests[1:]):
        if _document(previous[0]) == _document(current[0]):
            assert current == (previous[0] + 1, previous[1])
        else:
            assert DOCUMENTS.index(DOCUMENTS[current[0] - 1]) == current[0] - 1  # a new document from its start
    # Quality-control items still come, between test items, each after its original.
    quality = [(i, number, system) for i, (number, system, kind, _texts) in enumerate(seen) if kind is not None]
    assert quality and any(0 < i < len(seen) - 1 for i, _, _ in quality)
    for i, number, system in quality:
        assert any(n == number and s == system and k is None for n, s, k, _t in seen[:i])
    # Every item shows its document's earlier segments, as its system translated them.
    for number, system, _kind, texts in seen:
        previous = texts[3]
        first = DOCUMENTS.index(DOCUMENTS[number - 1]) + 1
        assert [segment[0] for segment in previous] == [f"Source sentence number {n}." for n in range(first, number)]
        assert all(segment[2].startswith(f"Output {n} of ") for n, segment in zip(range(first, number), previous))


def test_a_document_begun_is_finished_even_when_others_filled_its_slots(app, tmp_path):
    campaign = _campaign(tmp_path, qc_share=0)
    rng = random.Random(5)
    first = join_directly(campaign, "first")
    step = evaluation.show(campaign, first, utcnow(), rng)
    item = db.session.get(Item, step.item.id)
    number = db.session.get(Sentence, item.sentence_id).number
    # Other volunteers fill every slot meanwhile.
    for name in ("second", "third"):
        _walk(campaign, join_directly(db.session.get(Campaign, campaign.id), name), rng)
    length = DOCUMENTS.count(DOCUMENTS[number - 1])
    for offset in range(1, length):
        step = evaluation.answer(campaign, first, step.item.token, 60, utcnow(), rng)
        following = db.session.get(Item, step.item.id)
        assert db.session.get(Sentence, following.sentence_id).number == number + offset
        assert following.left_system_id == item.left_system_id and following.slot_id is not None
    # The document done and nothing open: nothing more.
    assert evaluation.answer(campaign, first, step.item.token, 60, utcnow(), rng).item is None


def test_the_payload_shows_the_earlier_segments_with_what_they_are_judged_against(app, tmp_path):
    campaign = _campaign(tmp_path, qc_share=0)
    seen = _walk(campaign, join_directly(campaign, "ane"), random.Random(6))
    number, _system, _kind, texts = next(entry for entry in seen if entry[3][3])
    payload = evaluation.protocols.of(campaign).payload(campaign, texts)
    assert payload["previous"][-1]["source"] == f"Source sentence number {number - 1}."
    assert payload["previous"][-1]["translation"].startswith(f"Output {number - 1} of ")
    campaign.da_dimension = "fluency"
    assert all(segment["source"] is None for segment in evaluation.protocols.of(campaign).payload(
        campaign, texts)["previous"])


def test_a_campaign_without_documents_still_revisits_seen_sources_with_other_systems(app, tmp_path):
    campaign = _campaign(tmp_path, documents=False, qc_share=0, qc_distance=2)
    seen = _walk(campaign, join_directly(campaign, "ane"), random.Random(7))
    assert all(texts[3] == () for _n, _s, _k, texts in seen)
    numbers = [number for number, _system, kind, _texts in seen if kind is None]
    # DA's rule: another system's output of a source seen, so each source comes twice, once per system.
    assert sorted(numbers) == sorted(list(range(1, len(DOCUMENTS) + 1)) * 2)
    assert numbers != sorted(numbers)
    assert db.session.scalar(select(Sentence.document).where(Sentence.campaign_id == campaign.id).limit(1)) is None


def test_the_page_shows_the_documents_earlier_segments(app, client, tmp_path):
    campaign = _campaign(tmp_path, qc_share=0)
    register(client)
    first = client.get(f"/c/{campaign.slug}/evaluate").get_data(as_text=True)
    # A document's first sentence: the context is there for the script, hidden.
    assert " hidden" in first.split('id="doc-context"', 1)[1].split(">", 1)[0]
    participation = db.session.scalar(select(Participation).join(User).where(User.username == "ane"))
    rng = random.Random(8)
    step = evaluation.show(campaign, participation.id, utcnow(), rng)
    while not step.texts[3]:  # answered here, the page shows the next item
        step = evaluation.answer(campaign, participation.id, step.item.token, 50, utcnow(), rng)
    db.session.commit()
    page = client.get(f"/c/{campaign.slug}/evaluate").get_data(as_text=True)
    context = page.split('id="doc-context"', 1)[1].split("</details>", 1)[0]
    assert "Earlier in the document" in context and " hidden" not in context.split(">", 1)[0]
    assert step.texts[3][-1][0] in context and "/static/js/document" in page
