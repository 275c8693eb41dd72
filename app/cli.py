"""Command-line entry points: ``flask campaign ...``, ``flask user ...``, ``flask demo``."""
import os
import secrets
import sys
import tomllib

import click
from flask import current_app
from flask.cli import AppGroup
from sqlalchemy import select

from . import protocols
from .cli_plural import counted
from .extensions import db
from .models import ROLES, Campaign, User, utcnow
from .services import accounts, export, importer, organisers
from .services.campaign_writer import import_in_batches
from .services.importer import CampaignFormatError, read_campaign

DEMO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo")
DEMO_ORGANISER = ("organiser@bozka.test", "organiser")
DEMO_SEEDS = "demo-raffle-seeds.txt"  # in the instance folder: each demo raffle's secret seed

campaign_cli = AppGroup("campaign", help="Campaigns.")
user_cli = AppGroup("user", help="Accounts.")


def import_campaign(path, dry_run=False, status="draft", organiser_names=()):
    """Validate (and unless dry_run, write) one campaign folder, as a draft
    (``lifecycle``: it opens once its raffle is committed); the organisers
    named are given it."""
    people = [_organiser(name) for name in organiser_names]
    spec = read_campaign(path, interface_languages=current_app.config["LANGUAGES"])
    if dry_run:
        return spec, None
    campaign_id = import_in_batches(spec, status=status, batch=current_app.config["BOZKA_IMPORT_BATCH"])
    campaign = db.session.get(Campaign, campaign_id)
    for person in people:
        organisers.give(campaign, person)
    _audit("campaign.import", campaign.slug, status=status, organisers=[person.username for person in people])
    db.session.commit()
    return spec, campaign


_WHEN = click.DateTime(["%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M"])


def opening_options(command):
    """The options that open a campaign, publishing its raffle's commitment
    in the same step when it has none (``flask campaign open``, ``import --open``)."""
    for option in reversed([
        click.option("--starts-at", type=_WHEN, help="Open to volunteers from then (UTC); at once without it."),
        click.option("--ends-at", type=_WHEN, help="The campaign's end (UTC): the time of the raffle's draw."),
        click.option("--beacon", help="The public draw or beacon whose value the raffle's draw will use."),
        click.option("--beacon-at", type=_WHEN, help="When the beacon's value is published (UTC, after the end)."),
        click.option("--sha256", help="SHA-256 of your own secret seed; without it a seed is made and shown once."),
    ]):
        command = option(command)
    return command


def set_schedule(campaign, status, starts_at, ends_at, commitment=None):
    """``lifecycle.set_schedule`` from the command line, audited, committed;
    a refusal is the command's error and changes nothing."""
    from .services import lifecycle

    try:
        lifecycle.set_schedule(campaign, status, starts_at, ends_at, utcnow(), commitment=commitment)
        if commitment:
            sha256, beacon, beacon_at = commitment
            _audit("raffle.commit", campaign.slug, sha256=sha256, beacon=beacon, beacon_at=str(beacon_at))
        _audit("campaign.status", campaign.slug, status=campaign.status, starts_at=str(campaign.starts_at or ""),
               ends_at=str(campaign.ends_at or ""))
        db.session.commit()
    except lifecycle.Refused as exc:
        db.session.rollback()
        raise click.ClickException(str(exc)) from None


def open_campaign(campaign, starts_at, ends_at, beacon, beacon_at, sha256):
    """Open ``campaign``: with no commitment yet, publish one first (a seed
    made here unless ``sha256`` is given, shown once). Commits."""
    from .services import raffle

    ends_at = ends_at or campaign.ends_at
    seed, commitment = None, None
    if raffle.commitment(campaign) is None:
        if not beacon or beacon_at is None:
            raise click.ClickException(
                "a campaign opens with its raffle's commitment: give --ends-at, --beacon and --beacon-at "
                "(docs/raffle.md), or publish it first on the dashboard or with flask raffle commit")
        seed = None if sha256 else raffle.new_seed()
        commitment = (sha256 or raffle.sha256_hex(seed), beacon, beacon_at)
    set_schedule(campaign, "open", starts_at, ends_at, commitment)
    if seed:
        click.echo(f"Secret seed of the raffle (keep it safe, it is not stored): {seed}")
    when = f"from {starts_at:%Y-%m-%d %H:%M} UTC" if starts_at else "now"
    click.echo(f"{campaign.slug} is open {when} until {campaign.ends_at:%Y-%m-%d %H:%M} UTC.")


