"SFT, DPO and PPO on language through the real command line: bad data files, short real runs, resume with a critic."
import json, math
from pathlib import Path
import pytest
from nanorl.train import read_log


def common(model, out, name, *extra):
    return ['--task', 'countdown', '--model', model, '--n_prompts', '4', '--max_len', '16', '--n_eval', '8',
            '--eval_every', '100', '--progress', 'false', '--out_dir', str(out), '--name', name, *extra]

def write(path, lines):
    path.write_text(''.join((l if isinstance(l, str) else json.dumps(l)) + '\n' for l in lines))
    return path

def test_bad_rows_are_reported_by_line_and_skipped(nanorl_cli, quick_model, tmp_path):
    data = write(tmp_path / 'sft.jsonl', [{'prompt': 'nums 1 2 target 3\n', 'completion': '<answer>1 + 2</answer>'},
                                         {'prompt': 'nums 4 5 target 9\n'},
                                         {'prompt': 'nums 2 2 target 4\n', 'completion': ''},
                                         '{"prompt": "nums 3 3 target 6\\n", "completion": ',
                                         {'prompt': 'nums 4 2 target 8\n', 'completion': '<answer>4 * 2</answer>'}])
    p = nanorl_cli(*common(quick_model, tmp_path, 'sft', '--algo', 'sft', '--data', str(data), '--steps', '2'))
    assert p.returncode == 0, p.stderr[-3000:]
    assert "skipped 3 bad rows" in p.stderr and "line 2: missing field 'completion'" in p.stderr, p.stderr
    assert "line 3: empty 'completion'" in p.stderr and "line 4: not JSON" in p.stderr
    log = read_log(tmp_path / 'sft')
    assert log['step'] == [0, 1, 2] and all(math.isfinite(v) and v > 0 for v in log['loss'][1:])

@pytest.mark.parametrize('algo, rows, message', [
    ('sft', [{'prompt': 'a', 'completion': ' '}, {'prompt': 'b'}],
     "has no valid rows (line 1: empty 'completion'; line 2: missing field 'completion')"),
    ('dpo', [{'prompt': 'a', 'chosen': 'x', 'rejected': 7}],
     "has no valid rows (line 1: 'rejected' is a int, not a string)"),
    ('dpo', [], "has no valid rows (the file is empty)"),
])
def test_no_valid_rows_stops_before_training(nanorl_cli, quick_model, tmp_path, algo, rows, message):
    data = write(tmp_path / 'bad.jsonl', rows)
    p = nanorl_cli(*common(quick_model, tmp_path, 'bad', '--algo', algo, '--data', str(data), '--steps', '2'))
    err = p.stderr.strip().splitlines()[-1]
    assert p.returncode == 2 and message in err and 'Traceback' not in p.stderr, p.stderr[-2000:]
    assert not (tmp_path / 'bad' / 'log.csv').exists()       # training never started

def test_text_algos_refuse_control_tasks(nanorl_cli):
    p = nanorl_cli('--algo', 'sft')
    assert p.returncode == 2 and 'sft learns from text' in p.stderr and 'Traceback' not in p.stderr

def test_dpo_and_ipo_start_at_the_reference_and_separate_the_pairs(nanorl_cli, quick_model, tmp_path):
    pairs = [{'prompt': f'nums {a} {b} target {a + b}\n', 'chosen': f'<answer>{a} + {b}</answer>',
              'rejected': f'<answer>{a} - {b}</answer>'}
             for a in range(1, 6) for b in range(1, 4)]
    data = write(tmp_path / 'pairs.jsonl', pairs)
    for algo in ('dpo', 'ipo'):
        p = nanorl_cli(*common(quick_model, tmp_path, algo, '--algo', algo, '--data', str(data), '--steps', '4',
                               '--lr', '1e-3'))
        assert p.returncode == 0, p.stderr[-3000:]
        log = read_log(tmp_path / algo)
        # step 1 is scored with the policy equal to the reference
        assert log['pref_acc'][1] == 0.5 and log['margin'][1] == 0.0
        if algo == 'dpo': assert abs(log['loss'][1] - math.log(2)) < 1e-6
        else: assert abs(log['loss'][1] - (1 / (2 * 0.1)) ** 2) < 1e-4
        assert log['margin'][-1] > 0 and log['pref_acc'][-1] > 0.5   # the same pairs, a few steps later, are told apart
        assert log['rejected_logp'][-1] < log['rejected_logp'][1]
    swapped = write(tmp_path / 'swapped.jsonl',
                    [{**p, 'chosen': p['rejected'], 'rejected': p['chosen']} for p in pairs])
    p = nanorl_cli(*common(quick_model, tmp_path, 'swapped', '--algo', 'dpo', '--data', str(swapped), '--steps', '4',
                           '--lr', '1e-3'))
    assert p.returncode == 0, p.stderr[-3000:]
    dpo, swap = read_log(tmp_path / 'dpo'), read_log(tmp_path / 'swapped')
    # step 1: the same pairs, before any update
    for k, other in (('chosen_logp', 'rejected_logp'), ('rejected_logp', 'chosen_logp')):
        assert abs(dpo[k][1] - swap[other][1]) < 1e-5, (k, dpo[k][1], swap[other][1])

def test_ppo_on_language_trains_a_critic_and_resumes_exactly(nanorl_cli, quick_model, tmp_path):
    import torch
    ppo = lambda name: common(quick_model, tmp_path, name, '--algo', 'ppo', '--gamma', '1', '--lam', '1',
                              '--minibatches', '2', '--n_prompts', '8', '--save_every', '2')
    for args in ([*ppo('split'), '--steps', '2'], ['--resume', str(tmp_path / 'split'), '--steps', '4'],
                 [*ppo('straight'), '--steps', '4']):
        p = nanorl_cli(*args)
        assert p.returncode == 0, p.stderr[-3000:]
    split, straight = read_log(tmp_path / 'split'), read_log(tmp_path / 'straight')
    assert split['step'] == straight['step'] == [0, 1, 2, 3, 4]
    assert all(math.isfinite(v) for v in split['value_loss'][1:]) and max(split['logp_gap'][1:]) < 1e-5
    for k in ('loss', 'value_loss', 'reward'):      # a critic not restored on resume would change steps 3 and 4
        assert split[k][3:] == straight[k][3:], (k, split[k], straight[k])
    a, b = (torch.load(tmp_path / n / 'checkpoint.pt', weights_only=True)['critic'] for n in ('split', 'straight'))
    assert all(torch.equal(a[k], b[k]) for k in b)
