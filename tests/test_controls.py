"""Controls that are harder to learn (issue 18, item 4): each volunteer's own
subset of the pool, controls at a secret place in each block, the importer's
warning on a small pool, and nothing in the page or the API that tells a
control from a test item. Volunteers are driven through ``evaluation`` with
a simulated clock."""
import os
import random
import re
from datetime import timedelta

from sqlalchemy import select

from app.extensions import db
from app.models import Control, Item, utcnow
from app.protocols.pairwise import controls as control_rules
from app.services import accounts, evaluation, quality
from app.services.importer import read_campaign
from helpers import QUIET_SIGNS, csrf_token, register, write_campaign
from test_volunteer_flow import right_answer


def _volunteer(campaign, n):
    user = accounts.create_user(f"v{n}@example.org", f"v{n}", "password-123")
    participation = accounts.join_campaign(user, campaign, "B1-B2", "C1-C2")
    db.session.commit()
    return participation


def _play(campaign, participation, items, choose=None, start=None):
    """Answer ``items`` items, 20 simulated seconds apart; returns the last step."""
    rng, now, step = random.Random(participation.id), start or utcnow(), None
    for _ in range(items):
        step = evaluation.show(campaign, participation.id, now, rng)
        if step.item is None:
            return step
        item = step.item
        choice = (choose or (lambda i: "left" if not i.is_control else ("left" if i.better_left else "right")))(item)
        now += timedelta(seconds=20)
        step = evaluation.answer(campaign, participation.id, item.token, choice, now, rng)
        if step.status == "dismissed":
            return step
    return step


def _items(participation):
    return db.session.scalars(
        select(Item).where(Item.participation_id == participation.id).order_by(Item.position)
    ).all()


def _seed(campaign, participation):
    return quality.volunteer_seed(campaign.pseudonym_salt, participation.id)


def test_each_volunteer_is_served_only_their_own_subset(app, make_campaign):
    campaign = make_campaign(sentences=60, systems=("A", "B"), controls=30, controls_per_volunteer=14)
    pool = db.session.scalars(select(Control.id)).all()
    seen = []
    for n in range(3):
        participation = _volunteer(campaign, n)
        _play(campaign, participation, 66)
        controls = [item for item in _items(participation) if item.is_control]
        mine = control_rules.volunteer_controls(pool, 14, _seed(campaign, participation))
        # 14 distinct controls (positions 1, 2, 5 .. 60), all of the subset; then the oldest again.
        assert [c.position for c in controls] == [1, 2, *range(5, 66, 5)]
        assert sorted(c.control_id for c in controls[:14]) == mine
        assert controls[14].control_id == controls[0].control_id and controls[14].control_reused
        seen.append(frozenset(mine))
    assert len(set(seen)) == 3  # three accounts, three subsets


def test_random_placement_one_control_per_block_at_the_volunteers_places(app, make_campaign):
    campaign = make_campaign(sentences=40, systems=("A", "B"), control_placement="random")
    schedules = []
    for n in range(4):
        participation = _volunteer(campaign, n)
        _play(campaign, participation, 32)
        items = _items(participation)
        assert len(items) >= 32
        seed = _seed(campaign, participation)
        assert [i.position for i in items if i.is_control] == [
            i.position for i in items if control_rules.is_control_position(i.position, 2, 5, "random", seed)
        ]
        assert items[0].is_control and items[1].is_control
        for start in range(3, 33, 5):  # one control in each block of five after the first two
            assert sum(i.is_control for i in items if start <= i.position < start + 5) == 1
        assert participation.controls_failed == 0 and not participation.is_dismissed
        schedules.append(tuple(i.position for i in items if i.is_control))
    assert len(set(schedules)) > 1


