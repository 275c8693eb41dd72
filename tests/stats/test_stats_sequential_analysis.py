"""scripts/analyse.py --decisions (issue 32): the final analysis of a
campaign that stopped adaptively keeps its sequential decisions (at 1 %) and
gives the other pairs one fixed look at the remaining 4 %, Holm over them."""

import csv
import json

import pytest

from app.stats.cli import main
from app.stats.pairwise.decisions_reader import read_decisions
from app.stats.pairwise.loader import InputError, load
from app.stats.winners import sign_test

DECISION_HEADER = ["campaign", "system_a", "system_b", "wins_a", "wins_b", "judgments",
                   "decided_better", "decided_at", "level", "assignment", "goal"]


def judgments(bozka_csv):
    """One judgment per (pair, sentence): A-B 25 to 20 sentences (the sign
    test sees nothing), A-C 70 to 30 (clear), B-C 115 to 85 (sign p 0.04004:
    significant at 5 %, not at the 4 % left for the final look)."""
    rows = []
    for a, b, wins_a, wins_b in (("A", "B", 25, 20), ("A", "C", 70, 30), ("B", "C", 115, 85)):
        for n in range(wins_a + wins_b):
            rows.append((n + 1, a, b, a if n < wins_a else b, f"judge{n % 7}"))
    return bozka_csv(rows)


def decisions_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=DECISION_HEADER)
        writer.writeheader()
        for a, b, wins_a, wins_b, better in rows:
            writer.writerow({"campaign": "demo", "system_a": a, "system_b": b, "wins_a": wins_a,
                             "wins_b": wins_b, "judgments": wins_a + wins_b + 3,
                             "decided_better": better or "",
                             "decided_at": "2025-05-02T10:00:00Z" if better else "",
                             "level": 0.01, "assignment": "sequential", "goal": "ordering"})
    return str(path)


SITE = [("A", "B", 40, 10, "A"), ("A", "C", 60, 30, None), ("B", "C", 110, 85, None)]


