"""Reading Bozka's judgment export (CSV with a header row, or JSON Lines
with the same keys). The pair is normalised later (``first`` is the system
whose name sorts first), since the sides shown to a volunteer were random.

A repeat (``kind`` "repeat": a test item shown again to the same volunteer)
is never a judgment of the systems: it is kept aside, in ``repeats``, for
intra-annotator agreement only (``agreement.agreement``).
"""

from __future__ import annotations

import csv

from ..research import COLUMNS as FLAG_OF, FLAG_COLUMNS, REASONS, SKIPPED, left_out
from ..reading import BOOLEANS, Builder, InputError, csv_rows, json_object, parse_bool, read_header

BOZKA_COLUMNS = (
    "campaign", "judgment_id", "sentence_id", "system_a", "system_b",
    "shown_first", "choice", "volunteer", "age_group", "studies_level",
    "studies_field", "source_level", "target_level", "served_at",
    "answered_at", "seconds", "is_control", "control_passed", "discarded",
    "discard_reason",
) + FLAG_COLUMNS + ("kind", "original_judgment_id")
#: Columns the analysis cannot do without (Bozka format).
BOZKA_REQUIRED = ("sentence_id", "system_a", "system_b", "choice", "volunteer")


EQUAL = "equal"
#: Answers of the Bozka export's ``choice`` column and of the stored answers
#: (``items.choice``).  A system of one of these names, in any case, would make
#: a choice ambiguous ("equal" would count every tie as its win), so it is
#: refused, as the campaign importer refuses it.
ANSWER_LABELS = ("equal", "left", "right")
#: The ``kind`` of a row: a test judgment, a control, a repeat of a test
#: judgment (``original_judgment_id`` names it). Older exports have no kind.
KINDS = ("test", "control", "repeat")
REPEAT = "repeat"


def counts(b: Builder, choice, flags, keep) -> bool:
    """Whether a row counts: answered and without a reason not to; a row
    that does not is counted under its reason."""
    b.counts["rows"] += 1
    reason = left_out(flags, keep)
    if reason is not None:
        b.skip(SKIPPED[reason])
        return False
    if not choice:
        b.skip("skipped_unanswered")
        return False
    return True


def repeat_row(b: Builder, repeats: list, line: int, sentence, sys_a, sys_b,
               choice, judge, flags, keep=()):
    """Keep one repeat aside, as ``(judge, sentence, system_a, system_b,
    outcome)`` (outcome +1: system_a better), unless it does not count."""
    if not counts(b, choice, flags, keep):
        return
    outcome = {sys_a: 1, sys_b: -1, EQUAL: 0}.get(choice)
    if outcome is None or sys_a == sys_b or not sentence or not judge:
        raise InputError(b.path, line, f"repeat: choice {choice!r} is neither "
                         f"{sys_a!r}, {sys_b!r} nor 'equal', or a field is empty")
    b.counts["repeats"] = b.counts.get("repeats", 0) + 1
    repeats.append((judge, sentence, sys_a, sys_b, outcome))


def bozka_row(b: Builder, line: int, sentence, sys_a, sys_b, choice, judge,
               flags, keep=()):
    """Add one Bozka judgment (all values already plain strings/bools;
    ``flags``: reason -> bool, ``keep``: the reasons kept)."""
    if not counts(b, choice, flags, keep):
        return
    if not sys_a or not sys_b:
        raise InputError(b.path, line, "system_a and system_b must not be empty")
    if sys_a == sys_b:
        raise InputError(b.path, line, f"system_a and system_b are both {sys_a!r}")
    if not sentence:
        raise InputError(b.path, line, "sentence_id must not be empty")
    if not judge:
        raise InputError(b.path, line, "volunteer must not be empty")
    for name in (sys_a, sys_b):
        if name not in b.systems and name.lower() in ANSWER_LABELS:
            raise InputError(b.path, line, f"system {name!r} is named like an "
                             f"answer ({', '.join(ANSWER_LABELS)}, in any case), "
                             f"so a choice of {name!r} is ambiguous; rename "
                             "the system")
    if choice == sys_a:
        outcome = 1
    elif choice == sys_b:
        outcome = -1
    elif choice == EQUAL:
        outcome = 0
    else:
        raise InputError(b.path, line, f"choice {choice!r} is neither "
                         f"{sys_a!r}, {sys_b!r} nor 'equal'")
    systems = b.systems
    b.first.append(systems.setdefault(sys_a, len(systems)))
    b.second.append(systems.setdefault(sys_b, len(systems)))
    b.outcome.append(outcome)
    b.sentence.append(b.sentences.setdefault(sentence, len(b.sentences)))
    b.judge.append(b.judges.setdefault(judge, len(b.judges)))