def test_random_placement_keeps_the_control_rules(app, make_campaign):
    campaign = make_campaign(sentences=40, systems=("A", "B"), control_placement="random")
    first = _volunteer(campaign, 1)
    # "equal" on the first control: nothing said then, dismissed at the first check (item 10).
    step = _play(campaign, first, 1, choose=lambda item: "equal")
    assert step.status == "accepted"
    step = _play(campaign, first, 9)
    assert step.status == "dismissed" and step.dismissal_reason == control_rules.INITIAL_CONTROL_FAILED
    assert max(item.position for item in _items(first)) == 10
    # Right on the first two, "equal" on every later control: too many failed by the check at item 10.
    second = _volunteer(campaign, 2)

    def later_controls_wrong(item):
        if item.is_control and item.position > 2:
            return "equal"
        return "left" if not item.is_control else ("left" if item.better_left else "right")

    step = _play(campaign, second, 30, choose=later_controls_wrong)
    assert step.status == "dismissed" and step.dismissal_reason == control_rules.CONTROL_FAILURE_RATE
    # Where the paper's rule says, replayed from the volunteer's own places: the
    # first check (every 10th item) with more than a third failed.
    seed, results = _seed(campaign, second), []
    for position in range(1, 31):
        control = control_rules.is_control_position(position, 2, 5, "random", seed)
        if control:
            results.append(position <= 2)
        if control_rules.dismissal_reason(position, results, first=2, check_every=10, cutoff="1/3"):
            break
    assert position in (10, 20)
    assert max(item.position for item in _items(second) if item.answered_at) == position


def test_import_warns_of_a_small_pool_and_still_imports(app, tmp_path):
    runner = app.test_cli_runner()
    small = write_campaign(str(tmp_path / "small"), sentences=60, controls=30, controls_per_volunteer=14)
    dry = runner.invoke(args=["campaign", "import", "--dry-run", small])
    assert dry.exit_code == 0 and "Valid: test" in dry.output
    assert "Warning: controls.tsv: the pool of 30 controls is small" in dry.output
    assert "at least 109 controls" in dry.output
    done = runner.invoke(args=["campaign", "import", small])
    assert done.exit_code == 0 and "Imported as a draft: test" in done.output and "Warning: controls.tsv" in done.output
    # The whole pool for everyone (the default): said too.
    same = write_campaign(str(tmp_path / "same"), sentences=60, controls=30, control_source="imported")
    result = runner.invoke(args=["campaign", "import", "--dry-run", same])
    assert result.exit_code == 0 and "every volunteer is served from the same 30 controls" in result.output
    # Generated controls (the default): the pool is only their fallback, nothing to warn of.
    generated = write_campaign(str(tmp_path / "generated"), sentences=60, controls=30)
    result = runner.invoke(args=["campaign", "import", "--dry-run", generated])
    assert result.exit_code == 0 and "Warning" not in result.output
    # A pool large enough for the expected volunteers: no warning.
    large = write_campaign(str(tmp_path / "large"), sentences=60, controls=210, controls_per_volunteer=14,
                           expected_volunteers=1000)
    result = runner.invoke(args=["campaign", "import", "--dry-run", large])
    assert result.exit_code == 0 and "Warning" not in result.output
    large_for_more = write_campaign(str(tmp_path / "more"), sentences=60, controls=210, controls_per_volunteer=14,
                                    expected_volunteers=2000)
    result = runner.invoke(args=["campaign", "import", "--dry-run", large_for_more])
    assert result.exit_code == 0 and "20 accounts would have seen" in result.output


def test_import_refuses_impossible_control_settings(app, tmp_path):
    runner = app.test_cli_runner()
    for settings, why in [
        (dict(controls_per_volunteer=31), "controls_per_volunteer is 31, but controls.tsv has 30"),
        (dict(controls_per_volunteer=13), "controls_per_volunteer must be 0 or at least 14"),
        (dict(controls_per_volunteer=14, control_placement="random"), "must be 0 or at least 15"),
        (dict(control_placement="sometimes"), "control_placement must be one of: fixed, random"),
        (dict(expected_volunteers=-1), "expected_volunteers must be an integer >= 0"),
    ]:
        folder = write_campaign(str(tmp_path / str(len(os.listdir(tmp_path)))), sentences=60, controls=30, **settings)
        result = runner.invoke(args=["campaign", "import", "--dry-run", folder])
        assert result.exit_code == 1 and why in result.output, settings


