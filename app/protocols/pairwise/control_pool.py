"""A pool of pairwise controls made from held-out sentences
(docs/campaign-format.md, "Making a pool of controls"): sentences with a
human reference that are not in the campaign. The better side is the
reference (or a system's output of the sentence, given in the file), the
worse the same text degraded as a generated control is
(``degrade.known_worse``, with words of another held-out translation).
Plain functions of values; ``flask campaign controls`` reads and writes the
files."""
import os
from dataclasses import dataclass

from ...services import campaign_files, degrade
from ...services.campaign_files import MAX_LINE_CHARS, inside, read_lines, sentence_key
from ...services.format_error import CampaignFormatError
from .controls import IMPORTED, coverage_controls, pool_size
from .controls_file import CONTROL_HEADER

HELD_OUT_HEADER = ["source", "reference"]
OUTPUT_COLUMN = "output"  # optional third column: a system's output, the better side with use_output
TRIES = 8  # donors tried per sentence (a draw can give back the same words)


@dataclass
class HeldOut:
    line: int
    source: str
    reference: str
    output: str = None


def read_held_out(path, use_output=False):
    """The rows of a held-out TSV (header ``source<TAB>reference``, with an
    optional ``output`` column). Errors name ``path`` and the line."""
    folder, name = os.path.split(os.path.abspath(path))
    try:
        _display, lines = read_lines(folder, name, "held-out")
        header = [cell.strip().lower() for cell in lines[0].split("\t")]
        if header not in (HELD_OUT_HEADER, HELD_OUT_HEADER + [OUTPUT_COLUMN]):
            raise CampaignFormatError(
                name, 1, f"header must be: source<TAB>reference, optionally <TAB>{OUTPUT_COLUMN}"
            )
        if use_output and OUTPUT_COLUMN not in header:
            raise CampaignFormatError(
                name, 1, f"the better side is the output: the file needs a column {OUTPUT_COLUMN}"
            )
        rows = []
        for number, line in enumerate(lines[1:], start=2):
            cells = [cell.strip() for cell in line.split("\t")]
            if len(cells) != len(header):
                raise CampaignFormatError(
                    name, number, f"expected {len(header)} tab-separated fields, found {len(cells)}"
                )
            if not all(cells):
                raise CampaignFormatError(name, number, "empty field")
            rows.append(HeldOut(number, *cells))
        if not rows:
            raise CampaignFormatError(name, None, "no sentences after the header")
    except CampaignFormatError as exc:
        raise CampaignFormatError(path, exc.line, exc.message) from None
    return rows


def refuse_campaign_sentences(path, rows, sources, source_file):
    """Raise CampaignFormatError at the first held-out sentence that is a
    sentence of the campaign (the importer's rule for controls)."""
    campaign_files.refuse_campaign_sentences(
        path, ((row.line, row.source) for row in rows), sources, source_file,
        "held-out sentences must not be in the campaign (a volunteer would see it twice and tell the control)",
    )


def make_pool(rows, rng, use_output=False):
    """(controls as (source, better, worse), skipped as (line, why)): one
    control per held-out sentence whose better side can be degraded."""
    betters = [row.output if use_output else row.reference for row in rows]
    controls, skipped, first_line = [], [], {}
    for index, row in enumerate(rows):
        key = sentence_key(row.source)
        if key in first_line:
            skipped.append((row.line, f"the source of line {first_line[key]} again"))
            continue
        first_line[key] = row.line
        worse = _worse(index, betters, rng, avoid={row.reference, row.output})
        control = (row.source, betters[index], worse)
        if worse is None:
            short = degrade.span_length(len(degrade.units(betters[index])[0])) == 0
            skipped.append((row.line, "too short to degrade" if short else "no worse translation could be made"))
        elif len("\t".join(control)) > MAX_LINE_CHARS:
            skipped.append((row.line, f"a control line would be longer than {MAX_LINE_CHARS} characters"))
        else:
            controls.append(control)
    return controls, skipped


def _worse(index, betters, rng, avoid):
    """The known-worse side of ``betters[index]``, with words of another
    held-out translation (drawn at random), or None."""
    for _attempt in range(TRIES if len(betters) > 1 else 0):
        donor = rng.randrange(len(betters))
        if donor != index:
            worse = degrade.known_worse(betters[index], betters[donor], rng, avoid)
            if worse is not None:
                return worse
    return None


def pool_advice(settings, sentences):
    """(the pool size the campaign needs, what the organiser reads about
    it): the importer's rules (the least pool, and no warning of a small
    pool for ``expected_volunteers``)."""
    covered, least = coverage_controls(settings, sentences)
    per_volunteer, expected = settings["controls_per_volunteer"], settings["expected_volunteers"]
    safe = max(least, pool_size(per_volunteer or least, expected))
    if settings["control_source"] != IMPORTED:
        return 0, (
            "This campaign makes each volunteer's controls from its outputs (control_source = \"generated\"): "
            "a pool serves only where none can be made, and any size will do. With control_source = "
            f"\"imported\", it would need at least {safe}."
        )
    volunteers = f"{expected} expected volunteers" if expected else "expected_volunteers not set (5 accounts assumed)"
    if not per_volunteer:
        return safe, (
            "Every volunteer is served from the whole pool (controls_per_volunteer = 0), so one account that has "
            f"seen it knows every answer, whatever its size. Set controls_per_volunteer = {least}: then at least "
            f"{safe} controls are needed ({volunteers})."
        )
    return safe, (
        f"This campaign needs at least {safe} controls ({per_volunteer} per volunteer, {volunteers}; "
        f"at least {least} so that a volunteer can judge {covered} sentences without seeing a control twice)."
    )


def controls_path(folder, manifest):
    """(path of the campaign's controls file, whether campaign.toml names it)."""
    name = manifest.get("controls")
    if not isinstance(name, str) or not name.strip():
        return os.path.join(folder, "controls.tsv"), False
    return inside(folder, name.strip(), "controls"), True


def write_controls(path, controls):
    """Write ``controls`` as a controls file the importer reads."""
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write("\t".join(CONTROL_HEADER) + "\n")
        for control in controls:
            handle.write("\t".join(control) + "\n")
