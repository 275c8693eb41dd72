"""A pairwise campaign's controls file (``controls.tsv``, docs/campaign-format.md):
read by the importer (``read_controls``, through the protocol module), written
by the pool maker (``control_pool``)."""
from ...services.campaign_files import read_table, refuse_campaign_sentences
from ...services.format_error import CampaignFormatError
from .controls import IMPORTED, coverage_controls, pool_warning

CONTROL_HEADER = ["source", "better", "worse"]


def read_file(folder, name, sources, source_file):
    """(the file as shown in errors, its controls): none may be a sentence of
    the campaign (the volunteer would meet it twice, and tell the control)."""
    display, rows = read_table(folder, name, "controls", CONTROL_HEADER)
    refuse_campaign_sentences(
        display, enumerate((row[0] for row in rows), start=2), sources, source_file,
        "a volunteer would see it twice and tell the control; take controls from other sentences "
        "(flask campaign controls makes them from held-out ones)",
    )
    return display, rows


def read_controls(folder, name, settings, sources, source_file):
    """(the file as shown in errors or None, its controls, warnings about the
    pool) of a campaign whose manifest names ``name`` (None: it names none).
    Generated controls need no file; one given is their fallback, of any size."""
    if settings["control_source"] != IMPORTED:
        controls_file, controls = read_file(folder, name, sources, source_file) if name is not None else (None, [])
        return controls_file, controls, []
    if name is None:
        raise CampaignFormatError("campaign.toml", None, "'controls' is required (str)")
    controls_file, controls = read_file(folder, name, sources, source_file)
    covered, needed = coverage_controls(settings, len(sources))
    per_volunteer = settings["controls_per_volunteer"]
    if per_volunteer > len(controls):
        raise CampaignFormatError(
            "campaign.toml", None, f"controls_per_volunteer is {per_volunteer}, but {controls_file} has {len(controls)}"
        )
    if 0 < per_volunteer < needed:
        raise CampaignFormatError(
            "campaign.toml",
            None,
            f"controls_per_volunteer must be 0 or at least {needed}, so that a volunteer can judge {covered} "
            "sentences without seeing a control twice",
        )
    if len(controls) < needed:
        raise CampaignFormatError(
            controls_file,
            None,
            f"too few controls: {len(controls)} for {len(sources)} sentences; at least {needed} "
            f"are needed so that a volunteer can judge {covered} "
            "sentences without seeing a control twice",
        )
    small_pool = pool_warning(len(controls), per_volunteer, settings["expected_volunteers"])
    return controls_file, controls, [f"{controls_file}: {small_pool}"] if small_pool else []
