"""Known answers: WMT24's Error Span Annotation of English to Czech (reference
data in ../shared/reference-data/wmt24-esa-encs/; skips when that folder is
absent), the figures of its README's table."""

import os

import pytest

from app.stats.esa import analyse_esa, load_esa
from stats_helpers import ROOT

ESA_REFERENCE = os.path.join(os.path.dirname(ROOT), "shared", "reference-data", "wmt24-esa-encs")

# system: (score over domains, over segments, segments, rank range, cluster)
PUBLISHED = {
    "refA": (93.9, 94.3, 297, (1, 3), 1),
    "ONLINE-W": (92.8, 91.7, 297, (2, 2), 1),
    "Unbabel-Tower70B": (92.4, 93.6, 297, (2, 6), 1),
    "Claude-3.5": (92.1, 93.6, 297, (2, 5), 1),
    "IOL-Research": (90.4, 89.3, 297, (4, 8), 1),
    "CUNI-MH": (90.0, 91.1, 297, (5, 7), 1),
    "Gemini-1.5-Pro": (89.7, 88.6, 297, (6, 8), 1),
    "CommandR-plus": (88.2, 89.9, 297, (7, 10), 1),
    "GPT-4": (88.2, 90.8, 297, (7, 9), 1),
    "SCIR-MT": (87.3, 87.4, 297, (10, 12), 1),
    "Aya23": (86.1, 87.0, 297, (10, 12), 1),
    "CUNI-DocTransformer": (85.8, 84.9, 297, (9, 12), 1),
    "CUNI-GA": (84.8, 84.7, 297, (12, 13), 1),
    "IKUN": (82.4, 86.4, 297, (12, 14), 1),
    "Llama3-70B": (74.6, 82.4, 297, (15, 16), 2),
    "IKUN-C": (72.6, 79.6, 297, (15, 16), 2),
}


def reference_file(name):
    path = os.path.join(ESA_REFERENCE, name)
    if not os.path.exists(path):
        pytest.skip(f"reference data not available ({path})")
    return path


@pytest.fixture(scope="module")
def result():
    data = load_esa(reference_file("esa_generalMT2024_wave2.en-cs.csv"), "wmt24-esa",
                    reference_file("en-cs.docs"))
    return analyse_esa(data)


def test_every_system_as_published(result):
    got = {s["system"]: (round(s["score"], 1), round(s["score_segments"], 1), s["segments"],
                         tuple(s["rank_range"]), s["cluster"]) for s in result["systems"]}
    assert got == PUBLISHED
    assert [s["system"] for s in result["systems"]] == list(PUBLISHED)   # score order


def test_significant_pairs_and_clusters(result):
    assert (result["significant_pairs"], result["pairs"]) == (103, 120)
    assert result["clusters"] == [list(PUBLISHED)[:14], list(PUBLISHED)[14:]]


def test_filtering_counts(result):
    counts = result["input"]["counts"]
    assert counts["rows"] == 6120 and counts["skipped_bad"] == 733
    assert counts["skipped_tutorial"] == 369 and counts["judgments"] == 16 * 297
    assert result["input"]["domains"] == ["literary", "news", "social", "speech"]
