"""What a second turn costs: a two-turn GRPO step against a single-turn step of the same shape, cache kept or not.

    python bench/turns.py                # 3 rounds of 20 steps per mode -> bench/results/turns.md and turns.csv
    python bench/turns.py --quick        # CI: 1 round of 3 steps, results in a temporary folder

Five runs of the multi-turn preset (configs/countdown_multiturn_tiny_cpu.yaml: 32 prompts x 8, at most 24 tokens a
turn, GRPO) from the same tiny model, in one process, stepped in turn so that the machine's noise falls on all of them
alike: `turns: 1`, then the same with `micro_batch: 64` (backward passes over 64 rows of like length, each padded
only to its own longest row); `turns: 2` keeping each conversation's KV cache between turns (chapter 10b's
`KeepCache`, the default), then the same with `micro_batch: 64`; and `turns: 2` rereading each transcript from its
first token at every turn (`Reread`, the naive way).
Per mode: medians over steps 3..N of every round of the whole step (rollout, scoring and update, from the loop's own
timers), the rollout, the update, the tokens the policy sampled per row, and the tokens a row holds after its prompt
(the turns and the environment's replies between them, all of which the update reads); then the step over the
single-turn step, round by round.
"""
import argparse, csv, statistics, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'bench'))
import torch
from nanorl.train import from_dict, load_yaml
from nanorl.loop import Run
from nanorl.tiny import tiny_model
from seeds import machine

CONFIG = 'configs/countdown_multiturn_tiny_cpu.yaml'
MODES = {'one turn': {'turns': 1}, 'one turn, micro_batch 64': {'turns': 1, 'micro_batch': 64},
         'two turns, cache kept': {'turns': 2},
         'two turns, cache kept, micro_batch 64': {'turns': 2, 'micro_batch': 64},
         'two turns, reread': {'turns': 2, 'reread': True}}

def make_run(model: str, out: Path, turns: int, reread: bool = False, **keys) -> Run:
    cfg = from_dict({**load_yaml(ROOT / CONFIG), 'model': model, 'eval_every': 10 ** 6, 'progress': False,
                     'out_dir': str(out), 'turns': turns, **keys})
    run = Run(cfg)
    run.task.reread = reread
    sample = run.task.rollout
    def rollout(*args, **kwargs):     # the loop keeps no batch: note how many tokens after the prompt each row holds
        batch = sample(*args, **kwargs)
        run.row_tokens = float(batch.obs_mask[..., -batch.act.shape[-1]:].sum() / batch.obs_mask[..., 0].numel())
        return batch
    run.task.rollout = rollout
    return run

def round_of(model: str, steps: int, out: Path) -> dict:
    "One round: a run per mode, stepped in turn; per mode, the per-step timings of steps 3..N."
    runs = {m: make_run(model, out / m.replace(' ', '_').replace(',', ''), **keys) for m, keys in MODES.items()}
    seen = {m: [] for m in MODES}
    for step in range(steps):
        for m, run in runs.items():
            row = run.train_step()
            if step >= 2:
                seen[m].append({'step_s': row['t_rollout'] + row['t_score'] + row['t_update'],
                                'rollout_s': row['t_rollout'], 'update_s': row['t_update'] + row['t_score'],
                                'sampled': row['ep_len'], 'row': run.row_tokens})
    return {m: {k: statistics.median(r[k] for r in rows) for k in rows[0]} for m, rows in seen.items()}

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--steps', type=int, default=20)
    ap.add_argument('--quick', action='store_true', help='CI: 1 round of 3 steps, results in a temporary folder')
    args = ap.parse_args()
    if args.quick: args.rounds, args.steps = 1, 3
    results = Path(tempfile.mkdtemp(prefix='bench_turns_')) if args.quick else ROOT / 'bench/results'
    model = str(tiny_model('countdown', 0, sft_steps=100 if args.quick else None, progress=False))
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            t0 = time.perf_counter()
            rounds.append(round_of(model, args.steps, Path(tmp) / f'r{r}'))
            print(f"round {r + 1} of {args.rounds}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    med = lambda m, k: statistics.median(rd[m][k] for rd in rounds)
    with open(results / 'turns.csv', 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['round', 'mode', 'step_s', 'rollout_s', 'update_s', 'sampled_tokens_per_row', 'tokens_per_row'])
        for i, rd in enumerate(rounds):
            for m, v in rd.items(): w.writerow([i + 1, m, *(f'{v[k]:.4f}' for k in v)])
    lines = ["| mode | s per step | rollout s | scoring and update s | sampled tokens per row | tokens per row after "
             "the prompt | step / one turn's |", "|---|---|---|---|---|---|---|"]
    for m in MODES:
        ratios = [rd[m]['step_s'] / rd['one turn']['step_s'] for rd in rounds]
        lines.append(f"| {m} | {med(m, 'step_s'):.3f} | {med(m, 'rollout_s'):.3f} | {med(m, 'update_s'):.3f} | "
                     f"{med(m, 'sampled'):.1f} | {med(m, 'row'):.1f} | {statistics.median(ratios):.2f} "
                     f"({', '.join(f'{x:.2f}' for x in ratios)}) |")
    text = "\n".join(lines) + (
        f"\n\nMedians over {args.rounds} rounds of the median step of steps 3 to {args.steps} (the last column: the "
        f"ratio in each round, then its median). Tokens per row after the prompt: the turns and the environment's "
        f"replies between them, padding left out; the update reads them all. "
        f"Produced by `python bench/turns.py --rounds {args.rounds} --steps "
        f"{args.steps}` on {time.strftime('%Y-%m-%d')}, {torch.get_num_threads()} threads. Machine: {machine()}.\n")
    (results / 'turns.md').write_text(text)
    print(text)

if __name__ == '__main__': main()
