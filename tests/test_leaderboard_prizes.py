"""How many of the ranking win prizes, a campaign setting (issue 31):
leaderboard_prizes in campaign.toml, on the volunteers' ranking (hint,
marks, the live payload), the organisers' top contributors, and the
public progress's note of its period."""
from datetime import datetime, timedelta

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from app import realtime
from app.extensions import db, socketio
from app.models import Campaign
from app.services import accounts, dashboard, leaderboard
from app.services.importer import CampaignFormatError, read_campaign
from helpers import QUIET_SIGNS, confirm, register, staff_client, write_campaign


def _folder(tmp_path, **settings):
    return write_campaign(str(tmp_path / "c"), **(QUIET_SIGNS | settings))


# The setting.

@pytest.mark.parametrize("given, read", [(None, 5), (0, 0), (3, 3), (leaderboard.TOP, leaderboard.TOP)])
def test_the_setting_is_read_with_its_default(tmp_path, given, read):
    settings = {} if given is None else {"leaderboard_prizes": given}
    assert read_campaign(_folder(tmp_path, **settings)).settings["leaderboard_prizes"] == read


@pytest.mark.parametrize("given", [-1, leaderboard.TOP + 1, "5", 2.5])
def test_a_negative_or_too_large_value_is_refused_naming_the_key(tmp_path, given):
    with pytest.raises(CampaignFormatError) as info:
        read_campaign(_folder(tmp_path, leaderboard_prizes=given))
    assert info.value.path == "campaign.toml"
    assert "leaderboard_prizes must be an integer" in info.value.message
    if given == -1 or given == leaderboard.TOP + 1:
        assert info.value.message == f"leaderboard_prizes must be an integer from 0 to {leaderboard.TOP}"


def test_the_campaign_keeps_it_and_the_settings_command_prints_it(app, make_campaign):
    campaign = make_campaign(leaderboard_prizes=3)
    assert campaign.leaderboard_prizes == 3
    result = CliRunner().invoke(app.cli, ["campaign", "settings", "test"])
    assert result.exit_code == 0 and "leaderboard_prizes = 3\n" in result.output


# The ranking.

def _ranked(campaign, counts):
    start = datetime(2026, 1, 1)
    for n, count in enumerate(counts):
        user = accounts.create_user(f"p{n}@example.org", f"p{n}", "password-123")
        user.email_confirmed_at = start
        participation = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
        participation.items_answered = participation.items_counted = count
        participation.reached_count_at = start + timedelta(minutes=n)
    db.session.commit()
    leaderboard.invalidate(campaign.id)


def _top_list(page, list_id):
    start = page.index(f'id="{list_id}"')
    return page[start:page.index("</ol>", start)]


@pytest.mark.parametrize("prizes", [3, 0])
def test_the_volunteers_ranking_marks_the_campaigns_prize_winners(app, make_campaign, prizes):
    campaign = make_campaign(leaderboard_prizes=prizes)
    _ranked(campaign, [20, 19, 18, 17, 16, 15, 14])
    assert leaderboard.get(campaign.id).public_payload()["prizes"] == prizes
    assert leaderboard.build(campaign.id).public_payload()["prizes"] == prizes  # the live game's full pass
    client = app.test_client()
    register(client, username="viewer", email="viewer@example.org")
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    top = _top_list(page, "top")
    assert top.count("<li") == 7 and top.count('class="prize"') == prizes
    if prizes:
        assert f"The top {prizes} win the prizes." in page
    else:
        assert "win the prizes" not in page and 'id="prizes-hint"' not in page


def test_the_live_ranking_event_carries_the_campaigns_value(app, make_campaign):
    campaign = make_campaign(leaderboard_prizes=2)
    _ranked(campaign, [5, 4, 3])
    client = app.test_client()
    register(client, username="vol1", email="vol1@example.org")
    confirm("vol1")
    sio = socketio.test_client(app, flask_test_client=client)
    assert sio.emit("join", {"campaign": "test"}, callback=True) == {"ok": True}
    realtime.broadcast(campaign.id)
    payloads = [event["args"][0] for event in sio.get_received() if event["name"] == "ranking"]
    assert payloads and all(payload["prizes"] == 2 for payload in payloads)
    sio.disconnect()


@pytest.mark.parametrize("prizes, rows", [(3, 3), (0, 5), (8, 7)])
def test_the_dashboards_top_contributors_are_the_prize_winners(app, make_campaign, prizes, rows):
    """As many rows as prizes; with none, the first five, not called winners."""
    campaign = make_campaign(leaderboard_prizes=prizes)
    _ranked(campaign, [20, 19, 18, 17, 16, 15, 14])
    assert len(dashboard.top_contributors(campaign)) == rows
    panel = staff_client(app, username="boss").get("/organiser/c/test/panel").get_data(as_text=True)
    top = _top_list(panel, "dash-top")
    assert top.count("<li") == rows and top.count('class="prize"') == (rows if prizes else 0)
    assert (f"The top {prizes} win the prizes." in panel) == bool(prizes)


# The public progress: the page says how often it is counted.

@pytest.mark.parametrize("seconds, said", [
    (60, "Judgments collected are counted once a minute."),
    (120, "Judgments collected are counted every 2 minutes."),
    (45, "Judgments collected are counted every 45 seconds."),
    (0, None),
])
def test_the_progress_says_how_often_it_is_counted(app, make_campaign, seconds, said):
    app.config["BOZKA_PUBLIC_FIGURES_SECONDS"] = seconds
    make_campaign()
    client = app.test_client()
    register(client)
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    if said:
        assert f'<p class="hint" id="progress-period">{said}</p>' in page
    else:
        assert 'id="progress-period"' not in page


def test_the_volunteers_figure_is_the_campaigns_counter_at_render(app, make_campaign):
    """Read with the cached top, from the campaign's row, not a count of rows."""
    campaign = make_campaign()
    _ranked(campaign, [3, 2])
    client = app.test_client()
    register(client)
    page = client.get("/c/test/evaluate").get_data(as_text=True)
    volunteers = db.session.scalar(select(Campaign.volunteers).where(Campaign.id == campaign.id))
    assert volunteers == 3 and f'<span data-field="volunteers">{volunteers}</span>' in page


def test_the_last_comer_is_named_only_once_their_email_is_confirmed(app, make_campaign):
    """As in the ranking: a name nobody vouched for is not shown to everybody."""
    campaign = make_campaign()
    register(app.test_client(), username="newbie", email="newbie@example.org")
    assert leaderboard.get(campaign.id).public_payload()["last"] == {"n": None}
    confirm("newbie")
    leaderboard.invalidate(campaign.id)
    assert leaderboard.get(campaign.id).public_payload()["last"] == {"n": "newbie"}
