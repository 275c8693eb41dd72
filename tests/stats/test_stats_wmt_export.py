"""One campaign, two exports (judgments and wmt), the same figures.

The wmt export used to list the side shown first as system1. WMT input keeps
the stored order (that is what reproduces the published WMT figures), so an
item became (sentence, side shown first, other side): each item was split by
the random side, and only judgments that saw the same order were compared
(kappa 0.1520 from the wmt export against 0.1625 from the judgments export on
one campaign). The export now lists each pair in name order.
"""

import numpy as np
import pytest

from app.protocols.pairwise import export
from app.services.export import as_csv
from app.stats import analyse, from_records, load


def campaign_rows(seed=0, sentences=40, judges=5):
    """Judgments-export rows of a small campaign: three systems, every pair
    of every sentence judged by each of five volunteers (sides at random),
    plus controls and discarded judgments, which neither analysis keeps."""
    rng = np.random.default_rng(seed)
    quality = {"sys-b": 0.6, "sys-a": 0.0, "sys-c": -0.4}
    pairs = [("sys-b", "sys-a"), ("sys-b", "sys-c"), ("sys-a", "sys-c")]  # slot order
    rows = []

    def row(sentence, a, b, shown_first, choice, volunteer, control=False, discarded=False):
        rows.append({
            "campaign": "demo", "judgment_id": len(rows) + 1, "sentence_id": sentence,
            "system_a": a, "system_b": b, "shown_first": shown_first, "choice": choice,
            "volunteer": volunteer, "age_group": None, "studies_level": None,
            "studies_field": None, "source_level": None, "target_level": None,
            "served_at": None, "answered_at": None, "seconds": 4.0,
            "is_control": control, "control_passed": True if control else None,
            "discarded": discarded, "discard_reason": "reading floor" if discarded else None,
            "too_fast": False, "dismissed": discarded, "held": False, "held_reason": None,
            "untested": False, "left_out": "control" if control else "discarded" if discarded else None,
            "kind": "control" if control else "test", "original_judgment_id": None,
        })

    for s in range(1, sentences + 1):
        # a per-sentence effect that every judge sees: real agreement
        effect = {name: rng.normal(0, 1.0) for name in quality}
        for a, b in pairs:
            diff = quality[a] + effect[a] - quality[b] - effect[b]
            for j in range(judges):
                shown = a if rng.random() < 0.5 else b
                u = rng.random()
                p_a = 1 / (1 + np.exp(-2 * diff))
                choice = "equal" if u < 0.15 else a if rng.random() < p_a else b
                row(s, a, b, shown, choice, f"v{j}")
        row(f"control-{s}", export.BETTER, export.WORSE, export.BETTER, export.BETTER, "v0",
            control=True)
        row(s, *pairs[0], pairs[0][0], pairs[0][1], "v9", discarded=True)
    return rows


def write(path, columns, records):
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.writelines(as_csv(columns, records))
    return str(path)


def valid(rows):
    """What the wmt export's query keeps."""
    return [r for r in rows if not r["is_control"] and not r["discarded"]]


def exports(tmp_path, rows, wmt_row=export.wmt_row):
    judgments = write(tmp_path / "judgments.csv", export.JUDGMENT_COLUMNS, rows)
    wmt = write(tmp_path / "wmt.csv", export.WMT_COLUMNS,
                (wmt_row(r, "en", "eu") for r in valid(rows)))
    return analyse(load(judgments), rounds=50), analyse(load(wmt), rounds=50)


def shown_first_row(row, source_language, target_language):
    """The former export: system1 was the side shown first."""
    first = row["shown_first"]
    second = row["system_b"] if first == row["system_a"] else row["system_a"]
    rank1, rank2 = {first: (1, 2), second: (2, 1)}.get(row["choice"], (1, 1))
    return {"system2rank": rank2, "segmentId": row["sentence_id"], "system1Id": first,
            "system2Number": -1, "system1Number": -1, "trglang": target_language,
            "system1rank": rank1, "srcIndex": row["sentence_id"], "judgeID": row["volunteer"],
            "srclang": source_language, "system2Id": second, "documentId": -1}


def test_former_export_split_items_by_the_side_shown_first(tmp_path):
    rows = campaign_rows()
    bozka, wmt = exports(tmp_path, rows, wmt_row=shown_first_row)
    one, two = bozka["agreement"], wmt["agreement"]
    # same labels and ties, fewer comparable pairs: a different kappa
    assert one["inter"]["labels"] == two["inter"]["labels"]
    assert one["inter"]["ties"] == two["inter"]["ties"]
    assert one["inter"]["p_e"] == two["inter"]["p_e"]
    assert two["inter"]["comparable"] < one["inter"]["comparable"]
    assert two["inter"]["kappa"] != pytest.approx(one["inter"]["kappa"], abs=1e-3)
    # and that is the whole difference: the same judgments keyed by the side
    # shown first give the former export's figures exactly
    shown = [(r["sentence_id"], r["shown_first"],
              r["system_b"] if r["shown_first"] == r["system_a"] else r["system_a"],
              r["choice"], r["volunteer"]) for r in valid(rows)]
    keyed = analyse(from_records(shown, fmt="wmt"), rounds=0)["agreement"]
    for key in ("inter", "inter_ebaluatoia"):
        assert keyed[key] == two[key]
    assert keyed["by_pair"] == two["by_pair"]
    # the rest of the analysis never depended on the order
    assert bozka["pairs"] == wmt["pairs"]
    assert bozka["bradley_terry"] == wmt["bradley_terry"]


def test_both_exports_give_the_same_figures(tmp_path):
    rows = campaign_rows()
    bozka, wmt = exports(tmp_path, rows)
    assert bozka["input"]["counts"]["skipped_controls"] == 40
    assert bozka["input"]["counts"]["skipped_discarded"] == 40
    for key in ("systems", "agreement", "pairs", "ordering", "clusters",
                "bradley_terry", "win_matrix", "win_rates"):
        assert bozka[key] == wmt[key], key
    assert bozka["input"]["judgments"] == wmt["input"]["judgments"] == 40 * 3 * 5


def test_wmt_row_lists_the_pair_in_name_order():
    base = {"sentence_id": 7, "volunteer": "v1", "system_a": "zeta", "system_b": "alpha"}
    for choice, ranks in (("zeta", (2, 1)), ("alpha", (1, 2)), ("equal", (1, 1))):
        row = export.wmt_row(base | {"choice": choice}, "en", "eu")
        assert (row["system1Id"], row["system2Id"]) == ("alpha", "zeta")
        assert (row["system1rank"], row["system2rank"]) == ranks
        assert (row["srcIndex"], row["judgeID"], row["srclang"], row["trglang"]) == \
            (7, "v1", "en", "eu")
