"""An async run from its config: a trainer and two rollout workers, three processes on loopback, against the sync run.

    python bench/async_rung.py                                     # configs/countdown_async.yaml
    python bench/async_rung.py --config configs/cartpole_async.yaml --sync_log ''
    python bench/async_rung.py --seed 1     # seed 1, against the sync preset's log of seed 1 (bench/seeds.py)
    python bench/async_rung.py --quick
        # CI: 1 worker, 2 steps, 8 eval problems, a 100-step SFT model; temporary folder

Starts `python -m nanorl.train --config CONFIG` (the trainer) and `--role rollout --trainer_url URL` twice, with a
fresh NANORL_TOKEN, and waits for the trainer to finish. Copies the trainer's log to bench/results/<config>_log.csv
and writes bench/results/<config>.md: held-out accuracy at the start, peak and end with Fisher's p (language tasks),
the same for the sync run's log when given (default: the shipped sync preset's log of the same seed, kept by
bench/seeds.py),
wall time, and the transport's counters.
"""
import argparse, json, os, secrets, shutil, socket, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanorl.train import from_dict, load_yaml, read_log, time_breakdown
sys.path.insert(0, str(ROOT / 'bench'))
from seeds import PRESET, parse_run

def free_port():
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--config', default='configs/countdown_async.yaml')
    ap.add_argument('--seed', type=int, default=None, help="the trainer's seed, which also builds its tiny model "
                                                           "(default: the config's); results go to <config>_s<seed>")
    ap.add_argument('--sync_log', default=None, help='the sync run to compare with (default: the shipped sync '
                    'preset\'s log of the same seed in bench/results, as bench/seeds.py names it; "" for none)')
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--quick', action='store_true',
                    help='CI smoke run: 1 worker, 2 steps (language tasks: evaluating 8 problems, on a tiny model with '
                         '100 SFT steps); results go to a temporary folder, not bench/results')
    args = ap.parse_args()
    tag = '' if args.seed is None else f'_s{args.seed}'
    name, port = Path(args.config).stem + tag, free_port()
    if args.sync_log is None: args.sync_log = f'bench/results/{parse_run(PRESET)[3]}{tag}_log.csv'
    cfg = from_dict({**load_yaml(ROOT / args.config), **({} if args.seed is None else {'seed': args.seed})})
    results, quick, n_eval = ROOT / 'bench/results', {}, cfg.n_eval
    if args.quick:
        results, args.workers = Path(tempfile.mkdtemp(prefix='bench_async_rung_')), 1
        quick = {'steps': 2, 'eval_every': 2, **({'n_eval': 8} if cfg.task != 'cartpole' else {})}
        n_eval = quick.get('n_eval', n_eval)
    env = {**os.environ, 'NANORL_TOKEN': secrets.token_hex(16), 'PYTHONPATH': str(ROOT), 'OMP_NUM_THREADS': '1',
           'TQDM_MININTERVAL': '20'}
    if cfg.task != 'cartpole':     # build the tiny model once, before three processes ask for it
        build = f"from nanorl.tiny import tiny_model; tiny_model({cfg.task!r}, {cfg.seed})"
        if args.quick:
            build = (f"from nanorl.tiny import tiny_model; print(tiny_model({cfg.task!r}, {cfg.seed}, "
                     f"sft_steps=100, progress=False))")
        built = subprocess.run([sys.executable, '-c', build], check=True, cwd=ROOT, env=env,
                               **(dict(stdout=subprocess.PIPE, text=True) if args.quick else {})).stdout
        if args.quick: quick['model'] = built.strip().splitlines()[-1]
    extra = [x for k, v in {**quick, 'seed': cfg.seed}.items() for x in (f'--{k}', str(v))]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        trainer = subprocess.Popen([sys.executable, '-m', 'nanorl.train', '--config', args.config, '--out_dir', tmp,
                                    '--name', name, '--port', str(port), *extra],
                                   cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        workers = [subprocess.Popen([sys.executable, '-m', 'nanorl.train', '--role', 'rollout',
                                     '--trainer_url', f'http://127.0.0.1:{port}', '--patience', '60'],
                                    cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                   for _ in range(args.workers)]
        lines = []
        for line in trainer.stdout:               # progress: the trainer's own lines
            print(line, end='', flush=True); lines.append(line)
        trainer.wait(); wall = time.perf_counter() - t0
        if args.quick and trainer.returncode:     # fail fast: no trainer to wait for
            for w in workers: w.kill()
        for w in workers: w.wait(timeout=120)
        if trainer.returncode: sys.exit(f"trainer failed:\n{''.join(lines[-40:])}")
        log = read_log(Path(tmp) / name)
        shutil.copy(Path(tmp) / name / 'log.csv', results / f'{name}_log.csv')
    counters = json.loads([l for l in lines if l.startswith('trainer: stopped')][-1].split('; ', 1)[1])
    if args.quick:   # the trainer trained its steps on batches the worker sent
        assert int(log['step'][-1]) == quick['steps'] and counters['trained'] >= quick['steps'], (log['step'], counters)
    text = (f"Trainer and {args.workers} workers from `{args.config}`, {int(log['step'][-1])} steps, "
            f"{wall / 60:.1f} min of wall time (process start included). ")
    if cfg.task != 'cartpole':
        from nanorl.lmtask import rung_report
        rows = [('async (this run)', rung_report(log, n_eval))]
        if args.sync_log and not (ROOT / args.sync_log).exists():
            print(f"no sync run to compare with: {args.sync_log} is missing (bench/lm_rung.py writes it)")
        elif args.sync_log:
            rows.append(('sync (bench/lm_rung.py)', rung_report(read_log_csv(ROOT / args.sync_log), cfg.n_eval)))
        same = n_eval == cfg.n_eval or len(rows) == 1
        probs = f"{n_eval} problems" + ('' if same else f"; the sync run: {cfg.n_eval}")
        table = [f"| held-out greedy accuracy ({probs}) | start | peak (step) | final | Fisher p, final > start |",
                 '|---|---|---|---|---|']
        table += [f"| {n} | {r['start']:.3f} | {r['peak']:.3f} ({r['peak_step']}) | {r['final']:.3f} | "
                  f"{r['p_final']:.2g} |" for n, r in rows]
        text = '\n'.join(table) + '\n\n' + text
    lag = [v for v in log['lag'][1:] if v == v]
    stale = counters['rejected'] - counters['unfair']
    text += (f"Batches: {counters['submitted']} submitted, {counters['trained']} trained, "
             f"{stale} refused as too stale (now or by their turn, 409), {counters['unfair']} refused while a place "
             f"was held for the other worker's batch (429), {counters['displaced']} displaced by it, "
             f"{counters['dropped']} dropped; mean lag {sum(lag) / len(lag):.2f} versions "
             f"(max_staleness {cfg.max_staleness}). Trainer {time_breakdown(log)}. "
             f"Produced by `python bench/async_rung.py --config {args.config}"
             f"{'' if args.seed is None else f' --seed {args.seed}'}{' --quick' if args.quick else ''}`.\n")
    (results / f'{name}.md').write_text(text)
    print(text)
    if args.quick: print(f"(quick mode: results in {results})")

def read_log_csv(path):
    d = Path(tempfile.mkdtemp()); shutil.copy(path, d / 'log.csv')
    return read_log(d)

if __name__ == '__main__':
    main()
