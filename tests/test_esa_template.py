"""The Error Span Annotation item's template (templates/volunteer/item_esa.html):
untrusted text escaped, the contract's fields, and the widget harness
(tests/e2e/esa_harness.html) made from it.

``python tests/test_esa_template.py`` writes the harness's item markup again
after a change to the template."""
import json
import os
import re
import sys
from types import SimpleNamespace

from flask import render_template

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HARNESS = os.path.join(ROOT, "tests", "e2e", "esa_harness.html")

HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)> \'quoted\''

#: The harness's samples: (variant, source language, target language, texts).
SAMPLES = [
    ("en", "cs", "en", {
        "source": "Kočka spala na teplé rohožce u dveří.",
        "translation": "The cat slept on the warm mat by the door.",
        "previous": [
            {"source": "Bylo pozdní odpoledne.", "translation": "It was late afternoon."},
            {"source": "Dům byl tichý.", "translation": "The house was quiet."},
        ],
    }),
    ("ar", "en", "ar", {
        "source": "The children are playing football in the park today.",
        "translation": "الأطفال يلعبون كرة القدم في الحديقة اليوم.",
        "previous": [{"source": "It was a sunny day.", "translation": "كان يوما مشمسا."}],
    }),
    ("ja", "en", "ja", {
        "source": "I live in Tokyo with my family.",
        "translation": "私は家族と東京に住んでいます。",
        "previous": [],
    }),
]


def render_item(app, source_language, target_language, texts):
    """The item's markup as the judging page includes it."""
    campaign = SimpleNamespace(source_language=source_language, target_language=target_language)
    dir_of = app.jinja_env.filters["dir_of"]
    with app.test_request_context("/"):
        return render_template("volunteer/item_esa.html", campaign=campaign, texts=texts,
                               src_dir=dir_of(source_language), tgt_dir=dir_of(target_language))


def harness_markup(app):
    """The harness's <template> elements, one per sample, without the
    template's script tags (the harness loads the scripts by relative path)."""
    parts = []
    for variant, source, target, texts in SAMPLES:
        html = render_item(app, source, target, texts)
        html = re.sub(r'<script src="[^"]*" defer></script>\n?', "", html)
        parts.append(f'<template id="variant-{variant}">\n{html.strip()}\n</template>')
    return "<!-- item_esa.html: begin -->\n" + "\n".join(parts) + "\n<!-- item_esa.html: end -->"


def test_translation_is_escaped(app):
    texts = {"source": HOSTILE, "translation": HOSTILE,
             "previous": [{"source": HOSTILE, "translation": HOSTILE}]}
    html = render_item(app, "en", "de", texts)
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(" in html
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") == 4  # source, translation, previous pair
    # The item's JSON for esa.js: inside a script element, yet no "<" to end it.
    data = re.search(r'<script type="application/json" id="esa-item">(.*?)</script>', html, re.S).group(1)
    assert "<" not in data
    assert json.loads(data) == {"translation": HOSTILE, "previous": texts["previous"]}


def test_contract_fields(app):
    html = render_item(app, "en", "ur", {"source": "Hello.", "translation": "ہیلو۔", "previous": []})
    assert re.search(r'<input type="hidden" name="spans" id="esa-spans" value="\[\]" data-answer>', html)
    assert re.search(r'<input type="number" id="score-number" name="score" min="0" max="100"[^>]*data-answer', html)
    assert 'id="esa-text" lang="ur" dir="rtl"' in html
    assert re.search(r'src="[^"]*/js/slider(-[0-9a-f]+)?\.js"', html)  # fingerprinted or not
    assert re.search(r'src="[^"]*/js/esa(-[0-9a-f]+)?\.js"', html)
    assert re.search(r'<details class="esa-context" id="esa-context" hidden>', html)  # no earlier segments


def test_harness_matches_the_template(app):
    with open(HARNESS, encoding="utf-8") as handle:
        harness = handle.read()
    assert harness_markup(app) in harness, "run: python tests/test_esa_template.py"


if __name__ == "__main__":  # write the harness's item markup again
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    sys.path.insert(0, ROOT)
    import tempfile

    os.environ.setdefault("BOZKA_INSTANCE", tempfile.mkdtemp(prefix="bozka-esa-harness-"))
    from helpers import build_app

    from pathlib import Path

    app = build_app(Path(tempfile.mkdtemp(prefix="bozka-esa-harness-")))
    with open(HARNESS, encoding="utf-8") as handle:
        harness = handle.read()
    harness = re.sub(r"<!-- item_esa.html: begin -->.*<!-- item_esa.html: end -->",
                     lambda _: harness_markup(app), harness, flags=re.S)
    with open(HARNESS, "w", encoding="utf-8") as handle:
        handle.write(harness)
