"""What the README's vLLM command costs: `--engine vllm --steps 10` on the Countdown preset, run as a reader runs it.

    python bench/vllm_steps.py [--runs 3]     # -> bench/results/vllm_steps.md
    python bench/vllm_steps.py --quick        # CI: one run of 2 steps on the 100-step model, a temporary folder

Builds (or finds) the tiny Countdown model of seed 0 first, so that no run pays for the build; then runs the command
`runs` times, each a fresh process in its own temporary folder, and reports the medians (and ranges) of the whole
command's wall time, the engine's start-up (the line the run prints), a training step (sampling, scoring and update,
from the loop's timers) and an evaluation (greedy on 1,024 held-out problems: the loop's wall time less its steps,
over its evaluations); and from the medians, what the preset's 400 steps with their 9 evaluations would take.
"""
import argparse, csv, datetime, re, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'bench'))
from seeds import commit, machine, spread

COMMAND = ['--config', 'configs/countdown_tiny_cpu.yaml', '--engine', 'vllm', '--name', 'countdown_vllm',
           '--steps', '10']

def one_run(out: str, extra: list[str]) -> dict:
    "The command once, in a fresh process: its wall seconds, the engine's start-up, a step's and an evaluation's."
    t0 = time.perf_counter()
    cmd = [sys.executable, '-m', 'nanorl.train', *COMMAND, *extra, '--out_dir', out, '--progress', 'false']
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    start = float(re.search(r'started in ([\d.]+) ?s', p.stdout + p.stderr)[1])
    rows = list(csv.DictReader(open(Path(out) / 'countdown_vllm' / 'log.csv')))
    steps = [sum(float(r[k]) for k in ('t_rollout', 't_score', 't_update', 't_other')) for r in rows if r['t_rollout']]
    evals = sum(1 for r in rows if r['eval_return'])
    return {'wall': wall, 'start': start, 'step': statistics.median(steps),
            'eval': (float(rows[-1]['wall_time']) - sum(steps)) / evals}

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--quick', action='store_true',
                    help='CI: one run of 2 steps on the 100-step model, results in a temporary folder')
    args = ap.parse_args()
    build = [sys.executable, '-m', 'nanorl.tiny', 'countdown', *(['--sft_steps', '100'] if args.quick else [])]
    model = subprocess.run(build, cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    extra = ['--model', model, '--steps', '2'] if args.quick else []
    results = Path(tempfile.mkdtemp(prefix='bench_vllm_steps_')) if args.quick else ROOT / 'bench/results'
    if args.quick: args.runs = 1
    got = []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp: got.append(one_run(tmp, extra))
        print(f"run {i + 1} of {args.runs}: {got[-1]}", file=sys.stderr)
    col = lambda k, fmt='{:.0f}': spread([g[k] for g in got], fmt)
    med = lambda k: statistics.median(g[k] for g in got)
    preset = (med('start') + 400 * med('step') + 9 * med('eval')) / 60
    text = (f"| runs | command wall s | engine start s | s per step | s per evaluation | preset's 400 steps, min |\n"
            f"|---|---|---|---|---|---|\n"
            f"| {args.runs} | {col('wall')} | {col('start')} | {col('step', '{:.2f}')} | {col('eval', '{:.1f}')} | "
            f"{preset:.0f} |\n\n"
            f"Median (min to max) of {args.runs} runs of `python -m nanorl.train {' '.join(COMMAND)}`, each a fresh "
            f"process with the tiny model already built. A step: sampling, scoring and update, from the loop's timers "
            f"(median of the run's steps); an evaluation: greedy on 1,024 held-out problems (the loop's wall time less "
            f"its steps, over its 2 evaluations); the preset's 400 steps: the engine's start, 400 steps and 9 "
            f"evaluations, from the medians. Produced by `python bench/vllm_steps.py --runs {args.runs}` on "
            f"{datetime.date.today()} at commit {commit()}. Machine: {machine()}.\n")
    (results / 'vllm_steps.md').write_text(text)
    print(text)

if __name__ == '__main__': main()
