"""Input that cannot be read right is refused (issue 19), and names cannot
drive the terminal."""

import csv
import json
import unicodedata

import pytest

from app.stats.cli import main
from app.stats.pairwise.loader import InputError, from_records, load
from app.stats.output import printable
from stats_helpers import BOZKA_HEADER, bozka_row

WMT_HEADER = "system1Id,system1rank,system2Id,system2rank,srcIndex,judgeID"


def error_of(path, **kwargs):
    with pytest.raises(InputError) as info:
        load(str(path), **kwargs)
    return info.value


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def refused_and_nothing_written(tmp_path, capsys, args):
    """Run the command with every output asked for: exit 2, one line on
    stderr, no file or folder created. Returns that line."""
    outputs = [tmp_path / "out.json", tmp_path / "tables", tmp_path / "plots"]
    code = main([*args, "--json", str(outputs[0]), "--csv", str(outputs[1]),
                 "--plots", str(outputs[2]), "--bootstrap", "0"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert not any(path.exists() for path in outputs)
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("analyse: ")
    return lines[0]


# --------------------------------------------------------------------------
# a system named like an answer


@pytest.mark.parametrize("name", ["equal", "Equal", "EQUAL", "left", "Right"])
def test_system_named_like_an_answer_is_refused(bozka_csv, name):
    path = bozka_csv([("1", "A", "B", "A", "v1"), ("2", "A", name, "equal", "v1")])
    err = error_of(path)
    assert err.line == 3
    assert f"system {name!r} is named like an answer" in str(err)


def test_system_equal_refused_in_jsonl_and_records(tmp_path):
    rows = [bozka_row("1", "A", "B", "A", "v1", n=1),
            bozka_row("1", "equal", "B", "equal", "v2", n=2)]
    err = error_of(write_jsonl(tmp_path / "in.jsonl", rows))
    assert err.line == 2 and "'equal' is named like an answer" in str(err)
    with pytest.raises(InputError):
        from_records([("1", "A", "equal", "equal", "v1")])


def test_system_equal_refused_by_the_command(bozka_csv, tmp_path, capsys):
    # without the refusal every tie would be a win for "equal"
    path = bozka_csv([("1", "equal", "B", "equal", "v1"), ("2", "equal", "B", "B", "v2")])
    line = refused_and_nothing_written(tmp_path, capsys, [path])
    assert line.startswith(f"analyse: {path}:2: system 'equal' is named like an answer")


def test_wmt_system_named_equal_is_not_ambiguous(tmp_path):
    # ranks, not names, give the answer in a WMT file
    path = tmp_path / "wmt.csv"
    path.write_text(WMT_HEADER + "\nequal,1,mt,1,1,t1\nequal,1,mt,2,2,t1\n")
    assert load(str(path)).outcome.tolist() == [0, 1]


# --------------------------------------------------------------------------
# several campaigns in one file


def two_campaigns(bozka_csv):
    rows = []
    for n, (camp, sentence, choice, judge) in enumerate(
            [("en-eu", "1", "A", "v1"), ("en-eu", "1", "A", "v2"),
             ("en-ur", "1", "B", "v3"), ("en-eu", "2", "B", "v1"),
             ("en-ur", "2", "equal", "v3")], start=1):
        rows.append(dict(bozka_row(sentence, "A", "B", choice, judge, n=n), campaign=camp))
    return bozka_csv(rows)


def test_several_campaigns_refused_unless_one_is_chosen(bozka_csv):
    path = two_campaigns(bozka_csv)
    err = error_of(path)
    assert err.line == 4            # the first row of the second campaign
    assert "holds 2 campaigns ('en-eu', 'en-ur')" in str(err)
    assert "--campaign SLUG" in str(err)
    data = load(path, campaign="en-ur")
    assert len(data) == 2 and data.judges == ["v3"]
    assert data.outcome.tolist() == [-1, 0]
    assert data.counts["skipped_other_campaigns"] == 3
    assert len(load(path, campaign="en-eu")) == 3


def test_unknown_campaign_names_those_present(bozka_csv):
    err = error_of(two_campaigns(bozka_csv), campaign="en-fr")
    assert "campaign 'en-fr' is not in the file, which holds 'en-eu', 'en-ur'" in str(err)


def test_campaign_option_needs_a_campaign_column(tmp_path, bozka_csv):
    header = [c for c in BOZKA_HEADER if c != "campaign"]
    path = tmp_path / "no-campaign.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        writer.writerow(bozka_row("1", "A", "B", "A", "v1", n=1))
    assert len(load(str(path))) == 1
    assert "no campaign column" in str(error_of(path, campaign="demo"))
    wmt = tmp_path / "wmt.csv"
    wmt.write_text(WMT_HEADER + "\nA,1,B,2,1,t1\n")
    assert "no campaign column" in str(error_of(wmt, campaign="demo"))


def test_several_campaigns_in_jsonl(tmp_path):
    rows = [dict(bozka_row("1", "A", "B", "A", "v1", n=1), campaign="x"),
            dict(bozka_row("1", "A", "B", "B", "v2", n=2), campaign="y")]
    path = write_jsonl(tmp_path / "in.jsonl", rows)
    err = error_of(path)
    assert err.line == 2 and "('x', 'y')" in str(err)
    assert load(path, campaign="y").outcome.tolist() == [-1]


def test_campaign_option_of_the_command(bozka_csv, tmp_path, capsys):
    path = two_campaigns(bozka_csv)
    line = refused_and_nothing_written(tmp_path, capsys, [path])
    assert "holds 2 campaigns" in line and "--campaign" in line
    out = tmp_path / "r.json"
    assert main([path, "--campaign", "en-eu", "--json", str(out), "--bootstrap", "0"]) == 0
    assert "2 other_campaigns" in capsys.readouterr().out
    result = json.loads(out.read_text())
    assert result["input"]["judgments"] == 3
    assert result["input"]["counts"]["skipped_other_campaigns"] == 2
    line = refused_and_nothing_written(tmp_path, capsys, [path, "--campaign", "nope"])
    assert "campaign 'nope' is not in the file" in line


# --------------------------------------------------------------------------
# a judgment id seen twice


def test_repeated_judgment_id_names_the_id_and_its_lines(bozka_csv):
    rows = [bozka_row("1", "A", "B", "A", "v1", n=7), bozka_row("2", "A", "B", "B", "v1", n=8),
            bozka_row("1", "A", "B", "A", "v1", n=7)]
    err = error_of(bozka_csv(rows))
    assert err.line == 4
    assert "judgment_id '7' is on lines 2 and 4" in str(err)
    rows += [bozka_row("3", "A", "B", "A", "v1", n=7), bozka_row("3", "A", "B", "A", "v1", n=8)]
    err = error_of(bozka_csv(rows, name="thrice.csv"))
    assert str(err).endswith(
        "judgment_id '7' is on lines 2, 4 and 5 (and 1 other id on more than one line): "
        "each judgment must be counted once")


def test_repeated_judgment_id_of_a_control_or_discarded_row(bozka_csv):
    # left out of the figures, but still a sign that rows were read twice
    rows = [bozka_row("1", "A", "B", "A", "v1", n=1),
            bozka_row("c-1", "<better>", "<worse>", "<better>", "v1", control=True, n=2),
            bozka_row("c-1", "<better>", "<worse>", "<better>", "v1", control=True, n=2)]
    assert "judgment_id '2' is on lines 3 and 4" in str(error_of(bozka_csv(rows)))


def test_repeated_judgment_id_in_jsonl(tmp_path):
    rows = [dict(bozka_row("1", "A", "B", "A", "v1"), judgment_id=5),
            dict(bozka_row("1", "A", "B", "B", "v2"), judgment_id=6),
            dict(bozka_row("1", "A", "B", "B", "v3"), judgment_id="5")]
    err = error_of(write_jsonl(tmp_path / "in.jsonl", rows))
    assert err.line == 3 and "judgment_id '5' is on lines 1 and 3" in str(err)


def test_repeated_judgment_id_by_the_command(bozka_csv, tmp_path, capsys):
    rows = [bozka_row("1", "A", "B", "A", "v1", n=3), bozka_row("1", "A", "B", "A", "v1", n=3)]
    line = refused_and_nothing_written(tmp_path, capsys, [bozka_csv(rows)])
    assert ":3: judgment_id '3' is on lines 2 and 3" in line


def test_wmt_same_judge_same_item_twice_is_kept(tmp_path):
    # no judgment id in a WMT file; a repeat is intra-annotator agreement
    path = tmp_path / "wmt.csv"
    path.write_text(WMT_HEADER + "\nA,1,B,2,1,t1\nA,1,B,2,1,t1\n")
    assert len(load(str(path))) == 2


# --------------------------------------------------------------------------
# malformed lines name their line


def test_field_over_the_csv_size_limit_names_its_line(bozka_csv, tmp_path):
    big = bozka_row("2", "A", "B", "A", "v1")
    big["discard_reason"] = "x" * (csv.field_size_limit() + 1)
    path = bozka_csv([("1", "A", "B", "A", "v1"), big, ("3", "A", "B", "B", "v1")])
    err = error_of(path)
    assert err.line == 3
    assert str(err) == f"{path}:3: malformed CSV: field larger than field limit " \
                       f"({csv.field_size_limit()})"
    wmt = tmp_path / "wmt.csv"
    wmt.write_text(WMT_HEADER + "\nA,1,B,2,1,t1\nA,1,B,2,1,"
                   + "t" * (csv.field_size_limit() + 1) + "\n")
    assert error_of(wmt).line == 3


def test_huge_field_by_the_command(bozka_csv, tmp_path, capsys):
    big = bozka_row("1", "A", "B", "A", "v1")
    big["served_at"] = "y" * (csv.field_size_limit() + 1)
    path = bozka_csv([big])
    line = refused_and_nothing_written(tmp_path, capsys, [path])
    assert line.startswith(f"analyse: {path}:2: malformed CSV: field larger")


def test_bad_quoting_names_the_line_where_the_record_starts(tmp_path):
    header = ",".join(BOZKA_HEADER)
    good = ",".join(bozka_row("1", "A", "B", "A", "v1", n=1)[c] for c in BOZKA_HEADER)
    unclosed = good.replace(",v1,", ',"v2,', 1)       # the quote is never closed
    path = tmp_path / "unclosed.csv"
    path.write_text("\n".join([header, good, unclosed, "more", "text"]) + "\n")
    err = error_of(path)
    assert err.line == 3 and "malformed CSV: unexpected end of data" in str(err)
    path = tmp_path / "stray.csv"
    path.write_text("\n".join([header, good, good.replace(",v1,", ',"v"2,')]) + "\n")
    err = error_of(path)
    assert err.line == 3 and "malformed CSV" in str(err)


def test_empty_judge_or_source_index_names_the_line(bozka_csv, tmp_path):
    err = error_of(bozka_csv([("1", "A", "B", "A", "v1"), ("2", "A", "B", "A", "")]))
    assert err.line == 3 and "volunteer must not be empty" in str(err)
    for row in ("A,1,B,2,1,", "A,1,B,2,,t1"):
        path = tmp_path / "wmt.csv"
        path.write_text(WMT_HEADER + "\nA,1,B,2,1,t1\n" + row + "\n")
        err = error_of(path)
        assert err.line == 3 and "srcIndex and judgeID must not be empty" in str(err)


# --------------------------------------------------------------------------
# terminal output


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


def test_printable_escapes_every_control_and_format_character():
    for ch in BIDI + "\x00\x1b\t\n\r\x7f\x85\x9b\u200b\u2028\u2029\ufeff\U000e0001\ud800":
        out = printable(f"a{ch}b")
        assert out.isascii() and out.startswith("a\\") and out.endswith("b"), repr(ch)
    assert printable("A\u202eB") == "A\\u202eB"
    assert printable("\x1b[31m") == "\\x1b[31m"
    for cp in range(0x10000):
        out = printable(chr(cp))
        assert all(unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Zl", "Zp")
                   for c in out), hex(cp)
    for text in ("Matxin ENEUS", "Euskara ñ é", "中文", "العربية", "a\u00a0b"):
        assert printable(text) == text


def test_report_and_messages_escape_names_json_keeps_them(bozka_csv, tmp_path, capsys):
    evil, red = "Goo\u202egle", "\x1b[31mSMT"
    path = bozka_csv([("1", evil, red, evil, "v\u2067x"), ("2", evil, red, red, "v2"),
                      ("1", evil, red, "equal", "v2")], name="run\u202e1.csv")
    out = tmp_path / "r.json"
    assert main([path, "--json", str(out), "--bootstrap", "0",
                 "--judges", "v\u2067x,v2,w\u202ez"]) == 0
    captured = capsys.readouterr()
    for text in (captured.out, captured.err):
        assert not any(unicodedata.category(c) in ("Cc", "Cf")
                       for c in text.replace("\n", "")), text
    assert "Goo\\u202egle" in captured.out and "\\x1b[31mSMT" in captured.out
    assert "run\\u202e1.csv" in captured.out
    assert captured.err.strip() == "analyse: warning: judges not found: w\\u202ez"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["systems"] == sorted([evil, red])
    bad = tmp_path / "bad\u202e.csv"
    bad.write_text("nothing,here\n")
    assert main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert "\u202e" not in err and "bad\\u202e.csv:1: unrecognised format" in err
