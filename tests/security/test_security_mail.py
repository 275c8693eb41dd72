"""Mail outside the request (issue 21, item 3), through the test client and
a real SMTP conversation on loopback: a mail server that is down never
fails a request and its errors reach the organisers; one that accepts gets
each mail once, even from two senders at once; registration and password
reset say nothing about which emails have accounts."""
import logging
import statistics
import threading
import time

from sqlalchemy import func, select

from app.extensions import db
from app.models import OutboxMail, User
from app.services import outbox
from helpers import csrf_token, register
from security_helpers import login, make_staff
from smtp_sink import SmtpSink, closed_port


def _mail_server(app, port, **settings):
    app.config.update(MAIL_SERVER="127.0.0.1", MAIL_PORT=port, MAIL_USE_TLS=False, **settings)


def _reset(client, email):
    token = csrf_token(client, "/reset")
    return client.post("/reset", data={"csrf_token": token, "email": email})


def _flashes(client):
    with client.session_transaction() as session:
        return session.get("_flashes")


def _answer(response, client):
    """What a visitor can see of an answer: status, target, body and the message shown next."""
    return response.status_code, response.headers.get("Location"), response.get_data(as_text=True), _flashes(client)


def test_a_mail_server_that_is_down_fails_no_request_and_organisers_see_it(app, client, make_campaign, caplog):
    make_campaign()
    _mail_server(app, closed_port(), MAIL_MAX_ATTEMPTS=2)
    assert register(client).status_code == 302
    client.post("/logout", data={"csrf_token": csrf_token(client, "/c/test/welcome")})
    assert register(app.test_client(), username="ane2").status_code == 302  # the taken email: a notice
    for email in ("ane@example.org", "nobody@example.org"):
        assert _reset(app.test_client(), email).status_code == 302
    assert db.session.scalar(select(func.count(OutboxMail.id))) == 3  # confirmation, notice, reset

    with caplog.at_level(logging.WARNING, logger="bozka.mail"):
        assert outbox.send_due(app.config) == 0
    mails = db.session.scalars(select(OutboxMail)).all()
    assert {(m.status, m.attempts) for m in mails} == {("queued", 1)}
    assert all("ConnectionRefusedError" in m.last_error for m in mails)
    assert "not sent (try 1)" in caplog.text
    # The last try: given up, the error kept and logged.
    with caplog.at_level(logging.WARNING, logger="bozka.mail"):
        outbox.send_due(app.config, now=max(m.next_attempt_at for m in mails))
    db.session.expire_all()
    assert {m.status for m in db.session.scalars(select(OutboxMail))} == {"failed"}
    assert "failed for good after 2 tries" in caplog.text

    make_staff()
    make_staff("admin")
    organiser, admin = app.test_client(), app.test_client()
    login(organiser, "organiser@example.org")
    login(admin, "admin@example.org")
    page = admin.get("/organiser/").get_data(as_text=True)
    assert "3 emails could not be sent." in page and "ConnectionRefusedError" in page
    assert "Reset your Bozka password" in page  # the subject says which mail
    # An organiser sees how many; which, and to whom, could be another campaign's: the admins'.
    page = organiser.get("/organiser/").get_data(as_text=True)
    assert "3 emails could not be sent." in page and "ConnectionRefusedError" not in page
    assert "Reset your Bozka password" not in page and "An administrator sees which emails failed" in page


def test_retries_back_off_and_a_refusal_is_final(app):
    assert [outbox.retry_delay({"MAIL_RETRY_SECONDS": 30}, n) for n in (1, 2, 3, 9)] == [30, 60, 120, 3600]
    import smtplib

    assert outbox.is_permanent(smtplib.SMTPRecipientsRefused({"a@b": (550, b"no such user")}))
    assert not outbox.is_permanent(smtplib.SMTPResponseException(451, b"try later"))
    assert not outbox.is_permanent(ConnectionRefusedError())


def test_an_accepting_server_gets_each_mail_once_from_two_racing_senders(app):
    sink = SmtpSink().start()
    try:
        _mail_server(app, sink.port)
        for n in range(12):
            outbox.enqueue(f"v{n}@example.org", f"Mail {n}", f"Body {n}\n.leading dot\n")
        db.session.commit()
        start, counts = threading.Barrier(2), []

        def sender():
            with app.app_context():
                start.wait()
                counts.append(outbox.send_due(app.config))

        threads = [threading.Thread(target=sender) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert sum(counts) == 12, counts
        received = sorted(message["Subject"] for _recipients, message in sink.messages)
        assert received == sorted(f"Mail {n}" for n in range(12))  # each once
        body = sink.messages[0][1].get_content()
        assert "\n.leading dot" in body and "..leading" not in body
        db.session.expire_all()
        assert {m.status for m in db.session.scalars(select(OutboxMail))} == {"sent"}
        assert outbox.send_due(app.config) == 0  # nothing left, nothing sent again
    finally:
        sink.stop()


def test_a_taken_email_is_answered_as_a_new_one_and_its_owner_is_told(app, make_campaign):
    make_campaign()
    fresh, again = app.test_client(), app.test_client()
    first = register(fresh, username="ane", email="ane@example.org")
    second = register(again, username="ane2", email="ANE@example.org")
    assert _answer(first, fresh) == _answer(second, again)
    assert db.session.scalar(select(func.count(User.id))) == 1  # no second account
    notice = db.session.scalars(select(OutboxMail).order_by(OutboxMail.id.desc())).first()
    assert notice.recipient == "ane@example.org"
    assert notice.subject == "Someone tried to register on Bozka with your email"
    assert "Hello ane," in notice.body and "http://localhost/login" in notice.body
    assert "http://localhost/reset" in notice.body


def test_a_reset_is_answered_alike_for_known_and_unknown_emails(app, make_campaign):
    make_campaign()
    register(app.test_client())
    times = {"ane@example.org": [], "nobody@example.org": []}
    answers = {}
    for _round in range(5):
        for email in times:
            client = app.test_client()
            token = csrf_token(client, "/reset")
            started = time.perf_counter()
            response = client.post("/reset", data={"csrf_token": token, "email": email})
            times[email].append(time.perf_counter() - started)
            answers[email] = _answer(response, client)
    assert answers["ane@example.org"] == answers["nobody@example.org"]
    assert answers["ane@example.org"][0] == 302
    for email, spent in times.items():
        print(f"reset for {email}: median {statistics.median(spent) * 1000:.1f} ms")
    queued = db.session.scalars(select(OutboxMail.recipient).where(OutboxMail.subject == "Reset your Bozka password"))
    assert set(queued) == {"ane@example.org"}  # nothing for the unknown email
