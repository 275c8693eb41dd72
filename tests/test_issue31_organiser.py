"""Issue 31, the organisers' and researchers' minor items: the dashboard's
ranks and raffle figures agree with what volunteers and the public list
show, the DA review's evidence counts scores, the "equal" sign compares a
volunteer with the crowd without them, terminal commands are audited, the
export documentation and the raffle's checker are served, and a volunteer's
long page comes a page at a time."""
import json
import os
import random
import shutil
import subprocess
import sys
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import AuditLog, Campaign, Item, Participation, utcnow
from app.services import accounts, dashboard, evaluation, holds, leaderboard, raffle, raffle_rules, review, rewards
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from app.services.security import system_user
from helpers import QUIET_SIGNS, csrf_token, give_every_campaign, write_campaign

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _volunteer(campaign, name, items, seed=3, test_choice=None, confirmed=True):
    """A volunteer who answered ``items`` items, controls right; test items
    ``test_choice(number)`` (default: first, second, first, equal)."""
    user = accounts.create_user(f"{name}@example.org", name, "password-123", age_group="26-35",
                                studies_level="university", studies_field="humanities")
    if confirmed:
        user.email_confirmed_at = utcnow()
    participation = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
    db.session.commit()
    rng = random.Random(seed)
    for number in range(1, items + 1):
        item = evaluation.show(campaign, participation.id, utcnow(), rng).item
        if item.is_control:
            choice = "left" if item.better_left else "right"
        else:
            choice = (test_choice or (lambda n: ("left", "right", "left", "equal")[n % 4]))(number)
        evaluation.answer(campaign, participation.id, item.token, choice, utcnow(), rng)
    db.session.refresh(participation)
    return participation


def _staff(app, name, role):
    user = accounts.create_user(f"{name}@example.org", name, "staff-password", role=role)
    user.email_confirmed_at = utcnow()
    give_every_campaign(user)
    db.session.commit()
    client = app.test_client()
    token = csrf_token(client, "/login")
    client.post("/login", data={"csrf_token": token, "email": user.email, "password": "staff-password"})
    return client


# Top contributors: the volunteers' tie rule.

def test_top_contributors_share_a_rank_on_equal_counts_as_volunteers_see(app, make_campaign):
    campaign = make_campaign(sentences=30)
    for name, items in (("first", 12), ("second", 10), ("third", 10), ("fourth", 8)):
        _volunteer(campaign, name, items)
    leaderboard.invalidate(campaign.id)
    top = dashboard.top_contributors(campaign)
    assert [(row["username"], row["count"]) for row in top][:1] == [("first", 12)]
    assert [row["rank"] for row in top] == [1, 2, 2, 4]
    assert [row["rank"] for row in top] == [row["r"] for row in leaderboard.get(campaign.id).top()[:4]]


# The raffle's figures: the published list's, and what is left out of it.

def test_the_raffle_figures_are_the_published_lists_and_name_the_held_tickets(app, make_campaign):
    campaign = make_campaign(sentences=40, raffle_every=10)
    kept = _volunteer(campaign, "kept", 20)
    held = _volunteer(campaign, "held", 20, seed=4)
    _volunteer(campaign, "unconfirmed", 10, seed=5, confirmed=False)
    held.held_at, held.held_reason = utcnow(), "same_side"
    rewards.list_changed(campaign.id)
    db.session.commit()
    figures = dashboard.raffle_state(campaign)
    published = raffle.published_tickets(campaign)
    assert figures["eligible"] == len(published) == kept.tickets_valid == 2
    assert figures["left_out"] == [("held", 2), ("unconfirmed", 1)]
    assert figures["left_out_total"] == 3 and figures["tickets"] == 5

    page = _staff(app, "boss", "organiser").get(f"/organiser/c/{campaign.slug}/panel").get_data(as_text=True)
    assert 'data-figure="raffle-eligible">2<' in page
    assert "3 more valid tickets are not in the list:" in page
    assert "2 tickets of volunteers held for review (back in the list if the hold is cleared)" in page
    assert "1 ticket of a volunteer who has not confirmed their email" in page


