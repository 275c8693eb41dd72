"""ESA: the reader's rules, span statistics, Stouffer, rank ranges and
clusters on small hand-made data, and the command line."""

import json
import math

import pytest
from scipy.stats import norm

from app.stats.cli import main, protocol_for
from app.stats.esa.analysis import analyse_esa, span_counts
from app.stats.esa.reader import InputError, Span, load_esa, sniff_esa
from app.stats.esa.significance import clusters, rank_ranges, significant, stouffer


def esa_line(annotator, system, segment, score, document="doc1", kind="TGT", spans="[]",
             end="10.0"):
    spans = spans.replace('"', '""')
    return (f'{annotator},{system},{segment},{kind},eng,ces,{score},{document},False,'
            f'"{spans}",1.0,{end}')


def write(tmp_path, lines, name="esa.csv"):
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def docs(tmp_path, rows):
    return write(tmp_path, ["canary\tcanary"] + [f"{d}\t{doc}" for d, doc in rows], "t.docs")


def test_reader_leaves_out_non_test_rows_and_keeps_the_later_score(tmp_path):
    path = write(tmp_path, [
        esa_line("a1", "S", 1, 50, end="5"),
        esa_line("a1", "S", 1, 70, end="9"),             # later: kept
        esa_line("a1", "T", 1, 30, end="9"),
        esa_line("a1", "T", 1, 90, end="3"),             # earlier, later in the file: not kept
        esa_line("a1", "S", 2, 10, kind="BAD"),
        esa_line("a1", "ende-tutorial1", 1, 0),
        esa_line("a1", "S", 1, 0, document="doc1#incomplete"),
        esa_line("a1", "S", 1, 0, document="doc1#dup"),
        esa_line("a1", "S", 1, 0, document="canary"),
    ])
    data = load_esa(path)
    assert sorted((j.system, j.score) for j in data.judgments) == [("S", 70.0), ("T", 30.0)]
    assert data.counts == {"rows": 9, "skipped_bad": 1, "skipped_tutorial": 1,
                           "skipped_incomplete": 1, "skipped_dup": 1, "skipped_canary": 1,
                           "replaced_repeats": 2, "judgments": 2}
    assert {j.domain for j in data.judgments} == {"all"} and "one domain" in data.warnings[0]


@pytest.mark.parametrize("line, message", [
    (esa_line("a", "S", 1, 101), "score out of range"),
    (esa_line("a", "S", "x", 50), "segment is not a number"),
    (esa_line("a", "S", 1, 50, kind="XYZ"), "neither TGT nor BAD"),
    (esa_line("a", "S", 1, 50, spans='[{"start_i": 3, "end_i": 1, "severity": "minor"}]'),
     "error span end out of range"),
    (esa_line("a", "S", 1, 50, spans='[{"start_i": 1, "end_i": 2, "severity": "huge"}]'),
     "severity"),
    (esa_line("a", "S", 1, 50, spans="[{"), "not JSON"),
    ("a,S,1,TGT,eng,ces,50", "expected 12 columns"),
])
def test_bad_lines_are_refused_with_their_line(tmp_path, line, message):
    path = write(tmp_path, [esa_line("a", "S", 1, 50), line])
    with pytest.raises(InputError) as info:
        load_esa(path, "wmt24-esa")
    assert str(info.value).startswith(f"{path}:2: ") and message in str(info.value)


def test_documents_give_domains_and_must_match(tmp_path):
    names = docs(tmp_path, [("news", "d1"), ("news", "d1"), ("speech", "d2")])
    good = write(tmp_path, [esa_line("a", "S", 1, 50, "d1"), esa_line("a", "S", 3, 40, "d2")])
    assert [j.domain for j in load_esa(good, None, names).judgments] == ["news", "speech"]
    bad = write(tmp_path, [esa_line("a", "S", 1, 50, "d1"), esa_line("a", "S", 2, 40, "d2")],
                "bad.csv")
    with pytest.raises(InputError) as info:
        load_esa(bad, None, names)
    assert str(info.value) == (f"{bad}:2: document d2 is not segment 2's: {names}:3 has d1")
    outside = write(tmp_path, [esa_line("a", "S", 9, 50, "d1")], "out.csv")
    with pytest.raises(InputError, match=r"out\.csv:1: segment 9 is not in"):
        load_esa(outside, None, names)


def test_span_counts_and_omissions():
    spans = (Span(0, 3, "minor"), Span(5, 9, "major"), Span(None, None, "major"),
             Span(1, 1, "undecided"))
    assert span_counts(spans) == {"spans": 4, "minor": 1, "major": 2, "omissions": 1,
                                  "span_score": -11}


