"""Time to solve CartPole for every preset in configs/, and rollout throughput.

    python bench/cartpole.py                 # every algorithm, seeds 0 1 2
    python bench/cartpole.py --algos ppo --seeds 0 1 2 3 4
    python bench/cartpole.py --task Acrobot-v1 --algos ppo --steps 200
        # the CartPole presets on another gymnasium task (results: bench/results/acrobot-v1.md)
    python bench/cartpole.py --quick          # CI: reinforce, seed 0, 3 steps; results in a temporary folder

Each run is a fresh `python -m nanorl.train --config configs/cartpole_<algo>.yaml --seed S` process. Wall time is
measured around the whole process (interpreter start and imports included) and ends when the run stops: at the
first greedy evaluation whose mean return over 20 episodes reaches the task's threshold (475 for CartPole, -100 for
Acrobot; the config's `stop_when_solved`), or at its last step. Rollout throughput is real (unpadded) environment
steps divided by the time spent in rollouts, from the run's own log. Also times a bare `import nanorl.train` in
the same run, the start-up share of every wall time, and `import torch` against `import torch, torch._dynamo`.
Writes bench/results/cartpole.csv (one row per run) and bench/results/cartpole.md (the medians).
"""
import argparse, csv, math, statistics, subprocess, sys, tempfile, time
from pathlib import Path
from tqdm import tqdm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanorl.train import PRESETS, TASKS, read_log
sys.path.insert(0, str(ROOT / 'bench'))
from seeds import commit, machine

def time_cmd(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, capture_output=True)
    return time.perf_counter() - t0

def run_one(algo: str, seed: int, out_dir: str, extra=(), task: str = 'cartpole') -> dict:
    cmd = [sys.executable, '-m', 'nanorl.train', '--config', str(ROOT / f'configs/cartpole_{algo}.yaml'),
           '--seed', str(seed), '--out_dir', out_dir, '--name', f'{algo}_s{seed}', '--progress', 'false',
           '--task', task, *extra]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if proc.returncode: raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    log = read_log(Path(out_dir) / f'{algo}_s{seed}')
    evals = [v for v in log['eval_return'] if not math.isnan(v)]
    return {'algo': algo, 'seed': seed, 'solved': bool(evals) and evals[-1] >= TASKS[task]().solved_at,
            'wall_s': round(wall, 2), 'train_steps': int(log['step'][-1]), 'env_steps': int(log['env_steps'][-1]),
            'rollout_steps_per_s': round(log['env_steps'][-1] / sum(t for t in log['t_rollout'] if not math.isnan(t))),
            'final_eval_return': evals[-1] if evals else math.nan}

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--algos', nargs='*', default=list(PRESETS))
    ap.add_argument('--seeds', nargs='*', type=int, default=[0, 1, 2])
    ap.add_argument('--task', default='cartpole', help='cartpole, or a gymnasium id with discrete actions')
    ap.add_argument('--steps', type=int, default=None, help="training steps at most (default: each preset's)")
    ap.add_argument('--out', default=None, help='results path without extension (default: bench/results/cartpole; '
                                               '--quick: a temporary folder)')
    ap.add_argument('--quick', action='store_true', help='CI smoke run: reinforce, seed 0, 3 training steps, '
                                                         'results outside bench/results')
    args = ap.parse_args()
    extra, n_startup = ([] if args.steps is None else ['--steps', str(args.steps)]), 3
    if args.quick:
        args.algos, args.seeds, extra, n_startup = ['reinforce'], [0], ['--steps', '3'], 1
        if args.out is None: args.out = str(Path(tempfile.mkdtemp(prefix='bench_cartpole_')) / 'cartpole')
    if args.out is None: args.out = str(ROOT / 'bench/results' / args.task.lower().replace('/', '-'))
    imports = {what: statistics.median(time_cmd([sys.executable, '-c', f'import {what}']) for _ in range(n_startup))
               for what in ('nanorl.train', 'torch', 'torch, torch._dynamo')}
    startup = imports['nanorl.train']
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for algo, seed in tqdm([(a, s) for a in args.algos for s in args.seeds], desc=f'{args.task} bench'):
            rows.append(run_one(algo, seed, tmp, extra, args.task))
        # what a run's end spends on its picture (chapter 05b): importing matplotlib, drawing, saving the PNG
        draw = (f"import time; t = time.perf_counter(); from nanorl.runlog import write_curves; "
                f"assert write_curves({str(Path(tmp) / f'{args.algos[0]}_s{args.seeds[0]}')!r}); "
                f"print(time.perf_counter() - t)")
        pictures = statistics.median(float(subprocess.run([sys.executable, '-c', 'import nanorl.runlog; ' + draw],
                                                          capture_output=True, text=True, check=True).stdout)
                                     for _ in range(n_startup))
    if args.quick:   # the run went through its steps and its final evaluation
        assert all(r['train_steps'] == 3 and r['env_steps'] > 0 and not math.isnan(r['final_eval_return'])
                   for r in rows), rows
    with open(args.out + '.csv', 'w', newline='') as f:
        w = csv.DictWriter(f, list(rows[0])); w.writeheader(); w.writerows(rows)
    lines = ['| algo | solved | median wall s (process start to solved) | median env steps | median rollout steps/s |',
             '|---|---|---|---|---|']
    for algo in args.algos:
        rs = [r for r in rows if r['algo'] == algo]
        med = lambda k: statistics.median(r[k] for r in rs)
        lines.append(f"| {algo} | {sum(r['solved'] for r in rs)}/{len(rs)} | {med('wall_s'):.1f} | "
                     f"{med('env_steps'):,.0f} | {med('rollout_steps_per_s'):,.0f} |")
    table = '\n'.join(lines)
    cmd = 'python bench/cartpole.py' + ('' if args.algos == list(PRESETS) else ' --algos ' + ' '.join(args.algos)) \
          + ('' if args.seeds == [0, 1, 2] else ' --seeds ' + ' '.join(map(str, args.seeds))) \
          + ('' if args.task == 'cartpole' else f' --task {args.task}') \
          + ('' if args.steps is None else f' --steps {args.steps}')
    if args.quick: cmd = 'python bench/cartpole.py --quick'
    note = (f"Seeds {args.seeds}, medians; on {machine()}; measured {time.strftime('%Y-%m-%d')} at commit {commit()}; "
            f"produced by `{cmd}`. In the same run, starting Python and importing "
            f"`nanorl.train` alone took {startup:.1f} s (median of {n_startup}): "
            f"that much of each wall time is start-up. Importing torch alone took {imports['torch']:.2f} s, and "
            f"torch with TorchDynamo, which every torch.optim optimizer imports on first use and chapter 05c's Adam "
            f"does not, {imports['torch, torch._dynamo']:.2f} s. Drawing a run's picture at its end (chapter 05b's "
            f"curves.png: importing matplotlib, drawing, saving) took {pictures:.2f} s (median of {n_startup}).")
    Path(args.out + '.md').write_text(f"{table}\n\n{note}\n")
    print(table); print(note)
    if args.quick: print(f"(quick mode: results in {args.out}.csv and .md)")

if __name__ == '__main__': main()
