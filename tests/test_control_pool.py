"""Controls an organiser can get (issue 31, item 2): the importer refuses
controls whose source is a sentence of the campaign, and ``flask campaign
controls`` makes a pool from held-out sentences, degraded as generated
controls are (one mechanism, ``degrade.known_worse``)."""
import os
import random
import unicodedata

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Control, utcnow
from app.protocols.pairwise import control_pool, controls as control_rules
from app.services import degrade, importer
from app.services.campaign_files import sentence_key
from app.services.importer import CampaignFormatError, read_campaign
from helpers import write_campaign

KEEP = dict(controls_per_volunteer=14)  # an imported pool (write_campaign adds control_source)


def _error(folder):
    with pytest.raises(CampaignFormatError) as info:
        read_campaign(folder)
    return info.value


def _write(path, lines):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))
    return str(path)


def _held_out(path, count, start=1, output=False):
    """A held-out TSV of ``count`` sentences none of which is a campaign's
    (write_campaign's sources are "Source sentence number N.")."""
    header = "source\treference" + ("\toutput" if output else "")
    rows = [f"Held-out sentence {i} about the river.\tIbaiari buruzko {i}. esaldia hemen idatzita dago."
            + (f"\tIbaiaren {i}. esaldia makina batek itzulia." if output else "")
            for i in range(start, start + count)]
    return _write(path, [header] + rows)


# --- the rule: one comparison for controls, practice and held-out sentences ----------


@pytest.mark.parametrize("copy", [
    "Source sentence number 3.",
    "  Source   sentence number\u00a03. ",  # re-spaced (a no-break space too)
    "SOURCE SENTENCE NUMBER 3.",
])
def test_a_copy_of_a_sentence_has_the_sentences_key(copy):
    assert sentence_key(copy) == sentence_key("Source sentence number 3.")
    assert sentence_key(copy) != sentence_key("Source sentence number 33.")


def test_composed_and_decomposed_letters_are_the_same_sentence():
    composed = "Café irekita dago."
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed and sentence_key(composed) == sentence_key(decomposed)
    assert sentence_key("Cafe irekita dago.") != sentence_key(composed)


@pytest.mark.parametrize("control_source", ["imported", "generated"])
def test_the_importer_refuses_a_control_that_is_a_campaign_sentence_with_its_line(tmp_path, control_source):
    folder = write_campaign(str(tmp_path / "c"), sentences=60, controls=20, control_source=control_source, **KEEP)
    path = os.path.join(folder, "controls.tsv")
    lines = open(path, encoding="utf-8").read().splitlines()
    lines[7] = unicodedata.normalize("NFD", "source  sentence number 12.") + "\tOna.\tTxarra."  # line 8
    _write(path, lines)
    error = _error(folder)
    assert (error.path, error.line) == ("controls.tsv", 8)
    assert error.message.startswith("the source is line 12 of source.txt, a sentence of the campaign; a volunteer "
                                    "would see it twice and tell the control")


def test_the_cli_import_names_the_file_and_line_and_writes_nothing(app, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), sentences=60, controls=20, **KEEP)
    with open(os.path.join(folder, "controls.tsv"), "a", encoding="utf-8") as handle:
        handle.write("Source sentence number 40.\tOna.\tTxarra.\n")
    result = app.test_cli_runner().invoke(args=["campaign", "import", folder])
    assert result.exit_code == 1
    assert f"{os.path.join(folder, 'controls.tsv')}:22: the source is line 40 of source.txt" in result.output
    assert db.session.scalar(select(Control.id)) is None


def test_practice_uses_the_same_comparison(tmp_path):
    folder = write_campaign(str(tmp_path / "c"), sentences=20, controls=20, practice=2)
    _write(os.path.join(folder, "practice.tsv"), [
        "source\tbetter\tworse\twhy", "Practice 1.\tRight.\tWrong.\tBecause.",
        "source sentence NUMBER 5.\tRight 2.\tWrong 2.\tBecause 2.",
    ])
    error = _error(folder)
    assert (error.path, error.line) == ("practice.tsv", 3)
    assert error.message == "the source is line 5 of source.txt, a sentence of the campaign; practise on others"


# --- the shared degradation -----------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_known_worse_keeps_the_length_and_changes_a_run_of_words(seed):
    rng = random.Random(seed)
    better = "Nire ahizpa Bilbon bizi da eta egunero lanera joaten da trenean"
    donor = "Gaur goizean euria egin du hiriko kale guztietan"
    worse = degrade.known_worse(better, donor, rng)
    if worse is None:
        return
    assert worse != better and len(worse.split()) == len(better.split())
    changed = [new for old, new in zip(better.split(), worse.split()) if old != new]
    assert changed and set(changed) <= set(donor.split())


def test_known_worse_is_never_a_text_to_avoid():
    rng = random.Random(1)
    better, donor = "bat bi hiru", "lau bost sei"
    made = {degrade.replace_span(better, donor, random.Random(seed)) for seed in range(30)}
    for worse in made:
        assert degrade.known_worse(better, donor, random.Random(0), avoid=made) is None
    assert degrade.known_worse("bakarra", donor, rng) is not None  # one word: its characters
    assert degrade.known_worse("a", donor, rng) is None


