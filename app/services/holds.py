"""Signs that hold a volunteer for review (issue 18), as plain functions of
counts. The controls catch a volunteer who cannot tell a good translation
from a bad one; these catch one who has learnt the controls and games the
rest: one side far more often than chance, "equal" far more often than the
crowd, answers faster than anyone can read them, one after another (the
"low variation" and "too fast" signs of Graham et al.'s aggressive
optimisers).

A held volunteer may go on judging; their name leaves the ranking and their
tickets the published list until an organiser clears the hold or dismisses
them (``review``). The thresholds are campaign settings
(docs/campaign-format.md).

The binomial tails are scipy.special's ``bdtrc`` (the survival function of
scipy.stats.binom without its argument checks, about 30 times cheaper),
run at every answer.
"""
from scipy.special import bdtrc

SAME_SIDE = "same_side"
EQUAL = "equal"
FAST = "fast"
SIGNS = (SAME_SIDE, EQUAL, FAST)

# Below this many crowd judgments the crowd's share of "equal" says little:
# the sign compares with EQUAL_PRIOR instead.
CROWD_MINIMUM = 200
EQUAL_PRIOR = 1 / 3
EQUAL_FLOOR = 0.1  # never compare with a crowd that almost never says "equal"


def same_side_p(left, right):
    """Two-sided binomial p-value of ``left`` first-translation choices
    against ``right`` second-translation ones, if either side were as likely."""
    n = left + right
    if n == 0:
        return 1.0
    return min(1.0, 2 * float(bdtrc(max(left, right) - 1, n, 0.5)))


def crowd_equal_share(equal_judgments, judgments, own_equal=0, own=0):
    """The share of "equal" a volunteer is compared with: the crowd's
    (``equal_judgments`` of ``judgments``, the campaign's counters) without
    the volunteer's own ``own_equal`` of ``own`` answers, so that one who
    answers much of a small campaign does not raise the bar they are held to."""
    equal_judgments, judgments = equal_judgments - own_equal, judgments - own
    if judgments < CROWD_MINIMUM:
        return EQUAL_PRIOR
    return max(EQUAL_FLOOR, equal_judgments / judgments)


def crowd_counters(participation, choice):
    """The volunteer's crowd counters after one more answer counted in the
    campaign's ``collected_judgments`` (and, if "equal", ``equal_judgments``)."""
    return {"crowd_answers": participation.crowd_answers + 1,
            "crowd_equal": participation.crowd_equal + (choice == "equal")}


def equal_p(equal, tests, share):
    """One-sided binomial p-value of ``equal`` answers or more among ``tests``."""
    if tests == 0:
        return 1.0
    return float(bdtrc(equal - 1, tests, share))


def sign(left, right, equal, fast_run, share, *, min_tests, alpha, fast_limit):
    """The sign the volunteer's counts show (SAME_SIDE, EQUAL or FAST), or None.

    ``left``, ``right``, ``equal``: their test answers of each kind;
    ``fast_run``: answers below the reading floor in a row; ``share``: the
    crowd's share of "equal" (``crowd_equal_share``). ``min_tests`` 0 turns
    the two binomial signs off, ``fast_limit`` 0 the run of fast answers.
    """
    if fast_limit and fast_run >= fast_limit:
        return FAST
    tests = left + right + equal
    if not min_tests or tests < min_tests:
        return None
    if same_side_p(left, right) < alpha:
        return SAME_SIDE
    if equal_p(equal, tests, share) < alpha:
        return EQUAL
    return None


def test_counts(choice):
    """The change to (tests_left, tests_right, tests_equal) of one test answer."""
    return {"tests_left": int(choice == "left"), "tests_right": int(choice == "right"),
            "tests_equal": int(choice == "equal")}
