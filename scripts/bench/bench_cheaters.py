"""Cheaters against honest volunteers (issue 18): who ends with a published
raffle ticket or a ranking place.

    .venv/bin/python scripts/bench/bench_cheaters.py [--honest 200] [--honest-items 30]
        [--throwaway 200] [--learners 5] [--harvest] [--controls generated|imported] [--early-controls K]

Bozka served as ``make run`` serves it (one gevent worker, SQLite), a
generated campaign with the default settings (reading floor, signs, a
ticket every 10 counted answers). At once, over HTTP (players.py):
(a) knows every control's answer and answers "equal" otherwise at full
speed; (b) knows the controls and always picks the first translation, 2-3 s
an item; (c) knows the controls and answers at random, 2-3 s an item; and
honest volunteers, 4-10 s an item, who get 10-20 % of the controls after
the first two wrong and find the translations equal 5-25 % of the time.
Everybody confirms their email (only confirmed volunteers' tickets are
published). Then the published ticket list (/c/<slug>/raffle/tickets.csv)
is read, and each player's hold from the database.

The learner (issue 28) plays first: ``--throwaway`` accounts from 40
networks answer at random until dismissed and keep what the feedback tells
about the controls (``players.infer``; with ``--harvest`` every translation
they were shown too); then ``--learners`` bots, alongside the others,
answer every item they believe is a known control with the known answer and
guess the rest, just above the reading floor. ``--controls imported`` runs
the same on the imported pool of 20 controls (the rule before issue 28).
"""
import argparse
import os
import random
import sys
import time

from harness import (CONTROLS, SLUG, Server, bozka_env, flask, log, machine_busy, opening_args, scratch, table,
                     write_campaign)
from players import Player, holds, learn, learned_right, play_all, published_tickets


def players(honest, honest_items, seed=1):
    rng = random.Random(seed)
    cheaters = [Player("cheat-a", "a", (0, 0), 60), Player("cheat-b", "b", (2, 3), 40),
                Player("cheat-c", "c", (2, 3), 40)]
    people = [Player(f"honest{n:03d}", "honest", (4, 10), honest_items, wrong_controls=rng.uniform(0.1, 0.2),
                     equal_share=rng.uniform(0.05, 0.25)) for n in range(honest)]
    return cheaters, people


def instance(workdir, sentences, control_source, early_controls=0):
    """A fresh SQLite instance with the generated campaign, its controls from
    ``control_source``, one in 2 up to item ``early_controls`` (0: none)."""
    env = bozka_env(os.path.join(workdir, "instance"), BOZKA_PROXIES="1")
    flask(["db", "upgrade"], env)
    folder = write_campaign(os.path.join(workdir, "campaign"), sentences)
    with open(os.path.join(folder, "campaign.toml"), "a", encoding="utf-8") as handle:
        handle.write(f'[settings]\ncontrol_source = "{control_source}"\nearly_control_items = {early_controls}\n')
    log(f"  {flask(['campaign', 'import', folder, *opening_args()], env)}")
    return env, os.path.join(workdir, "instance", "bozka.sqlite3")


def per_ticket(group, published):
    """Seconds of pace (the mean of each player's range) per published ticket, over a group of players."""
    seconds = sum(len(p.seen) * sum(p.pace) / 2 for p in group)
    tickets = sum(len(set(p.tickets) & published) for p in group)
    return seconds / tickets if tickets else float("nan")


