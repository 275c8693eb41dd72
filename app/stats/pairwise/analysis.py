"""Everything computed for one set of judgments, as a JSON-ready dict."""

from __future__ import annotations

from itertools import combinations

from .. import agreement as _agreement
from .. import bradley_terry as _bt
from .. import ordering as _ordering
from .. import sequential as _sequential
from .. import winners as _winners

__all__ = ["analyse"]


def analyse(data, *, alpha: float = 0.05, test: str = "sign",
            correction: str = "holm", unit: str = "margins",
            z_form: str = "binomial", rounds: int = 1000, seed: int = 1,
            pseudo_count: float = 0.01,
            bt_ties: str = _bt.TIE_MODELS[0], sequential=None) -> dict:
    """Run every statistic on ``data`` (a loader.Judgments).

    ``unit`` (``margins``: the sentence-level sign-flip test, default;
    ``items``: per-sentence winners by ``test``) and ``correction`` choose
    what decides a pair's significance and so the ordering and clusters
    (see winners.significance); the defaults hold the family-wise error
    rate at ``alpha`` when judgments of one sentence are correlated.

    ``sequential`` (the campaign's decisions export, as read by
    decisions_reader.read_decisions) makes the campaign's live decisions decide instead:
    see :func:`sequential_stages`; the units' figures stay as they are.

    The result follows the schema in docs/analysis.md: ``systems``,
    ``agreement``, ``pairs``, ``ordering``, ``clusters``, ``bradley_terry``,
    ``win_matrix``, ``win_rates`` plus ``input``, ``settings``, ``notes``
    (and ``sequential`` with ``sequential``).
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
    staged = None
    if sequential is not None:      # before the ordering: it rewrites the pairs' verdicts
        staged = sequential_stages(pairs, sequential, alpha)
    beats = _ordering.beats_from_pairs(pairs)
    if staged is not None:
        # a pair decided while the campaign ran whose judgments this file
        # does not hold (all left out by a flag) still orders its systems
        extra = [e for e in staged["pairs"] if not e["in_judgments"]]
        beats += _ordering.beats_from_pairs(extra)
        compared |= {frozenset(e["systems"]) for e in extra if e["better"] is not None}
    order = _ordering.order_systems(systems, beats, scores, compared)
    unseen = [[a, b] for a, b in combinations(systems, 2)
              if frozenset((a, b)) not in compared]

    wins, ties = bt["wins"], bt["ties"]
    rates = _bt.win_rates(wins, ties)
    win_rates = [{"system": s, **r} for s, r in zip(systems, rates)]
    notes = list(order["notes"]) + list(bt["warnings"])
    if staged is not None:
        notes += staged["notes"]
    if unseen:
        notes.append(f"{len(unseen)} system pair(s) never compared")
    if agreement["intra"] is None:
        notes.append("intra-annotator agreement not available: no judge "
                     "judged the same item twice")

    result = {
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
    if staged is not None:
        result["settings"]["decisions"] = sequential["path"]
        result["sequential"] = {k: v for k, v in staged.items() if k != "notes"}
    return result


def sequential_stages(pairs, sequential, alpha: float) -> dict:
    """Decide the pairs as :func:`sequential.final_analysis` does for a
    campaign that stopped adaptively, and write the decisions into ``pairs``
    (the entries of winners.significance, changed in place).

    A pair the campaign decided (``better`` in the decisions file) keeps
    that decision, made by the anytime-valid test at the file's ``level``
    ("sequential"; its ``p`` is the anytime p at the campaign's counts). The
    other pairs get one exact sign test of the sentences each system won in
    the judgments analysed, Holm over them at ``alpha - level`` ("final").
    Each entry gets ``stage`` ("sequential", "final" or None when
    undecided), ``significant``, ``better``, ``decided_by``
    (``sequential_p`` or ``final_p_holm``, the flat key of its p) and
    ``sequential``: the campaign's record of the pair (``wins`` and
    ``judgments`` as counted by the site, ``better``, ``decided_at``).

    Returns the report's ``sequential`` section: ``path``, ``alpha``,
    ``sequential_alpha``, ``final_alpha``, ``text`` (final_analysis's
    paragraph), ``campaign``, ``assignment``, ``goal``, ``pairs`` (every
    pair of the file, pairs with judgments first, each with ``systems``,
    ``stage``, ``decided``, ``better``, ``p``, ``judgments``, ``wins``,
    ``sentence_wins`` in the judgments analysed, ``decided_at``,
    ``in_judgments``) and ``notes``.
    """
    level = sequential["level"]
    rows = {frozenset(r["systems"]): r for r in sequential["pairs"]}
    entries = {frozenset(e["systems"]): e for e in pairs}
    # pairs with judgments in their canonical order, then the file's others
    keys = [frozenset(e["systems"]) for e in pairs]
    keys += [key for key in rows if key not in entries]
    tuples, decided, notes = [], [], []
    for key in keys:
        row, entry = rows.get(key), entries.get(key)
        a, b = entry["systems"] if entry is not None else sorted(key)
        better = row["better"] if row is not None else None
        if better is not None:      # the campaign's counts, those that decided it
            counts = (row["wins"][a], row["wins"][b])
        elif entry is not None:     # the judgments analysed: sentences won
            counts = (entry["sentence_wins"][a], entry["sentence_wins"][b])
        else:
            counts = (0, 0)
        tuples.append((a, b, *counts))
        decided.append(better)
        if better is not None and entry is not None:
            won = entry["sentence_wins"]
            other = b if better == a else a
            if won[other] > won[better]:
                notes.append(f"{a} - {b} was decided {better} better while the campaign ran; "
                             f"in this file {other} won more sentences ({won[other]} to {won[better]})")
    final = _sequential.final_analysis(tuples, decided, alpha=alpha, sequential_alpha=level)
    out = []
    for key, (a, b, wa, wb), verdict in zip(keys, tuples, final["pairs"]):
        row, entry = rows.get(key), entries.get(key)
        record = None if row is None else {
            "wins": dict(row["wins"]), "judgments": row["judgments"],
            "better": row["better"], "decided_at": row["decided_at"]}
        stage_key = "sequential_p" if verdict["stage"] == "sequential" else "final_p_holm"
        if entry is not None:
            entry["stage"] = verdict["stage"]
            entry["significant"] = verdict["decided"]
            entry["better"] = verdict["better"]
            entry["decided_by"] = stage_key
            entry["sequential_p"] = verdict["p"] if verdict["stage"] == "sequential" else None
            entry["final_p_holm"] = None if verdict["stage"] == "sequential" else verdict["p"]
            entry["sequential"] = record
        out.append({
            "systems": [a, b], "stage": verdict["stage"], "decided": verdict["decided"],
            "better": verdict["better"], "p": verdict["p"],
            "wins": None if record is None else record["wins"],
            "judgments": None if record is None else record["judgments"],
            "decided_at": None if record is None else record["decided_at"],
            "sentence_wins": None if entry is None else dict(entry["sentence_wins"]),
            "in_judgments": entry is not None,
        })
    return {"path": sequential["path"], "alpha": final["alpha"],
            "sequential_alpha": final["sequential_alpha"], "final_alpha": final["final_alpha"],
            "text": final["text"], "campaign": sequential.get("campaign"),
            "assignment": sequential.get("assignment"), "goal": sequential.get("goal"),
            "pairs": out, "notes": notes}
