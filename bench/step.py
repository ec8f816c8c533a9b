"""Where a GRPO step on the tiny Countdown model goes, in this checkout or in several side by side.

    python bench/step.py                                   # this checkout: 3 runs of 20 steps
    python bench/step.py --trees before=/tmp/wt_before after=.   # checkouts alternating (git worktrees)
    python bench/step.py --quick                           # CI: 1 run of 3 steps, results in a temporary folder

Part 1. For each checkout (a label and a folder), `runs` fresh processes of
`python -m nanorl.train --config configs/countdown_tiny_cpu.yaml --steps N` with that folder first on PYTHONPATH
(and its own preset),
alternating between checkouts. All of them train the same model folder (this checkout's `nanorl.tiny` build, passed
as --model, so no checkout rebuilds it). From each run's log: the median over steps 2..N of the rollout, the
rescoring pass (`t_score`, all of `prepare`), the update and the whole step (wall time between consecutive steps);
the table gives the median over runs.

Part 2 (this checkout only). One batch of 16 prompts x 8 completions from the same model, then, alternating,
`repeats` times each: our sampler (`HFPolicy.generate`), our scoring pass without gradient (`score`, as `prepare`
runs it), the update's forward and backward (`backward`, in one batch and in micro-batches of 32), and a
reference: one plain forward of the model over the same padded rows (prompt and completion ids, no KV cache, no
logprobs), without and with a backward. Tokens per second count the real completion tokens.
Writes bench/results/step.md and step.csv.
"""
import argparse, csv, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from dataclasses import replace
from nanorl.train import from_dict, load_yaml, read_log
from nanorl.loop import Prepared, backward, build
from nanorl.model import join
from nanorl.tiny import tiny_model

PHASES = ('t_rollout', 't_score', 't_update')

def run_tree(tree: Path, model: str, steps: int, out: Path, extra: list[str]) -> dict:
    cmd = [sys.executable, '-m', 'nanorl.train', '--config', str(tree / 'configs/countdown_tiny_cpu.yaml'),
           '--model', model, '--steps', str(steps), '--eval_every', str(10 ** 6), '--n_eval', '16',
           '--out_dir', str(out), '--name', 'run', '--overwrite', 'true', '--progress', 'false', *extra]
    env = {**os.environ, 'PYTHONPATH': str(tree)}
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
    if proc.returncode: raise SystemExit(f"{' '.join(cmd)} in {tree} failed:\n{proc.stderr[-3000:]}")
    log = read_log(out / 'run')
    wall, med = log['wall_time'][2:], lambda xs: statistics.median(xs)
    preset = load_yaml(tree / 'configs/countdown_tiny_cpu.yaml')
    return {**{k: med(log[k][2:]) for k in PHASES}, 'step': med([b - a for a, b in zip(wall, wall[1:])]),
            'tokens': med(log['ep_len'][2:]) * preset['n_prompts'] * preset['group_size']}

