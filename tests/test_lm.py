"Language tasks through the real command line: a tiny model built offline, real processes, real files."
import math
from pathlib import Path
import pytest
from nanorl.train import read_log


@pytest.mark.parametrize('args, message', [
    (['--task', 'countdown', '--algo', 'grpo', '--group_size', '4', '--model', 'no/such-model-here'],
     "cannot load model 'no/such-model-here'"),
    (['--task', 'countdown', '--algo', 'sft', '--data', 'no/such.jsonl'], "data file 'no/such.jsonl' does not exist"),
    (['--task', 'countdown', '--algo', 'dpo', '--beta', '0'], "beta must be positive"),
    (['--task', 'countdown', '--algo', 'grpo', '--group_size', '4', '--n_eval', '100000'],
     "n_eval is 100000 but countdown holds out"),
    (['--task', 'countdown', '--dtype', 'float16'], "unknown dtype 'float16'"),
    (['--task', 'countdown', '--temperature', '0'], "temperature must be positive"),
    (['--task', 'countdown', '--turns', '3'], "turns applies to multi-turn tasks ("),
    (['--task', 'countdown_multiturn', '--turns', '0'], "turns must be at least 1"),
    (['--task', 'cartpole', '--max_context', '64'], "max_context applies to multi-turn tasks"),
])
def test_bad_language_input_is_one_line_and_exit_2(nanorl_cli, args, message):
    p = nanorl_cli(*args)
    err = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ''
    assert p.returncode == 2 and message in err and 'Traceback' not in p.stderr, p.stderr[-2000:]

def test_a_conversation_that_cannot_fit_is_refused_at_setup(nanorl_cli, quick_model, tmp_path):
    p = nanorl_cli('--task', 'countdown_multiturn', '--algo', 'grpo', '--group_size', '4', '--model', quick_model,
                   '--max_len', '24', '--max_context', '30', '--out_dir', str(tmp_path))
    assert p.returncode == 2 and 'do not fit the context of 30' in p.stderr and 'Traceback' not in p.stderr, p.stderr

def test_grpo_on_countdown_runs_end_to_end(nanorl_cli, quick_model, tmp_path):
    p = nanorl_cli('--task', 'countdown', '--algo', 'grpo', '--group_size', '4', '--n_prompts', '4', '--max_len', '16',
            '--model', quick_model, '--steps', '3', '--eval_every', '3', '--n_eval', '16', '--progress', 'false',
            '--out_dir', str(tmp_path), '--name', 'lm')
    assert p.returncode == 0, p.stderr[-3000:]
    log = read_log(tmp_path / 'lm')
    assert log['step'] == [0, 1, 2, 3]
    for k in ('reward', 'loss', 'entropy', 'grad_norm', 'logp_gap', 't_rollout', 't_score', 't_update'):
        assert all(math.isfinite(v) for v in log[k][1:]), k
    # trainer and sampler agree in fp32 (row 0 is the eval before training)
    assert max(log['logp_gap'][1:]) < 1e-5
    assert 0 <= log['eval_return'][-1] <= 1
    assert 'time per part: rollout' in p.stdout
