"""Krippendorff's alpha against an independent computation (the
``krippendorff`` package, fed a judges x units table built here from the
raw rows, not by the loader)."""

import csv
import json

import krippendorff
import numpy as np
import pytest

from app.stats import from_records, load
from app.stats.agreement import agreement
from stats_helpers import reference_file

VALUE = {"second": 0, "equal": 1, "first": 2}


def package_alpha(units):
    """Nominal alpha by the ``krippendorff`` package; ``units`` maps
    (unit, judge) to a value. A judge gives a unit at most one value."""
    unit_ids = {u: n for n, u in enumerate(sorted({u for u, _ in units}))}
    judge_ids = {j: n for n, j in enumerate(sorted({j for _, j in units}))}
    table = np.full((len(judge_ids), len(unit_ids)), np.nan)
    for (unit, judge), value in units.items():
        table[judge_ids[judge], unit_ids[unit]] = value
    return float(krippendorff.alpha(reliability_data=table,
                                    level_of_measurement="nominal"))


def bozka_units(records):
    """Units as the literature takes them for Bozka input: (sentence, pair
    in name order), the value seen from the system whose name sorts first."""
    units = {}
    for sentence, a, b, choice, judge in records:
        first, second = sorted((a, b))
        value = "equal" if choice == "equal" else "first" if choice == first else "second"
        key = ((sentence, first, second), judge)
        assert key not in units      # one value per judge and unit
        units[key] = VALUE[value]
    return units


@pytest.mark.parametrize("lang", ["ende", "enru", "deen"])
def test_alpha_matches_package_on_wmt19(lang):
    path = reference_file(f"{lang}_001_020.csv")
    units = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            r1, r2 = int(row["system1rank"]), int(row["system2rank"])
            if r1 < 0 or r2 < 0:
                continue
            value = "first" if r1 < r2 else "equal" if r1 == r2 else "second"
            key = ((row["srcIndex"], row["system1Id"], row["system2Id"]), row["judgeID"])
            assert key not in units
            units[key] = VALUE[value]
    result = agreement(load(path))
    assert result["krippendorff_alpha"] == pytest.approx(package_alpha(units), abs=1e-12)
    # on these data the symmetrised variant is close but not the same
    assert result["krippendorff_alpha_symmetrised"] != pytest.approx(result["krippendorff_alpha"], abs=1e-4)


def quality_only_records(seed=0, sentences=300, judges=4):
    """Judges independent given the systems: 'A' beats 'B' 75 % of the
    time, 10 % ties, whoever judges. Agreement is only system quality."""
    rng = np.random.default_rng(seed)
    records = []
    for s in range(sentences):
        for j in range(judges):
            u = rng.random()
            choice = "A" if u < 0.75 else "equal" if u < 0.85 else "B"
            shown = ("A", "B") if rng.random() < 0.5 else ("B", "A")
            records.append((f"s{s}", *shown, choice, f"j{j}"))
    return records


def test_alpha_standard_when_judges_agree_only_through_quality():
    records = quality_only_records()
    result = agreement(from_records(records))
    assert result["krippendorff_alpha"] == pytest.approx(package_alpha(bozka_units(records)), abs=1e-12)
    # standard alpha sees chance agreement; the symmetrised one, with a
    # 50/50 split of the non-ties as chance, sees real agreement
    assert abs(result["krippendorff_alpha"]) < 0.03
    assert result["krippendorff_alpha_symmetrised"] > 0.2


def mixed_records(seed=4):
    """Four systems of different strengths, pairs shown either way round,
    one to four judges per item."""
    rng = np.random.default_rng(seed)
    strength = {"A": 1.0, "B": 0.3, "C": -0.3, "D": -1.0}
    records = []
    for s in range(60):
        for a, b in (("A", "B"), ("C", "A"), ("B", "D"), ("D", "C")):
            judges = rng.choice(6, size=rng.integers(1, 5), replace=False)
            for j in judges:
                p = 1 / (1 + np.exp(strength[b] - strength[a]))
                u = rng.random()
                choice = "equal" if u < 0.15 else a if rng.random() < p else b
                shown = (a, b) if rng.random() < 0.5 else (b, a)
                records.append((f"s{s}", *shown, choice, f"j{j}"))
    return records


def test_alpha_standard_on_several_pairs_and_mixed_orders():
    records = mixed_records()
    result = agreement(from_records(records))
    assert result["krippendorff_alpha"] == pytest.approx(package_alpha(bozka_units(records)), abs=1e-12)
    assert result["krippendorff_alpha"] != pytest.approx(result["krippendorff_alpha_symmetrised"], abs=0.01)


def test_alpha_wmt_input_keeps_stored_order():
    # WMT units are (sentence, system1, system2) as stored: (s, B, A) is its
    # own unit, valued from B's side
    records = quality_only_records(seed=2, sentences=100, judges=3)
    units = {}
    for sentence, a, b, choice, judge in records:
        value = "equal" if choice == "equal" else "first" if choice == a else "second"
        units[((sentence, a, b), judge)] = VALUE[value]
    result = agreement(from_records(records, fmt="wmt"))
    assert result["krippendorff_alpha"] == pytest.approx(package_alpha(units), abs=1e-12)


def test_alpha_unchanged_when_every_pair_is_reversed():
    # naming the systems so that every pair sorts the other way round swaps
    # the values "first better" and "second better" everywhere: a nominal
    # alpha does not depend on the names of its values
    records = mixed_records(seed=3)
    reverse = {"A": "Z", "B": "Y", "C": "X", "D": "W"}
    renamed = [(s, reverse[a], reverse[b], reverse.get(c, c), j)
               for s, a, b, c, j in records]
    one, two = agreement(from_records(records)), agreement(from_records(renamed))
    assert one["krippendorff_alpha"] == pytest.approx(two["krippendorff_alpha"], abs=1e-12)
    assert one["krippendorff_alpha_symmetrised"] == pytest.approx(two["krippendorff_alpha_symmetrised"], abs=1e-12)


def test_both_alphas_in_report_json_and_csv(bozka_csv, tmp_path, capsys):
    from app.stats.cli import main

    path = bozka_csv(quality_only_records(sentences=40))
    out = tmp_path / "r.json"
    assert main([path, "--json", str(out), "--csv", str(tmp_path / "t"),
                 "--bootstrap", "0"]) == 0
    text = capsys.readouterr().out
    result = json.loads(out.read_text(encoding="utf-8"))["agreement"]
    assert f"Krippendorff's alpha (nominal): {result['krippendorff_alpha']:.3f}" in text
    assert f"Symmetrised alpha (first/second-better totals averaged): " \
           f"{result['krippendorff_alpha_symmetrised']:.3f}" in text
    with open(tmp_path / "t" / "agreement.csv", newline="", encoding="utf-8") as fh:
        rows = {row[0]: row[2] for row in csv.reader(fh)}
    assert float(rows["krippendorff_alpha"]) == pytest.approx(result["krippendorff_alpha"])
    assert float(rows["krippendorff_alpha_symmetrised"]) == pytest.approx(result["krippendorff_alpha_symmetrised"])
