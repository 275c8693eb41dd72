"""Campaign import: a folder with ``campaign.toml``, line-aligned text files
(one per MT system), a TSV of controls and an optional TSV of practice items. See docs/campaign-format.md.

``read_campaign`` validates everything and returns a plain ``CampaignSpec``;
nothing is written to the database unless it succeeds, and then
services/campaign_writer.py writes it.
"""
import os
import re
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction

from .. import protocols
from ..stats.pairwise.bozka_reader import ANSWER_LABELS  # a system so named would read as an answer
from .campaign_files import inside, read_lines, read_table, refuse_campaign_sentences
from .campaign_texts import known_language, language_key, read_in_interface, read_texts, unread_texts
from .format_error import CampaignFormatError
from .texts import same_text
from .leaderboard import TOP

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
SYSTEM_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._+-]{0,63}$")
SYSTEM_CHARACTERS = "A-Z, a-z, 0-9, space, '.', '_', '+' and '-' (up to 64 characters, the first a letter or digit)"
PRACTICE_HEADER = ["source", "better", "worse", "why"]
WHY_IN = "why."  # then a language: the explanation in that interface language (optional columns)
PRACTICE_FILE = "practice.tsv"  # read when present, unless the manifest names another file

SETTINGS = {
    # name: (type, default, minimum[, maximum]); a protocol adds its own
    "judgments_per_pair": (int, 5, 1),
    "control_first": (int, 2, 0),
    "control_every": (int, 5, 2),
    "control_placement": (str, "fixed", None),
    "early_control_items": (int, 0, 0),
    "early_control_every": (int, 2, 2),
    "control_source": (str, "generated", None),
    "controls_per_volunteer": (int, 0, 0),
    "expected_volunteers": (int, 0, 0),
    "failure_cutoff": (str, "1/3", None),
    "check_every": (int, 10, 1),
    "control_window": (int, 0, 0),
    "raffle_every": (int, 10, 1),
    "reservation_timeout": (int, 600, 10),
    "daily_cap": (int, 0, 0),
    "fast_seconds_per_word": (float, 0.0375, 0.0),
    "hold_min_tests": (int, 20, 0),
    "hold_alpha": (float, 0.00001, 0.0),
    "hold_fast_run": (int, 5, 0),
    "leaderboard_prizes": (int, 5, 0, TOP),  # 0: the ranking wins no prize; at most the top a page shows
}


@dataclass
class CampaignSpec:
    slug: str
    name: str
    source_language: str
    target_language: str
    description: str
    instructions: str
    systems: list  # names, in manifest order
    sources: list
    references: list  # or None
    outputs: dict  # system name -> list of lines
    controls: list  # (source, better, worse)
    practice: list = field(default_factory=list)  # (source, better, worse, why, {language: why})
    settings: dict = field(default_factory=dict)
    interface_language: str = "en"
    # name, description and instructions in other languages (services/campaign_texts.py)
    texts: dict = field(default_factory=dict)
    protocol: str = "pairwise"
    warnings: list = field(default_factory=list)  # for the organiser; the import goes on
    documents: list = None  # per sentence (document, domain or None), or None: no documents file


def _manifest(folder):
    path = os.path.join(folder, "campaign.toml")
    if not os.path.isfile(path):
        raise CampaignFormatError("campaign.toml", None, "manifest not found")
    try:
        with open(path, "rb") as handle:
            data = tomllib.loads(handle.read().decode("utf-8"))
    except UnicodeDecodeError:
        raise CampaignFormatError("campaign.toml", None, "invalid UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise CampaignFormatError(
            "campaign.toml", int(match.group(1)) if match else None, f"invalid TOML: {exc}"
        ) from None
    return data


def _require(data, key, kind=str):
    value = data.get(key)
    if not isinstance(value, kind) or (kind is str and not value.strip()):
        raise CampaignFormatError("campaign.toml", None, f"'{key}' is required ({kind.__name__})")
    return value.strip() if kind is str else value


