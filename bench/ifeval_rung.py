"""The IFEval rung over seeds: GRPO on generated instruction prompts, and the same models on the 541 public prompts.

    python bench/ifeval_rung.py                 # seeds 0 1 2, each from an empty NANORL_CACHE
    python bench/ifeval_rung.py --seeds 3
    python bench/ifeval_rung.py --summarize     # only rewrite bench/results/ifeval.md from the kept results
    python bench/ifeval_rung.py --quick         # CI: seed 0, a 20-step warm-up, 2 steps, 8 public prompts

Each seed runs `bench/lm_rung.py --config configs/ifeval_tiny_cpu.yaml --seed N` in a fresh, empty cache (the build
of the tiny model is timed there), which writes bench/results/ifeval_tiny_cpu_sN.md and its log: strict prompt-level
accuracy on the config's n_eval (1,024) held-out generated prompts, start and final (the last evaluation, fixed
before the run), and Fisher's one-sided p. Then the warm-up model and the run's final weights answer the 541 public
IFEval prompts greedily (up to the config's max_len new tokens), scored by chapter 07a's `ifeval_scores`: IFEval's
four metrics. bench/results/ifeval.json keeps every seed's figures; bench/results/ifeval.md tables them.
"""
import argparse, functools, json, os, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'bench'))
from seeds import QUICK_SFT_STEPS, commit, machine, spread
from nanorl.train import from_dict, load_yaml, read_log
from nanorl.lmtask import rung_report
from nanorl.tasks import fisher_exact

CONFIG = 'configs/ifeval_tiny_cpu.yaml'
RESULTS = ROOT / 'bench/results'
METRICS = ['prompt_strict', 'instruction_strict', 'prompt_loose', 'instruction_loose']

def public_scores(model_dir: str, run_dir: Path | None, max_len: int, n: int | None = None) -> dict:
    "IFEval's four metrics of greedy replies to the public prompts, from the warm-up model or a run's final weights."
    import torch
    from nanorl.model import HFPolicy
    from nanorl.runlog import load_checkpoint
    from nanorl.ifeval import load_ifeval_rows, ifeval_scores
    policy = HFPolicy.load(model_dir)
    if run_dir is not None: policy.load_state_dict(load_checkpoint(run_dir)['policy'])
    rows = load_ifeval_rows()[:n]
    with torch.no_grad():
        out = policy.generate(policy.encode([r['prompt'] + '\n' for r in rows]), max_len, greedy=True, batch_size=32)
    return ifeval_scores(rows, policy.decode(out))

def run_seed(seed: int, quick: bool) -> dict:
    ("The rung for one seed in an empty cache (quick: the cache this process has, so CI builds the model once), "
     "then the public prompts answered before and after.")
    cfg = from_dict({**load_yaml(ROOT / CONFIG), 'seed': seed})
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, **({} if quick else {'NANORL_CACHE': f'{tmp}/cache'})}
        cmd = [sys.executable, 'bench/lm_rung.py', '--config', CONFIG, '--seed', str(seed), '--keep', f'{tmp}/runs']
        subprocess.run(cmd + (['--quick'] if quick else []), check=True, cwd=ROOT, env=env)
        run = next(Path(tmp, 'runs').iterdir())
        sft = f", sft_steps={QUICK_SFT_STEPS['ifeval']}" if quick else ''
        model = subprocess.run([sys.executable, '-c', f"from nanorl.tiny import tiny_model; print(tiny_model("
                                f"'ifeval', {seed}, progress=False{sft}))"],
                               check=True, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True).stdout.split()[-1]
        n = 8 if quick else None
        t0 = time.perf_counter()
        before, after = public_scores(model, None, cfg.max_len, n), public_scores(model, run, cfg.max_len, n)
        log = read_log(run)
    n_held = 8 if quick else cfg.n_eval
    return {'seed': seed, 'heldout': rung_report(log, n_held), 'heldout_n': n_held, 'public_before': before,
            'public_after': after, 'public_n': n or 541, 'public_min': (time.perf_counter() - t0) / 60,
            'train_min': log['wall_time'][-1] / 60}

