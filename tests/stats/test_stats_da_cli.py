"""The command line on DA input: dispatch, options and outputs."""

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from app.stats.cli import main, protocol_for
from da_helpers import da_row, write_da_csv
from stats_helpers import ROOT

SCRIPT = os.path.join(ROOT, "scripts", "analyse.py")


def wants_da(argv):
    """True when the command line hands these arguments to DA's."""
    protocol = protocol_for(argv)
    return protocol is not None and protocol.NAME == "da"


def campaign(tmp_path, seed=1):
    """Three systems, four volunteers with quality-control pairs, one of
    them clicking at random."""
    rng = np.random.default_rng(seed)
    rows, n = [], 0
    for volunteer in ("v-1", "v-2", "v-3", "v-rand"):
        for s in range(30):
            for system, q in (("A", 80), ("B", 65), ("C", 40)):
                def score(shift=0):
                    if volunteer == "v-rand":
                        return int(rng.integers(0, 101))
                    return int(np.clip(q + shift + rng.normal(0, 10), 0, 100))
                n += 1
                rows.append(da_row(n, s, system, score(), volunteer))
                if s < 8 and system != "C":
                    kind = "bad_reference" if system == "A" else "repeat"
                    n += 1
                    rows.append(da_row(n, s, system, score(-35 if system == "A" else 0),
                                       volunteer, kind, n - 1))
    return write_da_csv(tmp_path / "da-judgments.csv", rows)


def test_script_detects_bozka_da_export(tmp_path):
    path = campaign(tmp_path)
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, SCRIPT, path, "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "(bozka-da format)" in proc.stdout
    assert "Clusters: {A}  >  {B}  >  {C}" in proc.stdout
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["protocol"] == "da"
    assert {"input", "settings", "systems", "wilcoxon", "judges", "clusters",
            "notes"} <= set(result)
    assert [s["system"] for s in result["systems"]] == ["A", "B", "C"]
    assert result["wilcoxon"]["A"]["B"] < 0.001
    kept = {j["judge"]: j["kept"] for j in result["judges"]}
    assert kept == {"v-1": True, "v-2": True, "v-3": True, "v-rand": False}
    assert "1 of 4 tested judge(s) left out" in proc.stdout


def test_options_csv_plots_alpha_keep(tmp_path, capsys):
    path = campaign(tmp_path)
    out = tmp_path / "r.json"
    assert main([path, "--csv", str(tmp_path / "t"), "--plots", str(tmp_path / "p"),
                 "--json", str(out), "--quiet", "--alpha", "0.01",
                 "--keep-unreliable"]) == 0
    assert capsys.readouterr().out == ""
    assert sorted(os.listdir(tmp_path / "t")) == [
        "da_judges.csv", "da_segments.csv", "da_systems.csv", "da_wilcoxon.csv",
        "da_wilcoxon_holm.csv"]
    with open(tmp_path / "t" / "da_systems.csv", newline="", encoding="utf-8") as fh:
        systems = list(csv.DictReader(fh))
    assert [s["system"] for s in systems] == ["A", "B", "C"]
    assert [s["cluster"] for s in systems] == ["1", "2", "3"]
    for name in ("da_z_scores", "da_significance"):
        assert (tmp_path / "p" / f"{name}.png").stat().st_size > 1000
        assert (tmp_path / "p" / f"{name}.svg").exists()
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["settings"]["alpha"] == 0.01
    assert result["settings"]["keep_unreliable"] is True
    assert all(j["kept"] for j in result["judges"])


def test_format_option_and_errors(tmp_path, capsys):
    path = campaign(tmp_path)
    assert main([path, "--format", "wmt-da"]) == 2
    assert "missing column(s)" in capsys.readouterr().err
    bad = write_da_csv(tmp_path / "bad.csv", [da_row(1, 1, "A", 50, "v"),
                                              da_row(2, 1, "A", 500, "v")])
    assert main([bad]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"analyse: {bad}:3: score '500' is outside 0-100"
    with pytest.raises(SystemExit) as info:      # a pairwise-only option
        main([path, "--test", "z"])
    assert info.value.code == 2
    assert "unrecognized arguments: --test z" in capsys.readouterr().err
    target = tmp_path / "missing-dir" / "r.json"
    assert main([path, "--json", str(target), "--quiet"]) == 1
    assert capsys.readouterr().err.startswith(f"analyse: cannot write {target}")


def test_wants_da(tmp_path, bozka_csv, capsys):
    da = campaign(tmp_path)
    pairwise = bozka_csv([("1", "A", "B", "A", "v1")])
    assert wants_da([da]) and wants_da(["--judges", "x", "--bootstrap", "5", da])
    assert wants_da([pairwise, "--format=wmt-da"])
    assert not wants_da([pairwise]) and not wants_da([da, "--format", "bozka"])
    assert not wants_da([pairwise, "--json", da])     # a value, not the input
    assert not wants_da(["--help"]) and not wants_da([])
    assert capsys.readouterr() == ("", "")
    with pytest.raises(SystemExit):
        main([da, "--help"])
    assert "--keep-unreliable" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--help"])
    assert capsys.readouterr().out.count("usage:") == 1


def test_da_modules_are_flask_and_matplotlib_free():
    code = ("import sys, app.stats.da.cli, app.stats.da.report, app.stats.da; "
            "bad = [m for m in ('flask', 'matplotlib') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pair_option(tmp_path, capsys):
    from da_helpers import wmt_da_line, write_wmt_da
    lines = []
    for pair in ("en\tde", "de\ten"):
        for s in range(6):
            for system, score in (("A", 80), ("B", 40)):
                lines.append(wmt_da_line("w1", system, s, score + s)
                             .replace("\ten\tde ad", f"\t{pair} ad"))
    path = write_wmt_da(tmp_path / "ad.csv", lines)
    assert main([path]) == 2
    assert "choose one with --pair" in capsys.readouterr().err
    assert wants_da(["--pair", "de-en", path])
    out = tmp_path / "r.json"
    assert main(["--pair", "de-en", path, "--quiet", "--json", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["settings"]["pair"] == "de-en"
    assert result["input"]["counts"]["skipped_other_pairs"] == 12


def test_names_cannot_drive_the_terminal(tmp_path, capsys):
    rows = [da_row(n, s, system, 50 + n % 7, "v\u202e-1") for n, (s, system) in
            enumerate(((s, system) for s in range(5) for system in ("A\x1b[31m", "B")), start=1)]
    assert main([write_da_csv(tmp_path / "da.csv", rows), "--quiet"]) == 0
    assert main([write_da_csv(tmp_path / "da.csv", rows)]) == 0
    out = capsys.readouterr().out
    assert "\u202e" not in out and "\x1b" not in out
    assert "\\u202e" in out and "\\x1b" in out