def test_generated_controls_and_made_pools_use_the_same_degradation(app, make_campaign, tmp_path, monkeypatch):
    """Both paths ask ``degrade.known_worse`` for the worse side."""
    from app.services import accounts, evaluation

    calls = []
    real = degrade.known_worse

    def spy(text, donor, rng, avoid=()):
        calls.append(text)
        return real(text, donor, rng, avoid)

    monkeypatch.setattr(degrade, "known_worse", spy)
    campaign = make_campaign(sentences=12, systems=("A", "B"), control_source="generated")
    user = accounts.create_user("v@example.org", "volunteer", "password-123")
    participation = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
    db.session.commit()
    step = evaluation.show(campaign, participation.id, utcnow(), random.Random(1))
    assert step.item is not None and step.item.is_control and calls
    generated = len(calls)
    rows = control_pool.read_held_out(_held_out(tmp_path / "held.tsv", 5))
    controls, _skipped = control_pool.make_pool(rows, random.Random(2))
    assert len(controls) == 5 and len(calls) >= generated + 5


# --- the pool maker -------------------------------------------------------------------


def test_made_controls_are_the_reference_against_itself_degraded(tmp_path):
    rows = control_pool.read_held_out(_held_out(tmp_path / "held.tsv", 30))
    controls, skipped = control_pool.make_pool(rows, random.Random(5))
    assert skipped == [] and len(controls) == 30
    references = {row.source: row.reference for row in rows}
    for source, better, worse in controls:
        assert better == references[source] and worse != better
        assert len(worse.split()) == len(better.split())


def test_the_better_side_may_be_the_output_and_the_worse_is_never_the_reference(tmp_path):
    rows = control_pool.read_held_out(_held_out(tmp_path / "held.tsv", 10, output=True), use_output=True)
    controls, _skipped = control_pool.make_pool(rows, random.Random(3), use_output=True)
    outputs = {row.source: (row.output, row.reference) for row in rows}
    assert len(controls) == 10
    for source, better, worse in controls:
        assert better == outputs[source][0] and worse not in outputs[source]


def test_repeated_and_too_short_sentences_are_skipped_with_their_lines(tmp_path):
    path = _write(tmp_path / "held.tsv", [
        "source\treference", "First held-out sentence.\tLehen esaldi luzea hemen dago.",
        "Second one.\tA", "first  HELD-OUT sentence.\tBeste bat da hau ere bai.",
        "Third one.\tHirugarren esaldia ere luzea da.",
    ])
    controls, skipped = control_pool.make_pool(control_pool.read_held_out(path), random.Random(4))
    assert [c[0] for c in controls] == ["First held-out sentence.", "Third one."]
    assert skipped == [(3, "too short to degrade"), (4, "the source of line 2 again")]


@pytest.mark.parametrize("lines, line, message", [
    (["source\tbetter", "a\tb"], 1, "header must be: source<TAB>reference, optionally <TAB>output"),
    (["source\treference", "a\tb", "only one field"], 3, "expected 2 tab-separated fields, found 1"),
    (["source\treference\toutput", "a\t \tc"], 2, "empty field"),
    (["source\treference"], None, "no sentences after the header"),
])
def test_a_bad_held_out_file_names_its_line(tmp_path, lines, line, message):
    path = _write(tmp_path / "held.tsv", lines)
    with pytest.raises(CampaignFormatError) as info:
        control_pool.read_held_out(path)
    assert (info.value.path, info.value.line, info.value.message) == (path, line, message)


def test_the_output_as_better_side_needs_the_column(app, tmp_path):
    path = _held_out(tmp_path / "held.tsv", 3)
    with pytest.raises(CampaignFormatError, match="the file needs a column output") as info:
        control_pool.read_held_out(path, use_output=True)
    assert info.value.line == 1
    folder = write_campaign(str(tmp_path / "c"), sentences=60, controls=0, **KEEP)
    runner = app.test_cli_runner()
    result = runner.invoke(args=["campaign", "controls", "--dry-run", "--better", "output", folder, path])
    assert result.exit_code == 1 and f"{path}:1: the better side is the output" in result.output
    with_output = _held_out(tmp_path / "with-output.tsv", 3, output=True)
    result = runner.invoke(args=["campaign", "controls", "--dry-run", "--better", "output", folder, with_output])
    assert result.exit_code == 0 and result.output.count("  better: Ibaiaren ") == 3


def test_the_pool_size_is_the_importers_warning_rule():
    # The docs' figures: 14 per volunteer, 109 for 500 volunteers, 210 for 1,000.
    assert control_rules.pool_size(14, 500) == 109 and control_rules.pool_size(14, 1000) == 210
    for per_volunteer in (14, 15, 20, 40):
        for volunteers in (0, 500, 1000, 3000):
            size = control_rules.pool_size(per_volunteer, volunteers)
            assert control_rules.pool_warning(size, per_volunteer, volunteers) is None
            assert control_rules.pool_warning(size - 1, per_volunteer, volunteers) is not None


