"""Schema migrations: ``flask db upgrade`` on an empty database (SQLite, and
PostgreSQL when BOZKA_TEST_DATABASE_URL is set) gives exactly the models."""
import os
import subprocess
import sys

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from app import models  # noqa: F401 (the tables)
from app.extensions import include_object, db
from databases import scratch_database

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def flask_db(url, tmp_path, *args):
    env = {**os.environ, "DATABASE_URL": url, "BOZKA_INSTANCE": str(tmp_path), "SECRET_KEY": "migrations"}
    env.pop("SOCKETIO_MESSAGE_QUEUE", None)
    command = [os.path.join(os.path.dirname(sys.executable), "flask"), "--app", "wsgi", "db", *args]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"flask db {' '.join(args)}:\n{done.stdout}\n{done.stderr}"


def differences(url):
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"compare_type": True, "include_object": include_object}
            )
            return compare_metadata(context, db.metadata)
    finally:
        engine.dispose()


def test_upgrade_from_empty_matches_the_models_and_downgrades(tmp_path):
    with scratch_database(tmp_path, "bozka_migrations") as url:
        flask_db(url, tmp_path, "upgrade")
        assert differences(url) == []
        engine = create_engine(url)
        try:
            inspector = inspect(engine)
            # The hand-written next-item index exists too.
            assert "ix_sentences_next" in {index["name"] for index in inspector.get_indexes("sentences")}
            assert "uq_items_participation_slot" in {
                index["name"] for index in inspector.get_indexes("items")
            }
        finally:
            engine.dispose()
        flask_db(url, tmp_path, "downgrade", "base")
        engine = create_engine(url)
        try:
            assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
        finally:
            engine.dispose()
        flask_db(url, tmp_path, "upgrade")
        assert differences(url) == []


def _row(inspector, table, **values):
    """A row with a placeholder in every required column (SQLite does not
    check foreign keys unless asked)."""
    for column in inspector.get_columns(table):
        if column["nullable"] or column["name"] in values or column.get("autoincrement") is True:
            continue
        kind = str(column["type"]).upper()
        values[column["name"]] = 1 if "INT" in kind or "BOOL" in kind else (
            "2026-01-01 00:00:00" if "DATE" in kind else "x")
    values.pop("id", None)
    return values


def _insert(connection, inspector, table, id=None, **values):
    """Insert a row (``_row``), with the id given if any."""
    from sqlalchemy import text

    row = _row(inspector, table, **values) | ({"id": id} if id is not None else {})
    connection.execute(text(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join(':' + n for n in row)})"), row)


def test_stored_english_dismissal_reasons_become_codes(tmp_path):
    """Rows written before reasons were codes are converted, and back."""
    from sqlalchemy import text

    url = f"sqlite:///{tmp_path / 'reasons.sqlite3'}"
    flask_db(url, tmp_path, "upgrade", "b2d4f6a8c013")
    engine = create_engine(url)
    sentence = "failed one of the first control sentences"
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")  # rows without their campaign and volunteer
            inspector = inspect(connection)
            for table, column in (("participations", "dismissed_reason"), ("items", "discarded_reason")):
                _insert(connection, inspector, table, **{column: sentence})
        flask_db(url, tmp_path, "upgrade")
        with engine.connect() as connection:
            assert connection.scalar(text("SELECT dismissed_reason FROM participations")) == "first_controls_failed"
            assert connection.scalar(text("SELECT discarded_reason FROM items")) == "first_controls_failed"
        flask_db(url, tmp_path, "downgrade", "b2d4f6a8c013")
        with engine.connect() as connection:
            assert connection.scalar(text("SELECT dismissed_reason FROM participations")) == sentence
    finally:
        engine.dispose()


