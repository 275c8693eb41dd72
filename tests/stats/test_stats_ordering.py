"""Ordering and clusters from significant pairwise results."""

from app.stats.ordering import order_systems

PAPER = ["Google", "Hybrid", "Matxin ENEUS", "SMTb", "SMTs"]


def test_paper_ordering():
    beats = [("SMTs", "SMTb"), ("SMTs", "Hybrid"), ("SMTs", "Matxin ENEUS"),
             ("Google", "SMTb"), ("Google", "Hybrid"), ("Google", "Matxin ENEUS"),
             ("SMTb", "Hybrid"), ("SMTb", "Matxin ENEUS"),
             ("Hybrid", "Matxin ENEUS")]
    scores = {"SMTs": 0.31, "Google": 0.30, "SMTb": 0.0, "Hybrid": -0.2,
              "Matxin ENEUS": -0.4}
    out = order_systems(PAPER, beats, scores)
    assert out["ordering"] == "SMTs ≈ Google > SMTb > Hybrid > Matxin ENEUS"
    assert out["clusters"] == [["SMTs", "Google"], ["SMTb"], ["Hybrid"],
                               ["Matxin ENEUS"]]
    assert out["notes"] == []
    assert out["copeland"]["SMTs"] == 3 and out["copeland"]["Matxin ENEUS"] == -4


def test_cycle_gives_no_strict_sign():
    beats = [("A", "B"), ("B", "C"), ("C", "A")]
    out = order_systems(["A", "B", "C"], beats, {"A": 0.2, "B": 0.1, "C": 0.0})
    assert out["ordering"] == "A ≈ B ≈ C"
    assert out["clusters"] == [["A", "B", "C"]]
    assert any("non-transitive: C significantly beat A" in n for n in out["notes"])


def test_cycle_below_a_clear_winner():
    beats = [("W", "A"), ("W", "B"), ("W", "C"),
             ("A", "B"), ("B", "C"), ("C", "A")]
    out = order_systems(["A", "B", "C", "W"], beats,
                        {"W": 1.0, "A": 0.2, "B": 0.1, "C": 0.0})
    assert out["ordering"] == "W > A ≈ B ≈ C"
    assert out["clusters"] == [["W"], ["A", "B", "C"]]


def test_hidden_non_neighbour_difference_is_noted():
    out = order_systems(["A", "B", "C"], [("A", "C")], {"A": 1, "B": 0, "C": -1})
    assert out["ordering"] == "A ≈ B ≈ C"
    assert out["clusters"] == [["A", "B", "C"]]
    assert any("A significantly beat C" in n for n in out["notes"])


def test_neighbour_significant_but_cluster_not_separable():
    # A > B > C significant but A vs C not: ordering shows both signs,
    # clusters cannot cut anywhere
    out = order_systems(["A", "B", "C"], [("A", "B"), ("B", "C")])
    assert out["ordering"] == "A > B > C"
    assert out["clusters"] == [["A", "B", "C"]]


def test_unseen_neighbours_and_ties_broken_by_name():
    out = order_systems(["B", "A"], [], compared=set())
    assert out["ordering"] == "A ≈ B"
    assert out["notes"] == ["A and B were never compared"]


def test_single_system():
    out = order_systems(["A"], [])
    assert out["ordering"] == "A" and out["clusters"] == [["A"]]