def test_the_advice_follows_the_campaigns_settings(tmp_path):
    def advice(**settings):
        folder = write_campaign(str(tmp_path / str(len(os.listdir(tmp_path)))), sentences=60, **settings)
        _data, _protocol, checked, _file, sources = importer.read_sources(folder)
        return control_pool.pool_advice(checked, len(sources))

    needed, text = advice(controls_per_volunteer=14, expected_volunteers=500)
    assert needed == 109 and "at least 109 controls (14 per volunteer, 500 expected volunteers" in text
    needed, text = advice(controls_per_volunteer=14, expected_volunteers=1000)
    assert needed == 210
    needed, text = advice(control_source="imported")
    assert needed == 109 and "Set controls_per_volunteer = 14" in text
    needed, text = advice()
    assert needed == 0 and "any size will do" in text


# --- flask campaign controls ----------------------------------------------------------


def test_the_dry_run_previews_and_writes_nothing(app, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), sentences=60, controls=0, expected_volunteers=500, **KEEP)
    os.remove(os.path.join(folder, "controls.tsv"))
    held = _held_out(tmp_path / "held.tsv", 120)
    result = app.test_cli_runner().invoke(args=["campaign", "controls", "--dry-run", "--show", "2", folder, held])
    assert result.exit_code == 0, result.output
    assert f"{held}: 120 sentences: 120 controls would be made." in result.output
    assert "This campaign needs at least 109 controls" in result.output
    assert result.output.count("  source: Held-out sentence") == 2 and "  worse:  " in result.output
    assert "Dry run: nothing written" in result.output
    assert not os.path.exists(os.path.join(folder, "controls.tsv"))


def test_the_made_pool_imports_and_clears_the_warning(app, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), sentences=60, controls=20, expected_volunteers=500, **KEEP)
    runner = app.test_cli_runner()
    assert "the pool of 20 controls is small" in runner.invoke(args=["campaign", "import", "--dry-run", folder]).output
    held = _held_out(tmp_path / "held.tsv", 110)
    refused = runner.invoke(args=["campaign", "controls", folder, held])
    assert refused.exit_code == 1 and "controls.tsv exists; nothing written" in refused.output
    made = runner.invoke(args=["campaign", "controls", "--replace", "--seed", "7", folder, held])
    assert made.exit_code == 0 and f"Wrote 110 controls to {os.path.join(folder, 'controls.tsv')}." in made.output
    result = runner.invoke(args=["campaign", "import", folder])
    assert result.exit_code == 0 and "110 controls" in result.output and "Warning" not in result.output
    better_sides = set(db.session.scalars(select(Control.better)))
    assert len(better_sides) == 110 and all(text.startswith("Ibaiari buruzko") for text in better_sides)


def test_fewer_than_needed_are_written_with_a_warning(app, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), sentences=60, controls=0, expected_volunteers=500, **KEEP)
    out = str(tmp_path / "pool.tsv")
    result = app.test_cli_runner().invoke(args=["campaign", "controls", "-o", out, folder,
                                                _held_out(tmp_path / "held.tsv", 20)])
    assert result.exit_code == 0
    assert "Warning: 20 controls are fewer than the 109 needed: add held-out sentences." in result.output
    assert len(open(out, encoding="utf-8").read().splitlines()) == 21


def test_a_held_out_campaign_sentence_is_refused_with_its_line(app, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), sentences=60, controls=0, **KEEP)
    held = _held_out(tmp_path / "held.tsv", 10)
    with open(held, "a", encoding="utf-8") as handle:
        handle.write("Source  sentence number 7.\tZazpigarren esaldia euskaraz dago hemen.\n")
    result = app.test_cli_runner().invoke(args=["campaign", "controls", "--replace", folder, held])
    assert result.exit_code == 1
    assert (f"{held}:12: the source is line 7 of {os.path.join(folder, 'source.txt')}, a sentence of the "
            "campaign; held-out sentences must not be in the campaign") in result.output
    assert open(os.path.join(folder, "controls.tsv"), encoding="utf-8").read() == "source\tbetter\tworse\n"


def test_a_generated_campaign_is_told_its_pool_is_a_fallback_and_da_is_refused(app, tmp_path):
    runner = app.test_cli_runner()
    held = _held_out(tmp_path / "held.tsv", 10)
    generated = write_campaign(str(tmp_path / "g"), sentences=30)
    os.remove(os.path.join(generated, "controls.tsv"))
    result = runner.invoke(args=["campaign", "controls", generated, held])
    assert result.exit_code == 0 and "any size will do" in result.output
    da = write_campaign(str(tmp_path / "da"), sentences=30, protocol="da")
    result = runner.invoke(args=["campaign", "controls", "--dry-run", da, held])
    assert result.exit_code == 1 and "a da campaign makes its own quality control" in result.output
