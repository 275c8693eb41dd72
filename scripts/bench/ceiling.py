"""The ceiling for bench_judging.py: the judging endpoint as a plain Flask +
Flask-SQLAlchemy app would write it, served by the same command as Bozka.

Each answer adds one mapped object (a judgment row) and reads the next item
as a mapped object by one indexed ``select()``, then commits; no log-in, no
counters, no controls. This is the ceiling issue 17 names (its 600-900
judgments/s with one gevent worker were reproduced by this app, not by
leaner ones on the ``sqlite3`` module or ``text()`` statements).

    BENCH_CEILING_DB=/tmp/c.sqlite3 BENCH_CEILING_SENTENCES=2000 gunicorn ... ceiling:app
"""
import os

from flask import Flask, jsonify, request
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import event, func, insert, select

app = Flask(__name__)
app.config["SQLALCHEMY_DATABASE_URI"] = "sqlite:///" + os.environ["BENCH_CEILING_DB"]
db = SQLAlchemy(app)


class Sentence(db.Model):
    __tablename__ = "sentences"
    __table_args__ = (db.Index("ix_ceiling_next", "is_open", "id"),)
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


with app.app_context():
    @event.listens_for(db.engine, "connect")
    def _pragmas(dbapi_connection, _record):  # as Bozka's SQLite: write-ahead log
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=30000"):
            dbapi_connection.execute(f"PRAGMA {pragma}")

    db.create_all()
    if not db.session.scalar(select(func.count(Sentence.id))):
        db.session.execute(insert(Sentence), [
            {"id": i, "source": f"Source sentence number {i}.", "left_text": f"Output {i} of A.",
             "right_text": f"Output {i} of B."} for i in range(1, int(os.environ["BENCH_CEILING_SENTENCES"]) + 1)])
        db.session.commit()


def next_item(after):
    sentence = db.session.scalars(
        select(Sentence).where(Sentence.is_open.is_(True), Sentence.id > after)
        .order_by(Sentence.is_open, Sentence.id).limit(1)).first()
    if sentence is None:
        return None
    item = {"token": str(sentence.id), "position": sentence.id, "source": sentence.source}
    if os.environ.get("BENCH_CEILING_PROTOCOL") == "da":
        return item | {"translation": sentence.left_text}
    if os.environ.get("BENCH_CEILING_PROTOCOL") == "esa":
        return item | {"translation": sentence.left_text, "previous": []}
    return item | {"left": sentence.left_text, "right": sentence.right_text}


@app.get("/c/<slug>/api/item")
def api_item(slug):
    return jsonify({"status": "ok", "item": next_item(0)})


@app.post("/c/<slug>/api/judgment")
def api_judgment(slug):
    data = request.get_json(silent=True) or {}
    # A pairwise choice, or a DA score, or an ESA score and spans (stored as text: the ceiling keeps one table).
    answer = data.get("choice") if data.get("choice") in ("left", "right", "equal") else data.get("score")
    if answer is not None and "spans" in data:
        answer = f"{answer} {data['spans']}"
    if answer is None or not str(data.get("token", "")).isdigit():
        return jsonify({"status": "error"}), 400
    sentence_id = int(data["token"])
    db.session.add(Judgment(volunteer=request.headers.get("X-Bench-Volunteer", "?"), sentence_id=sentence_id,
                            choice=str(answer)))
    item = next_item(sentence_id) or next_item(0)  # the select flushes the new row; wrap around at the end
    db.session.commit()
    return jsonify({"status": "accepted", "answered": 0, "tickets": [], "new_ticket": None, "item": item})