# The DA review's evidence of answers below the reading floor.

def test_the_da_review_counts_scores_as_test_answers(app, tmp_path):
    folder = write_campaign(str(tmp_path / "da"), protocol="da", sentences=12,
                            **(QUIET_SIGNS | {"fast_seconds_per_word": 0.5}))
    campaign = create_campaign(read_campaign(folder))
    db.session.commit()
    user = accounts.create_user("scorer@example.org", "scorer", "password-123")
    user.email_confirmed_at = utcnow()
    participation = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
    db.session.commit()
    rng = random.Random(2)
    step = evaluation.show(campaign, participation.id, utcnow(), rng)
    for _answer in range(8):  # at once: below the reading floor
        step = evaluation.answer(campaign, participation.id, step.item.token, 60, utcnow(), rng)
    record = review.volunteer_record(campaign, db.session.get(Participation, participation.id))
    assert record.signs.tests == 8 and record.signs.too_fast == 8  # was "8 of 0"
    page = _staff(app, "boss", "organiser").get(f"/organiser/c/{campaign.slug}/volunteer/{participation.id}")
    assert "Below the reading floor: 8 of 8 test answers" in page.get_data(as_text=True)


# The "equal" sign: the crowd without the volunteer.

def test_the_crowd_share_leaves_the_volunteers_own_answers_out():
    # 260 crowd judgments, 70 "equal"; 60 of them the suspect's, 30 "equal".
    with_them = holds.crowd_equal_share(70, 260)
    without = holds.crowd_equal_share(70, 260, own_equal=30, own=60)
    assert with_them == pytest.approx(70 / 260) and without == pytest.approx(40 / 200)
    settings = dict(min_tests=20, alpha=1e-5, fast_limit=0)
    # The same answers hold the volunteer only against the crowd without them.
    assert holds.sign(15, 15, 30, 0, with_them, **settings) is None
    assert holds.sign(15, 15, 30, 0, without, **settings) == holds.EQUAL
    # Below the minimum, once their own are left out, the prior decides.
    assert holds.crowd_equal_share(70, 260, own_equal=30, own=100) == holds.EQUAL_PRIOR


def test_the_volunteers_crowd_counters_are_their_part_of_the_campaigns(app, make_campaign):
    campaign = make_campaign(sentences=40, repeat_share=30, repeat_distance=3)
    equal_often = _volunteer(campaign, "equal", 30, test_choice=lambda n: "equal" if n % 3 else "left")
    other = _volunteer(campaign, "other", 25, seed=8)
    db.session.refresh(campaign)

    def crowd_part(participation, *where):
        return db.session.scalar(select(func.count(Item.id)).where(
            Item.participation_id == participation.id, Item.slot_id.is_not(None), Item.answered_at.is_not(None),
            Item.discarded_at.is_(None), *where))

    repeats = db.session.scalar(select(func.count(Item.id)).where(Item.qc_kind == "repeat",
                                                                   Item.answered_at.is_not(None)))
    assert repeats > 0  # answers the crowd counters do not count, nor the controls
    for p in (equal_often, other):
        assert p.crowd_answers == crowd_part(p) and p.crowd_equal == crowd_part(p, Item.choice == "equal")
        # The suspicious report's counters count controls and repeats too: no exact subtraction from them.
        assert p.crowd_answers < p.answers_total - p.controls_answered
    assert campaign.collected_judgments == equal_often.crowd_answers + other.crowd_answers
    assert campaign.equal_judgments == equal_often.crowd_equal + other.crowd_equal
    record = review.volunteer_record(campaign, equal_often)
    assert record.signs.crowd_equal == pytest.approx(other.crowd_equal / other.crowd_answers)

    review.dismiss(campaign, equal_often, "always equal", utcnow())
    db.session.commit()
    db.session.refresh(campaign)
    assert (equal_often.crowd_answers, equal_often.crowd_equal) == (0, 0)
    assert (campaign.collected_judgments, campaign.equal_judgments) == (other.crowd_answers, other.crowd_equal)