def _organiser(username):
    user = db.session.scalar(select(User).where(User.username == username.strip()))
    if user is None or user.role != "organiser":
        raise click.ClickException(f"no organiser account {username!r} (an admin manages every campaign already)")
    return user


def controls_said(spec):
    """The controls the import names: generated for each volunteer (the
    default ``control_source``) unless the folder's own are used."""
    if not protocols.PROTOCOLS[spec.protocol].generates_controls(spec.settings):
        return counted(len(spec.controls), "control")
    fallback = f" ({counted(len(spec.controls), 'control')} as their fallback)" if spec.controls else ""
    return "controls generated for each volunteer" + fallback


@campaign_cli.command("import")
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--dry-run", is_flag=True, help="Only validate; write nothing.")
@click.option("--organiser", "organiser_names", multiple=True, metavar="USERNAME",
              help="An organiser who manages the campaign (repeat for more; admins manage every campaign).")
@click.option("--open", "open_now", is_flag=True, help="Open it too, as flask campaign open does (its options below).")
@opening_options
def import_command(path, dry_run, organiser_names, open_now, **opening):
    """Import a campaign folder (see docs/campaign-format.md) as a draft."""
    try:
        spec, campaign = import_campaign(path, dry_run, "draft", organiser_names)
    except CampaignFormatError as exc:
        raise click.ClickException(f"{os.path.join(path, '')}{exc}") from None
    verb = "Valid" if dry_run else "Imported" if open_now else "Imported as a draft"
    if protocols.PROTOCOLS[spec.protocol].USES_CONTROLS:
        pairs = len(spec.systems) * (len(spec.systems) - 1) // 2
        units = f"({counted(pairs, 'pair')}), {controls_said(spec)}" + (
            f", {counted(len(spec.practice), 'practice item')}" if spec.practice else "")
    else:  # one translation scored at a time, with its own quality control
        units = f"({counted(len(spec.sources) * len(spec.systems), 'translation')} to score)"
    click.echo(f"{verb}: {spec.slug}: {counted(len(spec.sources), 'sentence')}, "
               f"{counted(len(spec.systems), 'system')} {units}.")
    if spec.texts:
        click.echo(f"Texts also in: {', '.join(spec.texts)}.")
    for warning in spec.warnings:
        click.echo(f"Warning: {warning}")
    if campaign is not None and open_now:
        open_campaign(campaign, **opening)
    elif campaign is not None:
        click.echo(f"Next: flask campaign open {spec.slug} --ends-at ... --beacon ... --beacon-at ... "
                   "(or the dashboard): it opens with its raffle's commitment.")


@campaign_cli.command("open")
@click.argument("slug")
@opening_options
def open_command(slug, **opening):
    """Open a campaign to volunteers, publishing its raffle's commitment in
    the same step if it has none (a campaign never opens without one)."""
    open_campaign(_campaign(slug), **opening)


@campaign_cli.command("close")
@click.argument("slug")
def close_command(slug):
    """Close a campaign: nothing more is served, and its raffle's ticket list freezes."""
    campaign = _campaign(slug)
    set_schedule(campaign, "closed", campaign.starts_at, campaign.ends_at)
    click.echo(f"{campaign.slug} is closed.")


@campaign_cli.command("controls")
@click.argument("folder", type=click.Path(file_okay=False))
@click.argument("held_out", type=click.Path(dir_okay=False))
@click.option("--dry-run", is_flag=True, help="Show a few controls and how many would be made; write nothing.")
@click.option("--better", type=click.Choice(["reference", "output"]), default="reference", show_default=True,
              help="The known-better side: the reference, or the held-out file's output column.")
@click.option("--output", "-o", type=click.Path(dir_okay=False),
              help="The file to write (default: the campaign's controls file, or controls.tsv in FOLDER).")