def test_every_existing_organiser_keeps_every_existing_campaign(tmp_path):
    """Campaign organisers (issue 28): before, every organiser managed every
    campaign, so the upgrade gives each organiser each campaign there is; the
    downgrade makes admins organisers again (the older code knows no admin)."""
    from sqlalchemy import text

    url = f"sqlite:///{tmp_path / 'organisers.sqlite3'}"
    flask_db(url, tmp_path, "upgrade", "b6e1f9d3a720")
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            inspector = inspect(connection)
            for slug in ("one", "two"):
                _insert(connection, inspector, "campaigns", slug=slug)
            for name, role in (("ori", "organiser"), ("ane", "organiser"), ("res", "researcher"), ("vol", "volunteer")):
                _insert(connection, inspector, "users", username=name, email=f"{name}@example.org", role=role)
        flask_db(url, tmp_path, "upgrade", "c4a8e2f6b913")
        pairs = ("SELECT campaigns.slug, users.username FROM campaign_organisers JOIN campaigns ON campaigns.id = "
                 "campaign_organisers.campaign_id JOIN users ON users.id = campaign_organisers.user_id")
        with engine.begin() as connection:
            assert sorted(connection.execute(text(pairs)).all()) == [
                ("one", "ane"), ("one", "ori"), ("two", "ane"), ("two", "ori")]
            connection.execute(text("UPDATE users SET role = 'admin' WHERE username = 'ori'"))
        flask_db(url, tmp_path, "downgrade", "b6e1f9d3a720")
        with engine.connect() as connection:
            assert "campaign_organisers" not in inspect(connection).get_table_names()
            assert connection.scalar(text("SELECT role FROM users WHERE username = 'ori'")) == "organiser"
    finally:
        engine.dispose()


def test_suspicious_counters_are_filled_from_the_answers_given(tmp_path):
    """Issue 30: the report's counters on each volunteer's row, counted from
    the answers already stored (sides, too fast, the busiest minute)."""
    from sqlalchemy import text

    url = f"sqlite:///{tmp_path / 'suspicious.sqlite3'}"
    flask_db(url, tmp_path, "upgrade", "c8f2a4d6e913")
    engine = create_engine(url)
    answers = [("2026-01-01 10:00:05", "left", 0), ("2026-01-01 10:00:50", "left", 1),
               ("2026-01-01 10:01:10", "right", 0), ("2026-01-01 10:00:30", "equal", 0), (None, None, 0)]
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            inspector = inspect(connection)
            _insert(connection, inspector, "participations", id=7)
            for position, (at, choice, fast) in enumerate(answers, 1):
                _insert(connection, inspector, "items", participation_id=7, position=position, token=f"t{position}",
                        answered_at=at, choice=choice, too_fast=fast)
        flask_db(url, tmp_path, "upgrade")
        with engine.connect() as connection:
            assert connection.execute(text(
                "SELECT answers_total, answers_left, answers_right, answers_equal, answers_too_fast, "
                "busiest_minute, minute_answers, minute_at FROM participations WHERE id = 7")).one() == (
                4, 2, 1, 1, 1, 3, 1, "2026-01-01 10:01:00.000000")
        flask_db(url, tmp_path, "downgrade", "c8f2a4d6e913")
    finally:
        engine.dispose()


def test_research_row_counters_are_filled_from_the_answers_given(tmp_path):
    """Issue 30: each volunteer's rows of the judgments exports (controls,
    tests, tests too fast; a quality-control item not yet paired with its
    original is no row), counted from the answers already stored."""
    from sqlalchemy import text

    url = f"sqlite:///{tmp_path / 'research.sqlite3'}"
    flask_db(url, tmp_path, "upgrade", "8a3f587f1b57")
    engine = create_engine(url)
    # (answered, control, too fast, qc kind, original)
    answers = [(True, 3, 0, None, None), (True, None, 0, None, None), (True, None, 1, None, None),
               (True, None, 0, "bad_reference", None), (True, None, 1, "bad_reference", 2),
               (False, None, 0, None, None)]
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            inspector = inspect(connection)
            _insert(connection, inspector, "participations", id=7)
            for position, (answered, control, fast, kind, original) in enumerate(answers, 1):
                _insert(connection, inspector, "items", participation_id=7, position=position, token=f"t{position}",
                        answered_at="2026-01-01 10:00:00" if answered else None, control_id=control,
                        too_fast=fast, qc_kind=kind, original_item_id=original)
        flask_db(url, tmp_path, "upgrade")
        with engine.connect() as connection:
            assert connection.execute(text(
                "SELECT research_controls, research_tests, research_tests_too_fast FROM participations "
                "WHERE id = 7")).one() == (1, 3, 2)
        flask_db(url, tmp_path, "downgrade", "8a3f587f1b57")
    finally:
        engine.dispose()


