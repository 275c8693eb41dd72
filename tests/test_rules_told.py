"""What the volunteer pages say about a campaign, as it works: the control
rule from the campaign's own settings (pairwise: controls.dismissal_reason;
DA: the live rule of da_quality), the end time, the instructions' order (the
organisers' words first) and the prize sentence from leaderboard_prizes."""
import re
from datetime import datetime, timedelta

import pytest

from app.extensions import db
from app.models import utcnow
from app.protocols.pairwise import controls as control_rules
from app.services import accounts
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from helpers import QUIET_SIGNS, csrf_token, register, write_campaign

END = datetime(2031, 3, 5, 9, 30)
OPEN_UNTIL = 'Open until <time datetime="2031-03-05T09:30Z">March 5, 2031, 9:30:00\u202fAM UTC</time>'


def _set(campaign, **values):
    for name, value in values.items():
        setattr(campaign, name, value)
    db.session.commit()


def _text(page):
    """The page's words, tags out and spaces folded."""
    return " ".join(re.sub(r"<[^>]+>", " ", page).split())


def _rule(client, path="/c/test/instructions"):
    page = client.get(path).get_data(as_text=True)
    match = re.search(r'<p class="rule" id="control-rule">(.*?)</p>', page, re.S)
    return _text(match.group(1)) if match else None


@pytest.fixture
def da_campaign(app, tmp_path):
    def make(**settings):
        folder = write_campaign(str(tmp_path / "da"), protocol="da", **(QUIET_SIGNS | settings))
        campaign = create_campaign(read_campaign(folder))
        db.session.commit()
        return campaign

    return make


def test_the_pairwise_rule_says_when_it_is_checked_and_what_ends_participation(app, client, make_campaign):
    campaign = make_campaign()
    told = ("Your answers to the control sentences are checked after every 10 sentences you judge. "
            "If you missed any of the first 2 control sentences, your participation ends at the next check. "
            "Your participation ends at a check if you missed more than 1 in 3 of all your control sentences.")
    assert _rule(client) == told
    assert _rule(client, "/c/test/register") == told
    _set(campaign, check_every=5, control_first=1, failure_cutoff="1/4", control_window=8)
    assert _rule(client) == (
        "Your answers to the control sentences are checked after every 5 sentences you judge. "
        "If you missed the first control sentence, your participation ends at the next check. "
        "Your participation ends at a check if you missed more than 1 in 4 of your latest 8 control sentences.")
    _set(campaign, check_every=1, control_first=0, control_window=1)
    assert _rule(client) == (
        "Your answers to the control sentences are checked after each sentence you judge. "
        "Your participation ends at a check if you missed the latest control sentence.")
    _set(campaign, failure_cutoff="0", control_window=0)
    assert _rule(client).endswith("Your participation ends at a check if you missed any control sentence.")
    _set(campaign, control_window=4)
    assert _rule(client).endswith("if you missed any of your latest 4 control sentences.")


def test_what_the_pairwise_rule_says_is_what_it_does():
    """The default campaign's words, against pairwise's controls.dismissal_reason: a
    missed first control ends participation at item 10, not before; past
    the first controls, 1 missed in 3 is kept and 2 in 5 is not."""
    rule = dict(first=2, check_every=10, cutoff="1/3")
    assert all(control_rules.dismissal_reason(n, [False], **rule) is None for n in range(1, 10))
    assert control_rules.dismissal_reason(10, [False, True, True], **rule) == control_rules.INITIAL_CONTROL_FAILED
    assert control_rules.dismissal_reason(10, [True, False, True], **rule) == control_rules.INITIAL_CONTROL_FAILED
    assert control_rules.dismissal_reason(20, [True, True, False], **rule) is None
    assert control_rules.dismissal_reason(30, [True, True, False, True, False], **rule) == control_rules.CONTROL_FAILURE_RATE


def test_the_join_page_tells_the_same_rule(app, client, make_campaign):
    make_campaign(check_every=20)
    accounts.create_user("second@example.org", "second", "correct horse 1")
    db.session.commit()
    token = csrf_token(client, "/login")
    client.post("/login", data={"csrf_token": token, "email": "second@example.org", "password": "correct horse 1"})
    assert _rule(client, "/c/test/join").startswith(
        "Your answers to the control sentences are checked after every 20 sentences you judge.")


def test_the_da_rule_says_its_own_thresholds(app, client, da_campaign):
    campaign = da_campaign()
    told = ("Once you have scored 5 of these, and each time you score one after that, your participation ends "
            "if, on average, you did not score the damaged translations lower than the originals, or if your "
            "scores hardly vary (typically within 3 points of their average).")
    assert _rule(client, "/c/test/register") == "Some translations come back later with damage done on purpose. " + told
    # The instructions have just said that translations come back.
    page = client.get("/c/test/instructions").get_data(as_text=True)
    assert "a changed one may come before the original" in page
    # The early checks hold (score_quality.early_verdict), and the page says so.
    assert "Until your first raffle number (10 sentences), half of the items are such checks" in page
    assert _rule(client) == "Some of those are damaged on purpose. " + told
    assert "control sentence" not in page
    _set(campaign, qc_min_pairs=1, qc_min_spread=2.5)
    assert _rule(client).startswith("Some of those are damaged on purpose. Each time you score one of these,")
    assert "(typically within 2.5 points of their average)" in _rule(client)
    _set(campaign, qc_min_spread=0.0)
    assert _rule(client).endswith("lower than the originals.") and "hardly vary" not in _rule(client)
    # Without quality-control items, nothing ends participation: nothing is said.
    _set(campaign, qc_share=0)
    assert _rule(client) is None and _rule(client, "/c/test/register") is None
    assert "come back" not in client.get("/c/test/instructions").get_data(as_text=True)