@click.option("--replace", is_flag=True, help="Overwrite the file if it exists.")
@click.option("--show", default=3, show_default=True, help="Controls shown in the preview.")
@click.option("--seed", type=int, help="Make the same controls again (default: random).")
def controls_command(folder, held_out, dry_run, better, output, replace, show, seed):
    """Make a pairwise campaign's pool of controls from HELD_OUT, a TSV of
    source and reference of sentences that are not in the campaign in
    FOLDER (see docs/campaign-format.md)."""
    import random

    try:
        manifest, protocol, settings, source_file, sources = importer.read_sources(folder)
    except CampaignFormatError as exc:
        raise click.ClickException(f"{os.path.join(folder, '')}{exc}") from None
    if not protocol.USES_CONTROLS:
        raise click.ClickException(f"a {protocol.NAME} campaign makes its own quality control; it takes no controls")
    control_pool = protocol.CONTROL_POOL
    try:
        rows = control_pool.read_held_out(held_out, use_output=better == "output")
        control_pool.refuse_campaign_sentences(held_out, rows, sources, os.path.join(folder, source_file))
        path, named = control_pool.controls_path(folder, manifest)
    except CampaignFormatError as exc:
        raise click.ClickException(str(exc)) from None
    path = output or path
    if os.path.exists(path) and not replace and not dry_run:
        raise click.ClickException(f"{path} exists; nothing written (--replace overwrites it)")
    controls, skipped = control_pool.make_pool(rows, random.Random(seed), use_output=better == "output")
    needed, advice = control_pool.pool_advice(settings, len(sources))
    click.echo(f"{held_out}: {counted(len(rows), 'sentence')}: {counted(len(controls), 'control')}"
               + (" would be made." if dry_run else " made.")
               + (f" {len(skipped)} skipped:" if skipped else ""))
    for line, why in skipped[:10]:
        click.echo(f"  line {line}: {why}")
    if len(skipped) > 10:
        click.echo(f"  ... and {len(skipped) - 10} more")
    click.echo(advice)
    if len(controls) < needed:
        are = "is" if len(controls) == 1 else "are"
        click.echo(f"Warning: {counted(len(controls), 'control')} {are} fewer than the {needed} needed: "
                   "add held-out sentences.")
    if dry_run:
        for source, good, bad in controls[:show]:
            click.echo(f"\n  source: {source}\n  better: {good}\n  worse:  {bad}")
        exists = ", which exists: add --replace" if os.path.exists(path) and not replace else ""
        click.echo(f"\nDry run: nothing written (would write {path}{exists}).")
        return
    if not controls:
        raise click.ClickException("no control could be made; nothing written")
    control_pool.write_controls(path, controls)
    click.echo(f"Wrote {counted(len(controls), 'control')} to {path}.")
    if not output and not named:
        click.echo('Name it in campaign.toml: controls = "controls.tsv"')


@campaign_cli.command("settings")
@click.argument("slug")
@click.argument("changes", nargs=-1)
def settings_command(slug, changes):
    """Show a campaign's settings, or change live ones: NAME=VALUE ..."""
    campaign = _campaign(slug)
    if changes:
        raw = {}
        for change in changes:
            name, sep, value = change.partition("=")
            try:
                raw[name.strip()] = tomllib.loads(f"v = {value.strip()}")["v"] if sep else None
            except tomllib.TOMLDecodeError:
                raise click.ClickException(f"{change!r}: a value must be a number or a quoted string") from None
        try:
            importer.change_settings(campaign, raw)
        except importer.CampaignFormatError as exc:
            raise click.ClickException(exc.message) from None
        _audit("campaign.settings", campaign.slug, changes=raw)
        db.session.commit()
    click.echo(f"protocol = {campaign.protocol}")
    for name, value, live in importer.settings_of(campaign):
        click.echo(f"{name} = {value}{' (may change while the campaign runs)' if live else ''}")


@campaign_cli.command("list")
def list_command():
    """Each campaign: slug, protocol, where it stands (draft, ready, scheduled, open, closed, drawn), judgments."""
    from .services import lifecycle

    campaigns = db.session.scalars(select(Campaign).order_by(Campaign.id)).all()
    stages = lifecycle.stages(campaigns, utcnow())
    for campaign in campaigns:
        click.echo(
            f"{campaign.slug}\t{campaign.protocol}\t{stages[campaign.id]}\t{campaign.collected_judgments}/"
            f"{campaign.target_judgments} judgments"
        )


def ask_password(label):
    """Prompt for a password twice; without a terminal (a script, a pipe)
    getpass would fall back to echoing it, so refuse instead."""
    if not sys.stdin.isatty():
        raise click.ClickException("no terminal to ask the password: give --password")
    return click.prompt(label, hide_input=True, confirmation_prompt=True)


