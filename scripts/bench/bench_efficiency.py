"""Replay of real published judgments through the assignment rules (issue 32): how many
judgments each rule needs to show the full data's ordering and to certify its top system,
and how often it shows a false significant pair.

    .venv/bin/python scripts/bench/bench_efficiency.py [--data FILE[+FILE...] ...] [--campaigns 100]
        [--quick] [--rules R,...] [--null-campaigns N | --no-null] [--jobs N] [--look-every N]
        [--horizon N] [--replan-every K] [--bootstrap N] [--campaign SLUG] [--seed 1]

Without --data: the WMT13 French-English five-way rankings (train + test, one set) and the
three WMT19 parity sets of Toral (2020), from ../shared/reference-data. --data takes any
file the analysis reads (app.stats.pairwise.loader.load: WMT/Appraise CSV, WMT12-13 rankings expanded
into pairs, Bozka CSV or JSON Lines), once per set; FILE+FILE merges files into one set.

The code: replay_data.py loads the sets and draws judgments, replay_campaigns.py runs
one simulated campaign of a rule, this script runs them all and sums them up.

Replay model
    A judgment of the pair (a, b) on sentence s is drawn, with replacement, from the real
    judgments of (s, a, b) when the data has any, else from all real judgments of (a, b).
    Supply "fresh": unlimited new sentences, each (new sentence, pair) a bootstrap draw of
    one of the pair's real sentences. Supply "real": only the data's own sentences (each
    rule takes them in a random order); a (sentence, pair) cell is judged at most once by
    the sequential rule, at most ``target`` (5) times by Ebaluatoia. The per-sentence
    winner of a cell (app.stats.winners.sentence_categories) is what every test counts.

Rules (all from the project's code, not copies)
    ebaluatoia: the paper's rule as app/services/slots.py serves it: the fullest open
    sentence first, so sentences are filled one after another, each (sentence, pair) slot
    to ``target``; inside the one partly filled sentence the slots are taken by
    slots.choose_slot (the fewest judgments, ties at random), called at every look.
    Complete sentences are drawn vectorised (all their slots are full, the order inside
    does not matter). Its result at a look: the fixed analysis of what was collected,
    the exact sign test on per-sentence winners with Holm at 0.05 (winners.sign_test and
    winners.holm, with winners.significance's rule: adjusted p < 0.05 and unequal wins).
    sequential (goal "ordering") and top (goal "top"): app/protocols/pairwise/plan.py: plan()
    (the anytime-valid test per pair, Holm at pair_plan.SEQUENTIAL_ALPHA, decided pairs
    retired), next_pairs() (the open pair with the fewest judgments, ties at random) and
    finished(). Re-planning after every judgment is too slow in Python: the replay
    re-plans every K judgments (K = the number of pairs, one breadth-first round, or 1 %
    of the judgments so far if more, at most a look's spacing; --replan-every K fixes K),
    as the site coalesces its re-plan; between two plans each judgment goes to the open
    pair with the fewest judgments (ties in next_pairs' random order), handed out at once
    by pair_plan.spread. A pair whose real sentences are used up gets no more. A campaign
    ends when finished() says so, when nothing is left to judge, or at the horizon. Its
    result at a look:
    sequential.final_analysis (the sequential decisions of the last plan, then one fixed
    look, the sign test with Holm at the remaining 0.04, on the undecided pairs), as if the
    campaign had stopped there.

Measures (100 campaigns per set and rule by default, 200 in the null replay)
    Truth: the full data's analysis (winners.pair_tables + winners.significance, unit
    "items", sign test, Holm, 0.05): its significant pairs and their directions. Its top
    system: the one ahead of every other in per-sentence wins (the analysis' ordering puts
    it first; none if there is no such system). The model's direction of a pair: the sign
    of the mean, over the sentences the supply draws from, of P(A wins the sentence) -
    P(B wins it), exact for the rule's judgments per cell (1 or ``target``).
    "Shows the ordering": every significant pair of the full data significant in the
    same direction, and no significant pair against the model's direction (a pair the
    full data leaves undecided may be decided in its direction: more sentences than the
    data has find more). "Exactly": the full data's significant pairs and no other (on
    WMT13, with 27 pairs the full data leaves undecided, no rule gets there).
    "Top": sequential.certified_top of the look's decisions (for the sequential rules: of
    final_analysis') is the full data's top system. B80 = the smallest look at which at
    least 80 % of the campaigns show it (a finished campaign keeps its last result).
    Saving = B80(ebaluatoia with the same supply) / B80(rule), 95 % interval by bootstrap
    over campaigns (2,000 resamples of each rule's campaigns); "> x" when Ebaluatoia does
    not get there within the horizon, "∞" when its campaigns end without getting there. FWER: share of campaigns with a significant pair
    against the model's direction, at the end and at any look (ebaluatoia: the fixed test
    at every look; sequential: the plan's decisions at every re-plan, and the final
    analysis at the end). Null replay: the same campaigns with the sides of every
    (sentence, pair) cell flipped at random (all the cell's judgments together, so they
    stay as correlated as in the model): every pair is null and any significant pair is
    false. Horizon: the data's sentences x pairs x target (all of Ebaluatoia's real
    supply) or ten times the data's judgments if more. Looks: every --look-every
    judgments, by default a round number near a 200th of the horizon (a 500th with 10
    pairs or fewer): 5,000 on WMT13, 50 on WMT19 de-en.

What the model makes of a set's cells: WMT13 has 1.9 judgments per judged (sentence,
pair) cell and 67 % of its cells hold one, so Ebaluatoia's five judgments of a fresh
sentence are mostly five copies of one (as correlated as judgments can be), while 70 %
of the real supply's cells are empty and draw five independent judgments from the
pair's pool (not correlated at all); the real correlation (0.15 to 0.39 in the WMT19
data) lies between, so Ebaluatoia-fresh is the baseline least favourable to Ebaluatoia
(the largest savings) and Ebaluatoia-real the most favourable (the smallest). The WMT19 sets have every cell judged 3 to 6 times by different
people: their replay keeps the real agreement.

Figures to compare (issue 32, a previous study on WMT13): B80 500,000 for Ebaluatoia,
115,000 sequential (fresh), 105,000 (real supply), top system 70,000 against 735,000;
WMT19 de-en 1,260 against 2,400; WMT19 en-ru, the reference certified better than MT:
8,250 at five judgments per (sentence, pair), 825 at one.
"""
import argparse
import math
import multiprocessing
import os
import sys
import time

