"""Language rungs over several seeds from an empty cache: median and range of start, final and p; sync against async.

    python bench/seeds.py                  # GRPO sync (bench/lm_rung.py) and async (bench/async_rung.py), seeds 0 1 2
    python bench/seeds.py --seeds 3 --runs lm_rung:configs/countdown_tiny_cpu.yaml
    python bench/seeds.py --summarize      # only rewrite bench/results/seeds.md from the kept logs
    python bench/seeds.py --seeds 0 --threads 1 --runs lm_rung:configs/countdown_tiny_cpu.yaml &
    python bench/seeds.py --seeds 1 --threads 1 --runs lm_rung:configs/countdown_tiny_cpu.yaml   # two at once
    python bench/seeds.py --runs lm_rung:configs/countdown_tiny_cpu.yaml:dynamic_sampling=0,closeness=0 --out learning
        # a variant: the config with these keys changed (logs: <config>_dynamic_sampling0_closeness0_s<seed>_log.csv);
        # --out writes this sitting's table to bench/results/learning.md
    python bench/seeds.py --cache ~/.cache/nanorl --runs lm_rung:configs/countdown_tiny_cpu.yaml:closeness=0.2
        # on the models already in that cache (built there if missing; the build is not timed)
    python bench/seeds.py --keep runs_kept   # keep each lm_rung run's folder, for bench/ceiling.py --after runs_kept

Each seed builds its own tiny model (chapter 08: the seed shapes the model, its SFT warm-up and the held-out problems)
into a fresh, empty NANORL_CACHE (timed; --cache names one to reuse instead), then runs each bench with `--seed`; the
benches keep their logs as bench/results/<config>_s<seed>_log.csv. The summary reads those logs, so seeds can be run
in several sittings. bench/results/seeds.json keeps the build times, the models' sha256 and the machine of each seed.
bench/results/seeds.md (in the README) always summarises the rung runs, sync and async, over every seed kept; a
sitting with other --runs prints their summary (bench/axis.py tables the supervision axis from the same logs).

Every table gives, per run: held-out accuracy at the start, at the end (the final figure, fixed before the run: the
last evaluation) and at its peak (one look of many: not a verdict), Fisher's one-sided p of final > start, the share of
sampled groups that were dead (rewards all equal), the groups drawn per group trained on, the minutes of training until
the first evaluation with p < 0.01 against the start, and the training wall time.
"""
import argparse, json, math, os, platform, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanorl.train import from_dict, load_yaml, read_log
from nanorl.tasks import fisher_exact
from nanorl.lmtask import rung_report
from nanorl.tiny import weights_sha256

RESULTS = ROOT / 'bench/results'
RUNG = 'lm_rung:configs/countdown_tiny_cpu.yaml'
PRESET = RUNG            # the preset as configs/countdown_tiny_cpu.yaml ships it
# what the preset's choices buy: its learning rate and temperature before the redesign, no dynamic sampling, partial
# credit for getting close
VARIANTS = [PRESET, f'{RUNG}:lr=0.0001,temperature=1.0', f'{RUNG}:dynamic_sampling=0', f'{RUNG}:closeness=0.2']
RUNS = [*VARIANTS, 'async_rung:configs/countdown_async.yaml']   # the README's table: rung 2's variants, rung 3

# CI's quick runs warm a tiny model up for this many SFT steps: enough to run end to end, and shared by every quick run
# of the task through the cache (an IFEval step takes 7 times a Countdown one, so its quick model is smaller)
QUICK_SFT_STEPS = {'countdown': 100, 'ifeval': 20}

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

def commit() -> str:
    "The checkout's short commit hash ('unknown' outside git)."
    out = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, capture_output=True, text=True).stdout
    return out.strip() or 'unknown'

def spread(xs: list, fmt: str = '{:.3f}') -> str:
    "Median and range: '0.074 (0.055 to 0.098)'; infinity reads 'never', and values never logged 'not logged'."
    if xs and all(math.isnan(x) for x in xs): return 'not logged'       # an async trainer logs no draws
    xs, f = sorted(xs), lambda x: 'never' if x == math.inf else fmt.format(x)
    return f(statistics.median(xs)) if len(xs) == 1 else f"{f(statistics.median(xs))} ({f(xs[0])} to {f(xs[-1])})"