@user_cli.command("create")
@click.option("--role", type=click.Choice(ROLES), required=True)
@click.option("--email", required=True)
@click.option("--username", required=True)
@click.option("--password", help="Asked for when not given.")
def create_user_command(role, email, username, password):
    """Create an account (organisers and researchers are confirmed at once)."""
    password = password if password is not None else ask_password("Password")
    from .services.security import password_problem

    problem = password_problem(password, username, email)
    if problem:
        raise click.ClickException(
            {"short": "the password must have at least 8 characters",
             "common": "this password is too common",
             "personal": "do not use the username or email as the password"}[problem]
        )
    import re

    from .auth.forms import USERNAME_PROBLEMS, USERNAME_RE
    from .services import names

    username = names.normalise(username)  # as the forms store it (NFKC)
    problem = accounts.username_problem(username)  # "invisible" first: a filler is a letter to the pattern
    if problem is None and not (3 <= len(username) <= 40 and re.match(USERNAME_RE, username)):
        raise click.ClickException("the username: 3 to 40 letters, digits, '.', '-' or '_'")
    if accounts.account_for(email) is not None:
        raise click.ClickException(f"an account with email {email} (or another address of its mailbox) exists")
    if problem:
        raise click.ClickException(str(USERNAME_PROBLEMS[problem]))
    user = accounts.create_user(email, username, password, role=role)
    if role != "volunteer":
        user.email_confirmed_at = utcnow()
    _audit("account.create", user.username, role=role)
    db.session.commit()
    click.echo(f"Created {role} {username} <{user.email}>.")


@user_cli.command("role")
@click.argument("email")
@click.argument("role", type=click.Choice(ROLES))
def role_command(email, role):
    """Give an account another role (admin: manages every campaign and its organisers)."""
    user = db.session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None:
        raise click.ClickException(f"no account with email {email}")
    user.role = role
    if role != "volunteer" and user.email_confirmed_at is None:
        user.email_confirmed_at = utcnow()
    _audit("account.role", user.username, role=role)
    db.session.commit()
    click.echo(f"{user.username} <{user.email}> is now {role}.")


organisers_cli = AppGroup("organisers", help="Who manages a campaign (admins manage every one).")
campaign_cli.add_command(organisers_cli)


@organisers_cli.command("list")
@click.argument("slug")
def organisers_list_command(slug):
    """The organisers given the campaign."""
    for user in organisers.organisers_of(_campaign(slug)):
        click.echo(f"{user.username}\t{user.email}")


@organisers_cli.command("add")
@click.argument("slug")
@click.argument("username")
def organisers_add_command(slug, username):
    """Give the campaign to an organiser."""
    campaign, user = _campaign(slug), _organiser(username)
    done = organisers.give(campaign, user)
    if done:
        _audit("campaign.organiser_add", campaign.slug, username=user.username)
    db.session.commit()
    click.echo(f"{user.username} {'now manages' if done else 'already managed'} {campaign.slug}.")


@organisers_cli.command("remove")
@click.argument("slug")
@click.argument("username")
def organisers_remove_command(slug, username):
    """Take the campaign away from an organiser."""
    campaign = _campaign(slug)
    user = db.session.scalar(select(User).where(User.username == username.strip()))
    if user is None or not organisers.take(campaign, user):
        raise click.ClickException(f"{username!r} does not manage {slug}")
    _audit("campaign.organiser_remove", campaign.slug, username=user.username)
    db.session.commit()
    click.echo(f"{user.username} no longer manages {campaign.slug}.")


@user_cli.command("password")
@click.argument("email")
@click.option("--password", help="Asked for when not given.")
def password_command(email, password):
    """Set a new password for an account (its other sessions are logged out)."""
    user = db.session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None:
        raise click.ClickException(f"no account with email {email}")
    password = password if password is not None else ask_password("New password")
    from .services.security import password_problem

    if password_problem(password, user.username, user.email):
        raise click.ClickException("this password is too short, too common or personal (docs/security.md)")
    user.set_password(password)
    _audit("account.password", user.username)
    db.session.commit()
    from . import realtime

    # Reaches the servers through the message queue, when there is one; every
    # server also finds the new password at its ticker's next look (socket_accounts).
    realtime.disconnect_user(user.id)
    click.echo(f"New password set for {user.username} <{user.email}>.")


