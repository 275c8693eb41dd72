"""The ESA panel of the organiser's dashboard, read from the volunteers'
running sums (``services/score_sums``, moved in each answer's transaction):
per system the segments annotated, the mean score and the errors marked,
over the answers that count for research as the exports have them (not too
fast, the volunteer neither dismissed nor held); and the quality-control
record: the bad references paired, the judges and the volunteers the live
rule dismissed. The analysis (scripts/analyse.py on the exports) gives the
exact figures: per domain, z-scores, significance."""
from ...services import score_quality, score_sums

LIVE_RULE = (score_quality.NOT_LOWER, score_quality.LOW_VARIATION)


def summary(campaign, volunteers):
    """The ESA dashboard's figures; ``volunteers``: the shared dashboard's
    ``volunteer_figures``."""
    # No judge is left out: WMT24's ESA analysis keeps every annotator.
    scored = score_sums.system_scores(campaign.id, leave_out_unreliable=False)
    systems = []
    for system in campaign.systems:
        row = scored.get(system.id)
        segments = row["scores"] if row else 0
        systems.append({"system": system.name, "segments": segments, "mean": row["raw"] if row else None,
                        "z": row["z"] if row else None,
                        "minor": row["minor"] / segments if segments else None,
                        "major": row["major"] / segments if segments else None,
                        "omissions": row["omissions"] if row else 0})
    return {
        "systems": systems,
        "quality": score_sums.quality_items(campaign.id, (score_quality.BAD_REFERENCE,))[0],
        "dismissed_by_rule": [{"reason": code, "count": volunteers.dismissed.get(code, 0)} for code in LIVE_RULE],
        "settings": {"min_pairs": campaign.qc_min_pairs, "min_spread": campaign.qc_min_spread,
                     "share": campaign.qc_share, "distance": campaign.qc_distance},
    }
