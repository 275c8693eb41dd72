"""Agreement statistics on small hand-computed cases."""

import numpy as np
import pytest

from app.stats import from_records
from app.stats.agreement import (agreement, agreement_counts, ebaluatoia_kappa,
                                 intra_counts, kappa, krippendorff_alpha_nominal,
                                 label_counts, landis_koch, wmt_kappa)

# label codes: 0 second better, 1 tie, 2 first better


def counts_of(*items):
    """Per-item count matrix from label strings like '>>=' (>, =, <)."""
    code = {"<": 0, "=": 1, ">": 2}
    out = np.zeros((len(items), 3), dtype=int)
    for i, labels in enumerate(items):
        for c in labels:
            out[i, code[c]] += 1
    return out


def test_kappa_formula_and_undefined():
    assert kappa(0.5, 0.5) == 0.0
    assert kappa(1.0, 0.25) == 1.0
    assert kappa(0.25, 0.5) == -0.5
    assert kappa(None, 0.3) is None
    assert kappa(1.0, 1.0) is None


@pytest.mark.parametrize("value,label", [
    (-0.1, "poor"), (0.0, "slight"), (0.2, "slight"), (0.276, "fair"),
    (0.5, "moderate"), (0.7, "substantial"), (0.81, "almost perfect"),
    (1.0, "almost perfect"), (None, "not available")])
def test_landis_koch(value, label):
    assert landis_koch(value) == label


def test_counts_mixed_case():
    # item 1: '>' and '<' (disagree); item 2: '>', '=', '>'
    c = agreement_counts(counts_of("><", ">=>"))
    assert c == {"agreeing": 1, "comparable": 4, "ties": 1, "labels": 5}
    w = wmt_kappa(**c)
    assert w["p_a"] == pytest.approx(0.25)
    # P(tie) = 1/5: P(E) = 0.04 + 2 * 0.4^2 = 0.36
    assert w["p_e"] == pytest.approx(0.36)
    assert w["kappa"] == pytest.approx((0.25 - 0.36) / 0.64)
    assert w["label"] == "too few pairs" and w["few_pairs"]  # 4 comparable pairs (issue 31)
    assert landis_koch(w["kappa"]) == "poor"
    e = ebaluatoia_kappa(1, 4, n_first=3, n_tie=1, n_second=1)
    # shares 0.6, 0.2, 0.2: P(E) = 0.36 + 0.04 + 0.04
    assert e["p_e"] == pytest.approx(0.44)
    assert e["kappa"] == pytest.approx((0.25 - 0.44) / 0.56)


def test_perfect_agreement():
    c = agreement_counts(counts_of(">>>", "<<", "=="))
    assert c == {"agreeing": 5, "comparable": 5, "ties": 2, "labels": 7}
    w = wmt_kappa(**c)
    assert w["p_a"] == 1.0
    assert w["p_e"] == pytest.approx((2 / 7) ** 2 + 2 * ((5 / 7) / 2) ** 2)
    assert w["kappa"] == pytest.approx(1.0)
    assert ebaluatoia_kappa(5, 5, 3, 2, 2)["kappa"] == pytest.approx(1.0)
    assert krippendorff_alpha_nominal(counts_of(">>>", "<<", "==")) == pytest.approx(1.0)


def test_all_ties_is_undefined():
    c = agreement_counts(counts_of("===", "=="))
    w = wmt_kappa(**c)
    assert w["p_a"] == 1.0 and w["p_e"] == 1.0
    assert w["kappa"] is None and w["label"] == "not available"
    assert ebaluatoia_kappa(c["agreeing"], c["comparable"], 0, 5, 0)["kappa"] is None
    assert krippendorff_alpha_nominal(counts_of("===", "==")) is None


def test_one_label_per_item_has_no_comparable_pairs():
    c = agreement_counts(counts_of(">", "<", "="))
    assert c["comparable"] == 0
    w = wmt_kappa(**c)
    assert w["p_a"] is None and w["kappa"] is None
    assert w["p_e"] == pytest.approx(1 / 9 + 2 * (1 / 3) ** 2)
    assert krippendorff_alpha_nominal(counts_of(">", "<", "=")) is None


def test_empty():
    c = agreement_counts(np.zeros((0, 3), dtype=int))
    assert c == {"agreeing": 0, "comparable": 0, "ties": 0, "labels": 0}
    assert wmt_kappa(**c)["kappa"] is None


def test_label_counts_groups():
    keys, counts = label_counts(np.array([7, 3, 7, 7]), np.array([2, 1, 2, 0]))
    assert keys.tolist() == [3, 7]
    assert counts.tolist() == [[0, 1, 0], [1, 0, 2]]


