"""DA judge quality control (app/stats/da/quality.py): WMT's paired t-test,
Graham et al.'s signed-rank test, the minimum-pairs rule and the table."""
import json
import math

import numpy as np
import pytest
from scipy.stats import ttest_rel, wilcoxon

from app.stats.da import report as da_report
from app.stats.da.analysis import analyse_da
from app.stats.da.loader import from_da_records, load_da
from app.stats.da.quality import DEFAULT_MIN_PAIRS, judge_quality, min_pairs_for, paired_test, smallest_passing


# --------------------------------------------------------------------------
# the tests


def test_t_test_by_hand():
    # differences -30, -25, -20: mean -25, sd 5, t = -25 / (5 / sqrt 3) = -5 sqrt 3;
    # with 2 degrees of freedom F(t) = 1/2 + t / (2 sqrt(t^2 + 2)) = 1/2 - sqrt(75/77)/2
    t, p = paired_test([10, 20, 30], [40, 45, 50], "t")
    assert t == pytest.approx(-5 * math.sqrt(3), abs=1e-12)
    assert p == pytest.approx(0.5 - math.sqrt(75 / 77) / 2, abs=1e-12)


@pytest.mark.parametrize("bad,original", [
    ([10, 20, 30, 5, 7], [50, 60, 70, 40, 30]),
    ([60, 20, 31, 50], [50, 60, 70, 40]),            # one bad reference scored higher
    ([80, 70, 65, 90, 40, 55], [70, 75, 60, 85, 45, 50]),   # no drop on average
])
def test_t_test_matches_scipy_ttest_rel(bad, original):
    expected = ttest_rel(bad, original, alternative="less")
    t, p = paired_test(bad, original, "t")
    assert (t, p) == (pytest.approx(expected.statistic, abs=1e-12), pytest.approx(expected.pvalue, abs=1e-12))


def test_signed_rank_exact_by_hand():
    # five distinct drops: V = 0, exact p = 1/32; the smallest one reversed: V = 1, p = 2/32
    assert paired_test([10, 20, 30, 5, 7], [50, 61, 72, 43, 31], "wilcoxon") == (0.0, pytest.approx(1 / 32))
    assert paired_test([52, 20, 30, 5, 7], [50, 61, 72, 43, 31], "wilcoxon") == (1.0, pytest.approx(2 / 32))
    expected = wilcoxon([2, -41, -42, -38, -24], alternative="less", method="exact")
    assert paired_test([52, 20, 30, 5, 7], [50, 61, 72, 43, 31], "wilcoxon")[1] == pytest.approx(expected.pvalue)


def test_signed_rank_with_ties_and_zeros_as_r():
    # differences -20 x4, +20, 0: the zero is dropped (n = 5), all tied at rank 3, V = 3;
    # R: z = (V - n(n+1)/4 + 0.5) / sqrt(n(n+1)(2n+1)/24 - (5^3 - 5)/48)
    v, p = paired_test([10, 20, 30, 45, 7, 30], [30, 40, 50, 25, 7, 50], "wilcoxon")
    z = (3 - 7.5 + 0.5) / math.sqrt(13.75 - 2.5)
    assert v == 3 and p == pytest.approx(0.5 * math.erfc(-z / math.sqrt(2)), abs=1e-12)


def test_what_cannot_be_tested():
    assert paired_test([10], [50], "t") == (None, None)
    assert paired_test([30, 40, 50], [50, 60, 70], "t") == (None, None)   # R: "essentially constant"
    assert paired_test([50, 60, 70], [50, 60, 70], "t") == (None, None)   # R: NaN
    assert paired_test([50, 60, 70], [50, 60, 70], "wilcoxon") == (None, None)
    v, p = paired_test([30, 40, 50, 60, 70], [50, 60, 70, 80, 90], "wilcoxon")   # constant drops rank fine
    assert v == 0 and p < 0.05
    with pytest.raises(ValueError):
        paired_test([1, 2], [3, 4], "sign")


