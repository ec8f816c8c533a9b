"""The package reads in chapter order: no module imports a module of a later chapter, anywhere in its body.

A module's chapter is the notebook that nbdev wrote it from (the `File to edit: ../nbs/NN_name.ipynb` line at its
top); notebooks are read in the order of their file names, which is the numbering of the chapters.
Repository-wide checks of the notebooks follow: the sidebar, links, what the docs build runs, stored outputs, and
measured results shown by `show_result` cells (never Quarto include shortcodes), each equal to its file."""
import ast, json, re, subprocess, sys
from pathlib import Path
import nanorl

PKG = Path(nanorl.__file__).parent
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'tools'))
from make_readme import cell_text, result_path, shown, shown_path

def chapter_of(path: Path) -> str:
    m = re.search(r'File to edit: \.\./nbs/(\S+?)\.ipynb', path.read_text())
    assert m, f"{path.name} has no nbdev header naming its notebook"
    return m.group(1)

def imported_modules(path: Path) -> set[str]:
    "Every nanorl module `path` imports, at top level or inside a function or class."
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split('.')[1] for a in node.names if a.name.startswith('nanorl.')}
        elif isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module: found.add(node.module.split('.')[0])
            elif node.level == 1: found |= {a.name for a in node.names}
            elif node.module and node.module.startswith('nanorl.'): found.add(node.module.split('.')[1])
            elif node.module == 'nanorl': found |= {a.name for a in node.names}
    return found

def upward_imports(pkg: Path = PKG) -> list[str]:
    modules = {p.stem: p for p in pkg.glob('*.py') if not p.stem.startswith('_')}
    chapter = {name: chapter_of(p) for name, p in modules.items()}
    return [f"{name} ({chapter[name]}) imports {other} ({chapter[other]})"
            for name, p in sorted(modules.items()) for other in sorted(imported_modules(p) & set(modules))
            if chapter[other] > chapter[name]]

def test_no_module_imports_a_later_chapter():
    assert upward_imports() == []

def test_the_check_catches_an_upward_import(tmp_path):
    "A copy of the package with one import from chapter 01 up to the command line must fail the check."
    for p in PKG.glob('*.py'): (tmp_path / p.name).write_text(p.read_text())
    core = tmp_path / 'core.py'
    core.write_text(core.read_text() + "\n\ndef _late():\n    from nanorl.train import main  # reaches up\n")
    assert upward_imports(tmp_path) == ['core (01_core) imports train (90_cli)']

