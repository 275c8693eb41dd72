"""The margins unit: the exact sentence-level sign-flip test, checked against
independent code (scipy's permutation test, binomial convolutions), and the
report's verdicts (none from the judgments unit)."""

import numpy as np
import pytest
from scipy import stats

from app.stats import analyse, from_records, load
from app.stats.pairwise.report import significance_headers, significance_rows
from app.stats.winners import flip_test, pair_tables, sign_test, significance
from stats_helpers import reference_file, units_disagree_records


def sizes_of(margins):
    d = np.abs(np.asarray(margins))
    values, counts = np.unique(d[d > 0], return_counts=True)
    return dict(zip(values.tolist(), counts.tolist()))


@pytest.mark.parametrize("seed", range(6))
def test_flip_test_equals_scipy_exact_sign_flip(seed):
    rng = np.random.default_rng(seed)
    margins = rng.integers(-5, 6, size=12)
    # one sample, "samples": scipy flips each observation's sign, all 2^12 ways
    ref = stats.permutation_test((margins,), np.sum, permutation_type="samples",
                                 n_resamples=np.inf, alternative="two-sided").pvalue
    assert flip_test(sizes_of(margins), int(margins.sum())) == pytest.approx(ref, rel=1e-9)


def test_flip_test_with_one_judgment_per_sentence_is_the_sign_test():
    # WMT19 en-de counts (MT 593, reference 554): the published p = 0.2618
    p = flip_test({1: 593 + 554}, 593 - 554)
    assert p == pytest.approx(sign_test(593, 554), rel=1e-9)
    assert round(p, 4) == 0.2618


def test_flip_test_edges():
    assert flip_test({}, 0) == 1.0                  # no decisive sentence
    assert flip_test({3: 1}, 3) == 1.0              # one sentence: either sign
    assert flip_test({2: 4}, 8) == pytest.approx(2 / 16)


def convolved_p(sizes, margin):
    """Independent code: the sum is sum over d of d * (2 X_d - k_d) with
    X_d ~ Bin(k_d, 1/2); convolve those distributions on the integers."""
    pmf, low = np.ones(1), 0
    for d, k in sizes.items():
        part = np.zeros(2 * d * k + 1)
        part[::2 * d] = stats.binom.pmf(np.arange(k + 1), k, 0.5)
        pmf, low = np.convolve(pmf, part), low - d * k
    values = np.arange(low, low + pmf.size)
    return pmf[np.abs(values) >= abs(margin)].sum()


def test_wmt19_enru_margins_against_independent_code():
    data = load(reference_file("enru_001_020.csv"))
    (table,) = pair_tables(data)
    sizes = dict(table["margin_sizes"])
    margin = table["wins"]["mt"] - table["wins"]["ref"]
    # the margins cover every decisive judgment of a sentence
    assert sum(d * k for d, k in sizes.items()) <= 622 + 774
    (pair,) = significance([table])
    assert pair["p_margins"] == pytest.approx(convolved_p(sizes, margin), rel=1e-9)
    assert pair["units"]["margins"]["sentences"] == sum(sizes.values())


def test_pair_tables_margins_on_constructed_data():
    (table,) = pair_tables(from_records(units_disagree_records()))
    assert table["margin_sizes"] == [[1, 14], [5, 10]]   # 14 sentences 2-3, 10 sentences 5-0
    (pair,) = significance([table])
    assert pair["p_margins"] == pytest.approx(convolved_p({1: 14, 5: 10}, 36), rel=1e-9)


def test_report_prints_no_verdict_from_the_judgments_unit():
    result = analyse(from_records(units_disagree_records()), rounds=0)
    headers = significance_headers(result)
    assert headers[-1] == "significant, margins"
    assert not any("significant, judgments" in h for h in headers)
    assert "p judgments (descriptive)" in headers
    (row,) = significance_rows(result)
    assert len(row) == len(headers) and row[-1] == "yes: A"
    # the judgments unit keeps its p-values, without a verdict
    judgments = result["pairs"][0]["units"]["judgments"]
    assert {"p_sign", "p_z", "p"} <= set(judgments)
    assert "significant" not in judgments and "better" not in judgments
