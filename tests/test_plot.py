"Every run leaves a picture of itself (chapter 05b's curves.png), and `python -m nanorl.plot` draws runs side by side."
import subprocess, sys
from pathlib import Path
from PIL import Image
from nanorl.runlog import CURVES, run_labels

ROOT = Path(__file__).resolve().parent.parent
CONTROL = 'a panel each for reward, held-out (greedy), entropy, seconds per step'

def panels(png: Path) -> str: return Image.open(png).info['Description']

def test_every_run_leaves_its_picture_and_its_last_line_names_it(tmp_path, nanorl_cli):
    p = nanorl_cli('--steps', '3', '--eval_every', '1', '--stop_when_solved', 'false', '--out_dir', str(tmp_path),
                   '--progress', 'false')
    run = tmp_path / 'cartpole_reinforce'
    assert p.returncode == 0, p.stderr[-2000:]
    assert panels(run / CURVES) == f'cartpole_reinforce against step, {CONTROL}', panels(run / CURVES)
    assert p.stdout.strip().splitlines()[-1].endswith(f"; its curves: {run / CURVES}"), p.stdout[-500:]

def test_runs_side_by_side_are_labelled_by_what_differs(tmp_path, nanorl_cli):
    for name, lr in (('a', '0.01'), ('b', '0.02')):
        p = nanorl_cli('--steps', '2', '--lr', lr, '--name', name, '--out_dir', str(tmp_path), '--progress', 'false')
        assert p.returncode == 0, p.stderr[-2000:]
    runs = [tmp_path / 'a', tmp_path / 'b']
    assert run_labels(runs) == ['a (lr=0.01)', 'b (lr=0.02)']
    out = tmp_path / 'ab.png'
    p = subprocess.run([sys.executable, '-m', 'nanorl.plot', *map(str, runs), '--y', 'reward', 'entropy', '--out',
                        str(out)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0 and p.stdout.strip() == str(out), p.stderr[-2000:]
    assert panels(out) == 'a (lr=0.01), b (lr=0.02) against step, a panel each for reward, entropy', panels(out)
    p = subprocess.run([sys.executable, '-m', 'nanorl.plot', str(tmp_path / 'c')], capture_output=True, text=True)
    assert p.returncode == 2 and f"{tmp_path / 'c'} holds no log.csv" in p.stderr, p.stderr