def test_a_cartpole_run_never_imports_transformers(tmp_path):
    code = ("import sys; from nanorl.train import main; main(['--steps', '1', '--progress', 'false', '--out_dir', "
            "sys.argv[1]]); print(sorted(m for m in ('transformers', 'peft', 'datasets') if m in sys.modules))")
    out = subprocess.run([sys.executable, '-c', code, str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == '[]'

def test_there_is_one_quarto_yml():
    """nbdev 2 reads nbs/_quarto.yml: nbdev_docs, nbdev_preview and nbdev_proc_nbs copy it into _proc/, where Quarto
    and tools/build_docs.py read it (and write nbdev's default one in nbs/ if it is missing). A second copy, or a link
    to one, is read by nothing but itself and would let the two drift apart."""
    found = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard', '--', '_quarto.yml',
                            '*/_quarto.yml'], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert [f for f in found if (ROOT / f).exists()] == ['nbs/_quarto.yml'], found
    assert not (ROOT / 'nbs/_quarto.yml').is_symlink()

def test_the_docs_sidebar_lists_every_notebook_once():
    "The site's sidebar (`nbs/_quarto.yml`) names each notebook in nbs/ exactly once, and nothing that is not there."
    listed = re.findall(r'^\s*- (\S+\.ipynb)\s*$', (ROOT / 'nbs/_quarto.yml').read_text(), re.M)
    have = sorted(p.name for p in (ROOT / 'nbs').glob('*.ipynb'))
    assert sorted(listed) == have, (sorted(set(listed) ^ set(have)), [n for n in listed if listed.count(n) > 1])

def test_every_link_between_notebooks_points_at_a_notebook():
    """Markdown links from one notebook to another (`[chapter 05c](05c_train.ipynb)`) name files that exist in nbs/.
    index.ipynb is also README.md, at the repository's root, so its links start from there (`nbs/01_core.ipynb`)."""
    dead = []
    for nb in sorted((ROOT / 'nbs').glob('*.ipynb')):
        for cell in json.loads(nb.read_text())['cells']:
            if cell['cell_type'] != 'markdown': continue
            for target in re.findall(r'\]\(([^)\s#]+\.ipynb)(?:#[^)]*)?\)', ''.join(cell['source'])):
                base = ROOT if nb.name == 'index.ipynb' else nb.parent
                if not (base / target).resolve().is_file(): dead.append(f"{nb.name}: {target}")
    assert not dead, dead

def docs_build_runs(nb: Path) -> list[str]:
    "Cells that nbdev's docs pre-processing would run beyond imports, exports and show_doc: the start of each."
    import warnings
    from nbdev.process import NBProcessor
    from nbdev.processors import _do_eval
    out = []
    for i, c in enumerate(NBProcessor(nb, procs=[]).nb.cells):   # the processor parses each cell's directives
        if c.cell_type != 'code' or not c.source.strip(): continue
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')   # nbdev warns about exactly the cells this test reports
            runs = _do_eval(c)
        if not runs or c.directives_.keys() & {'export', 'exports', 'exporti', 'exec_doc'}: continue
        body = ast.parse(c.source).body
        if not all(isinstance(t, (ast.Import, ast.ImportFrom)) or (isinstance(t, ast.Expr) and isinstance(
                t.value, ast.Call) and getattr(t.value.func, 'id', '') == 'show_doc') for t in body):
            out.append(f"{nb.name} cell {i}: {c.source.strip().splitlines()[-1][:60]}")
    return out

def test_the_docs_build_runs_no_chapter_code():
    "An import beside other code would run that code (or fail with a NameError) when nbdev builds the docs."
    assert [r for nb in sorted((ROOT / 'nbs').glob('*.ipynb')) for r in docs_build_runs(nb)] == []

def test_the_docs_check_catches_an_import_beside_code(tmp_path):
    nb = {'cells': [{'cell_type': 'code', 'metadata': {}, 'outputs': [], 'execution_count': None,
                     'source': 'import math\ntrain_for_an_hour(math.pi)'}], 'metadata': {}, 'nbformat': 4,
          'nbformat_minor': 5}
    (tmp_path / 'x.ipynb').write_text(json.dumps(nb))
    assert docs_build_runs(tmp_path / 'x.ipynb') == ['x.ipynb cell 0: train_for_an_hour(math.pi)']

def output_noise(nb: Path) -> list[str]:
    "Stored outputs a reader should not see: anything on stderr (warnings), errors, and outputs with nothing in them."
    found = []
    for i, c in enumerate(json.loads(nb.read_text())['cells']):
        for o in c.get('outputs', []):
            kind, where = o['output_type'], f"{nb.name} cell {i}"
            text = ''.join(o.get('text', '')) if kind == 'stream' else ''
            if kind == 'error': found.append(f"{where}: an error, {o.get('ename')}")
            elif kind == 'stream' and o.get('name') == 'stderr': found.append(f"{where}: stderr, {text.strip()[:80]!r}")
            elif kind == 'stream' and not text.strip(): found.append(f"{where}: a blank output")
            elif kind in ('execute_result', 'display_data') and not any(
                    ''.join(v).strip() for v in o.get('data', {}).values()):
                found.append(f"{where}: a blank output")
    return found

def test_no_warnings_or_blank_outputs_in_stored_outputs():
    assert [n for nb in sorted((ROOT / 'nbs').glob('*.ipynb')) for n in output_noise(nb)] == []

def test_the_output_check_catches_a_warning_and_a_blank_output(tmp_path):
    outputs = [{'output_type': 'stream', 'name': 'stderr', 'text': ['x.py:3: FutureWarning: old\n']},
               {'output_type': 'stream', 'name': 'stdout', 'text': ['\n']},
               {'output_type': 'stream', 'name': 'stdout', 'text': ['accuracy 0.5\n']}]
    nb = {'cells': [{'cell_type': 'code', 'metadata': {}, 'outputs': outputs, 'execution_count': None, 'source': ''}],
          'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}
    (tmp_path / 'x.ipynb').write_text(json.dumps(nb))
    assert output_noise(tmp_path / 'x.ipynb') == ["x.ipynb cell 0: stderr, 'x.py:3: FutureWarning: old'",
                                                  'x.ipynb cell 0: a blank output']

def includes(nb: Path) -> list[str]:
    "Quarto include shortcodes in a notebook: Jupyter and GitHub show them as raw text, where the result belongs."
    return [f"{nb.name} cell {i}: {m}" for i, c in enumerate(json.loads(nb.read_text())['cells'])
            for m in re.findall(r'\{\{<\s*include\b[^}]*\}\}', ''.join(c['source']))]

def calls_show_result(src: str) -> bool:
    try: tree = ast.parse('\n'.join(l for l in src.splitlines() if not l.startswith('#|')))
    except SyntaxError: return False
    return any(isinstance(n, ast.Call) and getattr(n.func, 'id', '') == 'show_result' for n in ast.walk(tree))

def stale_results(nb: Path) -> list[str]:
    """`show_result('PATH')` cells whose stored output is not the file PATH names (relative to the notebook's folder),
    and cells that call `show_result` otherwise (the README and this check read only a call of its own, PATH a
    string). Chapter 05b, which defines it, calls it on files of its own tests."""
    out = []
    for i, c in enumerate(json.loads(nb.read_text())['cells']):
        src = ''.join(c['source'])
        if c['cell_type'] != 'code': continue
        if (path := shown_path(src)) is None:
            if nb.name != '05b_runlog.ipynb' and calls_show_result(src):
                out.append(f"{nb.name} cell {i}: show a result with a cell of its own, show_result('PATH')")
            continue
        where, f = f"{nb.name} cell {i} ({path})", nb.parent / path
        if not f.is_file(): out.append(f"{where}: no such file"); continue
        text = shown(src, nb.parent)
        stored = [(o['output_type'], ''.join(o.get('data', {}).get('text/markdown', '')),
                   ''.join(o.get('data', {}).get('text/plain', ''))) for o in c.get('outputs', [])]
        if stored != [('execute_result', text, text)]:
            out.append(f"{where}: the stored output is not the file's text; run python tools/refresh_results.py and "
                       f"nbdev_clean")
    return out

def test_results_are_shown_by_code_cells_not_includes():
    nbs = sorted((ROOT / 'nbs').glob('*.ipynb'))
    assert [x for nb in nbs for x in includes(nb)] == []
    assert [x for nb in nbs for x in stale_results(nb)] == []
    showing = [nb.name for nb in nbs for c in json.loads(nb.read_text())['cells'] if shown_path(''.join(c['source']))]
    assert {'index.ipynb', '09_prefs.ipynb', '10_grpo_lm.ipynb', '10a_supervision.ipynb',
            '12b_serve.ipynb'} <= set(showing), showing

def test_the_result_checks_catch_an_include_and_a_stale_table(tmp_path):
    (tmp_path / 'bench').mkdir(); (tmp_path / 'nbs').mkdir()
    (tmp_path / 'bench/r.md').write_text('| seed | final |\n|---|---|\n| 0 | 0.164 |\n')
    def shown(text, kind='execute_result'):
        return [{'output_type': kind, 'metadata': {}, 'data': {'text/markdown': [text], 'text/plain': [text]},
                 **({'execution_count': None} if kind == 'execute_result' else {})}]
    def cell(src, outputs=None):
        return {'cell_type': 'code' if outputs is not None else 'markdown', 'metadata': {}, 'source': src,
                **({'outputs': outputs, 'execution_count': None} if outputs is not None else {})}
    fresh, old = '| seed | final |\n|---|---|\n| 0 | 0.164 |', '| seed | final |\n|---|---|\n| 0 | 0.109 |'
    cells = [cell('Measured:\n\n{{< include ../bench/r.md >}}\n\nA gain.'),
             cell("#| echo: false\nshow_result('../bench/r.md')", shown(fresh)),            # as it should be
             cell("#| echo: false\nshow_result('../bench/r.md')", shown(old)),              # re-measured since
             cell("#| echo: false\nshow_result('../bench/r.md')", []),                      # never run
             cell("#| echo: false\nshow_result('../bench/r.md')", shown(fresh) * 2),        # shown twice
             cell("show_result('../bench/none.md')", []),
             cell("x = 1\nshow_result('../bench/r.md')", [])]
    nb = tmp_path / 'nbs/x.ipynb'
    nb.write_text(json.dumps({'cells': cells, 'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}))
    assert includes(nb) == ['x.ipynb cell 0: {{< include ../bench/r.md >}}']
    stale = ": the stored output is not the file's text; run python tools/refresh_results.py and nbdev_clean"
    assert stale_results(nb) == [f"x.ipynb cell {i} (../bench/r.md){stale}" for i in (2, 3, 4)] + [
        "x.ipynb cell 5 (../bench/none.md): no such file",
        "x.ipynb cell 6: show a result with a cell of its own, show_result('PATH')"]

def test_the_readme_shows_a_result_cell_as_its_file(tmp_path):
    table = '| seed | final |\n|---|---|\n| 0 | 0.164 |'
    (tmp_path / 'r.md').write_text(table + '\n')
    code = lambda src: {'cell_type': 'code', 'source': src, 'outputs': []}
    assert cell_text(code("#| echo: false\nshow_result('r.md')"), tmp_path) == table    # the file, not the call
    assert cell_text(code("#| echo: false\nax = plot_runs(['r'])"), tmp_path) is None     # a figure: docs site only
    assert cell_text(code("show_result('r.md'); n = 1"), tmp_path) == "```python\nshow_result('r.md'); n = 1\n```"
    assert [result_path(s) for s in ("show_result(path)", "show_result('r.md', 1)", "print('r.md')")] == [None] * 3

ABSOLUTE = re.compile(r'(?<![\w.$~-])/(?:tmp|root|home|work|Users|var/folders)/[^\s`\'"),;\\]*')

SHOWS = {'print', 'display'}      # these show wherever they run; anything else only as the cell's last expression

def shows(src: str) -> bool:
    ("Whether a code cell prints or draws when it runs: a call of `print`, `display` or `plt.*` outside a function "
     "or class, or a last statement that is an expression Jupyter would show (`show_doc(f)`, a value).")
    code = '\n'.join(l for l in src.splitlines() if not l.lstrip().startswith(('#|', '%')))
    try: body = ast.parse(code).body
    except SyntaxError: return False
    top = [n for stmt in body if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef)) for n in ast.walk(stmt)]
    for n in top:
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and f.id in SHOWS: return True
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == 'plt': return True
    last = body[-1] if body else None
    if not isinstance(last, ast.Expr): return False
    f = getattr(last.value, 'func', None)
    name = getattr(f, 'id', None) or getattr(f, 'attr', '')
    return not (isinstance(last.value, ast.Call) and (name.startswith(('test_', 'check')) or name in QUIET))

QUIET = {'close', 'stop', 'join', 'remove', 'zero_grad', 'backward', 'sleep', 'rmtree', 'unlink', 'wait'}

def checks_a_solution(src: str) -> bool:
    "Whether a cell runs an exercise's check on its solution (`check_x(solution_x)`), which prints the verdict."
    try: body = ast.parse('\n'.join(l for l in src.splitlines() if not l.startswith('#|'))).body
    except SyntaxError: return False
    return any(isinstance(n, ast.Call) and getattr(n.func, 'id', '').startswith('check_') and n.args
               and getattr(n.args[0], 'id', '').startswith('solution') for stmt in body for n in ast.walk(stmt)
               if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef)))

def unshown(nb: Path) -> list[str]:
    ("Code cells that print or draw (`shows`) with no stored output; hidden and exported cells, and exercise stubs "
     "left for the reader (`raise NotImplementedError`), aside; a hidden cell that checks a solution (GitHub shows "
     "it, and its verdict) counts.")
    out = []
    for i, c in enumerate(json.loads(nb.read_text())['cells']):
        src = ''.join(c['source'])
        flags = ' '.join(l for l in src.splitlines() if l.startswith('#|'))
        if c['cell_type'] != 'code' or c.get('outputs') or 'NotImplementedError' in src: continue
        hidden = any(f in flags for f in ('hide', 'export', 'eval: false'))
        if checks_a_solution(src) or (not hidden and shows(src)):
            out.append(f"{nb.name} cell {i}: {src.strip().splitlines()[-1][:70]}")
    return out

def test_every_cell_that_prints_or_draws_keeps_its_output():
    "GitHub and the docs show the stored output: a cell that prints or draws and has none shows a reader nothing."
    assert [x for nb in sorted((ROOT / 'nbs').glob('*.ipynb')) for x in unshown(nb)] == []

def test_the_output_check_knows_what_shows():
    assert shows("print(1)") and shows("x = 1\nx") and shows("plt.plot([1])") and shows("show_doc(f)")
    assert shows("for i in range(2): print(i)")
    assert not shows("def f():\n    print(1)") and not shows("x = 1") and not shows("test_eq(1, 1)")
    assert not shows("#| hide\nsrv.stop()") and not shows("import os")
    assert checks_a_solution("#| hide\ndef solution_f(x): return x\ncheck_f(solution_f)")
    assert not checks_a_solution("def check_f(f):\n    check_g(solution_f)") and not checks_a_solution("check_f(f)")

HASH = re.compile(r'\bcommit [0-9a-f]{7,40}\b')
HEX = re.compile(r'(?<![\w/.#-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])')
NAMED_HEX = re.compile(r'(sha256|digest|countdown|sft_steps \d+|run)\W{0,8}$')   # weights' digests and run ids

def bare_hashes(text: str) -> list[str]:
    ("Hex words that look like a commit's (git's short hashes have 7 to 12 characters, full ones 40; the weights' "
     "digests here have 16), where no weights digest or run id is named just before them.")
    return [m.group() for m in HEX.finditer(text)
            if len(m.group()) != 16 and not NAMED_HEX.search(text[max(m.start() - 30, 0):m.start()])]

def test_a_bare_hash_is_found_and_a_named_digest_is_not():
    assert bare_hashes('measured at a1ae7d7 on the Xeon') == ['a1ae7d7']
    assert bare_hashes('weights sha256 `04e1c1e5c0a0e781`, seed 1 countdown a4b770acdea45b68') == []
    assert bare_hashes("'run': '3f9a1c2e'") == [] and bare_hashes('a 1024-token row, deadbeef') == []
    assert bare_hashes('| `427211b4dc0d9263` |') == [] and bare_hashes('(commit 89cd778)') == ['89cd778']
    assert bare_hashes('weights sha256 3ad3c951fcfa') == [] and bare_hashes('\n89cd778 was') == ['89cd778']

def output_text(cell: dict) -> str:
    "The text of a cell's stored outputs: streams and every kind of data (an image as its base64)."
    return '\n'.join(''.join(v) for o in cell.get('outputs', [])
                     for v in [o.get('text', ''), *o.get('data', {}).values()] if isinstance(v, (str, list)))

def history(nb: Path) -> list[str]:
    "Commit hashes in what a reader of the notebook sees: its prose and its stored outputs (code aside)."
    found = []
    for i, c in enumerate(json.loads(nb.read_text())['cells']):
        seen = ''.join(c['source']) if c['cell_type'] == 'markdown' else output_text(c)
        found += [f"{nb.name} cell {i}: {m}" for m in HASH.findall(seen) + bare_hashes(seen)]
    return found

def test_no_commit_hash_in_what_readers_see():
    "Result files name their commit; README and chapters show the measurement without it (chapter 05b's result_text)."
    text = (ROOT / 'README.md').read_text()
    readme = [f"README.md: {m}" for m in HASH.findall(text) + bare_hashes(text)]
    assert readme + [x for nb in sorted((ROOT / 'nbs').glob('*.ipynb')) for x in history(nb)] == []

def test_no_path_of_a_machine_in_what_readers_see():
    "README, every notebook (prose, code and outputs) and every result file name paths relative to the repository."
    files = [ROOT / 'README.md', *sorted((ROOT / 'nbs').glob('*.ipynb')),
             *sorted((ROOT / 'bench/results').rglob('*.md'))]
    found = [f"{f.relative_to(ROOT)}: {m}" for f in files for m in ABSOLUTE.findall(f.read_text())]
    assert not found, "absolute paths of a machine (write them relative, as runs/..., $NANORL_CACHE/...):\n" + \
        '\n'.join(found[:20])

def headline_drift(readme: str, root: Path = ROOT) -> list[str]:
    "Each decimal figure of a rung's headline in the README's ladder that its linked result files do not contain."
    out = []
    for line in readme.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) != 5 or not re.fullmatch(r'\d[a-z]?', cells[0]): continue
        files = re.findall(r'\]\(([^)]+\.md)\)', cells[4])
        text = ' '.join((root / f).read_text() for f in files)
        out += [f"rung {cells[0]}: {n} is in none of {files}" for n in re.findall(r'(?<![\w.])\d+\.\d+', cells[2])
                if not files or n not in text]
    return out

