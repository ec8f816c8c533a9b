"""The docs site, built offline from the notebooks (tools/build_docs.py) and opened in headless Chromium
(tools/check_docs.py): every page must typeset its math, load its images, link only to pages and anchors that exist,
and every exported function and class must have its API entry. The check itself is tested on a broken site.

Needs pandoc, Chromium and a local KaTeX (Debian: apt-get install pandoc chromium libjs-katex). Without them these
tests are skipped, unless NANORL_DOCS=1 (set by .ci/run), where a missing tool fails them.
"""
import base64, io, json, os, shutil, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tools'))
from build_docs import KATEX_DIRS, build, sidebar
from check_docs import api_names, problems

MISSING = [n for n, ok in [('pandoc', shutil.which('pandoc')), ('chromium', shutil.which('chromium')),
                           ('KaTeX', any((d / 'katex.min.js').exists() for d in KATEX_DIRS))] if not ok]
pytestmark = pytest.mark.skipif(bool(MISSING) and not os.environ.get('NANORL_DOCS'),
                                reason=f"docs tools missing: {', '.join(MISSING)} (apt-get install pandoc chromium "
                                       "libjs-katex)")

def notebook(*cells) -> dict:
    "A notebook of (kind, source[, outputs]) cells."
    return {'cells': [{'cell_type': k, 'metadata': {}, 'source': s, **({'outputs': o[0], 'execution_count': None}
                                                                       if k == 'code' else {})} for k, s, *o in cells],
            'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}

def png() -> dict:
    "A stored matplotlib figure, as a notebook keeps it."
    import matplotlib; matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(1, 1)); ax.plot([0, 1]); buf = io.BytesIO(); fig.savefig(buf, format='png')
    plt.close(fig)
    return {'output_type': 'display_data', 'metadata': {}, 'data': {'image/png': base64.b64encode(buf.getvalue())
                                                                    .decode()}}

def test_every_page_of_the_site_passes_in_a_browser(tmp_path):
    site = tmp_path / 'site'
    pages = build(site)
    order = sidebar(ROOT / '_quarto.yml')
    assert len(pages) == len(order) == len(set(pages)), (len(pages), len(order))
    assert {p.name for p in pages} == {p.name for p in site.glob('*.html')}
    names = api_names()
    assert {'masked_mean', 'grpo_advantage', 'ppo_loss', 'HFPolicy', 'TrainerSource', 'main'} <= set(names)
    assert problems(site, names) == []

def test_the_check_finds_each_broken_thing(tmp_path):
    nbs, site = tmp_path / 'nbs', tmp_path / 'site'
    nbs.mkdir()
    good = notebook(('markdown', '# Good\n\n## A heading\n\n### Documented\n\n'
                                 'Inline $x^2$ and display $$\\frac{a}{b}$$, a [link to the other page](broken.ipynb) '
                                 'and [one here](#a-heading).'),
                    ('code', 'plot()', [png()]))
    broken = notebook(('markdown', '# Broken\n\nBad math $\\frac{1}{$ here. Raw TeX \\frac{a}{b} outside math.\n\n'
                                   '![a figure](figures/none.png)\n\n[dead](nowhere.ipynb), '
                                   '[no such anchor](good.ipynb#no-such-heading), [fine](good.ipynb#a-heading)'))
    (nbs / 'good.ipynb').write_text(json.dumps(good)); (nbs / 'broken.ipynb').write_text(json.dumps(broken))
    build(site, notebooks=nbs)
    found = problems(site, {'Documented': 'nanorl.x', 'undocumented_fn': 'nanorl.x'})
    assert not [p for p in found if p.startswith('good.html')], found   # the good page passes
    want = ["broken.html: KaTeX error", "broken.html: raw TeX: here. Raw TeX \\frac{a}{b}",
            "broken.html: image not loaded: figures/none.png", "broken.html: dead link: nowhere.html",
            "broken.html: link to a missing anchor: good.html#no-such-heading",
            "no API doc for nanorl.x.undocumented_fn"]
    for w in want: assert any(p.startswith(w) for p in found), (w, found)
    assert len(found) == len(want), found
    (site / 'katex/katex.min.js').unlink()   # KaTeX that cannot load leaves every formula raw
    untypeset = [p for p in problems(site) if p.startswith('good.html: math not typeset')]
    assert len(untypeset) == 2, untypeset
