"""Scripted Direct Assessment players (issue 28) against a running server
over HTTP: bots that game Graham et al.'s quality control, and honest
volunteers. Used by ``bench_da_cheaters.py`` and tests/e2e/test_e2e_da_players.py.

A player plays as the pairwise players do (``players.play_all``: it registers
and confirms through the pages), scoring through the JSON API as the slider
page does. What it saw is kept, one entry per answer: whether it counted,
whether it was held, its tickets.

The bots (``Player.kind``):
- "always50": 50 for everything;
- "copy": one score (its first, at random) copied to every item;
- "source": the score it gave the same source before (at random the first time);
- "learner": takes a source seen before as a quality-control item and answers
  it "consistently": the same text as before gets the same score, another
  text of that source ``drop`` points less (it takes the later one for the
  bad reference); at random otherwise.
An honest volunteer knows what each text is (``Texts``): a system's output
scored by that system's quality, the reference high, a bad reference
``drop`` points below its original on average, all with some noise.
"""
from dataclasses import dataclass, field

BOTS = ("always50", "copy", "source", "learner")


@dataclass
class Player:
    name: str
    kind: str  # one of BOTS, or "honest"
    pace: tuple  # seconds before each answer: (low, high)
    items: int
    drop: float = 30  # learner: points below the first score; honest: mean drop for a bad reference
    noise: float = 10  # honest: standard deviation of a score around what they think
    seen: list = field(default_factory=list)  # (counted, held, answered, tickets won so far) per answer
    tickets: list = field(default_factory=list)
    status: str = "playing"
    memory: dict = field(default_factory=dict)  # source -> (first text, first score)

    def score(self, item, texts, rng):
        source, shown = item["source"], item["translation"]
        before = self.memory.get(source)
        if self.kind == "always50":
            value = 50
        elif self.kind == "copy":
            value = self.memory.setdefault("", (None, rng.randint(0, 100)))[1]
        elif self.kind == "source":
            value = before[1] if before else rng.randint(0, 100)
        elif self.kind == "learner":
            if before is None:
                value = rng.randint(20, 100)
            else:
                value = before[1] if shown == before[0] else max(0, before[1] - self.drop)
        else:
            value = texts.judge(source, shown, self, rng)
        self.memory.setdefault(source, (shown, value))
        return int(round(min(100, max(0, value))))

    def wait(self, item, rng):
        return rng.uniform(*self.pace)

    def answer(self, item, texts, answered, rng):
        return {"score": self.score(item, texts, rng)}

    @staticmethod
    def saw(data):
        return data["counted"], data["held"], data["answered"], len(data["tickets"])

    def held_by(self):
        """The answer (1-based) after which the player was first told they were held, or None."""
        return next((n for n, (_counted, held, _answered, _tickets) in enumerate(self.seen, 1) if held), None)

    def first_ticket_at(self):
        """The answer (1-based) that won the player's first ticket, or None."""
        return next((n for n, (_c, _h, _a, tickets) in enumerate(self.seen, 1) if tickets), None)


class Texts:
    """What an honest reader knows of a campaign: each source's system
    outputs and reference, and each system's quality (0-100)."""

    def __init__(self, sources, outputs, references, quality):
        self.outputs = {source: {outputs[name][n]: name for name in outputs} for n, source in enumerate(sources)}
        self.references = dict(zip(sources, references)) if references else {}
        self.quality = quality

    def judge(self, source, shown, player, rng):
        outputs = self.outputs.get(source, {})
        if shown in outputs:
            think = self.quality[outputs[shown]]
        elif shown == self.references.get(source):
            think = 92
        else:  # a bad reference: the output it was made from, read with a phrase wrong
            words = set(shown.split())
            nearest = max(outputs, key=lambda text: len(words & set(text.split())), default=None)
            think = (self.quality[outputs[nearest]] if nearest else 50) - max(0.0, rng.gauss(player.drop, player.drop / 2))
        return think + rng.gauss(0, player.noise)


def read_campaign(folder, quality):
    """``Texts`` of a campaign folder (source.txt, systems/<name>.txt named in
    ``quality``, reference.txt if there is one)."""
    def lines(name):
        with open(f"{folder}/{name}", encoding="utf-8") as handle:
            return handle.read().splitlines()

    outputs = {name: lines(f"systems/{file}.txt") for name, file in quality_files(quality).items()}
    try:
        references = lines("reference.txt")
    except FileNotFoundError:
        references = None
    return Texts(lines("source.txt"), outputs, references, {name: q for name, (_file, q) in quality.items()})


def quality_files(quality):
    return {name: file for name, (file, _q) in quality.items()}


# The demo DA campaign (app/demo/en-eu-da): system name -> (file stem, how good an honest reader finds it).
DEMO_QUALITY = {"Neural": ("neural", 85), "Statistical": ("statistical", 65), "RuleBased": ("rulebased", 45),
                "WordByWord": ("wordbyword", 20)}
