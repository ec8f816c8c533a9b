("Every committed config runs a step (tests/test_launch.py checks they are what chapter 15 writes); a GPU config "
 "runs here on the CPU, without vLLM, its model swapped like every language config's.")
import hashlib, json
from pathlib import Path
from nanorl.train import Config, load_yaml

ROOT = Path(__file__).resolve().parent.parent

def digest(run: Path) -> dict:
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(run.iterdir())}

def test_every_shipped_config_runs_a_step_and_touches_no_other_run(tmp_path, nanorl_cli, quick_model):
    ("Each config of configs/ for one step through the command line, all into one folder: each says why it ended, "
     "and no run writes into another's directory.")
    pairs = tmp_path / 'pairs.jsonl'
    pairs.write_text(json.dumps({'prompt': 'Using 3, 5, make 8.', 'chosen': '<answer>3+5</answer>',
                                 'rejected': '<answer>3*5</answer>'}) + '\n')
    out, before = tmp_path / 'runs', {}
    for path in sorted((ROOT / 'configs').glob('*.yaml')):
        cfg = Config.from_dict(load_yaml(path))
        extra = ['--steps', '1', '--eval_every', '1', '--stop_when_solved', 'false', '--role', 'local']
        if cfg.task_kind == 'language': extra += ['--model', quick_model, '--n_eval', '8', '--n_prompts', '4']
        if cfg.algo in ('dpo', 'ipo'): extra += ['--data', str(pairs)]
        if cfg.device == 'cuda': extra += ['--device', 'cpu', '--engine', 'hf']
        p = nanorl_cli('--config', str(path), '--out_dir', str(out), '--progress', 'false', *extra)
        assert p.returncode == 0, (path.name, p.stderr[-2000:])
        assert p.stdout.strip().splitlines()[-1].startswith(f"nanorl: finished all 1 steps -> {out / path.stem}"), \
            (path.name, p.stdout[-500:])
        for run, files in before.items(): assert digest(out / run) == files, f"{path.name} touched runs/{run}"
        before[path.stem] = digest(out / path.stem)
    p = nanorl_cli('--config', 'configs/cartpole_ppo.yaml', '--out_dir', str(out), '--steps', '1')
    assert p.returncode == 2 and 'already holds a run' in p.stderr and '--overwrite true' in p.stderr, p.stderr
    assert digest(out / 'cartpole_ppo') == before['cartpole_ppo']
