"""Evaluation protocols, one package each (``pairwise/``, ``da/``, ``esa/``). Each
package's ``protocol`` module says what an item is and how it is
served, how an answer is read, checked and stored, what a quality-control
item is and when a volunteer fails, and how the item is shown (its
template). The shared machinery (assignment, answers, evaluation, exports,
dashboard) asks ``of(campaign)`` instead of branching on the protocol's name.

A protocol module has: ``NAME``, ``TEMPLATE`` (the item), ``TEXTS`` (the
volunteer's task, instructions, rule and dismissal), ``question(campaign)``, for
the importer ``USES_CONTROLS``, ``SETTINGS``, ``check_settings`` and ``units``
(a protocol that uses controls also ``read_controls``, ``generates_controls``
and ``CONTROL_POOL``, what ``flask campaign controls`` makes a pool with),
``serve``, ``CURRENT_ITEM``, ``texts_of``, ``reading_words``, ``parse``,
``form``, ``form_answer``, ``answer_values``, ``counters``,
``dismissal_reason``, ``payload``, and for the organisers' pages ``EXPORTS``
(the export kinds it offers), ``dashboard(campaign, volunteers)`` with
its ``PANEL`` template, ``review_judgments(participation)`` with its
``REVIEW`` template, and ``SIGNS`` (the hold signs that apply). It may have
``hold_reason(campaign, participation, item)``: a sign of its own that holds
the volunteer for review (``hold_reason`` below), and ``PRACTICE``: its
practice items' module (``practice`` below).
"""
from .da import protocol as da
from .esa import protocol as esa
from .pairwise import protocol as pairwise

PROTOCOLS = {module.NAME: module for module in (pairwise, da, esa)}


def of(campaign):
    """The protocol module of a campaign."""
    return PROTOCOLS[campaign.protocol]


def word_settings():
    """Every protocol's settings whose value is one of a list of words."""
    return {name: words for module in PROTOCOLS.values() for name, words in module.WORDS.items()}


def export_kinds():
    """The exports a protocol adds to the shared ones (``services.export``):
    {kind: (columns, rows, formats)} from each protocol's ``EXPORT_KINDS``."""
    return {kind: kind_of for module in PROTOCOLS.values() for kind, kind_of in getattr(module, "EXPORT_KINDS", {}).items()}


def writers():
    """The file formats a protocol adds (``WRITERS``: {format: writer})."""
    return {fmt: writer for module in PROTOCOLS.values() for fmt, writer in getattr(module, "WRITERS", {}).items()}


def settled(name, campaign_id, assignment):
    """(settled, of) towards a campaign's goal when its protocol sets one by
    its assignment (pairwise's sequential: the system pairs), else None."""
    check = getattr(PROTOCOLS[name], "settled", None)
    return check(campaign_id, assignment) if check is not None else None


def goal_reached(campaign):
    """Whether the campaign needs no more judgments by its protocol's rule."""
    check = getattr(of(campaign), "goal_reached", None)
    return check(campaign) if check is not None else False


def decided(campaign):
    """What the judgments have decided so far, as (better, worse) system names."""
    check = getattr(of(campaign), "decided", None)
    return check(campaign) if check is not None else []


def refresh(campaign_id):
    """Each protocol's live work at a broadcast of the campaign (pairwise:
    the pairs' decisions)."""
    for module in PROTOCOLS.values():
        if hasattr(module, "refresh"):
            module.refresh(campaign_id)


def hold_reason(campaign, participation, item):
    """The campaign's protocol's own hold sign after this answer, or None
    (a protocol without one: pairwise's signs are all in services/holds)."""
    check = getattr(of(campaign), "hold_reason", None)
    return check(campaign, participation, item) if check is not None else None


def practice(name):
    """The practice module of the protocol ``name`` (a campaign's
    ``protocol``), or None when it has no practice items. It has ``HEADER``
    and ``read_row`` for the importer, and for the volunteer's page
    ``TEMPLATE``, ``form``, ``begin``, ``answered``, ``show``, ``result``
    and ``form_for``."""
    return getattr(PROTOCOLS[name], "PRACTICE", None)