def in_ranking_at(player, n):
    """Ranked after their ``n``th answer: not held by then, and some answer counted."""
    seen = player.seen[:n]
    return bool(seen) and not any(held for _c, held, _a, _t in seen) and seen[-1][2] > 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--honest", type=int, default=200)
    parser.add_argument("--honest-items", type=int, default=30)
    parser.add_argument("--throwaway", type=int, default=200, help="the learner's throwaway accounts")
    parser.add_argument("--learners", type=int, default=5, help="learning bots playing after them")
    parser.add_argument("--learner-items", type=int, default=60)
    parser.add_argument("--harvest", action="store_true", help="the throwaways keep every translation shown too")
    parser.add_argument("--controls", choices=("generated", "imported"), default="generated")
    parser.add_argument("--early-controls", type=int, default=0, metavar="K",
                        help="one control in 2 in a new volunteer's first K items (docs/campaign-format.md)")
    args = parser.parse_args(argv)
    busy = machine_busy()
    cheaters, people = players(args.honest, args.honest_items)
    started = time.time()
    with scratch() as workdir:
        env, database = instance(workdir, 1000, args.controls, args.early_controls)
        with Server(env, workdir) as server:
            def read_log():
                with open(server.log_path, encoding="utf-8", errors="replace") as handle:
                    return handle.read()

            log(f"{args.throwaway} throwaway accounts learning ...")
            learning = time.time()
            knowledge, thrown = learn(server.url, SLUG, args.throwaway, harvest=args.harvest)
            learning = time.time() - learning
            learners = [Player(f"learner{n}", "learner", (0, 0), args.learner_items, knowledge=knowledge)
                        for n in range(args.learners)]
            log(f"{len(cheaters)} cheaters, {len(learners)} learners and {len(people)} honest volunteers judging ...")
            play_all(server.url, SLUG, cheaters + learners + people, CONTROLS, read_log)
            published = published_tickets(server.url, SLUG)
        held = holds(database)
    rows = []
    for player in cheaters:
        answered = len(player.seen)
        counted = player.seen[-1][2] if player.seen else 0
        in_list = sorted(set(player.tickets) & published)
        rows.append([player.name, answered, counted, len(player.tickets), len(in_list),
                     player.held_by() or "-", held[player.name][0] or "-",
                     "yes" if in_ranking_at(player, 30) else "no"])
    table(["player", "answers", "counted", "tickets won", "in the published list", "held after answer",
           "sign", "ranked at answer 30"], rows)

    honest_held = [p.name for p in people if held[p.name][0]]
    dismissed = [p.name for p in people if held[p.name][1]]
    honest_tickets = sum(len(set(p.tickets) & published) for p in people)
    print(f"\nHonest volunteers: {len(people)}; held {len(honest_held)}; dismissed by the control rule "
          f"{len(dismissed)}; their tickets in the published list {honest_tickets}")
    c = cheaters[2]
    c_tickets = len(set(c.tickets) & published)
    cost = f"{per_ticket([c], published):.0f} s of waiting per published ticket" if c_tickets else "no published ticket"
    print(f"(c), random at a human pace: {c_tickets} published ticket(s) from {len(c.seen)} answers: {cost}; "
          f"an honest volunteer spends {per_ticket(people, published):.0f} s; (c)'s test answers are noise "
          "in the research data")
    learnt, right = learned_right(knowledge, CONTROLS)
    print(f"\nLearner ({args.controls} controls{', harvesting every translation shown' if args.harvest else ''}): "
          f"{args.throwaway} throwaway accounts gave {thrown} answers in {learning:.0f} s and learnt {learnt} "
          f"sources ({right} with the right answer among those believed)")
    rows = []
    for bot in learners:
        in_list = sorted(set(bot.tickets) & published)
        controls = sum(control for _known, control in bot.used)
        known = sum(known and control for known, control in bot.used)
        rows.append([bot.name, len(bot.seen), bot.stopped_by() or "-", f"{known} of {controls}",
                     held[bot.name][0] or "-", held[bot.name][1] or "-", len(bot.tickets), len(in_list)])
    table(["learner", "answers", "held or dismissed after answer", "controls answered from what it learnt", "sign",
           "dismissed", "tickets won", "in the published list"], rows)
    print(f"\nTargets (issues 18 and 28), {busy:.0f} % busy before the run:")
    for player in cheaters[:2]:
        clean = not (set(player.tickets) & published) and not in_ranking_at(player, 30)
        print(f"- ({player.kind}) no published ticket and not ranked at its 30th answer: "
              f"{'MET' if clean else 'MISSED'}")
    caught = [bot for bot in learners if bot.stopped_by() and bot.stopped_by() <= 40]
    clean = [bot for bot in learners if not set(bot.tickets) & published]
    print(f"- learners held or dismissed within 40 answers: {len(caught)} of {len(learners)}; with no published "
          f"ticket: {len(clean)} of {len(learners)}: "
          f"{'MET' if len(caught) == len(clean) == len(learners) else 'MISSED'}")
    print(f"- honest volunteers held: {len(honest_held)} of {len(people)} (target 0): "
          f"{'MET' if not honest_held and len(people) >= 200 else 'MISSED' if honest_held else 'too few simulated'}")
    print(f"\nCommand: .venv/bin/python scripts/bench/bench_cheaters.py {' '.join(argv or sys.argv[1:])}   "
          f"({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
