"""Hostile input: a corpus of payloads imported as a campaign (sources,
outputs, controls, name, description, instructions), used as usernames and
sent as announcements, must be inert text on every page, in the JSON and
Socket.IO payloads, and in the exports. Security headers; no inline script
in any template; the scripts only ever set untrusted text as text."""
import csv
import functools
import io
import json
import os
import re

import pytest
from flask_login import FlaskLoginClient
from sqlalchemy import select
from werkzeug.security import generate_password_hash

from app.extensions import db, socketio
from app.models import Control, Participation, User, utcnow
from app.services import accounts, outbox
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from helpers import QUIET_SIGNS, csrf_token, register
from security_helpers import PAYLOADS, STRONG, assert_inert, login, make_staff

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SLUG = "hostile"
# Usernames are stored as at most 40 characters.
HOSTILE_NAMES = list(dict.fromkeys(p[:40] for p in PAYLOADS))
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _toml(value):
    return json.dumps(value, ensure_ascii=True)  # a TOML basic string


def write_hostile_campaign(folder, control_source="imported"):
    n = len(PAYLOADS)
    os.makedirs(os.path.join(folder, "systems"), exist_ok=True)

    def lines(name, texts):
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write("".join(text + "\n" for text in texts))

    lines("source.txt", PAYLOADS)
    lines("systems/A.txt", [PAYLOADS[(i + 1) % n] for i in range(n)])
    lines("systems/B.txt", [PAYLOADS[(i + 2) % n] + " (B)" for i in range(n)])
    lines("controls.tsv", ["source\tbetter\tworse"] + [
        f"{PAYLOADS[i % n]} c{i}\t{PAYLOADS[(i + 3) % n]} good {i}\t{PAYLOADS[(i + 4) % n]} bad {i}"
        for i in range(20)
    ])
    lines("instructions.txt", PAYLOADS[:4])
    with open(os.path.join(folder, "campaign.toml"), "w", encoding="utf-8") as handle:
        handle.write(
            f'slug = "{SLUG}"\nname = {_toml(PAYLOADS[0] + " " + PAYLOADS[11])}\n'
            f"description = {_toml(PAYLOADS[2] + ' ' + PAYLOADS[12])}\n"
            'source_language = "en"\ntarget_language = "eu"\nsource = "source.txt"\n'
            'controls = "controls.tsv"\ninstructions = "instructions.txt"\n'
            '[systems]\nA = "systems/A.txt"\nB = "systems/B.txt"\n'
            # The imported pool by default: its payloads are shown as controls
            # (generated controls show the outputs, degraded: a test below).
            f'[settings]\njudgments_per_pair = 50\ncontrol_source = "{control_source}"\n'
        )
    return folder


@functools.cache
def strong_hash():
    return generate_password_hash(STRONG, method="scrypt")


@pytest.fixture
def hostile(app, tmp_path):
    """The hostile campaign, an organiser, and volunteers named by payloads
    who judged (from one address) so that every report shows them. They
    answer in microseconds: the reading floor and the signs are off, so
    that their answers count and they stay in the ranking and the tickets."""
    campaign = create_campaign(read_campaign(write_hostile_campaign(str(tmp_path / "hostile"))))
    for setting, value in QUIET_SIGNS.items():
        setattr(campaign, setting, value)
    db.session.commit()
    make_staff("admin", "boss")  # every organiser page, the accounts and audit pages too
    better = set(db.session.scalars(select(Control.better)))
    # scrypt is slow on purpose (0.1 s a hash): one hash for all, and Flask-Login's
    # test client logs them in (this fixture runs for every test of the module).
    app.test_client_class = FlaskLoginClient
    for n, name in enumerate(HOSTILE_NAMES):
        user = User(email=f"h{n}@example.org", username=name, password_hash=strong_hash(),
                    signup_address="same-address")
        db.session.add(user)
        db.session.flush()
        user.email_confirmed_at = user.created_at
        accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
        db.session.commit()
        client = app.test_client(user=user)
        token = csrf_token(client, f"/c/{SLUG}/welcome")
        item = client.get(f"/c/{SLUG}/api/item").get_json()["item"]
        for _ in range(12 if n < 3 else 3):  # three of them earn a raffle ticket
            choice = "right" if item["right"] in better else "left"
            item = client.post(f"/c/{SLUG}/api/judgment", json={"token": item["token"], "choice": choice},
                               headers={"X-CSRFToken": token}).get_json()["item"]
    return campaign


