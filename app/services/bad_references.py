"""The adequacy bad references of a sentence's outputs, made at import for
the protocols that score one translation (DA, ESA): each output gets a run
of its words replaced by words of another sentence's translation
(``score_quality.degrade_adequacy``), stored in ``Output.degraded``."""
from sqlalchemy import bindparam, select
from sqlalchemy.orm import aliased

from ..database import execute
from ..models import Output, Sentence
from . import score_quality

_donor_sentence = aliased(Sentence)
# Translations of the campaign's latest other sentences (the donors).
_DONORS = (
    select(Output.text)
    .join(Sentence, Sentence.id == Output.sentence_id)
    .where(
        Sentence.campaign_id == select(_donor_sentence.campaign_id)
        .where(_donor_sentence.id == bindparam("sentence_id")).scalar_subquery(),
        Output.sentence_id != bindparam("sentence_id"),
    )
    .order_by(Output.id.desc())
    .limit(50)
)


def degrade_outputs(sentence_id, outputs, rng):
    """Set each of ``outputs``' ``degraded`` (None: too short to degrade)."""
    donors = execute(_DONORS, {"sentence_id": sentence_id}).scalars().all()
    for output in outputs:
        # The campaign's first sentence takes its words from itself.
        output.degraded = score_quality.degrade_adequacy(output.text, rng, rng.choice(donors) if donors else output.text)
