"""The ranking's places (issue 22): equal counts share a rank, standard
competition ranking ("1, 2, 2, 4")."""
from app.services.leaderboard import Entry, Ranking, competition_ranks


def test_equal_counts_share_a_rank_and_the_next_rank_skips():
    assert competition_ranks([9, 7, 7, 5]) == [1, 2, 2, 4]
    assert competition_ranks([3, 3, 3]) == [1, 1, 1]
    assert competition_ranks([8, 6, 4]) == [1, 2, 3]
    assert competition_ranks([5, 5, 2, 2, 1]) == [1, 1, 3, 3, 5]
    assert competition_ranks([]) == []


def _ranking(counts):
    entries = [Entry(n, n, f"v{n}", False, count) for n, count in enumerate(counts, start=1)]
    return Ranking(entries, len(entries), None, 0, 0, 5)


def test_the_ranking_shows_shared_ranks_everywhere():
    ranking = _ranking([9, 7, 7, 5])
    assert [row["r"] for row in ranking.top()] == [1, 2, 2, 4]
    assert [ranking.rank_of(n) for n in (1, 2, 3, 4)] == [1, 2, 2, 4]
    assert [(row["r"], row["n"], row.get("me", False)) for row in ranking.around(3, k=1)] == [
        (2, "v2", False), (2, "v3", True), (4, "v4", False)]
    assert ranking.personal_payload(3, 7, False, ())["rank"] == 2
    assert ranking.rank_of(99) is None and ranking.around(99) == []