def _organiser(app):
    client = app.test_client()
    assert login(client, "boss@example.org").status_code == 302
    return client


def _shown(names):
    """Texts as a page shows them: whitespace at the ends stripped."""
    return [name.strip() for name in names]


def test_the_hostile_campaign_imports_unchanged(hostile):
    assert hostile.name == PAYLOADS[0] + " " + PAYLOADS[11]
    stored = set(db.session.scalars(select(User.username)))
    assert set(HOSTILE_NAMES) <= stored


def test_evaluation_pages_show_every_text_inert(app, hostile):
    """A volunteer judges every item; each page shows the three texts as text,
    and the JSON answer carries them unchanged (the script sets textContent)."""
    client = app.test_client()
    register(client, slug=SLUG, username="reader", email="reader@example.org")
    better = set(db.session.scalars(select(Control.better)))
    token = csrf_token(client, f"/c/{SLUG}/welcome")
    seen = set()
    for _step in range(60):
        page = client.get(f"/c/{SLUG}/evaluate")
        html = page.get_data(as_text=True)
        data = client.get(f"/c/{SLUG}/api/item").get_json()
        if data["item"] is None:
            assert_inert(html, where="done page")
            break
        item = data["item"]
        assert_inert(html, expected=_shown([item["source"], item["left"], item["right"]]), where="evaluate")
        assert_inert(data["mine"], where="api mine")
        seen.update((item["source"], item["left"], item["right"]))
        choice = "right" if item["right"] in better else "left"
        answer = client.post(f"/c/{SLUG}/api/judgment", json={"token": item["token"], "choice": choice},
                             headers={"X-CSRFToken": token})
        assert answer.status_code == 200 and answer.mimetype == "application/json"
    else:
        pytest.fail("the volunteer never finished")
    # Every payload was shown as a source, as an output or in a control.
    for payload in PAYLOADS:
        assert any(payload in text for text in seen), payload[:40]
    # The ranking on the page shows the hostile names as text.
    html = client.get(f"/c/{SLUG}/welcome").get_data(as_text=True)
    assert_inert(html, where="welcome")


def test_generated_controls_show_hostile_outputs_inert(app, tmp_path):
    """Controls generated per volunteer (issue 28) splice one hostile output
    with words of another: shown as text on the page and in the JSON."""
    campaign = create_campaign(read_campaign(write_hostile_campaign(str(tmp_path / "generated"), "generated")))
    for setting, value in QUIET_SIGNS.items():
        setattr(campaign, setting, value)
    db.session.commit()
    n = len(PAYLOADS)
    outputs = {PAYLOADS[i]: {PAYLOADS[(i + 1) % n], PAYLOADS[(i + 2) % n] + " (B)"} for i in range(n)}
    client = app.test_client()
    register(client, slug=SLUG, username="reader", email="reader@example.org")
    token = csrf_token(client, f"/c/{SLUG}/welcome")
    for _step in range(40):
        html = client.get(f"/c/{SLUG}/evaluate").get_data(as_text=True)
        item = client.get(f"/c/{SLUG}/api/item").get_json()["item"]
        if item is None:
            break
        assert_inert(html, expected=_shown([item["source"], item["left"], item["right"]]), where="evaluate")
        # A reader's answer: the side that is a system's own translation of the source.
        shown = outputs.get(item["source"], set())
        choice = "right" if item["right"] in shown and item["left"] not in shown else "left"
        answer = client.post(f"/c/{SLUG}/api/judgment", json={"token": item["token"], "choice": choice},
                             headers={"X-CSRFToken": token})
        assert answer.status_code == 200 and answer.get_json()["status"] in ("accepted", "finished")
    made = db.session.scalars(select(Control).where(Control.number.is_(None))).all()
    assert made, "no control was generated"
    assert all(control.worse not in outputs[control.source] for control in made)


@pytest.mark.parametrize("path", [
    "/c/{slug}/", "/c/{slug}/instructions", "/c/{slug}/raffle", "/c/{slug}/register", "/login", "/",
])
def test_public_pages_are_inert(app, hostile, path):
    page = app.test_client().get(path.format(slug=SLUG), follow_redirects=True)
    assert page.status_code == 200
    assert_inert(page.get_data(as_text=True), where=path)


