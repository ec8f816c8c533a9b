"Chapter 14 across processes: torchrun with 2 gloo ranks on this CPU, against one process."
import importlib.util, os, socket, subprocess, sys
import pytest
from test_serve import ROOT, free_port, stop, worker
from nanorl.runlog import CKPT, read_log

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
    assert r.stdout.splitlines()[-1].startswith('ok: 2 ranks updated as one process does'), r.stdout

def test_two_ranks_solve_cartpole_and_rank_0_alone_writes(tmp_path):
    r = train('--out_dir', str(tmp_path), '--report_to', 'tensorboard')
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert r.stdout.count('nanorl: solved at step') == 1, r.stdout[-2000:]      # one ending line: rank 0's
    log = read_log(tmp_path / 'cartpole_reinforce')
    assert log['step'][0] == 0 and log['eval_return'][-1] >= 475
    assert sorted(p.name for p in tmp_path.iterdir()) == ['cartpole_reinforce']
    assert len(list((tmp_path / 'cartpole_reinforce' / 'tensorboard').iterdir())) == 1      # rank 0's event file

def test_a_configuration_error_is_one_line_from_rank_0(tmp_path):
    "Both ranks find the run folder taken; rank 0 alone says so, and torchrun's summary names it as the root cause."
    assert train('--out_dir', str(tmp_path), '--steps', '1', n=1).returncode == 0
    r = train('--out_dir', str(tmp_path))
    out = r.stdout + r.stderr
    run = tmp_path / 'cartpole_reinforce'
    assert r.returncode != 0 and [ln for ln in out.splitlines() if ln.startswith('nanorl:')] == [
        f"nanorl: error: {run} already holds a run (log.csv and checkpoint.pt): continue it with --resume {run}, "
        f"start another with --name OTHER, or replace it with --overwrite true"], out[-3000:]
    assert 'traceback : nanorl: error:' in out, out[-3000:]

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

def two_free_ports() -> int:
    "A port p with p and p + 1 both free (a trainer's rank r listens on p + r)."
    while True:
        p = free_port()
        with socket.socket() as s:
            try: s.bind(('127.0.0.1', p + 1)); return p
            except OSError: continue

def trainer_ranks(tmp_path, port, *args) -> subprocess.Popen:
    "2 trainer ranks under torchrun on loopback, CartPole's async preset (each rank: 8 prompts a batch)."
    cmd = [sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', '2', '--master_addr', '127.0.0.1',
           '--master_port', str(free_port()), '-m', 'nanorl.train', '--config', 'configs/cartpole_async.yaml',
           '--port', str(port), '--out_dir', str(tmp_path), '--threads', '1', '--progress', 'false',
           '--stop_when_solved', 'false', *args]
    return subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, 'OMP_NUM_THREADS': '1', 'PYTHONPATH': str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

def test_trainer_ranks_each_train_on_their_own_workers(tmp_path):
    port = two_free_ports()
    ranks = trainer_ranks(tmp_path, port, '--steps', '12')
    workers = [worker(port + r, '--threads', '1') for r in (0, 1)]
    out = ranks.communicate(timeout=600)[0]
    worker_out = [w.communicate(timeout=120)[0] for w in workers]
    assert ranks.returncode == 0, out[-3000:]
    assert out.count(f'serving version 0 on http://127.0.0.1:{port}') == 1, out[-3000:]
    assert out.count(f'serving version 0 on http://127.0.0.1:{port + 1}') == 1, out[-3000:]
    assert all(w.returncode == 0 for w in workers), worker_out
    log = read_log(tmp_path / 'cartpole_async')
    assert log['step'] == list(range(13))
    assert out.count('"trained": 12,') == 2, out[-3000:]                 # each rank trained on its own worker's
    episodes = [(b - a) / n for a, b, n in zip(log['env_steps'], log['env_steps'][1:], log['ep_len'][1:])]
    assert [round(e) for e in episodes] == [16] * 12                     # 8 from each rank's worker, every step

def test_a_trainer_rank_without_workers_stops_every_rank(tmp_path):
    port = two_free_ports()
    ranks = trainer_ranks(tmp_path, port, '--steps', '50', '--idle_timeout', '6')
    only = worker(port, '--threads', '1')                          # feeds rank 0; rank 1 has none
    out = ranks.communicate(timeout=300)[0]
    stop(only)
    assert ranks.returncode == 1, out[-3000:]
    assert "another rank's source stopped" in out and 'checkpointed' in out, out[-3000:]
    assert (tmp_path / 'cartpole_async' / CKPT).is_file()

def test_trainer_ranks_refuse_an_idle_timeout_longer_than_a_collective_waits(tmp_path):
    r = train('--out_dir', str(tmp_path), '--role', 'trainer', '--idle_timeout', '0')
    assert r.returncode != 0 and 'with 2 trainer ranks, idle_timeout must be between 0 and 7200 s' in r.stderr, \
        r.stderr[-2000:]

@pytest.mark.skipif(importlib.util.find_spec('vllm') is None, reason="engine vllm is refused earlier without vLLM")
def test_a_vllm_engine_inside_torchrun_ranks_is_refused(tmp_path):
    r = train('--out_dir', str(tmp_path), '--config', 'configs/countdown_tiny_cpu.yaml', '--engine', 'vllm')
    assert r.returncode != 0 and 'engine vllm does not run inside 2 torchrun ranks' in r.stderr, r.stderr[-2000:]
