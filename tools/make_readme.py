"""Write README.md from nbs/index.ipynb (nbdev_readme needs Quarto, which these machines lack).

    python tools/make_readme.py           # write README.md
    python tools/make_readme.py --check   # exit 1 if README.md differs from what the notebook gives

Markdown cells are copied; code cells are shown as Python blocks unless marked `#| hide` or `#| echo: false` (a
figure drawn for the docs site); outputs are left out, so the README does not depend on who ran the notebook last.
A cell that shows a result file, `show_result('PATH')` (chapter 05b; PATH relative to nbs/), is replaced by the
file's text: the table its stored output holds (tests/test_layout.py checks that the two agree). No notebook uses
Quarto's include shortcode: Jupyter and GitHub would show it as raw text.
Directive lines (`#| ...`) are removed, and the `> summary` line under the title is kept.
"""
import ast, json, re, sys
from pathlib import Path
from nanorl.runlog import result_tables, result_text   # a result file as chapters show it (chapter 05b)

ROOT = Path(__file__).resolve().parent.parent
NB, README = ROOT / 'nbs/index.ipynb', ROOT / 'README.md'

def result_path(src: str, name: str = 'show_result') -> str | None:
    "The PATH of a code cell whose only statement is `name('PATH')` (`show_result` by default; directive lines aside)."
    try: body = ast.parse('\n'.join(l for l in src.splitlines() if not l.startswith('#|'))).body
    except SyntaxError: return None
    if len(body) != 1 or not isinstance(body[0], ast.Expr): return None
    call = body[0].value
    if not isinstance(call, ast.Call) or getattr(call.func, 'id', '') != name: return None
    if call.keywords or len(call.args) != 1: return None
    arg = call.args[0]
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None

SHOWN = {'show_result': result_text, 'show_tables': lambda p: result_tables(result_text(p))}

def shown_path(src: str) -> str | None:
    "The PATH of a cell `show_result('PATH')` or `show_tables('PATH')`, else None."
    return next((p for name in SHOWN if (p := result_path(src, name)) is not None), None)

def shown(src: str, base: Path) -> str | None:
    "What such a cell shows: the result file's text, or only its tables (PATH relative to `base`); else None."
    for name, text in SHOWN.items():
        if (path := result_path(src, name)) is not None: return text(base / path)
    return None

def cell_text(cell, base: Path = NB.parent) -> str | None:
    src = ''.join(cell['source'])
    if cell['cell_type'] == 'markdown': return src
    if (text := shown(src, base)) is not None: return text
    lines = src.splitlines()
    if any(l.replace(' ', '') in ('#|hide', '#|echo:false') for l in lines): return None
    code = '\n'.join(l for l in lines if not l.startswith('#|')).strip()
    return f"```python\n{code}\n```" if code else None

def render() -> str:
    cells = json.loads(NB.read_text())['cells']
    parts = [t for t in map(cell_text, cells) if t]
    return '<!-- generated from nbs/index.ipynb by tools/make_readme.py: edit the notebook, not this file -->\n\n' \
           + '\n\n'.join(parts) + '\n'

if __name__ == '__main__':
    text = render()
    if '--check' in sys.argv:
        if README.read_text() != text: sys.exit("README.md is stale: run python tools/make_readme.py and commit it")
        print("README.md matches nbs/index.ipynb")
    else:
        README.write_text(text)
