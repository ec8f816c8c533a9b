"Every shipped CartPole config solves the task (greedy mean return >= 475 over 20 episodes) within its step budget."
import math
from pathlib import Path
import pytest
from nanorl.train import PRESETS, from_dict, load_yaml, read_log, train

ROOT = Path(__file__).resolve().parent.parent

@pytest.mark.parametrize('algo', list(PRESETS))
def test_every_algorithm_solves_cartpole(algo, tmp_path):
    cfg = from_dict({**load_yaml(ROOT / f'configs/cartpole_{algo}.yaml'), 'out_dir': str(tmp_path), 'progress': False})
    last = train(cfg)
    log = read_log(cfg.run_dir)
    evals = [v for v in log['eval_return'] if not math.isnan(v)]
    assert last['eval_return'] >= 475, (algo, evals)
    assert evals[0] < 475, "the first evaluation should not already be solved; the test would prove nothing"
    assert last['step'] < cfg.steps
