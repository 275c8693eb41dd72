"""Per-sentence winners, z-test, sign test and Holm, by hand."""

import pytest

from app.stats import analyse, from_records
from app.stats.winners import (holm, pair_tables, sentence_categories, sign_test,
                               significance, z_test)
from stats_helpers import paper_records


def test_sentence_categories_thresholds():
    votes = [(5, 0), (3, 0), (4, 1), (2, 0), (3, 2), (1, 1), (0, 0), (0, 2),
             (1, 3), (0, 3), (2, 6)]
    a, b = zip(*votes)
    names = ["A++", "A+", "equal", "B+", "B++"]
    got = [names[c] for c in sentence_categories(a, b)]
    assert got == ["A++", "A++", "A++", "A+", "A+", "equal", "equal", "B+",
                   "B+", "B++", "B++"]


def test_z_test_paper_smts_google():
    # 229 sentences for SMTs, 221 for Google, ties excluded
    z, p = z_test(229, 221)
    assert z == pytest.approx(8 / 450 ** 0.5)
    assert p == pytest.approx(0.70608, abs=1e-5)
    z2, p2 = z_test(221, 229)
    assert z2 == pytest.approx(-z) and p2 == pytest.approx(p)
    # pooled two-proportion form: z larger by sqrt(2)
    zt, pt = z_test(229, 221, "two-proportion")
    assert zt == pytest.approx(z * 2 ** 0.5)
    assert pt == pytest.approx(0.5938, abs=1e-4)


