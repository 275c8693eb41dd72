"""Bozka's CPU per judgment in-process, and where it goes (bench_judging.py's
request without gunicorn or the network).

    .venv/bin/python scripts/bench/profile_judging.py [--judgments 2000] [--protocol da] [--profile]

A fresh SQLite database (the migrations) with bench_judging's generated
campaign; volunteers registered through the pages with the Flask test
client (each from its own address: the rate limits stay on), then taking
turns at ``POST /c/<slug>/api/judgment`` as client.py does. Prints the
process's CPU milliseconds per judgment; with ``--profile``, the functions
where cProfile finds them (cProfile itself slows them down).
"""
import argparse
import cProfile
import json
import os
import pstats
import random
import time

from harness import PASSWORD, SLUG, answer_for, csrf_from, scratch, write_campaign


def setup(workdir, sentences, volunteers, protocol="pairwise"):
    os.environ.update(BOZKA_INSTANCE=os.path.join(workdir, "instance"), SECRET_KEY="profile")
    for name in ("DATABASE_URL", "BOZKA_RANDOM_SEED", "SOCKETIO_MESSAGE_QUEUE"):
        os.environ.pop(name, None)
    from flask_migrate import upgrade

    from app import create_app
    from app.extensions import db
    from app.services.campaign_writer import create_campaign
    from app.services.importer import read_campaign

    app = create_app({"BOZKA_REALTIME_TICKER": False})
    with app.app_context():
        upgrade()
        create_campaign(read_campaign(write_campaign(os.path.join(workdir, "campaign"), sentences, protocol=protocol)))
        db.session.commit()
        db.session.remove()
    clients = []
    for number in range(volunteers):
        client = app.test_client()
        client.environ_base["REMOTE_ADDR"] = f"10.1.{number // 250}.{number % 250 + 1}"
        name = f"prof{number:03d}"
        page = client.get(f"/c/{SLUG}/register").get_data(as_text=True)
        response = client.post(f"/c/{SLUG}/register", data={
            "csrf_token": csrf_from(page), "username": name, "email": f"{name}@bench.example.org",
            "password": PASSWORD, "password2": PASSWORD, "age_group": "26-35", "studies_level": "university",
            "studies_field": "language", "source_level": "C1-C2", "target_level": "C1-C2", "consent": "y"})
        if response.status_code != 302:
            raise RuntimeError(f"registering {name}: HTTP {response.status_code}")
        headers = {"Accept": "application/json",
                   "X-CSRFToken": csrf_from(client.get(f"/c/{SLUG}/welcome").get_data(as_text=True))}
        clients.append({"client": client, "headers": headers,
                        "item": client.get(f"/c/{SLUG}/api/item").get_json()["item"]})
    return clients


def judge(clients, count, rng):
    """``count`` judgments, the volunteers taking turns; the CPU seconds they took."""
    started = time.process_time()
    for number in range(count):
        volunteer = clients[number % len(clients)]
        item = volunteer["item"]
        response = volunteer["client"].post(
            f"/c/{SLUG}/api/judgment", data=json.dumps({"token": item["token"], **answer_for(item, rng)}),
            content_type="application/json", headers=volunteer["headers"])
        payload = response.get_json()
        if response.status_code != 200 or payload["status"] != "accepted":
            raise RuntimeError(f"HTTP {response.status_code}: {response.get_data(as_text=True)[:300]}")
        volunteer["item"] = payload["item"]
    return time.process_time() - started


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judgments", type=int, default=2000)
    parser.add_argument("--volunteers", type=int, default=8)
    parser.add_argument("--protocol", choices=("pairwise", "da"), default="pairwise")
    parser.add_argument("--profile", action="store_true", help="print where the time goes (cProfile)")
    parser.add_argument("--top", type=int, default=40, help="functions shown with --profile")
    args = parser.parse_args(argv)
    rng = random.Random(1)
    with scratch() as workdir:
        clients = setup(workdir, max(2000, args.judgments // args.volunteers * 2), args.volunteers, args.protocol)
        judge(clients, 200, rng)  # warm-up
        profiler = cProfile.Profile(time.process_time) if args.profile else None
        if profiler:
            profiler.enable()
        cpu = judge(clients, args.judgments, rng)
        if profiler:
            profiler.disable()
    print(f"{args.judgments} judgments by {args.volunteers} volunteers through the Flask test client: "
          f"{1000 * cpu / args.judgments:.2f} ms of CPU per judgment" + (" (under cProfile)" if profiler else ""))
    if profiler:
        pstats.Stats(profiler).strip_dirs().sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