def test_ranking_shows_hostile_usernames_as_text(app, hostile):
    client = app.test_client()
    register(client, slug=SLUG, username="reader", email="reader@example.org")
    html = client.get(f"/c/{SLUG}/evaluate").get_data(as_text=True)
    top = sorted(db.session.execute(
        select(User.username, Participation.items_answered).join(Participation, Participation.user_id == User.id)
        .where(Participation.items_answered > 0)).all(), key=lambda row: -row[1])[:3]
    assert_inert(html, expected=_shown([name for name, _count in top]), where="ranking")


def test_organiser_pages_are_inert(app, hostile):
    client = _organiser(app)
    for path in ("/organiser/", f"/organiser/c/{SLUG}/", f"/organiser/c/{SLUG}/panel",
                 f"/organiser/c/{SLUG}/suspicious", "/organiser/accounts", "/organiser/audit"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert_inert(page.get_data(as_text=True), where=path)


def test_volunteer_pages_show_hostile_names_and_texts_as_text(app, hostile):
    """The organiser's page about a volunteer: the username, the texts of
    every judgment and a hostile dismissal reason, all inert."""
    client = _organiser(app)
    participations = db.session.scalars(select(Participation).order_by(Participation.id)).all()
    url = f"/organiser/c/{SLUG}/volunteer/{participations[0].id}"
    token = csrf_token(client, url)
    client.post(f"{url}/dismiss", data={"csrf_token": token, "reason": PAYLOADS[0]})
    db.session.refresh(participations[0])
    assert participations[0].dismissed_reason == PAYLOADS[0]
    for participation in participations:
        page = client.get(f"/organiser/c/{SLUG}/volunteer/{participation.id}")
        assert page.status_code == 200
        shown = [participation.user.username] + ([PAYLOADS[0]] if participation.is_dismissed else [])
        assert_inert(page.get_data(as_text=True), expected=_shown(shown), where=f"volunteer {participation.id}")


def test_suspicious_report_lists_hostile_names_as_text(app, hostile):
    html = _organiser(app).get(f"/organiser/c/{SLUG}/suspicious").get_data(as_text=True)
    # All answered faster than anyone reads, and all registered from one address.
    assert_inert(html, expected=_shown(HOSTILE_NAMES), where="suspicious")


def test_hostile_usernames_are_refused_at_registration(app, hostile):
    before = db.session.scalar(select(db.func.count(User.id)))
    for n, payload in enumerate(PAYLOADS):
        client = app.test_client()
        response = register(client, slug=SLUG, username=payload, email=f"new{n}@example.org")
        assert response.status_code == 200, payload[:40]  # the form again, with an error
        html = response.get_data(as_text=True)
        assert_inert(html, where=f"register {payload[:20]!r}")
    assert db.session.scalar(select(db.func.count(User.id))) == before


def test_announcements_reach_volunteers_as_plain_text(app, hostile):
    volunteer = app.test_client()
    register(volunteer, slug=SLUG, username="reader", email="reader@example.org")
    sio = socketio.test_client(app, flask_test_client=volunteer)
    assert sio.emit("join", {"campaign": SLUG}, callback=True) == {"ok": True}
    sio.get_received()
    organiser = _organiser(app)
    token = csrf_token(organiser, f"/organiser/c/{SLUG}/")
    sent = [p for p in PAYLOADS if len(p) <= 500]
    for text in sent:
        assert organiser.post(f"/organiser/c/{SLUG}/announce", data={"csrf_token": token, "text": text}).status_code == 302
    received = [e["args"][0]["text"] for e in sio.get_received() if e["name"] == "announcement"]
    assert received == [text.strip() for text in sent]
    # The audit log page shows them inert.
    assert_inert(organiser.get("/organiser/audit").get_data(as_text=True), where="audit")
    # Too long: refused, nothing sent.
    organiser.post(f"/organiser/c/{SLUG}/announce", data={"csrf_token": token, "text": "x" * 501})
    assert not [e for e in sio.get_received() if e["name"] == "announcement"]


def test_live_payloads_carry_names_unchanged(app, hostile):
    """Socket.IO ranking payloads hold raw text: the script sets it with textContent."""
    volunteer = app.test_client()
    register(volunteer, slug=SLUG, username="reader", email="reader@example.org")
    sio = socketio.test_client(app, flask_test_client=volunteer)
    sio.emit("join", {"campaign": SLUG}, callback=True)
    ranking = [e["args"][0] for e in sio.get_received() if e["name"] == "ranking"][-1]
    names = {row["n"] for row in ranking["top"]}
    assert names and names <= set(HOSTILE_NAMES)


NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


@pytest.mark.parametrize("kind", ["judgments", "controls", "volunteers", "wmt", "discarded"])
def test_exports_hold_no_untrusted_text_and_no_formulas(app, hostile, kind):
    """Exports name volunteers by pseudonym and items by number: no username
    or campaign text reaches them, and no cell is a formula."""
    client = _organiser(app)
    response = client.get(f"/organiser/c/{SLUG}/export/{kind}.csv")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"].startswith("attachment;")
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.mimetype == "text/csv"
    body = response.get_data(as_text=True)
    rows = list(csv.reader(io.StringIO(body)))
    assert len(rows) > 1 or kind == "discarded", kind
    for row in rows[1:]:
        for cell in row:
            assert NUMBER.match(cell) or not cell.startswith(FORMULA_START), (
                f"{kind}: a cell a spreadsheet would run: {cell[:40]!r}")
    for name in HOSTILE_NAMES:
        assert name not in body
    jsonl = client.get(f"/organiser/c/{SLUG}/export/{kind}.jsonl")
    if kind == "wmt":  # WMT's layout is CSV alone
        assert jsonl.status_code == 404
        return
    assert jsonl.status_code == 200 and jsonl.headers["Content-Disposition"].startswith("attachment;")
    for line in jsonl.get_data(as_text=True).splitlines():
        record = json.loads(line)  # every line is valid JSON
        assert not set(map(str, record.values())) & set(HOSTILE_NAMES)


def test_csv_cells_from_untrusted_text_are_neutralised():
    from app.services.export import as_csv

    records = [{"text": payload} for payload in PAYLOADS]
    rows = list(csv.reader(io.StringIO("".join(as_csv(["text"], records)))))[1:]
    assert len(rows) == len(PAYLOADS)
    for payload, (cell,) in zip(PAYLOADS, rows):
        if payload.startswith(FORMULA_START):
            assert cell == "'" + payload
        else:
            assert cell == payload
        assert not cell.startswith(FORMULA_START)


def test_raffle_ticket_list_is_inert(app, hostile):
    response = app.test_client().get(f"/c/{SLUG}/raffle/tickets.csv")
    assert response.status_code == 200
    rows = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert rows[0] == ["ticket", "volunteer"] and len(rows) > 1
    for row in rows[1:]:
        assert not any(cell.startswith(FORMULA_START) for cell in row), row
        assert not set(row[1]) & set("<>\"'")  # pseudonyms, never names


# --- headers, templates and scripts -----------------------------------------------

CSP_REQUIRED = ["default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'",
                "base-uri 'self'", "form-action 'self'"]


@pytest.mark.parametrize("path", ["/login", "/c/test/", "/c/test/api/item", "/no-such-page", "/static/css/bozka.css",
                                  "/c/test/raffle/tickets.csv"])
def test_security_headers_on_every_kind_of_answer(app, client, make_campaign, path):
    make_campaign()
    response = client.get(path)
    csp = response.headers.get("Content-Security-Policy", "")
    for directive in CSP_REQUIRED:
        assert directive in csp, (path, directive)
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] in ("same-origin", "no-referrer", "strict-origin-when-cross-origin")


