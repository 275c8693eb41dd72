"""Reading DA scores: WMT's published layout and Bozka's da-judgments export."""

import json

import pytest

from app.stats.da.loader import KINDS, detect_da_format, load_da, sniff_da
from app.stats.reading import InputError
from da_helpers import WMT_DA_HEADER, da_row, wmt_da_line, write_da_csv, write_wmt_da
from stats_helpers import BOZKA_HEADER


def error_of(path, **kwargs):
    with pytest.raises(InputError) as info:
        load_da(path, **kwargs)
    return info.value


def kinds(data):
    return [KINDS[k] for k in data.kind]


# --------------------------------------------------------------------------
# WMT


def test_wmt_layout_types_and_quality_control_pairs(tmp_path):
    path = write_wmt_da(tmp_path / "ad.csv", [
        wmt_da_line("w1", "sysA", "10", 80),
        wmt_da_line("w1", "sysA", "10", 20, "BAD_REF"),
        wmt_da_line("w1", "sysA", "11", 70),
        wmt_da_line("w1", "sysA", "11", 75, "REPEAT"),
        wmt_da_line("w1", "sysA", "11", 99, "REF"),
        wmt_da_line("w2", "sysB", "10", 60),
        wmt_da_line("w2", "sysA", "10", 50, "BAD_REF"),     # w2 never scored sysA 10
    ])
    data = load_da(path)
    assert data.source_format == "wmt-da"
    assert data.systems == ["sysA", "sysB"] and data.judges == ["w1", "w2"]
    assert kinds(data) == ["system", "bad_reference", "system", "repeat",
                           "reference", "system", "bad_reference"]
    assert data.score.tolist() == [80, 20, 70, 75, 99, 60, 50]
    assert data.original.tolist() == [-1, 0, -1, 2, 2, -1, -1]


def test_wmt_pairs_prefer_the_same_hit(tmp_path):
    path = write_wmt_da(tmp_path / "ad.csv", [
        wmt_da_line("w1", "S", "1", 40, hit="H1"),
        wmt_da_line("w1", "S", "1", 90, hit="H2"),
        wmt_da_line("w1", "S", "1", 10, "BAD_REF", hit="H2"),
        wmt_da_line("w1", "S", "1", 35, "REPEAT", hit="H3"),   # no original in H3
    ])
    assert load_da(path).original.tolist() == [-1, -1, 1, 0]


def test_wmt_appraise_type_names_and_missing_scores(tmp_path):
    path = write_wmt_da(tmp_path / "ad.csv", [
        wmt_da_line("w1", "S", "1", 40, "TGT"), wmt_da_line("w1", "S", "1", 41, "chk"),
        wmt_da_line("w1", "S", "1", 5, "BAD"), wmt_da_line("w1", "S", "2", "NA"),
        wmt_da_line("w1", "S", "3", 62.5)])
    data = load_da(path, fmt="wmt-da")
    assert kinds(data) == ["system", "repeat", "bad_reference", "system"]
    assert data.score.tolist() == [40, 41, 5, 62.5]
    assert data.counts == {"rows": 5, "kept": 4, "skipped_unanswered": 1}


def test_wmt_header_with_spaces_and_quotes(tmp_path):
    path = tmp_path / "ad.txt"
    path.write_text('"HITId" "WorkerId" "Input.src" "Input.trg" "Input.item" "hit" '
                    '"sys_id" "rid" "type" "sid" "score" "time"\n'
                    'h w1 en de ad 1 "sys A" 7 SYSTEM s1 50 12\n', encoding="utf-8")
    data = load_da(str(path))
    assert data.systems == ["sys A"] and data.sentences == ["s1"]


@pytest.mark.parametrize("line,number,message", [
    (wmt_da_line("w1", "S", "1", 50, "ORD"), 3, "unknown type 'ORD'"),
    (wmt_da_line("w1", "S", "1", 101), 3, "score '101' is outside 0-100"),
    (wmt_da_line("w1", "S", "1", -0.7), 3, "already standardised"),
    (wmt_da_line("w1", "S", "1", "x"), 3, "score: expected a number"),
    ("H1\tw1\ten\tde\tad\t1\tS\t7\tSYSTEM\t1\t50", 3, "expected 12 fields, found 11"),
])
def test_wmt_errors_name_the_line(tmp_path, line, number, message):
    path = write_wmt_da(tmp_path / "ad.csv", [wmt_da_line("w1", "S", "0", 50), line])
    err = error_of(path)
    assert err.line == number and message in str(err)


