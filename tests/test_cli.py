"The command line as a user meets it: real processes, real exit codes, real files."
import math, os, re, shutil, signal, subprocess, sys, time
from pathlib import Path
import pytest
import torch
from dataclasses import fields
from nanorl.train import CKPT, TASKS, Config, read_log

ROOT = Path(__file__).resolve().parent.parent

def run(*args, cwd=ROOT):
    return subprocess.run([sys.executable, '-m', 'nanorl.train', *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)

@pytest.mark.parametrize('args, message', [
    (['--learning_rate', '0.1'], "unknown config key 'learning_rate'; did you mean 'lr'?"),
    (['--grup_size', '4'], "did you mean 'group_size'?"),
    (['--steps', 'many'], "steps must be int, got 'many'"),
    (['--normalize_adv', 'maybe'], "normalize_adv must be true or false, got 'maybe'"),
    (['--algo', 'PPO'], "unknown algo 'PPO'; did you mean 'ppo'?"),
    (['--model', 'not/a-model'], "model does not apply to task cartpole: it is for language tasks"),
    (['--hidden', '8', '--task', 'countdown', '--algo', 'grpo', '--group_size', '4'],
     "hidden does not apply to task countdown"),
    (['--token', 's3cret'], "export NANORL_TOKEN"),
    (['--algo', 'grpo'], "grpo compares samples within a group, but group_size is 1; set group_size to 2 or more"),
    (['--algo', 'rloo', '--group_size', '1'], "set group_size to 2 or more"),
    (['--algo', 'ppo', '--critic', 'false'], "ppo estimates advantages with GAE, which needs a critic"),
    (['--algo', 'reinfroce'], "unknown algo 'reinfroce'; did you mean 'reinforce'?"),
    (['--task', 'cartpol'], "unknown task 'cartpol'; did you mean 'cartpole'?"),
    (['--config', 'configs/nope.yaml'], "config file 'configs/nope.yaml' does not exist"),
    (['--resume', 'tests'], "no checkpoint in 'tests'"),
    (['--resume', 'runs/never-ran'], "resume directory 'runs/never-ran' does not exist"),
    (['--lr'], "--lr needs a value"),
    (['--algo', 'reinforce', '--critic', 'true'], "reinforce does not use a critic"),
    (['--lr', '-0.1'], "lr must be positive"),
    (['--gamma', '2'], "gamma must be between 0 and 1"),
    (['--dual_clip', '0.9'], "dual_clip must be greater than 1"),
    (['--name', '--steps', '3'], "--name needs a value"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    p = run(*args)
    assert p.returncode == 2
    err = p.stderr.strip()
    assert message in err and len(err.splitlines()) == 1 and 'Traceback' not in err, err

def test_bad_yaml(tmp_path):
    (tmp_path / 'broken.yaml').write_text("algo: ppo\n  lr: [0.1\n")
    p = run('--config', str(tmp_path / 'broken.yaml'))
    assert p.returncode == 2 and f"{tmp_path / 'broken.yaml'}:2:" in p.stderr and 'not valid YAML' in p.stderr
    assert 'Traceback' not in p.stderr and '<unicode string>' not in p.stderr
    (tmp_path / 'typo.yaml').write_text("algo: ppo\nclip_epsilon: 0.1\n")
    p = run('--config', str(tmp_path / 'typo.yaml'))
    assert p.returncode == 2 and "unknown config key 'clip_epsilon'; did you mean 'clip_eps'?" in p.stderr
    (tmp_path / 'empty.yaml').write_text("# only a comment\n")   # refused, not a silent default CartPole run
    p = run('--config', str(tmp_path / 'empty.yaml'), '--out_dir', str(tmp_path / 'runs'))
    assert p.returncode == 2 and "is empty (or holds only comments)" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and not (tmp_path / 'runs').exists(), p.stderr

def test_help_lists_every_knob():
    p = run('--help')
    assert p.returncode == 0
    flat = ' '.join(p.stdout.split())                                   # --help wraps its lines
    for f in fields(Config): assert f'--{f.name} ' in p.stdout and ' '.join(f.metadata['help'].split()) in flat
    for task in TASKS: assert f' {task},' in flat or f' {task} [default' in flat, task     # every registered task
    assert max(map(len, p.stdout.splitlines())) <= 100 and '(default:' not in p.stdout

def test_console_script_and_default_run_solve_cartpole(tmp_path):
    "`nanorl-train` with no arguments but an output folder: REINFORCE solves CartPole."
    exe = shutil.which('nanorl-train') or str(Path(sys.executable).parent / 'nanorl-train')
    p = subprocess.run([exe, '--out_dir', str(tmp_path), '--progress', 'false'], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    log = read_log(tmp_path / 'cartpole_reinforce')
    evals = [v for v in log['eval_return'] if not math.isnan(v)]
    assert evals[-1] >= 475 and log['step'][-1] < 300
    assert ((tmp_path / 'cartpole_reinforce' / CKPT).is_file()
            and (tmp_path / 'cartpole_reinforce' / 'config.yaml').is_file())

def test_resume_from_the_command_line_is_exact(tmp_path):
    common = ['--config', 'configs/cartpole_ppo.yaml', '--n_prompts', '4', '--max_len', '100', '--progress', 'false',
              '--stop_when_solved', 'false', '--out_dir', str(tmp_path)]
    assert run(*common, '--steps', '8', '--name', 'straight').returncode == 0
    assert run(*common, '--steps', '5', '--name', 'split').returncode == 0
    p = run('--resume', str(tmp_path / 'split'), '--steps', '8')    # config comes from the checkpoint
    assert p.returncode == 0, p.stderr
    a, b = (torch.load(tmp_path / n / CKPT, weights_only=True) for n in ('straight', 'split'))
    assert a['step'] == b['step'] == 8 and a['env_steps'] == b['env_steps']
    for part in ('policy', 'critic'):                      # bit for bit, not within a tolerance
        assert a[part].keys() == b[part].keys() and all(torch.equal(a[part][k], b[part][k]) for k in a[part])
    assert torch.equal(a['rng'], b['rng'])
    sa, sb = a['opt']['state'], b['opt']['state']
    assert sa.keys() == sb.keys() and all(torch.equal(sa[i][k], sb[i][k]) for i in sa for k in sa[i])
    la, lb = read_log(tmp_path / 'straight'), read_log(tmp_path / 'split')
    for k in ('reward', 'loss', 'entropy', 'kl', 'clip_frac', 'grad_norm', 'value_loss', 'env_steps'):
        assert str(la[k]) == str(lb[k]), k
    assert read_log(tmp_path / 'split')['step'] == list(range(0, 9))
    assert read_log(tmp_path / 'split')['env_steps'] == read_log(tmp_path / 'straight')['env_steps']

def test_resume_layers_checkpoint_then_config_then_options(tmp_path):
    "--resume DIR --config Y: the saved config, then only the keys Y sets, then options; the run stays in DIR."
    assert run('--algo', 'ppo', '--n_prompts', '4', '--max_len', '50', '--steps', '3', '--progress', 'false',
               '--stop_when_solved', 'false', '--out_dir', str(tmp_path / 'a'), '--name', 'run').returncode == 0
    shutil.move(tmp_path / 'a' / 'run', tmp_path / 'moved')
    (tmp_path / 'more.yaml').write_text("steps: 5\nent_coef: 0.01\n")
    p = run('--resume', str(tmp_path / 'moved'), '--config', str(tmp_path / 'more.yaml'), '--eval_every', '2')
    assert p.returncode == 0, p.stderr
    saved = (tmp_path / 'moved' / 'config.yaml').read_text()
    for line in ('n_prompts: 4', 'max_len: 50', 'steps: 5', 'ent_coef: 0.01', 'eval_every: 2', 'algo: ppo'):
        assert line in saved, (line, saved)
    assert read_log(tmp_path / 'moved')['step'] == [0, 1, 2, 3, 4, 5]
    assert not (tmp_path / 'a' / 'run').exists()
    p = run('--resume', str(tmp_path / 'moved'))
    assert p.returncode == 2 and 'nothing to do' in p.stderr
    p = run('--resume', str(tmp_path / 'moved'), '--steps', '9', '--hidden', '8')
    assert p.returncode == 2 and 'cannot resume with hidden=8' in p.stderr

def test_nan_stops_with_exit_1_and_keeps_last_good_checkpoint(tmp_path):
    p = run('--algo', 'ppo', '--critic_lr', '1e20', '--max_grad_norm', '0', '--save_every', '1', '--steps', '50',
            '--stop_when_solved', 'false', '--progress', 'false', '--out_dir', str(tmp_path))
    assert p.returncode == 1 and 'in a row' in p.stderr and 'Traceback' not in p.stderr, p.stderr
    assert p.stdout.count('batch skipped') == 3, p.stdout
    ck = torch.load(tmp_path / 'cartpole_ppo' / CKPT, weights_only=True)
    assert all(torch.isfinite(v).all() for v in [*ck['policy'].values(), *ck['critic'].values()])
    assert ck['step'] == read_log(tmp_path / 'cartpole_ppo')['step'][-1]

def test_the_readme_python_snippet_runs_as_written(tmp_path):
    "Every ```python block of README.md, run as a script in a fresh process: it must work as a reader pastes it."
    blocks = [b for b in re.findall(r"```python\n(.*?)```", (ROOT / 'README.md').read_text(), re.S)
              if 'import' in b]                                       # not the one-line formulas
    assert blocks
    for code in blocks:
        p = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
        assert p.returncode == 0 and 'solved at step' in p.stdout, (code, p.stdout[-1000:], p.stderr[-2000:])

def test_a_resume_says_where_it_resumed_and_times_this_command(tmp_path):
    first = run('--out_dir', str(tmp_path), '--steps', '3', '--stop_when_solved', 'false', '--progress', 'false')
    assert first.returncode == 0, first.stderr
    total3 = float(re.search(r'; training ([0-9.]+)s, the command', first.stdout).group(1))
    p = run('--resume', str(tmp_path / 'cartpole_reinforce'), '--steps', '5', '--progress', 'false')
    assert p.returncode == 0, p.stderr
    assert f"resumed {tmp_path / 'cartpole_reinforce'} from step 3 (" in p.stdout.splitlines()[0], p.stdout
    this, total = map(float, re.search(r'training ([0-9.]+)s from step 3 \(([0-9.]+)s in all\)', p.stdout).groups())
    wall = read_log(tmp_path / 'cartpole_reinforce')['wall_time']
    assert total == pytest.approx(wall[-1], abs=0.06) and this == pytest.approx(total - total3, abs=0.2), p.stdout

def test_configuration_errors_come_before_the_run_folder(tmp_path):
    "A run already in the folder: a wrong setting is still what the user hears about."
    assert run('--out_dir', str(tmp_path), '--steps', '1', '--progress', 'false').returncode == 0
    for args, message in [(['--role', 'rollout', '--trainer_url', 'ftp://x'], "trainer_url must look like"),
                          (['--algo', 'ppo', '--critic', 'false'], "needs a critic")]:
        p = run('--out_dir', str(tmp_path), *args)
        assert p.returncode == 2 and message in p.stderr and 'already holds a run' not in p.stderr, p.stderr
    env = {k: v for k, v in os.environ.items() if k != 'NANORL_TOKEN'}
    p = subprocess.run([sys.executable, '-m', 'nanorl.train', '--out_dir', str(tmp_path), '--role', 'trainer', '--host',
                        '0.0.0.0'], capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert p.returncode == 2 and p.stderr.startswith('nanorl: error: refusing to listen on 0.0.0.0 without a token'), \
        p.stderr
    p = run('--out_dir', str(tmp_path))
    assert p.returncode == 2 and 'already holds a run' in p.stderr and '--name OTHER' in p.stderr

def test_ctrl_c_while_the_tiny_model_builds_is_one_line(tmp_path):
    "The first language run builds the tiny model and says so; a Ctrl-C during the build is one line, exit 130."
    err_file = tmp_path / 'stderr'
    with open(err_file, 'w') as err:
        p = subprocess.Popen([sys.executable, '-m', 'nanorl.train', '--task', 'countdown', '--algo', 'grpo',
                              '--group_size', '2', '--out_dir', str(tmp_path / 'runs'), '--progress', 'false'],
                             cwd=ROOT, text=True, env={**os.environ, 'NANORL_CACHE': str(tmp_path / 'cache')},
                             stdout=subprocess.DEVNULL, stderr=err,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        t0 = time.time()
        while 'nanorl.tiny: building' not in err_file.read_text() and p.poll() is None and time.time() - t0 < 240:
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=120)
    lines = [ln for ln in err_file.read_text().splitlines() if ln.strip()]
    assert p.returncode == 130 and 'Traceback' not in '\n'.join(lines), lines
    assert lines[0].startswith('nanorl.tiny: building the tiny countdown model once (seed 0, 1500 SFT steps'), lines
    assert re.fullmatch(r"nanorl: interrupted: stopped building tiny-countdown-s0-\S+; (its checkpoint at step \d+ "
                        r"of 1500 is in \S+\.partial, and the next build resumes from it|no checkpoint yet \(one every "
                        r"100 steps\), so the next build starts over)", lines[-1]), lines

def test_a_bad_value_kept_from_the_resumed_run_says_where_it_came_from(nanorl_cli, tmp_path):
    "`--resume` with `--algo grpo` on a REINFORCE run: group_size 1 is the saved run's, and the error says so."
    p = nanorl_cli('--steps', '2', '--out_dir', str(tmp_path), '--name', 'r', '--progress', 'false')
    assert p.returncode == 0, p.stderr[-2000:]
    p = nanorl_cli('--resume', str(tmp_path / 'r'), '--algo', 'grpo', '--steps', '4')
    err = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(err) == 1, p.stderr[-2000:]
    assert "group_size is 1" in err[0] and f"is the saved value of the run being resumed, {tmp_path / 'r'}" in err[0]
    assert "pass --group_size to change it" in err[0]