def test_smallest_number_of_pairs_that_can_pass():
    assert smallest_passing("t") == 2
    assert smallest_passing("wilcoxon") == 5       # 1/32 <= 0.05 < 1/16
    assert paired_test([1, 2, 3, 4], [51, 53, 55, 57], "wilcoxon")[1] == pytest.approx(1 / 16)
    assert min_pairs_for("wilcoxon", 2) == 5 and min_pairs_for("t", 2) == 2
    assert min_pairs_for("t") == DEFAULT_MIN_PAIRS["t"]


# --------------------------------------------------------------------------
# judges


def judge_records(judge, drops, start=0):
    """A judge's system scores and one bad reference per drop (original 80)."""
    records = []
    for n, drop in enumerate(drops, start=start):
        records += [(judge, "A", f"s{n}", "system", 80), (judge, "A", f"s{n}", "bad_reference", 80 - drop),
                    (judge, "B", f"s{n}", "system", 40 + n % 7)]
    return records


def test_minimum_pairs_rule():
    drops = [30, 40, 25, 35, 50, 20, 45, 38]
    records = judge_records("eight", drops) + judge_records("seven", drops[:7]) + \
        judge_records("clicker", [-10, 5, -20, 0, 10, -5, 3, -8])
    data = from_da_records(records)
    by = {e["judge"]: e for e in judge_quality(data)}
    assert by["seven"]["status"] == "untested" and by["seven"]["p"] is None
    assert by["seven"]["bad_reference_pairs"] == 7
    assert by["eight"]["status"] == "reliable" and by["eight"]["statistic"] < 0
    assert by["clicker"]["status"] == "unreliable"
    assert {e["judge"]: e["status"] for e in judge_quality(data, min_pairs=3)}["seven"] == "reliable"

    result = analyse_da(data)
    kept = {e["judge"]: e["kept"] for e in result["judges"]}
    assert kept == {"eight": True, "seven": True, "clicker": False}
    assert "1 judge(s) untested (fewer than 8 bad-reference pairs) and kept" in result["notes"]
    q = result["quality_control"]
    assert (q["test"], q["min_pairs"], q["tested"], q["untested"], q["failed"], q["left_out"]) == ("t", 8, 2, 1, 1, 1)
    row = next(r for r in q["table"] if r["judge"] == "eight")
    expected = ttest_rel([80 - d for d in drops], [80] * 8, alternative="less")
    assert row["pairs"] == 8 and row["kept"] is True
    assert row["statistic"] == pytest.approx(expected.statistic) and row["p"] == pytest.approx(expected.pvalue)
    assert result["settings"]["judge_test"] == "t" and result["settings"]["judge_min_pairs"] == 8

    signed = analyse_da(data, judge_test="wilcoxon", judge_min_pairs=2)
    assert signed["quality_control"]["min_pairs"] == 5 and signed["quality_control"]["statistic"] == "V"
    assert {e["judge"]: e["status"] for e in signed["judges"]} == \
        {"eight": "reliable", "seven": "reliable", "clicker": "unreliable"}


def test_a_judge_whose_scores_never_move_fails():
    records = [("flat", s, f"s{n}", kind, 70) for n in range(8) for s in ("A", "B")
               for kind in ("system",)] + [("flat", "A", f"s{n}", "bad_reference", 70) for n in range(8)]
    result = analyse_da(from_da_records(records))
    judge = result["judges"][0]
    assert (judge["status"], judge["kept"], judge["p"], judge["statistic"]) == ("unreliable", False, None, None)
    assert result["systems"] == []