def _templates():
    for folder, _dirs, files in os.walk(os.path.join(ROOT, "templates")):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    yield os.path.relpath(path, ROOT), handle.read()


def test_no_template_has_inline_script_or_event_handler():
    checked = 0
    for path, text in _templates():
        checked += 1
        for match in re.finditer(r"<script\b([^>]*)>", text, re.I):
            attributes = match.group(1)
            assert "src=" in attributes or 'type="application/json"' in attributes, f"{path}: inline <script{attributes}>"
        assert not re.search(r"<[a-z][^>]*\son[a-z]+\s*=", text, re.I), f"{path}: an on*= event handler"
        assert "javascript:" not in text.lower(), f"{path}: a javascript: link"
        assert not re.search(r"\|\s*safe\b", text), f"{path}: |safe turns escaping off"
        assert not re.search(r"style=", text), f"{path}: an inline style (the CSP refuses it)"
    assert checked >= 20


def test_json_data_blocks_are_escaped(app, hostile):
    """The only inline <script> is a JSON data block, written with |tojson
    (which escapes <, > and &): a payload cannot close it."""
    client = app.test_client()
    register(client, slug=SLUG, username="reader", email="reader@example.org")
    html = client.get(f"/c/{SLUG}/evaluate").get_data(as_text=True)
    blocks = re.findall(r'<script type="application/json" id="i18n">(.*?)</script>', html, re.S)
    assert len(blocks) == 1
    json.loads(blocks[0])
    assert "<" not in blocks[0]


