"""Open every page of a built docs site in headless Chromium and list what a reader would find broken.

    python tools/check_docs.py [SITE]        # default _site/ (python tools/build_docs.py makes it)

A page fails on math KaTeX did not typeset (a `.math` element without KaTeX's output, a KaTeX error, or raw TeX such
as `$x$` or `\\frac` left in the text), a Quarto shortcode left in the text (`{{< include ... >}}`: a result shows
through a `show_result` cell, which Jupyter and GitHub render too), an image the browser could not load, a link
to a page or file of the site that does not exist or to an anchor that page does not have, and a code block (a `pre`)
that sticks out of its column in a 1280 px window or is cut (wider inside than its box and not scrollable), or has no
copy button (tools/docs/site.js). The site fails when a
name that a `nanorl` module exports (its `__all__`) has no API entry (a heading with that name) on any page. Each
page is opened by the browser itself from a copy with a small script added that reports, after the page has loaded
and KaTeX has run, what the document holds; Chromium prints that document (`--dump-dom`). Needs Chromium (Debian's
`chromium`).
"""
import ast, html, json, re, shutil, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
            '--disable-component-update', '--disable-sync', '--allow-file-access-from-files',
            '--virtual-time-budget=10000', '--window-size=1280,900', '--dump-dom']
PROBE = r"""<script>
window.addEventListener('load', () => setTimeout(() => {
  const main = document.querySelector('main') || document.body, all = s => [...main.querySelectorAll(s)];
  const r = {untypeset: all('.math').filter(e => !e.querySelector('.katex, .katex-error'))
                                    .map(e => e.textContent.slice(0, 80)),
             tex_errors: all('.katex-error').map(e => (e.getAttribute('title') || e.textContent).slice(0, 120)),
             raw_tex: [], shortcodes: [], images: [...document.images].filter(i => !i.complete || i.naturalWidth === 0)
                                   .map(i => i.getAttribute('src')),
             links: [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
             ids: [...document.querySelectorAll('[id]')].map(e => e.id),
             headings: all('h1, h2, h3, h4').map(h => h.textContent.trim()),
             // a code block sticks out of its column, or is cut: wider inside than its box, and not scrollable
             wide_code: all('pre').filter(p => p.getBoundingClientRect().right > main.getBoundingClientRect().right + 1
                                               || (p.scrollWidth > p.clientWidth + 1 &&
                                                   !['auto', 'scroll'].includes(getComputedStyle(p).overflowX)))
                                  .map(p => p.textContent.slice(0, 60)),
             no_copy: all('pre').filter(p => !p.querySelector('button.copy')).map(p => p.textContent.slice(0, 60))};
  const walk = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode());) {
    if (n.parentElement.closest('pre, code, .math, script, style, nav')) continue;
    if (/\$[^\s$][^$]*\$|\\\(|\\\[|\\(frac|sum|mathbb|operatorname|left|right)\b/.test(n.textContent))
      r.raw_tex.push(n.textContent.replace(/\s+/g, ' ').trim().slice(0, 80));
    if (/\{\{<|>\}\}/.test(n.textContent))
      r.shortcodes.push(n.textContent.replace(/\s+/g, ' ').trim().slice(0, 80));
  }
  document.body.setAttribute('data-probe', JSON.stringify(r));
}, 0));
</script>
"""

def chromium() -> str:
    for exe in ('chromium', 'chromium-browser', 'google-chrome'):
        if shutil.which(exe): return shutil.which(exe)
    sys.exit("check_docs: no Chromium found; install Debian's chromium (apt-get install chromium)")

def probe(page: Path, exe: str, script: str = PROBE, url: str = '', flags: tuple = ()) -> dict:
    """What the browser holds once `page` has loaded: typeset math, broken images, links, ids and headings (or what
    another `script` puts in the body's `data-probe`). `url`: the page's folder served over http, else its file;
    `flags`: more of Chromium's switches (a reader's setting, such as a dark colour scheme)."""
    copy = page.with_name(page.stem + '.probe.html')
    copy.write_text(page.read_text().replace('</body>', script + '</body>'))
    try:
        where = url + copy.name if url else copy.resolve().as_uri()
        dom = subprocess.run([exe, *CHROMIUM, *flags, where], capture_output=True, text=True, timeout=120).stdout
    finally: copy.unlink()
    m = re.search(r'data-probe="([^"]*)"', dom)
    if not m: return {'failed': f"the page did not finish loading in the browser ({len(dom)} bytes of DOM)"}
    return json.loads(html.unescape(m.group(1)))

def api_names(pkg: Path = ROOT / 'nanorl') -> dict:
    "Every function and class a module exports (in its `__all__`), read from the source: {name: module}."
    names = {}
    for f in sorted(pkg.glob('*.py')):
        body = ast.parse(f.read_text()).body
        defined = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        for node in body:
            if isinstance(node, ast.Assign) and any(getattr(t, 'id', '') == '__all__' for t in node.targets):
                names.update({n: f'nanorl.{f.stem}' for n in ast.literal_eval(node.value) if n in defined})
    return names

def problems(site: Path, names: dict | None = None) -> list[str]:
    "Everything broken on the site, one line each; empty when every page is fine."
    exe, pages = chromium(), sorted(site.glob('*.html'))
    with ThreadPoolExecutor(2) as pool: found = dict(zip(pages, pool.map(lambda p: probe(p, exe), pages)))
    ids = {p.name: set(r.get('ids', [])) for p, r in found.items()}
    out = []
    for page, r in found.items():
        say = lambda what, xs: out.extend(f"{page.name}: {what}: {x}" for x in xs)
        if 'failed' in r: out.append(f"{page.name}: {r['failed']}"); continue
        say("math not typeset", r['untypeset']); say("KaTeX error", r['tex_errors']); say("raw TeX", r['raw_tex'])
        say("shortcode left as text", r['shortcodes'])
        say("image not loaded", r['images'])
        say("code block wider than its column at 1280 px", r['wide_code'])
        say("code block without a copy button", r['no_copy'])
        for href in r['links']:
            if re.match(r'[a-z]+:', href) and not href.startswith('file:'): continue   # the web: not checked offline
            path, _, anchor = unquote(href).partition('#')
            target = (page.parent / path).resolve() if path else page
            if not target.exists(): out.append(f"{page.name}: dead link: {href}")
            elif anchor and target.suffix == '.html' and anchor not in ids.get(target.name, set()):
                out.append(f"{page.name}: link to a missing anchor: {href}")
    if names:
        headings = {h for r in found.values() for h in r.get('headings', [])}
        out += [f"no API doc for {mod}.{n}" for n, mod in names.items() if n not in headings]
    return out

def main():
    site = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / '_site'
    if not (site / 'index.html').exists(): sys.exit(f"check_docs: no site in {site}; run python tools/build_docs.py")
    bad = problems(site, api_names())
    print('\n'.join(bad) or f"{len(list(site.glob('*.html')))} pages: no problem found")
    sys.exit(1 if bad else 0)

if __name__ == '__main__': main()
