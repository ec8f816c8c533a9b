"""Write into each notebook the output its `show_result('PATH')` and `show_tables('PATH')` cells give today
(chapter 05b), without running it.

    python tools/refresh_results.py           # after re-measuring a result file
    python tools/refresh_results.py --check   # exit 1 if a stored table differs from its file

A `show_result` cell's output is the file's text as Markdown; Jupyter stores it as an `execute_result` whose
`text/markdown` and `text/plain` hold that text. Re-running the cell stores the same thing; this saves re-executing
notebooks whose other cells take minutes. tests/test_layout.py fails while a stored table differs from its file.
"""
import json, sys
from pathlib import Path
from make_readme import ROOT, shown

def result_output(text: str) -> dict:
    "What Jupyter stores for a cell that returns the Markdown `text`."
    lines = text.splitlines(keepends=True)
    return {'data': {'text/markdown': lines, 'text/plain': lines}, 'execution_count': None, 'metadata': {},
            'output_type': 'execute_result'}

def refresh(nb_path: Path) -> bool:
    "Set the output of every `show_result` cell of the notebook at `nb_path`; True if anything changed."
    nb, changed = json.loads(nb_path.read_text()), False
    for cell in nb['cells']:
        if cell['cell_type'] != 'code' or (text := shown(''.join(cell['source']), nb_path.parent)) is None: continue
        want = [result_output(text)]
        if cell['outputs'] != want: cell['outputs'], changed = want, True
    if changed: nb_path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')
    return changed

if __name__ == '__main__':
    check = '--check' in sys.argv
    stale = []
    for nb_path in sorted((ROOT / 'nbs').glob('*.ipynb')):
        if check:
            before = nb_path.read_text()
            if refresh(nb_path): stale.append(nb_path.name); nb_path.write_text(before)
        elif refresh(nb_path): print(f"refreshed {nb_path.relative_to(ROOT)}")
    if stale: sys.exit(f"stored result tables differ from their files in {', '.join(stale)}: "
                       f"run python tools/refresh_results.py, then nbdev_clean, and commit")
