"""The supervision axis on the tiny Countdown rung over seeds: one table from the logs that bench/seeds.py keeps.

    python bench/seeds.py --runs lm_rung:configs/countdown_sft_tiny_cpu.yaml ...   # and _dpo_, _ipo_, _ppo_ (below)
    python bench/axis.py                                                     # -> bench/results/axis.md
    python bench/axis.py --quick        # CI: the same table from the committed logs, written to a temporary folder

Every row: held-out greedy accuracy on each seed's 1,024 problems at step 0 (the SFT warm-up alone: for one seed the
same model in every row), at the end and at its peak, Fisher's one-sided p of end > start, and the training wall
time in the log (from the loop's start; loading the model and building data are not in it); median and range over
the seeds, and on how many seeds the final accuracy is above the start.
"""
import argparse, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'bench'))
from seeds import PRESET, columns, reports

RUNS = [  # (algorithm, what it learns from, models in memory, the run's config)
    ('SFT', 'demonstrations (gold answers) of the RL prompts', '1', 'configs/countdown_sft_tiny_cpu.yaml'),
    ('DPO', "pairs of the model's own samples, ranked by the reward", '2 (policy, frozen reference)',
     'configs/countdown_dpo_tiny_cpu.yaml'),
    ('IPO', 'the same pairs', '2 (policy, frozen reference)', 'configs/countdown_ipo_tiny_cpu.yaml'),
    ('GRPO', 'the reward, 8 samples per prompt, dead groups redrawn (rung 2)', '1', PRESET),
    ('PPO', 'the reward and a learned value, 1 sample per prompt', '2 (policy, critic)',
     'configs/countdown_ppo_tiny_cpu.yaml'),
]

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2])
    ap.add_argument('--quick', action='store_true',
                    help='CI check: build the table from the committed logs in bench/results '
                         'and write it to a temporary folder (every log must be there)')
    ap.add_argument('--results', default='bench/results', help='the folder of the logs; axis.md is written there')
    args = ap.parse_args()
    results = ROOT / args.results
    out = Path(tempfile.mkdtemp(prefix='bench_axis_')) if args.quick else results
    lines = ["| algorithm | learns from | models held | seeds | held-out start | final | peak | p, final > start | "
             "training wall min | final > start |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for algo, signal, models, config in RUNS:
        reps = reports(config, args.seeds, results)
        if not reps and args.quick:
            sys.exit(f"bench/axis.py --quick: {config} has no log for seeds {args.seeds} in {args.results}; "
                     "the table's logs must be committed")
        if not reps:
            lines.append(f"| {algo} | {signal} | {models} | not run | | | | | | |"); continue
        up = sum(r['final'] > r['start'] for r in reps.values())
        lines.append(f"| {algo} | {signal} | {models} | {', '.join(map(str, reps))} | {columns(reps)} | "
                     f"{up} of {len(reps)} |")
    runs = ' '.join(f'lm_rung:{c}' for *_, c in RUNS if c != PRESET)
    text = "\n".join(lines) + (
        "\n\nMedian (min to max) over seeds. Each seed's runs start from the tiny model that seed builds from an empty "
        "cache, so the start is the same in every row of one seed. From `python bench/axis.py`, which reads the logs "
        f"that `python bench/seeds.py --seeds {' '.join(map(str, args.seeds))} --threads 1 --cache <cache> "
        f"--runs {runs}` (and, for GRPO, the rung 2 runs of `python bench/seeds.py`) keep in {args.results}/, on "
        "the models those runs built (their weights' sha256 in seeds.json). Every run trained on 1 thread while "
        "another run shared the 2 cores, so wall times compare roughly, not as speed figures.\n")
    (out / 'axis.md').write_text(text)
    print(text)
    if args.quick: print(f"(quick mode: written to {out / 'axis.md'})")

if __name__ == '__main__': main()
