"""A lifecycle that cannot trap an organiser (issue 31): a campaign opens
only with its raffle's commitment, by every way in (the dashboard, the
command line, the demo); nothing changes after the draw; a closed campaign
serves and counts nothing; the dashboard says the next step and offers only
the forms that can succeed."""
import hashlib
import os
from datetime import timedelta

from sqlalchemy import func, select

from app.extensions import db
from app.models import Campaign, Item, Participation, RaffleCommitment, utcnow
from app.services import lifecycle, raffle
from app.services.raffle_rules import sha256_hex
from helpers import QUIET_SIGNS, csrf_token, register, staff_client, write_campaign

NOW = utcnow().replace(second=0, microsecond=0)


def _record(drawn=False):
    return RaffleCommitment(campaign_id=1, seed_sha256="0" * 64, committed_at=NOW, draw_at=NOW,
                            drawn_at=NOW if drawn else None)


def _campaign(status, starts_at=None, ends_at=None):
    return Campaign(status=status, starts_at=starts_at, ends_at=ends_at)


def test_the_stages_follow_the_status_the_dates_and_the_raffle():
    later, earlier = NOW + timedelta(days=1), NOW - timedelta(days=1)
    assert lifecycle.stage(_campaign("draft"), None, NOW) == lifecycle.DRAFT
    assert lifecycle.stage(_campaign("draft", ends_at=later), _record(), NOW) == lifecycle.READY
    assert lifecycle.stage(_campaign("open", starts_at=later, ends_at=later + timedelta(1)), _record(), NOW) \
        == lifecycle.SCHEDULED
    assert lifecycle.stage(_campaign("open", ends_at=later), _record(), NOW) == lifecycle.OPEN
    assert lifecycle.stage(_campaign("open", ends_at=earlier), _record(), NOW) == lifecycle.CLOSED
    assert lifecycle.stage(_campaign("closed", ends_at=later), _record(), NOW) == lifecycle.CLOSED
    assert lifecycle.stage(_campaign("open", ends_at=earlier), _record(drawn=True), NOW) == lifecycle.DRAWN


def test_no_opening_without_a_commitment_and_no_change_after_the_draw():
    later = NOW + timedelta(days=1)
    refused = lifecycle.change_refused(_campaign("draft"), None, "open", None, later, NOW)
    assert "Publish the raffle's commitment before the campaign opens" in str(refused)
    assert lifecycle.change_refused(_campaign("draft"), None, "draft", None, later, NOW) is None
    assert lifecycle.change_refused(_campaign("draft"), None, "closed", None, None, NOW) is None
    assert "after the start" in str(lifecycle.change_refused(_campaign("draft"), None, "draft", later, NOW, NOW))
    drawn = _campaign("closed", ends_at=NOW - timedelta(hours=1))
    for status, ends_at in (("open", later), ("closed", later), ("draft", drawn.ends_at)):
        assert "drawn" in str(lifecycle.change_refused(drawn, _record(drawn=True), status, None, ends_at, NOW))


# --- the dashboard ------------------------------------------------------------------

def _draft(app, tmp_path, name="campaign"):
    folder = write_campaign(str(tmp_path / name), sentences=30, **QUIET_SIGNS)
    from app.cli import import_campaign

    _spec, campaign = import_campaign(folder)
    return campaign


def _post(client, path, **data):
    token = csrf_token(client, "/organiser/c/test/")
    return client.post(f"/organiser/c/test{path}", data={"csrf_token": token, **data}, follow_redirects=True)


def _stage(client):
    page = client.get("/organiser/c/test/").get_data(as_text=True)
    return page.split('class="card lifecycle" data-stage="')[1].split('"')[0], page


