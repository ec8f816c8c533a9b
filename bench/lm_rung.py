"""A CPU rung on the tiny model (GRPO on Countdown by default; any language config), in a fresh process.

    python bench/lm_rung.py                         # configs/countdown_tiny_cpu.yaml
    python bench/lm_rung.py --config configs/gsm8k_tiny_cpu.yaml
    python bench/lm_rung.py --config configs/countdown_ppo_tiny_cpu.yaml --threads 1   # extra keys go to the run
    python bench/lm_rung.py --seed 1                # the model built and trained with seed 1: *_s1 results
    python bench/lm_rung.py --sft_steps 3000        # a tiny model warmed up for 3000 steps: *_sft_steps3000 results
    python bench/lm_rung.py --quick
        # CI: 2 steps, 8 eval problems, a 100-step SFT model; results in a temporary folder

Builds the tiny model first if it is not cached (timed separately), then trains with the config and any extra keys.
Copies the run's log to bench/results/<name>_log.csv and writes bench/results/<name>.md (<name>: --label, else the
config file's name): held-out greedy accuracy at
the start, at its peak and at the end, Fisher's one-sided p against the start, the training wall time, and the
trainer's time breakdown.
"""
import argparse, math, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'bench'))
from seeds import QUICK_SFT_STEPS, commit, machine
from nanorl.train import TASKS, from_dict, load_yaml, read_log, time_breakdown
from nanorl.lmtask import rung_report
from nanorl.tasks import cache_dir
from nanorl.tiny import weights_sha256

