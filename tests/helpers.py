"""Helpers shared by the tests (imported as ``helpers``)."""
import os
import random
import re

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO = os.path.join(os.path.dirname(HERE), "app", "demo", "en-eu")


# Tests answer in microseconds and often pick one side: the campaigns of
# make_campaign and add_campaign have the reading floor and the signs that
# hold a volunteer off, unless a test sets them (tests/security/test_holds.py).
QUIET_SIGNS = {"fast_seconds_per_word": 0, "hold_min_tests": 0, "hold_fast_run": 0}


def quiet_demo_commands():
    """``flask`` arguments that turn the floor and the signs off in the demo
    campaigns of a live test site (whose browsers and scripts answer at once)."""
    quiet = [f"{name}={value}" for name, value in QUIET_SIGNS.items()]
    return [["campaign", "settings", slug, *quiet] for slug in ("demo-en-eu", "demo-en-ur", "demo-en-eu-da")]


def write_campaign(folder, sentences=12, systems=("A", "B", "C"), controls=20, identical=(), practice=0,
                   protocol="pairwise", reference=False, slug="test", **settings):
    """Write a small valid campaign folder (with ``practice`` items in
    practice.tsv if not 0; a DA campaign has no controls; ``reference``
    writes reference.txt); returns its path."""
    os.makedirs(os.path.join(folder, "systems"), exist_ok=True)
    with open(os.path.join(folder, "source.txt"), "w") as f:
        f.write("".join(f"Source sentence number {i}.\n" for i in range(1, sentences + 1)))
    for name in systems:
        with open(os.path.join(folder, "systems", f"{name}.txt"), "w") as f:
            for i in range(1, sentences + 1):
                same = i in identical
                f.write(f"Output {i}{'' if same else ' of ' + name}.\n")
    if reference:
        with open(os.path.join(folder, "reference.txt"), "w") as f:
            f.write("".join(f"The reference translation of sentence {i}.\n" for i in range(1, sentences + 1)))
    with open(os.path.join(folder, "controls.tsv"), "w") as f:
        f.write("source\tbetter\tworse\n")
        for i in range(1, controls + 1):
            f.write(f"Control {i}.\tGood {i}.\tBad {i}.\n")
    if practice:
        with open(os.path.join(folder, "practice.tsv"), "w") as f:
            f.write("source\tbetter\tworse\twhy\n")
            for i in range(1, practice + 1):
                f.write(f"Practice {i}.\tRight {i}.\tWrong {i}.\tBecause {i}.\n")
    if protocol == "pairwise" and settings:
        # The tests written for the imported pool answer its controls by
        # their texts; tests of generated controls ask for them (a manifest
        # without settings takes the default, generated).
        settings = {"control_source": "imported", **settings}
    settings_toml = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in settings.items())
    with open(os.path.join(folder, "campaign.toml"), "w") as f:
        f.write(
            f'slug = "{slug}"\nname = "Test campaign"\nsource_language = "en"\ntarget_language = "eu"\n'
            'source = "source.txt"\n'
            + ('controls = "controls.tsv"\n' if protocol == "pairwise" else f'protocol = "{protocol}"\n')
            + ('reference = "reference.txt"\n' if reference else "")
            + "[systems]\n"
            + "".join(f'{n} = "systems/{n}.txt"\n' for n in systems)
            + ("[settings]\n" + settings_toml if settings else "")
        )
    return folder


def csrf_token(client, url):
    page = client.get(url)
    match = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page.get_data(as_text=True))
    if match is None:
        match = re.search(r'name="csrf_token" value="([^"]+)"', page.get_data(as_text=True))
    assert match, f"no CSRF token on {url}"
    return match.group(1)


def register(client, slug="test", username="ane", email="ane@example.org", password="correct horse 1"):
    token = csrf_token(client, f"/c/{slug}/register")
    return client.post(
        f"/c/{slug}/register",
        data={
            "csrf_token": token,
            "username": username,
            "email": email,
            "password": password,
            "password2": password,
            "age_group": "26-35",
            "studies_level": "university",
            "studies_field": "humanities",
            "source_level": "B1-B2",
            "target_level": "C1-C2",
            "consent": "y",
        },
    )


def build_app(tmp_path, **overrides):
    """The site as the tests use it: the test database (SQLite in ``tmp_path``,
    or BOZKA_TEST_DATABASE_URL), a seeded random source, no message queue, no
    rate limits unless ``RATELIMIT_ENABLED=True`` is given."""
    from app import create_app

    database = os.environ.get("BOZKA_TEST_DATABASE_URL") or f"sqlite:///{tmp_path / 'test.sqlite3'}"
    config = {
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": database,
        "SECRET_KEY": "test-secret",
        "BOZKA_RANDOM_SEED": 1,
        "SERVER_NAME": "localhost",
        "SOCKETIO_MESSAGE_QUEUE": None,
        "SOCKETIO_ASYNC_MODE": "threading",
        "BOZKA_REALTIME_TICKER": False,
        "BOZKA_MAIL_SENDER": False,  # tests send the outbox themselves (outbox.send_due)
        "RATELIMIT_ENABLED": False,
        "RATELIMIT_STORAGE_URI": "memory://",
        "BOZKA_SERVER_LOCK": False,  # test clients are no server: flask restore must not see one
        # The public progress as it is now, so tests can count it after each answer;
        # test_realtime checks the timed figure that hides an answer's kind.
        "BOZKA_PUBLIC_FIGURES_SECONDS": 0,
        **overrides,
    }
    app = create_app(config)
    app.extensions["bozka_rng"] = random.Random(1)

    @app.before_request
    def fresh_g():
        # Tests hold one app context for direct database checks; in
        # production every request has its own, so give each request a
        # clean ``g`` (flask-login caches the user there).
        from flask import g

        for name in list(vars(g)):
            delattr(g, name)

    return app


