"""Our GRPO against TRL's `GRPOTrainer` on the same work: seconds per optimizer step, completions/s, training reward.

    python bench/vs_trl.py                         # 3 alternating pairs of 40 steps, seed 0
    python bench/vs_trl.py --pairs 5 --steps 60
    python bench/vs_trl.py --ours_args --micro_batch 32   # knobs for our run, as on the command line
    python bench/vs_trl.py --quick                 # CI-sized smoke run, results in a temporary folder

TRL is a bench-only dependency (`pip install -e '.[bench]'`, TRL 1.16.0); nothing in nanorl imports it. Both sides
train the tiny Countdown model (`python -m nanorl.tiny countdown`, the same folder) on the task's train prompts,
with the task's own reward; ours runs the shipped preset configs/countdown_tiny_cpu.yaml. The work: 32 prompts
x 8 completions per optimizer step, at most 24 new tokens, temperature 0.7, lr 5e-4 constant, Adam without weight
decay, no KL term, one inner epoch, clip 0.2, gradient norm clipped at 1, fp32, CPU, 2 torch threads. Each run is
its own process; ours and TRL's alternate. A step's time is the wall time between two consecutive ends of an
optimizer step (generation, scoring, update and bookkeeping), median over the steps after the first; the table gives
the median over runs. What could not be matched is listed in the output.
"""
import argparse, csv, json, math, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORK = dict(n_prompts=32, group_size=8, max_len=24, lr=5e-4, temperature=0.7, threads=2)
UNMATCHED = [
    "GRPO's group scale: ours divides by the group's standard deviation + 1e-6, TRL by its standard deviation + 1e-4",
    "which prompts: both draw 32 of the same rows per step, ours with the run's generator, TRL with its shuffling "
    "sampler; the two runs see different prompts in a different order",
    "sampling noise: ours draws with its own Gumbel noise, TRL through model.generate (multinomial); same "
    "distribution, different samples",
    "optimizer: ours nanorl's Adam (torch.optim.Adam's arithmetic, chapter 05c), TRL torch's AdamW with weight decay 0 "
    "(the same update)",
    "dynamic sampling: when the preset turns it on, ours draws more groups than it trains on (the column groups "
    "drawn per step) and TRL has no such option; both train on 32 groups per optimizer step, so seconds per step and "
    "per trained group compare the same training, and completions sampled per second the sampler alone",
    "bookkeeping: ours writes log.csv every step and a checkpoint every 50 steps, and evaluates 16 problems at the "
    "start (not timed) and after the last step (in the last interval, which the median ignores); TRL logs every step "
    "in memory and saves nothing",
]

def run_ours(args, out: Path) -> dict:
    import torch
    from nanorl.train import from_dict, load_yaml, parse_cli, read_log, train
    preset = load_yaml(ROOT / 'configs/countdown_tiny_cpu.yaml')        # the shipped preset, as a user runs it
    assert all(preset[k] == v for k, v in WORK.items()), (preset, WORK)
    base = {**preset, 'model': args.model, 'steps': args.steps, 'eval_every': 10 ** 6, 'n_eval': 16, 'seed': args.seed,
            'out_dir': str(out), 'name': 'ours', 'overwrite': True, 'progress': False}
    cfg = from_dict(parse_cli(args.ours_args)[0], base=base)      # --ours_args, read as the command line is
    train(cfg)
    log = read_log(out / 'ours')
    drawn = [g for g in log['groups_drawn'][1:] if not math.isnan(g)]
    return {'step_end': log['wall_time'][1:], 'reward': log['reward'][1:], 'threads': torch.get_num_threads(),
            'groups_drawn': sum(drawn) / len(drawn)}

def run_trl(args, out: Path) -> dict:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOConfig, GRPOTrainer
    from nanorl.tasks import make_language_task
    from nanorl.tiny import tiny_model
    torch.set_num_threads(WORK['threads'])
    task = make_language_task('countdown', args.seed)
    rows = task.train_rows          # as our loop does: every train row
    path = tiny_model('countdown', args.seed, progress=False) if args.model == 'tiny' else args.model
    data = Dataset.from_list([{'prompt': task.build_prompt(r), 'row': i} for i, r in enumerate(rows)])

    def reward(prompts, completions, row, **_):
        return [task.reward(p, c, task.answer(rows[i])) for p, c, i in zip(prompts, completions, row)]

    ends = []
    class Clock(TrainerCallback):
        def on_step_end(self, *a, **k): ends.append(time.perf_counter())

    n = WORK['n_prompts'] * WORK['group_size']
    config = GRPOConfig(output_dir=str(out / 'trl'), per_device_train_batch_size=n, num_generations=WORK['group_size'],
                        gradient_accumulation_steps=1, max_completion_length=WORK['max_len'],
                        learning_rate=WORK['lr'], lr_scheduler_type='constant', warmup_steps=0, weight_decay=0.0,
                        beta=0.0, num_iterations=1, epsilon=0.2, max_grad_norm=1.0, loss_type='dapo',
                        temperature=WORK['temperature'], top_k=0, top_p=1.0, bf16=False, fp16=False,
                        gradient_checkpointing=False, use_cpu=True, max_steps=args.steps, logging_steps=1,
                        save_strategy='no', report_to='none', disable_tqdm=True, seed=args.seed,
                        dataloader_num_workers=0, log_completions=False)
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    t0 = time.perf_counter()
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=config, train_dataset=data, processing_class=tok,
                          callbacks=[Clock()])
    trainer.train()
    rewards = [h['reward'] for h in trainer.state.log_history if 'reward' in h]
    return {'step_end': [e - t0 for e in ends], 'reward': rewards, 'threads': torch.get_num_threads(),
            'groups_drawn': WORK['n_prompts']}    # TRL samples each step's prompts once