def test_the_ladder_quotes_its_result_files(tmp_path):
    "A figure of the README's ladder comes from the result file the row links, so a re-measure cannot leave it stale."
    readme = (ROOT / 'README.md').read_text()
    assert sum(bool(re.match(r'\| \d[a-z]? \|', l)) for l in readme.splitlines()) >= 6
    assert headline_drift(readme) == []
    (tmp_path / 'r.md').write_text('| seed | final |\n|---|---|\n| 0 | 0.164 |\n')
    row = '| 2 | GRPO | held-out accuracy up to {} (seed 0) | [10](nbs/10.ipynb) | [r.md](r.md) |'
    assert headline_drift(row.format('0.164'), tmp_path) == []
    assert headline_drift(row.format('0.199'), tmp_path) == ["rung 2: 0.199 is in none of ['r.md']"]

NUMBER = re.compile(r'(?<![\w.])\d+\.\d+(?![\w.])')

def derived(n: str, pool: list[float]) -> bool:
    "Whether the figure `n` is, at its printed precision, the difference or the ratio of two figures of `pool`."
    digits, x = len(n.split('.')[1]), float(n)
    pool = sorted(set(pool))
    return any(round(abs(a - b), digits) == x or (b and round(a / b, digits) == x) for a in pool for b in pool)

