"""Threads on a shared machine: a Countdown step and the tiny build beside 0, 1 and 2 busy processes, per policy.

    python bench/threads.py               # 3 rounds -> bench/results/threads.md and threads.csv
    python bench/threads.py --quick       # CI: 1 round, loads 0 and 1, two policies, a few steps; a temporary folder

Policies (chapter 05c): `fixed 2` (torch on 2 threads throughout: the presets before the fitted count), `fixed 1`,
`passive 2` (2 threads with OpenMP's passive wait policy, `OMP_WAIT_POLICY=PASSIVE`, so waiting threads sleep), and
`fitted` (chapter 05c's `Threads`: at most 2, refitted before each step to the cores other processes leave idle).
For each round, load (processes that spin on the CPU, started before the measurement and killed after it) and
policy, one fresh process measures:
- the step: chapter 10's preset (configs/countdown_tiny_cpu.yaml) on the full tiny Countdown model of seed 0, the
  median wall time of steps 3..N of `Run.train_step`;
- the build: SFT steps a second of chapter 08's warm-up (a fresh model of the recipe's shape, batches of 64), the
  median of steps 3..M.
Rounds alternate loads and policies so the machine's drift falls on all alike. Ratios are per round, then the median:
against the same policy with no load, and against `fixed 2` with no load (the fastest setting on an idle machine).
"""
import argparse, csv, json, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'bench'))

POLICIES = {'fixed 2': (2, False), 'fixed 1': (1, False), 'passive 2': (2, True), 'fitted': (0, False)}
SPIN = 'while True: pass'

class Fixed:
    "A thread count that never changes (the policies the fitted one is measured against)."
    def __init__(self, n: int):
        import torch
        self.n = n; torch.set_num_threads(n)
    def fit(self) -> int: return self.n

def child(policy: str, model: str, steps: int, build_steps: int, out: str) -> dict:
    "One measurement in this process: the step's and the build's median seconds, and the threads the step ran on."
    import torch
    from nanorl.train import from_dict, load_yaml
    from nanorl.loop import Run, Threads
    from nanorl.model import HFPolicy, build_model
    from nanorl.tasks import make_language_task
    from nanorl.tiny import TINY_RECIPE, build_threads, gold_completion, sft, sft_rows
    n = POLICIES[policy][0]
    cfg = from_dict({**load_yaml(ROOT / 'configs/countdown_tiny_cpu.yaml'), 'model': model, 'eval_every': 10 ** 6,
                     'progress': False, 'out_dir': out})
    run = Run(cfg)
    if n: run.threads = Fixed(n)
    step_s, used = [], []
    for _ in range(steps):
        t = time.perf_counter(); row = run.train_step(); step_s.append(time.perf_counter() - t)
        used.append(row['threads'])
    task, recipe = make_language_task('countdown', 0), TINY_RECIPE['countdown']
    rows = sft_rows(task, 'countdown')[:2048]
    prompts, completions = [task.build_prompt(r) for r in rows], [gold_completion(task, r) for r in rows]
    tok = HFPolicy.load(model).tokenizer
    policy_model = HFPolicy(build_model(tok, hidden=recipe['hidden'], layers=recipe['layers'], seed=0), tok)
    threads = Fixed(n) if n else Threads(build_threads())
    build_s, last = [], [time.perf_counter()]
    def timed_fit():
        now = time.perf_counter(); build_s.append(now - last[0]); last[0] = now
        return threads.fit()
    sft(policy_model, prompts, completions, steps=build_steps + 1, progress=False,
        threads=type('Timed', (), {'fit': staticmethod(timed_fit)})())
    return {'step_s': statistics.median(step_s[2:]), 'build_s': statistics.median(build_s[3:]),
            'threads': statistics.median(used[2:])}