def _open_demo(campaign):
    """Open a demo campaign for 30 days, its raffle committed in the same
    step (as every campaign opens); the seed is kept in the instance folder
    (``DEMO_SEEDS``) for the demo organiser's draw."""
    from datetime import timedelta

    from .services import lifecycle, raffle

    now = utcnow().replace(second=0, microsecond=0)
    ends_at = now + timedelta(days=30)
    beacon_at = ends_at + timedelta(hours=1)
    seed = raffle.new_seed()
    beacon = f"drand quicknet (League of Entropy): the randomness of its first round after {beacon_at:%Y-%m-%d %H:%M}"
    lifecycle.set_schedule(campaign, "open", None, ends_at, utcnow(),
                           commitment=(raffle.sha256_hex(seed), beacon + " UTC", beacon_at))
    os.makedirs(current_app.instance_path, exist_ok=True)
    with open(os.path.join(current_app.instance_path, DEMO_SEEDS), "a", encoding="utf-8") as seeds:
        seeds.write(f"{campaign.slug}\t{seed}\n")


def load_demo(drafts=()):
    """Import every demo campaign that is not there yet, open (those whose
    slug is in ``drafts`` stay drafts); make a demo organiser.

    Returns the organiser's password when the account was created now.
    """
    for name in sorted(os.listdir(DEMO_DIR)):
        folder = os.path.join(DEMO_DIR, name)
        spec = read_campaign(folder)
        if not db.session.scalar(select(Campaign.id).where(Campaign.slug == spec.slug)):
            campaign_id = import_in_batches(spec, status="draft", batch=current_app.config["BOZKA_IMPORT_BATCH"])
            if spec.slug not in drafts:
                _open_demo(db.session.get(Campaign, campaign_id))
            click.echo(f"Loaded demo campaign {spec.slug}.")
    email, username = DEMO_ORGANISER
    user = db.session.scalar(select(User).where(User.email == email))
    password = None
    if user is None:
        password = secrets.token_urlsafe(9)
        user = accounts.create_user(email, username, password, role="organiser")
        user.email_confirmed_at = utcnow()
    if user.role == "organiser":  # the demo organiser manages the demo campaigns
        for name in sorted(os.listdir(DEMO_DIR)):
            slug = read_campaign(os.path.join(DEMO_DIR, name)).slug
            organisers.give(db.session.scalar(select(Campaign).where(Campaign.slug == slug)), user)
    db.session.commit()
    return password


def register(app):
    app.cli.add_command(campaign_cli)
    app.cli.add_command(user_cli)
    app.cli.add_command(export_command)
    app.cli.add_command(raffle_cli)
    app.cli.add_command(translate_cli)
    app.cli.add_command(backup_command)
    app.cli.add_command(restore_command)

    @app.cli.command("demo")
    @click.option("--url", default="http://127.0.0.1:5000", show_default=True,
                  help="The address the site will be served at (make run passes its HOST and PORT).")
    @click.option("--draft", "drafts", multiple=True, metavar="SLUG",
                  help="Leave this demo campaign a draft, to walk its lifecycle on the dashboard (repeat for more).")
    def demo_command(url, drafts):
        """Load the demo campaigns and a demo organiser, and say how to log in."""
        password = load_demo(drafts)
        email = DEMO_ORGANISER[0]
        click.echo("")
        click.echo(f"Bozka is ready: {url}")
        click.echo("  Volunteers: open the address and register.")
        # The password is shown here once and kept nowhere in plain text.
        if password:
            click.echo(f"  Demo organiser: {email} / {password}  ({url}/organiser/)")
            click.echo("  (shown only now: note it down)")
        else:
            click.echo(f"  Demo organiser: {email} (password shown when it was made)")
        click.echo(f"  A new password: flask --app wsgi user password {email}")
        click.echo(f"  The demo raffles' secret seeds, for their draws: {os.path.join(app.instance_path, DEMO_SEEDS)}")
        # Older versions wrote the password to this file: it must not stay.
        saved = os.path.join(app.instance_path, "demo-organiser.txt")
        if os.path.exists(saved):
            os.remove(saved)
            click.echo(f"  Removed {saved}, which held the password in plain text.")
        click.echo("")


export_cli = AppGroup("export", help="Research exports.")
raffle_cli = AppGroup("raffle", help="The auditable raffle.")


