"""static/favicon.ico from static/favicon.svg (issue 22): 16, 32 and 48 px,
drawn by headless Chromium, packed by Pillow. Run again after changing the SVG:

    .venv/bin/python scripts/favicon_ico.py
"""
import io
import os

from PIL import Image
from playwright.sync_api import sync_playwright

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = (16, 32, 48)


def main():
    with open(os.path.join(ROOT, "static", "favicon.svg"), encoding="utf-8") as handle:
        svg = handle.read()
    images = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            for size in SIZES:
                page = browser.new_page(viewport={"width": size, "height": size})
                page.set_content("<style>html,body{margin:0}svg{display:block;width:100%;height:100%}</style>" + svg)
                images.append(Image.open(io.BytesIO(page.screenshot(omit_background=True))).convert("RGBA"))
        finally:
            browser.close()
    images[-1].save(os.path.join(ROOT, "static", "favicon.ico"), sizes=[(s, s) for s in SIZES],
                    append_images=images[:-1])


if __name__ == "__main__":
    main()
