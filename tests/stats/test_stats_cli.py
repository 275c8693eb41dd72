"""The command line: scripts/analyse.py and app.stats.cli."""

import csv
import json
import os
import subprocess
import sys

import pytest

from app.stats.cli import main
from stats_helpers import ROOT, bozka_row, paper_records, units_disagree_records

SCRIPT = os.path.join(ROOT, "scripts", "analyse.py")


def paper_csv(bozka_csv, extra=()):
    rows = [bozka_row(*record) for record in paper_records()]
    rows += [bozka_row("control-1", "<better>", "<worse>", "<better>", "judge1",
                       control=True)]
    rows += list(extra)
    return bozka_csv(rows)


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_script_runs_from_repo_root_and_writes_json(bozka_csv, tmp_path):
    path = paper_csv(bozka_csv)
    out = tmp_path / "result.json"
    # the paper's settings
    proc = run(path, "--json", str(out), "--bootstrap", "100", "--test", "z",
               "--no-correction", "--unit", "items")
    assert proc.returncode == 0, proc.stderr
    assert "Ordering: SMTs ≈ Google > SMTb > Hybrid ≈ Matxin ENEUS" in proc.stdout
    assert ("Significance (binomial z-test, no continuity correction of sentences "
            "won; no correction for multiple comparisons; alpha = 0.05)") in proc.stdout
    result = json.loads(out.read_text(encoding="utf-8"))
    # the documented schema
    assert result["systems"] == ["Google", "Hybrid", "Matxin ENEUS", "SMTb", "SMTs"]
    agreement = result["agreement"]
    for key in ("inter", "inter_ebaluatoia"):
        assert set(agreement[key]) >= {"kappa", "p_a", "p_e", "agreeing",
                                       "comparable", "ties", "labels"}
    assert "intra" in agreement and "krippendorff_alpha" in agreement
    assert set(agreement["by_pair"][0]) >= {"systems", "kappa", "p_a", "p_e"}
    pair = next(p for p in result["pairs"] if p["systems"] == ["Google", "SMTs"])
    assert set(pair) >= {"systems", "judgments", "wins", "ties", "sentences", "z",
                         "p_value", "sign_test_p", "significant"}
    assert pair["sentences"] == {"A++": 0, "A+": 221, "equal": 50,
                                 "B+": 229, "B++": 0}
    assert pair["significant"] is False
    assert pair["p_value"] == pytest.approx(0.70608, abs=1e-5)
    assert pair["p_items"] == pair["p_value"]
    assert pair["decided_by"] == "p_value"
    assert set(pair["units"]) == {"margins", "items", "judgments"}
    assert result["settings"]["test"] == "z"
    assert result["settings"]["correction"] == "none"
    assert result["settings"]["holm"] is False
    assert result["settings"]["unit"] == "items"
    assert result["ordering"] == "SMTs ≈ Google > SMTb > Hybrid ≈ Matxin ENEUS"
    bt = result["bradley_terry"][0]
    assert set(bt) >= {"system", "score", "ci_low", "ci_high", "rank_low", "rank_high"}
    assert result["input"]["counts"]["skipped_controls"] == 1


def test_default_settings_are_named(bozka_csv, tmp_path, capsys):
    path = paper_csv(bozka_csv)
    out = tmp_path / "result.json"
    assert main([path, "--json", str(out), "--bootstrap", "0"]) == 0
    text = capsys.readouterr().out
    assert ("Significance (exact sign-flip test of per-sentence margins; "
            "Holm-corrected over the 10 pairs within each unit; alpha = 0.05)") in text
    assert "The ordering uses margins." in text
    # one judgment per sentence and pair: margins are the sentences won
    assert "Ordering: SMTs ≈ Google > SMTb > Hybrid ≈ Matxin ENEUS" in text
    settings = json.loads(out.read_text(encoding="utf-8"))["settings"]
    assert (settings["test"], settings["correction"], settings["unit"],
            settings["holm"]) == ("sign", "holm", "margins", True)


def test_units_disagree_report_names_the_unit(bozka_csv, tmp_path, capsys):
    path = bozka_csv(units_disagree_records())
    out = tmp_path / "result.json"
    assert main([path, "--json", str(out), "--bootstrap", "0", "--unit", "items"]) == 0
    text = capsys.readouterr().out
    assert "The ordering uses items." in text and "Ordering: A ≈ B" in text
    header, _, row = text.split("The ordering uses items.\n")[1].splitlines()[:3]
    # one verdict, the ordering's unit's: none from the judgments unit
    assert header.split("  ")[-1] == "significant, items"
    assert "p judgments (descriptive)" in header and "significant, judgments" not in header
    assert row.split()[-1] == "no" and "yes" not in row
    (pair,) = json.loads(out.read_text(encoding="utf-8"))["pairs"]
    assert pair["p_items"] > 0.5 and pair["p_judgments"] < 0.01
    assert "significant" not in pair["units"]["judgments"]
    assert main([path, "--bootstrap", "0"]) == 0
    text = capsys.readouterr().out
    assert "The ordering uses margins." in text and "Ordering: A > B" in text
    with pytest.raises(SystemExit) as info:
        main([path, "--unit", "judgments"])
    assert info.value.code == 2


