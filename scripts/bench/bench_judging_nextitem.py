"""Next-item cost for bench_judging.py, measured in-process.

Builds a SQLite database per size (N source sentences x 5 systems, so 10
pairs and 50 judgments wanted per sentence), pre-fills a realistic share of
judgments (10% of the sentences complete, 30% partly filled, the rest
untouched; one answered item row per judgment, spread over a pool of
volunteers, with their control items), and then times
``app.services.assignment.serve_next`` for many volunteers, rolling back
after each call so that every call sees the same state.

The caller must have set BOZKA_INSTANCE and SECRET_KEY (create_app reads
them) before importing this module's functions' dependencies.
"""
import random
import sqlite3
import statistics
import time
from datetime import datetime, timedelta
from itertools import combinations

from sqlalchemy import event

SYSTEMS = ("A", "B", "C", "D", "E")
PAIR_TARGET = 5  # judgments_per_pair, the default
CONTROLS = 20
POOL = 1000  # volunteers who made the pre-filled judgments
HELD = 32  # volunteers holding an unanswered item while we measure
HISTORY_LENGTHS = (0, 100, 400)


def _app(path):
    from app import create_app

    return create_app(
        {"SQLALCHEMY_DATABASE_URI": f"sqlite:///{path}", "BOZKA_RANDOM_SEED": 1, "TESTING": True}
    )


def _fmt(moment):
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")


def _required_defaults(metadata, tables):
    """{table: {column: value}} for the NOT NULL columns a bulk insert must give.

    The models' defaults are Python-side (not in the schema), so raw
    INSERTs must supply them; reading them from the models keeps this
    benchmark working when a column is added.
    """
    result = {}
    for name in tables:
        values = {}
        for column in metadata.tables[name].columns:
            if column.primary_key or column.nullable or column.server_default is not None:
                continue
            default, value = column.default, None
            if default is not None and default.is_scalar:
                value = default.arg
            elif default is not None and default.is_callable:
                value = default.arg(None)
            if isinstance(value, datetime):
                value = _fmt(value)
            elif isinstance(value, bool):
                value = int(value)
            values[column.name] = value
        result[name] = values
    return result


def _insert(con, defaults, table, columns, rows):
    """executemany INSERT of ``rows`` (tuples for ``columns``), adding defaults."""
    extra = [name for name in defaults[table] if name not in columns]
    missing = [name for name in extra if defaults[table][name] is None]
    if missing:
        raise RuntimeError(f"bench_judging_nextitem: no value for {table}.{', '.join(missing)}")
    tail = tuple(defaults[table][name] for name in extra)
    names = list(columns) + extra
    sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
    con.executemany(sql, (tuple(row) + tail for row in rows))