def prose_drift(markdown: str, root: Path = ROOT, outputs: str = '') -> list[str]:
    ("Each decimal figure of a paragraph or list item that cites a result file (`bench/results/...md` or `.csv`) and "
     "is neither in the files it cites (or `outputs`, the notebook's stored outputs) nor the difference or ratio of "
     "two figures of the same paragraph that are; a bound after <, >, \u2264 or \u2265 (p < 0.001) is no measurement.")
    out = []
    for part in re.split(r'\n\s*\n|\n(?=- )', markdown):
        files = re.findall(r'bench/results/[\w/.-]+?\.(?:md|csv)', part)
        if not files: continue
        text = ' '.join((root / f).read_text() for f in files if (root / f).exists()) + ' ' + outputs
        figures = [m for m in NUMBER.finditer(part)
                   if not re.search(r'[<>\u2264\u2265] ?$', part[max(m.start() - 2, 0):m.start()])]
        found = {m.group() for m in figures if re.search(rf'(?<![\d.]){re.escape(m.group())}(?!\d)', text)}
        quoted = [float(n) for n in found]
        out += [f"{m.group()} is in none of {files}: {part[:80]!r}" for m in figures
                if m.group() not in found and not derived(m.group(), quoted)]
    return out

def notebook_prose(nb: Path) -> tuple[str, str]:
    "A notebook's markdown, and the text of its stored outputs."
    cells = json.loads(nb.read_text())['cells']
    return ('\n\n'.join(''.join(c['source']) for c in cells if c['cell_type'] == 'markdown'),
            '\n'.join(output_text(c) for c in cells if c['cell_type'] == 'code'))