def one(args):
    out = Path(args.tmp)
    res = (run_ours if args.one == 'ours' else run_trl)(args, out)
    ends = res['step_end']
    step_s = statistics.median(b - a for a, b in zip(ends, ends[1:]))
    Path(args.result).write_text(json.dumps({'side': args.one, 'step_s': step_s, 'steps': len(ends),
                                             'mean_reward': sum(res['reward']) / len(res['reward']),
                                             'threads': res['threads'], 'groups_drawn': res['groups_drawn']}))

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--pairs', type=int, default=3); ap.add_argument('--steps', type=int, default=40)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--ours_args', nargs=argparse.REMAINDER, default=[],
                    help='knobs for our run, as on the command line (must come last)')
    ap.add_argument('--out', default=None, help='results path without extension (default: bench/results/vs_trl)')
    ap.add_argument('--quick', action='store_true', help='CI smoke run: 1 pair of 3 steps, temporary results')
    ap.add_argument('--one', choices=['ours', 'trl'], help=argparse.SUPPRESS)
    ap.add_argument('--tmp', help=argparse.SUPPRESS); ap.add_argument('--result', help=argparse.SUPPRESS)
    ap.add_argument('--model', default='tiny', help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one: return one(args)
    if args.quick:
        args.pairs, args.steps = 1, 3
        if args.out is None: args.out = str(Path(tempfile.mkdtemp(prefix='bench_vs_trl_')) / 'vs_trl')
    args.out = args.out or str(ROOT / 'bench/results/vs_trl')
    from nanorl.tiny import tiny_model
    if args.quick: args.model = str(tiny_model('countdown', args.seed, sft_steps=100, progress=False))  # CI's model
    else: tiny_model('countdown', args.seed)          # built once, before any timing
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for pair in range(args.pairs):
            for side in ('ours', 'trl') if pair % 2 == 0 else ('trl', 'ours'):
                result = Path(tmp) / f'{side}{pair}.json'
                cmd = [sys.executable, __file__, '--one', side, '--steps', str(args.steps), '--seed', str(args.seed),
                       '--tmp', str(Path(tmp) / f'{side}{pair}'), '--result', str(result), '--model', args.model]
                if side == 'ours' and args.ours_args: cmd += ['--ours_args', *args.ours_args]
                proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
                if proc.returncode: raise SystemExit(f"{side} run failed:\n{proc.stderr[-3000:]}")
                rows.append({'pair': pair, **json.loads(result.read_text())})
                print(rows[-1], flush=True)
    with open(args.out + '.csv', 'w', newline='') as f:
        w = csv.DictWriter(f, list(rows[0])); w.writeheader(); w.writerows(rows)
    med = {s: {k: statistics.median(r[k] for r in rows if r['side'] == s)
               for k in ('step_s', 'mean_reward', 'groups_drawn')} for s in ('ours', 'trl')}
    ratios = [t['step_s'] / o['step_s'] for o, t in zip([r for r in rows if r['side'] == 'ours'],
                                                          [r for r in rows if r['side'] == 'trl'])]
    cmd = 'python bench/vs_trl.py' + (' --quick' if args.quick else
                                      f" --pairs {args.pairs} --steps {args.steps}" + (f" --seed {args.seed}"
                                      if args.seed else '')) + (' --ours_args ' + ' '.join(args.ours_args)
                                                                  if args.ours_args else '')
    lines = ['| | s per optimizer step | groups drawn per step | completions sampled/s | s per trained group | '
             'mean training reward |', '|---|---|---|---|---|---|']
    for side, name in (('ours', 'nanoRL GRPO'), ('trl', 'TRL GRPOTrainer')):
        m = med[side]
        lines.append(f"| {name} | {m['step_s']:.3f} | {m['groups_drawn']:.1f} | "
                     f"{m['groups_drawn'] * WORK['group_size'] / m['step_s']:.0f} | "
                     f"{m['step_s'] / WORK['n_prompts']:.4f} | {m['mean_reward']:.3f} |")
    verdict = (f"TRL's seconds per step over ours, pair by pair: {', '.join(f'{r:.2f}' for r in ratios)} (median "
               f"**{statistics.median(ratios):.2f}**; above 1, ours is faster). ")
    if args.quick:     # 3 steps a side, warm-up included: a check that both sides run, not a comparison
        verdict = ("Quick mode: each side ran end to end; times over 3 steps are mostly warm-up and compare nothing "
                   "(run without --quick for the comparison). ")
    sys.path.insert(0, str(ROOT / 'bench'))
    from seeds import machine
    text = ('\n'.join(lines) + f"\n\n{verdict}"
            f"Medians of {args.pairs} alternating runs of {args.steps} steps each; produced by `{cmd}` on "
            f"{time.strftime('%Y-%m-%d')}. Machine: {machine()}.\n\n"
            "Not matched:\n" + ''.join(f"- {u}\n" for u in UNMATCHED))
    Path(args.out + '.md').write_text(text)
    print(text)
    if args.quick: assert all(r['steps'] == args.steps and math.isfinite(r['step_s']) for r in rows), rows

if __name__ == '__main__': main()