# Settings an organiser may change while the campaign runs (``change_settings``;
# a protocol adds its own LIVE_SETTINGS): the others decide how many
# judgments the campaign holds and who saw what.
LIVE_SETTINGS = ("daily_cap", "fast_seconds_per_word", "hold_min_tests", "hold_alpha", "hold_fast_run")


def _protocol(data):
    name = data.get("protocol", "pairwise")
    if name not in protocols.PROTOCOLS:
        raise CampaignFormatError("campaign.toml", None, f"protocol must be one of: {', '.join(protocols.PROTOCOLS)}")
    return protocols.PROTOCOLS[name]


def _settings(data, protocol):
    raw = data.get("settings", {})
    if not isinstance(raw, dict):
        raise CampaignFormatError("campaign.toml", None, "[settings] must be a table")
    return checked_settings(raw, SETTINGS | protocol.SETTINGS)


def settings_of(campaign):
    """[(name, value, may change while the campaign runs)] of a campaign's settings."""
    protocol = protocols.of(campaign)
    live = LIVE_SETTINGS + protocol.LIVE_SETTINGS
    return [(name, getattr(campaign, name), name in live) for name in SETTINGS | protocol.SETTINGS]


def change_settings(campaign, raw):
    """Change settings of a running campaign (only LIVE_SETTINGS); the
    values are checked as the importer checks them. Returns them."""
    protocol = protocols.of(campaign)
    known, live = SETTINGS | protocol.SETTINGS, LIVE_SETTINGS + protocol.LIVE_SETTINGS
    fixed = sorted(set(raw) & set(known) - set(live))
    if fixed:
        raise CampaignFormatError("campaign.toml", None, f"cannot change while the campaign runs: {', '.join(fixed)}")
    settings = checked_settings(raw, {name: known[name] for name in live}, defaults=False)
    for name, value in settings.items():
        setattr(campaign, name, value)
    return settings


def checked_settings(raw, known, defaults=True):
    """The settings of ``raw`` checked against ``known`` (name: (type,
    default, minimum)), with the defaults of the missing ones if ``defaults``."""
    unknown = set(raw) - set(known)
    if unknown:
        raise CampaignFormatError("campaign.toml", None, f"unknown setting(s): {', '.join(sorted(unknown))}")
    settings = {}
    for name, (kind, default, minimum, *most) in known.items():
        maximum = most[0] if most else 10
        if name not in raw and not defaults:
            continue
        value = raw.get(name, default)
        if name == "failure_cutoff":
            try:
                fraction = Fraction(str(value))
            except (ValueError, ZeroDivisionError):
                fraction = None
            if fraction is None or not 0 <= fraction < 1:
                raise CampaignFormatError(
                    "campaign.toml", None, "failure_cutoff must be a fraction such as \"1/3\""
                )
            value = str(fraction)
        elif kind is str:
            words = protocols.word_settings().get(name, ())  # pairwise's control settings too
            if value not in words:
                raise CampaignFormatError("campaign.toml", None, f"{name} must be one of: {', '.join(words)}")
        elif kind is float:
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not minimum <= value < maximum:
                raise CampaignFormatError("campaign.toml", None, f"{name} must be a number from {minimum} to {maximum}")
            value = float(value)
        elif not isinstance(value, int) or isinstance(value, bool) or value < minimum or (most and value > maximum):
            bounds = f"from {minimum} to {maximum}" if most else f">= {minimum}"
            raise CampaignFormatError("campaign.toml", None, f"{name} must be an integer {bounds}")
        settings[name] = value
    return settings