def build(path, sentences, seed=1):
    """Create the database at ``path``; returns {"campaign_id", "pool", "history": {h: pid}}."""
    from app.extensions import db
    from app.services.importer import SETTINGS, CampaignSpec, create_campaign
    from app.services.quality import is_control_position

    app = _app(path)
    with app.app_context():
        db.create_all()
        spec = CampaignSpec(
            slug="bench",
            name="Bench",
            source_language="en",
            target_language="eu",
            description="",
            instructions="",
            systems=list(SYSTEMS),
            sources=[],
            references=None,
            outputs={name: [] for name in SYSTEMS},
            controls=[(f"Control {i}.", f"Good {i}.", f"Bad {i}.") for i in range(1, CONTROLS + 1)],
            settings={name: default for name, (_kind, default, _minimum) in SETTINGS.items()},
        )
        campaign = create_campaign(spec)
        db.session.commit()
        campaign_id = campaign.id
        system_ids = [s.id for s in campaign.systems]
        control_ids = list(db.session.execute(db.text("SELECT id FROM controls ORDER BY id")).scalars())
        defaults = _required_defaults(
            db.metadata, ("users", "participations", "sentences", "outputs", "slots", "items")
        )
        db.session.remove()
        db.engine.dispose()

    rng = random.Random(seed)
    now = datetime(2026, 1, 1, 12, 0, 0)
    past = _fmt(now - timedelta(days=1))
    con = sqlite3.connect(path)
    con.execute("PRAGMA synchronous=OFF")
    con.execute("BEGIN")
    pairs = list(combinations(system_ids, 2))
    capacity = len(pairs) * PAIR_TARGET

    # Volunteers: the pool that made the pre-filled judgments, the ones
    # holding an item now, and the ones with a long history (see below).
    extra = HELD + len(HISTORY_LENGTHS)
    users = POOL + extra
    _insert(
        con, defaults, "users", ("id", "email", "username", "password_hash", "role", "created_at"),
        ((u, f"v{u}@bench.test", f"v{u}", "x", "volunteer", past) for u in range(1, users + 1)),
    )
    _insert(
        con, defaults, "participations",
        ("id", "campaign_id", "user_id", "source_level", "target_level", "consent_at", "joined_at",
         "items_served", "items_answered"),
        ((u, campaign_id, u, "C1-C2", "C1-C2", past, past, 0, 0) for u in range(1, users + 1)),
    )

    # Sentences, outputs and slots, with pre-filled counters.
    sentence_rows, output_rows, slot_rows, slot_fill = [], [], [], []
    slot_id = 0
    for number in range(1, sentences + 1):
        draw = rng.random()
        collected_total = 0
        for a, b in pairs:
            slot_id += 1
            if draw < 0.10:
                filled = PAIR_TARGET
            elif draw < 0.40:
                filled = rng.randint(0, PAIR_TARGET - 1)
            else:
                filled = 0
            collected_total += filled
            slot_rows.append((slot_id, number, a, b, 0, PAIR_TARGET, filled, filled))
            slot_fill.append((slot_id, number, a, b, filled))
        sentence_rows.append(
            (number, campaign_id, number, f"Source sentence number {number}.", capacity,
             collected_total, collected_total, int(collected_total < capacity))
        )
        for system_id, name in zip(system_ids, SYSTEMS):
            output_rows.append((number, system_id, f"Output {number} of {name}."))
    _insert(
        con, defaults, "sentences",
        ("id", "campaign_id", "number", "source", "capacity", "collected", "pending", "is_open"),
        sentence_rows,
    )
    _insert(con, defaults, "outputs", ("sentence_id", "system_id", "text"), output_rows)
    _insert(
        con, defaults, "slots",
        ("id", "sentence_id", "system_a_id", "system_b_id", "identical", "target", "collected", "pending"),
        slot_rows,
    )

    # One answered item per judgment; a volunteer sees a sentence once.
    position = {}
    items = []
    token = [0]

    def add_item(pid, sid=None, slot=None, left=None, right=None, holding=False, answered=True):
        while True:
            pos = position.get(pid, 0) + 1
            position[pid] = pos
            token[0] += 1
            if sid is not None and is_control_position(pos, SETTINGS["control_first"][1], SETTINGS["control_every"][1]):
                items.append((campaign_id, pid, pos, f"{token[0]:016x}", None, None, None, None,
                              rng.choice(control_ids), int(rng.random() < 0.5), 0, past, past, 0, past, "left", 3.0, 1))
                continue
            items.append((campaign_id, pid, pos, f"{token[0]:016x}", slot, sid, left, right, None, None, 0,
                          past if answered else _fmt(now), past if answered else _fmt(now + timedelta(hours=1)),
                          int(holding), past if answered else None, "left" if answered else None,
                          3.0 if answered else None, None))
            return

    by_sentence = {}
    for slot, sid, a, b, filled in slot_fill:
        by_sentence.setdefault(sid, []).extend([(slot, a, b)] * filled)
    for sid, judgments in by_sentence.items():
        if not judgments:
            continue
        for pid, (slot, a, b) in zip(rng.sample(range(1, POOL + 1), len(judgments)), judgments):
            add_item(pid, sid, slot, a, b)
    # Every volunteer's next item must be a test item (that is the path
    # that depends on the number of sentences): pad with a control.
    for pid in range(1, users + 1):
        while is_control_position(position.get(pid, 0) + 1, SETTINGS["control_first"][1], SETTINGS["control_every"][1]):
            position[pid] = position.get(pid, 0) + 1
            token[0] += 1
            items.append((campaign_id, pid, position[pid], f"{token[0]:016x}", None, None, None, None,
                          rng.choice(control_ids), 1, 0, past, past, 0, past, "left", 3.0, 1))
    item_columns = (
        "campaign_id", "participation_id", "position", "token", "slot_id", "sentence_id", "left_system_id",
        "right_system_id", "control_id", "better_left", "control_reused", "served_at", "expires_at", "holding",
        "answered_at", "choice", "seconds", "passed",
    )

    def insert_items(rows):
        _insert(con, defaults, "items", item_columns, rows)

    insert_items(items)
    judged = sum(1 for row in items if row[5] is not None)
    con.execute(
        "UPDATE participations SET items_served = (SELECT coalesce(max(position), 0) FROM items "
        "WHERE participation_id = participations.id)"
    )
    con.execute("UPDATE participations SET items_answered = items_served")
    if "controls_answered" in {row[1] for row in con.execute("PRAGMA table_info(participations)")}:
        con.execute(
            "UPDATE participations SET controls_answered = (SELECT count(*) FROM items "
            "WHERE participation_id = participations.id AND control_id IS NOT NULL)"
        )
    con.execute(
        "UPDATE campaigns SET target_judgments = ?, collected_judgments = ? WHERE id = ?",
        (sentences * capacity, judged, campaign_id),
    )
    con.execute("COMMIT")

    # Volunteers holding an item right now (reservations not yet expired).
    con.execute("BEGIN")
    open_slots = con.execute(
        "SELECT slots.id, slots.sentence_id, slots.system_a_id, slots.system_b_id FROM slots "
        "JOIN sentences ON sentences.id = slots.sentence_id WHERE sentences.is_open AND slots.pending < slots.target "
        "AND sentences.collected > 0 ORDER BY slots.id LIMIT 5000"
    ).fetchall()
    items = []
    for pid, (slot, sid, a, b) in zip(range(POOL + 1, POOL + HELD + 1), rng.sample(open_slots, HELD)):
        add_item(pid, sid, slot, a, b, holding=True, answered=False)
        con.execute("UPDATE slots SET pending = pending + 1 WHERE id = ?", (slot,))
        con.execute(
            "UPDATE sentences SET pending = pending + 1, is_open = (pending + 1 < capacity) WHERE id = ?", (sid,)
        )
    insert_items(items)
    con.execute(
        "UPDATE participations SET items_served = (SELECT coalesce(max(position), 0) FROM items "
        "WHERE participation_id = participations.id) WHERE id > ?",
        (POOL,),
    )
    con.execute("COMMIT")

    # Volunteers who judged the h fullest open sentences: as in a campaign
    # with fewer volunteers than judgments per sentence, where every
    # sentence a volunteer saw stays open and ranks above the untouched
    # ones. The next-sentence query must walk past all of them.
    history = {}
    for index, length in enumerate(HISTORY_LENGTHS):
        pid = POOL + HELD + 1 + index
        history[length] = pid
        top = con.execute(
            "SELECT id FROM sentences WHERE campaign_id = ? AND is_open = 1 ORDER BY collected DESC, id LIMIT ?",
            (campaign_id, length),
        ).fetchall()
        con.execute("BEGIN")
        items = []
        for (sid,) in top:
            slot, a, b = con.execute(
                "SELECT id, system_a_id, system_b_id FROM slots WHERE sentence_id = ? AND pending < target LIMIT 1",
                (sid,),
            ).fetchone()
            add_item(pid, sid, slot, a, b)
            con.execute("UPDATE slots SET pending = pending + 1, collected = collected + 1 WHERE id = ?", (slot,))
            con.execute(
                "UPDATE sentences SET pending = pending + 1, collected = collected + 1, "
                "is_open = (pending + 1 < capacity) WHERE id = ?",
                (sid,),
            )
        while is_control_position(position.get(pid, 0) + 1, SETTINGS["control_first"][1], SETTINGS["control_every"][1]):
            position[pid] = position.get(pid, 0) + 1
            token[0] += 1
            items.append((campaign_id, pid, position[pid], f"{token[0]:016x}", None, None, None, None,
                          rng.choice(control_ids), 1, 0, past, past, 0, past, "left", 3.0, 1))
        insert_items(items)
        con.execute(
            "UPDATE participations SET items_served = ?, items_answered = ? WHERE id = ?",
            (position.get(pid, 0), position.get(pid, 0), pid),
        )
        con.execute("COMMIT")
    con.execute("ANALYZE")
    stats = dict(
        sentences=sentences,
        open_sentences=con.execute("SELECT count(*) FROM sentences WHERE is_open").fetchone()[0],
        partly_filled=con.execute(
            "SELECT count(*) FROM sentences WHERE is_open AND collected > 0"
        ).fetchone()[0],
        judgments=con.execute("SELECT count(*) FROM items WHERE sentence_id IS NOT NULL").fetchone()[0],
        items=con.execute("SELECT count(*) FROM items").fetchone()[0],
    )
    con.close()
    return {"campaign_id": campaign_id, "pool": list(range(1, POOL + 1)), "history": history, "stats": stats}