def parse_run(run: str) -> tuple[str, str, dict, str]:
    "`bench:config[:key=value,...]` as (bench, config, the changed keys as strings, the name of its results)."
    bench, config, *keys = run.split(':', 2)
    changed = dict(kv.split('=', 1) for kv in keys[0].split(',')) if keys else {}
    return bench, config, changed, Path(config).stem + ''.join(f'_{k}{v}' for k, v in changed.items())

MODEL_KEYS = ('sft_steps',)     # changed keys that shape the run's tiny model, not its config (bench/lm_rung.py's)

def run_config(run: str, seed: int | None = None):
    "The run's config, with its changed keys (and `seed`)."
    _, config, changed, _ = parse_run(run)
    changed = {k: v for k, v in changed.items() if k not in MODEL_KEYS}
    return from_dict({**load_yaml(ROOT / config), **changed, **({} if seed is None else {'seed': seed})})

def models_of(runs: list) -> dict:
    "The tiny models `runs` train, as {name in the records: (task, warm-up steps or None for the recipe's)}."
    models = {}
    for r in runs:
        task, steps = run_config(r).task, parse_run(r)[2].get('sft_steps')
        models[task if steps is None else f'{task} sft_steps {steps}'] = (task, steps)
    return models

def run_seed(seed: int, runs: list, cache: Path, book_path: Path, threads: int | None = None, keep: str | None = None,
             fresh: bool = True, results: str = 'bench/results'):
    "Build (`fresh`: time the build from an empty `cache`) and run each of `runs` for `seed`; keep what they measured."
    env = {**os.environ, 'NANORL_CACHE': str(cache)}
    builds, digests = {}, {}
    for key, (task, steps) in models_of(runs).items():
        t0 = time.perf_counter()
        warm_up = [] if steps is None else ['--sft_steps', steps]
        folder = subprocess.run([sys.executable, '-m', 'nanorl.tiny', task, '--seed', str(seed), *warm_up], check=True,
                                cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()[-1]
        builds[key], digests[key] = time.perf_counter() - t0, weights_sha256(folder)[:16]
    book = json.loads(book_path.read_text()) if book_path.exists() else {'seeds': {}}  # another sitting may write it
    kept = book['seeds'].setdefault(str(seed), {'build_s': {}})
    if other := {t: d for t, d in digests.items() if kept.get('sha256', {}).get(t, d) != d}:
        was = ', '.join(f"{t} {d}, not {kept['sha256'][t]}" for t, d in other.items())
        print(f"bench/seeds.py: seed {seed}'s model has other weights than the runs kept so far in {results} ({was}): "
              f"the seed's record now describes the new model, and its kept runs not run again are of the old one",
              file=sys.stderr)
        kept = book['seeds'][str(seed)] = {'build_s': {}}
    for task, t in builds.items() if fresh else ():   # one list per task: every build from an empty cache is kept
        old = kept['build_s'].get(task, [])
        kept['build_s'][task] = (old if isinstance(old, list) else [old]) + [t]
    kept.setdefault('sha256', {}).update(digests)
    kept.update(machine=machine(), date=time.strftime('%Y-%m-%d'), commit=commit())
    if threads: kept['train_threads'] = threads
    book_path.write_text(json.dumps(book, indent=1) + '\n')
    for r in runs:
        bench, config, changed, name = parse_run(r)
        extra = ['--threads', str(threads)] if threads and bench == 'lm_rung' else []
        if keep and bench == 'lm_rung': extra += ['--keep', keep]
        if results != 'bench/results':
            if bench != 'lm_rung': raise SystemExit(f"{r}: only lm_rung runs take --results")
            extra += ['--results', results]
        if changed:
            if bench != 'lm_rung': raise SystemExit(f"{r}: only lm_rung runs take changed keys")
            extra += ['--label', f'{name}_s{seed}', *(x for k, v in changed.items() for x in (f'--{k}', v))]
        subprocess.run([sys.executable, f'bench/{bench}.py', '--config', config, '--seed', str(seed), *extra],
                       check=True, cwd=ROOT, env=env)

def first_significant(log: dict, n: int, alpha: float = 0.01) -> float:
    "Minutes of training until the first evaluation with Fisher's p < `alpha` against the start (inf: none)."
    evals = [(a, t) for a, t in zip(log['eval_return'], log['wall_time']) if not math.isnan(a)]
    k0 = round(evals[0][0] * n)
    return next((t / 60 for a, t in evals[1:] if fisher_exact(k0, n, round(a * n), n) < alpha), math.inf)

def signal(log: dict, n_prompts: int) -> dict:
    "The share of sampled groups that were dead, and groups drawn per group trained on (NaN: not logged)."
    drawn, dead = log.get('groups_drawn', []), log.get('groups_dead', [])
    pairs = [(d, x) for d, x in zip(drawn, dead) if not math.isnan(d)]
    if not pairs: return {'dead': math.nan, 'drawn_per_group': math.nan}
    return {'dead': sum(x for _, x in pairs) / sum(d for d, _ in pairs),
            'drawn_per_group': sum(d for d, _ in pairs) / (len(pairs) * n_prompts)}

def reports(run: str, seeds: list, results: Path = RESULTS) -> dict:
    ("Each seed's rung report of `run` (a config, or bench:config[:keys]) from the logs kept in `results`, if any: "
     "start, final, peak, p, dead share, groups drawn per group, minutes to significance and wall minutes.")
    run = run if ':' in run else f'lm_rung:{run}'      # a config alone: its sync rung
    cfg, name = run_config(run), parse_run(run)[3]
    reps = {}
    for s in seeds:
        path = results / f'{name}_s{s}_log.csv'
        if path.exists():
            log = read_log(path)
            reps[s] = {**rung_report(log, cfg.n_eval), **signal(log, cfg.n_prompts),
                       'to_p01_min': first_significant(log, cfg.n_eval), 'wall_min': log['wall_time'][-1] / 60}
    return reps

def columns(reps: dict) -> str:
    "Median (range) over seeds of start, final, peak, p and wall minutes, as table cells."
    col = lambda k, fmt='{:.3f}': spread([r[k] for r in reps.values()], fmt)
    return f"{col('start')} | {col('final')} | {col('peak')} | {col('p_final', '{:.2g}')} | {col('wall_min', '{:.1f}')}"

def signal_columns(reps: dict) -> str:
    "Median (range) over seeds of the dead share, groups drawn per group and minutes to p < 0.01, as table cells."
    col = lambda k, fmt: spread([r[k] for r in reps.values()], fmt)
    return f"{col('dead', '{:.2f}')} | {col('drawn_per_group', '{:.2f}')} | {col('to_p01_min', '{:.1f}')}"

HEADER = ("| run | seeds | held-out start | final | peak | p, final > start | training wall min | dead groups "
          "| groups drawn per group | min to p < 0.01 |\n|---|---|---|---|---|---|---|---|---|---|")

def row(run: str, seeds: list, results: Path = RESULTS) -> tuple[str, dict]:
    "One run's line of the summary, and each seed's report."
    reps = reports(run, seeds, results)
    _, config, changed, _ = parse_run(run)
    what = f"`{config}`" + (f" with {', '.join(f'{k} {v}' for k, v in changed.items())}" if changed else '')
    if not reps: return f"| {what} | not run | | | | | | | | |", reps
    return f"| {what} | {', '.join(map(str, reps))} | {columns(reps)} | {signal_columns(reps)} |", reps

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

def summarize(runs: list, seeds: list, book: dict, results: Path = RESULTS) -> str:
    lines, reps = [HEADER], {}
    for r in runs:
        line, reps[r] = row(r, seeds, results)
        lines.append(line)
    builds = [b for s in seeds if str(s) in book['seeds'] for key, bs in book['seeds'][str(s)]['build_s'].items()
              if 'sft_steps' not in key for b in (bs if isinstance(bs, list) else [bs])]   # the recipe's models
    machines = sorted({book['seeds'][str(s)]['machine'] for s in seeds if str(s) in book['seeds']})
    made = sorted({book['seeds'][str(s)].get('date', 'an unrecorded date') for s in seeds if str(s) in book['seeds']})
    took = spread([b / 60 for b in builds], '{:.1f}') if builds else ''
    threads = sorted({book['seeds'][str(s)].get('train_threads') for s in seeds if str(s) in book['seeds']} - {None})
    flag = f" --threads {threads[0]}" if len(threads) == 1 else ''
    where = results.relative_to(ROOT)
    if results != RESULTS: flag += f" --results {where}"
    trained = f"Training threads: {' or '.join(map(str, threads))}. " if threads else ''
    ran = [r for r in runs if reps[r]]   # a row that says "not run" is not in the command
    n_evals = ' or '.join(sorted({f"{run_config(r).n_eval:,}" for r in runs}))
    built = f"Building each seed's tiny model from an empty NANORL_CACHE took {took} min. " if builds else ''
    digests = [f"seed {s} {t} {d}" for s in seeds for t, d in book['seeds'].get(str(s), {}).get('sha256', {}).items()]
    if digests: built += f"The models' weights, sha256 (the same digest, the same model): {', '.join(digests)}. "
    text = '\n'.join(lines) + (
        f"\n\nMedian (min to max) over seeds; held-out greedy accuracy on {n_evals} problems (drawn with the "
        f"seed from the distribution the runs practise on); final: the last evaluation, fixed before the run; peak: "
        f"the best of every evaluation (not a verdict); Fisher's one-sided p of final > start; wall time of the "
        f"training loop from the log; dead groups: the share of sampled groups whose rewards were all equal; groups "
        f"drawn per group trained on (above 1 with dynamic sampling); minutes of training to the first evaluation "
        f"with p < 0.01 against the start. "
        f"{built}{trained}Machine: {'; '.join(machines) or machine()}. Measured {'; '.join(made)} "
        f"(each seed's commit: {where}/seeds.json). "
        f"Produced by `python bench/seeds.py --seeds "
        f"{' '.join(map(str, seeds))}{flag} --runs {' '.join(ran) or ' '.join(runs)}`.\n")
    asyn = next((r for r in runs if r.startswith('async_rung:')), None)
    sync = PRESET if PRESET in runs else next((r for r in runs if r.startswith('lm_rung:')), None)
    if sync and asyn and reps[sync] and reps[asyn]:
        n = run_config(sync).n_eval
        text += f"\nSync (`{parse_run(sync)[1]}`) against async (`{parse_run(asyn)[1]}`), seed by seed:\n\n"
        text += paired(reps[sync], reps[asyn], n) + '\n'
    return text

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2])
    ap.add_argument('--runs', nargs='+', default=RUNS, help='bench:config pairs, run in this order for every seed')
    ap.add_argument('--summarize', action='store_true', help='run nothing; rewrite the summary from the kept logs')
    ap.add_argument('--out', default=None, help="also write this sitting's table to bench/results/OUT.md")
    ap.add_argument('--threads', type=int, default=None,
                    help="torch threads of each lm_rung run (default: the config's); the build always uses its own")
    ap.add_argument('--cache', default=None, help='use this NANORL_CACHE, models and all, instead of an empty one per '
                                                  'seed (the builds are then not timed)')
    ap.add_argument('--keep', default=None, help='keep each lm_rung run (checkpoint, config, log) in this folder, '
                                                 'for bench/ceiling.py --after')
    ap.add_argument('--results', default='bench/results', help="the folder of the logs, seeds.json and seeds.md "
                    "(default: bench/results; another one keeps another machine's figures apart)")
    args = ap.parse_args()
    results = ROOT / args.results
    results.mkdir(parents=True, exist_ok=True)
    book_path = results / 'seeds.json'
    if not args.summarize:
        for seed in args.seeds:
            if args.cache:
                run_seed(seed, args.runs, Path(args.cache), book_path, args.threads, args.keep, False, args.results)
            else:
                with tempfile.TemporaryDirectory(prefix='nanorl_cache_') as cache:
                    run_seed(seed, args.runs, Path(cache), book_path, args.threads, args.keep, True, args.results)
    book = json.loads(book_path.read_text()) if book_path.exists() else {'seeds': {}}
    text = summarize(args.runs, args.seeds, book, results)        # this sitting's runs
    print(text)
    if args.out: (results / f'{args.out}.md').write_text(text)
    # the README's table is always the rung runs over every seed kept, whatever this sitting ran
    seeds = sorted({int(s) for s in book['seeds']} | set(args.seeds))
    (results / 'seeds.md').write_text(summarize(RUNS, seeds, book, results))

if __name__ == '__main__': main()