def load_bozka_csv(path, handle, kept, campaign):
    reader = csv.reader(handle, strict=True)
    rows_read = csv_rows(path, reader)
    known = set(BOZKA_COLUMNS)
    header, index = read_header(path, reader, rows_read, known.__contains__,
                            BOZKA_REQUIRED)
    ncols = len(header)
    i_sent, i_a, i_b = index["sentence_id"], index["system_a"], index["system_b"]
    i_choice, i_judge = index["choice"], index["volunteer"]
    # the flags the file has, in the rule's order (older exports lack some)
    i_flags = [(reason, index[FLAG_OF[reason]]) for reason in REASONS if FLAG_OF[reason] in index]
    i_camp, i_id = index.get("campaign"), index.get("judgment_id")
    i_kind = index.get("kind")
    repeats = []
    if campaign is not None and i_camp is None:
        raise InputError(path, reader.line_num, "no campaign column to choose "
                         f"campaign {campaign!r} from")
    b = Builder(path, "bozka", campaign)
    keep = b.keep
    bools = BOOLEANS
    systems, sentences, judges = b.systems, b.sentences, b.judges
    add_first, add_second = b.first.append, b.second.append
    add_outcome, add_sentence = b.outcome.append, b.sentence.append
    add_judge = b.judge.append
    rows = 0
    skipped = dict.fromkeys(REASONS, 0)
    for row in rows_read:
        line = reader.line_num
        if len(row) != ncols:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            raise InputError(path, line, f"expected {ncols} fields, found {len(row)}")
        if not keep("" if i_camp is None else row[i_camp],
                    "" if i_id is None else row[i_id], line):
            continue
        flags = {}
        for reason, i in i_flags:
            flag = bools.get(row[i].lower())
            flags[reason] = parse_bool(path, line, FLAG_OF[reason], row[i]) if flag is None else flag
        reason = left_out(flags, kept)
        if reason is not None:
            rows += 1
            skipped[reason] += 1
            continue
        sys_a, sys_b, choice, sentence = row[i_a], row[i_b], row[i_choice], row[i_sent]
        if i_kind is not None and row[i_kind] == REPEAT:
            repeat_row(b, repeats, line, sentence, sys_a, sys_b, choice, row[i_judge], flags, kept)
            continue
        if choice == sys_a:
            outcome = 1
        elif choice == sys_b:
            outcome = -1
        elif choice == EQUAL:
            outcome = 0
        else:
            outcome = None
        if outcome is None or not choice or not sys_a or not sys_b \
                or sys_a == sys_b or not sentence or not row[i_judge] \
                or sys_a not in systems or sys_b not in systems:
            # unusual or first seen: the general routine checks it, skips it
            # or raises the error
            bozka_row(b, line, sentence, sys_a, sys_b, choice, row[i_judge], flags, kept)
            continue
        rows += 1
        add_first(systems.setdefault(sys_a, len(systems)))
        add_second(systems.setdefault(sys_b, len(systems)))
        add_outcome(outcome)
        add_sentence(sentences.setdefault(sentence, len(sentences)))
        add_judge(judges.setdefault(row[i_judge], len(judges)))
    b.counts["rows"] += rows
    for reason, value in skipped.items():
        if value:
            b.counts[SKIPPED[reason]] = b.counts.get(SKIPPED[reason], 0) + value
    return with_repeats(b.finish(1, canonical=True), repeats)


def load_bozka_jsonl(path, handle, keep, campaign):
    known = set(BOZKA_COLUMNS)
    b = Builder(path, "bozka", campaign)
    repeats = []
    first_line = None
    for line_no, text in enumerate(handle, start=1):
        if not text.strip():
            continue
        if first_line is None:
            first_line = line_no
        obj = json_object(path, line_no, text)
        if not known.issuperset(obj):
            unknown = sorted(set(obj) - known)[0]
            raise InputError(path, line_no, f"unknown key {unknown!r}")
        for key in BOZKA_REQUIRED:
            if key not in obj:
                raise InputError(path, line_no, f"missing key {key!r}")
        if not b.keep(_json_text(obj.get("campaign")),
                      _json_text(obj.get("judgment_id")), line_no):
            continue
        values = []
        for key in ("sentence_id", "system_a", "system_b", "choice", "volunteer"):
            value = obj[key]
            if value is None:
                value = ""
            elif not isinstance(value, str):
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    value = str(value)
                else:
                    raise InputError(path, line_no, f"{key}: expected a string")
            values.append(value)
        flags = {reason: parse_bool(path, line_no, FLAG_OF[reason], obj.get(FLAG_OF[reason]))
                 for reason in REASONS}
        if obj.get("kind") == REPEAT:
            repeat_row(b, repeats, line_no, *values, flags, keep)
        else:
            bozka_row(b, line_no, *values, flags, keep)
    return with_repeats(b.finish(first_line or 1, canonical=True), repeats)


def with_repeats(data, repeats):
    """``data`` with the repeats read beside it."""
    data.repeats = repeats
    return data


def _json_text(value) -> str:
    """A JSON value as the text a CSV cell would hold (null: empty)."""
    return "" if value is None else str(value)
