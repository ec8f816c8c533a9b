"""The docs site, built offline from the notebooks (tools/build_docs.py) and opened in headless Chromium
(tools/check_docs.py): every page must typeset its math, load its images, link only to pages and anchors that exist,
fit its code blocks in the column at 1280 px, each with a copy button, and every exported function and class must
have its API entry. The check itself is tested on a broken site. Served over http as a reader would, the site's
search finds a chapter, and every page fits a phone's 390 px; each page links the previous and the next one.

Needs pandoc, Chromium and a local KaTeX (Debian: apt-get install pandoc chromium libjs-katex), and Pagefind (the
`pagefind[bin]` wheel of the dev extra). Without them these tests are skipped, unless NANORL_DOCS=1 (set by .ci/run),
where a missing tool fails them.
"""
import base64, functools, html, http.server, io, json, os, re, shutil, sys, threading, time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urljoin

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tools'))
from build_docs import KATEX_DIRS, build, directives, figure_alt, pagefind, sidebar
from check_docs import api_names, chromium, probe, problems
from make_readme import result_path

MISSING = [n for n, ok in [('pandoc', shutil.which('pandoc')), ('chromium', shutil.which('chromium')),
                           ('KaTeX', any((d / 'katex.min.js').exists() for d in KATEX_DIRS)),
                           ('pagefind', pagefind())] if not ok]
pytestmark = pytest.mark.skipif(bool(MISSING) and not os.environ.get('NANORL_DOCS'),
                                reason=f"docs tools missing: {', '.join(MISSING)} (apt-get install pandoc chromium "
                                       "libjs-katex; pip install -e '.[dev]' for pagefind)")

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
    ("The result files a notebook's `show_result('PATH')` and `show_tables('PATH')` cells show, PATH relative to the "
     "notebook.")
    return [p for c in json.loads(nb.read_text())['cells'] for src in [''.join(c['source'])]
            if (p := result_path(src) or result_path(src, 'show_tables'))]

@pytest.fixture(scope='module')
def built(tmp_path_factory) -> tuple[Path, list]:
    "The whole site, built once from the notebooks: (its folder, its pages in the sidebar's order)."
    site = tmp_path_factory.mktemp('site')
    return site, build(site)

class Handler(http.server.SimpleHTTPRequestHandler):
    """The site's files, without a log line per request. `/pause` answers after 0.1 s: Chromium's virtual clock
    (`--virtual-time-budget`) stands still while a request is pending, so a page that awaits it waits real time."""
    def log_message(self, *args): pass
    def do_GET(self):
        if not self.path.startswith('/pause'): return super().do_GET()
        time.sleep(0.1); self.send_response(204); self.end_headers()

class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address): pass   # the browser may close a connection it no longer needs