def test_the_end_time_is_shown_where_volunteers_look(app, client, make_campaign):
    campaign = make_campaign()
    _set(campaign, ends_at=END)
    assert OPEN_UNTIL in client.get("/c/test/").get_data(as_text=True)
    assert OPEN_UNTIL in client.get("/c/test/instructions").get_data(as_text=True)
    register(client)
    judging = client.get("/c/test/evaluate").get_data(as_text=True)
    # Below the task (the answers stay on a phone's first screen).
    assert re.search(r'id="task".*<p class="hint" id="open-until">' + re.escape(OPEN_UNTIL) + r"</p>", judging, re.S)
    assert OPEN_UNTIL in client.get("/c/test/instructions").get_data(as_text=True)
    # In the volunteer's language, with the zone, as the other times of the site.
    basque = client.get("/c/test/evaluate", headers={"Accept-Language": "eu"}).get_data(as_text=True)
    line = _text(re.search(r'id="open-until">(.*?)</p>', basque, re.S).group(1))
    assert "2031(e)ko martxoaren 5(a)" in line and "UTC" in line and "Open until" not in line
    spanish = client.get("/c/test/instructions", headers={"Accept-Language": "es"}).get_data(as_text=True)
    assert "5 de marzo de 2031, 9:30:00 UTC" in spanish


def test_no_end_time_no_line(app, client, make_campaign):
    campaign = make_campaign()
    anonymous = app.test_client()
    register(client)
    for who, path in ((anonymous, "/c/test/"), (client, "/c/test/instructions"), (client, "/c/test/evaluate")):
        assert 'id="open-until"' not in who.get(path).get_data(as_text=True), path
    # Past its end, the page says it has ended instead.
    _set(campaign, ends_at=utcnow() - timedelta(minutes=1))
    for path in ("/c/test/", "/c/test/instructions"):
        page = anonymous.get(path).get_data(as_text=True)
        assert "This campaign has ended." in page and 'id="open-until"' not in page, path


def test_before_the_start_the_end_follows_the_opening(app, client, make_campaign):
    campaign = make_campaign()
    _set(campaign, starts_at=datetime(2031, 3, 1, 8, 0), ends_at=END)
    page = client.get("/c/test/instructions").get_data(as_text=True)
    assert page.index("This campaign opens on") < page.index(OPEN_UNTIL)


@pytest.mark.parametrize("protocol", ["pairwise", "da"])
def test_the_organisers_instructions_come_first(app, client, make_campaign, da_campaign, protocol):
    campaign = make_campaign() if protocol == "pairwise" else da_campaign()
    _set(campaign, instructions="Judge the sentences about sport first.\n\nWrite to us if anything is odd.")
    page = client.get("/c/test/instructions").get_data(as_text=True)
    general = "Choose “both are of equal quality”" if protocol == "pairwise" else "Move the slider"
    order = [page.index(text) for text in (
        "<h1>Instructions</h1>",
        '<h2 id="campaign-instructions">For this campaign</h2>',
        "Judge the sentences about sport first.",
        "Write to us if anything is odd.",
        '<h2 id="general-instructions">How judging works</h2>',
        general,
        'id="control-rule"',
        'id="rewards"',
    )]
    assert order == sorted(order)
    # Without the organisers' text, the general instructions need no heading.
    _set(campaign, instructions="")
    page = client.get("/c/test/instructions").get_data(as_text=True)
    assert "<h2" not in page and general in page


@pytest.mark.parametrize("protocol", ["pairwise", "da"])
def test_the_prize_sentence_counts_the_prizes(app, client, make_campaign, da_campaign, protocol):
    campaign = make_campaign() if protocol == "pairwise" else da_campaign()

    def rewards():
        page = client.get("/c/test/instructions").get_data(as_text=True)
        return _text(re.search(r'<p id="rewards">(.*?)</p>', page, re.S).group(1))

    assert campaign.leaderboard_prizes == 5  # the default
    assert rewards() == ("Every 10 sentences you judge earn a raffle number. "
                         "The top 5 contributors in the ranking win prizes.")
    _set(campaign, leaderboard_prizes=1, raffle_every=1)
    assert rewards() == ("Every 1 sentence you judge earns a raffle number. "
                         "The top contributor in the ranking wins a prize.")
    _set(campaign, leaderboard_prizes=0)
    assert rewards() == "Every 1 sentence you judge earns a raffle number."
    assert "prize" not in client.get("/c/test/instructions").get_data(as_text=True)