def test_the_dashboard_walks_the_lifecycle_and_offers_only_what_can_succeed(app, tmp_path):
    campaign = _draft(app, tmp_path)
    assert campaign.status == "draft"
    dash = staff_client(app, username="boss")
    stage, page = _stage(dash)
    assert stage == "draft" and "Next: set the campaign’s end time" in page.replace("'", "’")
    # Nothing offered that would be refused: no commitment without an end, no "Open" before it.
    assert "/raffle/commit" not in page and "/raffle/draw" not in page and '<option value="open"' not in page
    assert "Set the campaign's end time first" in page
    # Opening before the commitment is refused and changes nothing.
    ends = (utcnow() + timedelta(days=2)).replace(second=0, microsecond=0)
    refused = _post(dash, "/status", status="open", ends_at=ends.strftime("%Y-%m-%dT%H:%M"))
    assert "Publish the raffle" in refused.get_data(as_text=True)
    db.session.expire_all()
    assert db.session.get(Campaign, campaign.id).status == "draft"
    assert db.session.get(Campaign, campaign.id).ends_at is None
    # A volunteer does not find a draft.
    assert app.test_client().get("/c/test/").status_code == 404
    # The end, the commitment, then open.
    _post(dash, "/status", status="draft", ends_at=ends.strftime("%Y-%m-%dT%H:%M"))
    assert "/raffle/commit" in _stage(dash)[1]
    committed = _post(dash, "/raffle/commit", beacon="drand quicknet round 99",
                      beacon_at=(ends + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S"))
    assert committed.status_code == 200
    stage, page = _stage(dash)
    assert stage == "ready" and "/raffle/commit" not in page and '<option value="open"' in page
    opened = _post(dash, "/status", status="open", ends_at=ends.strftime("%Y-%m-%dT%H:%M"))
    assert "Campaign saved: Open." in opened.get_data(as_text=True)
    stage, page = _stage(dash)
    assert stage == "open" and "/raffle/draw" not in page  # the draw's form only once closed
    assert "Open" in dash.get("/organiser/").get_data(as_text=True)
    # Scheduled: the campaign list says so rather than "Open".
    starts = ends - timedelta(days=1)
    _post(dash, "/status", status="open", starts_at=starts.strftime("%Y-%m-%dT%H:%M"),
          ends_at=ends.strftime("%Y-%m-%dT%H:%M"))
    assert _stage(dash)[0] == "scheduled"
    assert "<td>Scheduled</td>" in dash.get("/organiser/").get_data(as_text=True)
    # Closed: the status form and the commitment's are gone, the draw's is there.
    _post(dash, "/status", status="closed", starts_at=starts.strftime("%Y-%m-%dT%H:%M"),
          ends_at=ends.strftime("%Y-%m-%dT%H:%M"))
    stage, page = _stage(dash)
    assert stage == "closed" and "/organiser/c/test/status" not in page
    assert "/raffle/draw" not in page  # not before the draw's time and the beacon's
    assert "cannot change any more" in page
    assert "<td>Closed</td>" in dash.get("/organiser/").get_data(as_text=True)


def test_after_the_draw_the_campaign_cannot_reopen(app, tmp_path):
    campaign = _draft(app, tmp_path)
    ends = (utcnow() + timedelta(days=1)).replace(second=0, microsecond=0)
    lifecycle.set_schedule(campaign, "open", None, ends, utcnow(),
                           commitment=(sha256_hex("seed"), "a beacon", ends + timedelta(minutes=5)))
    db.session.commit()
    # Time passes: the end and the beacon's time are behind us; the draw.
    record = raffle.commitment(campaign)
    campaign.ends_at = record.draw_at = utcnow() - timedelta(minutes=10)
    record.beacon_at = campaign.ends_at + timedelta(minutes=1)
    record.committed_at = campaign.ends_at - timedelta(hours=1)
    db.session.commit()
    raffle.draw(campaign, "seed", 1, beacon="its value")
    db.session.commit()
    dash = staff_client(app, username="boss")
    later = (utcnow() + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M")
    for status in ("open", "closed", "draft"):
        page = _post(dash, "/status", status=status, ends_at=later).get_data(as_text=True)
        assert "The raffle was drawn: the campaign’s status and dates cannot change any more." \
            in page.replace("&#39;", "’").replace("'", "’")
    db.session.expire_all()
    assert db.session.get(Campaign, campaign.id).ends_at == campaign.ends_at
    stage, page = _stage(dash)
    assert stage == "drawn" and "/organiser/c/test/status" not in page and "nobody won" in page
    assert "nobody won" in dash.get("/organiser/c/test/raffle/winners").get_data(as_text=True)


# --- serving after the close ------------------------------------------------------------

def test_a_closed_campaign_serves_and_counts_nothing_not_even_the_reserved_item(app, make_campaign):
    campaign = make_campaign(sentences=20)
    client = app.test_client()
    register(client)
    token = csrf_token(client, "/c/test/instructions")
    item = client.get("/c/test/api/item").get_json()["item"]
    campaign.status = "closed"
    db.session.commit()
    shown = client.get("/c/test/api/item").get_json()
    assert shown["status"] == "closed" and shown["item"] is None
    answered = client.post("/c/test/api/judgment", json={"token": item["token"], "choice": "left"},
                           headers={"X-CSRFToken": token}).get_json()
    assert answered["status"] == "closed" and answered["answered"] == 0 and answered["counted"] is False
    # Through the page's form: told that the answer was not recorded.
    page = client.post("/c/test/evaluate", data={"csrf_token": token, "token": item["token"], "choice": "left"})
    assert "The campaign closed before your answer arrived: it was not recorded." in page.get_data(as_text=True)
    assert db.session.scalar(select(func.count(Item.id)).where(Item.answered_at.is_not(None))) == 0
    assert db.session.scalar(select(Participation.items_counted)) == 0
    assert db.session.scalar(select(Campaign.collected_judgments)) == 0
    assert "closed" in client.get("/c/test/evaluate").get_data(as_text=True).lower()
    # Ended by its time, the same.
    campaign.status, campaign.ends_at = "open", utcnow() - timedelta(minutes=1)
    db.session.commit()
    again = client.post("/c/test/api/judgment", json={"token": item["token"], "choice": "left"},
                        headers={"X-CSRFToken": token}).get_json()
    assert again["status"] == "closed"
    assert db.session.scalar(select(func.count(Item.id)).where(Item.answered_at.is_not(None))) == 0


# --- the command line and the demo ---------------------------------------------------------

def test_the_command_line_imports_a_draft_and_opens_it_only_with_its_commitment(app, tmp_path):
    runner = app.test_cli_runner()
    folder = write_campaign(str(tmp_path / "c"), sentences=10)
    done = runner.invoke(args=["campaign", "import", folder])
    assert done.exit_code == 0 and "Imported as a draft: test" in done.output and "flask campaign open" in done.output
    assert db.session.scalar(select(Campaign.status)) == "draft"
    refused = runner.invoke(args=["campaign", "open", "test"])
    assert refused.exit_code != 0 and "--beacon" in refused.output
    no_end = runner.invoke(args=["campaign", "open", "test", "--beacon", "drand round 5", "--beacon-at",
                                 "2030-01-01 10:00"])
    assert no_end.exit_code != 0 and "end time" in no_end.output
    db.session.expire_all()
    assert db.session.scalar(select(Campaign.status)) == "draft" and raffle.commitment(
        db.session.scalar(select(Campaign))) is None
    ends = (utcnow() + timedelta(days=5)).replace(second=0, microsecond=0)
    opened = runner.invoke(args=["campaign", "open", "test", "--ends-at", ends.isoformat(), "--beacon",
                                 "drand round 5", "--beacon-at", (ends + timedelta(hours=1)).isoformat()])
    assert opened.exit_code == 0, opened.output
    seed = opened.output.split("(keep it safe, it is not stored): ")[1].split()[0]
    db.session.expire_all()
    campaign = db.session.scalar(select(Campaign))
    assert campaign.status == "open" and campaign.ends_at == ends
    assert raffle.commitment(campaign).seed_sha256 == hashlib.sha256(seed.encode()).hexdigest()
    closed = runner.invoke(args=["campaign", "close", "test"])
    assert closed.exit_code == 0
    db.session.expire_all()
    assert db.session.scalar(select(Campaign.status)) == "closed"
    reopened = runner.invoke(args=["campaign", "open", "test"])
    assert reopened.exit_code != 0 and "cannot re-open" in reopened.output


def test_import_and_open_in_one_step(app, tmp_path):
    from scripts.bench.harness import opening_args

    folder = write_campaign(str(tmp_path / "c"), sentences=10)
    done = app.test_cli_runner().invoke(args=["campaign", "import", folder, *opening_args()])
    assert done.exit_code == 0, done.output
    campaign = db.session.scalar(select(Campaign))
    assert campaign.status == "open" and raffle.commitment(campaign) is not None


def test_the_demo_opens_every_campaign_with_its_raffle_committed(app, tmp_path, monkeypatch):
    from app.cli import DEMO_SEEDS, load_demo

    monkeypatch.setattr(app, "instance_path", str(tmp_path))  # where the demo keeps its raffles' seeds

    load_demo(drafts=("demo-en-ur",))
    campaigns = db.session.scalars(select(Campaign).order_by(Campaign.slug)).all()
    with open(os.path.join(app.instance_path, DEMO_SEEDS), encoding="utf-8") as handle:
        seeds = dict(line.rstrip("\n").split("\t") for line in handle)
    for campaign in campaigns:
        record = raffle.commitment(campaign)
        if campaign.slug == "demo-en-ur":
            assert campaign.status == "draft" and record is None and campaign.slug not in seeds
            continue
        assert lifecycle.stage(campaign, record, utcnow()) == lifecycle.OPEN
        assert record.seed_sha256 == sha256_hex(seeds[campaign.slug]) and record.beacon_at > campaign.ends_at


def test_the_organiser_list_names_the_stage(app, tmp_path):
    _draft(app, tmp_path)
    assert "<td>Draft</td>" in staff_client(app, username="boss").get("/organiser/").get_data(as_text=True)


def test_the_draw_is_offered_from_the_later_of_its_time_and_the_beacons():
    ended = _campaign("closed", ends_at=NOW - timedelta(minutes=5))
    record = _record()
    record.draw_at, record.beacon_at = ended.ends_at, NOW + timedelta(minutes=1)
    from unittest import mock

    with mock.patch.object(raffle, "commitment", return_value=record):
        waiting = lifecycle.of(ended, NOW)
        due = lifecycle.of(ended, NOW + timedelta(minutes=2))
    assert waiting.stage == lifecycle.CLOSED and waiting.draw_from == record.beacon_at and not waiting.may_draw
    assert due.may_draw
    record.drawn_at, record.winners, record.notified = NOW, [{"prize": 1}, {"prize": 2}], {"1": "x"}
    with mock.patch.object(raffle, "commitment", return_value=record):
        assert not lifecycle.of(ended, NOW).told
        record.notified = {"1": "x", "2": "y"}
        assert lifecycle.of(ended, NOW).told