# Commands run in the terminal leave an audit entry.

def test_commands_in_the_terminal_are_audited_as_the_command_line(app, make_campaign):
    campaign = make_campaign(sentences=12)
    campaign.ends_at = utcnow() + timedelta(days=2)
    db.session.commit()
    runner = app.test_cli_runner()
    steps = [
        (["user", "create", "--role", "organiser", "--email", "ori@example.org", "--username", "ori",
          "--password", "a long pass phrase 31"], "account.create", "ori"),
        (["user", "role", "ori@example.org", "researcher"], "account.role", "ori"),
        (["campaign", "settings", "test", "hold_alpha=0.001"], "campaign.settings", "test"),
        (["raffle", "commit", "test", "--beacon", "drand quicknet, first round after the end",
          "--beacon-at", (campaign.ends_at + timedelta(hours=1)).strftime("%Y-%m-%d %H:%M")], "raffle.commit", "test"),
    ]
    for args, action, target in steps:
        done = runner.invoke(args=args)
        assert done.exit_code == 0, (args, done.output)
        entry = db.session.scalars(select(AuditLog).order_by(AuditLog.id.desc())).first()
        assert (entry.action, entry.target, entry.user_id) == (action, target, None)
        assert entry.details["command_line"] == system_user()
    assert db.session.scalars(select(AuditLog).where(AuditLog.action == "campaign.settings")).one().details == {
        "command_line": system_user(), "changes": {"hold_alpha": 0.001}}
    refused = runner.invoke(args=["raffle", "commit", "test", "--beacon", "again", "--beacon-at", "2030-01-01 00:00"])
    assert refused.exit_code != 0
    assert db.session.scalar(select(func.count(AuditLog.id)).where(AuditLog.action == "raffle.commit")) == 1

    page = _staff(app, "root", "admin").get("/organiser/audit").get_data(as_text=True)
    assert f"Command line (system user {system_user()})" in page
    assert "Raffle commitment" in page and "Campaign settings changed" in page


# The export documentation, readable from the site.

def test_the_export_documentation_is_served_to_staff(app, make_campaign):
    campaign = make_campaign(sentences=12)
    researcher = _staff(app, "rea", "researcher")
    dashboard_page = researcher.get(f"/organiser/c/{campaign.slug}/").get_data(as_text=True)
    assert 'href="/organiser/docs/export-format.md"' in dashboard_page
    served = researcher.get("/organiser/docs/export-format.md")
    assert served.status_code == 200 and served.headers["Content-Type"] == "text/plain; charset=utf-8"
    with open(os.path.join(ROOT, "docs", "export-format.md"), "rb") as handle:
        assert served.data == handle.read()
    assert researcher.get("/organiser/docs/security.md").status_code == 404  # only the documents linked
    assert researcher.get("/organiser/docs/..%2Fwsgi.py").status_code == 404
    assert app.test_client().get("/organiser/docs/export-format.md").status_code in (302, 401)


# The raffle's checker: the site's own rules, standard library only, served.

def _drawn_record(tickets, seed, beacon):
    closed = utcnow().replace(microsecond=0) - timedelta(hours=3)
    return {
        "closed_at": raffle_rules.iso(closed),
        "commitment": {"seed_sha256": raffle_rules.sha256_hex(seed), "beacon": "a public draw",
                       "beacon_at": raffle_rules.iso(closed + timedelta(hours=1)),
                       "committed_at": raffle_rules.iso(closed - timedelta(days=5))},
        "draw": {"seed": seed, "prizes": 2, "beacon_value": raffle_rules.normal_beacon(beacon),
                 "drawn_at": raffle_rules.iso(closed + timedelta(hours=2)),
                 "tickets_sha256": raffle_rules.tickets_digest(sorted(tickets)),
                 "winners": raffle_rules.draw_winners(seed, tickets, 2, beacon)},
        "voids": [],
    }


