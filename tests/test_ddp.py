"Chapter 14 across processes: torchrun with 2 gloo ranks on this CPU, against one process."
import os, subprocess, sys
from test_serve import ROOT, free_port
from nanorl.runlog import read_log

def torchrun(*args, n=2, timeout=600, env=None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', str(n), '--master_addr', '127.0.0.1',
           '--master_port', str(free_port()), *args]
    env = {**os.environ, 'OMP_NUM_THREADS': '1', 'PYTHONPATH': str(ROOT), **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)

def train(*args, n=2, env=None):
    return torchrun('-m', 'nanorl.train', '--threads', '1', '--progress', 'false', *args, n=n, env=env)

def test_two_ranks_update_like_one_process():
    "Every loss aggregation, micro-batches, two epochs, CartPole (with a critic too) and a language model."
    r = torchrun('-m', 'nanorl.ddp')
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stdout.count('largest weight difference') == 7, r.stdout

def test_two_ranks_solve_cartpole_and_rank_0_alone_writes(tmp_path):
    r = train('--out_dir', str(tmp_path))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stdout.count('nanorl: solved at step') == 1, r.stdout[-2000:]      # one ending line: rank 0's
    log = read_log(tmp_path / 'cartpole_reinforce')
    assert log['step'][0] == 0 and log['eval_return'][-1] >= 475
    assert sorted(p.name for p in tmp_path.iterdir()) == ['cartpole_reinforce']

def test_resume_with_another_rank_count(tmp_path):
    r = train('--out_dir', str(tmp_path), '--steps', '4', '--stop_when_solved', 'false')
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    run = tmp_path / 'cartpole_reinforce'
    one = subprocess.run([sys.executable, '-m', 'nanorl.train', '--resume', str(run), '--steps', '6',
                          '--progress', 'false'], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert one.returncode == 0, one.stdout[-2000:] + one.stderr[-2000:]
    four = train('--resume', str(run), '--steps', '8', n=4)
    assert four.returncode == 0, four.stdout[-3000:] + four.stderr[-3000:]
    assert read_log(run)['step'] == list(range(9))

def test_rank_count_must_divide_the_batch(tmp_path):
    r = train('--out_dir', str(tmp_path), '--n_prompts', '15')
    assert r.returncode != 0
    assert "n_prompts 15 cannot be split evenly over 2 ranks: use a multiple of 2" in r.stderr, r.stderr[-2000:]

def test_only_the_local_role_runs_in_several_ranks(tmp_path):
    r = train('--out_dir', str(tmp_path), '--role', 'trainer', env={'NANORL_TOKEN': 'x' * 32})
    assert r.returncode != 0 and "role trainer runs in one process" in r.stderr, r.stderr[-2000:]
