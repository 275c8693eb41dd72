"""Organisers per campaign (issue 28): an organiser manages only the
campaigns given to them, an admin manages every one and gives them; a
researcher reads every campaign that is not a draft, and sees reporters
under their export pseudonym."""
import re

import pytest
from flask import url_for
from sqlalchemy import select

from app.cli import import_campaign
from app.extensions import db, socketio
from app.models import CampaignOrganiser, Item, ItemReport, User, utcnow
from app.services import accounts, organisers, reports
from app.services.campaign_writer import create_campaign
from app.services.importer import read_campaign
from app.services.pseudonyms import pseudonym
from helpers import QUIET_SIGNS, csrf_token, write_campaign

PASSWORD = "staff-password"
ADMIN_ONLY = {"organiser.accounts_page", "organiser.audit_log", "organiser.campaign_organisers",
              "organiser.add_organiser", "organiser.remove_organiser"}
READ_ONLY = {"organiser.index", "organiser.campaign", "organiser.panel", "organiser.export_file"}


def campaign_named(tmp_path, slug, status="open"):
    folder = write_campaign(str(tmp_path / slug), sentences=12, **QUIET_SIGNS)
    toml = f"{folder}/campaign.toml"
    with open(toml) as handle:
        text = handle.read().replace('slug = "test"', f'slug = "{slug}"')
    with open(toml, "w") as handle:
        handle.write(text)
    campaign = create_campaign(read_campaign(folder))
    campaign.status = status
    db.session.commit()
    return campaign


def person(role, name):
    user = accounts.create_user(f"{name}@example.org", name, PASSWORD, role=role)
    user.email_confirmed_at = utcnow()
    db.session.commit()
    return user


def logged_in(app, user):
    client = app.test_client()
    client.post("/login", data={"csrf_token": csrf_token(client, "/login"), "email": user.email,
                                "password": PASSWORD})
    return client


def reporter(campaign, name):
    """A volunteer of ``campaign`` with one reported item (made directly, as
    services/reports.report leaves it)."""
    user = person("volunteer", name)
    participation = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
    db.session.flush()
    item = Item(campaign_id=campaign.id, participation_id=participation.id, position=3, token=name,
                skipped_at=utcnow())
    db.session.add(item)
    db.session.flush()
    db.session.add(ItemReport(campaign_id=campaign.id, item_id=item.id, participation_id=participation.id,
                              reason="offensive", text="rude"))
    db.session.commit()
    return user, participation


@pytest.fixture
def two(app, tmp_path):
    """Campaigns "one" and "two", each with a volunteer who reported an
    item; "one" given to the organiser "ori"; an admin; a researcher."""
    one, two = campaign_named(tmp_path, "one"), campaign_named(tmp_path, "two")
    reporters = {c.slug: reporter(c, f"vol-{c.slug}") for c in (one, two)}
    ori = person("organiser", "ori")
    organisers.give(one, ori)
    db.session.commit()
    return {"one": one, "two": two, "ori": ori, "admin": person("admin", "boss"),
            "researcher": person("researcher", "res"), "reporters": reporters}


def campaign_routes(app, two, slug):
    """Every route of the organiser blueprint that names a campaign, as
    (method, URL, endpoint), from the URL map: a new page cannot be forgotten."""
    campaign = two[slug]
    values = {"slug": slug, "kind": "judgments", "fmt": "csv", "participation_id": two["reporters"][slug][1].id,
              "number": 1, "user_id": two["ori"].id}
    routes = []
    with app.test_request_context():
        for rule in app.url_map.iter_rules():
            if not rule.endpoint.startswith("organiser."):
                continue
            if "slug" not in rule.arguments:
                continue
            url = url_for(rule.endpoint, **{name: values[name] for name in rule.arguments})
            for method in sorted(rule.methods & {"GET", "POST"}):
                routes.append((method, url, rule.endpoint))
    assert campaign and len({endpoint for _m, _u, endpoint in routes}) >= 15
    return routes


