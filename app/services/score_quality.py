"""The quality control of a scored item, shared by the protocols that score
one translation 0-100 (DA, ESA): Graham et al.'s bad references (seed 000,
sections 3.4-3.5), the live rule that dismisses only clear aggressive
optimisers, the first checks that hold a volunteer before their first
ticket, and the analysis's judge test, read from running sums
(``score_sums``). Plain functions of values.
"""
import math
from dataclasses import dataclass
from fractions import Fraction

from scipy.stats import t as t_distribution

from ..stats.da.quality import DEFAULT_TEST, THRESHOLD, min_pairs_for
from . import degrade
from .quality import digest

BAD_REFERENCE = "bad_reference"  # the translation degraded: to be scored lower than its original
REPEAT = "repeat"  # the same translation again

# Stored reason codes of the live rule.
NOT_LOWER = "bad_references_not_lower"
LOW_VARIATION = "scores_barely_vary"


def words_to_delete(n):
    """How many words of an n-word translation an adequacy bad reference
    changes (the seed's table; 0: too short to degrade)."""
    return degrade.span_length(n)


def degrade_adequacy(text, rng, donor=None):
    """The adequacy bad reference: a random run of words (the seed's table)
    replaced by as many words of ``donor``, another sentence's translation,
    so that neither its length nor its vocabulary tells it from the
    original; None when the text is too short or there is no donor."""
    if not donor:
        return None
    for _attempt in range(8):  # a run can be replaced by the same words
        bad = degrade.replace_span(text, donor, rng)
        if bad is not None or degrade.span_length(len(degrade.units(text)[0])) == 0:
            return bad
    return None


def is_quality_position(position, share_percent, seed):
    """Whether the volunteer's item ``position`` should be a quality-control
    item (if one is due): drawn from the secret seed, so that about
    ``share_percent`` of the items are, at places nobody can predict."""
    return digest(f"{seed}:qc:{position}") % 100 < share_percent

def optimiser_reason(bad_pairs, scores, min_pairs, min_spread):
    """Why a volunteer is an aggressive optimiser, or None.

    ``bad_pairs``: (original score, bad-reference score) of each pair they
    completed; ``scores``: all their scores. Nothing is decided before
    ``min_pairs`` pairs. Then, as the seed recommends, only clear cases: bad
    references scored no lower than their originals on average, or scores
    whose standard deviation is under ``min_spread`` points.
    """
    return optimiser_verdict(tally(bad_pairs, scores), min_pairs, min_spread)


def optimiser_verdict(sums, min_pairs, min_spread):
    """``optimiser_reason`` read from a volunteer's running sums (``Tally``)."""
    if sums.pairs < min_pairs or not sums.pairs:
        return None
    if sums.drop_sum <= 0:  # the mean of original - bad
        return NOT_LOWER
    if sums.scores > 1 and spread(sums.scores, sums.score_sum, sums.score_squares, 1) < min_spread:
        return LOW_VARIATION
    return None


def spread(n, total, squares, ddof):
    """The standard deviation of ``n`` integers from their sum and sum of
    squares (``ddof`` 1: the sample's, 0: the population's), from the exact
    variance as ``statistics`` computes it."""
    return math.sqrt(Fraction(n * squares - total * total, n * (n - ddof)))

# The first checks (issue 28): before a volunteer's first raffle ticket, the
# scores that barely move and the bad references copied or reversed hold
# the volunteer before that ticket is published.
EARLY_SCORES = 5  # scores read by the early spread check
REVERSED_MARGIN = 20  # points by which a bad reference must beat its original to count as reversed
FLOOR = 3  # an original scored below this (the slider's end) leaves its bad reference no room below
COPY_MARGIN = 2  # a bad reference scored within this of its original: the score copied

def bad_reference_first(seed, position):
    """Whether the bad reference started at ``position`` comes before its
    original (the original is then a test item served later): half of the
    pairs, from the secret seed, so the later of two near-identical
    translations is no more likely to be the worse."""
    return digest(f"{seed}:order:{position}") % 2 == 0


def early_reason(bad_pairs, first_scores, min_spread):
    """Why a volunteer is held for review, or None: the checks that decide
    before the first ticket, and keep watching the pairs after it.

    ``bad_pairs``: (original score, bad-reference score) of each completed
    pair, in the order completed; ``first_scores``: the volunteer's first
    scores (up to ``EARLY_SCORES``). Held when those scores barely move
    (standard deviation under ``min_spread``: "always 50", one score copied
    everywhere); when the first two bad references whose originals were
    scored at least ``FLOOR`` were both scored as those, give or take
    ``COPY_MARGIN`` (a score copied from the same source); or when such
    copies and bad references scored ``REVERSED_MARGIN`` points above their
    originals (a guess at which of two near-identical translations is the
    worse) are three or more and a quarter of the pairs (one or two are
    slips).
    """
    return early_verdict(tally(bad_pairs, first_scores), min_spread)


def early_verdict(sums, min_spread):
    """``early_reason`` read from a volunteer's running sums (``Tally``)."""
    if sums.first_scores >= EARLY_SCORES and spread(
            sums.first_scores, sums.first_sum, sums.first_squares, 0) < min_spread:
        return LOW_VARIATION
    if sums.informative >= 2 and sums.copied_first == 2:
        return NOT_LOWER
    if sums.suspects >= 3 and 4 * sums.suspects >= sums.pairs:
        return NOT_LOWER
    return None