def why_languages(display, cells, interface, interface_languages=None, header=PRACTICE_HEADER):
    """The languages (babel's codes) of practice.tsv's optional why.<code>
    columns (header ``cells`` after PRACTICE_HEADER), checked as [texts.<code>]
    tables are: a language CLDR knows, not the campaign's interface_language
    (the why column's), once; and, given the site's ``interface_languages``,
    one of them (only a page in that language shows it)."""
    languages = []
    for column, cell in enumerate(cells, start=len(header) + 1):
        where = f"column {column} ({cell or 'empty'})"
        code = cell[len(WHY_IN):] if cell.startswith(WHY_IN) else None
        key = language_key(code) if code else None
        if not code:
            raise CampaignFormatError(display, 1,
                                      f"{where}: an extra column must be {WHY_IN}<language>, such as why.eu")
        if key is None:
            raise CampaignFormatError(display, 1, f"{where}: {code!r} is not a language code that CLDR knows, "
                                                  "such as 'eu' or 'es'")
        if key == language_key(interface):
            raise CampaignFormatError(display, 1, f"{where}: the why column is in {interface} (interface_language)")
        if key in languages:
            raise CampaignFormatError(display, 1, f"{where}: a second column for the language {code}")
        if interface_languages is not None and not read_in_interface(key, interface_languages):
            raise CampaignFormatError(display, 1, f"{where}: this site has no interface in {code} (it has "
                                                  f"{', '.join(sorted(interface_languages))}): no page would show it")
        languages.append(key)
    return languages


def _practice(folder, name, controls_file, controls, sources, source_file, interface="en", interface_languages=None,
              protocol="pairwise"):
    """The practice items (source, better, worse, why, {language: why}[,
    spans]), as the ``protocol``'s practice module reads a row, or [] when
    the folder has none. A practice item shows its answer, so it may not
    repeat a control (that would give the control away) or a sentence to judge."""
    if name is None:
        if not os.path.isfile(os.path.join(folder, PRACTICE_FILE)):
            return []
        name = PRACTICE_FILE
    kind = protocols.practice(protocol)
    header = kind.HEADER
    languages = []

    def extra_columns(display, cells):
        languages.extend(why_languages(display, cells, interface, interface_languages, header))

    display, rows = read_table(folder, name, "practice", header, optional=extra_columns,
                               optional_header=f"<TAB>{WHY_IN}<language>...", differ=False)
    if not rows:
        raise CampaignFormatError(display, None, "no practice items after the header")
    control_lines = {}
    for line, (source, better, worse) in enumerate(controls, start=2):
        for text in (source, better, worse):
            control_lines.setdefault(same_text(text), line)
    items = []
    for line, row in enumerate(rows, start=2):
        try:
            texts, spans = kind.read_row(row[:len(header)])
        except ValueError as error:
            raise CampaignFormatError(display, line, str(error)) from None
        for text in texts[:3]:
            if text and same_text(text) in control_lines:
                raise CampaignFormatError(
                    display, line, f"repeats a text of {controls_file}:{control_lines[same_text(text)]}; "
                    "a practice item shows its answer and would give the control away"
                )
        why_texts = {key: why for key, why in zip(languages, row[len(header):]) if why}
        items.append((*texts, why_texts) + ((spans,) if spans is not None else ()))
    refuse_campaign_sentences(display, enumerate((row[0] for row in rows), start=2), sources, source_file,
                              "practise on others")
    return items