def give_every_campaign(user):
    """An organiser made by a test manages every campaign there is (as the
    migration gives existing organisers the existing campaigns): tests of
    what an organiser does; tests/test_organiser_access.py tests who may."""
    from sqlalchemy import select

    from app.extensions import db
    from app.models import Campaign
    from app.services import organisers

    if user.role == "organiser":
        for campaign in db.session.scalars(select(Campaign)):
            organisers.give(campaign, user)
        db.session.commit()
    return user


def confirm(username):
    """Confirm the volunteer's email, as the link in their mail does: only
    confirmed volunteers are ranked and in the raffle."""
    from sqlalchemy import select

    from app.extensions import db
    from app.models import User, utcnow

    db.session.scalar(select(User).where(User.username == username)).email_confirmed_at = utcnow()
    db.session.commit()


def staff_client(app, role="organiser", username=None):
    """A test client logged in as a new confirmed staff member (``username``:
    the role's name unless given); an organiser manages every campaign."""
    from app.models import utcnow
    from app.services import accounts

    username = username or role
    user = accounts.create_user(f"{username}@example.org", username, "staff-password", role=role)
    user.email_confirmed_at = utcnow()
    give_every_campaign(user)
    client = app.test_client()
    client.post("/login", data={"csrf_token": csrf_token(client, "/login"), "email": user.email,
                                "password": "staff-password"})
    return client


def answer_controls_right(client, count, slug="test"):
    """Judge ``count`` pairwise items through the JSON API, controls answered right."""
    from sqlalchemy import select

    from app.extensions import db
    from app.models import Control

    better = set(db.session.scalars(select(Control.better)))
    token = csrf_token(client, f"/c/{slug}/instructions")
    for _ in range(count):
        item = client.get(f"/c/{slug}/api/item").get_json()["item"]
        choice = "right" if item["right"] in better else "left"
        client.post(f"/c/{slug}/api/judgment", json={"token": item["token"], "choice": choice},
                    headers={"X-CSRFToken": token})


def join_directly(campaign, username, password="correct horse 1", confirmed=False, **profile):
    """A volunteer joined to ``campaign`` without the pages (their email
    confirmed if ``confirmed``; ``profile``, their answers to the form's
    questions); their participation id."""
    from app.extensions import db
    from app.models import utcnow
    from app.services import accounts

    user = accounts.create_user(f"{username}@example.org", username, password, **profile)
    if confirmed:
        user.email_confirmed_at = utcnow()
    participation = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
    db.session.commit()
    return participation.id


def committed_campaign(make_campaign, beacon="drand round 7"):
    """A campaign of 30 sentences ending tomorrow, its raffle committed (seed
    "the seed", the beacon five minutes after the end) before it opens."""
    from datetime import timedelta

    from app.extensions import db
    from app.models import utcnow
    from app.services import raffle
    from app.services.raffle_rules import sha256_hex

    campaign = make_campaign(sentences=30, fast_seconds_per_word=0.0)
    campaign.ends_at = (utcnow() + timedelta(days=1)).replace(second=0, microsecond=0)
    db.session.commit()
    raffle.commit(campaign, sha256_hex("the seed"), beacon=beacon, beacon_at=campaign.ends_at + timedelta(minutes=5))
    db.session.commit()
    return campaign


def ticketed_volunteer(app, name, confirmed=True):
    """A test client of a volunteer registered through the pages (their
    email confirmed if ``confirmed``) who earned a ticket: 10 items, controls
    answered right."""
    client = app.test_client()
    register(client, username=name, email=f"{name}@example.org")
    if confirmed:
        confirm(name)
    answer_controls_right(client, 10)
    return client


def close_in_the_past(campaign):
    """Move the campaign's end, the draw's time and the beacon's into the
    past, as time passing would, and what happened so far (tickets, voids,
    confirmations) before that end; returns the raffle's commitment."""
    from datetime import timedelta

    from sqlalchemy import update

    from app.extensions import db
    from app.models import Ticket, User, utcnow
    from app.services import raffle

    record = raffle.commitment(campaign)
    campaign.ends_at = record.draw_at = utcnow() - timedelta(minutes=2)
    record.beacon_at = campaign.ends_at + timedelta(minutes=1)
    earlier = campaign.ends_at - timedelta(hours=1)
    record.committed_at = earlier - timedelta(hours=1)
    db.session.execute(update(Ticket).where(Ticket.campaign_id == campaign.id).values(created_at=earlier))
    db.session.execute(update(Ticket).where(Ticket.campaign_id == campaign.id, Ticket.voided_at.is_not(None))
                       .values(voided_at=earlier + timedelta(minutes=10)))
    db.session.execute(update(User).where(User.email_confirmed_at.is_not(None)).values(email_confirmed_at=earlier))
    db.session.commit()
    return record


def add_documents(folder, lines):
    """Give a campaign folder a documents file (docs/campaign-format.md) with these lines."""
    with open(os.path.join(folder, "documents.tsv"), "w", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))
    manifest = os.path.join(folder, "campaign.toml")
    with open(manifest, encoding="utf-8") as handle:
        text = handle.read()
    with open(manifest, "w", encoding="utf-8") as handle:
        handle.write('documents = "documents.tsv"\n' + text)
    return folder
