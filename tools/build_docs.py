"""Build the docs site offline, without Quarto: nbdev's pre-processing, then pandoc with a local KaTeX, then Pagefind.

    python tools/build_docs.py                 # nbdev's pre-processing into _proc/, then the site into _site/
    python tools/build_docs.py --no-proc       # reuse _proc/ (after a notebook change, run without it)
    python tools/build_docs.py --out DIR       # the site elsewhere
    python -m http.server -d _site             # read it at http://localhost:8000 (search needs it served)

The published site is Quarto's (`nbdev_docs` on a machine that has Quarto, from `nbs/_quarto.yml`); this script makes
the same pages from the same pre-processed notebooks so that a machine without Quarto can build and check them
(`tests/test_docs.py` opens every page in headless Chromium). Pages come in the sidebar order of `nbs/_quarto.yml`
(nbdev copies it into _proc/), each named as Quarto names it (`output-file` in the notebook's front matter), with
links between notebooks pointing at those pages and links to other files of the repository pointing at the repository
on GitHub. A code cell's stored outputs follow it (its code too, unless `#| echo: false`); a Markdown output is page
text, so a `show_result` cell (chapter 05b) shows its result file's table as Jupyter and GitHub do. Math is typeset
in the browser by KaTeX copied from a local folder (Debian's `libjs-katex`), so the site needs no network.
Each page has a search box (Pagefind's index and UI, static files made here by the binary of the `pagefind[bin]`
wheel), a link to the previous and the next page at its foot, a copy button on every code block and a link on every
section heading; a section whose heading JupyterLab opens folded (an aside) comes folded in a `<details>`; code
scrolls inside its block (it keeps Python's indentation), outputs wrap in the column, a dark
page follows the reader's setting, every figure has alt text, and below 800 px the sidebar folds into a menu above the
text (tools/docs/site.css and site.js).
Needs `pandoc` (Debian's `pandoc`).
"""
import argparse, ast, base64, configparser, html, json, re, shutil, subprocess, sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tools'))

KATEX_DIRS = [Path('/usr/share/javascript/katex'), Path('/usr/share/nodejs/katex/dist')]
LINK = re.compile(r'(\]\()([^)\s]+)(\))')
ASSETS = ROOT / 'tools/docs'   # site.css and site.js, copied into the site

def sidebar(quarto: Path) -> list:
    "(section or None, notebook name) in the order of `_quarto.yml`'s sidebar."
    def walk(items, section=None):
        for it in items:
            if isinstance(it, str): yield section, it
            else: yield from walk(it.get('contents', []), it.get('section'))
    return list(walk(yaml.safe_load(quarto.read_text())['website']['sidebar']['contents']))

def front_matter(nb: dict) -> tuple[dict, list]:
    "The YAML front matter nbdev puts in a raw first cell (title, description, output-file), and the other cells."
    cells = nb['cells']
    if cells and cells[0]['cell_type'] == 'raw' and ''.join(cells[0]['source']).startswith('---'):
        return yaml.safe_load(''.join(cells[0]['source']).strip().strip('-')) or {}, cells[1:]
    return {}, cells

def directives(src: str) -> tuple[dict, str]:
    "Quarto's `#| key: value` lines of a code cell, and the code without them."
    lines = src.split('\n')
    dirs = {}
    while lines and lines[0].startswith('#|'):
        k, _, v = lines.pop(0)[2:].partition(':')
        dirs[k.strip()] = v.strip()
    return dirs, '\n'.join(lines).strip()

def fence(text: str, cls: str = '') -> str:
    "A fenced block long enough to hold any backticks in `text`."
    ticks = '`' * max(3, max((len(m) for m in re.findall(r'`+', text)), default=0) + 1)
    return f"{ticks}{cls}\n{text.rstrip()}\n{ticks}"

def png_description(data: bytes) -> str:
    "The PNG's own description (a `tEXt` chunk named Description, as chapter 05b's pictures carry), or ''."
    pos = 8                                             # past the signature: chunks of length, type, body, CRC
    while pos + 8 <= len(data):
        size, kind = int.from_bytes(data[pos:pos + 4], 'big'), data[pos + 4:pos + 8]
        key, _, text = data[pos + 8:pos + 8 + size].partition(b'\x00')
        if kind == b'tEXt' and key == b'Description': return text.decode('latin-1')
        pos += 12 + size
    return ''

LABEL = re.compile(r"""(?:set_title|suptitle|title|set_xlabel|set_ylabel|xlabel|ylabel)(?:\(\s*|=)(f?)(['"].*?['"])""")