def test_wmt_missing_column(tmp_path):
    path = tmp_path / "ad.csv"
    path.write_text("HITId WorkerId sys_id type sid\nh w S SYSTEM 1\n", encoding="utf-8")
    assert "missing column(s) score" in str(error_of(str(path), fmt="wmt-da"))
    assert "unrecognised format" in str(error_of(str(path)))


# --------------------------------------------------------------------------
# Bozka da-judgments export


def campaign_rows():
    return [da_row(1, "3", "A", 80, "v-1"), da_row(2, "3", "A", 15, "v-1",
                                                     "bad_reference", 1),
            da_row(3, "4", "B", 60, "v-1"), da_row(4, "4", "B", 66, "v-1", "repeat", 3),
            da_row(5, "4", "B", 100, "v-1", "reference", 3),
            da_row(6, "3", "B", 40, "v-2"),
            da_row(7, "5", "A", 55, "v-2", discarded=True),
            da_row(8, "5", "B", None, "v-2")]


def test_bozka_csv(tmp_path):
    data = load_da(write_da_csv(tmp_path / "da.csv", campaign_rows()))
    assert data.source_format == "bozka-da"
    assert data.systems == ["A", "B"] and data.judges == ["v-1", "v-2"]
    assert kinds(data) == ["system", "bad_reference", "system", "repeat",
                           "reference", "system"]
    assert data.original.tolist() == [-1, 0, -1, 2, 2, -1]
    assert data.counts == {"rows": 8, "kept": 6, "skipped_discarded": 1,
                           "skipped_unanswered": 1}
    assert len(load_da(str(tmp_path / "da.csv"), include_discarded=True)) == 7


def test_bozka_jsonl(tmp_path):
    lines = []
    for row in campaign_rows():
        row = dict(row, discarded=row["discarded"] == "true",
                   score=int(row["score"]) if row["score"] else None,
                   original_judgment_id=row["original_judgment_id"] or None,
                   judgment_id=int(row["judgment_id"]), seconds=4.5, age_group=None)
        lines.append(json.dumps(row))
    path = tmp_path / "da.jsonl"
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    data = load_da(str(path))
    assert data.original.tolist() == [-1, 0, -1, 2, 2, -1]
    assert load_da(str(path), fmt="bozka-da").score.tolist() == [80, 15, 60, 66, 100, 40]


def test_discarded_original_leaves_its_item_unpaired(tmp_path):
    rows = [da_row(1, "3", "A", 80, "v-1", discarded=True),
            da_row(2, "3", "A", 15, "v-1", "bad_reference", 1),
            da_row(3, "4", "A", 60, "v-1")]
    assert load_da(write_da_csv(tmp_path / "da.csv", rows)).original.tolist() == [-1, -1]


@pytest.mark.parametrize("row,message", [
    (da_row(9, "3", "A", 50, "v-1", "degraded"), "kind 'degraded' is not one of"),
    (da_row(9, "3", "A", 50.5, "v-1"), "score: expected an integer"),
    (da_row(9, "3", "A", 120, "v-1"), "score '120' is outside 0-100"),
    (da_row(1, "3", "A", 50, "v-1"), "duplicate judgment_id '1'"),
    (da_row(9, "3", "A", 50, "v-1", "repeat"), "a repeat item needs its original_judgment_id"),
    (da_row(9, "3", "A", 50, "v-1", original=1), "a system item has no original"),
    (da_row(9, "3", "A", 50, "v-1", "repeat", 77), "'77' matches no judgment"),
    (da_row(9, "3", "A", 50, "v-2", "repeat", 1), "another volunteer's judgment"),
    (da_row(9, "3", "A", 50, "v-1", "repeat", 2), "'2' is not a system item"),
    (da_row(9, "", "A", 50, "v-1"), "sentence_id must not be empty"),
    (dict(da_row(9, "3", "A", 50, "v-1"), discarded="maybe"),
     "discarded: expected true or false"),
])
def test_bozka_errors_name_the_line(tmp_path, row, message):
    rows = [da_row(1, "3", "A", 80, "v-1"), da_row(2, "3", "A", 10, "v-1", "repeat", 1),
            row]
    err = error_of(write_da_csv(tmp_path / "da.csv", rows))
    assert err.line == 4 and message in str(err), str(err)


