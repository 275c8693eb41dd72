"""The dashboard's structure (issue 22), for both protocols, on the page and
in the live panel: sections that fold (<details>, the most used open),
every table in its own scroll box, the rate chart's values and texts for
Chart.js with times in the interface language, and "active" with one
meaning only. How it looks on a phone: tests/e2e/test_e2e_dashboard.py."""
import json
import re
from html.parser import HTMLParser

import pytest
from da_simulation import judge, make_da_campaign
from helpers import staff_client
from test_organiser import simulate_volunteers

OPEN = {"totals", "rate", "top", "sentences", "exports"}
CLOSED = {"participants", "research", "reports", "status", "announce", "raffle"}  # reports: open when there are some
PROTOCOL = {"pairwise": {"controls", "pairs", "decisions"}, "da": {"systems", "quality"}}
FORMS = {"status", "announce", "raffle"}


class Dashboard(HTMLParser):
    """The folds ({key: (open, heading)}), each table's parent's classes,
    the charts' data and the visible text."""

    def __init__(self, html):
        super().__init__()
        self.folds, self.table_parents, self.charts, self.text, self.nested = {}, [], [], [], []
        self.stack, self._fold, self._in_h2 = [], None, False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "details" and "fold" in attrs.get("class", ""):
            if any(tag == "details" and "fold" in classes.split() for tag, classes in self.stack):
                self.nested.append(attrs["data-fold"])
            self._fold = attrs["data-fold"]
            self.folds[self._fold] = ["open" in attrs, ""]
        if tag == "h2" and self.stack[-1:] == [("summary", "")]:
            self._in_h2 = True
        if tag == "table":
            self.table_parents.append(self.stack[-1][1] if self.stack else "")
        if tag == "canvas" and "data-chart" in attrs:
            self.charts.append(json.loads(attrs["data-chart"]))
        self.stack.append((tag, attrs.get("class", "")))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass
        if tag == "h2":
            self._in_h2 = False

    def handle_data(self, data):
        if self._in_h2 and self._fold:
            self.folds[self._fold][1] += data
        if not any(tag in ("script", "style") for tag, _ in self.stack):
            self.text.append(data)


def _dashboards(app, tmp_path, make_campaign, protocol):
    if protocol == "da":
        campaign = make_da_campaign(str(tmp_path / "da"))
        judge(campaign)
    else:
        campaign = make_campaign(sentences=20)
        simulate_volunteers(campaign, volunteers=3, items=8)
    return staff_client(app, "organiser"), staff_client(app, "researcher")


@pytest.mark.parametrize("protocol", ["pairwise", "da"])
def test_the_dashboard_folds_scrolls_and_charts(app, tmp_path, make_campaign, protocol):
    organiser, researcher = _dashboards(app, tmp_path, make_campaign, protocol)
    page = Dashboard(organiser.get("/organiser/c/test/").get_data(as_text=True))
    panel = Dashboard(organiser.get("/organiser/c/test/panel").get_data(as_text=True))

    # Every section folds, under its heading; the most used are open.
    keys = OPEN | CLOSED | PROTOCOL[protocol]
    assert set(page.folds) == keys
    assert {key for key, (is_open, _) in page.folds.items() if is_open} == OPEN | PROTOCOL[protocol]
    assert all(heading.strip() for _, heading in page.folds.values())
    assert page.nested == [] and panel.nested == []  # side by side, never one inside another
    assert page.folds["totals"][1] == "Totals" and page.folds["participants"][1] == "Participants"
    # The live panel is the page's part, folded the same way.
    assert set(panel.folds) == keys - {"exports", "reports"} - FORMS
    other = "da" if protocol == "pairwise" else "pairwise"
    assert not set(page.folds) & PROTOCOL[other]

    # Every table scrolls inside its own box (the profile tables too).
    assert len(page.table_parents) >= 9
    assert all("table-scroll" in parent.split() for parent in page.table_parents), page.table_parents

    # The chart: one value per label, times in the interface language, its texts.
    for dashboard in (page, panel):
        (chart,) = dashboard.charts
        assert len(chart["labels"]) == len(chart["values"]) >= 1 and max(chart["values"]) > 0
        assert not any(re.search(r"\d{4}-\d\d-\d\dT", label) for label in chart["labels"])  # never ISO
        assert all(re.search(r"(AM|PM)$", label) for label in chart["labels"])  # English: 12 hours
        assert (chart["x"], chart["y"]) == ("Time (UTC)", "Answers per minute") and chart["legend"]

    # "Active": only the volunteers answering in the last minutes.
    text = " ".join(page.text)
    assert [m.group(0) for m in re.finditer(r"\bactive\b.{0,25}", text, re.I)] == [
        "Active now (the last 5 minutes)"]
    assert "Took part (judged, not dismissed)" in text

    # A researcher: the same figures, no forms.
    seen = Dashboard(researcher.get("/organiser/c/test/").get_data(as_text=True))
    assert set(seen.folds) == keys - FORMS


def test_the_chart_speaks_the_interface_language(app, make_campaign):
    campaign = make_campaign(sentences=20)
    simulate_volunteers(campaign, volunteers=2, items=4)
    organiser = staff_client(app, "organiser")
    page = organiser.get("/organiser/c/test/panel", headers={"Accept-Language": "es"}).get_data(as_text=True)
    (chart,) = Dashboard(page).charts
    assert all(re.fullmatch(r"\d{1,2}:\d\d", label) for label in chart["labels"]), chart["labels"]  # 24 hours
    assert chart["y"] != "Answers per minute"  # translated (Spanish catalogue)
