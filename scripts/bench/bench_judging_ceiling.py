"""The ceiling for bench_judging.py: the least a judging endpoint can do.

A minimal Flask app, served by the same gunicorn command as Bozka, on
SQLite in WAL mode. Each answer inserts one row and returns the next item
from one indexed query; nothing else (no login, no counters, no controls).
Its throughput is the best that one worker process on this machine can do
with Flask + SQLite, so Bozka's figure is read against it.

    BENCH_CEILING_DB=/tmp/x.sqlite3 gunicorn -k gevent -w 1 bench_judging_ceiling:app

``prepare(path, sentences)`` creates the database; the benchmark calls it
before starting the server.

How the endpoint reaches SQLite, by ``BENCH_CEILING_STACK``:
- ``sqlite3`` (default): straight to the ``sqlite3`` module on one
  connection, the least there is;
- ``flask-sqlalchemy``: the same SQL as ``text()`` statements through
  Flask-SQLAlchemy's session (a pooled connection per request, its commit);
- ``flask-sqlalchemy-orm``: the way a Flask app on this project's stack is
  usually written: the row added as a mapped object, the next item read as
  one with ``select()``, then the session's commit.
"""
import os
import sqlite3

from flask import Flask, jsonify, request

SCHEMA = """
CREATE TABLE IF NOT EXISTS sentences (
    id INTEGER PRIMARY KEY,
    is_open BOOLEAN NOT NULL DEFAULT 1,
    source TEXT NOT NULL,
    left_text TEXT NOT NULL,
    right_text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ix_ceiling_next ON sentences (is_open, id);
CREATE TABLE IF NOT EXISTS judgments (
    id INTEGER PRIMARY KEY,
    volunteer TEXT NOT NULL,
    sentence_id INTEGER NOT NULL,
    choice TEXT NOT NULL,
    answered_at REAL NOT NULL DEFAULT (julianday('now'))
);
"""

CHOICES = ("left", "right", "equal")


def _connect(path):
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA busy_timeout=30000")
    return connection


def prepare(path, sentences=2000):
    connection = _connect(path)
    connection.executescript(SCHEMA)
    connection.execute("BEGIN")
    connection.executemany(
        "INSERT INTO sentences (id, source, left_text, right_text) VALUES (?, ?, ?, ?)",
        (
            (i, f"Source sentence number {i}.", f"Output {i} of A.", f"Output {i} of B.")
            for i in range(1, sentences + 1)
        ),
    )
    connection.execute("COMMIT")
    connection.close()


def answered(path):
    connection = _connect(path)
    try:
        return connection.execute("SELECT count(*) FROM judgments").fetchone()[0]
    finally:
        connection.close()


app = Flask(__name__)
_connection = None
STACK = os.environ.get("BENCH_CEILING_STACK", "sqlite3")


def connection():
    # One connection for the worker: under gevent no request yields between
    # its SQLite calls, so requests never interleave inside a transaction.
    global _connection
    if _connection is None:
        _connection = _connect(os.environ["BENCH_CEILING_DB"])
    return _connection


NEXT_ITEM = (
    "SELECT id, source, left_text, right_text FROM sentences "
    "WHERE is_open = 1 AND id > ? ORDER BY is_open, id LIMIT 1"
)


def _item_payload(row, answered_count, status):
    item = None
    if row is not None:
        item = {"token": str(row[0]), "position": row[0], "source": row[1], "left": row[2], "right": row[3]}
    return {"status": status, "answered": answered_count, "tickets": [], "new_ticket": None, "item": item}


if STACK in ("flask-sqlalchemy", "flask-sqlalchemy-orm"):
    from flask_sqlalchemy import SQLAlchemy
    from sqlalchemy import event, select, text

    app.config["SQLALCHEMY_DATABASE_URI"] = "sqlite:///" + os.environ.get("BENCH_CEILING_DB", "")
    db = SQLAlchemy(app)

    with app.app_context():
        @event.listens_for(db.engine, "connect")
        def _pragmas(dbapi_connection, _record):
            for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=30000"):
                dbapi_connection.execute(f"PRAGMA {pragma}")

    if STACK == "flask-sqlalchemy-orm":
        class Sentence(db.Model):
            __tablename__ = "sentences"
            id = db.Column(db.Integer, primary_key=True)
            is_open = db.Column(db.Boolean, nullable=False, default=True)
            source = db.Column(db.Text, nullable=False)
            left_text = db.Column(db.Text, nullable=False)
            right_text = db.Column(db.Text, nullable=False)

        class Judgment(db.Model):
            __tablename__ = "judgments"
            id = db.Column(db.Integer, primary_key=True)
            volunteer = db.Column(db.Text, nullable=False)
            sentence_id = db.Column(db.Integer, nullable=False)
            choice = db.Column(db.Text, nullable=False)

        def _next_row(after):
            sentence = db.session.scalars(
                select(Sentence).where(Sentence.is_open.is_(True), Sentence.id > after)
                .order_by(Sentence.is_open, Sentence.id).limit(1)
            ).first()
            return None if sentence is None else (sentence.id, sentence.source, sentence.left_text, sentence.right_text)

        def _save(volunteer, sentence_id, choice):
            # Flushed by the next select (the session's autoflush).
            db.session.add(Judgment(volunteer=volunteer, sentence_id=sentence_id, choice=choice))
    else:
        _INSERT = text("INSERT INTO judgments (volunteer, sentence_id, choice) VALUES (:volunteer, :sentence, :choice)")
        _NEXT = text(NEXT_ITEM.replace("?", ":after"))

        def _next_row(after):
            return db.session.execute(_NEXT, {"after": after}).first()

        def _save(volunteer, sentence_id, choice):
            db.session.execute(_INSERT, {"volunteer": volunteer, "sentence": sentence_id, "choice": choice})

    def _judge(volunteer, sentence_id, choice):
        _save(volunteer, sentence_id, choice)
        row = _next_row(sentence_id) or _next_row(0)  # wrap around at the end
        db.session.commit()
        return row
elif STACK == "sqlite3":
    def _next_row(after):
        return connection().execute(NEXT_ITEM, (after,)).fetchone()

    def _judge(volunteer, sentence_id, choice):
        db = connection()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "INSERT INTO judgments (volunteer, sentence_id, choice) VALUES (?, ?, ?)",
                (volunteer, sentence_id, choice),
            )
            row = db.execute(NEXT_ITEM, (sentence_id,)).fetchone()
            if row is None:  # wrap around at the end: a volunteer never runs out
                row = db.execute(NEXT_ITEM, (0,)).fetchone()
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return row
else:
    raise RuntimeError(f"BENCH_CEILING_STACK: sqlite3, flask-sqlalchemy or flask-sqlalchemy-orm, not {STACK!r}")


@app.get("/c/<slug>/api/item")
def api_item(slug):
    return jsonify(_item_payload(_next_row(0), 0, "ok"))


@app.post("/c/<slug>/api/judgment")
def api_judgment(slug):
    data = request.get_json(silent=True)
    if not isinstance(data, dict) or data.get("choice") not in CHOICES or not isinstance(data.get("token"), str):
        return jsonify({"status": "error"}), 400
    try:
        sentence_id = int(data["token"])
    except ValueError:
        return jsonify({"status": "error"}), 400
    volunteer = request.headers.get("X-Bench-Volunteer", "anonymous")
    return jsonify(_item_payload(_judge(volunteer, sentence_id, data["choice"]), 0, "accepted"))