def _form(html):
    """The judging form with the item's own values (texts, token, CSRF token) taken out."""
    form = re.search(r'<form method="post".*?</form>', html, re.S).group(0)
    form = re.sub(r'(class="text [a-z ]+"[^>]*>)(.*?)(</(?:div|blockquote)>)', r"\1TEXT\3", form, flags=re.S)
    return re.sub(r'value="[0-9a-f]{16}"|value="[^"]{30,}"', 'value="VALUE"', form)


def test_a_control_and_a_test_item_look_the_same(app, client, make_campaign):
    make_campaign(sentences=20, **QUIET_SIGNS)
    register(client)
    headers = {"X-CSRFToken": csrf_token(client, "/c/test/welcome")}
    better = set(db.session.scalars(select(Control.better)))
    pages, payloads = {}, {}
    data = client.get("/c/test/api/item").get_json()
    for position in range(1, 5):  # controls at 1 and 2, test items at 3 and 4
        kind = "control" if data["item"]["left"] in better or data["item"]["right"] in better else "test"
        assert kind == ("control" if position <= 2 else "test")
        pages.setdefault(kind, []).append(_form(client.get("/c/test/evaluate").get_data(as_text=True)))
        payloads.setdefault(kind, []).append(data)
        answer = {"token": data["item"]["token"], "choice": right_answer(data["item"]["left"], data["item"]["right"])}
        data = client.post("/c/test/api/judgment", json=answer, headers=headers).get_json()
    # The HTML form is the same, character for character, once the texts and tokens are out.
    assert pages["control"][1] == pages["test"][0]
    assert "position" not in pages["test"][0].lower()
    # The JSON has the same fields, of the same types and the same token length.
    control, test = payloads["control"][1], payloads["test"][0]

    def shape(payload):
        return {key: type(value).__name__ for key, value in payload.items()}

    assert shape(control) == shape(test) and shape(control["item"]) == shape(test["item"])
    assert set(control["item"]) == {"token", "source", "left", "right"}
    assert len(control["item"]["token"]) == len(test["item"]["token"])


# Generated controls (issue 28): each volunteer's own, made from the campaign's outputs.

def _control(item):
    return db.session.get(Control, item.control_id)


def test_generated_controls_are_each_volunteers_own_and_never_a_sentence_they_judge(app, make_campaign):
    from app.models import Output, Sentence

    campaign = make_campaign(sentences=40, systems=("A", "B", "C"), control_source="generated")
    campaign.pseudonym_salt = "0" * 32  # the same draws at every run (each volunteer's seed still differs)
    db.session.commit()
    pool = set(db.session.scalars(select(Control.id)))
    outputs = {(o.sentence_id, o.system_id): o.text for o in db.session.scalars(select(Output))}
    sources = {s.id: s.source for s in db.session.scalars(select(Sentence))}
    schedules, sides = [], set()
    for n in range(3):
        participation = _volunteer(campaign, n)
        _play(campaign, participation, 30, start=utcnow() - timedelta(hours=3))  # in the past: exported
        items = _items(participation)
        controls = [item for item in items if item.is_control]
        assert [c.position for c in controls] == [1, 2, 5, 10, 15, 20, 25, 30]
        judged = {item.sentence_id for item in items if not item.is_control}
        for item in controls:
            made = _control(item)
            assert made.id not in pool and made.number is None and not item.control_reused
            assert made.sentence_id == item.sentence_id and made.sentence_id not in judged
            # The better side is the system's own output; the worse keeps its length in words.
            assert made.source == sources[made.sentence_id]
            assert made.better == outputs[(made.sentence_id, made.system_id)]
            assert made.worse != made.better and len(made.worse.split()) == len(made.better.split())
            sides.add(item.better_left)
        assert len({c.sentence_id for c in controls}) == len(controls)
        assert participation.controls_failed == 0 and not participation.is_dismissed
        schedules.append(tuple(c.sentence_id for c in controls))
    assert len(set(schedules)) == 3 and sides == {True, False}
    # The pool was never served.
    assert not db.session.scalar(select(Item.id).where(Item.control_id.in_(pool)))
    # The export names a generated control by its own id (it has no line in controls.tsv).
    from app.protocols.pairwise import export as pairwise_export
    from app.services import export
    labels = {row["sentence_id"] for row in pairwise_export.judgment_rows(export.source(campaign), db.engine)
              if row["system_a"] == pairwise_export.BETTER}
    assert len(labels) == 24 and all(re.fullmatch(r"control-g\d+", label) for label in labels)