def test_correction_options(bozka_csv, tmp_path):
    path = paper_csv(bozka_csv)
    results = {}
    for flag in ("--holm", "--no-correction"):
        out = tmp_path / f"{flag}.json"
        assert main([path, flag, "--json", str(out), "--bootstrap", "0",
                     "--quiet"]) == 0
        results[flag] = json.loads(out.read_text(encoding="utf-8"))
    assert results["--holm"]["settings"]["correction"] == "holm"
    assert results["--no-correction"]["settings"]["correction"] == "none"
    assert "sign_test_p_holm" in results["--holm"]["pairs"][0]
    assert "sign_test_p_holm" not in results["--no-correction"]["pairs"][0]
    with pytest.raises(SystemExit) as info:
        main([path, "--holm", "--no-correction"])
    assert info.value.code == 2


def test_csv_and_plots(bozka_csv, tmp_path):
    path = paper_csv(bozka_csv)
    code = main([path, "--csv", str(tmp_path / "tables"), "--plots",
                 str(tmp_path / "plots"), "--bootstrap", "20", "--quiet", "--holm"])
    assert code == 0
    tables = sorted(os.listdir(tmp_path / "tables"))
    assert tables == ["agreement.csv", "agreement_by_pair.csv", "bradley_terry.csv",
                      "ordering.csv", "pairs.csv", "tie_matrix.csv",
                      "win_matrix.csv", "win_rates.csv"]
    with open(tmp_path / "tables" / "pairs.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 10 and "p_value_holm" in rows[0]
    assert {"p_items", "p_judgments", "judgment_sign_test_p_holm"} <= set(rows[0])
    plots = sorted(os.listdir(tmp_path / "plots"))
    for name in ("sentence_winners", "bradley_terry", "win_matrix"):
        assert f"{name}.png" in plots and f"{name}.svg" in plots
    assert (tmp_path / "plots" / "sentence_winners.png").stat().st_size > 1000


def test_include_controls_flag(bozka_csv, capsys):
    path = paper_csv(bozka_csv)
    assert main([path, "--include-controls", "--bootstrap", "0"]) == 0
    assert "<better>" in capsys.readouterr().out


@pytest.mark.parametrize("content,expected", [
    ("", ":1: empty file"),
    ("a,b,c\n1,2,3\n", ":1: unrecognised format"),
])
def test_bad_input_exit_status_2(tmp_path, content, expected):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    proc = run(str(path))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"analyse: {path}:") and expected in lines[0]
    assert proc.stdout == ""


def test_bad_choice_exit_status_2(bozka_csv, capsys):
    path = bozka_csv([("1", "A", "B", "A", "v1"), ("1", "A", "B", "Z", "v2")])
    assert main([path]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"analyse: {path}:3: choice 'Z' is neither 'A', 'B' nor 'equal'"


def test_judges_filter(bozka_csv, capsys):
    path = bozka_csv([("1", "A", "B", "A", "v1"), ("1", "A", "B", "B", "v2"),
                      ("2", "A", "B", "A", "v1")])
    assert main([path, "--judges", "v1", "--bootstrap", "0"]) == 0
    out = capsys.readouterr().out
    assert "2 judgments" in out and "1 other_judges" in out
    assert main([path, "--judges", "nobody"]) == 2
    assert "none of the judges" in capsys.readouterr().err
    assert main([path, "--judges", "v1,nobody", "--bootstrap", "0", "--quiet"]) == 0
    assert "judges not found: nobody" in capsys.readouterr().err


def test_bad_arguments_exit_2(bozka_csv):
    path = bozka_csv([("1", "A", "B", "A", "v1")])
    for args in (["--alpha", "2"], ["--format", "xml"], ["--bootstrap", "-1"],
                 ["--unit", "sentences"], ["--test", "t"]):
        with pytest.raises(SystemExit) as info:
            main([path, *args])
        assert info.value.code == 2


def test_unwritable_output(bozka_csv, tmp_path, capsys):
    path = bozka_csv([("1", "A", "B", "A", "v1")])
    target = tmp_path / "missing-dir" / "out.json"
    assert main([path, "--json", str(target), "--quiet", "--bootstrap", "0"]) == 1
    assert capsys.readouterr().err.startswith(f"analyse: cannot write {target}")


def test_package_is_flask_and_matplotlib_free():
    code = ("import sys, app.stats, app.stats.cli, app.stats.pairwise.report, app.stats.output; "
            "bad = [m for m in ('flask', 'matplotlib', 'sqlalchemy') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_one_judge_all_ties_reports_not_available(bozka_csv, tmp_path, capsys):
    path = bozka_csv([("1", "A", "B", "equal", "v1"), ("2", "A", "B", "equal", "v1"),
                      ("3", "B", "C", "equal", "v1")])
    out = tmp_path / "r.json"
    assert main([path, "--json", str(out), "--csv", str(tmp_path / "t"),
                 "--plots", str(tmp_path / "p"), "--bootstrap", "10"]) == 0
    text = capsys.readouterr().out
    assert "inter, WMT/Appraise (default)    n/a" in text
    assert "Ordering: " in text
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["agreement"]["inter"]["kappa"] is None
    assert result["agreement"]["intra"] is None
    assert result["agreement"]["krippendorff_alpha"] is None
    assert result["unseen_pairs"] == [["A", "C"]]
    assert all(not p["significant"] for p in result["pairs"])
    assert all(p["sentences"]["equal"] == p["sentence_count"] for p in result["pairs"])