def test_quality_control_table_in_report_json_and_csv(tmp_path):
    records = judge_records("eight", [30, 40, 25, 35, 50, 20, 45, 38]) + judge_records("few", [30, 20])
    result = analyse_da(from_da_records(records))
    text = da_report.text_report(result)
    assert "one-sided paired t-test of bad-reference scores against their originals (WMT)" in text
    assert "2 judge(s): 1 tested, 0 failed, 1 untested (kept), 0 left out" in text
    assert "yes, untested" in text
    line = next(line for line in text.splitlines() if line.startswith("eight"))
    t = result["quality_control"]["table"][0]["statistic"]
    assert f"{t:.3f}" in line and line.rstrip().endswith("yes")
    json.dumps(result, allow_nan=False)
    da_report.write_csv(result, str(tmp_path))
    header = (tmp_path / "da_judges.csv").read_text().splitlines()[0].split(",")
    assert header[4:9] == ["bad_reference_pairs", "repeat_pairs", "statistic", "p", "status"]


def test_wmt_file_pairs_bad_references_in_the_same_hit(tmp_path):
    """A raw WMT file (hi-bn layout with BAD_REF rows): a worker whose bad
    references drop is kept, one scoring at random is left out."""
    rng = np.random.default_rng(3)
    lines = ["HITId\tWorkerId\tInput.src\tInput.trg\tInput.item\thit\tsys_id\trid\ttype\tsid\tscore\ttime"]
    for worker, careful in (("W1", True), ("W2", False)):
        for n in range(10):
            original = int(rng.integers(60, 100)) if careful else int(rng.integers(0, 101))
            bad = original - int(rng.integers(20, 50)) if careful else int(rng.integers(0, 101))
            for kind, score in (("SYSTEM", original), ("BAD_REF", max(bad, 0))):
                lines.append(f"H{worker}\t{worker}\tcs\ten ad 1\t\"sys.{n % 2}\" {n} {kind}\tcs-en-{n}\t{score}\t0")
    path = tmp_path / "cs-en.ad-latest.tsv"
    path.write_text("\n".join(lines) + "\n")
    result = analyse_da(load_da(str(path)))
    assert {e["judge"]: (e["bad_reference_pairs"], e["kept"]) for e in result["judges"]} == \
        {"W1": (10, True), "W2": (10, False)}


def test_a_worker_is_tested_on_every_language_pair_of_the_file(tmp_path):
    """WMT's quality-control.R tests a worker on all their bad references,
    whatever the pair; their z scores stay within the pair analysed."""
    lines = ["HITId\tWorkerId\tInput.src\tInput.trg\tInput.item\thit\tsys_id\trid\ttype\tsid\tscore\ttime"]
    rng = np.random.default_rng(5)
    for src, drops in (("cs", [1, -1] * 5), ("de", [40] * 10)):   # no drop in cs-en alone, a clear one in de-en
        for n in range(10):
            original = int(rng.integers(50, 90))
            for kind, score in (("SYSTEM", original), ("BAD_REF", original - drops[n])):
                lines.append(f"H{src}\tW1\t{src}\ten ad 1\t\"{src}.{n % 2}\" {n} {kind}\t{src}-en-{n}\t{score}\t0")
    path = tmp_path / "xx-en.ad-latest.tsv"
    path.write_text("\n".join(lines) + "\n")
    from app.stats.da.cli import main

    out = tmp_path / "cs.json"
    assert main([str(path), "--pair", "cs-en", "--bootstrap", "0", "--quiet", "--json", str(out)]) == 0
    judge, = json.loads(out.read_text())["judges"]
    assert (judge["bad_reference_pairs"], judge["status"], judge["kept"]) == (20, "reliable", True)
    alone = analyse_da(load_da(str(path), pair="cs-en"), bootstrap=0)["judges"][0]
    assert (alone["bad_reference_pairs"], alone["status"]) == (10, "unreliable")
    kept_alone = analyse_da(load_da(str(path), pair="cs-en"), bootstrap=0, keep_unreliable=True)["judges"][0]
    assert judge["mean"] == pytest.approx(kept_alone["mean"])   # standardised within cs-en either way