def test_a_generated_control_is_made_while_the_volunteer_has_one_sentence_left(app, make_campaign):
    # At item 10 each volunteer has seen 9 of the 10 sentences: random draws
    # alone often miss the last one; the pool is for when none can serve.
    campaign = make_campaign(sentences=10, systems=("A", "B"), control_source="generated", judgments_per_pair=10)
    campaign.pseudonym_salt = "1" * 32
    db.session.commit()
    pool = set(db.session.scalars(select(Control.id)))
    for n in range(10):
        participation = _volunteer(campaign, n)
        _play(campaign, participation, 10)
        items = _items(participation)
        assert [item.position for item in items if item.is_control] == [1, 2, 5, 10]
        assert not any(item.control_id in pool for item in items)
        assert len({item.sentence_id for item in items}) == 10


def test_generated_controls_fall_back_on_the_pool_then_on_test_items(app, make_campaign):
    from app.models import Output

    campaign = make_campaign(sentences=30, systems=("A", "B"), control_source="generated")
    for output in db.session.scalars(select(Output)):
        output.text = "x"  # one word of one letter: nothing to degrade
    db.session.commit()
    pool = set(db.session.scalars(select(Control.id)))
    first = _volunteer(campaign, 1)
    _play(campaign, first, 5)
    assert [i.control_id in pool for i in _items(first) if i.is_control] == [True, True, True]
    # Without a pool either, the control's place goes to a test item.
    db.session.execute(Item.__table__.delete())
    db.session.execute(Control.__table__.delete())
    db.session.commit()
    second = _volunteer(campaign, 2)
    _play(campaign, second, 5)
    assert [i.is_control for i in _items(second)][:5] == [False] * 5


def test_a_generated_campaign_needs_no_controls_file(app, tmp_path):
    folder = write_campaign(str(tmp_path / "nofile"), sentences=30, control_source="generated")
    os.remove(os.path.join(folder, "controls.tsv"))
    manifest = os.path.join(folder, "campaign.toml")
    with open(manifest) as handle:
        text = handle.read().replace('controls = "controls.tsv"\n', "")
    with open(manifest, "w") as handle:
        handle.write(text)
    runner = app.test_cli_runner()
    result = runner.invoke(args=["campaign", "import", "--dry-run", folder])
    assert result.exit_code == 0 and "Warning" not in result.output, result.output
    # The imported pool still needs its file; a word that is no source is refused.
    with open(manifest, "w") as handle:
        handle.write(text.replace('control_source = "generated"', 'control_source = "imported"'))
    result = runner.invoke(args=["campaign", "import", "--dry-run", folder])
    assert result.exit_code == 1 and "'controls' is required" in result.output
    with open(manifest, "w") as handle:
        handle.write(text.replace('control_source = "generated"', 'control_source = "pooled"'))
    result = runner.invoke(args=["campaign", "import", "--dry-run", folder])
    assert result.exit_code == 1 and "control_source must be one of: generated, imported" in result.output


