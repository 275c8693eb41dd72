"""The public progress tells no item's kind (issue 28, item 6), on the site
served as ``make run`` serves it (BOZKA_PUBLIC_FIGURES_SECONDS at its
default, 60), with a real python-socketio client over WebSocket: after a
control and after a test item the volunteer's JSON reply and live events
change the same way, and "judgments collected" does not move within the
period."""
import time
from datetime import datetime, timezone

from test_security_faults_live import BETTER, SLUG, Volunteer, site  # noqa: F401 (the fixture)
from test_security_sockets_live import connect, until

PERIOD = 60  # the default of BOZKA_PUBLIC_FIGURES_SECONDS (app/config.py)


def _period():
    return int(datetime.now(timezone.utc).timestamp() // PERIOD)  # periods start on the minute (from 2000)


def test_after_a_control_and_after_a_test_the_volunteer_receives_the_same(site):
    live = site()
    live.start()
    ane = Volunteer(live.url, "ane")
    ane.register()
    client = connect(live, ane)
    events = []
    client.on("ranking", lambda data: events.append(("ranking", data)))
    client.on("me", lambda data: events.append(("me", data)))
    try:
        assert client.call("join", {"campaign": SLUG}, timeout=10) == {"ok": True}
        assert until(lambda: {name for name, _data in events} == {"ranking", "me"})
        # Start early in a period, so that the answers below fall in one (each takes about a second).
        if datetime.now(timezone.utc).second > 30:
            time.sleep(61 - datetime.now(timezone.utc).second)
        period = _period()
        collected = [data for name, data in events if name == "ranking"][-1]["collected"]
        item, kinds = ane.item(), set()
        for position in range(1, 5):
            is_control, = live.query(
                "SELECT items.control_id IS NOT NULL FROM items JOIN participations ON participations.id = "
                "items.participation_id JOIN users ON users.id = participations.user_id "
                "WHERE users.username = ? AND items.position = ?", "ane", position)[0]
            kinds.add(bool(is_control))
            choice = "right" if item["right"] in BETTER else "left"
            del events[:]
            reply = ane.call("POST", f"/c/{SLUG}/api/judgment", json={"token": item["token"], "choice": choice},
                             headers={"X-CSRFToken": ane.csrf}).json()
            item = reply.pop("item")
            assert (reply["status"], reply["answered"], reply["counted"], reply["held"]) == (
                "accepted", position, True, False), (position, is_control, reply)
            # The volunteer's own count moves by one; the public figure does not move.
            assert until(lambda: any(name == "me" and data["count"] == position for name, data in events)), events
            time.sleep(1.5)  # a further tick: anything else the answer changes would be sent by now
            rankings = [data for name, data in events if name == "ranking"]
            assert rankings and all(data["collected"] == collected for data in rankings), (position, is_control)
            assert {name for name, _data in events} == {"me", "ranking"}, events
        assert kinds == {True, False}
        assert _period() == period, "the answers spanned two periods of the public figures: run again"
    finally:
        client.disconnect()
