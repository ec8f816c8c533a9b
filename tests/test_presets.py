("Every committed config runs a step (tests/test_launch.py checks they are what chapter 15 writes); a GPU config "
 "runs here on the CPU, without vLLM, its model swapped like every language config's.")
import hashlib, json
from pathlib import Path
import pytest
from nanorl.train import Config, load_yaml

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted((ROOT / 'configs').glob('*.yaml'))

def digest(run: Path) -> dict:
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(run.iterdir())}

def neighbours(out: Path, but: str) -> dict:
    "A folder per other config, as its run would name it, each holding a file: what no run may touch."
    for p in CONFIGS:
        if p.stem != but:
            (out / p.stem).mkdir(parents=True)
            (out / p.stem / 'log.csv').write_text(f'step\n0\n# {p.stem}\n')
    return {d.name: digest(d) for d in out.iterdir()}

@pytest.mark.parametrize('path', CONFIGS, ids=[p.stem for p in CONFIGS])
def test_shipped_config_runs_a_step_and_touches_no_other_run(path, tmp_path, nanorl_cli, quick_model):
    ("A config of configs/ for one step through the command line, into a folder that holds every other config's "
     "run folder: it says why it ended, writes only its own folder, and leaves the others as they were.")
    pairs = tmp_path / 'pairs.jsonl'
    pairs.write_text(json.dumps({'prompt': 'Using 3, 5, make 8.', 'chosen': '<answer>3+5</answer>',
                                 'rejected': '<answer>3*5</answer>'}) + '\n')
    out = tmp_path / 'runs'
    before = neighbours(out, path.stem)
    cfg = Config.from_dict(load_yaml(path))
    extra = ['--steps', '1', '--eval_every', '1', '--stop_when_solved', 'false', '--role', 'local']
    if cfg.task_kind == 'language': extra += ['--model', quick_model, '--n_eval', '8', '--n_prompts', '4']
    if cfg.algo in ('dpo', 'ipo'): extra += ['--data', str(pairs)]
    if cfg.device == 'cuda': extra += ['--device', 'cpu', '--engine', 'hf']
    p = nanorl_cli('--config', str(path), '--out_dir', str(out), '--progress', 'false', *extra)
    assert p.returncode == 0, (path.name, p.stderr[-2000:])
    assert p.stdout.strip().splitlines()[-1].startswith(f"nanorl: finished all 1 steps -> {out / path.stem}"), \
        (path.name, p.stdout[-500:])
    assert {d.name for d in out.iterdir()} == set(before) | {path.stem}
    for run, files in before.items(): assert digest(out / run) == files, f"{path.name} touched runs/{run}"

def test_a_second_run_into_a_used_folder_is_refused(tmp_path, nanorl_cli):
    out = tmp_path / 'runs'
    args = ['--config', 'configs/cartpole_ppo.yaml', '--out_dir', str(out), '--steps', '1']
    p = nanorl_cli(*args, '--progress', 'false')
    assert p.returncode == 0, p.stderr[-2000:]
    done = digest(out / 'cartpole_ppo')
    p = nanorl_cli(*args)
    assert p.returncode == 2 and 'already holds a run' in p.stderr and '--overwrite true' in p.stderr, p.stderr
    assert digest(out / 'cartpole_ppo') == done