def test_bozka_header_and_json_errors(tmp_path):
    path = tmp_path / "da.csv"
    path.write_text("judgment_id,sentence_id,system,kind,original_judgment_id,score,"
                    "volunteer,colour\n",
                    encoding="utf-8")
    assert "unknown column 'colour'" in str(error_of(str(path)))
    path.write_text("judgment_id,sentence_id,system,kind,score,volunteer\n1,2,A,system,5,v\n",
                    encoding="utf-8")
    assert "missing column(s) original_judgment_id" in str(error_of(str(path)))
    good = json.dumps(da_row(1, "3", "A", 80, "v-1"))
    path = tmp_path / "da.jsonl"
    path.write_text(good + "\n{oops\n", encoding="utf-8")
    err = error_of(str(path))
    assert err.line == 2 and "invalid JSON" in str(err)
    path.write_text(json.dumps(dict(da_row(1, "3", "A", 80, "v-1"), colour=1)) + "\n",
                    encoding="utf-8")
    assert "unknown key 'colour'" in str(error_of(str(path)))


def test_nothing_left_and_empty_file(tmp_path):
    path = write_da_csv(tmp_path / "da.csv", [da_row(1, "3", "A", 80, "v-1", discarded=True)])
    assert "no scores to analyse (left out 1 discarded)" in str(error_of(path))
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n", encoding="utf-8")
    assert str(error_of(str(empty))) == f"{empty}:1: empty file"


# --------------------------------------------------------------------------
# detection


def test_detection(tmp_path):
    assert detect_da_format(WMT_DA_HEADER) == "wmt-da"
    assert detect_da_format(",".join(da_row(1, 1, "A", 1, "v"))) == "bozka-da"
    assert detect_da_format(json.dumps(da_row(1, 1, "A", 1, "v"))) == "bozka-da"
    assert detect_da_format(",".join(BOZKA_HEADER)) is None       # pairwise export
    assert detect_da_format('{"choice": "A", "system_a": "A"}') is None
    assert detect_da_format("{not json") is None
    assert sniff_da(str(tmp_path / "missing.csv")) is None
    path = write_wmt_da(tmp_path / "ad.csv", [wmt_da_line("w", "S", "1", 5)])
    assert sniff_da(path) == "wmt-da"


def test_wmt_file_with_several_language_pairs(tmp_path):
    lines = [wmt_da_line("w1", "S", "1", 50), wmt_da_line("w1", "T", "1", 60),
             wmt_da_line("w2", "S", "9", 70).replace("\ten\tde ad", "\tde\ten ad")]
    path = write_wmt_da(tmp_path / "ad.csv", lines)
    err = error_of(path)
    assert err.line == 4 and "2 language pairs in one file (de-en, en-de): " \
        "choose one with --pair" in str(err)
    data = load_da(path, pair="en-de")
    assert data.systems == ["S", "T"] and data.counts["skipped_other_pairs"] == 1
    assert load_da(path, pair="de-en").judges == ["w2"]
    assert "no rows of language pair xh-zu (the file has de-en, en-de)" in \
        str(error_of(path, pair="xh-zu"))


def test_several_campaigns_are_refused_unless_one_is_chosen(tmp_path):
    # Sentence numbers of two campaigns would collide.
    rows = [da_row(1, 1, "A", 70, "v-1"), da_row(2, 1, "B", 60, "v-1"),
            {**da_row(3, 1, "A", 20, "v-2"), "campaign": "other"}, {**da_row(4, 1, "B", 90, "v-2"), "campaign": "other"}]
    path = write_da_csv(tmp_path / "da.csv", rows)
    error = error_of(path)
    assert error.line == 4 and "'demo', 'other'" in error.message and "--campaign" in error.message
    data = load_da(path, campaign="other")
    assert data.judges == ["v-2"] and data.counts["skipped_other_campaigns"] == 2
    assert "not in the file" in error_of(path, campaign="nope").message