def plain(text: str) -> str:
    "Markdown and LaTeX read aloud: links by their text, `\\theta_{old}` as theta_old, no backticks, stars or dollars."
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)
    text = re.sub(r'\\([a-zA-Z]+)', r'\1', text)
    return ' '.join(re.sub(r'[`*${}\\]', '', text).split())

def label_text(f: str, literal: str) -> str:
    "A title or axis label as the figure shows it: the string literal's value, an f-string's fields left out."
    if f: return plain(re.sub(r'\{[^{}]*\}', '', literal[1:-1]))
    try: return plain(ast.literal_eval(literal).replace('\n', ' '))
    except (ValueError, SyntaxError): return plain(literal[1:-1])

def figure_alt(code: str, before: str, given: str = '') -> str:
    ("Alt text for a figure a cell draws: the cell's `#| fig-alt:` (`given`), else the sentence before the cell when "
     "it announces the figure (it ends with a colon) and the titles and axis labels the code sets; '' when none.")
    if given: return given.strip('"\'')
    last = plain(before.strip().split('\n\n')[-1]) if before.strip() else ''
    intro = re.split(r'(?<=[.!?])\s+', last)[-1] if last.endswith(':') else ''
    labels = list(dict.fromkeys(x for m in LABEL.finditer(code) if (x := label_text(m[1], m[2]))))
    return ' '.join(filter(None, [intro, f"Titles and axes: {'; '.join(labels)}." if labels else '']))[:400]

def output_md(out: dict, save_image, alt: str = '') -> str:
    ("One stored output as markdown: figures as image files with alt text (their own, else `alt`), markdown as is, "
     "anything else as text.")
    kind = out['output_type']
    if kind == 'stream': return fence(''.join(out['text']), ' {.output}')
    if kind == 'error': return fence('\n'.join(out.get('traceback', [])), ' {.output}')
    data = out.get('data', {})
    if 'image/png' in data:
        png = base64.b64decode(''.join(data['image/png']))
        alt = png_description(png) or alt or 'a figure the code above draws'
        return f'<img src="{save_image(png)}" alt="{html.escape(alt)}">'
    if 'text/markdown' in data:
        return ''.join(data['text/markdown'])
    if 'text/html' in data: return fence(''.join(data['text/html']), '{=html}')
    if 'text/plain' in data: return fence(''.join(data['text/plain']), ' {.output}')
    return ''

# JupyterLab's mark of a heading whose section opens folded; the site folds it too, in a <details>: an aside, such as
# engineering a reader may skip, that ends at the next markdown cell starting with a heading of its level or above
FOLDED = 'jp-MarkdownHeadingCollapsed'

def heading(src: str) -> tuple[int | None, str]:
    "The level and text of the heading a markdown cell starts with, or (None, '')."
    m = re.match(r'(#{1,6})\s+(.*)', src)
    return (len(m[1]), m[2].strip()) if m else (None, '')

class Site:
    "Pages of one build: which notebook becomes which page, and how a link from a notebook reads on the site."
    def __init__(self, nbs: Path, pages: dict, git_url: str, doc_url: str = ''):
        self.nbs, self.pages, self.git_url, self.doc_url = nbs, pages, git_url.rstrip('/'), doc_url.rstrip('/')

    def link(self, target: str, base: Path) -> str:
        "A markdown link target from a notebook whose links are relative to `base`, as it reads on the site."
        if re.match(r'[a-z]+:', target) or target.startswith('#'): return target
        path, _, anchor = target.partition('#')
        full = (base / path).resolve()
        in_nbs = full.parent in (self.nbs.resolve(), (ROOT / 'nbs').resolve())
        if full.suffix == '.ipynb' and in_nbs:   # a notebook the site lacks keeps a page name, and reads as dead
            return self.pages.get(full.name, full.stem + '.html') + (f'#{anchor}' if anchor else '')
        try: rel = full.relative_to(ROOT)
        except ValueError: return target
        return f"{self.git_url}/blob/main/{rel.as_posix()}" + (f'#{anchor}' if anchor else '')

    def markdown(self, cells: list, base: Path, save_image) -> str:
        "The page's markdown: markdown cells with links rewritten, code and its outputs, asides folded."
        parts, folded = [], []       # folded: the levels of the headings whose sections are open in a <details>
        before = ''                  # the last markdown cell, which announces what the next figure shows
        for c in cells:
            src = ''.join(c['source'])
            if c['cell_type'] == 'markdown':
                before = src
                level, title = heading(src)
                while level and folded and level <= folded[-1]: parts.append('</details>'); folded.pop()
                if level and c.get('metadata', {}).get(FOLDED):
                    parts.append(f'<details class="aside">\n<summary>{html.escape(title)} <span>(an aside: open it '
                                 f'to read)</span></summary>')
                    folded.append(level)
                parts.append(LINK.sub(lambda m: m[1] + self.link(m[2], base) + m[3], src))
            elif c['cell_type'] == 'code':
                dirs, code = directives(src)
                if 'hide' in dirs or dirs.get('include') == 'false': continue
                if code and dirs.get('echo') != 'false': parts.append(fence(code, 'python'))
                if dirs.get('output') != 'false':
                    alt = figure_alt(code, before, dirs.get('fig-alt', ''))
                    parts += [o for o in (output_md(o, save_image, alt) for o in c.get('outputs', [])) if o]
        parts += ['</details>'] * len(folded)
        md = '\n\n'.join(parts) + '\n'
        # nbdev links names to their API entry on the published site; here they point at this build's own pages
        return md.replace(self.doc_url + '/', '') if self.doc_url else md