def test_valid_ticket_counts_are_filled_from_the_tickets(tmp_path):
    from sqlalchemy import text

    url = f"sqlite:///{tmp_path / 'tickets.sqlite3'}"
    flask_db(url, tmp_path, "upgrade", "e4b9c2d7f160")
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            inspector = inspect(connection)
            for pid in (7, 8):
                _insert(connection, inspector, "participations", id=pid, user_id=pid)
            for number, (pid, voided) in enumerate(((7, None), (7, "2026-01-02 00:00:00"), (7, None), (8, None)), 1):
                _insert(connection, inspector, "tickets", participation_id=pid, number=number, voided_at=voided)
        flask_db(url, tmp_path, "upgrade")
        with engine.connect() as connection:
            assert connection.execute(text("SELECT id, tickets_valid FROM participations ORDER BY id")).all() == [
                (7, 2), (8, 1)]
        flask_db(url, tmp_path, "downgrade", "e4b9c2d7f160")
    finally:
        engine.dispose()


def test_campaign_volunteer_counts_are_filled_from_the_volunteers(tmp_path):
    from sqlalchemy import text

    url = f"sqlite:///{tmp_path / 'volunteers.sqlite3'}"
    flask_db(url, tmp_path, "upgrade", "f2c6a9d4b371")
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            inspector = inspect(connection)
            for cid in (1, 2, 3):
                _insert(connection, inspector, "campaigns", id=cid, slug=f"c{cid}")
            for pid, (cid, dismissed) in enumerate(((1, None), (1, "2026-01-02 00:00:00"), (1, None), (2, None)), 1):
                _insert(connection, inspector, "participations", id=pid, user_id=pid, campaign_id=cid,
                        dismissed_at=dismissed)
        flask_db(url, tmp_path, "upgrade")
        with engine.connect() as connection:
            assert connection.execute(text("SELECT id, volunteers FROM campaigns ORDER BY id")).all() == [
                (1, 2), (2, 1), (3, 0)]
        flask_db(url, tmp_path, "downgrade", "f2c6a9d4b371")
    finally:
        engine.dispose()


def test_da_running_sums_are_filled_from_the_answers_given(tmp_path):
    """Issue 30: a DA volunteer's sums, folded from the answers already
    stored (a bad reference after its original, one before it, a repeat, one
    answer below the reading floor), as their answers would have moved them."""
    import math
    import statistics

    from sqlalchemy import text

    url = f"sqlite:///{tmp_path / 'da_sums.sqlite3'}"
    flask_db(url, tmp_path, "upgrade", "d5e1f7a3b820")
    engine = create_engine(url)
    # (id, position, kind, score, too fast, system, original)
    answers = [(1, 1, None, 80, 0, 1, None), (2, 2, "bad_reference", 30, 0, 1, 1), (3, 3, "bad_reference", 20, 0, 2, 4),
               (4, 4, None, 70, 0, 2, None), (5, 5, "repeat", 76, 0, 1, 1), (6, 6, None, 50, 1, 1, None)]
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            inspector = inspect(connection)
            for table, values in (("campaigns", dict(id=3, protocol="da", slug="da")),
                                  ("participations", dict(id=7, campaign_id=3))):
                _insert(connection, inspector, table, **values)
            for item_id, position, kind, score, fast, system, original in answers:
                _insert(connection, inspector, "items", id=item_id, participation_id=7, campaign_id=3,
                        position=position, token=f"t{position}", answered_at="2026-01-01 10:00:00", qc_kind=kind,
                        score=score, too_fast=fast, left_system_id=system, original_item_id=original)
        flask_db(url, tmp_path, "upgrade")
        with engine.connect() as connection:
            judge = connection.execute(text("SELECT * FROM da_judges WHERE participation_id = 7")).mappings().one()
            counted = [80, 30, 20, 70, 76]
            judge = dict(judge)
            sd = statistics.stdev(counted)
            assert math.isclose(judge.pop("z_scale"), 1 / sd) and math.isclose(judge.pop("z_shift"), statistics.fmean(counted) / sd)
            assert judge == {
                "participation_id": 7, "campaign_id": 3, "pairs": 2, "drop_sum": 50 + 50, "suspects": 0,
                "informative": 2, "copied_first": 0, "scores": 6, "score_sum": 326,
                "score_squares": 80**2 + 30**2 + 20**2 + 70**2 + 76**2 + 50**2, "first_scores": 5,
                "first_sum": 276, "first_squares": 80**2 + 30**2 + 20**2 + 70**2 + 76**2, "counted": 5,
                "counted_sum": 276, "counted_squares": 80**2 + 30**2 + 20**2 + 70**2 + 76**2, "tested_pairs": 2,
                "diff_sum": -100, "diff_squares": 5000, "status": "untested"}
            assert sorted(connection.execute(text("SELECT system_id, scores, total FROM da_judge_systems"))) == [
                (1, 2, 156), (2, 1, 70)]
            assert sorted(connection.execute(text("SELECT kind, items, total, original_total FROM da_judge_kinds"))) == [
                ("bad_reference", 2, 50, 150), ("repeat", 1, 76, 80)]
        flask_db(url, tmp_path, "downgrade", "d5e1f7a3b820")
    finally:
        engine.dispose()


