"""Reading a campaign folder's text files: UTF-8, one sentence (or one TSV
row) a line, inside the folder. The importer reads every file so, and a
protocol's own files too (pairwise's controls and held-out sentences), which
is why these rules sit below the protocols and not in the importer."""
import os
import unicodedata

from .format_error import CampaignFormatError

MAX_LINE_CHARS = 2000


def inside(folder, name, what):
    """The path of a file the manifest names, which must lie in the folder
    (a campaign from elsewhere must not read the server's other files)."""
    path = os.path.join(folder, name)
    root = os.path.realpath(folder)
    if "\x00" in name or os.path.commonpath([root, os.path.realpath(path)]) != root:
        raise CampaignFormatError(name, None, f"{what} file is outside the campaign folder")
    return path


def read_lines(folder, name, what):
    """(the file's path as shown in errors, its lines) of a text file in the
    folder: UTF-8, one sentence a line (the pool maker reads held-out files so too)."""
    path = inside(folder, name, what)
    display = os.path.relpath(path, folder)
    if not os.path.isfile(path):
        raise CampaignFormatError(display, None, f"{what} file not found")
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise CampaignFormatError(display, None, f"{what} file cannot be read: {exc.strerror}") from None
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # final newline
    if not lines:
        raise CampaignFormatError(display, None, f"{what} file is empty")
    result = []
    for number, data in enumerate(lines, start=1):
        if number == 1 and data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        data = data.rstrip(b"\r")
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CampaignFormatError(
                display, number, f"invalid UTF-8 (byte {exc.start + 1} of the line)"
            ) from None
        if "\x00" in line:
            raise CampaignFormatError(display, number, "NUL character")
        if not line.strip():
            raise CampaignFormatError(display, number, "empty line")
        if len(line) > MAX_LINE_CHARS:
            raise CampaignFormatError(display, number, f"line longer than {MAX_LINE_CHARS} characters")
        result.append(line.strip())
    return display, result


def read_table(folder, name, what, columns, optional=None, optional_header="", differ=True):
    """The rows of a TSV file with the header ``columns``: each row a tuple
    of non-empty fields whose better and worse translations differ (unless
    not ``differ``: practice rows are checked by their protocol).
    ``optional(display, extra header cells)``: checks columns allowed after
    ``columns``; their cells may be empty (or missing at the end of a line);
    ``optional_header`` tells them in the header's error."""
    display, lines = read_lines(folder, name, what)
    header = [cell.strip().lower() for cell in lines[0].split("\t")]
    if header[:len(columns)] != columns or (len(header) > len(columns) and optional is None):
        more = optional_header if optional else ""
        raise CampaignFormatError(display, 1, f"header must be: {'<TAB>'.join(columns)}{more}")
    if optional:
        optional(display, header[len(columns):])
    rows, most = [], len(header)
    for number, line in enumerate(lines[1:], start=2):
        cells = [cell.strip() for cell in line.split("\t")]
        if not len(columns) <= len(cells) <= most or (optional is None and len(cells) != most):
            expected = f"{len(columns)} to {most}" if most > len(columns) else str(len(columns))
            raise CampaignFormatError(
                display, number, f"expected {expected} tab-separated fields, found {len(cells)}"
            )
        if not all(cells[:len(columns)]):
            raise CampaignFormatError(display, number, "empty field")
        cells += [""] * (most - len(cells))  # a line's last empty cells: its tabs were stripped with its end
        if differ and cells[1] == cells[2]:
            raise CampaignFormatError(display, number, "the better and worse translations are the same")
        rows.append(tuple(cells))
    return display, rows


def sentence_key(text):
    """A sentence as a reader recognises it, for comparisons: Unicode NFC,
    case and white space folded (a re-spaced or re-encoded copy is the same)."""
    return " ".join(unicodedata.normalize("NFC", text.casefold()).split())


def refuse_campaign_sentences(display, numbered, sources, source_file, why):
    """Raise CampaignFormatError at the first (line, source) of ``numbered``
    (rows of ``display``) that is one of the campaign's ``sources`` (read
    from ``source_file``), giving ``why`` it may not be."""
    lines = {}
    for number, source in enumerate(sources, start=1):
        lines.setdefault(sentence_key(source), number)
    for line, text in numbered:
        number = lines.get(sentence_key(text))
        if number is not None:
            raise CampaignFormatError(
                display, line, f"the source is line {number} of {source_file}, a sentence of the campaign; {why}"
            )
