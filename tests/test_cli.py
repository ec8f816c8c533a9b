"The command line as a user meets it: real processes, real exit codes, real files."
import math, subprocess, sys
from pathlib import Path
import pytest
import torch
from nanorl.train import CKPT, read_log

ROOT = Path(__file__).resolve().parent.parent

def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, '-m', 'nanorl.train', *args], capture_output=True, text=True, cwd=cwd, timeout=300)

@pytest.mark.parametrize('args, message', [
    (['--learning_rate', '0.1'], "unknown config key 'learning_rate'; did you mean 'lr'?"),
    (['--grup_size', '4'], "did you mean 'group_size'?"),
    (['--steps', 'many'], "steps must be int, got 'many'"),
    (['--normalize_adv', 'maybe'], "normalize_adv must be bool"),
    (['--algo', 'grpo'], "grpo compares samples within a group, but group_size is 1; set group_size to 2 or more"),
    (['--algo', 'rloo', '--group_size', '1'], "set group_size to 2 or more"),
    (['--algo', 'ppo', '--critic', 'false'], "ppo estimates advantages with GAE, which needs a critic"),
    (['--algo', 'reinfroce'], "unknown algo 'reinfroce'; did you mean 'reinforce'?"),
    (['--task', 'cartpol'], "unknown task 'cartpol'; did you mean 'cartpole'?"),
    (['--config', 'configs/nope.yaml'], "config file 'configs/nope.yaml' does not exist"),
    (['--resume', 'tests'], "no checkpoint in 'tests'"),
    (['--resume', 'runs/never-ran'], "resume directory 'runs/never-ran' does not exist"),
    (['--lr'], "--lr needs a value"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    p = run(*args)
    assert p.returncode == 2
    err = p.stderr.strip()
    assert message in err and len(err.splitlines()) == 1 and 'Traceback' not in err, err

def test_bad_yaml(tmp_path):
    (tmp_path / 'broken.yaml').write_text("algo: ppo\n  lr: [0.1\n")
    p = run('--config', str(tmp_path / 'broken.yaml'))
    assert p.returncode == 2 and 'is not valid YAML' in p.stderr and 'Traceback' not in p.stderr
    (tmp_path / 'typo.yaml').write_text("algo: ppo\nclip_epsilon: 0.1\n")
    p = run('--config', str(tmp_path / 'typo.yaml'))
    assert p.returncode == 2 and "unknown config key 'clip_epsilon'; did you mean 'clip_eps'?" in p.stderr

def test_help_lists_every_knob():
    p = run('--help')
    assert p.returncode == 0
    for key in ('--algo', '--group_size', '--loss_agg', '--clip_eps_high', '--dual_clip', '--kl_estimator', '--save_every'):
        assert key in p.stdout

def test_console_script_and_default_run_solve_cartpole(tmp_path):
    "`nanorl-train` with no arguments but an output folder: REINFORCE solves CartPole."
    exe = Path(sys.executable).parent / 'nanorl-train'
    p = subprocess.run([str(exe), '--out_dir', str(tmp_path), '--progress', 'false'], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    log = read_log(tmp_path / 'cartpole_reinforce')
    evals = [v for v in log['eval_return'] if not math.isnan(v)]
    assert evals[-1] >= 475 and log['step'][-1] < 300
    assert (tmp_path / 'cartpole_reinforce' / CKPT).is_file() and (tmp_path / 'cartpole_reinforce' / 'config.yaml').is_file()

def test_resume_from_the_command_line_is_exact(tmp_path):
    common = ['--config', 'configs/cartpole_ppo.yaml', '--n_prompts', '4', '--max_len', '100', '--progress', 'false',
              '--stop_when_solved', 'false', '--out_dir', str(tmp_path)]
    assert run(*common, '--steps', '8', '--name', 'straight').returncode == 0
    assert run(*common, '--steps', '5', '--name', 'split').returncode == 0
    p = run('--resume', str(tmp_path / 'split'), '--steps', '8')    # config comes from the checkpoint
    assert p.returncode == 0, p.stderr
    a, b = (torch.load(tmp_path / n / CKPT, weights_only=True) for n in ('straight', 'split'))
    assert a['step'] == b['step'] == 8
    for part in ('policy', 'critic'):
        for k in a[part]: torch.testing.assert_close(a[part][k], b[part][k], rtol=0, atol=1e-6)
    assert read_log(tmp_path / 'split')['step'] == list(range(1, 9))

def test_nan_stops_with_exit_1_and_keeps_last_good_checkpoint(tmp_path):
    p = run('--algo', 'ppo', '--critic_lr', '1e20', '--max_grad_norm', '0', '--save_every', '1', '--steps', '50',
            '--stop_when_solved', 'false', '--progress', 'false', '--out_dir', str(tmp_path))
    assert p.returncode == 1 and 'last good checkpoint' in p.stderr and 'Traceback' not in p.stderr, p.stderr
    ck = torch.load(tmp_path / 'cartpole_ppo' / CKPT, weights_only=True)
    assert all(torch.isfinite(v).all() for v in [*ck['policy'].values(), *ck['critic'].values()])
    assert ck['step'] == len(read_log(tmp_path / 'cartpole_ppo')['step'])