def test_every_chapter_and_the_readme_quote_the_results_they_cite():
    ("A figure beside a result file's name comes from that file (or the chapter's own outputs), so a re-measure "
     "cannot leave it stale.")
    found = [f"README.md: {x}" for x in prose_drift((ROOT / 'README.md').read_text())]
    for nb in sorted((ROOT / 'nbs').glob('*.ipynb')):
        prose, outputs = notebook_prose(nb)
        found += [f"{nb.name}: {x}" for x in prose_drift(prose, ROOT, outputs)]
    assert not found, '\n'.join(found)

def test_the_course_page_quotes_its_result_files(tmp_path):
    "Chapter 00's figures come from the result files it cites, so a re-measure cannot leave them stale."
    nb = json.loads((ROOT / 'nbs/00_course.ipynb').read_text())
    prose = '\n\n'.join(''.join(c['source']) for c in nb['cells'] if c['cell_type'] == 'markdown')
    assert 'bench/results/' in prose and prose_drift(prose) == []
    (tmp_path / 'bench/results').mkdir(parents=True)
    (tmp_path / 'bench/results/r.md').write_text('trained for 5.2 (4.9 to 5.6) min\n')
    assert prose_drift('- took 5.2 min (`bench/results/r.md`)', tmp_path) == []
    assert prose_drift('- took 6.1 min (`bench/results/r.md`)\n- 7.5 s, elsewhere', tmp_path) == [
        "6.1 is in none of ['bench/results/r.md']: '- took 6.1 min (`bench/results/r.md`)'"]
    assert prose_drift('5.6 against 4.9 min: 0.7 longer, 1.14 times, p < 0.001 (`bench/results/r.md`)', tmp_path) == []
    assert prose_drift('0.7 min longer (`bench/results/r.md`)', tmp_path) != []   # derived, but from nothing quoted
    assert prose_drift('took 5.3 min (`bench/results/r.md`)', tmp_path, outputs='5.3') == []
    # whole figures only: 0.3 is not in 0.35
    assert prose_drift('took 5.2 min, 0.3 and 5.6 (`bench/results/r.md`)', tmp_path, outputs='15.23 0.35') != []

