"""The ceiling for bench_judging.py: the least a judging endpoint can do.

A minimal Flask app, served by the same gunicorn command as Bozka, on
SQLite in WAL mode. Each answer inserts one row and returns the next item
from one indexed query; nothing else (no login, no counters, no controls).
Its throughput is the best that one worker process on this machine can do
with Flask + SQLite, so Bozka's figure is read against it.

    BENCH_CEILING_DB=/tmp/x.sqlite3 gunicorn -k gevent -w 1 bench_judging_ceiling:app

``prepare(path, sentences)`` creates the database; the benchmark calls it
before starting the server.
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


@app.get("/c/<slug>/api/item")
def api_item(slug):
    row = connection().execute(NEXT_ITEM, (0,)).fetchone()
    return jsonify(_item_payload(row, 0, "ok"))


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
    db = connection()
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(
            "INSERT INTO judgments (volunteer, sentence_id, choice) VALUES (?, ?, ?)",
            (volunteer, sentence_id, data["choice"]),
        )
        row = db.execute(NEXT_ITEM, (sentence_id,)).fetchone()
        if row is None:  # wrap around at the end: a volunteer never runs out
            row = db.execute(NEXT_ITEM, (0,)).fetchone()
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return jsonify(_item_payload(row, 0, "accepted"))
