"""The package reads in chapter order: no module imports a module of a later chapter, anywhere in its body.

A module's chapter is the notebook that nbdev wrote it from (the `File to edit: ../nbs/NN_name.ipynb` line at its
top); notebooks are read in the order of their file names, which is the numbering of the chapters."""
import ast, json, re, subprocess, sys
from pathlib import Path
import nanorl

PKG = Path(nanorl.__file__).parent
ROOT = Path(__file__).resolve().parent.parent

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

def test_the_docs_sidebar_lists_every_notebook_once():
    "The site's sidebar (`_quarto.yml`) names each notebook in nbs/ exactly once, and nothing that is not there."
    listed = re.findall(r'^\s*- (\S+\.ipynb)\s*$', (ROOT / '_quarto.yml').read_text(), re.M)
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