HISTORY = re.compile(r"\b(sittings?|worktrees?|an earlier run|earlier runs|rehearsal found|the issue that"
                     r"|tried and not kept|in this repository's history)\b", re.I)

def test_prose_tells_results_not_their_history():
    ("No sittings, worktrees, earlier runs or issues in the README or the chapters' prose: result files keep how and "
     "when they were made, and the chapter teaches what the result is.")
    texts = {'README.md': (ROOT / 'README.md').read_text()}
    for nb in sorted((ROOT / 'nbs').glob('*.ipynb')):
        cells = json.loads(nb.read_text())['cells']
        texts[nb.name] = '\n'.join(''.join(c['source']) for c in cells if c['cell_type'] == 'markdown')
    found = [f"{name}: ...{t[max(m.start() - 40, 0):m.end() + 20]}..." for name, t in texts.items()
             for m in HISTORY.finditer(t)]
    assert not found, '\n'.join(found)
    assert HISTORY.search('in two earlier sittings') and not HISTORY.search('`cartpole_presets_sitting1.md`')
    assert HISTORY.search('An earlier run of this cell') and not HISTORY.search("not the repository's history")

def test_folded_asides_nest_and_close():
    "The docs build folds a section whose heading JupyterLab folds; nested asides close in order, at the end too."
    from build_docs import FOLDED, Site
    md = lambda src, fold=False: {'cell_type': 'markdown', 'metadata': {FOLDED: True} if fold else {}, 'source': src}
    cells = [md('## A\n\ntext', True), md('text'), md('### A.1\n\nmore', True), md('## B\n\nb'),
             md('## C\n\nc', True), md('### C.1\n\nc1', True)]
    page = Site(ROOT / 'nbs', {}, 'https://example.org/x').markdown(cells, ROOT / 'nbs', None)
    tags = re.findall(r'<details class="aside">|</details>|^## \w+|^### [\w.]+', page, re.M)
    assert tags == ['<details class="aside">', '## A', '<details class="aside">', '### A.1', '</details>', '</details>',
                    '## B', '<details class="aside">', '## C', '<details class="aside">', '### C.1', '</details>',
                    '</details>'], tags
