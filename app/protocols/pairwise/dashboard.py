"""The pairwise panel of the organiser's dashboard: completion per system pair."""
from ...services import totals


def pair_completion(campaign):
    """Per system pair, in the campaign's order: judgments collected, their
    target, those beyond their slot's target, and slots with identical outputs."""
    names = {s.id: s.name for s in campaign.systems}
    rows = totals.pair_rows(campaign.id)
    order = {s.id: s.position for s in campaign.systems}
    rows = sorted(rows, key=lambda r: (order[r[0]], order[r[1]]))
    return [
        {"systems": [names[a], names[b]], "collected": int(c or 0), "target": int(t or 0),
         "over": int(o or 0), "identical": int(i or 0)}
        for a, b, c, t, o, i in rows
    ]
