"""Organisers and researchers: access, dashboard, lifecycle, raffle, exports."""
import csv
import io
import json
import random
import subprocess
import sys
from datetime import datetime, timedelta

import pytest
from sqlalchemy import func, select

from app import realtime
from app.extensions import db, socketio
from app.models import Announcement, Item, Participation, Ticket, User, utcnow
from app.services import accounts, dashboard, evaluation, export, raffle
from app.protocols.da import export as da_export
from app.protocols.pairwise import export as pairwise_export
from app.services.pseudonyms import pseudonym
from app.services.raffle_rules import draw_winners, sha256_hex, tickets_digest
from helpers import csrf_token, register, staff_client

ROOT = __import__("os").path.dirname(__import__("os").path.dirname(__import__("os").path.abspath(__file__)))


def simulate_volunteers(campaign, volunteers=4, items=12, seed=3, liar=None, confirm=True):
    """Volunteers judging through the services (controls answered right)."""
    rng = random.Random(seed)
    people = []
    for n in range(volunteers):
        user = accounts.create_user(f"sim{n}@example.org", f"sim{n}", "password-123",
                                    age_group="26-35", studies_level="university", studies_field="humanities",
                                    real_name=f"Real Name {n}")
        if confirm:
            user.email_confirmed_at = utcnow()
        people.append(accounts.join_campaign(user, campaign, "B1-B2", "C1-C2"))
    db.session.commit()
    for p in people:
        for _ in range(items):
            item = evaluation.show(campaign, p.id, utcnow(), rng).item
            if item is None:
                break
            if item.is_control:
                good = "left" if item.better_left else "right"
                choice = good if p is not liar else ("right" if good == "left" else "left")
            else:
                choice = rng.choice(["left", "right", "equal"])
            evaluation.answer(campaign, p.id, item.token, choice, utcnow(), rng)
    return people


RESEARCHER_ENDPOINTS = {"organiser.index", "organiser.campaign", "organiser.panel", "organiser.export_file",
                        "organiser.document"}
ADMIN_ENDPOINTS = {"organiser.accounts_page", "organiser.audit_log", "organiser.campaign_organisers",
                   "organiser.add_organiser", "organiser.remove_organiser"}


def _organiser_routes(app):
    """Every route of the organiser blueprint, as (method, URL, endpoint)."""
    # participation 1: the volunteer the test registers; ticket 1, whether or not it exists.
    values = {"slug": "test", "kind": "judgments", "fmt": "csv", "participation_id": 1, "number": 1, "user_id": 1,
              "name": "export-format.md"}
    routes = []
    with app.test_request_context():
        from flask import url_for

        for rule in app.url_map.iter_rules():
            if not rule.endpoint.startswith("organiser."):
                continue
            url = url_for(rule.endpoint, **{name: values[name] for name in rule.arguments})
            for method in sorted(rule.methods & {"GET", "POST"}):
                routes.append((method, url, rule.endpoint))
    assert len({endpoint for _m, _u, endpoint in routes}) >= 11
    return routes


def test_access_control_on_every_route_of_the_blueprint(app, client, make_campaign):
    """Enumerated from the URL map, so that a new route cannot escape."""
    make_campaign()
    routes = _organiser_routes(app)
    for method, url, _endpoint in routes:
        response = client.open(url, method=method)
        assert response.status_code in (302, 400), (method, url)  # to login (or CSRF refusal)
        if response.status_code == 302:
            assert "/login" in response.headers["Location"]
    volunteer = app.test_client()
    register(volunteer)
    token = csrf_token(volunteer, "/c/test/welcome")
    for method, url, _endpoint in routes:
        assert volunteer.open(url, method=method, data={"csrf_token": token}).status_code == 403, (method, url)
    researcher = staff_client(app, "researcher", "researcher1")
    token = csrf_token(researcher, "/organiser/c/test/")
    for method, url, endpoint in routes:
        status = researcher.open(url, method=method, data={"csrf_token": token}).status_code
        if method == "GET" and endpoint in RESEARCHER_ENDPOINTS:
            assert status == 200, (method, url)
        else:
            assert status == 403, (method, url)
    # An organiser of the campaign (tests/test_organiser_access.py: of another one); an admin.
    organiser, admin = staff_client(app, "organiser", "organiser1"), staff_client(app, "admin", "admin1")
    for method, url, endpoint in routes:
        if method == "GET":
            assert organiser.get(url).status_code == (403 if endpoint in ADMIN_ENDPOINTS else 200), url
            assert admin.get(url).status_code == 200, url