def nav_html(order: list, pages: dict, titles: dict, current: str, site_title: str) -> str:
    "The site's header (its name and the search box) and the sidebar: the chapters, a menu to unfold on a phone."
    items, section = [], None
    for sec, nb in order:
        if sec != section:
            if section: items.append('</ul></li>')
            if sec: items.append(f'<li>{html.escape(sec)}<ul>')
            section = sec
        cls = ' class="current"' if nb == current else ''
        items.append(f'<li><a href="{pages[nb]}"{cls}>{html.escape(titles[nb])}</a></li>')
    if section: items.append('</ul></li>')
    return (f'<header class="site"><a class="home" href="{pages[order[0][1]]}">{html.escape(site_title)}</a>'
            '<div id="search"></div></header>\n'
            '<nav class="sidebar"><details open><summary>Chapters</summary><ul>' + ''.join(items) +
            '</ul></details></nav>\n')

def pager_html(order: list, pages: dict, titles: dict, current: str) -> str:
    "Links to the previous and the next page in the sidebar's order (none before the first, none after the last)."
    names = [nb for _, nb in order]
    i = names.index(current)
    link = lambda nb, rel, text: f'<a class="{rel}" rel="{rel}" href="{pages[nb]}">{text}</a>'
    prev = link(names[i - 1], 'prev', f'&larr; {html.escape(titles[names[i - 1]])}') if i > 0 else ''
    nxt = link(names[i + 1], 'next', f'{html.escape(titles[names[i + 1]])} &rarr;') if i + 1 < len(names) else ''
    return f'<nav class="pager" data-pagefind-ignore>{prev}{nxt}</nav>\n'

FAVICON = ("data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><rect width='16' "
           "height='16' rx='3' fill='%23234'/><text x='8' y='12' font-size='10' text-anchor='middle' fill='white' "
           "font-family='sans-serif'>RL</text></svg>")
HEAD = ('<script defer src="pagefind/pagefind-ui.js"></script>\n<script defer src="site.js"></script>\n'
        f'<link rel="icon" href="{FAVICON}">\n')

def render(md: str, meta: dict, nav: str, pager: str, out: Path, work: Path):
    "One page through pandoc: standalone HTML5, the table of contents, KaTeX from the site's own katex/ folder."
    src, before, after = (work / (out.stem + ext) for ext in ('.md', '.before.html', '.after.html'))
    head = {'title': meta.get('title', out.stem), 'subtitle': meta.get('description', ''), 'pagetitle':
            meta.get('title', out.stem), 'lang': 'en'}
    src.write_text('---\n' + yaml.safe_dump(head, allow_unicode=True) + '---\n\n' + md)
    before.write_text(nav + '<main data-pagefind-body>\n')   # Pagefind indexes the text, not the sidebar
    after.write_text(pager + '</main>\n')
    (work / 'head.html').write_text(HEAD)
    # raw_tex off: pandoc would drop TeX written outside $...$ from the page without a word; kept, the check sees it
    subprocess.run(['pandoc', str(src), '-f', 'markdown-raw_tex', '-t', 'html5', '-s', '--katex=katex/', '--toc',
                    '--toc-depth=2', '-c', 'pagefind/pagefind-ui.css', '-c', 'site.css', '--include-in-header',
                    str(work / 'head.html'), '--include-before-body', str(before), '--include-after-body', str(after),
                    '-o', str(out)], check=True)

