"""Campaign import: every error names the file and line, and writes nothing."""
import os

import pytest
from sqlalchemy import func, select

from app.cli import import_campaign
from app.extensions import db
from app.models import Campaign, Control, Output, Sentence, Slot
from app.services.importer import CampaignFormatError, read_campaign
from helpers import DEMO, write_campaign


def _append(path, data, mode="a"):
    with open(path, mode + ("b" if isinstance(data, bytes) else "")) as f:
        f.write(data)


def _error(folder):
    with pytest.raises(CampaignFormatError) as info:
        read_campaign(folder)
    return info.value


@pytest.fixture
def folder(tmp_path):
    return write_campaign(str(tmp_path / "c"), sentences=6, systems=("A", "B", "C"), controls=8)


def test_valid_folder_imports_everything(app, folder):
    spec, campaign = import_campaign(folder)
    assert campaign.slug == "test" and [s.name for s in campaign.systems] == ["A", "B", "C"]
    assert db.session.scalar(select(func.count(Sentence.id))) == 6
    assert db.session.scalar(select(func.count(Output.id))) == 18
    assert db.session.scalar(select(func.count(Slot.id))) == 18  # 3 pairs x 6
    assert db.session.scalar(select(func.count(Control.id))) == 8
    assert campaign.target_judgments == 6 * 3 * 5


def test_demo_campaign_is_valid():
    spec = read_campaign(DEMO)
    assert len(spec.sources) == 40 and len(spec.systems) == 4 and len(spec.controls) == 20
    assert spec.references and spec.instructions


def test_line_counts_that_differ(folder):
    _append(os.path.join(folder, "systems", "B.txt"), "One line too many.\n")
    error = _error(folder)
    assert error.path == os.path.join("systems", "B.txt") and error.line == 7
    assert "7 lines" in error.message and "6" in error.message


def test_too_few_lines(folder):
    path = os.path.join(folder, "systems", "C.txt")
    lines = open(path).read().splitlines()[:4]
    _append(path, "\n".join(lines) + "\n", "w")
    assert _error(folder).line == 5


def test_empty_line(folder):
    path = os.path.join(folder, "source.txt")
    lines = open(path).read().splitlines()
    lines[2] = "   "
    _append(path, "\n".join(lines) + "\n", "w")
    error = _error(folder)
    assert (error.path, error.line, error.message) == ("source.txt", 3, "empty line")


def test_invalid_utf8(folder):
    path = os.path.join(folder, "systems", "A.txt")
    data = open(path, "rb").read().split(b"\n")
    data[4] = b"Caf\xe9 latin-1"
    _append(path, b"\n".join(data), "w")
    error = _error(folder)
    assert error.line == 5 and "UTF-8" in error.message


def test_duplicate_systems(folder):
    manifest = os.path.join(folder, "campaign.toml")
    _append(manifest, 'a = "systems/C.txt"\n')
    assert "same file" in _error(folder).message
    text = open(manifest).read().replace('a = "systems/C.txt"\n', 'a = "systems/A2.txt"\n')
    _append(manifest, text, "w")
    assert "duplicate system" in _error(folder).message
    _append(manifest, text.replace('a = "systems/A2.txt"\n', 'A = "systems/A.txt"\n'), "w")
    error = _error(folder)  # TOML itself refuses a repeated key, with its line
    assert error.path == "campaign.toml" and error.line is not None


@pytest.mark.parametrize("name", ["equal", "Equal", "LEFT", "right"])
def test_system_named_like_an_answer(tmp_path, name):
    # the export's choice column says "equal" for a tie: a system of that name
    # would win every tie in the analysis
    error = _error(write_campaign(str(tmp_path / "c"), sentences=6, systems=("A", name), controls=8))
    assert error.path == "campaign.toml"
    assert error.message == f"system name {name!r} is an answer (equal, left, right); rename it"


def test_fewer_than_two_systems(tmp_path):
    folder = write_campaign(str(tmp_path / "one"), systems=("A",))
    assert "at least two systems" in _error(folder).message