def test_researchers_see_no_personal_data(app, make_campaign):
    campaign = make_campaign(sentences=20)
    simulate_volunteers(campaign, volunteers=2)
    researcher = staff_client(app, "researcher", "researcher1")
    for kind in export.KINDS:
        body = researcher.get(f"/organiser/c/test/export/{kind}.csv").get_data(as_text=True)
        assert "@example.org" not in body and "Real Name" not in body and "scrypt" not in body
    page = researcher.get("/organiser/c/test/").get_data(as_text=True)
    assert "@example.org" not in page and "Real Name" not in page
    # Not even usernames: the prize winners and the volunteers who have seen
    # every control appear under their export pseudonyms.
    for p in db.session.scalars(select(Participation)):
        p.controls_seen_all = True
    db.session.commit()
    page = researcher.get("/organiser/c/test/panel").get_data(as_text=True)
    assert "sim0" not in page and "sim1" not in page
    pseudonyms = {r["volunteer"] for r in export.volunteer_rows(export.source(campaign), db.engine)}
    assert all(p in page for p in pseudonyms) and "have seen every control" in page
    organiser_page = staff_client(app, "organiser", "organiser1").get("/organiser/c/test/panel").get_data(as_text=True)
    assert "sim0" in organiser_page and "sim1" in organiser_page


def test_organiser_room_is_for_staff_only(app, make_campaign):
    campaign = make_campaign(sentences=20)
    volunteer = app.test_client()
    register(volunteer)
    sio = socketio.test_client(app, flask_test_client=volunteer)
    assert sio.emit("watch", {"campaign": "test"}, callback=True)["ok"] is False
    organiser = staff_client(app, "organiser", "organiser1")
    watcher = socketio.test_client(app, flask_test_client=organiser)
    assert watcher.emit("watch", {"campaign": "test"}, callback=True) == {"ok": True}
    assert watcher.emit("watch", {"campaign": "nope"}, callback=True)["ok"] is False
    simulate_volunteers(campaign, volunteers=1, items=3)
    realtime.touch(campaign.id)
    realtime.flush()
    assert any(e["name"] == "dashboard" for e in watcher.get_received())
    assert not any(e["name"] == "dashboard" for e in sio.get_received())


def test_dashboard_figures(app, make_campaign):
    campaign = make_campaign(sentences=20)
    people = simulate_volunteers(campaign, volunteers=4, items=12)
    data = dashboard.summary(campaign, utcnow())
    totals = data["totals"]
    assert totals["registered"] == 4 and totals["dismissed"] == 0
    valid = db.session.scalar(select(func.count()).where(Item.slot_id.is_not(None), Item.answered_at.is_not(None)))
    pairwise = data["protocol"]
    assert totals["judgments"] == valid == sum(p["collected"] for p in pairwise["pairs"])
    assert pairwise["control_pass_rate"] == 100.0 and pairwise["controls_answered"] == 4 * 4
    assert totals["median_took_part"] == 12 and totals["took_part"] == 4 and totals["active_now"] == 4
    assert [b["count"] for b in data["contributions"]] == [4, 0, 0, 0, 0]
    age = {row["key"]: row for row in data["profile"]["age_group"]}
    assert age["26-35"]["count"] == 4 and age["26-35"]["percent"] == 100.0
    assert round(sum(b["rate"] for b in data["chart"]["bars"]) * data["chart"]["minutes"]) == 4 * 12
    assert sum(b["count"] for b in data["sentences"]["bins"]) == 20
    assert [row["count"] for row in data["top"]] == [12, 12, 12, 12]
    assert {row["username"] for row in data["top"]} == {p.user.username for p in people}
    # A second call counts no answer twice.
    again = dashboard.summary(campaign, utcnow())
    assert again["chart"] == data["chart"]
    organiser = staff_client(app, "organiser", "organiser1")
    page = organiser.get("/organiser/c/test/panel").get_data(as_text=True)
    assert "Completion per system pair" in page and "A – B" in page


def test_rate_chart_keeps_quiet_minutes_and_bounds_its_bars():
    chart = dashboard.rate_chart([("2026-01-01T10:00", 4), ("2026-01-01T10:03", 2)])
    assert [b["rate"] for b in chart["bars"]] == [4, 0, 0, 2] and chart["minutes"] == 1 and chart["peak"] == 4
    assert chart["bars"][1]["start"] == datetime(2026, 1, 1, 10, 1) and chart["one_day"]
    # A week of answers, one every 7 minutes: at most 120 bars, nothing lost.
    start = datetime(2026, 1, 1)
    points = [((start + timedelta(minutes=m)).isoformat(timespec="minutes"), 1) for m in range(0, 7 * 24 * 60, 7)]
    chart = dashboard.rate_chart(points)
    assert len(chart["bars"]) <= 120 and chart["minutes"] == 84 and not chart["one_day"]  # 10,074 minutes / 120, rounded up
    assert round(sum(b["rate"] for b in chart["bars"]) * chart["minutes"]) == len(points)
    assert dashboard.rate_chart([])["bars"] == []


