"""Names people cannot confuse (issue 21, item 6): a username whose Unicode
TR39 skeleton (ICU's spoof checker, through PyICU) is an existing name's,
or that mixes scripts, is refused with a message that says why."""
import sqlite3

import pytest
from sqlalchemy import select, text

from flask_babel import LazyString

from app.auth.forms import USERNAME_PROBLEMS
from app.extensions import db
from app.languages import LANGUAGE_COOKIE
from app.models import User
from app.services import accounts, names
from databases import on_postgresql
from helpers import register
from test_migrations import flask_db

LOOKALIKE = "looks too much like an existing one"
MIXED = "mixes letters of different scripts"
# Basque and Spanish names as volunteers write them.
ORDINARY = ["Iñaki", "Begoña", "José_Mari", "Ainhoa.Etxeberria", "Zuriñe", "Núñez-García", "Gorka_Agirre", "Ángela"]


def test_lookalikes_share_a_skeleton():
    assert names.skeleton("gі5") == names.skeleton("gi5")  # Cyrillic і
    assert names.skeleton("paypaI") == names.skeleton("paypal")  # capital I
    assert names.skeleton("PAYPAL") == names.skeleton("paypal")
    assert names.skeleton("ѕсоре") == names.skeleton("scope")  # all Cyrillic
    assert names.skeleton("rnaria") == names.skeleton("maria")
    assert names.skeleton("Iñaki") != names.skeleton("Inaki")  # an accent is a different letter


def test_mixed_scripts():
    assert names.mixes_scripts("аdmin")  # Cyrillic а
    assert names.mixes_scripts("gі5")
    assert names.mixes_scripts("ab١2")  # two systems of digits
    for name in ORDINARY + ["ѕсоре", "علی5", "山田たろう", "Ωμέγα"]:
        assert not names.mixes_scripts(name), name


def _sign_up(app, username, email):
    client = app.test_client()
    return register(client, username=username, email=email)


def _made(username):
    db.session.rollback()
    return db.session.scalar(select(User.id).where(User.username == username)) is not None


@pytest.mark.parametrize("existing, newcomer, message", [
    ("gi5", "gі5", LOOKALIKE),
    ("paypal", "paypaI", LOOKALIKE),
    ("Paypal", "PAYPAI", LOOKALIKE),
    ("scope", "ѕсоре", LOOKALIKE),
    ("gi5", "GI5", "This username is taken."),
])
def test_a_lookalike_of_an_existing_name_is_refused_with_the_reason(app, make_campaign, existing, newcomer, message):
    make_campaign()
    assert _sign_up(app, existing, "first@example.org").status_code == 302
    answer = _sign_up(app, newcomer, "second@example.org")
    assert answer.status_code == 200
    page = answer.get_data(as_text=True)
    assert 'id="username-err"' in page and message in page  # beside the field, in the form
    assert not _made(newcomer)


def test_a_name_that_mixes_scripts_is_refused_even_when_alone(app, make_campaign):
    make_campaign()
    answer = _sign_up(app, "аdmin", "admin@example.org")
    assert answer.status_code == 200
    assert MIXED in answer.get_data(as_text=True)
    assert not _made("аdmin")


def test_ordinary_basque_and_spanish_names_are_accepted(app, make_campaign):
    make_campaign()
    for number, name in enumerate(ORDINARY):
        assert _sign_up(app, name, f"v{number}@example.org").status_code == 302, name
        assert _made(name)
    assert accounts.username_problem("Inaki") is None  # beside Iñaki


def test_the_message_is_in_the_visitors_language(app, make_campaign):
    make_campaign()
    _sign_up(app, "paypal", "first@example.org")
    client = app.test_client()
    client.set_cookie(LANGUAGE_COOKIE, "eu", domain="localhost")
    answer = register(client, username="paypaI", email="second@example.org")
    # Made with gettext (lazily, in the request's language); the catalogues
    # gain the message itself when they are next updated.
    assert answer.status_code == 200 and 'lang="eu"' in answer.get_data(as_text=True)
    assert isinstance(USERNAME_PROBLEMS["lookalike"], LazyString)


def test_the_check_is_one_indexed_look_up(app):
    accounts.create_user("a@example.org", "paypal", "correct horse 1")
    db.session.commit()
    assert db.session.scalar(select(User.username_skeleton)) == "paypal"
    if on_postgresql():
        return
    plan = db.session.execute(text("EXPLAIN QUERY PLAN SELECT id FROM users WHERE username_skeleton = :s"),
                              {"s": "paypal"}).all()
    assert any("ix_users_username_skeleton" in str(row) for row in plan), plan


def test_staff_accounts_and_the_command_line_refuse_lookalikes_too(app):
    accounts.create_user("organiser@example.org", "organiser", "correct horse 1", role="organiser")
    db.session.commit()
    runner = app.test_cli_runner()
    result = runner.invoke(args=["user", "create", "--role", "organiser", "--email", "o2@example.org",
                                 "--username", "0rganiser", "--password", "correct horse 2"])
    assert result.exit_code != 0 and LOOKALIKE in result.output
    result = runner.invoke(args=["user", "create", "--role", "researcher", "--email", "r@example.org",
                                 "--username", "Ikerlari", "--password", "correct horse 2"])
    assert result.exit_code == 0, result.output


def test_the_migration_gives_existing_users_their_skeletons(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    flask_db(url, tmp_path, "upgrade", "f3b7d9e1a524")  # the revision before the column
    connection = sqlite3.connect(tmp_path / "old.sqlite3")
    with connection:
        connection.executemany(
            "INSERT INTO users (email, username, password_hash, role, hide_from_ranking, created_at) "
            "VALUES (?, ?, 'x', 'volunteer', 0, '2026-01-01')",
            [("a@example.org", "gi5"), ("b@example.org", "PayPaI"), ("c@example.org", "paypal")])
    connection.close()
    flask_db(url, tmp_path, "upgrade")
    connection = sqlite3.connect(tmp_path / "old.sqlite3")
    rows = dict(connection.execute("SELECT username, username_skeleton FROM users"))
    connection.close()
    # Two old names may share a skeleton: only new names are refused.
    assert rows == {"gi5": "gi5", "PayPaI": "paypal", "paypal": "paypal"}
