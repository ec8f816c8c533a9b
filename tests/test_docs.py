"""The docs site, built offline from the notebooks (tools/build_docs.py) and opened in headless Chromium
(tools/check_docs.py): every page must typeset its math, load its images, link only to pages and anchors that exist,
and every exported function and class must have its API entry. The check itself is tested on a broken site.

Needs pandoc, Chromium and a local KaTeX (Debian: apt-get install pandoc chromium libjs-katex). Without them these
tests are skipped, unless NANORL_DOCS=1 (set by .ci/run), where a missing tool fails them.
"""
import base64, html, io, json, os, re, shutil, sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tools'))
from build_docs import KATEX_DIRS, build, sidebar
from check_docs import api_names, problems
from make_readme import result_path

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

def page_rows(page: str) -> list[list[str]]:
    "Every row of every table on an HTML page, as the text of its cells (pandoc's curly quotes made straight)."
    quotes = str.maketrans({'\u2018': "'", '\u2019': "'", '\u201c': '"', '\u201d': '"'})
    cell_text = lambda c: ' '.join(html.unescape(re.sub(r'<[^>]+>', '', c)).translate(quotes).split())
    return [[cell_text(c) for c in re.findall(r'<t[hd][^>]*>(.*?)</t[hd]>', row, re.S)]
            for row in re.findall(r'<tr[^>]*>(.*?)</tr>', page, re.S)]

def markdown_rows(text: str) -> list[list[str]]:
    "Every row of every Markdown table in `text` (separator lines aside), as the text of its cells."
    return [[' '.join(c.replace('`', '').replace('**', '').split()) for c in line.strip()[1:-1].split('|')]
            for line in text.splitlines() if line.startswith('|') and not re.fullmatch(r'[-|: ]+', line.strip())]

def results_shown(nb: Path) -> list[str]:
    "The result files a notebook's `show_result('PATH')` cells show, PATH relative to the notebook."
    return [p for c in json.loads(nb.read_text())['cells'] if (p := result_path(''.join(c['source'])))]

def test_every_page_of_the_site_passes_in_a_browser(tmp_path):
    site = tmp_path / 'site'
    pages = build(site)
    order = sidebar(ROOT / '_quarto.yml')
    assert len(pages) == len(order) == len(set(pages)), (len(pages), len(order))
    assert {p.name for p in pages} == {p.name for p in site.glob('*.html')}
    names = api_names()
    assert {'masked_mean', 'grpo_advantage', 'ppo_loss', 'HFPolicy', 'TrainerSource', 'main'} <= set(names)
    assert problems(site, names) == []
    missing, shown = [], 0   # every row of every table a show_result cell names is a row of a table on its page
    for (_, nb), page in zip(order, pages):
        rows = page_rows(page.read_text())
        for path in results_shown(ROOT / 'nbs' / nb):
            want = markdown_rows((ROOT / 'nbs' / path).read_text())
            missing += [f"{page.name}: {path}: {r}" for r in want if r not in rows]; shown += len(want)
    assert not missing, missing
    assert shown > 100, shown   # the index, chapters 10, 10a and 12b show their results

def test_the_check_finds_each_broken_thing(tmp_path):
    nbs, site = tmp_path / 'nbs', tmp_path / 'site'
    nbs.mkdir()
    table = '| seed | final |\n|---|---|\n| 0 | **0.164** |\n\nMedian of 3; produced by `python bench/x.py`.'
    good = notebook(('markdown', '# Good\n\n## A heading\n\n### Documented\n\n'
                                 'Inline $x^2$ and display $$\\frac{a}{b}$$, a [link to the other page](broken.ipynb) '
                                 'and [one here](#a-heading).'),
                    ('code', 'plot()', [png()]),
                    ('code', "#| echo: false\nshow_result('../bench/results/x.md')",   # a result, as Jupyter stores it
                     [{'output_type': 'execute_result', 'execution_count': None, 'metadata': {},
                       'data': {'text/markdown': table, 'text/plain': table}}]))
    broken = notebook(('markdown', '# Broken\n\nBad math $\\frac{1}{$ here. Raw TeX \\frac{a}{b} outside math.\n\n'
                                   '![a figure](figures/none.png)\n\n[dead](nowhere.ipynb), '
                                   '[no such anchor](good.ipynb#no-such-heading), [fine](good.ipynb#a-heading)\n\n'
                                   '{{< video demo.mp4 >}}'))
    (nbs / 'good.ipynb').write_text(json.dumps(good)); (nbs / 'broken.ipynb').write_text(json.dumps(broken))
    build(site, notebooks=nbs)
    page = (site / 'good.html').read_text()
    assert page_rows(page) == markdown_rows(table) == [['seed', 'final'], ['0', '0.164']]   # a table, not text
    assert 'show_result' not in page and 'produced by <code>python bench/x.py</code>' in page
    found = problems(site, {'Documented': 'nanorl.x', 'undocumented_fn': 'nanorl.x'})
    assert not [p for p in found if p.startswith('good.html')], found   # the good page passes
    want = ["broken.html: KaTeX error", "broken.html: raw TeX: here. Raw TeX \\frac{a}{b}",
            "broken.html: shortcode left as text: {{< video demo.mp4 >}}",
            "broken.html: image not loaded: figures/none.png", "broken.html: dead link: nowhere.html",
            "broken.html: link to a missing anchor: good.html#no-such-heading",
            "no API doc for nanorl.x.undocumented_fn"]
    for w in want: assert any(p.startswith(w) for p in found), (w, found)
    assert len(found) == len(want), found
    (site / 'katex/katex.min.js').unlink()   # KaTeX that cannot load leaves every formula raw
    untypeset = [p for p in problems(site) if p.startswith('good.html: math not typeset')]
    assert len(untypeset) == 2, untypeset