def _campaign(slug):
    campaign = db.session.scalar(select(Campaign).where(Campaign.slug == slug))
    if campaign is None:
        raise click.ClickException(f"no campaign {slug!r}")
    return campaign


@click.command("export")
@click.argument("kind", type=click.Choice(export.KINDS))
@click.argument("slug")
@click.option("--format", "fmt", type=click.Choice(export.FORMATS),
              help="csv or jsonl; wmt-da is tsv (default: the export's first format).")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="A file (default: standard output).")
def export_command(kind, slug, fmt, output):
    """Stream an export of a campaign (see docs/export-format.md); a campaign
    offers the exports of its protocol."""
    campaign = _campaign(slug)
    fmt = fmt or export.EXPORTS[kind].formats[0]
    try:
        export.check(campaign, kind, fmt)
    except export.ExportError as exc:
        raise click.ClickException(str(exc)) from None
    handle = open(output, "w", encoding="utf-8", newline="") if output else sys.stdout
    try:
        for chunk in export.stream(export.source(campaign), kind, fmt, db.engine):
            handle.write(chunk)
    finally:
        if output:
            handle.close()


@raffle_cli.command("commit")
@click.argument("slug")
@click.option("--sha256", help="SHA-256 of your own secret seed; without it a seed is made and shown once.")
@click.option("--beacon", required=True, help="The public draw or beacon whose value the draw will use.")
@click.option("--beacon-at", type=_WHEN, required=True, help="When its value is published (UTC, after the end).")
def raffle_commit_command(slug, sha256, beacon, beacon_at):
    """Publish the SHA-256 of the secret seed and name the beacon (before the
    first ticket; the campaign's end, which must be set, becomes the time of
    the draw, and the beacon's value must come out after it)."""
    from .services import raffle

    campaign = _campaign(slug)
    seed = None if sha256 else raffle.new_seed()
    try:
        record = raffle.commit(campaign, sha256 or raffle.sha256_hex(seed), beacon=beacon, beacon_at=beacon_at)
        _audit("raffle.commit", campaign.slug, sha256=record.seed_sha256, beacon=record.beacon,
               beacon_at=str(record.beacon_at))
        db.session.commit()
    except raffle.RaffleError as exc:
        raise click.ClickException(str(exc)) from None
    if seed:
        click.echo(f"Secret seed (keep it safe, it is not stored): {seed}")
    click.echo(f"Published SHA-256: {sha256 or raffle.sha256_hex(seed)}")
    click.echo(f"Time of the draw (UTC, the campaign's end): {record.draw_at:%Y-%m-%d %H:%M}")
    click.echo(f"Beacon: {record.beacon}, published at {record.beacon_at:%Y-%m-%d %H:%M:%S} UTC")


@raffle_cli.command("beacon")
@click.argument("slug")
@click.option("--beacon", required=True, help="The public draw or beacon whose value the draw will use.")
@click.option("--beacon-at", type=_WHEN, required=True, help="When its value is published (UTC, after the end).")
def raffle_beacon_command(slug, beacon, beacon_at):
    """Name the beacon of a commitment published before beacons were
    required (while the campaign is open)."""
    from .services import raffle

    try:
        record = raffle.name_beacon(_campaign(slug), beacon, beacon_at)
        _audit("raffle.beacon", slug, beacon=record.beacon, beacon_at=str(record.beacon_at))
        db.session.commit()
    except raffle.RaffleError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Beacon: {record.beacon}, published at {record.beacon_at:%Y-%m-%d %H:%M:%S} UTC")


@raffle_cli.command("draw")
@click.argument("slug")
@click.option("--seed", required=True)
@click.option("--beacon", required=True, help="The beacon's value, exactly as it was published.")
@click.option("--prizes", type=int, default=1, show_default=True)
def raffle_draw_command(slug, seed, beacon, prizes):
    """Reveal the seed, give the beacon's value and draw the winners (once
    the campaign has closed and the beacon's value is out)."""
    from .services import raffle

    campaign = _campaign(slug)
    try:
        record = raffle.draw(campaign, seed, prizes, beacon=beacon)
        _audit("raffle.draw", campaign.slug, prizes=record.prizes, beacon=record.beacon_value, winners=record.winners)
        db.session.commit()
    except raffle.RaffleError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"{counted(len(record.tickets), 'eligible ticket')}, list SHA-256 {record.tickets_sha256}")
    for winner in record.winners:
        click.echo(f"prize {winner['prize']}: ticket {winner['ticket']} ({winner['volunteer']})")


