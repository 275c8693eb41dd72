"""Fuzzing (hypothesis): the campaign importer and every form and JSON
endpoint. Malformed, oversized, wrongly encoded or truncated input gives a
clear error and changes nothing in the database."""
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from sqlalchemy import select

from app.extensions import db
from app.models import Campaign
from app.services import accounts
from app.services.campaign_writer import create_campaign
from app.services.campaign_files import MAX_LINE_CHARS
from app.services.importer import CampaignFormatError, read_campaign
from helpers import csrf_token, register, write_campaign
from security_helpers import db_snapshot, login, make_staff

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])
FILES = ["campaign.toml", "source.txt", "systems/A.txt", "systems/B.txt", "controls.tsv"]
# Text without surrogates (they cannot be sent in a request).
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300)


def _valid_folder():
    folder = tempfile.mkdtemp(prefix="bozka-fuzz-")
    write_campaign(folder, sentences=6, systems=("A", "B"), controls=20)
    return folder


def _mutations():
    """Ways to break one file: random bytes, truncation, a wrong encoding,
    an oversized line, a line removed or doubled, a NUL."""
    return st.one_of(
        st.tuples(st.just("bytes"), st.binary(max_size=400)),
        st.tuples(st.just("truncate"), st.floats(min_value=0, max_value=0.99)),
        st.tuples(st.just("encoding"), st.sampled_from(["latin-1", "utf-16", "utf-32", "cp1252", "shift_jis"])),
        st.tuples(st.just("long line"), st.integers(min_value=MAX_LINE_CHARS + 1, max_value=MAX_LINE_CHARS * 20)),
        st.tuples(st.just("insert"), st.binary(min_size=1, max_size=20)),
        st.tuples(st.just("drop line"), st.integers(min_value=0, max_value=30)),
        st.tuples(st.just("nul"), st.integers(min_value=0, max_value=200)),
    )