def test_an_organiser_gets_404_on_every_page_download_and_action_of_another_campaign(app, two):
    client = logged_in(app, two["ori"])
    token = csrf_token(client, "/organiser/c/one/")
    for method, url, endpoint in campaign_routes(app, two, "two"):
        status = client.open(url, method=method, data={"csrf_token": token}).status_code
        # A role the user lacks is 403 before any campaign is looked at.
        assert status == (403 if endpoint in ADMIN_ONLY else 404), (method, url, status)
    # Nothing was done to campaign two.
    assert two["two"].status == "open" and not db.session.scalars(
        select(ItemReport).where(ItemReport.campaign_id == two["two"].id, ItemReport.text != "rude")).all()
    for method, url, endpoint in campaign_routes(app, two, "one"):
        if method == "GET":
            status = client.get(url).status_code
            assert status == (403 if endpoint in ADMIN_ONLY else 200), (url, status)
    index = client.get("/organiser/").get_data(as_text=True)
    assert "/organiser/c/one/" in index and "/organiser/c/two/" not in index
    assert client.get("/organiser/accounts").status_code == 403
    assert client.get("/organiser/audit").status_code == 403


def test_an_admin_manages_both_campaigns(app, two):
    client = logged_in(app, two["admin"])
    token = csrf_token(client, "/organiser/c/two/")
    for slug in ("one", "two"):
        for method, url, _endpoint in campaign_routes(app, two, slug):
            if method == "GET":
                assert client.get(url).status_code == 200, url
            else:  # every action answers with a page or a redirect, never a refusal
                assert client.post(url, data={"csrf_token": token}).status_code in (200, 302), url
    index = client.get("/organiser/").get_data(as_text=True)
    assert "/organiser/c/one/" in index and "/organiser/c/two/" in index
    assert client.get("/organiser/accounts").status_code == 200
    assert client.get("/organiser/audit").status_code == 200


def test_a_researcher_reads_every_campaign_but_drafts_and_changes_none(app, two):
    two["two"].status = "draft"
    db.session.commit()
    client = logged_in(app, two["researcher"])
    token = csrf_token(client, "/organiser/c/one/")
    for method, url, endpoint in campaign_routes(app, two, "one"):
        status = client.open(url, method=method, data={"csrf_token": token}).status_code
        assert status == (200 if method == "GET" and endpoint in READ_ONLY else 403), (method, url, status)
    assert client.get("/organiser/c/two/").status_code == 404
    assert "/organiser/c/two/" not in client.get("/organiser/").get_data(as_text=True)


def test_a_draft_is_seen_only_by_those_who_manage_it(app, two):
    two["two"].status = "draft"
    db.session.commit()
    assert logged_in(app, two["ori"]).get("/c/two/").status_code == 404
    assert logged_in(app, two["admin"]).get("/c/two/").status_code == 200
    organisers.give(two["two"], two["ori"])
    db.session.commit()
    assert logged_in(app, two["ori"]).get("/c/two/").status_code == 200


def test_the_admin_gives_and_takes_a_campaign_on_its_page(app, two):
    admin = logged_in(app, two["admin"])
    page = admin.get("/organiser/c/two/organisers").get_data(as_text=True)
    assert "No organiser yet" in page and '<option value="ori">' in page
    token = csrf_token(admin, "/organiser/c/two/organisers")
    admin.post("/organiser/c/two/organisers/add", data={"csrf_token": token, "username": "ori"})
    assert organisers.may_manage(two["ori"], two["two"])
    ori = logged_in(app, two["ori"])
    assert ori.get("/organiser/c/two/").status_code == 200
    # Only organisers are given campaigns; a refusal changes nothing.
    for name in ("res", "nobody", "vol-two"):
        answer = admin.post("/organiser/c/two/organisers/add", data={"csrf_token": token, "username": name},
                            follow_redirects=True).get_data(as_text=True)
        assert "No organiser account has this username" in answer
    assert [u.username for u in organisers.organisers_of(two["two"])] == ["ori"]
    admin.post(f"/organiser/c/two/organisers/{two['ori'].id}/remove", data={"csrf_token": token})
    assert not organisers.may_manage(two["ori"], two["two"])
    assert ori.get("/organiser/c/two/").status_code == 404
    audit = admin.get("/organiser/audit").get_data(as_text=True)
    assert "Organiser given the campaign" in audit and "taken away" in audit


def test_the_dashboard_watch_is_refused_for_a_campaign_not_theirs(app, two):
    def watch(user, slug):
        client = socketio.test_client(app, flask_test_client=logged_in(app, user))
        try:
            return client.emit("watch", {"campaign": slug}, callback=True)["ok"]
        finally:
            client.disconnect()

    assert watch(two["ori"], "one") is True
    assert watch(two["ori"], "two") is False
    assert watch(two["admin"], "one") is True and watch(two["admin"], "two") is True
    assert watch(two["researcher"], "two") is True


