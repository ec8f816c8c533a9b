"""Language rungs over several seeds from an empty cache: median and range of start, final and p; sync against async.

    python bench/seeds.py                  # GRPO sync (bench/lm_rung.py) and async (bench/async_rung.py), seeds 0 1 2
    python bench/seeds.py --seeds 3 --runs lm_rung:configs/countdown_tiny_cpu.yaml
    python bench/seeds.py --summarize      # only rewrite bench/results/seeds.md from the kept logs
    python bench/seeds.py --seeds 0 --threads 1 --runs lm_rung:configs/countdown_tiny_cpu.yaml &
    python bench/seeds.py --seeds 1 --threads 1 --runs lm_rung:configs/countdown_tiny_cpu.yaml   # two at once

Each seed builds its own tiny model (chapter 08: the seed shapes the model, its SFT warm-up and the held-out problems)
into a fresh, empty NANORL_CACHE (timed), then runs each bench with `--seed`; the benches keep their logs as
bench/results/<config>_s<seed>_log.csv. The summary reads those logs, so seeds can be run in several sittings.
bench/results/seeds.json keeps the build times and the machine of each seed. bench/results/seeds.md (in the README)
always summarises the rung runs, sync and async, over every seed kept; a sitting with other --runs prints their
summary (bench/axis.py tables the supervision axis from the same logs).
"""
import argparse, json, os, platform, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanorl.train import from_dict, load_yaml, read_log
from nanorl.tasks import fisher_exact
from nanorl.lmtask import rung_report

RESULTS = ROOT / 'bench/results'
RUNS = ['lm_rung:configs/countdown_tiny_cpu.yaml', 'async_rung:configs/countdown_async.yaml']

def machine() -> str:
    "The CPU's name, whether it has AVX2 and AVX-512, the kernels torch picked, and the core count."
    import torch
    info = Path('/proc/cpuinfo').read_text() if Path('/proc/cpuinfo').exists() else ''
    name = next((l.split(':', 1)[1].strip() for l in info.splitlines() if l.startswith('model name')),
                platform.processor() or 'unknown CPU')
    flags = set(next((l.split(':', 1)[1].split() for l in info.splitlines() if l.startswith('flags')), []))
    has = ', '.join(f"{f} {'yes' if f in flags else 'no'}" for f in ('avx2', 'avx512f'))
    return (f"{name}, {os.cpu_count()} cores ({has}); torch {torch.__version__} "
            f"kernels {torch.backends.cpu.get_cpu_capability()}")

def spread(xs: list, fmt: str = '{:.3f}') -> str:
    "Median and range: '0.074 (0.055 to 0.098)'."
    xs = sorted(xs)
    m = fmt.format(statistics.median(xs))
    return m if len(xs) == 1 else f"{m} ({fmt.format(xs[0])} to {fmt.format(xs[-1])})"

def run_seed(seed: int, runs: list, cache: Path, book_path: Path, threads: int | None = None):
    cfgs = [from_dict({**load_yaml(ROOT / r.split(':', 1)[1]), 'seed': seed}) for r in runs]
    env = {**os.environ, 'NANORL_CACHE': str(cache)}
    builds = {}
    for task in dict.fromkeys(c.task for c in cfgs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, '-m', 'nanorl.tiny', task, '--seed', str(seed)], check=True, cwd=ROOT, env=env)
        builds[task] = time.perf_counter() - t0
    book = json.loads(book_path.read_text()) if book_path.exists() else {'seeds': {}}  # another sitting may write it
    kept = book['seeds'].setdefault(str(seed), {'build_s': {}})
    for task, t in builds.items():   # one list per task: every sitting's build from an empty cache is kept
        old = kept['build_s'].get(task, [])
        kept['build_s'][task] = (old if isinstance(old, list) else [old]) + [t]
    kept.update(machine=machine(), cache='empty at the start of every sitting')
    if threads: kept['train_threads'] = threads
    book_path.write_text(json.dumps(book, indent=1) + '\n')
    for r in runs:
        bench, config = r.split(':', 1)
        extra = ['--threads', str(threads)] if threads and bench == 'lm_rung' else []
        subprocess.run([sys.executable, f'bench/{bench}.py', '--config', config, '--seed', str(seed), *extra],
                       check=True, cwd=ROOT, env=env)

def reports(config: str, seeds: list, results: Path = RESULTS) -> dict:
    "Each seed's rung report of `config` (start, final, peak, p, wall minutes) from the logs kept in `results`, if any."
    cfg = from_dict(load_yaml(ROOT / config))
    reps = {}
    for s in seeds:
        path = results / f'{Path(config).stem}_s{s}_log.csv'
        if path.exists():
            log = read_log(path)
            reps[s] = {**rung_report(log, cfg.n_eval), 'wall_min': log['wall_time'][-1] / 60}
    return reps

def columns(reps: dict) -> str:
    "Median (range) over seeds of start, final, peak, p and wall minutes, as table cells."
    col = lambda k, fmt='{:.3f}': spread([r[k] for r in reps.values()], fmt)
    return f"{col('start')} | {col('final')} | {col('peak')} | {col('p_final', '{:.2g}')} | {col('wall_min', '{:.1f}')}"