def test_jsonl_reader_and_sniffing(tmp_path):
    records = [{"annotator": "a", "system": "S", "segment": 1, "document": "d", "domain": "news",
                "score": 80, "spans": [{"start": 0, "end": 2, "severity": "major"},
                                       {"start": None, "end": None, "severity": "minor"}],
                "start": 1.0, "end": 2.0}]
    path = write(tmp_path, [json.dumps(r) for r in records], "esa.jsonl")
    assert sniff_esa(path) == "bozka-esa"
    data = load_esa(path)
    assert data.judgments[0].domain == "news" and not data.warnings
    assert data.judgments[0].spans == (Span(0, 2, "major"), Span(None, None, "minor"))
    assert sniff_esa(write(tmp_path, [esa_line("a", "S", 1, 5)])) == "wmt24-esa"
    assert sniff_esa(write(tmp_path, ["judgment_id,system", "1,A"], "p.csv")) is None


def test_stouffer_on_known_p_values():
    assert stouffer([0.5, 0.5, 0.5, 0.5]) == pytest.approx(0.5)
    z = (norm.isf(0.01) + norm.isf(0.2) + norm.isf(0.5) + norm.isf(0.9)) / 2
    assert stouffer([0.01, 0.2, 0.5, 0.9]) == pytest.approx(1 - norm.cdf(z))
    assert stouffer([0.05]) == pytest.approx(0.05)
    assert stouffer([0.04, 0.04]) == pytest.approx(1 - norm.cdf(2 * norm.isf(0.04) / math.sqrt(2)))


def test_rank_ranges_and_clusters_on_a_constructed_case():
    order = ["A", "B", "C", "D"]
    scores = {"A": 90, "B": 80, "C": 70, "D": 60}
    small = {("A", "C"), ("A", "D"), ("B", "D"), ("C", "D")}   # the significant pairs
    p = {(a, b): 0.01 if (a, b) in small or (b, a) in small else 0.3
         for a in order for b in order if a != b}
    wins = significant(p, scores, 0.05)
    assert wins == small
    assert rank_ranges(order, wins) == {"A": (1, 2), "B": (1, 3), "C": (2, 3), "D": (4, 4)}
    # A-B, B-C are within p > 0.05: one cluster until D, which all three beat
    assert clusters(order, p, 0.05) == [["A", "B", "C"], ["D"]]
    p[("B", "D")] = p[("D", "B")] = 0.06
    assert clusters(order, p, 0.05) == [order]


def campaign_lines():
    """Three systems on two domains' segments: A best, C worst."""
    lines = []
    for segment in range(1, 21):
        document = "n1" if segment <= 10 else "s1"
        for system, base in (("A", 90), ("B", 80), ("C", 40)):
            lines.append(esa_line(f"a{segment % 2}", system, segment, base - (segment * 7) % 9,
                                  document, spans='[{"start_i": 0, "end_i": 1, '
                                  '"severity": "major"}]' if system == "C" else "[]"))
    return lines


def test_analysis_on_a_small_campaign(tmp_path):
    names = docs(tmp_path, [("news", "n1")] * 10 + [("social", "s1")] * 10)
    result = analyse_esa(load_esa(write(tmp_path, campaign_lines()), None, names))
    assert [s["system"] for s in result["systems"]] == ["A", "B", "C"]
    a, b, c = result["systems"]
    assert a["segments"] == 20 and c["span_score"] == -5 and c["major_per_segment"] == 1
    assert result["significant_pairs"] == 3 and result["clusters"] == [["A"], ["B"], ["C"]]
    assert [s["rank_range"] for s in result["systems"]] == [[1, 1], [2, 2], [3, 3]]


def test_cli(tmp_path, capsys):
    names = docs(tmp_path, [("news", "n1")] * 10 + [("social", "s1")] * 10)
    path = write(tmp_path, campaign_lines())
    out = tmp_path / "r.json"
    assert protocol_for([path]).NAME == "esa"
    assert main([path, "--format", "wmt24-esa", "--documents", names, "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert "Significant pairs" in captured.out and "2 of 3" not in captured.out
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["protocol"] == "esa" and result["settings"]["documents"] == names
    assert main([path, "--quiet"]) == 0   # detected; no documents: one domain, said so
    assert "all segments are taken as one domain" in capsys.readouterr().err
    bad = write(tmp_path, [esa_line("a", "S", 1, 50), esa_line("a", "S", 2, 500)], "bad.csv")
    assert main([bad, "--format", "wmt24-esa", "--quiet"]) == 2
    assert capsys.readouterr().err == f"analyse: {bad}:2: score out of range: '500'\n"
    with pytest.raises(SystemExit) as info:
        main([path, "--documents", names, "--bootstrap", "5"])
    assert info.value.code == 2
