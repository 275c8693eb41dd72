"""Bounded sockets (issue 21, item 5), through Flask-SocketIO's test client:
at most BOZKA_SOCKETS_PER_ACCOUNT connections per account, the oldest
closed first; logging out and a new password close the account's sockets,
and no one else's. Against a real server: test_security_sockets_live.py."""
from flask import current_app
from sqlalchemy import select

from app import realtime, socket_accounts
from app.extensions import db, socketio
from app.models import User
from app.services import accounts
from helpers import csrf_token, register


def _volunteer(app, username):
    client = app.test_client()
    assert register(client, username=username, email=f"{username}@example.org").status_code == 302
    return client


def _sid(sio):
    return socketio.server.manager.sid_from_eio_sid(sio.eio_sid, "/")


def _user_id(username):
    return db.session.scalar(select(User.id).where(User.username == username))


def _sockets(app, client, count):
    made = [socketio.test_client(app, flask_test_client=client) for _ in range(count)]
    assert all(sio.is_connected() for sio in made)
    return made


def test_a_new_socket_beyond_the_limit_closes_the_accounts_oldest(app, make_campaign):
    make_campaign()
    assert app.config["BOZKA_SOCKETS_PER_ACCOUNT"] == 5  # the default
    ane, other = _volunteer(app, "ane"), _volunteer(app, "jon")
    theirs = _sockets(app, other, 2)
    mine = _sockets(app, ane, 5)
    sids = [_sid(sio) for sio in mine]
    assert socket_accounts.sockets_of(_user_id("ane")) == sids
    assert mine[0].emit("join", {"campaign": "test"}, callback=True) == {"ok": True}

    sixth = socketio.test_client(app, flask_test_client=ane)
    assert sixth.is_connected()
    assert not mine[0].is_connected()  # the oldest went
    assert all(sio.is_connected() for sio in mine[1:] + theirs)
    assert socket_accounts.sockets_of(_user_id("ane")) == sids[1:] + [_sid(sixth)]
    # The closed socket left its rooms: a broadcast no longer reaches it.
    assert sids[0] not in [sid for sid, _eio in socketio.server.manager.get_participants(
        "/", realtime.user_room(_user_id("ane")))]

    seventh = socketio.test_client(app, flask_test_client=ane)
    assert seventh.is_connected() and not mine[1].is_connected()
    assert len(socket_accounts.sockets_of(_user_id("ane"))) == 5
    assert len(socket_accounts.sockets_of(_user_id("jon"))) == 2


def test_the_limit_is_a_setting(app, make_campaign):
    make_campaign()
    current_app.config["BOZKA_SOCKETS_PER_ACCOUNT"] = 1
    client = _volunteer(app, "ane")
    first, second = _sockets(app, client, 1)[0], socketio.test_client(app, flask_test_client=client)
    assert second.is_connected() and not first.is_connected()
    assert socket_accounts.sockets_of(_user_id("ane")) == [_sid(second)]


def test_logging_out_closes_the_accounts_sockets(app, make_campaign):
    make_campaign()
    ane, other = _volunteer(app, "ane"), _volunteer(app, "jon")
    mine, theirs = _sockets(app, ane, 3), _sockets(app, other, 1)
    for sio in mine + theirs:
        assert sio.emit("join", {"campaign": "test"}, callback=True) == {"ok": True}
    token = csrf_token(ane, "/c/test/welcome")
    assert ane.post("/logout", data={"csrf_token": token}).status_code == 200
    assert not any(sio.is_connected() for sio in mine)
    assert theirs[0].is_connected()
    assert socket_accounts.sockets_of(_user_id("ane")) == []
    # Logged out, it cannot come back.
    assert not socketio.test_client(app, flask_test_client=ane).is_connected()


def test_a_new_password_closes_the_accounts_sockets(app, make_campaign):
    make_campaign()
    ane, other = _volunteer(app, "ane"), _volunteer(app, "jon")
    mine, theirs = _sockets(app, ane, 2), _sockets(app, other, 1)
    user = db.session.get(User, _user_id("ane"))
    link = f"/reset/{accounts.make_token(app.config['SECRET_KEY'], 'reset', user)}"
    stranger = app.test_client()  # the reset link opened on another device
    answer = stranger.post(link, data={"csrf_token": csrf_token(stranger, link),
                                       "password": "a brand new secret 1", "password2": "a brand new secret 1"})
    assert answer.status_code == 302
    assert not any(sio.is_connected() for sio in mine)
    assert theirs[0].is_connected()
    assert not socketio.test_client(app, flask_test_client=ane).is_connected()


def test_the_command_line_password_closes_sockets_in_its_process(app, make_campaign):
    """``flask user password`` runs in its own process: there it reaches the
    servers through the message queue; here (one process) directly."""
    make_campaign()
    mine = _sockets(app, _volunteer(app, "ane"), 2)
    result = app.test_cli_runner().invoke(args=["user", "password", "ane@example.org",
                                                "--password", "a brand new secret 1"])
    assert result.exit_code == 0, result.output
    assert not any(sio.is_connected() for sio in mine)


def test_a_password_set_where_the_sockets_are_not_reached_closes_them_at_the_next_look(app, make_campaign):
    """``flask user password`` with no message queue reaches no server: each
    server's ticker finds the new password in the database and closes the
    sockets opened before it, not the ones of the new session, nor another
    account's."""
    make_campaign()
    ane, other = _volunteer(app, "ane"), _volunteer(app, "jon")
    mine, theirs = _sockets(app, ane, 2), _sockets(app, other, 1)
    user = db.session.get(User, _user_id("ane"))
    user.set_password("a brand new secret 1")  # as another process does it: nothing here hears of it
    db.session.commit()
    assert all(sio.is_connected() for sio in mine)
    again = app.test_client()
    again.post("/login", data={"csrf_token": csrf_token(again, "/login"), "email": "ane@example.org",
                               "password": "a brand new secret 1"})
    new = _sockets(app, again, 1)[0]

    assert socket_accounts.close_ended_sessions() == 2
    assert not any(sio.is_connected() for sio in mine)
    assert new.is_connected() and theirs[0].is_connected()
    assert socket_accounts.sockets_of(_user_id("ane")) == [_sid(new)]
    assert socket_accounts.close_ended_sessions() == 0  # looking again closes nothing more
