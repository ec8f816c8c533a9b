"""What the README's vLLM command costs: `--engine vllm --steps 10` on the Countdown preset, run as a reader runs it.

    python bench/vllm_steps.py [--runs 3]     # -> bench/results/vllm_steps.md
    python bench/vllm_steps.py --quick        # CI: one run of 2 steps on the 100-step model, a temporary folder

Builds (or finds) the tiny Countdown model of seed 0 first, so that no run pays for the build; then runs the command
`runs` times, each a fresh process in its own temporary folder, and reports the medians (and ranges) of the whole
command's wall time, the engine's start-up (the line the run prints), a training step (sampling, scoring and update,
from the loop's timers) and an evaluation (greedy on 1,024 held-out problems: the loop's time after an evaluated
step); and from the medians, what the preset's steps and evaluations would take.
"""
import argparse, datetime, math, re, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'bench'))
from nanorl.runlog import read_log
from nanorl.train import load_yaml
from seeds import QUICK_SFT_STEPS, commit, machine, spread

CONFIG = 'configs/countdown_tiny_cpu.yaml'
COMMAND = ['--config', CONFIG, '--engine', 'vllm', '--name', 'countdown_vllm', '--steps', '10']

def one_run(out: str, extra: list[str]) -> dict:
    "The command once, in a fresh process: its wall seconds, the engine's start-up, a step's and an evaluation's."
    t0 = time.perf_counter()
    cmd = [sys.executable, '-m', 'nanorl.train', *COMMAND, *extra, '--out_dir', out, '--progress', 'false']
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    start = float(re.search(r'started in ([\d.]+) ?s', p.stdout + p.stderr)[1])
    log = read_log(Path(out) / 'countdown_vllm')
    stepped = [i for i, r in enumerate(log['t_rollout']) if not math.isnan(r)]
    steps = [log['t_rollout'][i] + log['t_score'][i] + log['t_update'][i] for i in stepped]
    evals = [log['t_other'][i] for i in stepped if not math.isnan(log['eval_return'][i])]
    return {'wall': wall, 'start': start, 'step': statistics.median(steps), 'eval': statistics.median(evals)}

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--quick', action='store_true',
                    help='CI: one run of 2 steps on the 100-step model, results in a temporary folder')
    args = ap.parse_args()
    sft = ['--sft_steps', str(QUICK_SFT_STEPS['countdown'])] if args.quick else []
    model = subprocess.run([sys.executable, '-m', 'nanorl.tiny', 'countdown', *sft], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.strip()
    extra = ['--model', model, '--steps', '2'] if args.quick else []
    results = Path(tempfile.mkdtemp(prefix='bench_vllm_steps_')) if args.quick else ROOT / 'bench/results'
    if args.quick: args.runs = 1
    got = []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp: got.append(one_run(tmp, extra))
        print(f"run {i + 1} of {args.runs}: {got[-1]}", file=sys.stderr)
    col = lambda k, fmt='{:.0f}': spread([g[k] for g in got], fmt)
    med = lambda k: statistics.median(g[k] for g in got)
    cfg = load_yaml(ROOT / CONFIG)
    n_steps, n_evals = cfg['steps'], cfg['steps'] // cfg['eval_every'] + 1
    preset = (med('start') + n_steps * med('step') + n_evals * med('eval')) / 60
    text = (f"| runs | command wall s | engine start s | s per step | s per evaluation | preset's {n_steps} steps, "
            f"min |\n"
            f"|---|---|---|---|---|---|\n"
            f"| {args.runs} | {col('wall')} | {col('start')} | {col('step', '{:.2f}')} | {col('eval', '{:.2f}')} | "
            f"{preset:.0f} |\n\n"
            f"Median (min to max) of {args.runs} runs of `python -m nanorl.train {' '.join(COMMAND)}`, each a fresh "
            f"process with the tiny model already built. A step: sampling, scoring and update, from the loop's timers "
            f"(median of the run's steps); an evaluation: greedy on {cfg['n_eval']:,} held-out problems (the loop's "
            f"time after a step it evaluates); the preset's {n_steps} steps: the engine's start, {n_steps} steps and "
            f"{n_evals} evaluations, from the medians. Produced by `python bench/vllm_steps.py --runs {args.runs}` on "
            f"{datetime.date.today()} at commit {commit()}. Machine: {machine()}.\n")
    (results / 'vllm_steps.md').write_text(text)
    print(text)

if __name__ == '__main__': main()