import numpy as np

from harness import fmt, log, machine_busy, markdown
from replay_campaigns import ebaluatoia_campaign, sequential_campaign
from replay_data import TARGET, load_sets

from app.stats import sequential

# rule -> (kind, supply, goal)
RULES = {
    "ebaluatoia-fresh": ("ebaluatoia", "fresh", None),
    "ebaluatoia-real": ("ebaluatoia", "real", None),
    "sequential-fresh": ("sequential", "fresh", sequential.ORDERING),
    "sequential-real": ("sequential", "real", sequential.ORDERING),
    "top-fresh": ("sequential", "fresh", sequential.TOP),
    "top-real": ("sequential", "real", sequential.TOP),
}
LEGEND = (
    "B80: judgments until 80 % of the campaigns show the full data's significant pairs (ordering: with\n"
    "none against the model's direction; exactly: and no other) or certify its top system (the sequential\n"
    "rules: their final analysis). Saving: against Ebaluatoia with the same supply (95 % bootstrap\n"
    "interval). FWER: campaigns with a significant pair against the model's direction; null: every\n"
    "(sentence, pair) cell's sides flipped at random. '> N': not within the horizon N; never: not by\n"
    "the end of the campaigns (their goal reached or their real supply used up).")
SHOW = 0.8  # B80: the share of campaigns that must show the result
BOOTSTRAP = 2000


# ---------------------------------------------------------------------------
# running and summing up


_SETS = []  # the workers' copy (forked)


def run_chunk(task):
    set_index, rule, null, campaigns, seed, looks, horizon, replan_every, step = task
    data = _SETS[set_index]
    kind, supply, goal = RULES[rule]
    out = []
    for number in campaigns:
        sequence = np.random.SeedSequence(seed, spawn_key=(set_index, list(RULES).index(rule), int(null), number))
        campaign_seed = int(sequence.generate_state(1, np.uint64)[0])
        if kind == "ebaluatoia":
            out.append(ebaluatoia_campaign(data, supply, null, campaign_seed, looks, horizon))
        else:
            out.append(sequential_campaign(data, supply, goal, null, campaign_seed, looks, horizon,
                                           replan_every, step))
    return set_index, rule, null, out


def b80(shown, looks):
    """The smallest look at which at least 80 % of the campaigns (rows) show it, or None."""
    hit = np.flatnonzero(shown.mean(0) >= SHOW - 1e-12)
    return int(looks[hit[0]]) if hit.size else None


