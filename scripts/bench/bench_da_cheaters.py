"""Direct Assessment bots against honest volunteers (issue 28): who is held,
after how many answers, and who ends with a published raffle ticket.

    .venv/bin/python scripts/bench/bench_da_cheaters.py [--honest 100] [--honest-items 30]

Bozka served as ``make run`` serves it (one gevent worker, SQLite), in a
fresh instance with the demo DA campaign (app/demo/en-eu-da, its default
settings: reading floor, a ticket every 10 counted answers) and a bigger one
made of the demo's texts (each source numbered, 400 sentences) for the
honest volunteers. At once, over HTTP (players_da.py), on the demo: "always
50", one score copied to every item, the score copied from the same source,
and the learner that takes a source seen before for quality control, 2-3 s
an item; on the bigger campaign, honest volunteers, 4-10 s an item. Then the
published ticket list is read, each player's hold from the database, and
how the served items of honest volunteers differ by kind (source seen
before, length, position).
"""
import argparse
import os
import sqlite3
import statistics
import threading
import time

from harness import ROOT, Server, bozka_env, flask, log, machine_busy, opening_args, scratch, table
from players import holds, play_all, published_tickets
from players_da import BOTS, DEMO_QUALITY, Player, read_campaign

DEMO = os.path.join(ROOT, "app", "demo", "en-eu-da")
DEMO_SLUG = "demo-en-eu-da"
BIG_SLUG = "da-big"


def big_campaign(folder, sentences=400):
    """The demo's texts, cycled, each source numbered (so no two are the same)."""
    os.makedirs(os.path.join(folder, "systems"), exist_ok=True)
    files = ["source.txt", "reference.txt", "instructions.txt"] + [f"systems/{stem}.txt" for stem, _q in DEMO_QUALITY.values()]
    for name in files:
        with open(os.path.join(DEMO, name), encoding="utf-8") as handle:
            lines = handle.read().splitlines()
        if name == "source.txt":
            lines = [f"{lines[n % len(lines)]} ({n + 1})" for n in range(sentences)]
        elif name != "instructions.txt":
            lines = [lines[n % len(lines)] for n in range(sentences)]
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
    with open(os.path.join(DEMO, "campaign.toml"), encoding="utf-8") as handle:
        manifest = handle.read().split("\n# The texts in the other")[0]
    manifest = manifest.replace(f'slug = "{DEMO_SLUG}"', f'slug = "{BIG_SLUG}"')
    with open(os.path.join(folder, "campaign.toml"), "w", encoding="utf-8") as handle:
        handle.write(manifest)
    return folder


