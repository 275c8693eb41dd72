"""Reading Bozka exports (CSV, JSON Lines) and WMT/Appraise CSV files."""

import json

import numpy as np
import pytest

from app.stats.pairwise.loader import filter_judges, load
from stats_helpers import BOZKA_HEADER, bozka_row, load_error as error_of, write_text as write

WMT_HEADER = ("system2rank,segmentId,system1Id,system2Number,system1Number,"
              "trglang,system1rank,srcIndex,judgeID,srclang,system2Id,documentId")


def wmt_line(rank1, rank2, src, judge, sys1="ref", sys2="mt"):
    return f"{rank2},{src},{sys1},-1,-1,-1,{rank1},{src},{judge},-1,{sys2},-1"


def test_bozka_csv_and_canonical_orientation(bozka_csv):
    path = bozka_csv([("1", "B", "A", "B", "v-1"), ("1", "A", "B", "equal", "v-2"),
                      ("2", "A", "C", "C", "v-1")])
    data = load(path)
    assert data.source_format == "bozka"
    assert data.systems == ["A", "B", "C"]
    assert data.first.tolist() == [0, 0, 0]
    assert data.second.tolist() == [1, 1, 2]
    # "B" chosen over "A": second system of the canonical pair is better
    assert data.outcome.tolist() == [-1, 0, -1]
    assert data.sentences == ["1", "2"] and data.judges == ["v-1", "v-2"]
    assert data.counts == {"rows": 3, "kept": 3}


def test_controls_and_discarded_left_out_by_default(bozka_csv):
    rows = [bozka_row("1", "A", "B", "A", "v1"),
            bozka_row("control-7", "<better>", "<worse>", "<better>", "v1",
                      control=True),
            bozka_row("2", "A", "B", "B", "v2", discarded=True)]
    path = bozka_csv(rows)
    data = load(path)
    assert len(data) == 1
    assert data.counts["skipped_controls"] == 1
    assert data.counts["skipped_discarded"] == 1
    assert len(load(path, include_discarded=True)) == 2
    both = load(path, include_controls=True, include_discarded=True)
    assert len(both) == 3
    assert "<better>" in both.systems


def test_unanswered_rows_are_skipped(bozka_csv):
    path = bozka_csv([("1", "A", "B", "", "v1"), ("1", "A", "B", "A", "v2")])
    data = load(path)
    assert len(data) == 1 and data.counts["skipped_unanswered"] == 1


def test_bozka_jsonl(tmp_path):
    rows = []
    for sentence, a, b, choice, judge, control in [
            ("1", "A", "B", "A", "v1", False), ("1", "B", "A", "equal", "v2", False),
            ("control-1", "<better>", "<worse>", "<worse>", "v1", True)]:
        row = bozka_row(sentence, a, b, choice, judge)
        row.update({"is_control": control, "discarded": False,
                    "control_passed": None, "seconds": 2.5, "age_group": None})
        rows.append(json.dumps(row))
    path = write(tmp_path, "\n".join(rows) + "\n\n", "in.jsonl")
    data = load(path)
    assert data.systems == ["A", "B"] and data.outcome.tolist() == [1, 0]
    assert load(path, fmt="bozka").outcome.tolist() == [1, 0]


def test_jsonl_errors_name_the_line(tmp_path):
    good = json.dumps(bozka_row("1", "A", "B", "A", "v1"))
    path = write(tmp_path, good + "\n{not json\n", "bad.jsonl")
    err = error_of(path)
    assert (err.line, str(err).startswith(f"{path}:2: invalid JSON")) == (2, True)
    extra = dict(bozka_row("1", "A", "B", "A", "v1"), colour="red")
    path = write(tmp_path, good + "\n" + json.dumps(extra) + "\n", "bad2.jsonl")
    assert "unknown key 'colour'" in str(error_of(path))
    flag = dict(bozka_row("1", "A", "B", "A", "v1"), is_control="maybe")
    path = write(tmp_path, json.dumps(flag) + "\n", "bad3.jsonl")
    assert str(error_of(path)) == f"{path}:1: is_control: expected true or false, got 'maybe'"


def test_wmt_format_keeps_stored_order_and_skips_unranked(tmp_path):
    text = "\n".join([WMT_HEADER, wmt_line(1, 2, "001_1", "t1"),
                      wmt_line(2, 1, "001_1", "t2", sys1="mt", sys2="ref"),
                      wmt_line(1, 1, "001_2", "t1"), wmt_line(-1, -1, "001_2", "t2")])
    data = load(write(tmp_path, text + "\n"))
    assert data.source_format == "wmt"
    assert data.systems == ["mt", "ref"]
    assert data.first.tolist() == [1, 0, 1]      # ref, mt, ref as stored
    assert data.outcome.tolist() == [1, -1, 0]
    assert data.counts["skipped_unranked"] == 1