def test_votes_and_pair_wins_are_counted_from_the_answers_given(tmp_path):
    """Issue 32: each pairwise slot's answers for each side (not "equal", not
    discarded, not unanswered) and each pair's sentences won, from the stored
    answers; existing campaigns keep the paper's assignment."""
    from sqlalchemy import text

    url = f"sqlite:///{tmp_path / 'wins.sqlite3'}"
    flask_db(url, tmp_path, "upgrade", "d4e9f2a6b815")
    engine = create_engine(url)
    # slot 1 (systems 1, 2): two answers for 1, one for 2 -> system 1 wins the sentence;
    # slot 2 (systems 1, 2): one each (and a discarded one for 2) -> nobody; slot 3: one for 2, one equal.
    answers = [(1, "left", 1, 2, None), (1, "right", 2, 1, None), (1, "left", 2, 1, None),
               (2, "left", 1, 2, None), (2, "right", 1, 2, None), (2, "right", 1, 2, "2026-01-02"),
               (3, "left", 2, 1, None), (3, "equal", 1, 2, None), (3, None, 1, 2, None)]
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            inspector = inspect(connection)
            _insert(connection, inspector, "campaigns", id=3, slug="pw")
            for slot in (1, 2, 3):
                _insert(connection, inspector, "slots", id=slot, sentence_id=slot, system_a_id=1, system_b_id=2)
            _insert(connection, inspector, "pair_totals", id=1, campaign_id=3, system_a_id=1, system_b_id=2)
            for position, (slot, choice, left, right, discarded) in enumerate(answers, 1):
                _insert(connection, inspector, "items", participation_id=10 + position, campaign_id=3,
                        position=position, token=f"t{position}", slot_id=slot, choice=choice, left_system_id=left,
                        right_system_id=right, answered_at="2026-01-01 10:00:00" if choice else None,
                        discarded_at=discarded)
        flask_db(url, tmp_path, "upgrade")
        with engine.connect() as connection:
            assert sorted(connection.execute(text("SELECT id, votes_a, votes_b FROM slots"))) == [
                (1, 2, 1), (2, 1, 1), (3, 0, 1)]
            shuffles = connection.execute(text("SELECT shuffle FROM slots")).scalars().all()
            assert len(set(shuffles)) == 3 and all(0 <= value < 2 ** 30 for value in shuffles)  # drawn per slot
            assert connection.execute(text("SELECT wins_a, wins_b, is_open, decided_id FROM pair_totals")).one() == (
                1, 1, 1, None)
            assert connection.execute(text("SELECT assignment, goal FROM campaigns")).one() == (
                "ebaluatoia", "ordering")
        flask_db(url, tmp_path, "downgrade", "d4e9f2a6b815")
    finally:
        engine.dispose()