# The running sums of both rules: what an answer changes in a volunteer's
# ``DaJudge`` row (protocols/da/protocol.py), so that the rules read one row, not
# every score.
LIVE_SUMS = ("pairs", "drop_sum", "suspects", "informative", "copied_first", "scores", "score_sum", "score_squares",
             "first_scores", "first_sum", "first_squares")


@dataclass
class Tally:
    """The running sums of the live rules, in memory (as ``DaJudge`` keeps them)."""
    pairs: int = 0  # completed bad-reference pairs
    drop_sum: int = 0  # their sum of original - bad
    suspects: int = 0  # copies and reversals (``early_verdict``)
    informative: int = 0  # pairs whose original is at least FLOOR, up to two
    copied_first: int = 0  # copies among those first two
    scores: int = 0
    score_sum: int = 0
    score_squares: int = 0
    first_scores: int = 0  # the first EARLY_SCORES scores
    first_sum: int = 0
    first_squares: int = 0


def add_score(sums, score):
    """Count one more score of the volunteer in ``sums`` (changed in place)."""
    sums.scores += 1
    sums.score_sum += score
    sums.score_squares += score * score
    if sums.first_scores < EARLY_SCORES:
        sums.first_scores += 1
        sums.first_sum += score
        sums.first_squares += score * score


def add_pair(sums, original, bad):
    """Count one more completed bad-reference pair in ``sums`` (in place)."""
    informative = original >= FLOOR
    copied = informative and abs(bad - original) <= COPY_MARGIN
    first = informative and sums.informative < 2
    sums.pairs += 1
    sums.drop_sum += original - bad
    sums.suspects += bad - original >= REVERSED_MARGIN or copied
    sums.informative += first
    sums.copied_first += first and copied


def tally(bad_pairs, scores):
    """The ``Tally`` of these pairs (in the order completed) and scores
    (summed exactly, should they not be integers)."""
    sums = Tally()
    for score in scores:
        add_score(sums, Fraction(score))
    for original, bad in bad_pairs:
        add_pair(sums, Fraction(original), Fraction(bad))
    return sums


# The analysis's judge test (``stats.da.quality``: WMT's one-sided paired
# t-test), from a judge's running sums of the differences bad - original.
RELIABLE, UNRELIABLE, UNTESTED = "reliable", "unreliable", "untested"


def judge_status(pairs, diff_sum, diff_squares):
    """The judge test's verdict on ``pairs`` differences with these sums,
    as ``stats.da.quality.judge_quality`` gives it on the pairs themselves."""
    if DEFAULT_TEST != "t":
        raise NotImplementedError("the running sums serve the paired t-test only")
    if pairs < min_pairs_for(DEFAULT_TEST):
        return UNTESTED
    if pairs * diff_squares == diff_sum * diff_sum:  # all differences equal: not computable
        return UNRELIABLE
    statistic = diff_sum / pairs / (spread(pairs, diff_sum, diff_squares, 1) / math.sqrt(pairs))
    p = float(t_distribution.cdf(statistic, pairs - 1))
    return RELIABLE if p <= THRESHOLD else UNRELIABLE


# What the organiser's review page shows of the rules (DA's and ESA's review).
@dataclass
class Evidence:
    """What DA's quality-control rules read of a volunteer: the live rule's
    running sums (``DaJudge``, as the rule read them) and the judge test's
    verdict; the means of the paired bad references and their originals
    from the scores shown."""

    pairs: int  # completed bad-reference pairs (the live rule's)
    min_pairs: int
    mean_drop: float  # mean of original - bad reference over those pairs (0 or less: the rule fails)
    original_mean: float
    bad_mean: float
    scores: int
    spread: float  # standard deviation of every score (the live rule's)
    first_spread: float  # of the first EARLY_SCORES scores (the early check's)
    min_spread: float
    tested_pairs: int  # the judge test's pairs (the scores that count)
    status: str  # the judge test's verdict: RELIABLE, UNRELIABLE or UNTESTED
    verdict: str = None  # the live rule's reason on these sums now, or None

    CODES = (NOT_LOWER, LOW_VARIATION)  # the hold and dismissal reasons it explains


def evidence(campaign, judge, scores):
    """The ``Evidence`` of a volunteer's ``DaJudge`` sums and their scores
    (rows with ``kind``, ``score`` and ``original_score``); None before
    their first score."""
    if judge is None:
        return None
    pairs = [(s.original_score, s.score) for s in scores
             if s.kind == BAD_REFERENCE and s.original_score is not None]

    def mean(values):
        return sum(values) / len(values) if values else None

    def shown_spread(n, total, squares, ddof):
        return float(spread(n, total, squares, ddof)) if n > ddof else None

    return Evidence(
        pairs=judge.pairs, min_pairs=campaign.qc_min_pairs,
        mean_drop=judge.drop_sum / judge.pairs if judge.pairs else None,
        original_mean=mean([o for o, _b in pairs]), bad_mean=mean([b for _o, b in pairs]),
        scores=judge.scores, spread=shown_spread(judge.scores, judge.score_sum, judge.score_squares, 1),
        first_spread=shown_spread(judge.first_scores, judge.first_sum, judge.first_squares, 0),
        min_spread=campaign.qc_min_spread, tested_pairs=judge.tested_pairs, status=judge.status,
        verdict=optimiser_verdict(judge, campaign.qc_min_pairs, campaign.qc_min_spread)
        or early_verdict(judge, campaign.qc_min_spread),
    )


class Scores(list):
    """A volunteer's scores as the review page lists them, with ``quality``:
    their ``Evidence`` (the shared review page shows it)."""

    quality = None
