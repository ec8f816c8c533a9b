"""torchrun with 2 gloo ranks against one process, on the same CartPole and Countdown work (chapter 14).

    python bench/ddp.py [--repeats 3]
    python bench/ddp.py --quick     # CI: CartPole only, 3 steps, 1 repeat; written to a temporary folder

One process runs with 2 threads; the 2 ranks with 1 thread each, so both use the machine's 2 cores. Each run trains a
fixed number of steps (no stop when solved, evaluation only at the end) and the figure is optimizer steps per second
of the loop itself (rollout, scoring and update from the log of rank 0, evaluation left out). The two alternate,
`repeats` times each; medians (min to max). Countdown uses the tiny model after a 100-step warm-up (timing only).
Writes bench/results/ddp.md.
"""
import argparse, os, socket, statistics, subprocess, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanorl.runlog import read_log

def free_port() -> int:
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

def steps_per_s(ranks: int, args: list[str], out: Path) -> float:
    "Run the work once (`ranks` 1: plain python with 2 threads) and return the loop's steps per second."
    common = ['--progress', 'false', '--out_dir', str(out), '--stop_when_solved', 'false', '--eval_every', '100000',
              *args]
    if ranks == 1: cmd = [sys.executable, '-m', 'nanorl.train', '--threads', '2', *common]
    else: cmd = [sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', str(ranks), '--master_addr',
                 '127.0.0.1', '--master_port', str(free_port()), '-m', 'nanorl.train', '--threads', '1', *common]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, 'PYTHONPATH': str(ROOT)})
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    log = read_log(next(out.iterdir()))
    loop = sum(a + b + c for a, b, c in zip(log['t_rollout'][1:], log['t_score'][1:], log['t_update'][1:]))
    return (len(log['step']) - 1) / loop

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--repeats', type=int, default=3)
    ap.add_argument('--quick', action='store_true', help='CI smoke run: CartPole, 3 steps, 1 repeat')
    args = ap.parse_args()
    results = ROOT / 'bench/results'
    work = {'CartPole, REINFORCE, 16 episodes per step': ['--steps', '40']}
    if args.quick: args.repeats, results, work = 1, Path(tempfile.mkdtemp(prefix='bench_ddp_')), {
        'CartPole, 3 steps': ['--steps', '3']}
    else:
        from nanorl.tiny import tiny_model
        model = str(tiny_model('countdown', seed=0, sft_steps=100, progress=False))
        work['Countdown, GRPO, 16 prompts x 8, tiny model'] = [
            '--task', 'countdown', '--algo', 'grpo', '--model', model, '--n_prompts', '16', '--group_size', '8',
            '--max_len', '24', '--steps', '8', '--n_eval', '16']
    rows = {}
    for name, a in work.items():
        rates = {1: [], 2: []}
        for _ in range(args.repeats):
            for ranks in (1, 2):
                with tempfile.TemporaryDirectory() as tmp: rates[ranks].append(steps_per_s(ranks, a, Path(tmp)))
        rows[name] = rates
        print(name, {k: [round(x, 2) for x in v] for k, v in rates.items()}, flush=True)
    info = open('/proc/cpuinfo').read() if os.path.exists('/proc/cpuinfo') else ''
    cpu = next((ln.split(':', 1)[1].strip() for ln in info.splitlines() if ln.startswith('model name')), '?')
    med = lambda v: f"{statistics.median(v):.2f} ({min(v):.2f} to {max(v):.2f})"
    lines = ["# torchrun with 2 gloo ranks against one process", "",
             f"Produced by `python bench/ddp.py{' --quick' if args.quick else ''}`; {args.repeats} alternating "
             f"repeats, medians (min to max) of optimizer steps per second of the loop (evaluation left out). "
             f"CPU: {cpu}, {os.cpu_count()} cores, avx2 {'yes' if ' avx2' in info else 'no'}, avx512f "
             f"{'yes' if 'avx512f' in info else 'no'}. One process: 2 threads; 2 ranks: 1 thread each.", "",
             "| work | one process | 2 ranks | 2 ranks / one |", "|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {med(r[1])} | {med(r[2])} | "
                     f"{statistics.median(r[2]) / statistics.median(r[1]):.2f} |")
    results.mkdir(parents=True, exist_ok=True)
    (results / 'ddp.md').write_text('\n'.join(lines) + '\n')
    print('\n'.join(lines))

if __name__ == '__main__':
    main()