def named(model: str, extra: list) -> str:
    "The model the run trained, with its weights' sha256 when it is a folder: the same digest, the same model."
    if '--model' in extra[:-1]: model = extra[extra.index('--model') + 1]
    if not (Path(model) / 'model.safetensors').is_file(): return f" Model: {model}."
    return f" Model: {Path(model).name}, weights sha256 {weights_sha256(model)[:16]}."

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--config', default='configs/countdown_tiny_cpu.yaml')
    ap.add_argument('--label', default=None,
                    help='name of the results files (default: the config file name, with _s<seed> if --seed is given)')
    ap.add_argument('--seed', type=int, default=None, help="the run's seed, which also builds its tiny model "
                                                           "(default: the config's)")
    ap.add_argument('--quick', action='store_true',
                    help='CI smoke run: the same run for 2 steps (evaluating 8 problems) on '
                         'a tiny model with 100 SFT steps; results go to a temporary folder, not bench/results')
    ap.add_argument('--keep', default=None, help='copy the run directory (its checkpoint, config and log) here')
    ap.add_argument('--results', default='bench/results',
                    help='the folder of the results files (default: bench/results)')
    ap.add_argument('--sft_steps', type=int, default=None,
                    help="warm the seed's tiny model up for this many SFT steps instead of its recipe's: a model of "
                         "its own, which the run gets as --model")
    args, extra = ap.parse_known_args()      # anything else goes to nanorl.train, e.g. --threads 1
    name = args.label or Path(args.config).stem + ('' if args.sft_steps is None else f'_sft_steps{args.sft_steps}') + (
        '' if args.seed is None else f'_s{args.seed}')
    if args.seed is not None: extra = ['--seed', str(args.seed), *extra]
    cfg = from_dict({**load_yaml(ROOT / args.config), **({} if args.seed is None else {'seed': args.seed})})
    results = Path(tempfile.mkdtemp(prefix='bench_lm_rung_')) if args.quick else ROOT / args.results
    results.mkdir(parents=True, exist_ok=True)
    model_task = TASKS[cfg.task]().name      # a multi-turn task trains its single-turn task's model
    steps = QUICK_SFT_STEPS.get(model_task, 100) if args.quick else args.sft_steps
    options = ('' if steps is None else f', sft_steps={steps}') + (', progress=False' if args.quick else '')
    build = f"from nanorl.tiny import tiny_model; print(tiny_model({model_task!r}, {cfg.seed}{options}))"
    t0 = time.perf_counter()
    # the folder on stdout, the build's progress on stderr
    model = subprocess.run([sys.executable, '-c', build], check=True, cwd=ROOT, stdout=subprocess.PIPE,
                           text=True).stdout.strip().splitlines()[-1]
    t_build = time.perf_counter() - t0
    asked = [*(['--label', args.label] if args.label else []), *extra] + (['--quick'] if args.quick else [])
    if args.results != 'bench/results': asked += ['--results', args.results]
    if args.sft_steps is not None and not args.quick:
        asked += ['--sft_steps', str(args.sft_steps)]
        extra = [*extra, '--model', model]
    if args.quick:
        quick = {'model': model, 'steps': 2, 'eval_every': 2, 'n_eval': 8}
        extra = [*extra, *(x for k, v in quick.items() for x in (f'--{k}', str(v)))]
        cfg = from_dict({**load_yaml(ROOT / args.config), 'seed': cfg.seed, **quick})
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, '-m', 'nanorl.train', '--config', args.config, *extra, '--out_dir', tmp, '--name', name]
        t0 = time.perf_counter()
        # progress stays on stderr
        out = subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.PIPE, text=True).stdout
        print(out)
        # no path of this machine in a result file: the run's temporary folder as runs/, the cache as NANORL_CACHE/
        # (without a $, which the docs site would read as the start of maths)
        local = lambda line: line.replace(f"{tmp}/", 'runs/').replace(f"{cache_dir()}/", 'NANORL_CACHE/')
        notes = [local(l[len('nanorl: '):]) for l in out.splitlines() if l.startswith('nanorl: ')]
        wall = time.perf_counter() - t0
        log = read_log(Path(tmp) / name)
        shutil.copy(Path(tmp) / name / 'log.csv', results / f'{name}_log.csv')
        if args.keep: shutil.copytree(Path(tmp) / name, Path(args.keep) / name, dirs_exist_ok=True)
    r = rung_report(log, cfg.n_eval)
    trainer = ' '.join(['python -m nanorl.train --config', args.config, *extra])
    trainer = trainer.replace(f"{cache_dir()}/", 'NANORL_CACHE/')      # a --model folder, without this machine's path
    if args.quick:   # the run trained its steps and evaluated at the start and at the end
        assert int(log['step'][-1]) == r['final_step'] == cfg.steps, (log['step'], r)
    n = len(os.sched_getaffinity(0))
    cores = f"{n} of this machine's {os.cpu_count()} cores" + (" (pinned with taskset)" if n < os.cpu_count() else "")
    threads = extra[extra.index('--threads') + 1] if '--threads' in extra[:-1] else cfg.threads
    cores += f", {threads} torch thread{'s' if str(threads) != '1' else ''}"
    built = (f"building the tiny model took {t_build / 60:.1f} min" if t_build > 10
             else "the tiny model came from the cache")
    text = (f"| held-out greedy accuracy ({cfg.n_eval} problems) | value |\n|---|---|\n"
            f"| start (SFT warm-up only) | {r['start']:.3f} |\n| peak (step {r['peak_step']}) | {r['peak']:.3f} |\n"
            f"| final (step {r['final_step']}) | {r['final']:.3f} |\n"
            f"| Fisher one-sided p, final > start | {r['p_final']:.2g} |\n"
            f"| Fisher one-sided p, peak > start | {r['p_peak']:.2g} |\n\n"
            f"Training took {wall / 60:.1f} min of wall time (process start included) on {cores}; "
            f"{built}. {time_breakdown(log)}. "
            f"Produced by `{' '.join(['python bench/lm_rung.py --config', args.config, *asked])}`, which runs "
            f"`{trainer}`.{named(model, extra)} "
            f"Machine: {machine()}; "
            f"{time.strftime('%Y-%m-%d')}; commit {commit()}.\n")
    if notes: text += "\nThe run reported: " + "; ".join(notes) + ".\n"
    summary = [l for l in out.splitlines() if l.startswith('held-out accuracy')]
    if summary: text += f"\nIts summary: {summary[-1]}.\n"
    prefs = [(s, c, rj, a) for s, c, rj, a in zip(log['step'], log.get('chosen_logp', []), log.get('rejected_logp', []),
                                                    log.get('pref_acc', [])) if not math.isnan(c)]
    # DPO / IPO: the training pairs' statistics, as means over windows of 50 steps (each step is 32 random pairs)
    if prefs:
        win = lambda i: [sum(p[i] for p in prefs[j:j + 50]) / len(prefs[j:j + 50]) for j in range(0, len(prefs), 50)]
        fmt = lambda xs: ", ".join(f"{x:.2f}" if abs(x) < 1.5 else f"{x:.1f}" for x in xs)
        text += (f"\nOn the training pairs, means over successive windows of 50 steps:\n\n"
                 f"- preference accuracy: {fmt(win(3))}\n- chosen logprob (nats): {fmt(win(1))}\n"
                 f"- rejected logprob (nats): {fmt(win(2))}\n")
    (results / f'{name}.md').write_text(text)
    print(text)
    if args.quick: print(f"(quick mode: results in {results})")

if __name__ == '__main__': main()