def read_campaign(folder, interface_languages=None):
    """Validate a campaign folder completely; raise CampaignFormatError.
    ``interface_languages``: the site's (config LANGUAGES), to warn of
    [texts.LANG] tables no volunteer would read."""
    if not os.path.isdir(folder):
        raise CampaignFormatError(folder, None, "not a folder")
    data = _manifest(folder)
    slug = _require(data, "slug")
    if not SLUG_RE.match(slug):
        raise CampaignFormatError("campaign.toml", None, "slug: lower-case letters, digits and '-' only")
    languages = {}
    for key in ("source_language", "target_language"):
        languages[key] = _require(data, key)
        _check_language(key, languages[key])
    systems = data.get("systems")
    if not isinstance(systems, dict) or len(systems) < 2:
        raise CampaignFormatError("campaign.toml", None, "[systems] must name at least two systems")
    files_seen = {}
    for name, filename in systems.items():
        if not SYSTEM_RE.match(name):
            raise CampaignFormatError("campaign.toml", None,
                                      f"invalid system name {name!r}: use {SYSTEM_CHARACTERS}")
        if name.lower() in ANSWER_LABELS:
            answers = ", ".join(ANSWER_LABELS)
            raise CampaignFormatError("campaign.toml", None, f"system name {name!r} is an answer ({answers}); rename it")
        if not isinstance(filename, str):
            raise CampaignFormatError("campaign.toml", None, f"system {name}: file name expected")
        if filename in files_seen:
            raise CampaignFormatError(
                "campaign.toml", None, f"systems {files_seen[filename]} and {name} use the same file"
            )
        files_seen[filename] = name
    lowered = [name.lower() for name in systems]
    if len(set(lowered)) != len(lowered):
        raise CampaignFormatError("campaign.toml", None, "duplicate system names")
    protocol = _protocol(data)
    settings = _settings(data, protocol)
    interface = str(data.get("interface_language", "en")).strip()
    _check_language("interface_language", interface)
    practice_languages = (interface, interface_languages)  # the why.<code> columns' rule

    source_file, sources = read_lines(folder, _require(data, "source"), "source")
    outputs = {}
    for name, filename in systems.items():
        display, lines = read_lines(folder, filename, f"system {name}")
        _same_length(display, lines, source_file, sources)
        outputs[name] = lines
    references = None
    if data.get("reference"):
        display, references = read_lines(folder, _require(data, "reference"), "reference")
        _same_length(display, references, source_file, sources)
    documents = None
    if data.get("documents"):
        display, lines = read_lines(folder, _require(data, "documents"), "documents")
        _same_length(display, lines, source_file, sources)
        documents = read_documents(display, lines)
    problem = protocol.check_settings(settings, has_references=references is not None)
    if problem:
        raise CampaignFormatError("campaign.toml", None, problem)
    controls, practice, warnings = [], [], []
    if protocol.USES_CONTROLS:
        controls, practice, warnings = _controls_and_practice(protocol, folder, data, settings, sources,
                                                              source_file, practice_languages)
    else:
        has_practice = protocols.practice(protocol.NAME) is not None
        for key in ("controls",) if has_practice else ("controls", "practice"):
            if key in data:
                raise CampaignFormatError(
                    "campaign.toml", None, f"'{key}': a {protocol.NAME} campaign makes its own quality control; remove it"
                )
        if has_practice:
            practice = _practice(folder, _require(data, "practice") if "practice" in data else None, None, [],
                                 sources, source_file, *practice_languages, protocol.NAME)
        # Read by its presence in a pairwise folder: here it would silently do nothing.
        elif os.path.exists(os.path.join(folder, PRACTICE_FILE)):
            raise CampaignFormatError(
                PRACTICE_FILE, None, f"a {protocol.NAME} campaign has no practice items (pairwise and "
                "ESA campaigns have); remove the file"
            )
        if references is not None:
            warnings += protocol.reference_warnings(references, outputs)
        warnings += identical_outputs(outputs)
    defaults = {
        "name": _require(data, "name"),
        "description": str(data.get("description", "")).strip(),
        "instructions": _instructions(folder, _require(data, "instructions")) if data.get("instructions") else "",
    }
    texts = read_texts(data.get("texts"), defaults, interface, lambda name: _instructions(folder, name))
    if interface_languages is not None:
        warnings += unread_texts(texts, interface_languages)
    return CampaignSpec(
        slug=slug,
        **defaults,
        texts=texts,
        systems=list(systems),
        sources=sources,
        references=references,
        outputs=outputs,
        controls=controls,
        practice=practice,
        settings=settings,
        interface_language=interface,
        protocol=protocol.NAME,
        warnings=warnings,
        documents=documents,
        **languages,
    )


def _instructions(folder, name):
    """The text of an instructions file, "" if it holds only white space."""
    path = inside(folder, name, "instructions")
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip()
    except FileNotFoundError:
        raise CampaignFormatError(name, None, "instructions file not found") from None
    except UnicodeDecodeError:
        raise CampaignFormatError(name, None, "invalid UTF-8") from None
    except OSError as exc:  # a folder, unreadable
        raise CampaignFormatError(name, None, f"instructions file cannot be read: {exc.strerror}") from None