def item_kinds(database, names):
    """Per kind (test or quality control), over the answered items of
    ``names``: the share whose source the volunteer was served before, the
    mean length in words against the output it shows or is made from, and
    the mean position."""
    query = ("SELECT i.participation_id, i.position, i.sentence_id, i.qc_kind, o.text, o.degraded, s.reference "
             "FROM items i JOIN participations p ON p.id = i.participation_id JOIN users u ON u.id = p.user_id "
             "JOIN outputs o ON o.sentence_id = i.sentence_id AND o.system_id = i.left_system_id "
             "JOIN sentences s ON s.id = i.sentence_id "
             f"WHERE i.answered_at IS NOT NULL AND u.username IN ({','.join('?' * len(names))}) "
             "ORDER BY i.participation_id, i.position")
    with sqlite3.connect(database) as connection:
        rows = connection.execute(query, names).fetchall()
    seen, by_kind = set(), {}
    for volunteer, position, sentence, kind, text, degraded, reference in rows:
        shown = {"bad_reference": degraded, "reference": reference}.get(kind, text)
        entry = by_kind.setdefault("test" if kind is None else "quality control", ([], [], []))
        entry[0].append((volunteer, sentence) in seen)
        entry[1].append(len(shown.split()) / len(text.split()))
        entry[2].append(position)
        seen.add((volunteer, sentence))
    return {kind: (sum(again) / len(again), statistics.fmean(length), statistics.fmean(place))
            for kind, (again, length, place) in by_kind.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--honest", type=int, default=100)
    parser.add_argument("--honest-items", type=int, default=30)
    parser.add_argument("--bot-items", type=int, default=60)
    args = parser.parse_args(argv)
    busy = machine_busy()
    started = time.time()
    bots = [Player(f"bot-{kind}", kind, (2, 3), args.bot_items) for kind in BOTS]
    people = [Player(f"honest{n:03d}", "honest", (4, 10), args.honest_items) for n in range(args.honest)]
    with scratch() as workdir:
        instance = os.path.join(workdir, "instance")
        env = bozka_env(instance, BOZKA_PROXIES="1")
        flask(["db", "upgrade"], env)
        flask(["campaign", "import", DEMO, *opening_args()], env)
        folder = big_campaign(os.path.join(workdir, "big"))
        flask(["campaign", "import", folder, *opening_args()], env)
        database = os.path.join(instance, "bozka.sqlite3")
        with Server(env, workdir) as server:
            def read_log():
                with open(server.log_path, encoding="utf-8", errors="replace") as handle:
                    return handle.read()

            log(f"{len(bots)} bots on {DEMO_SLUG} and {len(people)} honest volunteers on {BIG_SLUG} ...")
            crowd = threading.Thread(target=play_all, args=(server.url, BIG_SLUG, people,
                                                            read_campaign(folder, DEMO_QUALITY), read_log, 100))
            crowd.start()
            play_all(server.url, DEMO_SLUG, bots, read_campaign(DEMO, DEMO_QUALITY), read_log, 10)
            crowd.join()
            published = published_tickets(server.url, DEMO_SLUG)  # ticket numbers are per campaign
            published_big = published_tickets(server.url, BIG_SLUG)
        held = holds(database)
        kinds = item_kinds(database, [p.name for p in people])
    rows = []
    for bot in bots:
        in_list = sorted(set(bot.tickets) & published)
        rows.append([bot.kind, len(bot.seen), bot.seen[-1][2] if bot.seen else 0, bot.first_ticket_at() or "-",
                     bot.held_by() or "-", held[bot.name][0] or "-", held[bot.name][1] or "-", len(in_list)])
    table(["bot", "answers", "counted", "first ticket at answer", "held after answer", "hold", "dismissed",
           "published tickets"], rows)
    honest_held = [p for p in people if held[p.name][0]]
    dismissed = [p for p in people if held[p.name][1]]
    honest_tickets = sum(len(set(p.tickets) & published_big) for p in people)
    print(f"\nHonest volunteers: {len(people)}, {args.honest_items} answers each; held {len(honest_held)} "
          f"(after answers {sorted(p.held_by() or 0 for p in honest_held)}); dismissed {len(dismissed)}; "
          f"published tickets {honest_tickets}")
    print("\nHonest volunteers' answered items by kind: source served before, length against the output, position")
    table(["kind", "source seen before", "length ratio", "mean position"],
          [[kind, f"{again:.0%}", f"{length:.2f}", f"{place:.1f}"] for kind, (again, length, place) in kinds.items()])
    print(f"\nTargets (issue 28), {busy:.0f} % busy before the run:")
    for bot in bots[:3]:
        first = bot.first_ticket_at()
        clean = bot.held_by() is not None and (first is None or bot.held_by() <= first) and \
            not set(bot.tickets) & published
        print(f"- {bot.kind}: held by its first ticket, none published: {'MET' if clean else 'MISSED'}")
    learner = bots[3]
    print(f"- learner: held or dismissed within 40 answers: "
          f"{'MET' if (learner.held_by() or 99) <= 40 or len(learner.seen) <= 40 and learner.status == 'dismissed' else 'MISSED'}")
    print(f"- honest volunteers held: {len(honest_held)} of {len(people)}")
    print(f"\nCommand: .venv/bin/python scripts/bench/bench_da_cheaters.py --honest {args.honest} "
          f"--honest-items {args.honest_items}   ({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