def measure(policy: str, load: int, model: str, steps: int, build_steps: int) -> dict:
    "Start `load` spinning processes, measure `policy` in a fresh process beside them, stop them."
    spinners = [subprocess.Popen([sys.executable, '-c', SPIN]) for _ in range(load)]
    try:
        time.sleep(0.5)
        env = {**os.environ, 'PYTHONPATH': str(ROOT)}
        if POLICIES[policy][1]: env['OMP_WAIT_POLICY'] = 'PASSIVE'
        with tempfile.TemporaryDirectory() as out:
            proc = subprocess.run([sys.executable, __file__, '--child', policy, '--model', model, '--steps', str(steps),
                                   '--build_steps', str(build_steps), '--out', out],
                                  capture_output=True, text=True, env=env)
        if proc.returncode: raise SystemExit(f"{policy} beside {load} failed:\n{proc.stderr[-3000:]}")
        return json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        for p in spinners: p.kill(); p.wait()

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--steps', type=int, default=10, help='training steps per measurement (the median of 3..N)')
    ap.add_argument('--build_steps', type=int, default=40, help='SFT steps per measurement (the median of 3..M)')
    ap.add_argument('--quick', action='store_true', help='CI: 1 round, loads 0 and 1, fixed 2 and fitted')
    ap.add_argument('--child', default=None, help=argparse.SUPPRESS)
    ap.add_argument('--model', default=None, help=argparse.SUPPRESS)
    ap.add_argument('--out', default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.model, args.steps, args.build_steps, args.out))); return
    import torch
    from nanorl.loop import usable_cpus
    from nanorl.tiny import tiny_model
    from seeds import machine
    loads, policies = [0, 1, 2], list(POLICIES)
    if args.quick: args.rounds, args.steps, args.build_steps, loads, policies = 1, 3, 4, [0, 1], ['fixed 2', 'fitted']
    results = Path(tempfile.mkdtemp(prefix='bench_threads_')) if args.quick else ROOT / 'bench/results'
    model = str(tiny_model('countdown', 0, **(dict(sft_steps=100) if args.quick else {}), progress=False))
    rows = []
    for r in range(args.rounds):
        for load in loads:
            for policy in (policies if r % 2 == 0 else policies[::-1]):
                m = measure(policy, load, model, args.steps, args.build_steps)
                rows.append({'round': r + 1, 'load': load, 'policy': policy, **m})
                print(f"round {r + 1}, {load} busy, {policy}: step {m['step_s']:.3f} s on {m['threads']:g} threads, "
                      f"build step {m['build_s']:.3f} s", file=sys.stderr, flush=True)
    with open(results / 'threads.csv', 'w', newline='') as f:
        w = csv.DictWriter(f, ['round', 'load', 'policy', 'step_s', 'build_s', 'threads']); w.writeheader()
        w.writerows(rows)
    at = {(x['round'], x['load'], x['policy']): x for x in rows}
    def ratio(key: str, load: int, policy: str, base: str) -> float:
        return statistics.median(at[r, load, policy][key] / at[r, 0, base][key] for r in range(1, args.rounds + 1))
    med = lambda key, load, policy: statistics.median(at[r, load, policy][key] for r in range(1, args.rounds + 1))
    lines = ["| busy processes | policy | threads used | s per step | step / its idle | step / fixed 2 idle | "
             "s per build step | build / its idle | build / fixed 2 idle |", "|---|---|---|---|---|---|---|---|---|"]
    for load in loads:
        for policy in policies:
            cells = [f"{med('threads', load, policy):g}", f"{med('step_s', load, policy):.3f}",
                     f"{ratio('step_s', load, policy, policy):.2f}", f"{ratio('step_s', load, policy, 'fixed 2'):.2f}",
                     f"{med('build_s', load, policy):.3f}", f"{ratio('build_s', load, policy, policy):.2f}",
                     f"{ratio('build_s', load, policy, 'fixed 2'):.2f}"]
            lines.append(f"| {load} | {policy} | {' | '.join(cells)} |")
    text = "\n".join(lines) + (
        f"\n\nMedians over {args.rounds} rounds; a ratio is taken within each round, then its median. A step: chapter "
        f"10's Countdown preset on the tiny model, the median of steps 3 to {args.steps}; a build step: one SFT step "
        f"of chapter 08's warm-up, the median of steps 3 to {args.build_steps}. Busy processes spin on the CPU "
        f"(`python -c '{SPIN}'`). Produced by `python bench/threads.py --rounds {args.rounds} --steps {args.steps} "
        f"--build_steps {args.build_steps}` on {time.strftime('%Y-%m-%d')}. Machine: {machine()}; this process may "
        f"use {usable_cpus()} CPUs.\n")
    (results / 'threads.md').write_text(text)
    print(text)

if __name__ == '__main__': main()
