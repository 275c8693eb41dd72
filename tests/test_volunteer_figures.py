"""The dashboard's volunteer figures from aggregates (issue 30): the same
median, mean and bands as the list of volunteers they count."""
import random
import statistics
from collections import Counter

from app.services.volunteer_figures import Volunteers


def test_median_mean_and_bands_of_the_counts_are_those_of_the_list():
    rng = random.Random(1)
    for _ in range(500):
        values = [rng.randint(1, 40) for _ in range(rng.randint(1, 30))]
        figures = Volunteers(took_part=Counter(values))
        assert figures.median_took_part() == statistics.median(values), values
        assert figures.mean_took_part() == round(statistics.fmean(values), 2)
        assert figures.took_part_between(5, 10) == sum(1 for v in values if 5 <= v <= 10)
        assert figures.took_part_between(20) == sum(1 for v in values if v >= 20)
    assert Volunteers().median_took_part() == 0 and Volunteers().mean_took_part() == 0
