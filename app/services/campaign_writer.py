"""Writing a validated campaign (``importer.read_campaign``'s ``CampaignSpec``)
to the database: ``create_campaign`` in the caller's transaction (tests,
benchmarks); ``import_in_batches`` (``flask campaign import``, the demo)
commits every few hundred sentences, so a running site keeps writing
judgments between the batches.
"""
import random
import time

from sqlalchemy import delete, select, update

from .. import protocols
from ..database import MAX_PAUSE, while_busy
from ..extensions import db
from ..models import Campaign, Control, Output, PracticeItem, Sentence, Slot, System
from . import totals
from .importer import CampaignFormatError

# Seconds between an import's batches: longer than a waiting request's
# pause between attempts, so every request waiting for the lock gets it.
BATCH_GAP = MAX_PAUSE + 0.05


def create_campaign(spec, status="open"):
    """Write a validated campaign in the caller's transaction."""
    campaign, systems = campaign_row(spec, status)
    total = write_sentences(spec, campaign.id, systems, range(len(spec.sources)), units_rng(spec))
    campaign.target_judgments = total
    db.session.flush()
    return campaign


def import_in_batches(spec, status="open", batch=500):
    """Write a validated campaign, committing every ``batch`` sentences, so
    that the site's judgments are written between the batches (SQLite has
    one writer at a time). A busy database delays a batch (``while_busy``).
    The campaign stays a draft, which volunteers do not see, until the last
    batch; if a batch fails, what was written is removed and the error raised.
    Returns the campaign's id."""
    def first():
        campaign, systems = campaign_row(spec, "draft")
        db.session.commit()
        return campaign.id, [system.id for system in systems]

    campaign_id, system_ids = while_busy(first)
    try:
        rng, total = units_rng(spec), 0
        for start in range(0, len(spec.sources), batch):
            state = rng.getstate()

            def write(start=start, state=state):
                rng.setstate(state)  # a batch tried again makes the same units
                written = write_sentences(spec, campaign_id, system_ids, range(start, min(start + batch, len(spec.sources))), rng)
                db.session.commit()
                return written

            total += while_busy(write)
            time.sleep(BATCH_GAP)

        def last():
            db.session.execute(update(Campaign).where(Campaign.id == campaign_id).values(target_judgments=total, status=status))
            db.session.commit()

        while_busy(last)
    except BaseException:
        db.session.rollback()
        while_busy(lambda: remove_unopened(campaign_id))
        raise
    return campaign_id


def remove_unopened(campaign_id):
    """Delete a campaign that was never opened (no volunteer's rows) and commit."""
    sentences = select(Sentence.id).where(Sentence.campaign_id == campaign_id).scalar_subquery()
    totals.remove(campaign_id)
    for statement in (
        delete(Slot).where(Slot.sentence_id.in_(sentences)),
        delete(Output).where(Output.sentence_id.in_(sentences)),
        delete(Sentence).where(Sentence.campaign_id == campaign_id),
        delete(Control).where(Control.campaign_id == campaign_id),
        delete(PracticeItem).where(PracticeItem.campaign_id == campaign_id),
        delete(System).where(System.campaign_id == campaign_id),
        delete(Campaign).where(Campaign.id == campaign_id),
    ):
        db.session.execute(statement)
    db.session.commit()


def units_rng(spec):
    return random.Random(f"{spec.slug}:units")  # the same folder makes the same campaign


def campaign_row(spec, status):
    """Add the campaign, its systems, controls and practice items; flush."""
    if db.session.query(Campaign.id).filter_by(slug=spec.slug).first():
        raise CampaignFormatError("campaign.toml", None, f"a campaign '{spec.slug}' already exists")
    campaign = Campaign(
        slug=spec.slug,
        name=spec.name,
        description=spec.description,
        instructions=spec.instructions,
        texts=spec.texts or None,
        source_language=spec.source_language,
        target_language=spec.target_language,
        interface_language=spec.interface_language,
        protocol=spec.protocol,
        status=status,
        **spec.settings,
    )
    db.session.add(campaign)
    db.session.flush()
    systems = []
    for position, name in enumerate(spec.systems):
        system = System(campaign_id=campaign.id, name=name, position=position)
        db.session.add(system)
        systems.append(system)
    for number, (source, better, worse) in enumerate(spec.controls, start=1):
        db.session.add(
            Control(campaign_id=campaign.id, number=number, source=source, better=better, worse=worse)
        )
    # An ESA practice item has its known errors last (as the importer reads practice.tsv).
    for number, (source, better, worse, why, why_texts, *spans) in enumerate(spec.practice, start=1):
        db.session.add(PracticeItem(campaign_id=campaign.id, number=number, source=source, better=better,
                                    worse=worse, why=why, why_texts=why_texts or None,
                                    spans=spans[0] if spans else None))
    db.session.flush()
    return campaign, systems


def write_sentences(spec, campaign_id, systems, indexes, rng):
    """Add the sentences of ``indexes`` with their outputs and units; flush.
    ``systems``: rows or ids, in manifest order. Returns the judgments they hold."""
    system_ids = [getattr(system, "id", system) for system in systems]
    target = spec.settings["judgments_per_pair"]
    protocol = protocols.PROTOCOLS[spec.protocol]
    total, all_slots, capacities = 0, [], []
    for index in indexes:
        sentence = Sentence(
            campaign_id=campaign_id,
            number=index + 1,
            source=spec.sources[index],
            reference=spec.references[index] if spec.references else None,
            document=spec.documents[index][0] if spec.documents else None,
            domain=spec.documents[index][1] if spec.documents else None,
            capacity=0,
        )
        db.session.add(sentence)
        db.session.flush()
        outputs = []
        for system_id, name in zip(system_ids, spec.systems):
            output = Output(sentence_id=sentence.id, system_id=system_id, text=spec.outputs[name][index])
            db.session.add(output)
            outputs.append(output)
        slots = protocol.units(sentence.id, outputs, target, settings=spec.settings, rng=rng)
        db.session.add_all(slots)
        capacity = sum(slot.target for slot in slots)
        sentence.capacity = capacity
        sentence.is_open = capacity > 0
        total += capacity
        all_slots += slots
        capacities.append(capacity)
    db.session.flush()
    totals.add_imported(campaign_id, all_slots, capacities)
    return total
