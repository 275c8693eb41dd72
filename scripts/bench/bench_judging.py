"""Judging benchmark (issues 2 and 17): submit-and-next against its ceiling.

    .venv/bin/python scripts/bench/bench_judging.py          (make bench; about 2 minutes)
    .venv/bin/python scripts/bench/bench_judging.py --protocol da   (a DA campaign, issue 20)
    .venv/bin/python scripts/bench/bench_judging.py --protocol esa  (an ESA campaign, issue 33)

In one run:

1. Bozka served as ``make run`` serves it (one gevent worker, SQLite) with a
   generated campaign (2,000 sentences x 5 systems); volunteers registered
   through the real pages judge in a closed loop, one
   ``POST /c/<slug>/api/judgment`` per judgment, at each level of
   ``--levels``;
2. the ceiling (ceiling.py: Flask + Flask-SQLAlchemy mapped objects, one
   insert and one indexed select) served by the same command, taking turns
   with Bozka at each level;
3. every judgment Bozka acknowledged is looked up in its database: stored
   exactly once;
4. in-process, ``assignment.serve_next`` timed at 500 and 50,000 sentences.

Prints a table per part and the targets of issue 17; asserts nothing.
"""
import argparse
import os
import random
import sys
import time
from collections import Counter
from datetime import datetime

from harness import (HERE, Server, bozka_instance, drive, fmt, log, machine_busy, percentile, register, scratch,
                     stored_once, table, write_campaign)

TARGET_SHARE = 0.5  # of the ceiling, at 32 volunteers
TARGET_P95_MS = 100
TARGET_RATIO = 1.5  # next item at 50,000 sentences against 500


def judging(args, workdir):
    """{server: {level: drive's figures}}, and the acknowledged judgments' check."""
    log("setting up Bozka: migrations, campaign ...")
    env, database = bozka_instance(workdir, args.sentences, args.protocol)
    # Registration from one address needs the rate limits off; the measured server has the defaults.
    with Server(dict(env, RATELIMIT_ENABLED="false"), workdir, name="setup") as setup:
        log(f"registering {sum(args.levels)} volunteers through the pages ...")
        volunteers = register(setup.url, sum(args.levels), "bench")
    ceiling_env = dict(env, BENCH_CEILING_DB=os.path.join(workdir, "ceiling.sqlite3"),
                       BENCH_CEILING_SENTENCES=str(args.sentences), BENCH_CEILING_PROTOCOL=args.protocol)
    results = {"Bozka": {}, "ceiling": {}}
    with Server(env, workdir) as bozka, Server(ceiling_env, workdir, "ceiling:app", HERE, "ceiling") as ceiling:
        for level in args.levels:  # fresh volunteers at each level: nobody runs out of sentences
            group, volunteers = volunteers[:level], volunteers[level:]
            for name, server in (("Bozka", bozka), ("ceiling", ceiling)):
                log(f"{name}: {level} volunteers, {args.warmup:g} s + {args.duration:g} s ...")
                results[name][level] = drive(server, group, args.warmup, args.duration)
        command = " ".join(bozka.command)
    check = stored_once(f"sqlite:///{database}", [t for r in results["Bozka"].values() for t in r["tokens"]])
    return results, check, command


def next_item(sizes, workdir, protocol, volunteers=30, history=40, rounds=10, base=500, repeat_share=0):
    """{sentences: serve_next's times in µs}, each call rolled back so that all see the same state.

    The campaign is imported (``base`` sentences) and copied up to the size; 10 % of its sentences are
    complete and 30 % partly filled; each volunteer has been served ``history`` items, so the
    fill-first order has sentences to step over.
    """
    os.environ.update(BOZKA_INSTANCE=os.path.join(workdir, "instance-next"), SECRET_KEY="bench")
    from app import create_app
    from app.extensions import db
    from app.models import Campaign, Participation, User
    from app.services.accounts import join_campaign
    from app.services.assignment import serve_next
    from app.services.campaign_writer import create_campaign
    from app.services.importer import read_campaign
    from app.protocols.pairwise.protocol import is_control
    from app.services.quality import volunteer_seed

    now, rng = datetime(2026, 1, 1, 12), random.Random(1)
    folder = write_campaign(os.path.join(workdir, "campaign-next"), base, protocol=protocol)
    built = {}
    for size in sizes:
        log(f"next item: {size:,} sentences ...")
        app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{workdir}/next-{size}.sqlite3",
                          "BOZKA_REALTIME_TICKER": False, "BOZKA_CHECKPOINT_INTERVAL": 0})
        with app.app_context():
            db.create_all()
            campaign = create_campaign(read_campaign(folder))
            campaign.repeat_share = repeat_share  # pairwise repeats (0: the default, none)
            grow(campaign.id, base, size)
            participations = []
            for number in range(volunteers):
                user = User(email=f"n{number}@bench.example.org", username=f"n{number}", password_hash="-")
                db.session.add(user)
                db.session.flush()
                participations.append(join_campaign(user, campaign, "C1-C2", "C1-C2", now).id)
            db.session.commit()
            for pid in participations:
                participation = db.session.get(Participation, pid)
                while participation.items_served < history or is_control(
                        campaign, participation.items_served + 1,
                        volunteer_seed(campaign.pseudonym_salt, participation.id)):
                    serve_next(campaign, participation, now, rng).answered_at = now
                db.session.commit()
            built[size] = (app, campaign.id, participations)
            db.session.remove()
    times = {size: [] for size in sizes}
    for round_ in range(rounds + 1):  # round 0 warms the caches up
        for size, (app, campaign_id, participations) in built.items():
            with app.app_context():
                for pid in participations:
                    campaign, participation = db.session.get(Campaign, campaign_id), db.session.get(Participation, pid)
                    campaign.control_every, participation.items_served  # loaded before the clock starts
                    started = time.perf_counter()
                    item = serve_next(campaign, participation, now, rng)
                    elapsed = time.perf_counter() - started
                    assert item is not None and item.sentence_id is not None, "expected a test item"
                    db.session.rollback()
                    if round_:
                        times[size].append(elapsed * 1e6)
                db.session.remove()
    for app, _campaign_id, _participations in built.values():
        with app.app_context():
            db.engine.dispose()
    return {size: sorted(values) for size, values in times.items()}


