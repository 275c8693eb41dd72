"""Migration d4e9f2a6b815 (issue 31): existing campaigns keep the five
prizes of the ranking they had; practice items get no other explanation."""
from sqlalchemy import create_engine, inspect, text

from test_migrations import _insert, flask_db

BEFORE = "d7f2b9c4e618"


def test_existing_campaigns_keep_five_prizes_and_practice_items_no_translation(tmp_path):
    url = f"sqlite:///{tmp_path / 'prizes.sqlite3'}"
    flask_db(url, tmp_path, "upgrade", BEFORE)
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            inspector = inspect(connection)
            for cid in (1, 2):
                _insert(connection, inspector, "campaigns", id=cid, slug=f"c{cid}")
            _insert(connection, inspector, "practice_items", id=1, campaign_id=1, number=1, why="Because.")
        flask_db(url, tmp_path, "upgrade", "d4e9f2a6b815")
        with engine.connect() as connection:
            assert connection.execute(text("SELECT id, leaderboard_prizes FROM campaigns ORDER BY id")).all() == [
                (1, 5), (2, 5)]
            assert connection.execute(text("SELECT why, why_texts FROM practice_items")).all() == [("Because.", None)]
        flask_db(url, tmp_path, "downgrade", BEFORE)
        with engine.connect() as connection:
            assert "leaderboard_prizes" not in {c["name"] for c in inspect(connection).get_columns("campaigns")}
            assert "why_texts" not in {c["name"] for c in inspect(connection).get_columns("practice_items")}
    finally:
        engine.dispose()