def bootstrap_b80(shown, looks, rng, resamples):
    """B80 of ``resamples`` resamples of the campaigns (inf when not reached)."""
    n = shown.shape[0]
    weights = np.stack([np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(resamples)])
    share = weights @ shown.astype(np.float64) / n
    reached = share >= SHOW - 1e-12
    first = np.where(reached.any(1), reached.argmax(1), -1)
    return np.where(first >= 0, np.asarray(looks, np.float64)[np.maximum(first, 0)], np.inf)


def saving(base, rule, looks, seed, resamples, horizon):
    """(B80 base / B80 rule, low, high) with a 95 % bootstrap interval; (bound, None,
    None) when only the base does not get there within the horizon (the saving is above
    horizon / B80 rule; ``horizon`` None: the base never gets there); None when the rule
    does not."""
    b, r = b80(base, looks), b80(rule, looks)
    if r is None:
        return None
    if b is None:
        return (math.inf if horizon is None else horizon / r), None, None
    rng = np.random.default_rng(seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = bootstrap_b80(base, looks, rng, resamples) / bootstrap_b80(rule, looks, rng, resamples)
    ratios = np.where(np.isnan(ratios), np.inf, ratios)
    low, high = np.quantile(ratios, [0.025, 0.975], method="inverted_cdf")
    return b / r, low, high


def fmt_saving(figures):
    if figures is None:
        return "-"
    value, low, high = figures
    if low is None:
        return "∞ (Ebaluatoia never)" if math.isinf(value) else f"> {value:.1f}x"
    text = lambda x: "∞" if math.isinf(x) else f"{x:.1f}"  # noqa: E731
    return f"{value:.1f}x ({text(low)}-{text(high)})"


def fmt_b80(value, horizon, campaigns):
    """B80, or why there is none: "never" when every campaign ended before the horizon
    (its goal reached, or its real supply used up), else "> horizon"."""
    if value is not None:
        return fmt(value)
    return "never" if ended_early(campaigns, horizon) else f"> {fmt(horizon)}"


def ended_early(campaigns, horizon):
    return max(c.used for c in campaigns) < horizon


def percent(flags):
    return f"{100 * np.mean(flags):.0f} %"


def auto_step(horizon, pairs):
    """A round number (1, 2, 2.5 or 5 times a power of 10) near a 200th of the horizon,
    a 500th with 10 pairs or fewer (their looks are cheap)."""
    aim = max(1.0, horizon / (200 if pairs > 10 else 500))
    power = 10 ** math.floor(math.log10(aim))
    return int(max(m * power for m in (1, 2, 2.5, 5) if m * power <= aim and (m * power) % 1 == 0))


def plan_of(data, args):
    horizon = args.horizon or max(data.sentences * data.n_pairs * TARGET, 10 * data.judgments)
    step = args.look_every or auto_step(horizon, data.n_pairs)
    looks = np.arange(step, horizon + 1, step)
    return horizon, step, looks


def simulate(sets, rules, args):
    """{(set index, rule, null): [Campaign]}, the campaigns run in ``args.jobs`` processes."""
    tasks = []
    chunk = max(1, min(10, args.campaigns // max(1, args.jobs)))
    for s, data in enumerate(sets):
        horizon, step, looks = plan_of(data, args)
        for rule in rules:
            for null in (False,) if args.no_null else (False, True):
                count = args.null_campaigns if null else args.campaigns
                for first in range(0, count, chunk):
                    numbers = list(range(first, min(count, first + chunk)))
                    tasks.append((s, rule, null, numbers, args.seed, looks, horizon, args.replan_every, step))
    # the slow ones first: WMT13's sequential rules
    tasks.sort(key=lambda t: -sets[t[0]].n_pairs * (3 if RULES[t[1]][0] == "sequential" else 1))
    results = {}
    _SETS[:] = sets
    if args.jobs > 1:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            done = pool.imap_unordered(run_chunk, tasks)
            for number, (s, rule, null, out) in enumerate(done, 1):
                results.setdefault((s, rule, null), []).extend(out)
                if number % max(1, len(tasks) // 20) == 0:
                    log(f"  {number}/{len(tasks)} chunks")
    else:
        for s, rule, null, out in map(run_chunk, tasks):
            results.setdefault((s, rule, null), []).extend(out)
    return results


def summary(sets, rules, results, args):
    rows, about = [], []
    for s, data in enumerate(sets):
        horizon, step, looks = plan_of(data, args)
        about.append([data.name, len(data.systems), data.n_pairs, fmt(data.judgments), fmt(data.sentences),
                      f"{int(np.count_nonzero(data.truth))} of {data.n_pairs}", data.top or "none",
                      fmt(horizon), fmt(step)])
        for rule in rules:
            kind, supply, _goal = RULES[rule]
            model, null = results[(s, rule, False)], results.get((s, rule, True), [])
            ordering = np.array([c.ordering for c in model])
            exact = np.array([c.exact for c in model])
            top = np.array([c.top for c in model])
            base_rule = f"ebaluatoia-{supply}"
            base = results.get((s, base_rule, False))
            seed = args.seed + 7919 * s
            if base is None or base_rule == rule:
                save_order = save_top = None
            else:
                reach = None if ended_early(base, horizon) else horizon
                save_order = saving(np.array([c.ordering for c in base]), ordering, looks, seed, args.bootstrap, reach)
                save_top = saving(np.array([c.top for c in base]), top, looks, seed + 1, args.bootstrap, reach)
            no_order = not data.truth.any()
            rows.append([
                data.name, rule,
                "n/a" if no_order else fmt_b80(b80(ordering, looks), horizon, model),
                "1x" if base_rule == rule and b80(ordering, looks) and not no_order else fmt_saving(save_order),
                "n/a" if no_order else fmt_b80(b80(exact, looks), horizon, model),
                "n/a" if data.top is None else fmt_b80(b80(top, looks), horizon, model),
                "1x" if base_rule == rule and b80(top, looks) and data.top is not None else fmt_saving(save_top),
                f"{percent([c.wrong_end for c in model])} / {percent([c.wrong_any for c in model])}",
                f"{percent([c.wrong_end for c in null])} / {percent([c.wrong_any for c in null])}" if null else "-",
                fmt(np.median([c.used for c in model])),
            ])
    return about, rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", action="append", metavar="FILE[+FILE...]",
                        help="a judgments file the analysis reads (repeat for several sets; "
                             "FILE+FILE: one set of several files); default: the reference sets")
    parser.add_argument("--campaign", metavar="SLUG", help="the campaign (language pair) to keep of a file with several")
    parser.add_argument("--campaigns", type=int, default=None, help="simulated campaigns per set and rule (100)")
    parser.add_argument("--quick", action="store_true", help="20 campaigns, 500 bootstrap resamples")
    parser.add_argument("--rules", default=",".join(RULES), help=f"of {', '.join(RULES)}")
    parser.add_argument("--null-campaigns", type=int, default=None,
                        help="campaigns of the null replay (twice --campaigns: it is the error-rate check)")
    parser.add_argument("--no-null", action="store_true", help="skip the null replay")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--look-every", type=int, default=0, help="judgments between looks (auto)")
    parser.add_argument("--horizon", type=int, default=0, help="judgments at most (sentences x pairs x 5)")
    parser.add_argument("--replan-every", type=int, default=0,
                        help="judgments between re-plans (default: the pairs, or 1 %% of the judgments so far)")
    parser.add_argument("--bootstrap", type=int, default=None, help=f"resamples ({BOOTSTRAP})")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    args.campaigns = args.campaigns or (20 if args.quick else 100)
    args.bootstrap = args.bootstrap or (500 if args.quick else BOOTSTRAP)
    args.null_campaigns = args.null_campaigns or 2 * args.campaigns
    rules = [r.strip() for r in args.rules.split(",") if r.strip()]
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        parser.error(f"unknown rules {', '.join(unknown)}; known: {', '.join(RULES)}")
    command = "python scripts/bench/bench_efficiency.py" + "".join(f" {a}" for a in (argv if argv is not None
                                                                                        else sys.argv[1:]))
    log(f"machine busy before the run: {machine_busy():.0f} %")
    started = time.perf_counter()
    sets = load_sets(args)
    for data in sets:
        disagree = int(np.count_nonzero((data.truth != 0) & (data.truth != data.direction[("fresh", 1)])))
        if disagree:
            log(f"  {data.name}: {disagree} significant pairs whose model direction differs")
    results = simulate(sets, rules, args)
    about, rows = summary(sets, rules, results, args)
    seconds = time.perf_counter() - started
    nulls = "" if args.no_null or args.null_campaigns == args.campaigns else f" ({args.null_campaigns} null)"
    print(f"`{command}`: {args.campaigns} campaigns per set and rule{nulls}, {fmt(seconds)} s on "
          f"{args.jobs} process{'es' if args.jobs > 1 else ''}\n")
    print(markdown(["set", "systems", "pairs", "judgments", "sentences", "significant pairs (full data)",
                    "top system", "horizon", "looks every"], about))
    print(markdown(["set", "rule", "B80 ordering", "saving (95 % CI)", "B80 exactly", "B80 top", "saving (95 % CI)",
                    "FWER end / any look", "null FWER end / any look", "judgments at the end (median)"], rows))
    print(LEGEND)
    return about, rows


if __name__ == "__main__":
    main()
