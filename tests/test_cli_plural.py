"""The command line's counts say "1 pair", not "1 pairs" (issue 31)."""
import pytest
from click.testing import CliRunner

from app.cli_plural import counted
from helpers import write_campaign


@pytest.mark.parametrize("n, singular, plural, said", [
    (1, "pair", None, "1 pair"), (2, "pair", None, "2 pairs"), (0, "control", None, "0 controls"),
    (1, "practice item", None, "1 practice item"), (3, "person", "people", "3 people"),
])
def test_counted(n, singular, plural, said):
    assert counted(n, singular, plural) == said


def test_the_import_summary_says_one_pair_and_one_sentence(app, tmp_path):
    folder = write_campaign(str(tmp_path / "c"), sentences=1, systems=("A", "B"), controls=1)
    result = CliRunner().invoke(app.cli, ["campaign", "import", "--dry-run", folder])
    assert result.exit_code == 0, result.output
    assert "Valid: test: 1 sentence, 2 systems (1 pair), controls generated for each volunteer (1 control as their fallback)." in result.output
