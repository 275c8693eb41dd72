"""Kappa from too few comparable label pairs gets a warning, not a word (issue 31):
one agreeing pair gave "kappa 1.000, almost perfect"."""
import json

import pytest

from app.stats.agreement import FEW_PAIRS, LABEL_MARGIN, describe, kappa_margin, wmt_kappa
from app.stats.cli import main


def test_the_margin_is_the_worst_binomial_error_over_one_minus_p_e():
    assert kappa_margin(1, 0.5) == pytest.approx(1.96 * 0.5 / 0.5)
    assert kappa_margin(100, 0.0) == pytest.approx(1.96 * 0.05)
    assert kappa_margin(0, 0.3) is None and kappa_margin(10, None) is None and kappa_margin(10, 1.0) is None


def test_a_word_only_when_the_margin_is_within_one_band():
    # With P(E) = 1/3 (three outcomes at chance), the margin is 0.2 at about 54 pairs.
    needed = (1.96 * 0.5 / (LABEL_MARGIN * (1 - 1 / 3))) ** 2
    assert 54 < needed < 55
    assert describe(1.0, 54, 1 / 3) == {"label": FEW_PAIRS, "margin": pytest.approx(kappa_margin(54, 1 / 3)),
                                        "few_pairs": True}
    assert describe(1.0, 55, 1 / 3)["label"] == "almost perfect" and not describe(1.0, 55, 1 / 3)["few_pairs"]
    assert describe(None, 0, None) == {"label": "not available", "margin": None, "few_pairs": False}


def test_one_agreeing_pair_is_not_almost_perfect():
    one = wmt_kappa(agreeing=1, comparable=1, ties=0, labels=4)
    assert one["kappa"] == pytest.approx(1.0)
    assert one["label"] == FEW_PAIRS and one["few_pairs"] and one["margin"] > 1
    many = wmt_kappa(agreeing=900, comparable=1000, ties=200, labels=2000)
    assert many["label"] == "almost perfect" and not many["few_pairs"]


def test_the_report_warns_when_kappa_rests_on_one_pair(bozka_csv, tmp_path, capsys):
    # Two judges agree on item 1; every other item has one label: one comparable pair.
    path = bozka_csv([("1", "A", "B", "A", "v1"), ("1", "A", "B", "A", "v2"),
                      ("2", "A", "B", "B", "v1"), ("3", "B", "C", "equal", "v2"), ("4", "A", "C", "A", "v1")])
    out = tmp_path / "r.json"
    assert main([path, "--json", str(out), "--bootstrap", "10"]) == 0
    text = capsys.readouterr().out
    assert "almost perfect" not in text
    assert "WARNING: inter, WMT/Appraise kappa 1.000 rests on 1 comparable label pair" in text
    inter = json.loads(out.read_text(encoding="utf-8"))["agreement"]["inter"]
    assert inter["comparable"] == 1 and inter["few_pairs"] is True and inter["label"] == FEW_PAIRS
