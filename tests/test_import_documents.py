"""Documents (issue 33, item 3): a campaign folder may group its sentences
into documents with a documents file, one line per source line; the
importer refuses the whole file, with the line, when it is malformed."""
import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Sentence
from app.services.campaign_writer import create_campaign
from app.services.format_error import CampaignFormatError
from app.services.importer import read_campaign
from helpers import add_documents, write_campaign


def _with_documents(tmp_path, lines, sentences=6, **kwargs):
    return add_documents(write_campaign(str(tmp_path / "c"), sentences=sentences, **kwargs), lines)


def test_documents_and_domains_are_read_per_sentence(tmp_path):
    spec = read_campaign(_with_documents(tmp_path, ["news\tdoc-1", "news\tdoc-1", "social\tdoc-2",
                                                    "social\tdoc-2", "social\tdoc-2", "speech\tdoc-3"]))
    assert spec.documents == [("doc-1", "news"), ("doc-1", "news"), ("doc-2", "social"), ("doc-2", "social"),
                              ("doc-2", "social"), ("doc-3", "speech")]


def test_a_document_without_a_domain(tmp_path):
    spec = read_campaign(_with_documents(tmp_path, ["a", "a", "b", "b", "c", "c"], protocol="da"))
    assert [d for d, _ in spec.documents] == ["a", "a", "b", "b", "c", "c"]
    assert {domain for _, domain in spec.documents} == {None}


def test_without_a_documents_file_there_are_none(tmp_path):
    assert read_campaign(write_campaign(str(tmp_path / "c"))).documents is None


@pytest.mark.parametrize("lines, line, message", [
    (["a", "a", "b", "a", "c", "c"], 4, "interrupted"),
    (["x\ta\tz", "a", "a", "b", "b", "b"], 1, "domain<TAB>document"),
    (["news\ta", "social\ta", "b", "b", "b", "b"], 2, "changes its domain"),
    (["a", "a", "b", "b", "b"], 6, "5 lines"),
    (["a" * 121, "b", "b", "b", "b", "b"], 1, "at most 120"),
])
def test_a_malformed_documents_file_is_refused_with_its_line(tmp_path, lines, line, message):
    with pytest.raises(CampaignFormatError) as caught:
        read_campaign(_with_documents(tmp_path, lines))
    assert caught.value.line == line and message in str(caught.value)
    assert "documents.tsv" in str(caught.value)


def test_the_sentences_keep_their_document_and_domain(app, tmp_path):
    folder = _with_documents(tmp_path, ["news\td1", "news\td1", "news\td1", "lit\td2", "lit\td2", "lit\td2"])
    campaign = create_campaign(read_campaign(folder))
    db.session.commit()
    rows = db.session.execute(select(Sentence.number, Sentence.document, Sentence.domain)
                              .where(Sentence.campaign_id == campaign.id).order_by(Sentence.number)).all()
    assert [tuple(row) for row in rows] == [(1, "d1", "news"), (2, "d1", "news"), (3, "d1", "news"),
                                            (4, "d2", "lit"), (5, "d2", "lit"), (6, "d2", "lit")]
