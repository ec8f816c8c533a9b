"""How far greedy accuracy is from what the tiny Countdown model can already do: pass@k before and after RL.

    python bench/ceiling.py --seeds 0 1 2                          # the warm-up models (built if not cached)
    python bench/ceiling.py --seeds 0 1 2 --after runs_kept        # and the RL runs kept by bench/seeds.py --keep
    python bench/ceiling.py --quick                                # CI: 8 problems, 4 samples, a 100-step model

For each seed: greedy accuracy, and pass@k for k = 1, 2, 4, ... up to --samples (chapter 10's `sample_counts` and
`pass_at_k_curve`, at the temperature the preset samples at), on the first --problems held-out problems and as many
practice problems (the last train rows: RL practises on them, the warm-up never read them). With --after DIR, the
same for the policy in DIR/<run>_s<seed>/checkpoint.pt, the run's final weights. Writes bench/results/ceiling.md and
ceiling.csv (one row per seed, model and split).
"""
import argparse, csv, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'bench'))
import torch
from seeds import QUICK_SFT_STEPS, commit, machine, spread
from nanorl.lm import pass_at_k_curve, sample_counts
from nanorl.model import HFPolicy
from nanorl.tasks import make_language_task
from nanorl.tiny import tiny_model
from nanorl.config import load_yaml

def measure(policy, task, rows, samples, max_len, seed) -> dict:
    "Greedy accuracy, pass@k and the share never solved on `rows`."
    ids = policy.encode([task.build_prompt(r) for r in rows])
    greedy = policy.decode(policy.generate(ids, max_len, greedy=True))
    right = sum(task.correct(task.build_prompt(r), g, task.answer(r)) for r, g in zip(rows, greedy))
    counts = sample_counts(policy, task, rows, samples, max_len, torch.Generator().manual_seed(seed), batch_size=4096)
    return {'greedy': right / len(rows), **{f'pass@{k}': v for k, v in pass_at_k_curve(counts, samples).items()},
            'never solved': sum(c == 0 for c in counts) / len(counts)}

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seeds', type=int, nargs='+', default=[0])
    ap.add_argument('--problems', type=int, default=1024)
    ap.add_argument('--samples', type=int, default=64)
    ap.add_argument('--max_len', type=int, default=24)
    ap.add_argument('--temperature', type=float, default=None, help="sampling temperature (default: the preset's)")
    ap.add_argument('--after', default=None, help='folder of kept runs: <run>_s<seed>/checkpoint.pt')
    ap.add_argument('--run', default='countdown_tiny_cpu', help='name of the kept runs, before _s<seed>')
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--quick', action='store_true', help='CI: 8 problems, 4 samples, a 100-step model, results in a '
                                                          'temporary folder')
    args = ap.parse_args()
    if args.temperature is None: args.temperature = load_yaml(ROOT / 'configs/countdown_tiny_cpu.yaml')['temperature']
    if args.quick: args.problems, args.samples = 8, 4
    torch.set_num_threads(args.threads)
    results = Path(tempfile.mkdtemp(prefix='bench_ceiling_')) if args.quick else ROOT / 'bench/results'
    rows_out, t0 = [], time.perf_counter()
    for seed in args.seeds:
        steps = QUICK_SFT_STEPS.get('countdown', 100) if args.quick else None
        policy = HFPolicy.load(str(tiny_model('countdown', seed, progress=not args.quick, sft_steps=steps)),
                               temperature=args.temperature)
        task = make_language_task('countdown', seed=seed)
        splits = {'held-out': task.eval_rows[:args.problems], 'practice': task.train_rows[-args.problems:]}
        models = {'warm-up': None}
        if args.after: models['after RL'] = Path(args.after) / f'{args.run}_s{seed}' / 'checkpoint.pt'
        for model, ckpt in models.items():
            if ckpt: policy.load_state_dict(torch.load(ckpt, weights_only=True)['policy'])
            for split, rows in splits.items():
                m = measure(policy, task, rows, args.samples, args.max_len, seed)
                rows_out.append({'seed': seed, 'model': model, 'split': split, **m})
                print(f"seed {seed}, {model}, {split}: " + ", ".join(f"{k} {v:.3f}" for k, v in m.items()), flush=True)
    with open(results / 'ceiling.csv', 'w', newline='') as f:
        w = csv.DictWriter(f, fieldnames=list(rows_out[0])); w.writeheader(); w.writerows(rows_out)
    keys = [k for k in rows_out[0] if k not in ('seed', 'model', 'split')]
    text = "| model | problems | " + " | ".join(keys) + " |\n|---|---|" + "---|" * len(keys) + "\n"
    for model in dict.fromkeys(r['model'] for r in rows_out):
        for split in ('held-out', 'practice'):
            sel = [r for r in rows_out if r['model'] == model and r['split'] == split]
            text += f"| {model} | {split} | " + " | ".join(spread([r[k] for r in sel]) for k in keys) + " |\n"
    text += (f"\nMedian (min to max) over seeds {', '.join(map(str, args.seeds))}; {args.problems:,} problems of each "
             f"split per seed, {args.samples} completions each at temperature {args.temperature:g}, up to "
             f"{args.max_len} new tokens; "
             f"greedy: one greedy completion each; never solved: the share with no right completion among the "
             f"{args.samples}. pass@k is the unbiased estimate from those counts (chapter 07's `pass_at_k`). Took "
             f"{(time.perf_counter() - t0) / 60:.1f} min on {args.threads} torch thread(s). Machine: {machine()}; "
             f"{time.strftime('%Y-%m-%d')}; commit {commit()}. Produced by `python bench/ceiling.py "
             f"{' '.join(sys.argv[1:])}`.\n")
    (results / 'ceiling.md').write_text(text)
    print(text)
    if args.quick: print(f"(quick mode: results in {results})")

if __name__ == '__main__': main()
