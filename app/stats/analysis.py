"""Everything computed for one set of judgments, as a JSON-ready dict."""

from __future__ import annotations

from itertools import combinations

from . import agreement as _agreement
from . import bradley_terry as _bt
from . import ordering as _ordering
from . import winners as _winners

__all__ = ["analyse"]


def analyse(data, *, alpha: float = 0.05, test: str = "sign",
            correction: str = "holm", unit: str = "margins",
            z_form: str = "binomial", rounds: int = 1000, seed: int = 1,
            pseudo_count: float = 0.01,
            bt_ties: str = _bt.TIE_MODELS[0]) -> dict:
    """Run every statistic on ``data`` (a loader.Judgments).

    ``unit`` (``margins``: the sentence-level sign-flip test, default;
    ``items``: per-sentence winners by ``test``) and ``correction`` choose
    what decides a pair's significance and so the ordering and clusters
    (see winners.significance); the defaults hold the family-wise error
    rate at ``alpha`` when judgments of one sentence are correlated.

    The result follows the schema in docs/analysis.md: ``systems``,
    ``agreement``, ``pairs``, ``ordering``, ``clusters``, ``bradley_terry``,
    ``win_matrix``, ``win_rates`` plus ``input``, ``settings``, ``notes``.
    """
    systems = list(data.systems)
    agreement = _agreement.agreement(data)
    tables = _winners.pair_tables(data)
    pairs = _winners.significance(tables, alpha=alpha, test=test,
                                  correction=correction, unit=unit,
                                  z_form=z_form)
    bt = _bt.bradley_terry(data, rounds=rounds, seed=seed,
                           pseudo_count=pseudo_count, model=bt_ties)
    scores = {row["system"]: row["score"] for row in bt["scores"]}
    compared = {frozenset(e["systems"]) for e in pairs}
    order = _ordering.order_systems(systems, _ordering.beats_from_pairs(pairs),
                                    scores, compared)
    unseen = [[a, b] for a, b in combinations(systems, 2)
              if frozenset((a, b)) not in compared]

    wins, ties = bt["wins"], bt["ties"]
    rates = _bt.win_rates(wins, ties)
    win_rates = [{"system": s, **r} for s, r in zip(systems, rates)]
    notes = list(order["notes"]) + list(bt["warnings"])
    if unseen:
        notes.append(f"{len(unseen)} system pair(s) never compared")
    if agreement["intra"] is None:
        notes.append("intra-annotator agreement not available: no judge "
                     "judged the same item twice")

    return {
        "input": {
            "path": data.path, "format": data.source_format,
            "judgments": len(data), "sentences": len(data.sentences),
            "judges": len(data.judges), "counts": dict(data.counts),
        },
        "settings": {
            "alpha": alpha, "test": test, "correction": correction,
            "holm": correction == "holm", "unit": unit, "z_form": z_form,
            "bootstrap_rounds": rounds, "seed": seed,
            "bootstrap_unit": "source sentence", "pseudo_count": pseudo_count,
            "bt_ties": bt_ties,
            "kappa_default": "wmt",
        },
        "systems": systems,
        "agreement": agreement,
        "pairs": pairs,
        "unseen_pairs": unseen,
        "ordering": order["ordering"],
        "ordering_detail": {k: order[k] for k in
                            ("sequence", "relations", "copeland")},
        "clusters": order["clusters"],
        "bradley_terry": bt["scores"],
        "bradley_terry_nu": bt["nu"],
        "win_matrix": {"systems": systems, "wins": wins.tolist(),
                       "ties": ties.tolist()},
        "win_rates": win_rates,
        "notes": notes,
    }