def test_z_test_degenerate_and_errors():
    assert z_test(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        z_test(1, 2, "nonsense")


def test_sign_test_exact():
    assert sign_test(5, 0) == pytest.approx(2 / 32)
    assert sign_test(0, 5) == pytest.approx(2 / 32)
    assert sign_test(1, 1) == pytest.approx(1.0)
    assert sign_test(0, 0) == 1.0
    assert sign_test(229, 221) == pytest.approx(0.74145, abs=1e-5)


def test_sign_test_is_scipys_binomtest():
    from scipy.stats import binomtest

    for n in list(range(1, 41)) + [450, 1147]:
        for a in range(0, n + 1, max(1, n // 40)):
            assert sign_test(a, n - a) == pytest.approx(
                binomtest(a, n, 0.5).pvalue, rel=1e-9, abs=1e-250)


def test_holm():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []
    assert holm([0.02]) == [0.02]


def test_pair_tables_small_case():
    records = [
        # s1: A 3 votes, B 0 -> A++ ; shown both ways round
        ("s1", "A", "B", "A", "j1"), ("s1", "B", "A", "A", "j2"),
        ("s1", "A", "B", "A", "j3"), ("s1", "A", "B", "equal", "j4"),
        # s2: B 1 vote -> B+
        ("s2", "A", "B", "B", "j1"), ("s2", "A", "B", "equal", "j2"),
        # s3: equal votes -> equal
        ("s3", "A", "B", "A", "j1"), ("s3", "B", "A", "B", "j2"),
        # another pair: C beats A on s1
        ("s1", "C", "A", "C", "j1"),
    ]
    tables = pair_tables(from_records(records))
    assert [t["systems"] for t in tables] == [["A", "B"], ["A", "C"]]
    ab = tables[0]
    assert ab["judgments"] == 8
    assert ab["wins"] == {"A": 4, "B": 2}
    assert ab["ties"] == 2
    assert ab["sentences"] == {"A++": 1, "A+": 0, "equal": 1, "B+": 1, "B++": 0}
    assert ab["sentence_wins"] == {"A": 1, "B": 1}
    assert ab["margin_sizes"] == [[1, 1], [3, 1]]     # s1: 3 - 0, s2: 0 - 1, s3: 0
    assert tables[1]["systems"] == ["A", "C"] and tables[1]["sentences"]["B+"] == 1


def test_z_test_continuity_correction():
    # |a - b| moves one step towards 0: the binomial's continuity correction
    z, p = z_test(229, 221, continuity=True)
    assert z == pytest.approx(7 / 450 ** 0.5)
    assert p > z_test(229, 221)[1]
    assert z_test(221, 229, continuity=True)[0] == pytest.approx(-z)
    assert z_test(3, 2, continuity=True) == (0.0, 1.0)
    assert z_test(5, 5, continuity=True) == (0.0, 1.0)


TABLES = [
    {"systems": ["A", "B"], "wins": {"A": 60, "B": 10},
     "sentence_wins": {"A": 40, "B": 10}, "margin_sizes": [[1, 30], [2, 10], [3, 10]]},
    {"systems": ["A", "C"], "wins": {"A": 10, "C": 12},
     "sentence_wins": {"A": 9, "C": 11}, "margin_sizes": [[1, 20]]},
]


def test_significance_paper_settings():
    out = significance(TABLES, alpha=0.05, test="z", correction="none", unit="items")
    assert out[0]["significant"] and out[0]["better"] == "A"
    assert not out[1]["significant"] and out[1]["better"] is None
    assert out[0]["z"] == pytest.approx(30 / 50 ** 0.5)
    assert out[0]["decided_by"] == "p_value"
    assert out[0]["p_items"] == out[0]["p_value"] == out[0]["units"]["items"]["p_z"]
    assert "p_value_holm" not in out[0]
    with pytest.raises(ValueError):
        significance(TABLES, test="t")
    with pytest.raises(ValueError):
        significance(TABLES, correction="bonferroni")
    with pytest.raises(ValueError):
        significance(TABLES, unit="sentences")
    with pytest.raises(ValueError):     # descriptive only: it decides nothing
        significance(TABLES, unit="judgments")


def test_significance_items_sign_test_holm():
    out = significance(TABLES, unit="items")
    items = out[0]["units"]["items"]
    assert items["wins"] == {"A": 40, "B": 10}
    assert items["p_sign"] == pytest.approx(sign_test(40, 10))
    assert items["p"] == items["p_sign_holm"] == out[0]["p_items"]
    assert out[0]["decided_by"] == "sign_test_p_holm"
    assert out[0]["sign_test_p_holm"] == items["p_sign_holm"]
    # the legacy flat keys are kept
    assert out[0]["p_value"] == pytest.approx(z_test(40, 10)[1])
    assert out[0]["judgment_sign_test_p"] == pytest.approx(sign_test(60, 10))


def test_holm_applies_within_each_unit():
    out = significance(TABLES, test="sign")
    for unit, key in (("items", "sentence_wins"), ("judgments", "wins")):
        raw = [sign_test(*t[key].values()) for t in TABLES]
        got = [e["units"][unit]["p_sign_holm"] for e in out]
        assert got == pytest.approx(holm(raw))
    assert out[1]["judgment_sign_test_p_holm"] == out[1]["p_judgments"]


def test_judgments_unit_is_descriptive():
    tables = [{"systems": ["A", "B"], "wins": {"A": 78, "B": 42},
               "sentence_wins": {"A": 10, "B": 14}, "margin_sizes": [[2, 20], [6, 10]]}]
    (pair,) = significance(tables, unit="items")
    assert pair["p_items"] > 0.5 and pair["p_judgments"] < 0.01
    assert not pair["significant"]
    assert "significant" not in pair["units"]["judgments"]
    assert "better" not in pair["units"]["judgments"]


def test_paper_sentence_counts_and_ordering():
    # the paper's settings: z-test, no correction for multiple comparisons
    result = analyse(from_records(paper_records()), rounds=0, test="z",
                     correction="none", unit="items")
    pairs = {tuple(p["systems"]): p for p in result["pairs"]}
    g = pairs[("Google", "SMTs")]
    assert g["sentences"] == {"A++": 0, "A+": 221, "equal": 50,
                              "B+": 229, "B++": 0}
    assert g["p_value"] == pytest.approx(0.70608, abs=1e-5)
    assert not g["significant"]
    hm = pairs[("Hybrid", "Matxin ENEUS")]
    assert hm["sentence_wins"] == {"Hybrid": 247, "Matxin ENEUS": 215}
    # with the binomial z-test, Hybrid vs Matxin ENEUS is not significant
    assert hm["p_value"] == pytest.approx(0.1365, abs=1e-4)
    assert result["ordering"] == "SMTs ≈ Google > SMTb > Hybrid ≈ Matxin ENEUS"
    assert result["clusters"] == [["SMTs", "Google"], ["SMTb"],
                                  ["Hybrid", "Matxin ENEUS"]]


def test_paper_ordering_with_two_proportion_z():
    # the paper's published ordering needs the pooled two-proportion form
    result = analyse(from_records(paper_records()), rounds=0, test="z",
                     correction="none", z_form="two-proportion", unit="items")
    assert result["ordering"] == "SMTs ≈ Google > SMTb > Hybrid > Matxin ENEUS"
    pairs = {tuple(p["systems"]): p for p in result["pairs"]}
    assert pairs[("Google", "SMTs")]["p_value"] == pytest.approx(0.5938, abs=1e-4)
    assert pairs[("Hybrid", "Matxin ENEUS")]["p_items"] == pytest.approx(0.0353, abs=1e-4)


def test_paper_ordering_with_the_issue_19_defaults():
    # exact sign test of sentences won, Holm over the 10 pairs: the same
    # ordering as the binomial z-test; Hybrid vs Matxin ENEUS stays "not significant"
    result = analyse(from_records(paper_records()), rounds=0, unit="items")
    assert result["settings"]["test"] == "sign"
    assert result["settings"]["correction"] == "holm"
    assert result["settings"]["unit"] == "items"
    assert result["ordering"] == "SMTs ≈ Google > SMTb > Hybrid ≈ Matxin ENEUS"
    pairs = {tuple(p["systems"]): p for p in result["pairs"]}
    hm = pairs[("Hybrid", "Matxin ENEUS")]
    assert hm["sign_test_p"] == pytest.approx(sign_test(247, 215))
    assert hm["p_items"] == pytest.approx(min(1, 2 * hm["sign_test_p"]))


def test_unseen_pair_is_reported():
    records = [("s1", "A", "B", "A", "j1"), ("s1", "B", "C", "B", "j1")]
    result = analyse(from_records(records), rounds=0)
    assert [p["systems"] for p in result["pairs"]] == [["A", "B"], ["B", "C"]]
    assert result["unseen_pairs"] == [["A", "C"]]
    assert any("never compared" in n for n in result["notes"])


def test_units_disagree_on_constructed_data():
    from stats_helpers import units_disagree_records

    data = from_records(units_disagree_records())
    result = analyse(data, rounds=0)
    (pair,) = result["pairs"]
    assert pair["wins"] == {"A": 78, "B": 42}
    assert pair["sentence_wins"] == {"A": 10, "B": 14}
    assert pair["p_judgments"] == pytest.approx(sign_test(78, 42))
    assert pair["p_judgments"] < 0.01 < 0.5 < pair["p_items"]
    # margins (the default): ten sentences 5-0 for A outweigh fourteen 2-3
    assert result["settings"]["unit"] == "margins"
    assert result["ordering"] == "A > B" and pair["better"] == "A"
    assert 0.01 < pair["p_margins"] < 0.05
    by_items = analyse(data, rounds=0, unit="items")
    assert by_items["ordering"] == "A ≈ B"
    assert by_items["settings"]["unit"] == "items"


def test_systems_named_x_and_x_plus_keep_their_own_sentence_counts():
    # Keys made from names ("A+" + "+" and "A" + "++") once overwrote each other.
    records = [(s, "A", "A+", "A+", "j1") for s in ("s1", "s2", "s3")]
    (table,) = pair_tables(from_records(records))
    assert table["systems"] == ["A", "A+"]
    assert table["sentences"] == {"A++": 0, "A+": 0, "equal": 0, "B+": 3, "B++": 0}