def _summary(samples):
    ordered = sorted(samples)

    def pct(p):
        return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]

    return {
        "n": len(ordered),
        "mean_us": statistics.fmean(ordered) * 1e6,
        "p50_us": pct(50) * 1e6,
        "p95_us": pct(95) * 1e6,
        "p99_us": pct(99) * 1e6,
    }


def measure_all(paths, built, volunteers=300, rounds=3, seed=2):
    """Time serve_next (then roll back) at every size, rounds interleaved.

    ``paths`` and ``built`` map a size to its database and to what
    ``build`` returned. Each round times every size in turn, so that load
    from elsewhere on the machine hits all sizes alike.
    """
    from app.extensions import db
    from app.models import Campaign, Participation
    from app.services.assignment import serve_next

    rng = random.Random(seed)
    now = datetime(2026, 1, 1, 12, 0, 0)
    apps = {size: _app(path) for size, path in paths.items()}
    chosen = {size: rng.sample(built[size]["pool"], min(volunteers, len(built[size]["pool"]))) for size in paths}
    captured = []
    capturing = [False]
    # The next-sentence query of every timed call, to time it alone in SQLite.
    queries = {size: {"pool": []} for size in paths}
    query_key = [None]

    def capture(conn, cursor, statement, parameters, context, executemany):
        if capturing[0]:
            captured.append((statement, parameters))
        if query_key[0] is not None and is_next_sentence(statement):
            size, key = query_key[0]
            queries[size].setdefault(key, []).append((statement, tuple(parameters)))

    def once(size, pid, key=None):
        campaign = db.session.get(Campaign, built[size]["campaign_id"])
        campaign.reservation_timeout  # loaded outside the timing
        participation = db.session.get(Participation, pid)
        participation.items_served
        capturing[0] = True
        query_key[0] = (size, key) if key is not None else None
        started = time.perf_counter()
        item = serve_next(campaign, participation, now, rng)
        elapsed = time.perf_counter() - started
        capturing[0] = False
        query_key[0] = None
        if item is None or item.sentence_id is None:
            raise RuntimeError(f"volunteer {pid}: expected a test item, got {item!r}")
        db.session.rollback()
        return elapsed

    samples = {size: [] for size in paths}
    history = {size: {length: [] for length in built[size]["history"]} for size in paths}
    for size, app in apps.items():
        with app.app_context():
            event.listen(db.engine, "before_cursor_execute", capture)
            for pid in chosen[size][:50]:  # warm up SQLAlchemy's and SQLite's caches
                once(size, pid)
            for pid in built[size]["history"].values():
                once(size, pid)
            db.session.remove()
    for _round in range(rounds):
        for size, app in apps.items():
            with app.app_context():
                samples[size].extend(once(size, pid, "pool" if _round == 0 else None) for pid in chosen[size])
                for length, pid in built[size]["history"].items():
                    history[size][length].extend(
                        once(size, pid, length if _round == 0 else None) for _ in range(30)
                    )
                db.session.remove()

    result = {"sizes": {}}
    for size in paths:
        result["sizes"][size] = {
            "stats": built[size]["stats"],
            "serve_next": _summary(samples[size]),
            "history": {length: _summary(values) for length, values in history[size].items()},
            "query": _time_queries(paths[size], queries[size], rounds),
        }
    # Every statement of one serve_next call at the largest size, and
    # SQLite's plan for each.
    largest = max(paths)
    with apps[largest].app_context():
        captured.clear()
        once(largest, chosen[largest][0])
        plans = []
        connection = db.session.connection()
        for statement, parameters in captured:
            if not statement.lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE")):
                continue
            rows = connection.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters).all()
            plans.append({"sql": " ".join(statement.split()), "plan": [row[3] for row in rows]})
        db.session.rollback()
        db.session.remove()
    for size, app in apps.items():
        with app.app_context():
            event.remove(db.engine, "before_cursor_execute", capture)
            db.engine.dispose()
    result["plans"] = plans
    result["plan"] = next_sentence_plan(plans)
    result["scans"] = full_scans(plans)
    smallest = min(paths)
    if largest != smallest:
        big, small = result["sizes"][largest]["serve_next"], result["sizes"][smallest]["serve_next"]
        result["ratio_p50"] = big["p50_us"] / small["p50_us"]
        result["ratio_mean"] = big["mean_us"] / small["mean_us"]
    return result


def is_next_sentence(statement):
    return "FROM sentences" in statement and "ORDER BY sentences.collected DESC" in statement


def _time_queries(path, queries, rounds):
    """The captured next-sentence queries, run alone with the sqlite3 module."""
    connection = sqlite3.connect(path)
    try:
        result = {}
        for key, calls in queries.items():
            for statement, parameters in calls[:20]:  # warm up
                connection.execute(statement, parameters).fetchone()
            samples = []
            for _round in range(rounds):
                for statement, parameters in calls:
                    started = time.perf_counter()
                    connection.execute(statement, parameters).fetchone()
                    samples.append(time.perf_counter() - started)
            result[key] = _summary(samples)
        return result
    finally:
        connection.close()


def next_sentence_plan(plans):
    for plan in plans:
        if is_next_sentence(plan["sql"]):
            return plan
    return None


def full_scans(plans):
    """Plan lines that read a whole table or index."""
    return [
        (plan["sql"], line)
        for plan in plans
        for line in plan["plan"]
        if line.startswith("SCAN ")
    ]