def test_researchers_see_reporters_under_their_export_pseudonym(app, two):
    user, participation = two["reporters"]["one"]
    alias = pseudonym(two["one"], user.id)
    page = logged_in(app, two["researcher"]).get("/organiser/c/one/").get_data(as_text=True)
    section = page[page.index('id="reports"'):]
    assert alias in section and "vol-one" not in page
    assert "/volunteer/" not in section
    page = logged_in(app, two["ori"]).get("/organiser/c/one/").get_data(as_text=True)
    section = page[page.index('id="reports"'):]
    assert "vol-one" in section and f"/organiser/c/one/volunteer/{participation.id}" in section
    assert [r.username for r in reports.campaign_reports(two["one"])] == [None]
    assert [r.volunteer for r in reports.campaign_reports(two["one"])] == [alias]
    assert [r.username for r in reports.campaign_reports(two["one"], names=True)] == ["vol-one"]


def test_the_cli_gives_lists_and_takes_organisers(app, two):
    runner = app.test_cli_runner()
    done = runner.invoke(args=["campaign", "organisers", "add", "two", "ori"])
    assert done.exit_code == 0 and "ori now manages two" in done.output
    assert runner.invoke(args=["campaign", "organisers", "add", "two", "ori"]).output.strip() == (
        "ori already managed two.")
    assert "ori\tori@example.org" in runner.invoke(args=["campaign", "organisers", "list", "two"]).output
    refused = runner.invoke(args=["campaign", "organisers", "add", "two", "res"])
    assert refused.exit_code != 0 and "no organiser account 'res'" in refused.output
    assert runner.invoke(args=["campaign", "organisers", "remove", "two", "ori"]).exit_code == 0
    assert not organisers.may_manage(two["ori"], two["two"])
    assert runner.invoke(args=["campaign", "organisers", "remove", "two", "ori"]).exit_code != 0
    done = runner.invoke(args=["user", "role", "ori@example.org", "admin"])
    assert done.exit_code == 0 and organisers.may_manage(db.session.get(User, two["ori"].id), two["two"])


def test_the_importer_gives_the_campaign_to_the_organisers_named(app, tmp_path, two):
    folder = write_campaign(str(tmp_path / "imported"), sentences=6)
    with pytest.raises(Exception, match="no organiser account 'res'"):
        import_campaign(folder, organiser_names=("res",))
    assert db.session.scalar(select(CampaignOrganiser).where(CampaignOrganiser.user_id == two["ori"].id,
                                                              CampaignOrganiser.campaign_id != two["one"].id)) is None
    _spec, campaign = import_campaign(folder, organiser_names=("ori",))
    assert organisers.may_manage(two["ori"], campaign)


def test_the_demo_organiser_manages_the_demo_campaigns(app, tmp_path, monkeypatch):
    from app.cli import DEMO_ORGANISER, load_demo

    monkeypatch.setattr(app, "instance_path", str(tmp_path))  # where the demo keeps its raffles' seeds
    assert load_demo()
    user = db.session.scalar(select(User).where(User.email == DEMO_ORGANISER[0]))
    slugs = {c.slug for c in db.session.scalars(organisers.campaigns_for(user))}
    assert slugs == {"demo-en-eu", "demo-en-ur", "demo-en-eu-da", "demo-en-eu-esa"}
    assert load_demo() is None  # again: nothing new, nothing twice
    assert len(db.session.scalars(select(CampaignOrganiser)).all()) == len(slugs)


def test_the_staff_link_and_landing_include_admins(app, two):
    page = logged_in(app, two["admin"]).get("/organiser/c/one/").get_data(as_text=True)
    assert re.search(r'href="/organiser/c/one/organisers"', page)
    assert 'href="/organiser/c/one/organisers"' not in logged_in(app, two["ori"]).get(
        "/organiser/c/one/").get_data(as_text=True)
    assert accounts.landing(two["admin"].id, "admin") == ("organiser", None)
    newcomer = person("organiser", "newcomer")
    assert "an administrator gives them" in logged_in(app, newcomer).get("/organiser/").get_data(as_text=True)