def test_campaign_lifecycle(app, client, make_campaign):
    campaign = make_campaign(sentences=20)
    register(client)
    organiser = staff_client(app, "organiser", "organiser1")
    token = csrf_token(organiser, "/organiser/c/test/")
    # Back to a draft; opening again needs the commitment (tests/test_lifecycle.py), made now.
    organiser.post("/organiser/c/test/status", data={"csrf_token": token, "status": "draft"})
    assert client.get("/c/test/").status_code == 404
    campaign.ends_at = (utcnow() + timedelta(days=2)).replace(second=0, microsecond=0)
    raffle.commit(campaign, sha256_hex("seed"), beacon="a beacon", beacon_at=campaign.ends_at + timedelta(hours=1))
    db.session.commit()
    ends = campaign.ends_at.strftime("%Y-%m-%dT%H:%M")
    # Open with a start time in the future: not serving yet.
    later = (utcnow() + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M")
    organiser.post("/organiser/c/test/status",
                   data={"csrf_token": token, "status": "open", "starts_at": later, "ends_at": ends})
    db.session.refresh(campaign)
    assert campaign.status == "open" and not campaign.is_serving
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    assert "This campaign has not opened yet" in page and "This campaign opens on" in page
    assert "Which translation is better?" not in page
    # An end before the start is refused.
    earlier = (utcnow() - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M")
    page = organiser.post("/organiser/c/test/status", follow_redirects=True, data={
        "csrf_token": token, "status": "open", "starts_at": later, "ends_at": earlier}).get_data(as_text=True)
    assert "The end must come after the start." in page
    db.session.refresh(campaign)
    assert campaign.ends_at.strftime("%Y-%m-%dT%H:%M") == ends  # unchanged
    organiser.post("/organiser/c/test/status", data={"csrf_token": token, "status": "open", "ends_at": ends})
    db.session.refresh(campaign)
    assert campaign.is_serving and campaign.starts_at is None
    assert "Which translation is better?" in client.get("/c/test/evaluate").get_data(as_text=True)
    # Closing keeps all data; the campaign is closed to volunteers, and stays closed.
    before = db.session.scalar(select(func.count(Item.id)))
    assert before >= 1
    organiser.post("/organiser/c/test/status", data={"csrf_token": token, "status": "closed", "ends_at": ends})
    db.session.refresh(campaign)
    assert campaign.status == "closed" and db.session.scalar(select(func.count(Item.id))) == before
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    assert "This campaign is closed" in page and 'href="/c/test/raffle"' in page
    page = organiser.post("/organiser/c/test/status", follow_redirects=True, data={
        "csrf_token": token, "status": "open", "ends_at": ends}).get_data(as_text=True)
    assert "it cannot re-open" in page
    db.session.refresh(campaign)
    assert campaign.status == "closed"


def test_announcement_reaches_connected_volunteers(app, client, make_campaign):
    make_campaign()
    register(client)
    sio = socketio.test_client(app, flask_test_client=client)
    sio.emit("join", {"campaign": "test"}, callback=True)
    sio.get_received()
    organiser = staff_client(app, "organiser", "organiser1")
    token = csrf_token(organiser, "/organiser/c/test/")
    organiser.post("/organiser/c/test/announce", data={"csrf_token": token, "text": "<b>Prize day</b> tomorrow!"})
    events = [e for e in sio.get_received() if e["name"] == "announcement"]
    kept = db.session.scalar(select(Announcement))  # kept for later visitors (issue 22)
    assert events == [{"name": "announcement", "args": [{"text": "<b>Prize day</b> tomorrow!", "id": kept.id}],
                       "namespace": "/"}]


def test_raffle_draw_is_deterministic_and_fair():
    tickets = [(n, f"v-{n % 7}") for n in range(1, 60)]
    first = draw_winners("seed-1", tickets, 5)
    assert first == draw_winners("seed-1", list(reversed(tickets)), 5)
    assert len({w["volunteer"] for w in first}) == 5  # nobody twice
    assert draw_winners("seed-2", tickets, 5) != first
    assert len(draw_winners("s", tickets, 20)) == 7  # only seven people hold tickets
    assert draw_winners("s", [], 3) == []


def _open_until_tomorrow(campaign):
    campaign.ends_at = (utcnow() + timedelta(days=1)).replace(second=0, microsecond=0)
    db.session.commit()


def _commit(campaign, hash_, **kwargs):
    """The commitment, naming a beacon published a minute after the campaign's end."""
    beacon_at = campaign.ends_at + timedelta(minutes=1) if campaign.ends_at else None
    return raffle.commit(campaign, hash_, beacon="drand quicknet round 1", beacon_at=beacon_at, **kwargs)


def _time_passes(campaign):
    """As if the campaign's end, the draw's time and the beacon's went by:
    what happened so far happened before that end."""
    record = raffle.commitment(campaign)
    campaign.ends_at = record.draw_at = utcnow() - timedelta(minutes=2)
    record.beacon_at = campaign.ends_at + timedelta(minutes=1)
    earlier = campaign.ends_at - timedelta(hours=1)
    record.committed_at = earlier - timedelta(hours=1)
    db.session.execute(db.update(Ticket).where(Ticket.campaign_id == campaign.id).values(created_at=earlier))
    db.session.execute(db.update(User).where(User.email_confirmed_at.is_not(None)).values(email_confirmed_at=earlier))
    db.session.commit()


def test_commitment_comes_before_the_first_ticket_and_names_the_draw_time(app, make_campaign):
    campaign = make_campaign(sentences=30)
    hash_ = sha256_hex("seed")
    with pytest.raises(raffle.RaffleError, match="end time"):
        raffle.commit(campaign, hash_)  # no end: no time for the draw
    campaign.ends_at = utcnow() - timedelta(minutes=1)
    with pytest.raises(raffle.RaffleError, match="before the campaign closes"):
        raffle.commit(campaign, hash_)  # already ended
    _open_until_tomorrow(campaign)
    simulate_volunteers(campaign, volunteers=1, items=10)
    assert raffle.has_tickets(campaign)
    with pytest.raises(raffle.RaffleError, match="before the first raffle ticket"):
        raffle.commit(campaign, hash_)
    # A void ticket was won all the same: still too late.
    db.session.execute(db.update(Ticket).values(voided_at=utcnow()))
    with pytest.raises(raffle.RaffleError, match="before the first raffle ticket"):
        raffle.commit(campaign, hash_)
    assert raffle.commitment(campaign) is None
    other = _second_campaign(campaign)
    record = _commit(other, hash_)
    assert record.draw_at == other.ends_at and record.seed_sha256 == hash_


def _second_campaign(campaign):
    """A second campaign without tickets, ending tomorrow."""
    from app.models import Campaign

    other = Campaign(slug="other", name="Other", source_language="en", target_language="eu",
                     ends_at=(utcnow() + timedelta(days=1)).replace(second=0, microsecond=0))
    db.session.add(other)
    db.session.commit()
    return other


def test_raffle_eligibility_commit_and_draw(app, make_campaign):
    campaign = make_campaign(sentences=30)
    _open_until_tomorrow(campaign)
    seed = "correct horse battery staple"
    with pytest.raises(raffle.RaffleError):
        raffle.draw(campaign, seed, 1)  # no commitment yet
    record = _commit(campaign, sha256_hex(seed))
    with pytest.raises(raffle.RaffleError):
        _commit(campaign, sha256_hex("again"))
    people = simulate_volunteers(campaign, volunteers=5, items=20)
    unconfirmed = db.session.get(User, people[3].user_id)
    unconfirmed.email_confirmed_at = None
    # A volunteer held for review: out of the list, tickets already won included.
    people[4].held_at, people[4].held_reason = utcnow(), "same_side"
    db.session.commit()
    # A dismissed volunteer's tickets are void.
    from app.services import answers
    answers.dismiss(campaign, people[2], "test dismissal", utcnow())
    db.session.commit()
    eligible = raffle.eligible_tickets(campaign)
    holders = {h for _n, h in eligible}
    assert len(eligible) == 4 and len(holders) == 2  # two tickets each for the first two
    assert pseudonym(campaign, people[4].user_id) not in holders
    assert db.session.scalar(select(func.count(Ticket.id)).where(Ticket.participation_id == people[4].id)) == 2
    # No draw while the campaign is open, nor before the time the commitment named.
    with pytest.raises(raffle.RaffleError, match="after the campaign has closed"):
        raffle.draw(campaign, seed, 2, beacon="7")
    campaign.status = "closed"
    db.session.commit()
    with pytest.raises(raffle.RaffleError, match="wait until then"):
        raffle.draw(campaign, seed, 2, beacon="7")
    # Nor before the beacon's value is out.
    with pytest.raises(raffle.RaffleError, match="the later of the time named in the commitment and the beacon"):
        raffle.draw(campaign, seed, 2, now=campaign.ends_at, beacon="7")
    assert raffle.commitment(campaign).drawn_at is None
    with pytest.raises(raffle.RaffleError, match="does not match"):
        raffle.draw(campaign, "wrong seed", 2, now=record.beacon_at, beacon="7")
    with pytest.raises(raffle.RaffleError, match="Type the beacon"):
        raffle.draw(campaign, seed, 2, now=record.beacon_at, beacon=" ")
    record = raffle.draw(campaign, seed, 2, now=record.beacon_at, beacon="7")
    db.session.commit()
    assert [w["volunteer"] for w in record.winners] and len({w["volunteer"] for w in record.winners}) == 2
    assert record.winners == draw_winners(seed, eligible, 2, "7")
    assert record.tickets_sha256 == tickets_digest(eligible)
    with pytest.raises(raffle.RaffleError):
        raffle.draw(campaign, seed, 2, now=record.beacon_at, beacon="7")


def test_the_campaign_end_cannot_move_before_the_committed_draw(app, make_campaign):
    campaign = make_campaign()
    _open_until_tomorrow(campaign)
    record = raffle.commit(campaign, sha256_hex("seed"), beacon="drand quicknet round 1",
                           beacon_at=campaign.ends_at + timedelta(days=3))
    db.session.commit()
    organiser = staff_client(app, "organiser", "organiser1")
    token = csrf_token(organiser, "/organiser/c/test/")
    fmt = "%Y-%m-%dT%H:%M"
    for ends_at in ("", (record.draw_at - timedelta(hours=1)).strftime(fmt)):
        page = organiser.post("/organiser/c/test/status", follow_redirects=True,
                              data={"csrf_token": token, "status": "open", "ends_at": ends_at})
        assert "the campaign cannot end earlier" in page.get_data(as_text=True)
        db.session.refresh(campaign)
        assert campaign.ends_at == record.draw_at  # unchanged
    # The same end, or a later one, is fine.
    for ends_at in (record.draw_at, record.draw_at + timedelta(days=2)):
        organiser.post("/organiser/c/test/status", data={"csrf_token": token, "status": "open",
                                                         "ends_at": ends_at.strftime(fmt)})
        db.session.refresh(campaign)
        assert campaign.ends_at == ends_at


def test_raffle_from_the_dashboard_cli_and_public_verification(app, tmp_path, make_campaign):
    campaign = make_campaign(sentences=30)
    _open_until_tomorrow(campaign)
    organiser = staff_client(app, "organiser", "organiser1")
    token = csrf_token(organiser, "/organiser/c/test/")
    beacon_at = (campaign.ends_at + timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M")
    page = organiser.post("/organiser/c/test/raffle/commit", data={
        "csrf_token": token, "seed_sha256": "", "beacon": "drand quicknet round 1", "beacon_at": beacon_at})
    seed = __import__("re").search(r'<code class="hash">([0-9a-f]{64})</code>', page.get_data(as_text=True)).group(1)
    record = raffle.commitment(campaign)
    assert record.seed_sha256 == sha256_hex(seed) and record.seed is None  # the seed is not stored
    assert record.draw_at == campaign.ends_at
    public = app.test_client().get("/c/test/raffle").get_data(as_text=True)
    assert record.seed_sha256 in public and "The draw takes place once the campaign has closed" in public
    simulate_volunteers(campaign, volunteers=3, items=20)
    # While the campaign is open: refused, nothing drawn.
    page = organiser.post("/organiser/c/test/raffle/draw", follow_redirects=True,
                          data={"csrf_token": token, "seed": seed, "beacon": "7", "prizes": "2"})
    assert "The draw is possible only after the campaign has closed." in page.get_data(as_text=True)
    _time_passes(campaign)
    # The list is final: the public page shows its SHA-256 before the draw.
    final = raffle.eligible_tickets(campaign)
    assert tickets_digest(final) in app.test_client().get("/c/test/raffle").get_data(as_text=True)
    # A wrong seed, a prize count too large to compare (WTForms' float() overflowed
    # into a 500): clear messages in the organiser's language, nothing drawn.
    organiser.set_cookie("bozka_lang", "es", domain="localhost")
    page = organiser.post("/organiser/c/test/raffle/draw", follow_redirects=True,
                          data={"csrf_token": token, "seed": "not the seed", "beacon": "7", "prizes": "2"})
    assert "Esta semilla no coincide con el SHA-256 publicado." in page.get_data(as_text=True)
    page = organiser.post("/organiser/c/test/raffle/draw", follow_redirects=True,
                          data={"csrf_token": token, "seed": seed, "beacon": "7", "prizes": "9" * 400})
    assert "Número de premios: El número debe estar entre 1 y 1000." in page.get_data(as_text=True)
    db.session.refresh(record)
    assert record.drawn_at is None
    organiser.set_cookie("bozka_lang", "en", domain="localhost")
    organiser.post("/organiser/c/test/raffle/draw", data={"csrf_token": token, "seed": seed, "beacon": "7",
                                                          "prizes": "2"})
    db.session.refresh(record)
    assert record.drawn_at is not None and len(record.winners) == 2
    assert record.tickets_sha256 == tickets_digest(final)
    tickets_csv = app.test_client().get("/c/test/raffle/tickets.csv").get_data(as_text=True)
    path, draw = tmp_path / "tickets.csv", tmp_path / "raffle.json"
    path.write_text(tickets_csv)
    draw.write_text(app.test_client().get("/c/test/raffle.json").get_data(as_text=True))

    def verify(beacon="7"):
        return subprocess.run([sys.executable, "scripts/verify_raffle.py", "--draw", str(draw), "--tickets", str(path),
                               "--beacon", beacon], cwd=ROOT, capture_output=True, text=True)

    out = verify()
    assert out.returncode == 0 and "commitment: ok" in out.stdout and "ticket list: ok" in out.stdout
    for w in record.winners:
        assert f"prize {w['prize']}: ticket {w['ticket']} ({w['volunteer']})" in out.stdout
    # A list with one ticket left out is caught.
    path.write_text("\n".join(tickets_csv.splitlines()[:-1]) + "\n")
    out = verify()
    assert out.returncode == 1 and "ticket list: FAILS" in out.stdout
    # The command line does the same.
    runner = app.test_cli_runner()
    assert "already drawn" in runner.invoke(args=["raffle", "draw", "test", "--seed", seed, "--beacon", "7"]).output


def test_raffle_cli(app, make_campaign):
    campaign = make_campaign(sentences=30)
    runner = app.test_cli_runner()
    beacon = ["--beacon", "drand quicknet round 1", "--beacon-at", "2099-01-01T00:00:00"]
    assert "end time" in runner.invoke(args=["raffle", "commit", "test", *beacon]).output
    _open_until_tomorrow(campaign)
    result = runner.invoke(args=["raffle", "commit", "test", "--beacon", "drand quicknet round 1", "--beacon-at",
                                 campaign.ends_at.strftime("%Y-%m-%dT%H:%M")])
    assert "must be published after the campaign" in result.output  # the beacon's time is the end: refused
    result = runner.invoke(args=["raffle", "commit", "test", *beacon])
    seed = result.output.split("not stored): ")[1].split()[0]
    assert f"Time of the draw (UTC, the campaign's end): {campaign.ends_at:%Y-%m-%d %H:%M}" in result.output
    assert raffle.commitment(campaign).seed_sha256 == sha256_hex(seed)
    simulate_volunteers(campaign, volunteers=2, items=20)
    result = runner.invoke(args=["raffle", "draw", "test", "--seed", seed, "--beacon", "7", "--prizes", "2"])
    assert result.exit_code != 0 and "after the campaign has closed" in result.output
    _time_passes(campaign)
    result = runner.invoke(args=["raffle", "draw", "test", "--seed", seed, "--beacon", "7", "--prizes", "2"])
    assert result.exit_code == 0 and "prize 2: ticket" in result.output
    assert runner.invoke(args=["raffle", "tickets", "test"]).output.count("\n") == 5  # header + 4 tickets


def test_export_row_counts_columns_and_round_trip(app, tmp_path, make_campaign):
    campaign = make_campaign(sentences=20)
    simulate_volunteers(campaign, volunteers=5, items=15)
    answered = db.session.scalar(select(func.count()).where(Item.answered_at.is_not(None)))
    controls = db.session.scalar(select(func.count()).where(Item.answered_at.is_not(None), Item.control_id.is_not(None)))
    runner = app.test_cli_runner()
    out = tmp_path / "judgments.csv"
    assert runner.invoke(args=["export", "judgments", "test", "-o", str(out)]).exit_code == 0
    rows = list(csv.DictReader(open(out)))
    assert len(rows) == answered and list(rows[0]) == pairwise_export.JUDGMENT_COLUMNS
    assert sum(r["is_control"] == "true" for r in rows) == controls
    assert len({r["volunteer"] for r in rows}) == 5
    test_rows = [r for r in rows if r["is_control"] == "false"]
    assert all(r["choice"] in (r["system_a"], r["system_b"], "equal") for r in test_rows)
    assert all(r["shown_first"] in (r["system_a"], r["system_b"]) for r in test_rows)
    jsonl = tmp_path / "judgments.jsonl"
    runner.invoke(args=["export", "judgments", "test", "--format", "jsonl", "-o", str(jsonl)])
    records = [json.loads(line) for line in open(jsonl)]
    assert len(records) == answered and isinstance(records[0]["is_control"], bool)
    organiser = staff_client(app, "organiser", "organiser1")
    streamed = organiser.get("/organiser/c/test/export/judgments.csv")
    assert streamed.is_streamed and streamed.get_data(as_text=True).count("\n") == answered + 1
    volunteers = list(csv.DictReader(io.StringIO(organiser.get("/organiser/c/test/export/volunteers.csv").get_data(as_text=True))))
    assert len(volunteers) == 5 and "email" not in volunteers[0]
    # Round trip through the analysis code: Bozka CSV, JSON Lines and WMT CSV.
    from app.stats.pairwise import loader
    from app.stats.pairwise.analysis import analyse

    for path in (out, jsonl):
        data = loader.load(str(path))
        assert len(data) == len(test_rows) and sorted(data.systems) == ["A", "B", "C"]
    wmt = tmp_path / "wmt.csv"
    runner.invoke(args=["export", "wmt", "test", "-o", str(wmt)])
    data = loader.load(str(wmt))
    assert data.source_format == "wmt" and len(data) == len(test_rows)
    # both exports key the same items: the same agreement figures
    assert analyse(data, rounds=0)["agreement"] == analyse(loader.load(str(out)), rounds=0)["agreement"]
    result = analyse(loader.load(str(out)), rounds=20)
    assert {tuple(p["systems"]) for p in result["pairs"]} == {("A", "B"), ("A", "C"), ("B", "C")}
    assert sum(p["judgments"] for p in result["pairs"]) == len(test_rows)


def test_discarded_and_controls_exports(app, make_campaign):
    campaign = make_campaign(sentences=20)
    people = simulate_volunteers(campaign, volunteers=2, items=10)
    from app.services import answers
    answers.dismiss(campaign, people[0], "test dismissal", utcnow())
    db.session.commit()
    discarded = list(csv.DictReader(io.StringIO("".join(export.stream(export.source(campaign), "discarded", "csv", db.engine)))))
    assert len(discarded) == 10 and {r["discard_reason"] for r in discarded} == {"test dismissal"}
    controls = list(csv.DictReader(io.StringIO("".join(export.stream(export.source(campaign), "controls", "csv", db.engine)))))
    assert len(controls) == 8 and all(r["control_passed"] == "true" for r in controls)
    assert {r["system_a"] for r in controls} == {"<better>"}


def test_csv_cells_that_look_like_formulas_are_neutralised():
    assert export.neutralise("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    for prefix in "+-@":
        assert export.neutralise(prefix + "x") == "'" + prefix + "x"
    assert export.neutralise("plain") == "plain" and export.neutralise(-1) == -1
    text = "".join(export.as_csv(["a"], [{"a": "=1+1"}, {"a": None}, {"a": True}]))
    assert text == "a\n'=1+1\n\"\"\ntrue\n" or text == "a\n'=1+1\n\ntrue\n"


def test_admin_creates_accounts(app, make_campaign):
    make_campaign()
    organiser = staff_client(app, "admin", "admin1")  # an organiser may not (one of another campaign could read this one)
    token = csrf_token(organiser, "/organiser/accounts")
    organiser.post("/organiser/accounts", data={"csrf_token": token, "role": "researcher", "username": "res",
                                                 "email": "res@example.org", "password": "research-pass"})
    user = db.session.scalar(select(User).where(User.username == "res"))
    assert user.role == "researcher" and user.is_confirmed


def test_every_export_counts_the_databases_rows_in_both_formats(app, make_campaign):
    campaign = make_campaign(sentences=20)
    people = simulate_volunteers(campaign, volunteers=4, items=12)
    from app.services import answers
    answers.dismiss(campaign, people[1], "test dismissal", utcnow())
    db.session.commit()
    answered = Item.answered_at.is_not(None)
    expected = {
        "judgments": db.session.scalar(select(func.count()).where(answered)),
        "controls": db.session.scalar(select(func.count()).where(answered, Item.control_id.is_not(None))),
        "discarded": db.session.scalar(select(func.count()).where(answered, Item.discarded_at.is_not(None))),
        "volunteers": db.session.scalar(select(func.count(Participation.id))),
        "wmt": db.session.scalar(select(func.count()).where(answered, Item.control_id.is_(None),
                                                             Item.discarded_at.is_(None))),
    }
    assert expected["discarded"] == 12 and expected["volunteers"] == 4
    researcher = staff_client(app, "researcher", "researcher1")
    for kind, count in expected.items():
        body = researcher.get(f"/organiser/c/test/export/{kind}.csv").get_data(as_text=True)
        assert len(list(csv.DictReader(io.StringIO(body)))) == count, kind
        if kind != "wmt":
            lines = researcher.get(f"/organiser/c/test/export/{kind}.jsonl").get_data(as_text=True).splitlines()
            assert len(lines) == count and all(json.loads(line)["campaign"] == "test" for line in lines), kind
            assert "@example.org" not in "".join(lines) and "Real Name" not in "".join(lines)
    # The same pseudonyms in the judgments and volunteers exports.
    judgments = {r["volunteer"] for r in pairwise_export.judgment_rows(export.source(campaign), db.engine)}
    assert judgments == {r["volunteer"] for r in export.volunteer_rows(export.source(campaign), db.engine)}


def test_every_export_column_is_documented():
    with open(f"{ROOT}/docs/export-format.md", encoding="utf-8") as handle:
        doc = handle.read()
    for columns in (pairwise_export.JUDGMENT_COLUMNS, pairwise_export.CONTROL_COLUMNS, pairwise_export.WMT_COLUMNS,
                    da_export.DA_JUDGMENT_COLUMNS, da_export.DA_VOLUNTEER_QUALITY, da_export.WMT_DA_COLUMNS):
        assert [c for c in columns if f"`{c}`" not in doc] == []


def test_statuses_and_roles_are_shown_in_the_interface_language(app, make_campaign):
    make_campaign()
    organiser = staff_client(app, "admin", "admin1")  # the accounts page is the admins'
    organiser.set_cookie("bozka_lang", "eu", domain="localhost")
    token = csrf_token(organiser, "/organiser/c/test/")
    page = organiser.post("/organiser/c/test/status", follow_redirects=True,
                          data={"csrf_token": token, "status": "draft"}).get_data(as_text=True)
    assert "Zirriborroa" in page  # "Draft": the label, never the stored code
    listing = organiser.get("/organiser/").get_data(as_text=True)
    assert "<td>Zirriborroa</td>" in listing and "<td>draft</td>" not in listing
    dashboard = organiser.get("/organiser/c/test/").get_data(as_text=True)
    assert "<td>Ebaluazio guztiak</td>" in dashboard and "<td>judgments</td>" not in dashboard
    token = csrf_token(organiser, "/organiser/accounts")
    page = organiser.post("/organiser/accounts", follow_redirects=True, data={
        "csrf_token": token, "role": "researcher", "username": "ikerlari", "email": "ikerlari@example.org",
        "password": "a long enough passphrase 7"}).get_data(as_text=True)
    assert "ikerlari (Ikertzailea)" in page and "(researcher)" not in page


def test_language_names_are_written_as_in_a_sentence():
    from app.languages import language_name

    assert language_name("en", "es") == "inglés" and language_name("eu", "es") == "euskera"
    assert language_name("en", "en") == "English"
    assert language_name("eu", "eu", capitalised=True) == "Euskara"
    assert language_name("xx-nonsense") == "xx-nonsense"


def test_answered_items_come_in_batches_once_each_in_order(app, make_campaign):
    """The exports read answered items a batch at a time (short reads): ties in
    time, batch edges and answers given after the download began."""
    from app.services.answered import answered_items

    campaign = make_campaign(sentences=20)
    simulate_volunteers(campaign, volunteers=3, items=7)
    items = db.session.scalars(select(Item).where(Item.answered_at.is_not(None)).order_by(Item.id)).all()
    for item in items[:5]:  # five answers in the same microsecond, across batch edges
        item.answered_at = items[0].answered_at
    db.session.commit()
    query = select(Item.id, Item.answered_at).where(Item.campaign_id == campaign.id)
    expected = [row.id for row in db.session.execute(
        query.where(Item.answered_at.is_not(None)).order_by(Item.answered_at, Item.id))]
    rows = answered_items(db.engine, query, batch=3)
    first = next(rows)
    late = items[-1]
    late.answered_at = utcnow() + timedelta(seconds=1)  # answered after the download began
    db.session.commit()
    got = [first.id, *(row.id for row in rows)]
    assert got == [i for i in expected if i != late.id] and len(got) == len(set(got)) == len(items) - 1