def row(config: str, seeds: list) -> tuple[str, dict]:
    "One config's line of the summary, and each seed's report."
    reps = reports(config, seeds)
    if not reps: return f"| `{config}` | not run | | | | | |", reps
    return f"| `{config}` | {', '.join(map(str, reps))} | {columns(reps)} |", reps

def paired(sync: dict, asyn: dict, n: int) -> str:
    "Final accuracy of sync and async runs of the same seeds, and Fisher's two-sided p on the pooled counts."
    both = sorted(set(sync) & set(asyn))
    if not both: return ''
    lines = ["| seed | start | sync final | async final | async - sync |", "|---|---|---|---|---|"]
    lines += [f"| {s} | {sync[s]['start']:.3f} | {sync[s]['final']:.3f} | {asyn[s]['final']:.3f} | "
              f"{asyn[s]['final'] - sync[s]['final']:+.3f} |" for s in both]
    k = lambda reps: sum(round(reps[s]['final'] * n) for s in both)
    p = fisher_exact(k(sync), n * len(both), k(asyn), n * len(both), alternative='two-sided')
    lines.append(f"\nPooled over seeds {', '.join(map(str, both))}: sync {k(sync)} of {n * len(both)} held-out "
                 f"problems solved at the end, async {k(asyn)}; Fisher's two-sided p = {p:.2g}. Median of the per-seed "
                 f"differences: {statistics.median(asyn[s]['final'] - sync[s]['final'] for s in both):+.3f}.")
    return '\n'.join(lines)

def summarize(runs: list, seeds: list, book: dict) -> str:
    lines = ["| config | seeds | held-out start | final | peak | p, final > start | training wall min |",
             "|---|---|---|---|---|---|---|"]
    reps = {}
    for r in runs:
        config = r.split(':', 1)[1]
        line, reps[config] = row(config, seeds)
        lines.append(line)
    builds = [b for s in seeds if str(s) in book['seeds'] for bs in book['seeds'][str(s)]['build_s'].values()
              for b in (bs if isinstance(bs, list) else [bs])]
    machines = sorted({book['seeds'][str(s)]['machine'] for s in seeds if str(s) in book['seeds']})
    took = spread([b / 60 for b in builds], '{:.1f}') if builds else ''
    threads = sorted({book['seeds'][str(s)].get('train_threads') for s in seeds if str(s) in book['seeds']} - {None})
    flag = f" --threads {threads[0]}" if len(threads) == 1 else ''
    trained = f"Training threads: {' or '.join(map(str, threads))}. " if threads else ''
    ran = [r for r in runs if reps[r.split(':', 1)[1]]]   # a row that says "not run" is not in the command
    built = f"Building each seed's tiny model from an empty NANORL_CACHE took {took} min. " if builds else ''
    text = '\n'.join(lines) + (
        f"\n\nMedian (min to max) over seeds; held-out greedy accuracy on 256 problems (the seed picks them); "
        f"Fisher's one-sided p of final > start; wall time of the training loop from the log. "
        f"{built}{trained}Machine: {'; '.join(machines) or machine()}. Produced by `python bench/seeds.py --seeds "
        f"{' '.join(map(str, seeds))}{flag} --runs {' '.join(ran) or ' '.join(runs)}`.\n")
    benches = {r.split(':', 1)[0]: r.split(':', 1)[1] for r in reversed(runs)}   # the first run of each bench
    sync, asyn = benches.get('lm_rung'), benches.get('async_rung')
    if sync and asyn and reps[sync] and reps[asyn]:
        n = from_dict(load_yaml(ROOT / sync)).n_eval
        text += f"\nSync (`{sync}`) against async (`{asyn}`), seed by seed:\n\n"
        text += paired(reps[sync], reps[asyn], n) + '\n'
    return text

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2])
    ap.add_argument('--runs', nargs='+', default=RUNS, help='bench:config pairs, run in this order for every seed')
    ap.add_argument('--summarize', action='store_true', help='run nothing; rewrite the summary from the kept logs')
    ap.add_argument('--threads', type=int, default=None,
                    help="torch threads of each lm_rung run (default: the config's); the build always uses its own")
    args = ap.parse_args()
    book_path = RESULTS / 'seeds.json'
    if not args.summarize:
        for seed in args.seeds:
            with tempfile.TemporaryDirectory(prefix='nanorl_cache_') as cache:
                run_seed(seed, args.runs, Path(cache), book_path, args.threads)
    book = json.loads(book_path.read_text()) if book_path.exists() else {'seeds': {}}
    print(summarize(args.runs, args.seeds, book))        # this sitting's runs
    # the README's table is always the rung runs over every seed kept, whatever this sitting ran
    seeds = sorted({int(s) for s in book['seeds']} | set(args.seeds))
    (RESULTS / 'seeds.md').write_text(summarize(RUNS, seeds, book))

if __name__ == '__main__': main()
