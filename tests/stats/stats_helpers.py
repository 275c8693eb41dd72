"""Helpers shared by the analysis tests (imported as ``stats_helpers``)."""

import csv
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REFERENCE = os.path.join(os.path.dirname(ROOT), "shared", "reference-data",
                         "wmt19-parity-toral2020")

BOZKA_HEADER = ["campaign", "judgment_id", "sentence_id", "system_a", "system_b",
                "shown_first", "choice", "volunteer", "age_group", "studies_level",
                "studies_field", "source_level", "target_level", "served_at",
                "answered_at", "seconds", "is_control", "control_passed",
                "discarded", "discard_reason"]


def reference_file(name):
    """Path of a reference CSV; skips the test when the data is absent."""
    path = os.path.join(REFERENCE, name)
    if not os.path.exists(path):
        pytest.skip(f"reference data not available ({path})")
    return path


def bozka_row(sentence, a, b, choice, judge, *, control=False, discarded=False,
              n=None):
    """One export row as a dict (booleans as CSV strings); its judgment_id is
    ``n``, or empty (write_bozka_csv then numbers the rows, as ids are unique)."""
    return {
        "campaign": "demo", "judgment_id": "" if n is None else str(n),
        "sentence_id": str(sentence),
        "system_a": a, "system_b": b, "shown_first": a, "choice": choice,
        "volunteer": judge, "age_group": "", "studies_level": "",
        "studies_field": "", "source_level": "", "target_level": "",
        "served_at": "", "answered_at": "", "seconds": "3.5",
        "is_control": "true" if control else "false", "control_passed": "",
        "discarded": "true" if discarded else "false", "discard_reason": "",
    }


def write_bozka_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=BOZKA_HEADER)
        writer.writeheader()
        for n, row in enumerate(rows, start=1):
            if isinstance(row, tuple):
                row = bozka_row(*row)
            if not row["judgment_id"]:
                row = dict(row, judgment_id=str(n))
            writer.writerow(row)
    return str(path)


def paper_records():
    """Per-sentence results shaped like the paper's section 4.2.

    One judgment per (pair, sentence): a vote for the winner, or "equal".
    The counts published in the paper are used where the paper gives them
    (SMTs-Google 229/221/50, SMTb-SMTs 158/285/57, SMTb-Matxin ENEUS
    257/203/40, SMTb-Hybrid 238/170/92, Hybrid-Matxin ENEUS 247/215/38);
    the other five pairs are not published and are invented here, clearly
    won by the system the paper ranks higher.
    """
    counts = [
        ("SMTs", "Google", 229, 221, 50),
        ("SMTb", "SMTs", 158, 285, 57),
        ("SMTb", "Matxin ENEUS", 257, 203, 40),
        ("SMTb", "Hybrid", 238, 170, 92),
        ("Hybrid", "Matxin ENEUS", 247, 215, 38),
        # invented:
        ("SMTs", "Matxin ENEUS", 300, 160, 40),
        ("SMTs", "Hybrid", 290, 170, 40),
        ("Google", "SMTb", 270, 180, 50),
        ("Google", "Matxin ENEUS", 295, 165, 40),
        ("Google", "Hybrid", 285, 175, 40),
    ]
    records = []
    for a, b, wa, wb, eq in counts:
        choices = [a] * wa + [b] * wb + ["equal"] * eq
        for s, choice in enumerate(choices):
            records.append((f"s{s}", a, b, choice, f"judge{s % 37}"))
    return records


def units_disagree_records():
    """A data set on which the test over judgments and the one over items
    disagree, as in Läubli et al.'s human-parity ratings: A wins 10
    sentences 5-0, B wins 14 sentences 3-2.  Judgments: A 78, B 42 (sign
    test p = 0.0013); items: A 10, B 14 (p = 0.54)."""
    records = []
    for s in range(24):
        votes = ["A"] * 5 if s < 10 else ["A", "A", "B", "B", "B"]
        for j, choice in enumerate(votes):
            records.append((f"s{s}", "A", "B", choice, f"judge{j}"))
    return records


def write_text(tmp_path, text, name="in.csv"):
    """Write ``text`` to a file of ``tmp_path``; returns its path."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def load_error(path, **kwargs):
    """The InputError ``loader.load`` raises for ``path``."""
    from app.stats.pairwise.loader import InputError, load

    with pytest.raises(InputError) as info:
        load(path, **kwargs)
    return info.value
