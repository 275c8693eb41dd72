"""Helpers of the security tests (imported as ``security_helpers``)."""

import os
import random
import re
from datetime import datetime, timedelta
from html.parser import HTMLParser

from sqlalchemy import func, select

from app.extensions import db
from app.services import accounts, evaluation

STRONG = "correct horse 1"

# Hostile text: markup, script, links, event handlers, template syntax,
# bidirectional overrides, zero-width characters, spreadsheet formulas and a
# very long string. No tabs or newlines (the campaign files are line based).
PAYLOADS = [
    '<script>alert("xss-1")</script>',
    '<img src=x onerror=alert("xss-2")>',
    '<a href="javascript:alert(3)">xss-3</a>',
    'javascript:alert("xss-4")',
    '"><svg onload=alert("xss-5")>',
    "'><body onload='alert(6)'>",
    '</script><script>alert("xss-7")</script>',
    '<iframe src="http://evil.example/"></iframe>',
    '<style>body{display:none}</style>xss-9',
    "{{ config.SECRET_KEY }} {% raw %}xss-10",
    "&lt;b&gt;already-escaped&lt;/b&gt; &amp; xss-11",
    "abc\u202edcba xss-12",  # right-to-left override
    "zero\u200bwidth\u200c\u200d\u2060\ufeff xss-13",
    '=HYPERLINK("http://evil.example","xss-14")',
    '+SUM(1+1)*cmd|" /C calc"!A0 xss-15',
    "-2+3 xss-16",
    "@SUM(1) xss-17",
    "\u2067isolate\u2069 \u202bembed\u202c xss-18",
    "L" * 1900 + " xss-19",  # near the importer's line limit (2,000)
]

# Elements that must never come from data (the site's own pages have none
# of these outside the templates' own markup, checked separately).
DANGEROUS_TAGS = {"script", "iframe", "img", "svg", "style", "object", "embed", "frame", "base", "meta"}


SITE_SVG = {"class", "viewbox", "preserveaspectratio", "role", "aria-label", "aria-hidden", "focusable"}


class PageScan(HTMLParser):
    """Tags, attributes and text of a page, with each text's open elements."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []  # (tag, attrs)
        self.texts = []  # (text, [(tag, attrs) of open elements])
        self.stack = []

    VOID = {"br", "hr", "img", "input", "link", "meta", "source", "wbr", "area", "base", "col", "embed", "track"}

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index][0] == tag:
                del self.stack[index:]
                break

    def handle_data(self, data):
        self.texts.append((data, list(self.stack)))


def scan(html):
    parser = PageScan()
    parser.feed(html)
    parser.close()
    return parser


def assert_inert(html, expected=(), where=""):
    """No markup from data: only the site's own tags and attributes; every
    expected payload present as text; bidi controls isolated."""
    page = scan(html)
    assert [tag for tag, _attrs in page.tags].count("body") <= 1, f"{where}: a second <body>"
    for tag, attrs in page.tags:
        if tag == "meta" and set(attrs) <= {"charset", "name", "content"} and attrs.get("name") != "refresh":
            continue
        if tag == "svg" and attrs.get("class") == "chart" and set(attrs) <= SITE_SVG:
            continue  # the dashboard's own chart (templates/organiser/_panel.html)
        assert tag not in DANGEROUS_TAGS or (
            tag == "script" and (attrs.get("src", "").startswith("/static/") or attrs.get("type") == "application/json")
        ), f"{where}: a <{tag}> element {attrs}"
        for name, value in attrs.items():
            assert not name.startswith("on"), f"{where}: event handler {name}={value!r} on <{tag}>"
            if name in ("href", "src", "action", "formaction"):
                assert not (value or "").strip().lower().startswith("javascript:"), f"{where}: {name}={value!r}"
    text = "".join(data for data, _stack in page.texts)
    for payload in expected:
        assert payload in text, f"{where}: {payload[:60]!r} is not shown as text"
    for data, stack in page.texts:
        if re.search("[\u202a-\u202e\u2066-\u2069]", data):
            assert any(tag == "bdi" or "dir" in attrs for tag, attrs in stack), (
                f"{where}: a bidirectional control outside an isolating element: {data[:60]!r}"
            )
    return page


def make_staff(role="organiser", name=None, password=STRONG):
    name = name or role
    user = accounts.create_user(f"{name}@example.org", name, password, role=role)
    db.session.commit()
    from helpers import give_every_campaign

    return give_every_campaign(user)


def login(client, email, password=STRONG):
    from helpers import csrf_token

    token = csrf_token(client, "/login")
    return client.post("/login", data={"csrf_token": token, "email": email, "password": password})


def row_counts():
    """Rows in every table: to show that a refused request changed nothing."""
    db.session.rollback()
    counts = {}
    for table in db.metadata.sorted_tables:
        counts[table.name] = db.session.scalar(select(func.count()).select_from(table))
    return counts


def add_campaign(tmp_path, name="campaign", slug="test", **kwargs):
    """A small campaign (helpers.write_campaign) in the current app."""
    from app.services.campaign_writer import create_campaign
    from app.services.importer import read_campaign
    from helpers import QUIET_SIGNS, write_campaign

    folder = write_campaign(str(tmp_path / name), **(QUIET_SIGNS | kwargs))
    manifest = os.path.join(folder, "campaign.toml")
    with open(manifest, encoding="utf-8") as handle:
        text = handle.read().replace('slug = "test"', f'slug = "{slug}"', 1)
    with open(manifest, "w", encoding="utf-8") as handle:
        handle.write(text)
    campaign = create_campaign(read_campaign(folder))
    db.session.commit()
    return campaign


def db_snapshot():
    """Every row of every table: to show that a refused request changed nothing."""
    db.session.rollback()
    snapshot = {}
    for table in db.metadata.sorted_tables:
        snapshot[table.name] = sorted(
            (tuple(map(repr, row)) for row in db.session.execute(table.select())), key=repr
        )
    return snapshot


START = datetime(2026, 3, 2, 9, 0, 0)


def join_volunteer(campaign, name, address=None):
    user = accounts.create_user(f"{name}@example.org", name, "correct horse 1", signup_address=address)
    participation = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2", now=START)
    db.session.commit()
    return participation


def judge_items(campaign, participation, choices, gaps, start=START):
    """Answer items with the given choices, each ``gap`` seconds after it was served."""
    rng = random.Random(7)
    now = start
    statuses = []
    for choice, gap in zip(choices, gaps):
        step = evaluation.show(campaign, participation.id, now, rng)
        if step.item is None:
            statuses.append(step.status)
            break
        now += timedelta(seconds=gap)
        statuses.append(evaluation.answer(campaign, participation.id, step.item.token, choice, now, rng).status)
    return statuses