def identical_outputs(outputs, shown=3):
    """Warnings for the sentences where systems give the same translation
    (spaces aside): a summary line, then the first ``shown`` of them. DA
    scores each system's output, so a volunteer may score that text once
    per system; the campaign goes on (a warning, not a refusal)."""
    same = []
    for number, texts in enumerate(zip(*outputs.values()), start=1):
        groups = {}
        for name, text in zip(outputs, texts):
            groups.setdefault(" ".join(text.split()), []).append(name)
        same += [(number, names) for names in groups.values() if len(names) > 1]
    if not same:
        return []
    sentences = len({number for number, _names in same})
    lines = [f"{sentences} of {len(next(iter(outputs.values())))} sentences have systems giving the same "
             f"translation (first {min(shown, len(same))} below)"]
    for number, names in same[:shown]:
        named = ", ".join(names[:-1]) + f" and {names[-1]}"
        lines.append(f"sentence {number}: systems {named} give the same translation; "
                     "a volunteer scores it once per system")
    return lines


def _controls_and_practice(protocol, folder, data, settings, sources, source_file,
                           practice_languages=("en", None)):
    """The controls (the protocol's ``read_controls``), the practice items and
    warnings about the control pool.
    ``practice_languages``: (interface_language, the site's interface languages)."""
    practice_name = data.get("practice")
    if practice_name is not None:
        practice_name = _require(data, "practice")
    controls_name = _require(data, "controls") if "controls" in data else None
    controls_file, controls, warnings = protocol.read_controls(folder, controls_name, settings, sources, source_file)
    practice = _practice(folder, practice_name, controls_file, controls, sources, source_file, *practice_languages)
    return controls, practice, warnings


DOCUMENT_LENGTH, DOMAIN_LENGTH = 120, 40


def read_documents(display, lines):
    """(document, domain or None) per sentence from a documents file's
    lines: ``document`` or ``domain<TAB>document`` (the layout of WMT's
    ``.docs`` files). A document's sentences are consecutive lines, in the
    order they are read: a document met again after another is refused."""
    documents, finished, current = [], set(), None
    for number, line in enumerate(lines, start=1):
        fields = line.split("\t")
        if len(fields) > 2:
            raise CampaignFormatError(display, number, "expected 'document' or 'domain<TAB>document'")
        # read_lines strips the line: neither field can be empty.
        domain, document = (None, fields[0]) if len(fields) == 1 else (fields[0].strip(), fields[1].strip())
        if len(document) > DOCUMENT_LENGTH or (domain and len(domain) > DOMAIN_LENGTH):
            raise CampaignFormatError(display, number, f"a document name has at most {DOCUMENT_LENGTH} characters, "
                                                       f"a domain at most {DOMAIN_LENGTH}")
        if document != current:
            if document in finished:
                raise CampaignFormatError(display, number, f"document {document!r} began earlier and was "
                                                           "interrupted: a document's lines must be consecutive")
            if current is not None:
                finished.add(current)
            current = document
        elif domain != documents[-1][1]:
            raise CampaignFormatError(display, number, f"document {document!r} changes its domain")
        documents.append((document, domain))
    return documents


def _same_length(display, lines, source_file, sources):
    if len(lines) != len(sources):
        raise CampaignFormatError(
            display,
            min(len(lines), len(sources)) + 1,
            f"{len(lines)} lines, but {source_file} has {len(sources)}",
        )


def read_sources(folder):
    """(manifest, protocol module, settings, source file, its sentences) of
    a campaign folder, checked: what a tool needs before the rest of the
    folder exists (``control_pool``)."""
    if not os.path.isdir(folder):
        raise CampaignFormatError(folder, None, "not a folder")
    data = _manifest(folder)
    protocol = _protocol(data)
    settings = _settings(data, protocol)
    source_file, sources = read_lines(folder, _require(data, "source"), "source")
    return data, protocol, settings, source_file, sources


def _check_language(key, code):
    if not known_language(code):
        raise CampaignFormatError(
            "campaign.toml", None,
            f"{key}: {code!r} is not a language code that CLDR knows, such as 'eu', 'en-GB' or 'ur'",
        )