@contextmanager
def served(site: Path):
    "The site over http on a free local port, as a reader serves it (`python -m http.server -d _site`): its address."
    server = Server(('127.0.0.1', 0), functools.partial(Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try: yield f'http://127.0.0.1:{server.server_port}/'
    finally: server.shutdown(); server.server_close()

def test_every_page_of_the_site_passes_in_a_browser(built):
    site, pages = built
    order = sidebar(ROOT / 'nbs/_quarto.yml')
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
    assert shown > 80, shown   # the index and the chapters show their results (91 rows today)

def test_each_page_links_the_previous_and_the_next_in_the_sidebars_order(built):
    site, pages = built
    pager = lambda page, rel: re.findall(rf'<a class="{rel}" rel="{rel}" href="([^"]+)"', page.read_text())
    for i, page in enumerate(pages):
        assert pager(page, 'prev') == ([pages[i - 1].name] if i > 0 else []), page.name
        assert pager(page, 'next') == ([pages[i + 1].name] if i + 1 < len(pages) else []), page.name
    middle = len(pages) // 2   # the same, said of one page: the pages either side of it link back to it
    assert pager(pages[middle - 1], 'next') == pager(pages[middle + 1], 'prev') == [pages[middle].name]

SEARCH = """<script>
window.addEventListener('load', async () => {
  const input = document.querySelector('#search input'), box = document.querySelector('#search'), links = () =>
    [...box.querySelectorAll('a.pagefind-ui__result-link')].filter(a => a.getClientRects().length)
      .map(a => a.getAttribute('href'));
  const ask = async (word, done) => {
    input.value = word;
    input.dispatchEvent(new Event('input', {bubbles: true}));
    for (let i = 0; i < 150 && !done(); i++) await fetch('/pause?' + word + i);   // Pagefind loads its index
  };
  await ask('advantage', () => links().length);
  const found = links();
  await ask('zqxjvwk', () => /no results/i.test(box.textContent));
  document.body.setAttribute('data-probe', JSON.stringify({links: found, none: links(),
    message: (box.querySelector('.pagefind-ui__message') || {}).textContent || ''}));
});
</script>"""

def test_the_search_box_finds_a_chapter_and_its_sections(built):
    ("Typed into the search box of a page served over http, a word of one chapter lists pages of the site and the "
     "sections that hold it; a word of no page lists nothing and says so.")
    site, pages = built
    with served(site) as url: got = probe(pages[1], chromium(), SEARCH, url)
    links = got['links']
    names = [urljoin(url + pages[1].name, href).removeprefix(url).partition('#')[0] or 'index.html'   # the root
             for href in links]
    assert names and set(names) <= {p.name for p in pages}, links
    assert 'advantages.html' in names, links   # chapter 02, named for it
    assert any('#' in h for h in links), links   # a section's own link, not only the page's top
    assert got['none'] == [] and 'no results' in got['message'].lower(), got

COPY = """<script>
window.addEventListener('load', () => {
  const pres = [...document.querySelectorAll('main pre')], button = pres[0].querySelector('button.copy');
  new MutationObserver((_, seen) => {   // the label says how it went: copied, or the code selected to copy by hand
    seen.disconnect();
    document.body.setAttribute('data-probe', JSON.stringify({
      pres: pres.length, buttons: pres.filter(p => p.querySelector('button.copy')).length, label: button.textContent,
      selected: String(getSelection()), code: pres[0].querySelector('code').textContent}));
  }).observe(button, {childList: true});
  button.click();   // headless, the clipboard is refused: the fallback selects the code for the reader
});
</script>"""

def test_a_copy_button_copies_its_code_block(built):
    site, pages = built
    r = probe(pages[1], chromium(), COPY)
    assert r['pres'] == r['buttons'] > 0, r
    assert r['label'] == 'Copied' or (r['label'] == 'Press Ctrl+C' and r['selected'] == r['code']), r

PHONE = """<script>
const frames = %s.map(src => Object.assign(document.createElement('iframe'),
                                           {src, width: 390, height: 844, scrolling: 'no'}));
let left = frames.length;
const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
const measure = () => document.body.setAttribute('data-probe', JSON.stringify(frames.map(f => {
  const doc = f.contentDocument, all = s => [...doc.querySelectorAll('main ' + s)];
  // a table that scrolls keeps its first column in view: scrolled sideways, each row's first cell stays at the left
  const lost = all('table').filter(t => t.scrollWidth > t.clientWidth + 1).filter(t => {
    t.scrollLeft = 120;
    const left = t.getBoundingClientRect().left;
    const moved = [...t.rows].some(r => r.cells[0] && Math.abs(r.cells[0].getBoundingClientRect().left - left) > 2);
    t.scrollLeft = 0;
    return moved;
  });
  return {page: f.getAttribute('src'), width: doc.documentElement.scrollWidth,
          main: doc.querySelector('main').getBoundingClientRect().width,
          menu_open: doc.querySelector('nav.sidebar details').open,
          // cut: wider inside than its box, and not scrollable
          cut: all('pre, table, .katex-display').filter(e => e.scrollWidth > e.clientWidth + 1 && !scrolls(e)).length,
          first_column_lost: lost.length,
          unlinked_figures: all('img').filter(i => !i.closest('a.figure')).length,
          small_wide_figures: all('img').filter(i => i.naturalWidth >= 900 &&
                                                     i.getBoundingClientRect().width < 560).length};
})));
for (const f of frames) { f.onload = () => { if (--left === 0) setTimeout(measure, 100); }; document.body.append(f); }
</script>"""

def test_every_page_fits_a_phone(built):
    ("Each page in a 390 px wide frame (a phone's width): nothing wider than that, the text at least 300 px wide, no "
     "code, table or formula cut (each too wide one scrolls), a scrolled table keeps its first column, and every "
     "figure links to itself, a wide one shown at least 560 px wide (it scrolls).")
    site, pages = built
    holder = site / 'phone.html'   # a page that holds every page in a frame, served so that it can measure them
    holder.write_text('<!DOCTYPE html>\n<html><body></body></html>\n')
    try:
        with served(site) as url: found = probe(holder, chromium(), PHONE % json.dumps([p.name for p in pages]), url)
    finally: holder.unlink()
    assert len(found) == len(pages), found
    assert [r for r in found if r['width'] > 390 or r['main'] < 300 or r['menu_open']] == [], found
    assert [r for r in found if r['cut'] or r['first_column_lost'] or r['unlinked_figures']
            or r['small_wide_figures']] == [], found

TOC = """<script>
const f = Object.assign(document.createElement('iframe'), {src: %s, width: 1400, height: 900});
f.onload = () => {
  const doc = f.contentDocument, toc = doc.querySelector('nav#TOC');
  const links = [...toc.querySelectorAll('a[href^="#"]')], target = links[links.length - 3];
  const head = doc.getElementById(decodeURIComponent(target.hash.slice(1)));
  // scroll to the section, then look every 100 ms for up to 3 s: a busy machine may paint late, and a figure or a
  // formula laid out late moves the section, so each look scrolls to it again before the next
  let looks = 0;
  const look = () => {
    const current = toc.querySelector('a.current')?.hash;
    if (current !== target.hash && ++looks < 30) {
      f.contentWindow.scrollTo(0, head.getBoundingClientRect().top + f.contentWindow.scrollY - 10);
      return setTimeout(look, 100);
    }
    const box = toc.getBoundingClientRect(), main = doc.querySelector('main').getBoundingClientRect();
    document.body.setAttribute('data-probe', JSON.stringify({
      beside: box.left >= main.right, top: box.top, bottom: box.top + Math.min(box.height, 10),
      title: getComputedStyle(toc, '::before').content, current, want: target.hash, looks,
      scrolled: f.contentWindow.scrollY}));
  };
  look();
};
document.body.append(f);
</script>"""

def test_on_this_page_follows_the_reader(built):
    ("At 1400 px, a long chapter's 'On this page' list sits beside the text; scrolled to a late section, the list is "
     "still in view and marks that section.")
    site, pages = built
    page = next(p for p in pages if p.name == 'serve.html')                     # chapter 12b
    holder = site / 'toc.html'
    holder.write_text('<!DOCTYPE html>\n<html><body></body></html>\n')
    try:
        with served(site) as url: r = probe(holder, chromium(), TOC % json.dumps(page.name), url)
    finally: holder.unlink()
    assert r['beside'] and r['scrolled'] > 2000 and 0 <= r['top'] < 900 and r['title'] == '"On this page"', r
    assert r['current'] == r['want'], r

ASIDE = """<script>
window.addEventListener('load', () => {
  const asides = [...document.querySelectorAll('main details.aside')], head = asides[0].querySelector('h2[id], h3[id]');
  const seen = {asides: asides.length, closed: asides.filter(a => !a.open).length,
                hidden: !head.checkVisibility(), summary: asides[0].querySelector('summary').textContent,
                in_toc: !!document.querySelector(`nav#TOC a[href="#${head.id}"]`)};
  location.hash = head.id;    // as a link from the table of contents or a search result does
  setTimeout(() => document.body.setAttribute('data-probe', JSON.stringify({...seen, opened: asides[0].open,
    shown: head.checkVisibility()})), 200);
});
</script>"""

def test_an_aside_comes_folded_and_a_link_to_it_opens_it(built):
    ("Chapter 05c's two engineering asides come folded (JupyterLab's mark on their headings), their headings still in "
     "the table of contents; following a link to one opens it.")
    site, pages = built
    page = next(p for p in pages if '<details class="aside">' in p.read_text() and 'Adam, written out' in p.read_text())
    with served(site) as url: r = probe(page, chromium(), ASIDE, url)
    assert (r['asides'], r['closed'], r['hidden'], r['in_toc']) == (2, 2, True, True), r
    assert r['summary'].strip().startswith('Adam, written out') and r['opened'] and r['shown'], r

WIDE = """<script>
window.addEventListener('load', () => setTimeout(() => {
  const all = s => [...document.querySelectorAll('main ' + s)];
  const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  // a button covers code when it meets the box of the code's lines (as wide as its longest line)
  const overlaps = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const heads = all('h2[id], h3[id]');
  document.body.setAttribute('data-probe', JSON.stringify({
    width: document.documentElement.scrollWidth, background: getComputedStyle(document.body).backgroundColor,
    cut: all('pre, table, .katex-display').filter(e => e.scrollWidth > e.clientWidth + 1 && !scrolls(e)).length,
    tables: all('table').length,
    covered: all('pre').filter(p => p.querySelector('button.copy') && p.querySelector('code') &&
                                 overlaps(p.querySelector('button.copy').getBoundingClientRect(),
                                          p.querySelector('code').getBoundingClientRect())).length,
    buttons: all('pre button.copy').length,
    heads: heads.length, anchored: heads.filter(h => h.querySelector(`a.anchor[href="#${h.id}"]`)).length,
    icon: (document.querySelector('link[rel=icon]') || {}).href || ''}));
}, 200));
</script>"""

def test_a_wide_page_reads_in_the_light_and_the_dark(built):
    ("Chapter 10 at 1280 px (its results tables are the site's widest): nothing wider than the window, no table, code "
     "or formula cut, no copy button on the code it copies, a link on every section heading, a favicon; with the "
     "reader's setting dark, the page is dark.")
    site, pages = built
    page = next(p for p in pages if p.name == 'grpo_lm.html')
    light = probe(page, chromium(), WIDE)
    dark = probe(page, chromium(), WIDE, flags=('--blink-settings=preferredColorScheme=0',))
    assert light['width'] <= 1280 and light['cut'] == 0 and light['tables'] >= 3, light
    assert light['buttons'] > 10 and light['covered'] == 0, light
    assert light['heads'] > 10 and light['anchored'] == light['heads'], light
    assert light['icon'].startswith('data:image/svg+xml'), light
    shade = lambda c: 255 if c == 'rgba(0, 0, 0, 0)' else sum(map(int, re.findall(r'\d+', c)[:3])) / 3   # none: white
    assert shade(light['background']) > 200 and shade(dark['background']) < 60, (light, dark)

def test_every_figure_says_what_it_shows(built):
    "Each figure on the site has alt text of its own (its PNG's description, or the prose and labels around it)."
    site, pages = built
    alts = [(p.name, a) for p in pages for a in re.findall(r'<img [^>]*alt="([^"]*)"', p.read_text())]
    assert len(alts) > 25, len(alts)
    assert [x for x in alts if x[1] in ('', 'a figure the code above draws') or len(x[1]) < 40] == [], alts

def test_alt_text_reads_the_prose_and_the_labels():
    code = "ax.set_xlabel('step along $\\\\nabla J$')\nax.set_title(f'seed {s}')"
    assert figure_alt(code, "Some context.\n\nThe curves part at step 50. The same numbers as curves:") == (
        "The same numbers as curves: Titles and axes: step along nabla J; seed.")
    assert figure_alt(code, "A paragraph that does not announce it.") == "Titles and axes: step along nabla J; seed."
    dirs, code = directives('#| echo: false\n#| fig-alt: "Bars of k1, k2 and k3: one per action"\nplot()')
    assert figure_alt(code, "Prose.", dirs['fig-alt']) == 'Bars of k1, k2 and k3: one per action' and code == 'plot()'

def test_the_check_finds_each_broken_thing(tmp_path):
    nbs, site = tmp_path / 'nbs', tmp_path / 'site'
    nbs.mkdir()
    table = '| seed | final |\n|---|---|\n| 0 | **0.164** |\n\nMedian of 3; produced by `python bench/x.py`.'
    good = notebook(('markdown', '# Good\n\n## A heading\n\n### Documented\n\n'
                                 'Inline $x^2$ and display $$\\frac{a}{b}$$, a [link to the other page](broken.ipynb) '
                                 'and [one here](#a-heading).'),
                    ('code', 'plot()', [png()]),
                    ('code', 'total = ' + '+'.join(['value'] * 80), []),   # a line that scrolls inside its block
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
            "broken.html: image not loaded: figures/none.png",
            "broken.html: dead link: figures/none.png",                       # the figure links to itself
            "broken.html: dead link: nowhere.html",
            "broken.html: link to a missing anchor: good.html#no-such-heading",
            "no API doc for nanorl.x.undocumented_fn"]
    for w in want: assert any(p.startswith(w) for p in found), (w, found)
    assert len(found) == len(want), found
    (site / 'katex/katex.min.js').unlink()   # KaTeX that cannot load leaves every formula raw
    (site / 'site.js').unlink(); (site / 'site.css').write_text('')   # no copy buttons, and code cut at the edge
    found = [p for p in problems(site) if p.startswith('good.html')]
    assert len([p for p in found if p.startswith('good.html: math not typeset')]) == 2, found
    assert len([p for p in found if p.startswith('good.html: code block without a copy button')]) == 2, found
    wide = [p for p in found if p.startswith('good.html: code block wider than its column at 1280 px: ')]
    assert len(wide) == 1 and 'total = value+value' in wide[0], found
    assert len(found) == 5, found