def test_sequential_decisions_stay_and_the_rest_get_one_look_at_four_percent(bozka_csv, tmp_path, capsys):
    path = judgments(bozka_csv)
    decisions = decisions_csv(tmp_path / "decisions.csv", SITE)
    out = tmp_path / "result.json"
    assert main([path, "--decisions", decisions, "--bootstrap", "0", "--json", str(out),
                 "--csv", str(tmp_path / "tables")]) == 0
    text = capsys.readouterr().out
    result = json.loads(out.read_text(encoding="utf-8"))
    pairs = {tuple(p["systems"]): p for p in result["pairs"]}
    # A-B: decided while the campaign ran; its final counts (25 to 20) would not decide it
    assert sign_test(25, 20) > 0.5
    ab = pairs["A", "B"]
    assert (ab["stage"], ab["significant"], ab["better"], ab["decided_by"]) == ("sequential", True, "A",
                                                                                "sequential_p")
    assert ab["units"]["margins"]["significant"] is False  # the fixed-sample units see nothing
    assert ab["sequential"] == {"wins": {"A": 40, "B": 10}, "judgments": 53, "better": "A",
                                "decided_at": "2025-05-02T10:00:00Z"}
    # A-C and B-C: one exact sign test of the sentences won in the file, Holm over these two at 4 %
    ac, bc = pairs["A", "C"], pairs["B", "C"]
    assert (ac["stage"], ac["better"], ac["decided_by"]) == ("final", "A", "final_p_holm")
    assert ac["final_p_holm"] == pytest.approx(2 * sign_test(70, 30))
    assert bc["final_p_holm"] == pytest.approx(sign_test(115, 85))
    assert 0.04 < bc["final_p_holm"] < 0.05
    assert (bc["stage"], bc["significant"], bc["better"]) == (None, False, None)
    seq = result["sequential"]
    assert (seq["alpha"], seq["sequential_alpha"], seq["final_alpha"]) == pytest.approx((0.05, 0.01, 0.04))
    assert result["settings"]["decisions"] == decisions
    assert [p["stage"] for p in seq["pairs"]] == ["sequential", "final", None]
    # the ordering follows the two stages: A above B and C, B and C apart by nothing
    assert result["ordering"] == "A > B ≈ C"
    # the report says so
    assert "Sequential decisions (decisions.csv; campaign demo, assignment sequential, goal ordering)" in text
    assert "1 of 3 pairs were decided while the campaign ran" in text
    assert "tested once at the end with the exact sign test at the remaining 4%" in text
    assert "at most 5%" in text
    assert "yes: A (sequential)" in text and "yes: A (final look)" in text
    assert "Significance (decided in two stages" in text
    with open(tmp_path / "tables" / "sequential.csv", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert [(r["system_a"], r["system_b"], r["stage"]) for r in table] == [
        ("A", "B", "sequential"), ("A", "C", "final"), ("B", "C", "")]


def test_without_decisions_nothing_changes(bozka_csv, tmp_path, capsys):
    path = judgments(bozka_csv)
    out = tmp_path / "result.json"
    assert main([path, "--bootstrap", "0", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    result = json.loads(out.read_text(encoding="utf-8"))
    assert "sequential" not in result and "decisions" not in result["settings"]
    assert all("stage" not in p for p in result["pairs"])
    assert "Sequential decisions" not in text
    # at the full 5 % with Holm over all three, B-C is not decided either, A-B not at all
    assert {tuple(p["systems"]): p["significant"] for p in result["pairs"]} == {
        ("A", "B"): False, ("A", "C"): True, ("B", "C"): False}


def test_jsonl_decisions_and_a_decided_pair_without_judgments(bozka_csv, tmp_path, capsys):
    path = judgments(bozka_csv)
    lines = [{"campaign": "demo", "system_a": a, "system_b": b, "wins_a": wa, "wins_b": wb,
              "judgments": wa + wb, "decided_better": better, "decided_at": None, "level": 0.01,
              "assignment": "sequential", "goal": "top"} for a, b, wa, wb, better in SITE]
    target = tmp_path / "decisions.jsonl"
    target.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    data = load(path)
    read = read_decisions(str(target), data)
    assert read["level"] == 0.01 and read["goal"] == "top"
    assert [p["better"] for p in read["pairs"]] == ["A", None, None]
    assert read["pairs"][2]["line"] == 3


@pytest.mark.parametrize("rows, line, message", [
    ([("A", "B", 40, 10, "A"), ("A", "Z", 1, 1, None)], 3, "system 'Z' is not among the judgments' systems"),
    ([("A", "B", 40, 10, "C"), ("A", "C", 1, 1, None), ("B", "C", 1, 1, None)], 2,
     "decided_better 'C' is neither 'A' nor 'B'"),
    ([("A", "B", 40, 10, "A"), ("A", "C", 1, 1, None), ("B", "A", 1, 1, None)], 4,
     "the pair B - A again (first on line 2)"),
    ([("A", "B", 40, 10, "A"), ("A", "C", 1, 1, None)], None, "no row for the pair B - C"),
    ([("A", "B", 40, 10, "A")], None, "the judgments' system(s) C are in no row"),
])
def test_a_decisions_file_that_does_not_match_is_refused(bozka_csv, tmp_path, capsys, rows, line, message):
    path = judgments(bozka_csv)
    decisions = decisions_csv(tmp_path / "decisions.csv", rows)
    out = tmp_path / "result.json"
    assert main([path, "--decisions", decisions, "--bootstrap", "0", "--json", str(out)]) == 2
    err = capsys.readouterr().err
    where = decisions if line is None else f"{decisions}:{line}"
    assert f"analyse: {where}: {message}" in err
    assert not out.exists()
    with pytest.raises(InputError) as caught:
        read_decisions(decisions, load(path))
    assert caught.value.line == line and caught.value.path == decisions


def test_a_judgments_file_is_no_decisions_file_and_the_level_must_leave_room(bozka_csv, tmp_path, capsys):
    path = judgments(bozka_csv)
    assert main([path, "--decisions", path, "--bootstrap", "0", "--quiet"]) == 2
    assert f"{path}:1: missing column(s) wins_a, wins_b, decided_better, level" in capsys.readouterr().err
    decisions = decisions_csv(tmp_path / "decisions.csv", SITE)
    assert main([path, "--decisions", decisions, "--alpha", "0.01", "--quiet"]) == 2
    assert "level 0.01 is not below --alpha 0.01" in capsys.readouterr().err


def test_a_pair_decided_on_the_site_without_judgments_in_the_file_still_orders(bozka_csv, tmp_path, capsys):
    # B-C's judgments were all left out of this file (say, held volunteers'),
    # but the campaign decided it: the decision stands and orders B above C.
    rows = [(n + 1, "A", "B", "A", "j") for n in range(30)] + [(n + 1, "A", "C", "A", "j") for n in range(30)]
    path = bozka_csv(rows)
    decisions = decisions_csv(tmp_path / "decisions.csv",
                              [("A", "B", 30, 0, "A"), ("A", "C", 30, 0, None), ("B", "C", 50, 5, "B")])
    out = tmp_path / "result.json"
    assert main([path, "--decisions", decisions, "--bootstrap", "0", "--json", str(out)]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert {tuple(p["systems"]) for p in result["pairs"]} == {("A", "B"), ("A", "C")}
    bc = result["sequential"]["pairs"][-1]
    assert (bc["systems"], bc["stage"], bc["better"], bc["in_judgments"]) == (["B", "C"], "sequential", "B", False)
    assert result["ordering"] == "A > B > C"
    assert "B vs C" in capsys.readouterr().out