def test_control_with_identical_translations(folder):
    _append(os.path.join(folder, "controls.tsv"), "A source.\tSame text.\tSame text.\n")
    error = _error(folder)
    assert (error.path, error.line) == ("controls.tsv", 10) and "same" in error.message


def test_control_with_wrong_field_count_or_header(folder):
    path = os.path.join(folder, "controls.tsv")
    _append(path, "Only\ttwo\n")
    assert _error(folder).line == 10
    lines = open(path).read().splitlines()
    _append(path, "\n".join(["src\tgood\tbad"] + lines[1:-1]) + "\n", "w")
    assert _error(folder).line == 1


def test_too_few_controls(tmp_path):
    folder = write_campaign(str(tmp_path / "few"), sentences=40, controls=5, control_source="imported")
    error = _error(folder)
    assert error.path == "controls.tsv" and "too few controls" in error.message
    # Generated controls (the default) take the pool as their fallback only: any size will do.
    assert len(read_campaign(write_campaign(str(tmp_path / "gen"), sentences=40, controls=5)).controls) == 5


def test_bad_settings_and_missing_files(folder):
    manifest = os.path.join(folder, "campaign.toml")
    _append(manifest, "[settings]\njudgments_per_pair = 0\n")
    assert "judgments_per_pair" in _error(folder).message
    os.remove(os.path.join(folder, "systems", "A.txt"))
    text = open(manifest).read().replace("judgments_per_pair = 0", "failure_cutoff = \"2\"")
    _append(manifest, text, "w")
    assert "failure_cutoff" in _error(folder).message


def test_nothing_is_written_unless_everything_is_valid(app, folder):
    _append(os.path.join(folder, "controls.tsv"), "x\ty\ty\n")
    with pytest.raises(CampaignFormatError):
        import_campaign(folder)
    assert db.session.scalar(select(func.count(Campaign.id))) == 0
    assert db.session.scalar(select(func.count(Sentence.id))) == 0


def test_cli_import_dry_run_and_errors(app, folder):
    runner = app.test_cli_runner()
    result = runner.invoke(args=["campaign", "import", "--dry-run", folder])
    assert result.exit_code == 0 and "Valid: test: 6 sentences, 3 systems (3 pairs), controls generated for each volunteer (8 controls as their fallback)." in result.output
    assert db.session.scalar(select(func.count(Campaign.id))) == 0
    result = runner.invoke(args=["campaign", "import", folder])
    assert result.exit_code == 0 and "Imported" in result.output
    result = runner.invoke(args=["campaign", "import", folder])
    assert result.exit_code == 1 and "already exists" in result.output
    _append(os.path.join(folder, "source.txt"), "\n\n")
    result = runner.invoke(args=["campaign", "import", "--dry-run", folder])
    assert result.exit_code == 1 and "source.txt:7: empty line" in result.output


def test_cli_changes_live_settings_only_and_checks_them(app, folder):
    runner = app.test_cli_runner()
    assert runner.invoke(args=["campaign", "import", folder]).exit_code == 0
    shown = runner.invoke(args=["campaign", "settings", "test"])
    assert shown.exit_code == 0 and "hold_min_tests = 20 (may change while the campaign runs)" in shown.output
    changed = runner.invoke(args=["campaign", "settings", "test", "hold_min_tests=30", "fast_seconds_per_word=0.05"])
    assert changed.exit_code == 0 and "hold_min_tests = 30" in changed.output
    for refused, why in [(["judgments_per_pair=2"], "cannot change while the campaign runs"),
                         (["hold_min_tests=-1"], "must be an integer >= 0"),
                         (["hold_alpha=abc"], "a value must be a number"),
                         (["hold_fast_run=2", "nonsense=1"], "unknown setting(s): nonsense")]:
        result = runner.invoke(args=["campaign", "settings", "test", *refused])
        assert result.exit_code == 1 and why in result.output, refused
    campaign = db.session.scalar(select(Campaign))
    db.session.refresh(campaign)
    # The refused changes changed nothing, not even their valid parts.
    assert (campaign.hold_min_tests, campaign.fast_seconds_per_word, campaign.hold_fast_run) == (30, 0.05, 5)
    assert campaign.judgments_per_pair == 5