def grow(campaign_id, base, size):
    """Copies of the campaign's ``base`` sentences, with their outputs and slots, up to ``size``;
    then 10 % of the sentences complete and 30 % partly filled (chosen by id: every run alike)."""
    from sqlalchemy import text

    from app.extensions import db

    def run(sql):
        db.session.execute(text(sql), {"campaign": campaign_id, "base": base})

    def columns(table, skip=()):
        return [c.name for c in db.metadata.tables[table].columns if c.name not in ("id", *skip)]

    names = columns("sentences")
    run(f"WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < {size // base - 1}) "
        f"INSERT INTO sentences ({', '.join(names)}) SELECT "
        + ", ".join("number + n * :base" if name == "number" else name for name in names)
        + " FROM sentences, k WHERE campaign_id = :campaign")
    for copied in ("outputs", "slots"):
        names = columns(copied, ("sentence_id",))
        run(f"INSERT INTO {copied} (sentence_id, {', '.join(names)}) SELECT copy.id, "
            + ", ".join(f"t.{name}" for name in names)
            + f" FROM sentences copy JOIN sentences s ON s.campaign_id = copy.campaign_id "
            f"AND s.number = (copy.number - 1) % :base + 1 JOIN {copied} t ON t.sentence_id = s.id "
            "WHERE copy.campaign_id = :campaign AND copy.number > :base")
    # The copies' own places in their pairs' random orders, as an import gives them.
    from app.protocols.pairwise.protocol import scramble

    copies = db.session.execute(text(
        "SELECT slots.id, slots.sentence_id, slots.system_a_id, slots.system_b_id FROM slots "
        "JOIN sentences ON sentences.id = slots.sentence_id WHERE sentences.campaign_id = :campaign "
        "AND sentences.number > :base AND slots.system_b_id IS NOT NULL"), {"campaign": campaign_id, "base": base})
    shuffles = [{"id": i, "shuffle": scramble(sentence, a, b)} for i, sentence, a, b in copies]
    if shuffles:  # pairwise slots only (DA's have no pair)
        db.session.execute(text("UPDATE slots SET shuffle = :shuffle WHERE id = :id"), shuffles)
    run("UPDATE slots SET collected = CASE WHEN sentence_id % 10 = 0 THEN target "
        "WHEN sentence_id % 10 < 4 THEN (sentence_id * 7 + id) % (target + 1) ELSE 0 END")
    run("UPDATE slots SET pending = collected")
    for column in ("collected", "pending"):
        run(f"UPDATE sentences SET {column} = (SELECT sum({column}) FROM slots WHERE sentence_id = sentences.id)")
    run("UPDATE sentences SET is_open = pending < capacity")
    run("UPDATE campaigns SET target_judgments = (SELECT sum(capacity) FROM sentences WHERE campaign_id = :campaign)"
        " WHERE id = :campaign")
    db.session.commit()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", type=lambda s: [int(x) for x in s.split(",")], default=[1, 8, 32],
                        help="volunteers at once, comma-separated (default 1,8,32)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds before measuring, per level")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds measured per level")
    parser.add_argument("--sentences", type=int, default=2000, help="sentences of the HTTP campaign")
    parser.add_argument("--protocol", choices=("pairwise", "da", "esa"), default="pairwise",
                        help="the campaign's protocol (da: one translation scored 0-100, with quality-control "
                             "items; esa: error spans and a score, documents of five sentences)")
    parser.add_argument("--next-sizes", type=lambda s: [int(x) for x in s.split(",")], default=[500, 50000],
                        help="campaign sizes for the next-item timing (multiples of 500)")
    parser.add_argument("--history", type=int, default=40,
                        help="items each volunteer has answered before the next-item timing (a community's "
                             "keenest: 5000)")
    parser.add_argument("--next-volunteers", type=int, default=30, help="volunteers of the next-item timing")
    parser.add_argument("--next-only", action="store_true", help="only the next-item timing (no HTTP)")
    parser.add_argument("--repeat-share", type=int, default=0,
                        help="pairwise repeats in 100 items of the next-item timing's campaign (default 0)")
    args = parser.parse_args(argv)
    started, busy = time.time(), machine_busy()
    with scratch() as workdir:
        results = None if args.next_only else judging(args, workdir)
        times = next_item(args.next_sizes, workdir, args.protocol, args.next_volunteers, args.history,
                          repeat_share=args.repeat_share)
    if results is None:
        print(f"\nNext item in-process (assignment.serve_next, then a rollback), microseconds; {args.protocol}, "
              f"{args.next_volunteers} volunteers who have answered {args.history:,} items each; "
              f"{busy:.0f} % busy before the run")
        table(["sentences x 5 systems", "calls", "p50", "p95"],
              [[f"{size:,}", len(v), fmt(percentile(v, 50)), fmt(percentile(v, 95))] for size, v in times.items()])
        print(f"\nCommand: .venv/bin/python scripts/bench/bench_judging.py {' '.join(sys.argv[1:])}; "
              f"{time.time() - started:.0f} s")
        return
    results, check, command = results

    print(f"\nJudging over HTTP: {os.cpu_count()} cores, {busy:.0f} % busy before the run; campaign of "
          f"{args.sentences:,} sentences x 5 systems, {args.protocol}; both servers run `{command}` (ceiling: ceiling:app)\n")
    rows = []
    for name, levels in results.items():
        for level, r in levels.items():
            rows.append([name, f"{level}{' (ended early)' if r['ended_early'] else ''}", fmt(r["per_second"]),
                         fmt(r["p50"], 1), fmt(r["p95"], 1), fmt(r["p99"], 1), fmt(r["cpu_ms_per_judgment"], 2),
                         f"{fmt(r['machine_busy_percent'])} %"])
    table(["server", "volunteers", "judgments/s", "p50 ms", "p95 ms", "p99 ms", "server CPU ms per judgment",
           "machine busy"], rows)
    others = sum((Counter(r["statuses"]) for r in results["Bozka"].values()), Counter())
    del others["accepted"]
    print(f"Bozka's answers other than accepted: {dict(others) or 'none'}")
    print(f"Stored: {check['acknowledged']:,} judgments acknowledged, {check['once']:,} of them stored exactly "
          f"once; {check['unacknowledged']} stored without an acknowledgement\n")
    print("Next item in-process (assignment.serve_next, then a rollback), microseconds")
    table(["sentences x 5 systems", "calls", "p50", "p95"],
          [[f"{size:,}", len(v), fmt(percentile(v, 50)), fmt(percentile(v, 95))] for size, v in times.items()])

    top = max(args.levels)
    bozka, ceiling = results["Bozka"][top], results["ceiling"][top]
    share = bozka["per_second"] / ceiling["per_second"]
    small, large = min(times), max(times)
    ratio = percentile(times[large], 50) / percentile(times[small], 50)
    verdicts = [
        (f"{top} volunteers: Bozka {fmt(bozka['per_second'])} judgments/s, the ceiling {fmt(ceiling['per_second'])}: "
         f"{share:.2f} of it (at least {TARGET_SHARE})", share >= TARGET_SHARE),
        (f"{top} volunteers: p95 {fmt(bozka['p95'], 1)} ms (under {TARGET_P95_MS})", bozka["p95"] < TARGET_P95_MS),
        (f"acknowledged judgments stored exactly once: {check['once']:,} of {check['acknowledged']:,}",
         check["once"] == check["acknowledged"]),
        (f"next item at {large:,} sentences: {ratio:.2f}x its cost at {small:,} (p50; within {TARGET_RATIO}x)",
         ratio <= TARGET_RATIO),
    ]
    print("Targets (issue 17)")
    for text_, met in verdicts:
        print(f"- {text_}: {'MET' if met else 'MISSED'}")
    print(f"\nCommand: .venv/bin/python scripts/bench/bench_judging.py {' '.join(sys.argv[1:])}".rstrip()
          + f"   ({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