def test_krippendorff_hand_case():
    # units: {'>':1, '<':1} and {'>':2, '=':1}; n = 5, n_c = (1, 1, 3)
    # observed sum_{c!=k} o_ck = 2/1 + 4/2 = 4; expected sum n_c n_k = 25 - 11
    alpha = krippendorff_alpha_nominal(counts_of("><", ">=>"))
    assert alpha == pytest.approx(1 - 4 * 4 / 14)


def test_krippendorff_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability",
    # 4 observers, 12 units, values 1..5, nominal alpha = 0.743
    units = [{1: 3}, {2: 3, 3: 1}, {3: 4}, {3: 4}, {2: 4},
             {1: 1, 2: 1, 3: 1, 4: 1}, {4: 4}, {1: 3, 2: 1}, {2: 4}, {5: 3},
             {1: 2}, {3: 1}]
    counts = np.zeros((len(units), 5))
    for u, unit in enumerate(units):
        for value, n in unit.items():
            counts[u, value - 1] = n
    assert round(krippendorff_alpha_nominal(counts), 3) == 0.743


def test_intra_counts_scope_follows_appraise():
    # judge 0 labels item 0 twice ('>' '>') and item 1 twice ('>' '<'); item 1
    # and item 2 are in sentence 1, where judge 0 also gave item 2 a tie.
    judge = [0, 0, 0, 0, 0, 1]
    item = [0, 0, 1, 1, 2, 2]
    sentence = [0, 0, 1, 1, 1, 1]
    labels = [2, 2, 2, 0, 1, 1]
    c = intra_counts(judge, item, sentence, labels)
    assert c == {"agreeing": 1, "comparable": 2, "ties": 1, "labels": 5}
    w = wmt_kappa(**c)
    assert w["kappa"] == pytest.approx((0.5 - 0.36) / 0.64)


def test_intra_none_without_repeats():
    assert intra_counts([0, 1], [0, 0], [0, 0], [2, 2]) is None
    assert intra_counts([], [], [], []) is None


def test_agreement_on_records_normalises_bozka_pairs():
    # the same item shown both ways round: normalised to one item
    records = [("s1", "A", "B", "A", "j1"), ("s1", "B", "A", "A", "j2"),
               ("s1", "B", "A", "equal", "j3"), ("s2", "A", "C", "C", "j1")]
    result = agreement(from_records(records))
    inter = result["inter"]
    assert (inter["agreeing"], inter["comparable"], inter["ties"],
            inter["labels"]) == (1, 3, 1, 4)
    assert [p["systems"] for p in result["by_pair"]] == [["A", "B"], ["A", "C"]]
    ab, ac = result["by_pair"]
    assert (ab["agreeing"], ab["comparable"], ab["labels"]) == (1, 3, 3)
    assert (ac["comparable"], ac["kappa"]) == (0, None)
    # three-outcome shares are oriented to the canonical pair: A>B twice, tie once
    assert ab["ebaluatoia"]["p_first"] == pytest.approx(2 / 3)
    assert ab["ebaluatoia"]["p_second"] == 0
    assert result["intra"] is None


def test_agreement_wmt_keeps_stored_order():
    # Appraise keys items in stored order: (s1, A, B) and (s1, B, A) differ
    records = [("s1", "A", "B", "A", "j1"), ("s1", "B", "A", "A", "j2")]
    inter = agreement(from_records(records, fmt="wmt"))["inter"]
    assert inter["comparable"] == 0
    inter = agreement(from_records(records, fmt="bozka"))["inter"]
    assert (inter["agreeing"], inter["comparable"]) == (1, 1)


def test_intra_from_records():
    records = [("s1", "A", "B", "A", "j1"), ("s1", "A", "B", "A", "j1"),
               ("s1", "A", "B", "B", "j2")]
    result = agreement(from_records(records))
    assert result["intra"]["comparable"] == 1
    assert result["intra"]["agreeing"] == 1
    assert result["intra"]["kappa"] == pytest.approx(1.0)


def test_krippendorff_mirrored_marginals():
    # units {'>':2} and {'<':2}: plain alpha = 1; mirrored marginals are the
    # same here (2 and 2), so still 1
    c = counts_of(">>", "<<")
    assert krippendorff_alpha_nominal(c) == pytest.approx(1.0)
    assert krippendorff_alpha_nominal(c, mirrored=(2, 0)) == pytest.approx(1.0)
    # units {'>':2} and {'>':2}: one category only -> undefined; mirrored,
    # the marginals become 2 and 2 -> agreement is perfect, alpha = 1
    c = counts_of(">>", ">>")
    assert krippendorff_alpha_nominal(c) is None
    assert krippendorff_alpha_nominal(c, mirrored=(2, 0)) == pytest.approx(1.0)
    # mixed: n = 5, n_c = (1, 1, 3) -> mirrored (2, 1, 2); sum n_c n_k = 25 - 9
    c = counts_of("><", ">=>")
    assert krippendorff_alpha_nominal(c, mirrored=(2, 0)) == pytest.approx(1 - 4 * 4 / 16)
