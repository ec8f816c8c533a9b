"""Does a second turn help, and does what the reply says matter? Multi-turn Countdown, per seed, at start and end.

    python bench/lm_rung.py --config configs/countdown_multiturn_tiny_cpu.yaml --seed 0 --keep runs/mt   # 0, 1, 2
    python bench/multiturn.py runs/mt/countdown_multiturn_tiny_cpu_s0 runs/mt/countdown_multiturn_tiny_cpu_s1 ...
    python bench/multiturn.py RUN ... --models DIR ...   # the folders the runs started from, in the same order
    python bench/multiturn.py --quick        # CI: a 2-step run on the 100-step SFT model, 8 problems

Without --models a run's config names its model (`tiny` builds or finds the seed's tiny model; `python -m
nanorl.tiny countdown --seed N` prints its folder). --models pins the folders the runs really started from, for when
the tiny model's cache key has changed since (any edit to the code that builds it).

For each kept run, greedy conversations on the run's held-out problems, with the warm-up model (start) and the
trained one (final), under two environments: Countdown's informative reply ("=17", the value the answer reached)
and a blind one that says only "wrong". Counts right after the first turn and after the last, and two paired tests
(McNemar, exact, one-sided): last turn against first (do more attempts help?) and informative against blind at the
last turn (does the reply's content help?). Writes bench/results/multiturn.md.
"""
import argparse, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'bench'))
import torch
from seeds import machine
from nanorl.train import CKPT, build, from_dict, load_checkpoint, load_yaml, read_log
from nanorl.multiturn import CountdownTurns, paired_p

def conversations(task, policy, cfg, informative: bool) -> list:
    "Per held-out problem: (right after the first turn, right after the last)."
    task.task = CountdownTurns.of(task.task, informative=informative)
    eps = task.episodes(policy, cfg, task.task.eval_rows[:cfg.n_eval], greedy=True)
    return [(e.correct[0], e.correct[-1]) for e in eps]

def in_cache(folder: str) -> str:
    "A tiny model's folder as NANORL_CACHE/<name>: the cache it was built in, whatever its path on this machine."
    return f"NANORL_CACHE/{Path(folder).name}"

def changed(before: list, after: list) -> tuple[int, int]:
    "(gained, lost): problems right only in `after`, right only in `before`."
    return sum(a and not b for b, a in zip(before, after)), sum(b and not a for b, a in zip(before, after))

def measure(run: Path, model: str | None = None) -> dict:
    cfg = from_dict({**load_yaml(run / 'config.yaml'), 'progress': False, **({'model': model} if model else {})})
    torch.set_num_threads(cfg.threads)
    task, policy, *_ = build(cfg)
    log = read_log(run)
    out = {'seed': cfg.seed, 'n': cfg.n_eval, 'turns': cfg.turns,
           'logged': (log['eval_return'][0], log['eval_return'][-1])}
    for when in ('start', 'final'):
        if when == 'final': policy.load_state_dict(load_checkpoint(run)['policy'])
        told, blind = conversations(task, policy, cfg, True), conversations(task, policy, cfg, False)
        first, last, last_blind = [f for f, _ in told], [l for _, l in told], [l for _, l in blind]
        g, lo = changed(first, last)
        gb, lb = changed(last_blind, last)
        out[when] = {'first': sum(first), 'last': sum(last), 'last_blind': sum(last_blind),
                     'p_turn': paired_p(g, lo), 'gained': g, 'reply_gain': gb, 'reply_loss': lb,
                     'p_reply': paired_p(gb, lb)}
    return out

def table(rows: list[dict]) -> str:
    lines = ["| seed | model | first turn | last turn, reply | last turn, \"wrong\" | solved at turn 2 "
             "(McNemar p) | reply vs \"wrong\": gained/lost (McNemar p) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        for when in ('start', 'final'):
            c, n = r[when], r['n']
            lines.append(f"| {r['seed']} | {when} | {c['first'] / n:.3f} | {c['last'] / n:.3f} | "
                         f"{c['last_blind'] / n:.3f} | {c['gained']} ({c['p_turn']:.2g}) | "
                         f"{c['reply_gain']}/{c['reply_loss']} ({c['p_reply']:.2g}) |")
    return '\n'.join(lines)

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('runs', nargs='*', type=Path, help='run directories kept by bench/lm_rung.py --keep')
    ap.add_argument('--models', nargs='*', default=None, help='the model folder each run started from, in order')
    ap.add_argument('--quick', action='store_true', help='CI: a 2-step run of the preset, checked end to end')
    args = ap.parse_args()
    if args.quick:
        keep = Path(tempfile.mkdtemp(prefix='bench_multiturn_'))
        subprocess.run([sys.executable, 'bench/lm_rung.py', '--config', 'configs/countdown_multiturn_tiny_cpu.yaml',
                        '--quick', '--keep', str(keep)], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        args.runs = sorted(keep.iterdir())
    if not args.runs: ap.error("name the run directories to measure (or --quick)")
    for run in args.runs:
        if not (run / CKPT).exists(): ap.error(f"{run} holds no checkpoint: keep it with bench/lm_rung.py --keep")
    if args.models is not None and len(args.models) != len(args.runs):
        ap.error(f"--models names {len(args.models)} folders for {len(args.runs)} runs; give one per run, in order")
    rows = [measure(run, m) for run, m in zip(args.runs, args.models or [None] * len(args.runs))]
    for r in rows:     # a problem right at the first turn ends its conversation, so it is right at the last
        assert all(r[w]['last'] >= r[w]['first'] for w in ('start', 'final')), r
    agree = [f"seed {r['seed']}: {r['start']['last'] / r['n']:.3f} and {r['final']['last'] / r['n']:.3f} here, "
             f"{r['logged'][0]:.3f} and {r['logged'][1]:.3f} in the run's log" for r in rows]
    text = (f"Greedy conversations of up to {rows[0]['turns']} turns on each seed's {rows[0]['n']} held-out problems, "
            f"with the warm-up model (start) and after RL (final):\n\n{table(rows)}\n\n"
            f"Last-turn accuracy with the informative reply, start and final, against the run's own evaluations: "
            f"{'; '.join(agree)}.\n\n"
            f"Produced by `python bench/multiturn.py {' '.join(map(str, args.runs))}"
            f"{' --models ' + ' '.join(map(in_cache, args.models)) if args.models else ''}` on "
            f"{torch.get_num_threads()} torch thread(s), from runs kept by `python bench/lm_rung.py --config "
            f"configs/countdown_multiturn_tiny_cpu.yaml --seed N --keep DIR`. Machine: {machine()}; "
            f"{time.strftime('%Y-%m-%d')}.\n")
    print(text)
    if not args.quick: (ROOT / 'bench/results/multiturn.md').write_text(text)

if __name__ == '__main__': main()