def test_wmt_five_system_rows(tmp_path):
    cols = []
    for n in range(1, 4):
        cols += [f"system{n}Id", f"system{n}rank"]
    header = ",".join(cols + ["srcIndex", "judgeID"])
    row = "a,1,b,2,c,2,7,j1"
    data = load(write(tmp_path, header + "\n" + row + "\n"))
    assert len(data) == 3          # a-b, a-c, b-c
    assert data.outcome.tolist() == [1, 1, 0]


@pytest.mark.parametrize("text,line,message", [
    ("", 1, "empty file"),
    ("\n  \n", 1, "empty file"),
    ("hello,world\n1,2\n", 1, "unrecognised format"),
    (",".join(BOZKA_HEADER) + "\n", 1, "no judgments"),
    (",".join(BOZKA_HEADER + ["colour"]) + "\n", 1, "unknown column 'colour'"),
    ("choice,system_a,system_b\nA,A,B\n", 1, "missing column(s) sentence_id, volunteer"),
])
def test_bad_files(tmp_path, text, line, message):
    path = write(tmp_path, text)
    err = error_of(path)
    assert err.line == line
    assert message in str(err)
    assert str(err).startswith(f"{path}:{line}: ")
    assert "\n" not in str(err)


def test_single_system(bozka_csv):
    # a comparison of a system with itself: only one system in the pair
    path = bozka_csv([("1", "A", "B", "A", "v1"), ("2", "A", "A", "A", "v1")])
    err = error_of(path)
    assert err.line == 3 and "system_a and system_b are both 'A'" in str(err)


def test_nothing_left_after_skipping(tmp_path):
    text = "\n".join([WMT_HEADER, wmt_line(-1, 1, "1", "t1"), wmt_line(1, -1, "2", "t1")])
    err = error_of(write(tmp_path, text + "\n"))
    assert "no judgments to analyse (skipped unranked: 2)" in str(err)


def test_bad_choice_names_the_line(bozka_csv):
    path = bozka_csv([("1", "A", "B", "A", "v1"), ("2", "A", "B", "C", "v1")])
    err = error_of(path)
    assert err.line == 3
    assert "choice 'C' is neither 'A', 'B' nor 'equal'" in str(err)


def test_bad_boolean_and_field_count(bozka_csv, tmp_path):
    row = bozka_row("1", "A", "B", "A", "v1")
    row["discarded"] = "perhaps"
    err = error_of(bozka_csv([row]))
    assert (err.line, "discarded: expected true or false" in str(err)) == (2, True)
    text = ",".join(BOZKA_HEADER) + "\n" + "x,y\n"
    err = error_of(write(tmp_path, text))
    assert (err.line, "expected 20 fields, found 2" in str(err)) == (2, True)


def test_unparseable_rank_names_the_line(tmp_path):
    text = "\n".join([WMT_HEADER, wmt_line(1, 2, "1", "t1"), wmt_line("first", 2, "1", "t2")])
    err = error_of(write(tmp_path, text + "\n"))
    assert err.line == 3 and "unparseable rank 'first'" in str(err)


def test_forced_format_mismatch(bozka_csv):
    path = bozka_csv([("1", "A", "B", "A", "v1")])
    assert "missing column(s) srcIndex, judgeID" in str(error_of(path, fmt="wmt"))


def test_missing_file(tmp_path):
    err = error_of(str(tmp_path / "nope.csv"))
    assert "cannot open" in str(err)


def test_filter_judges_compacts_codes(bozka_csv):
    path = bozka_csv([("1", "A", "B", "A", "v1"), ("2", "B", "C", "C", "v2"),
                      ("3", "A", "C", "A", "v2")])
    data = filter_judges(load(path), ["v2"])
    assert data.systems == ["A", "B", "C"]
    data = filter_judges(load(path), ["v1"])
    assert data.systems == ["A", "B"] and data.judges == ["v1"]
    assert data.sentences == ["1"]
    assert np.array_equal(data.judge, [0])


def test_leading_blank_lines_and_bom(tmp_path):
    text = "\ufeff\n\n" + "\n".join([WMT_HEADER, wmt_line(1, 2, "1", "t1")]) + "\n"
    data = load(write(tmp_path, text))
    assert data.source_format == "wmt" and len(data) == 1


def test_not_utf8_line_and_missing_file(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes(b"choice,system_a,system_b\n\xe9\xe9\n")
    assert str(error_of(str(path))) == f"{path}:2: not UTF-8 text"
    missing = str(tmp_path / "nope.csv")
    assert str(error_of(missing)).startswith(f"{missing}: cannot open")