def token_rates(model: str, repeats: int) -> dict:
    "Real completion tokens per second of our sampler and scoring passes, and of a plain forward (a reference)."
    cfg = from_dict({**load_yaml(ROOT / 'configs/countdown_tiny_cpu.yaml'), 'model': model, 'progress': False})
    torch.set_num_threads(cfg.threads)
    task, policy, *_ = build(cfg)
    rows = task.task.sample_prompts(16, torch.Generator().manual_seed(0))
    prompt_ids = [ids for ids in policy.encode([task.task.build_prompt(r) for r in rows]) for _ in range(8)]
    out = policy.generate(prompt_ids, 24, generator=torch.Generator().manual_seed(0))
    obs, obs_mask = join(prompt_ids, out, policy.pad_id)
    n_tokens = float(out['mask'].sum())
    d = Prepared(obs=obs, act=out['tokens'], mask=out['mask'], n_units=n_tokens, obs_mask=obs_mask, logp=out['logp'],
                 advantage=torch.randn(out['mask'].shape, generator=torch.Generator().manual_seed(0)) * out['mask'])

    def sample(): policy.generate(prompt_ids, 24, generator=torch.Generator().manual_seed(0))
    def score():
        with torch.no_grad(): policy.score(obs, out['tokens'], obs_mask)
    def update(micro_batch: int): backward(d, torch.arange(len(d)), policy, None, replace(cfg, micro_batch=micro_batch))
    def plain():
        with torch.no_grad(): policy.model(input_ids=obs, attention_mask=obs_mask)
    def plain_backward(): policy.model(input_ids=obs, attention_mask=obs_mask).logits.sum().backward()
    fns = {'sampler (HFPolicy.generate)': sample, 'reference: plain forward': plain,
           'scoring, no gradient (score)': score,
           'the update: forward + backward, the whole batch at once': lambda: update(0),
           'the update: forward + backward, micro-batches of 32 (ordered by length, trimmed)': lambda: update(32),
           'reference: plain forward + backward': plain_backward}
    times = {k: [] for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            policy.zero_grad(set_to_none=True)
            t0 = time.perf_counter(); fn(); times[k].append(time.perf_counter() - t0)
    return {k: n_tokens / statistics.median(v) for k, v in times.items()}, obs.shape

def tree_name(tree: str) -> str:
    "LABEL=FOLDER as the result file names it: a checkout other than this one by its commit, never by its path."
    label, folder = tree.split('=', 1)
    if (ROOT / folder).resolve() == ROOT: return tree
    sha = subprocess.run(['git', '-C', str(ROOT / folder), 'rev-parse', '--short', 'HEAD'], capture_output=True,
                         text=True).stdout.strip()
    return f"{label}=<a worktree at {sha or 'an unknown commit'}>"

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--trees', nargs='*', default=['this=.'], help='LABEL=FOLDER checkouts to compare')
    ap.add_argument('--runs', type=int, default=3); ap.add_argument('--steps', type=int, default=20)
    ap.add_argument('--repeats', type=int, default=5)
    ap.add_argument('--args', nargs=argparse.REMAINDER, default=[], help='extra knobs for every run (must come last)')
    ap.add_argument('--quick', action='store_true', help='CI: 1 run of 3 steps, 1 repeat, temporary results')
    args = ap.parse_args()
    out_md = ROOT / 'bench/results/step.md'
    if args.quick:
        args.runs, args.steps, args.repeats = 1, 3, 1
        out_md = Path(tempfile.mkdtemp(prefix='bench_step_')) / 'step.md'
    model = str(tiny_model('countdown', 0, **(dict(sft_steps=100, progress=False) if args.quick else {})))
    trees = [(t.split('=', 1)[0], (ROOT / t.split('=', 1)[1]).resolve()) for t in args.trees]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.runs):
            for label, tree in trees if r % 2 == 0 else trees[::-1]:
                rows.append({'tree': label, 'run': r, **run_tree(tree, model, args.steps, Path(tmp), args.args)})
                print(rows[-1], flush=True)
    with open(out_md.with_suffix('.csv'), 'w', newline='') as f:
        w = csv.DictWriter(f, list(rows[0])); w.writeheader(); w.writerows(rows)
    one = len(trees) == 1 and trees[0][1] == ROOT   # this checkout alone: its row is the preset's step
    lines = [f"| {'preset' if one else 'checkout'} | step s | rollout s | rescoring s | update s | "
             "completion tokens per step |", '|---|---|---|---|---|---|']
    for label, _ in trees:
        med = lambda k: statistics.median(r[k] for r in rows if r['tree'] == label)
        name = '`configs/countdown_tiny_cpu.yaml`' if one else label
        lines.append(f"| {name} | {med('step'):.3f} | {med('t_rollout'):.3f} | {med('t_score'):.3f} | "
                     f"{med('t_update'):.3f} | {med('tokens'):.0f} |")
    rates, shape = token_rates(model, args.repeats)
    lines += ['', f"Real completion tokens per second on one batch ({shape[0]} rows of {shape[1]} ids)"
                  + ('' if one else ', this checkout') + ':',
              '', '| pass | tokens/s |', '|---|---|', *[f"| {k} | {v:,.0f} |" for k, v in rates.items()]]
    trees_arg = '' if args.trees == ap.get_default('trees') else f" --trees {' '.join(map(tree_name, args.trees))}"
    cmd = 'python bench/step.py' + (' --quick' if args.quick else
                                    f"{trees_arg} --runs {args.runs} --steps {args.steps}")
    if args.args: cmd += ' --args ' + ' '.join(args.args)
    per = '' if one else ' per checkout'
    text = '\n'.join(lines) + (f"\n\nMedians of {args.runs} runs{per} (steps 2..{args.steps}), "
                               f"{args.repeats} repeats per pass, {torch.get_num_threads()} torch threads "
                               f"({os.cpu_count()} cores); produced by `{cmd}`.\n")
    out_md.write_text(text)
    print(text)
    if args.quick: assert all(r['step'] > 0 and r['tokens'] > 0 for r in rows) and all(v > 0 for v in rates.values())

if __name__ == '__main__': main()