@functools.cache
def public_sizes(n: int) -> dict:
    "How many prompts and instructions the first `n` public prompts hold: the denominators of IFEval's metrics."
    from nanorl.ifeval import load_ifeval_rows
    rows = load_ifeval_rows()[:n]
    return {'prompt': len(rows), 'instruction': sum(len(r['instructions']) for r in rows)}

def public_p(d: dict, metric: str) -> float:
    "Fisher's one-sided p that a public strict metric rose: prompts or instructions followed, before against after."
    n = public_sizes(d['public_n'])[metric.split('_')[0]]
    k = lambda when: round(d[f'public_{when}'][metric] * n)
    return fisher_exact(k('before'), n, k('after'), n)

def table(done: dict) -> str:
    seeds = sorted(done, key=int)
    get = lambda f: [f(done[s]) for s in seeds]
    rows = [('held-out generated prompts, strict prompt-level: start', get(lambda d: d['heldout']['start'])),
            ('held-out generated prompts, strict prompt-level: final', get(lambda d: d['heldout']['final'])),
            ("Fisher's one-sided p, final > start", get(lambda d: d['heldout']['p_final'])),
            ('training wall min', get(lambda d: d['train_min']))]
    rows += [(f"public IFEval {m.replace('_', ' ')}: {when}", get(lambda d, m=m, when=when: d[f'public_{when}'][m]))
             for m in METRICS for when in ('before', 'after')]
    rows += [(f"Fisher's one-sided p, public {m.replace('_', ' ')} after > before", get(lambda d, m=m: public_p(d, m)))
             for m in METRICS[:2]]
    fmt = lambda name, xs: spread(xs, '{:.2g}' if 'p,' in name else '{:.3f}' if 'min' not in name else '{:.1f}')
    text = "| seeds " + ", ".join(seeds) + " | median (min to max) |\n|---|---|\n"
    text += "".join(f"| {name} | {fmt(name, xs)} |\n" for name, xs in rows)
    d = done[seeds[-1]]
    text += (f"\nPer seed: " + "; ".join(
        f"seed {s}: {done[s]['heldout']['start']:.3f} to {done[s]['heldout']['final']:.3f} "
        f"(p = {done[s]['heldout']['p_final']:.2g}), public prompt strict "
        f"{done[s]['public_before']['prompt_strict']:.3f} to {done[s]['public_after']['prompt_strict']:.3f} "
        f"(p = {public_p(done[s], 'prompt_strict'):.2g})" for s in seeds) + ".\n\n"
        f"Held-out: greedy replies to {d['heldout_n']:,} generated prompts the warm-up never saw, scored by IFEval's "
        f"strict check of every instruction (chapter 07a); final: the last evaluation, fixed before the run. Public: "
        f"greedy replies to "
        f"the {d['public_n']} public IFEval prompts, before (the SFT warm-up) and after GRPO, IFEval's four metrics; "
        f"Fisher's p treats the replies before and after as independent samples (they answer the same prompts). "
        f"Produced by `python bench/ifeval_rung.py` (each seed from an empty cache: "
        f"`python bench/lm_rung.py --config {CONFIG} --seed N`); {d['machine']}; {d['date']}; commit {d['commit']}.\n")
    return text

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2])
    ap.add_argument('--summarize', action='store_true', help='only rewrite the table from bench/results/ifeval.json')
    ap.add_argument('--quick', action='store_true', help='CI: seed 0, a 100-step warm-up, 2 steps, 8 public prompts')
    args = ap.parse_args()
    book = RESULTS / 'ifeval.json'
    if args.quick:
        d = run_seed(0, quick=True)
        assert set(d['public_after']) == set(METRICS), d
        return print(json.dumps(d, indent=1))
    done = json.loads(book.read_text()) if book.exists() else {}
    for seed in ([] if args.summarize else args.seeds):
        got = {**run_seed(seed, quick=False), 'machine': machine(), 'commit': commit(),
               'date': time.strftime('%Y-%m-%d')}
        done = {**(json.loads(book.read_text()) if book.exists() else {}), str(seed): got}   # seeds side by side
        book.write_text(json.dumps(done, indent=1) + '\n')
    (RESULTS / 'ifeval.md').write_text(table(done))
    print(table(done))

if __name__ == '__main__': main()
