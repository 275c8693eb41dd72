"""Helpers for the Direct Assessment tests (imported as ``da_helpers``)."""

import csv
import os

import pytest

from stats_helpers import ROOT

DA_REFERENCE = os.path.join(os.path.dirname(ROOT), "shared", "reference-data",
                            "wmt21-da-hibn")

DA_HEADER = ["campaign", "judgment_id", "sentence_id", "system", "kind",
             "original_judgment_id", "score", "volunteer", "age_group",
             "studies_level", "studies_field", "source_level", "target_level",
             "served_at", "answered_at", "seconds", "discarded", "discard_reason"]

WMT_DA_HEADER = ("HITId\tWorkerId\tInput.src\tInput.trg\tInput.item\thit\tsys_id"
                 "\trid\ttype\tsid\tscore\ttime")


def da_reference_file(name):
    """Path of a file of the WMT21 DA reference data; skips when absent."""
    path = os.path.join(DA_REFERENCE, name)
    if not os.path.exists(path):
        pytest.skip(f"reference data not available ({path})")
    return path


def da_row(jid, sentence, system, score, volunteer, kind="system", original="",
           discarded=False):
    """One da-judgments export row as a dict of CSV strings."""
    return {
        "campaign": "demo", "judgment_id": str(jid), "sentence_id": str(sentence),
        "system": system, "kind": kind, "original_judgment_id": str(original),
        "score": "" if score is None else str(score), "volunteer": volunteer,
        "age_group": "", "studies_level": "", "studies_field": "",
        "source_level": "", "target_level": "", "served_at": "", "answered_at": "",
        "seconds": "4.5", "discarded": "true" if discarded else "false",
        "discard_reason": "",
    }


def write_da_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=DA_HEADER)
        writer.writeheader()
        for row in rows:
            writer.writerow(row if isinstance(row, dict) else da_row(*row))
    return str(path)


def wmt_da_line(judge, system, sid, score, kind="SYSTEM", hit="H1"):
    """A row laid out as WMT's files are: tabs and spaces mixed, sys_id quoted."""
    return f'{hit}\t{judge}\ten\tde ad NA\t"{system}" NA {kind}\t{sid}\t{score}\t0'


def write_wmt_da(path, lines):
    path.write_text(WMT_DA_HEADER + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return str(path)