def test_the_site_draws_with_the_very_script_it_serves(app, client):
    assert raffle_rules.verifier.__file__ == raffle_rules.SCRIPT
    for name in ("sha256_hex", "tickets_digest", "normal_beacon", "draw_winners", "iso", "check_draw"):
        assert getattr(raffle_rules, name) is getattr(raffle_rules.verifier, name)
    assert raffle.draw_winners is raffle_rules.verifier.draw_winners  # what services/raffle.py draws with
    served = client.get("/raffle/verify_raffle.py")
    assert served.status_code == 200 and "attachment" in served.headers["Content-Disposition"]
    with open(raffle_rules.SCRIPT, "rb") as handle:
        assert served.data == handle.read()


def test_the_script_checks_a_draw_alone_with_the_standard_library(tmp_path):
    script = tmp_path / "verify_raffle.py"
    shutil.copy(raffle_rules.SCRIPT, script)  # nothing of Bozka beside it
    tickets = [(n, f"v-{n % 7}") for n in range(1, 41)]
    (tmp_path / "raffle.json").write_text(json.dumps(_drawn_record(tickets, "s3cret", "7 12  33")))
    (tmp_path / "tickets.csv").write_text("ticket,volunteer\n" + "".join(f"{n},{h}\n" for n, h in tickets))

    def run(*args):
        return subprocess.run([sys.executable, "-I", str(script), *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=60)

    done = run("--draw", "raffle.json", "--tickets", "tickets.csv", "--beacon", "7 12 33")
    assert done.returncode == 0 and "the draw checks out" in done.stdout, done.stdout + done.stderr
    wrong = run("--draw", "raffle.json", "--tickets", "tickets.csv", "--beacon", "7 12 34")
    assert wrong.returncode == 1 and "beacon value: FAILS" in wrong.stdout
    imported = subprocess.run(
        [sys.executable, "-I", "-S", "-c", "import runpy, sys; runpy.run_path(sys.argv[1]); print(sorted("
         "{m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names) - {'__main__'}))", str(script)],
        cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert imported.returncode == 0 and imported.stdout.strip() == "[]", imported.stdout + imported.stderr


def test_the_raffle_page_offers_the_script(app, client, make_campaign):
    make_campaign(sentences=12)
    page = client.get("/c/test/raffle").get_data(as_text=True)
    assert 'href="/raffle/verify_raffle.py"' in page


# The volunteer's page on a phone: long lists fold, judgments a page at a time.

def test_the_volunteer_page_folds_its_lists_and_pages_its_judgments(app, make_campaign):
    campaign = make_campaign(sentences=60)
    participation = _volunteer(campaign, "long", 60)
    organiser = _staff(app, "boss", "organiser")
    url = f"/organiser/c/{campaign.slug}/volunteer/{participation.id}"
    first = organiser.get(url).get_data(as_text=True)
    for key in ("profile", "tickets", "controls", "judgments"):
        assert f'data-fold="{key}" data-default="closed">' in first, key  # folded, not open
    assert first.index('id="sign-fast"') < first.index('data-fold="tickets"')  # the evidence and decisions first
    rows = lambda html: html.split('<table id="judgments"', 1)[1].split("</table>", 1)[0].count("<tr><td")
    assert "Rows 1–10 of 60" in first and rows(first) == review.JUDGMENTS_PAGE == 10
    last = organiser.get(url + "?page=6").get_data(as_text=True)
    assert "Rows 51–60 of 60" in last and rows(last) == 10
    assert 'data-fold="judgments" data-default="open" open>' in last  # opened by its own links
    assert f'href="{url}?page=5#judgments"' in last and "?page=7" not in last
    assert "Rows 51–60 of 60" in organiser.get(url + "?page=99").get_data(as_text=True)
    assert "Rows 1–10 of 60" in organiser.get(url + "?page=-3").get_data(as_text=True)
    assert review.page_of([], 1).rows == [] and review.page_of([], 1).pages == 1
    assert review.page_of(list(range(25)), 3, size=10).rows == [20, 21, 22, 23, 24]