def _mutate(path, mutation):
    kind, arg = mutation
    with open(path, "rb") as handle:
        data = handle.read()
    if kind == "bytes":
        data = arg
    elif kind == "truncate":
        data = data[: int(len(data) * arg)]
    elif kind == "encoding":
        # Non-ASCII text saved in another encoding than UTF-8.
        data = data.decode("utf-8").replace("Source", "Sóurce ñ ü €", 1).encode(arg, errors="replace")
    elif kind == "long line":
        data = data.replace(b"\n", b" " + b"x" * arg + b"\n", 1)
    elif kind == "insert":
        data = data[: len(data) // 2] + arg + data[len(data) // 2:]
    elif kind == "drop line":
        lines = data.split(b"\n")
        del lines[arg % len(lines)]
        data = b"\n".join(lines)
    elif kind == "nul":
        position = arg % (len(data) or 1)
        data = data[:position] + b"\x00" + data[position:]
    with open(path, "wb") as handle:
        handle.write(data)


def _import(folder):
    """What ``flask campaign import`` does: validate, then write in one transaction."""
    spec = read_campaign(folder)
    create_campaign(spec)
    db.session.commit()
    return spec


@FUZZ
@given(target=st.sampled_from(FILES), mutation=_mutations())
def test_importer_broken_files_give_a_clear_error_and_change_nothing(app, target, mutation):
    folder = _valid_folder()
    try:
        _mutate(os.path.join(folder, target), mutation)
        before = db_snapshot()
        try:
            _import(folder)
        except CampaignFormatError as exc:
            assert exc.path and exc.message and str(exc)
            db.session.rollback()
            assert db_snapshot() == before
        else:
            # Some changes keep the folder valid (a line dropped from every
            # file is not; a dropped header is): then the import is whole.
            assert db.session.scalar(select(Campaign.slug)) == "test"
            db.session.rollback()
            for table in reversed(db.metadata.sorted_tables):
                db.session.execute(table.delete())
            db.session.commit()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@FUZZ
@given(manifest=TEXT)
def test_importer_random_manifests_give_a_clear_error(app, manifest):
    folder = _valid_folder()
    try:
        with open(os.path.join(folder, "campaign.toml"), "w", encoding="utf-8") as handle:
            handle.write(manifest)
        with pytest.raises(CampaignFormatError):
            read_campaign(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("line, message", [
    ('source = "../outside.txt"', "outside the campaign folder"),
    ('source = "/etc/hostname"', "outside the campaign folder"),
    ('instructions = "systems"', "instructions"),
    ('instructions = "/etc/hostname"', "outside the campaign folder"),
    ('source = "systems"', "source file not found"),
])
def test_importer_reads_only_files_inside_the_folder(tmp_path, line, message):
    folder = write_campaign(str(tmp_path / "c"))
    (tmp_path / "outside.txt").write_text("".join(f"Secret {i}\n" for i in range(12)))
    manifest = os.path.join(folder, "campaign.toml")
    with open(manifest) as handle:
        text = handle.read()
    key = line.split(" = ")[0]
    lines = [row for row in text.splitlines() if not row.startswith(key + " =")]
    lines.insert(1, line)
    with open(manifest, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    with pytest.raises(CampaignFormatError) as caught:
        read_campaign(folder)
    assert message in str(caught.value)


def test_the_import_command_reports_errors_and_changes_nothing(app, tmp_path):
    folder = write_campaign(str(tmp_path / "c"))
    with open(os.path.join(folder, "systems", "B.txt"), "wb") as handle:
        handle.write("Ótput\n".encode("latin-1") * 12)
    before = db_snapshot()
    result = app.test_cli_runner().invoke(args=["campaign", "import", folder])
    assert result.exit_code != 0
    assert "systems/B.txt:1: invalid UTF-8" in result.output
    assert db_snapshot() == before


# --- forms and JSON endpoints ---------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | TEXT,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(TEXT, children, max_size=5),
    max_leaves=20,
)


@FUZZ
@given(body=st.one_of(
    JSON_VALUES,
    st.fixed_dictionaries({"token": JSON_VALUES, "choice": JSON_VALUES}),
    st.fixed_dictionaries({"token": TEXT, "choice": st.sampled_from(["left", "right", "equal"])}),
))
def test_the_judgment_api_answers_any_json_clearly(judging, body):
    client, token = judging
    before = db_snapshot()
    response = client.post("/c/test/api/judgment", json=body, headers={"X-CSRFToken": token})
    assert response.status_code in (200, 400)
    data = response.get_json()
    assert data["status"] in ("error", "stale")
    assert data["status"] != "error" or data["message"]
    assert db_snapshot() == before


@FUZZ
@given(raw=st.binary(max_size=2000), content_type=st.sampled_from(
    ["application/json", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
     "application/json; charset=latin-1", ""]))
def test_the_judgment_api_answers_any_bytes_clearly(judging, raw, content_type):
    client, token = judging
    before = db_snapshot()
    response = client.post("/c/test/api/judgment", data=raw, content_type=content_type,
                           headers={"X-CSRFToken": token})
    assert response.status_code == 400
    assert db_snapshot() == before


@pytest.fixture
def judging(app, make_campaign):
    make_campaign()
    client = app.test_client()
    register(client)
    token = csrf_token(client, "/c/test/welcome")
    assert client.get("/c/test/api/item").get_json()["item"]  # an item is being served
    return client, token


FORMS = {
    # endpoint: (who, url, fields)
    "register": ("anonymous", "/c/test/register", ["username", "real_name", "email", "password", "password2",
                                                   "age_group", "studies_level", "studies_field", "source_level",
                                                   "target_level", "consent", "website"]),
    "login": ("anonymous", "/login", ["email", "password", "remember"]),
    "reset request": ("anonymous", "/reset", ["email"]),
    "reset": ("anonymous", "/reset/{reset}", ["password", "password2"]),
    "join": ("other", "/c/test/join", ["source_level", "target_level", "consent"]),
    "evaluate": ("volunteer", "/c/test/evaluate", ["token", "choice"]),
    "language": ("volunteer", "/language", ["lang", "next"]),
    "status": ("organiser", "/organiser/c/test/status", ["status", "starts_at", "ends_at"]),
    "announce": ("organiser", "/organiser/c/test/announce", ["text"]),
    "commit": ("organiser", "/organiser/c/test/raffle/commit", ["seed_sha256", "beacon", "beacon_at"]),
    "draw": ("organiser", "/organiser/c/test/raffle/draw", ["seed", "beacon", "prizes"]),
    "notify": ("organiser", "/organiser/c/test/raffle/notify", ["prize", "note"]),
    "accounts": ("admin", "/organiser/accounts", ["role", "username", "email", "password"]),
    "give campaign": ("admin", "/organiser/c/test/organisers/add", ["username"]),
}
# Values that are malformed for every field they may land in: too long,
# control characters, markup, wrong types as text, or empty.
MALFORMED = st.one_of(
    st.just(""),
    st.text(min_size=501, max_size=3000),
    st.text(alphabet=st.characters(whitelist_categories=("Cc", "Cf", "Zl", "Zp")), min_size=1, max_size=40),
    st.sampled_from(["<script>alert(1)</script>", "' OR 1=1 --", "%00", "\u202e", "NaN", "-1", "9" * 400,
                     "2026-13-45T99:99", "../../etc/passwd", "{{7*7}}"]),
)


# Free text (an announcement) may hold markup or quotes (shown inert): there,
# malformed means empty, too long, control characters or nothing visible.
FREE_TEXT = {"text", "note"}
MALFORMED_TEXT = st.one_of(
    st.just(""),
    st.text(min_size=501, max_size=3000),
    st.text(alphabet=st.characters(whitelist_categories=("Cc", "Cf", "Zl", "Zp", "Zs")), min_size=1, max_size=40),
    st.builds(lambda a, b: a + "\x00" + b, TEXT, TEXT),
)
# A password may hold markup or quotes (it is only ever hashed): there,
# malformed means empty, shorter than 8 characters or longer than 200. (Two
# equal markup strings were a valid new password for the reset form.)
PASSWORDS = {"password", "password2"}
MALFORMED_PASSWORD = st.one_of(st.text(max_size=7), st.text(min_size=201, max_size=3000))
# An empty seed asks Bozka to make one (a valid request): always send a bad one.
ALWAYS_SENT = {"seed_sha256"}
NON_EMPTY = {"seed_sha256"}


@pytest.fixture
def form_clients(app, make_campaign):
    make_campaign()
    clients = {"anonymous": app.test_client(), "volunteer": app.test_client(), "organiser": app.test_client(),
               "other": app.test_client(), "admin": app.test_client()}
    register(clients["volunteer"])
    make_staff("organiser", "boss")
    make_staff("admin", "chief")
    make_staff("volunteer", "other")
    assert login(clients["organiser"], "boss@example.org").status_code == 302
    assert login(clients["admin"], "chief@example.org").status_code == 302
    assert login(clients["other"], "other@example.org").status_code == 302
    clients["volunteer"].get("/c/test/api/item")
    tokens = {who: csrf_token(client, "/c/test/instructions") for who, client in clients.items()}
    user = db.session.scalar(select(accounts.User).where(accounts.User.username == "ane"))
    reset = accounts.make_token(app.config["SECRET_KEY"], "reset", user)
    return clients, tokens, reset


@FUZZ
@given(name=st.sampled_from(sorted(FORMS)), data=st.data())
def test_every_form_refuses_malformed_input_and_changes_nothing(form_clients, name, data):
    clients, tokens, reset = form_clients
    who, url, fields = FORMS[name]
    # Every field malformed, or absent; extra unknown fields too.
    values = {}
    for field in fields:
        if field in ALWAYS_SENT or data.draw(st.booleans(), label="send " + field):
            strategy = MALFORMED_TEXT if field in FREE_TEXT else MALFORMED_PASSWORD if field in PASSWORDS else MALFORMED
            values[field] = data.draw(strategy.filter(lambda v, f=field: f not in NON_EMPTY or v.strip()), label=field)
    values.update(data.draw(st.dictionaries(st.sampled_from(["id", "role_id", "is_admin", "user_id"]), TEXT, max_size=2),
                            label="extra"))
    before = db_snapshot()
    response = clients[who].post(url.format(reset=reset), data={**values, "csrf_token": tokens[who]})
    assert response.status_code < 500
    if name != "language":  # "next" is followed, not stored; the language is only a cookie
        assert db_snapshot() == before, (name, values)
    assert "bozka_lang" not in response.headers.get("Set-Cookie", "")
    assert "Traceback" not in response.get_data(as_text=True)


def test_nul_characters_are_refused_before_any_query(app, client, make_campaign):
    """PostgreSQL refuses NUL in text: without this check, a NUL in a form
    field or a URL would be a 500 there (SQLite stores it)."""
    make_campaign()
    token = csrf_token(client, "/c/test/register")
    before = db_snapshot()
    for response in (
        client.get("/c/te%00st/"),
        client.get("/login?next=/%00"),
        client.post("/login", data={"csrf_token": token, "email": "a\x00@example.org", "password": "x"}),
        client.post("/c/test/register", data={"csrf_token": token, "username": "ane", "real_name": "A\x00ne"}),
    ):
        assert response.status_code == 400
        assert "could not be understood" in response.get_data(as_text=True)
    assert db_snapshot() == before
