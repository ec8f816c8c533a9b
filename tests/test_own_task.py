"Your task, your data, your model: a task of your own and any gymnasium environment, from the command line."
import json, math, subprocess, sys
from pathlib import Path
import pytest
from nanorl.train import read_log

REWARDS = '''
from nanorl.tasks import extract_answer
def exact(prompt, completion, answer): return float(extract_answer(completion) == str(answer))
def boom(prompt, completion, answer): return 1 / len(completion)
def later(prompt, completion, answer):
    if completion: raise KeyError('no such answer')
    return 0.0
def nothing(prompt, completion, answer): return None
def words(prompt, completion, answer): return 'high'
def nan(prompt, completion, answer): return float('nan')
'''

@pytest.fixture(scope='module')
def own(tmp_path_factory):
    ("A folder with a JSONL of sums, a CSV without the answer column, an empty and a broken JSONL, and a module of "
     "rewards: the user's files.")
    d = tmp_path_factory.mktemp('own')
    (d / 'my_rewards.py').write_text(REWARDS)
    rows = [{'prompt': f'{a} plus {b}?', 'answer': a + b} for a in range(8) for b in range(8)]
    (d / 'sums.jsonl').write_text(''.join(json.dumps(r) + '\n' for r in rows))
    (d / 'no_answer.csv').write_text('prompt\n1 plus 1?\n')
    (d / 'empty.jsonl').write_text('')
    (d / 'broken.jsonl').write_text('{"prompt": "1 plus 1?", "answer": 2}\n{"prompt": "2 plus 2?", answer\n')
    return d

def train(folder: Path, *args):
    return subprocess.run([sys.executable, '-m', 'nanorl.train', *args], capture_output=True, text=True, cwd=folder,
                          timeout=600)

def test_a_jsonl_task_with_a_reward_by_import_path_trains(own, quick_model, tmp_path):
    p = train(own, '--data', 'sums.jsonl', '--reward', 'my_rewards:exact', '--prompt_template', 'Q: {prompt}\\n',
              '--model', quick_model, '--algo', 'grpo', '--n_prompts', '4', '--group_size', '4', '--max_len', '8',
              '--steps', '2', '--n_eval', '8', '--out_dir', str(tmp_path), '--progress', 'false')
    assert p.returncode == 0, p.stderr
    log = read_log(tmp_path / 'sums_grpo')
    assert [int(s) for s in log['step']][-1] == 2
    assert all(math.isfinite(r) for r in log['reward'][1:]), log['reward']

@pytest.mark.parametrize('args, message', [
    (['--data', 'sums.jsonl', '--reward', 'my_reward:exact'], "there is no module my_reward; put my_reward.py in"),
    (['--data', 'sums.jsonl', '--reward', 'my_rewards:exakt'], "my_rewards has no 'exakt'; did you mean 'exact'?"),
    (['--data', 'no_answer.csv', '--reward', 'my_rewards:exact'], "row 0 has no 'answer' column (its columns: "
                                                                   "prompt)"),
    (['--data', 'empty.jsonl', '--reward', 'my_rewards:exact'], "data file 'empty.jsonl' is empty"),
    (['--data', 'broken.jsonl', '--reward', 'my_rewards:exact'], "cannot be read as jsonl: line 2: not JSON"),
    (['--data', 'sums.jsonl', '--reward', 'my_rewards:exact', '--heldout', '64'], "heldout is 64, but sums.jsonl "
                                                                                   "has 64 distinct prompts"),
    (['--data', 'sums.jsonl', '--reward', 'my_rewards:boom'], "reward function boom on prompt '"),
    (['--data', 'sums.jsonl', '--reward', 'my_rewards:nothing'], "returned None; a reward must return a finite"),
    (['--data', 'sums.jsonl', '--reward', 'my_rewards:words'], "returned 'high'; a reward must return a finite"),
    (['--data', 'sums.jsonl', '--reward', 'my_rewards:nan'], "returned nan; a reward must return a finite"),
    (['--task', 'my_rewards:nothing'], "task my_rewards:nothing raised TypeError: nothing() missing 3 required"),
    (['--task', 'Pendulum-v1', '--algo', 'reinforce'], "Pendulum-v1 has Box actions"),
])
def test_bad_input_names_the_row_or_the_function(own, quick_model, tmp_path, args, message):
    control = any(a.endswith(('-v1', '-v9')) for a in args)
    lm = [] if control else ['--model', quick_model, '--algo', 'grpo', '--group_size', '4', '--n_eval', '8']
    p = train(own, *args, *lm, '--out_dir', str(tmp_path))
    err = p.stderr.strip()
    assert p.returncode == 2 and message in err and len(err.splitlines()) == 1 and 'Traceback' not in err, err

def test_a_reward_that_raises_mid_run_stops_it_with_its_name(own, quick_model, tmp_path):
    p = train(own, '--data', 'sums.jsonl', '--reward', 'my_rewards:later', '--model', quick_model, '--algo', 'grpo',
              '--group_size', '4', '--n_eval', '8', '--max_len', '8',
              '--out_dir', str(tmp_path), '--progress', 'false')
    assert p.returncode == 1, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith('nanorl: stopped: reward function later on prompt') and "raised KeyError" in last, last

def test_acrobot_from_the_command_line(tmp_path):
    p = train(tmp_path, '--task', 'Acrobot-v1', '--algo', 'ppo', '--n_prompts', '4', '--steps', '2',
              '--eval_episodes', '2', '--progress', 'false')
    assert p.returncode == 0, p.stderr
    log = read_log(tmp_path / 'runs' / 'Acrobot-v1_ppo')
    assert [int(s) for s in log['step']][-1] == 2
    assert all(-500 <= r <= 0 for r in log['eval_return'] if r == r), log['eval_return']