def pagefind() -> str | None:
    "The Pagefind binary that the `pagefind[bin]` wheel installs, or None."
    try: from pagefind.service import get_executable
    except ImportError: return None
    exe = get_executable()
    return str(exe) if exe else None

def index(out: Path):
    "Pagefind's search index and its UI into `out`/pagefind/: static files, searched in the reader's browser."
    subprocess.run([pagefind(), '--site', str(out), '--exclude-selectors', '#TOC', '--silent'], check=True)

def katex_dir(given: str | None) -> Path:
    for d in ([Path(given)] if given else KATEX_DIRS):
        if (d / 'katex.min.js').exists(): return d
    sys.exit("build_docs: no local KaTeX found (looked in " + ', '.join(map(str, KATEX_DIRS)) + "); install Debian's "
             "libjs-katex (apt-get install libjs-katex) or pass --katex DIR, a folder with katex.min.js")

def build(out: Path, proc: bool = True, katex: str | None = None, notebooks: Path | None = None) -> list:
    "Build the site into `out`; returns the pages written. `notebooks` overrides `_proc` (for tests)."
    if shutil.which('pandoc') is None: sys.exit("build_docs: pandoc is missing; install it (apt-get install pandoc)")
    if pagefind() is None: sys.exit("build_docs: Pagefind is missing; pip install 'pagefind[bin]' (the dev extra)")
    kdir = katex_dir(katex)
    if proc and notebooks is None:
        from nbdev.serve import proc_nbs   # what nbdev_proc_nbs runs, without its Quarto install and pip install -e
        proc_nbs(ROOT / 'nbs', n_workers=2)
    src = notebooks or ROOT / '_proc'
    cfg = configparser.ConfigParser(); cfg.read(ROOT / 'settings.ini')
    order = sidebar(src / '_quarto.yml') if (src / '_quarto.yml').exists() else \
        [(None, p.name) for p in sorted(src.glob('*.ipynb'))]
    nbs = {name: json.loads((src / name).read_text()) for _, name in order}
    parsed = {name: front_matter(nb) for name, nb in nbs.items()}   # (front matter, the other cells)
    metas = {name: meta for name, (meta, _) in parsed.items()}
    pages = {name: m.get('output-file', Path(name).stem + '.html') for name, m in metas.items()}
    clash = {p: [n for n in pages if pages[n] == p] for p in pages.values() if list(pages.values()).count(p) > 1}
    if clash: sys.exit("build_docs: notebooks that become the same page (Quarto names a page after the notebook "
                       "without its number): " + '; '.join(f"{' and '.join(ns)} -> {p}" for p, ns in clash.items()) +
                       "; rename one")
    titles = {name: m.get('title', name) for name, m in metas.items()}
    d = cfg['DEFAULT']
    site = Site(src, pages, d.get('git_url', ''), d.get('doc_host', '') + d.get('doc_baseurl', ''))
    if out.exists(): shutil.rmtree(out)
    (out / 'figures').mkdir(parents=True)
    shutil.copytree(kdir, out / 'katex', ignore=shutil.ignore_patterns('*.mjs', 'contrib'))
    (out / 'katex/contrib').mkdir(); shutil.copy(kdir / 'contrib/auto-render.js', out / 'katex/contrib')
    for f in ('site.css', 'site.js'): shutil.copy(ASSETS / f, out / f)
    work = out / '.work'; work.mkdir()
    for name in pages:
        page = Path(pages[name]).stem
        def save_image(data: bytes, n=[0]) -> str:
            n[0] += 1
            (out / 'figures' / f'{page}-{n[0]}.png').write_bytes(data)
            return f'figures/{page}-{n[0]}.png'
        base = ROOT if name == 'index.ipynb' else src   # index's links are the README's: from the repository root
        md = site.markdown(parsed[name][1], base, save_image)
        render(md, metas[name], nav_html(order, pages, titles, name, d.get('title', 'nanoRL')),
               pager_html(order, pages, titles, name), out / pages[name], work)
    shutil.rmtree(work)
    index(out)
    return [out / p for p in pages.values()]

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', default=str(ROOT / '_site'))
    ap.add_argument('--no-proc', action='store_true', help="reuse _proc/ from an earlier run")
    ap.add_argument('--katex', default=None, help='a folder with katex.min.js (default: Debian libjs-katex)')
    args = ap.parse_args()
    pages = build(Path(args.out), proc=not args.no_proc, katex=args.katex)
    print(f"{len(pages)} pages in {args.out}; read them served (search needs it): python -m http.server -d {args.out}")

if __name__ == '__main__': main()