@raffle_cli.command("tickets")
@click.argument("slug")
def raffle_tickets_command(slug):
    """Print the published ticket list (CSV)."""
    from .services import raffle

    click.echo("ticket,volunteer")
    for number, holder in raffle.published_tickets(_campaign(slug)):
        click.echo(f"{number},{holder}")


translate_cli = AppGroup("translate", help="Interface translations (docs/translating.md).")
ROOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRANSLATIONS = os.path.join(ROOT_DIR, "translations")
POT = os.path.join(TRANSLATIONS, "messages.pot")


def _pybabel(*args):
    from babel.messages.frontend import CommandLineInterface

    CommandLineInterface().run(["pybabel", "-q", *args])


@translate_cli.command("extract")
def translate_extract():
    """Collect every interface string into translations/messages.pot."""
    _pybabel("extract", "-F", os.path.join(ROOT_DIR, "babel.cfg"), "-k", "_l", "--no-location",
             "--sort-output", "--project", "Bozka", "-o", POT, ROOT_DIR)


@translate_cli.command("init")
@click.argument("language")
def translate_init(language):
    """Start a new language: translations/LANGUAGE/LC_MESSAGES/messages.po."""
    translate_extract.callback()
    _pybabel("init", "-i", POT, "-d", TRANSLATIONS, "-l", language)
    click.echo(f"Now translate translations/{language}/LC_MESSAGES/messages.po")


@translate_cli.command("update")
def translate_update():
    """Merge new and changed strings into every language's catalogue."""
    translate_extract.callback()
    _pybabel("update", "-i", POT, "-d", TRANSLATIONS, "--no-fuzzy-matching")


@translate_cli.command("compile")
def translate_compile():
    """Build the binary catalogues (.mo) the site reads."""
    _pybabel("compile", "-d", TRANSLATIONS)


@click.command("backup")
@click.argument("path", required=False, type=click.Path(dir_okay=False))
def backup_command(path):
    """Copy the SQLite database while the site runs (online backup).

    PostgreSQL: use pg_dump (docs/security.md).
    """
    from .services import backup

    url = db.engine.url
    if url.get_backend_name() != "sqlite":
        raise click.ClickException("this database is not SQLite: back it up with pg_dump (docs/security.md)")
    target = backup.backup_sqlite(url.database, path or backup.default_path(current_app.instance_path))
    click.echo(f"Backed up to {target}")


@click.command("restore")
@click.argument("path", type=click.Path(dir_okay=False, exists=True))
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def restore_command(path, yes):
    """Replace the SQLite database with a backup (stop the server first:
    refused while one runs)."""
    from . import serverlock
    from .services import backup

    url = db.engine.url
    if url.get_backend_name() != "sqlite":
        raise click.ClickException("this database is not SQLite: restore it with pg_restore or psql")
    if serverlock.sqlite_file(url) is None:
        raise click.ClickException(f"{url.database or 'this database'} is not a SQLite database file")
    db.engine.dispose()
    try:
        # The lock of the database itself, whatever the instance folder; held
        # until restored, so no server starts on it meanwhile.
        with serverlock.exclusive(url.database):
            if not yes:
                click.confirm(f"Replace {url.database} with {path}?", abort=True)
            backup.restore_sqlite(path, url.database)
    except serverlock.ServerRunning as exc:
        raise click.ClickException(server_running_message(exc)) from None
    except backup.BackupError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"Restored {url.database} from {path}")


def server_running_message(exc):
    pids = ", ".join(str(pid) for pid in exc.pids)
    return (
        "a server is using this database, so nothing was restored: every server process holds a shared "
        f"lock on {exc.path}{f' (held by process {pids})' if pids else ''}, beside the database, whatever "
        "its instance folder, and the lock is not free.\n"
        "Stop the server first (Ctrl+C where `make run` runs; `systemctl stop 'bozka@*'` for the "
        "deployed processes; or `kill` the gunicorn master), run flask restore again, then start the "
        "server (docs/deployment.md, \"Restoring a SQLite backup\")."
    )


def _audit(action, target, **details):
    """Record a command's change in the audit log, in its transaction: the
    actor is the command line and the system user (``audit_command``)."""
    from .services.security import audit_command

    audit_command(action, target, **details)