FINGERPRINTED = re.compile(r"-[0-9a-f]{32}\.")


def _scripts():
    folder = os.path.join(ROOT, "static", "js")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".js") and not FINGERPRINTED.search(name):  # not the copies of app/assets.py
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                yield name, handle.read()


# The two places a script writes HTML: both insert markup our own server
# rendered with Jinja's escaping (tested above: api "mine" and the panel).
ALLOWED_HTML_SINKS = {
    ("evaluate.js", '$("mine").innerHTML = data.mine'),
    ("dashboard.js", "panel.innerHTML = html"),
}


def test_scripts_set_untrusted_text_with_textcontent_only():
    sinks = set()
    for name, text in _scripts():
        for bad in ("insertAdjacentHTML", "outerHTML", "document.write", "eval(", "new Function", ".html("):
            assert bad not in text, f"{name}: {bad}"
        for match in re.finditer(r"([\w$.()\"\[\]-]+)\.innerHTML\s*=\s*([\w.]+)", text):
            sinks.add((name, f"{match.group(1)}.innerHTML = {match.group(2)}"))
        # Live data (ranking, personal, announcements) goes through textContent.
        for field in ("entry.n", "data.text", "item.source", "item.left", "item.right"):
            for line in text.splitlines():
                if field in line and "innerHTML" in line:
                    pytest.fail(f"{name}: {field} written as HTML")
    assert sinks == ALLOWED_HTML_SINKS


def test_the_inertness_check_catches_raw_markup():
    """The checker used above fails on unescaped payloads (so it can fail)."""
    from markupsafe import escape

    caught = 0
    for payload in PAYLOADS:
        assert_inert(f"<p dir='auto'>{escape(payload)}</p>", expected=[payload.strip()])
        if re.search(r"<(script|img|svg|iframe|style|body|a )", payload):
            with pytest.raises(AssertionError):
                assert_inert(f"<p>{payload}</p>")
            caught += 1
    assert caught >= 8
    with pytest.raises(AssertionError):  # an override outside any isolate
        assert_inert("<p>abc\u202edcba</p>")


def test_the_command_line_refuses_hostile_usernames(app):
    runner = app.test_cli_runner()
    for n, payload in enumerate(PAYLOADS[:13]):
        result = runner.invoke(args=["user", "create", "--role", "researcher", "--email", f"c{n}@example.org",
                                     "--username", payload, "--password", "a long secret 77"])
        assert result.exit_code != 0 and "username" in result.output, payload
    assert db.session.scalar(select(db.func.count(User.id))) == 0
    ok = runner.invoke(args=["user", "create", "--role", "researcher", "--email", "ok@example.org",
                             "--username", "Ane_Etxeberria-2", "--password", "a long secret 77"])
    assert ok.exit_code == 0, ok.output


def test_raffle_winners_page_and_notice_are_inert(app, hostile, caplog):
    """Hostile usernames as raffle winners: the organiser's page and the
    winner's email show them as text."""
    from app.models import RaffleCommitment
    from app.services import prizes, raffle
    from app.services.raffle_rules import sha256_hex

    # Set up directly: the fixture's tickets were won before any commitment.
    db.session.add(RaffleCommitment(campaign_id=hostile.id, seed_sha256=sha256_hex("hostile seed"),
                                    beacon="drand quicknet round 1", beacon_at=utcnow()))
    hostile.status = "closed"
    db.session.commit()
    raffle.draw(hostile, "hostile seed", 3, beacon="7")
    db.session.commit()
    names = [w["username"] for w in prizes.winners(hostile)]
    assert names
    organiser = _organiser(app)
    html = organiser.get(f"/organiser/c/{SLUG}/raffle/winners").get_data(as_text=True)
    assert_inert(html, expected=_shown(names), where="raffle winners")
    token = csrf_token(organiser, f"/organiser/c/{SLUG}/raffle/winners")
    page = organiser.post(f"/organiser/c/{SLUG}/raffle/notify", follow_redirects=True,
                          data={"csrf_token": token, "prize": "1", "note": PAYLOADS[0]})
    assert_inert(page.get_data(as_text=True), where="raffle winners after the email")
    outbox.send_due(app.config)
    assert PAYLOADS[0] in caplog.text  # a plain-text email: the note as written