def _judge_through_the_api(client, wrong_at, items=10):
    """Answer ``items`` items through the JSON API, the control at position
    ``wrong_at`` wrong and everything else right; the responses, without the
    item shown next (its texts and token differ anyway)."""
    headers = {"X-CSRFToken": csrf_token(client, "/c/test/welcome")}
    data = client.get("/c/test/api/item").get_json()
    responses = []
    for position in range(1, items + 1):
        item = db.session.scalar(select(Item).where(Item.token == data["item"]["token"]))
        assert item.position == position
        right = "left" if not item.is_control or item.better_left else "right"
        choice = ("right" if right == "left" else "left") if position == wrong_at else right
        data = client.post("/c/test/api/judgment", json={"token": item.token, "choice": choice},
                           headers=headers).get_json()
        responses.append({key: value for key, value in data.items() if key != "item"})
        if data["status"] == "dismissed":
            break
    return responses


def test_failing_a_first_control_is_told_only_at_the_first_check_and_not_which(app, make_campaign):
    make_campaign(sentences=40, control_source="generated", **QUIET_SIGNS)
    told = {}
    for name, wrong_at in (("first", 1), ("second", 2), ("none", None)):
        client = app.test_client()
        register(client, username=name, email=f"{name}@example.org")
        told[name] = _judge_through_the_api(client, wrong_at)
        told[name + "_page"] = client.get("/c/test/evaluate").get_data(as_text=True)
    # Items 1 to 9: the same answers whether a first control failed or not.
    assert told["first"][:9] == told["second"][:9] == told["none"][:9]
    assert all(step["status"] == "accepted" for step in told["none"])
    # Item 10, the first check: the same dismissal whichever first control failed.
    assert told["first"][9] == told["second"][9]
    assert told["first"][9]["status"] == "dismissed" and len(told["first"]) == 10
    csrf = re.compile(r'value="[^"]{40,}"')
    assert csrf.sub("", told["first_page"]) == csrf.sub("", told["second_page"].replace("second", "first"))
    assert "you have not passed the control sentences" in told["first_page"]


def test_generated_controls_take_sentences_nobody_has_been_shown_while_there_are_some(app, make_campaign):
    campaign = make_campaign(sentences=200, systems=("A", "B"), control_source="generated")
    first, second = _volunteer(campaign, 1), _volunteer(campaign, 2)
    _play(campaign, first, 30)
    _play(campaign, second, 30)
    shown_to_first = {item.sentence_id for item in _items(first) if not item.is_control}
    controls_of_second = {item.sentence_id for item in _items(second) if item.is_control}
    assert len(shown_to_first) >= 20 and len(controls_of_second) == 8
    # A collection of the texts the first account was shown holds none of the second's controls.
    assert not controls_of_second & shown_to_first
    # Nor is a sentence's output made into a control twice while fresh ones remain (what a
    # throwaway account's feedback told about its controls is of no use to another account).
    made = [(c.sentence_id, c.system_id) for c in db.session.scalars(select(Control).where(Control.number.is_(None)))]
    assert len(made) == 16 == len(set(made))



def test_an_early_window_is_served_where_the_organiser_sets_one(app, make_campaign):
    # Denser controls for a new volunteer (docs/campaign-format.md, "A guesser stopped early"): one in 2 up to
    # item 20, then one in 5; a pool must cover them (the import counts them).
    assert read_campaign(write_campaign(str(app.instance_path) + "/plain", sentences=30)).settings[
        "early_control_items"] == 0
    campaign = make_campaign(sentences=60, control_source="generated", early_control_items=20)
    participation = _volunteer(campaign, 1)
    _play(campaign, participation, 30)
    assert [item.position for item in _items(participation) if item.is_control] == [1, 2, *range(4, 21, 2), 25, 30]
