"""The supervision axis on the tiny Countdown rung: one table from the logs that bench/lm_rung.py keeps.

    python bench/lm_rung.py --config configs/countdown_sft_tiny_cpu.yaml --threads 1    # and _dpo_, _ipo_, _ppo_
    python bench/lm_rung.py --config configs/countdown_tiny_cpu.yaml --label countdown_tiny_cpu_1thread --threads 1
    python bench/axis.py                                                     # -> bench/results/axis.md
    python bench/axis.py --quick        # CI: the same table from the committed logs, written to a temporary folder

Every row: held-out greedy accuracy on the same 256 problems at step 0 (the SFT warm-up alone, the same model for
every row), at the end and at its peak, Fisher's one-sided p of end > start, and the training wall time in the log
(from the loop's start; loading the model and building data are not in it).
"""
import argparse, sys, tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanorl.lmtask import rung_report
from nanorl.train import read_log

RUNS = [  # (algorithm, what it learns from, models in memory, the run's config and log name)
    ('SFT', 'demonstrations (gold answers) of the RL prompts', '1', 'countdown_sft_tiny_cpu'),
    ('DPO', "pairs of the model's own samples, ranked by the reward", '2 (policy, frozen reference)',
     'countdown_dpo_tiny_cpu'),
    ('IPO', 'the same pairs', '2 (policy, frozen reference)', 'countdown_ipo_tiny_cpu'),
    ('GRPO', 'the reward, 8 samples per prompt', '1', 'countdown_tiny_cpu_1thread'),
    ('PPO', 'the reward and a learned value, 1 sample per prompt', '2 (policy, critic)', 'countdown_ppo_tiny_cpu'),
]

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--quick', action='store_true',
                    help='CI check: build the table from the committed logs in bench/results '
                         'and write it to a temporary folder (every log must be there)')
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix='bench_axis_')) if args.quick else ROOT / 'bench/results'
    lines = ["| algorithm | learns from | models held | held-out start | final | peak (step) | p, final > start | "
             "wall time |",
             "|---|---|---|---|---|---|---|---|"]
    for algo, signal, models, name in RUNS:
        path = ROOT / 'bench/results' / f'{name}_log.csv'
        if not path.exists():
            if args.quick: sys.exit(f"bench/axis.py --quick: {path} is missing; the table's logs must be committed")
            lines.append(f"| {algo} | {signal} | {models} | not run | | | | |"); continue
        log = read_log(path)
        r = rung_report(log, 256)
        lines.append(f"| {algo} | {signal} | {models} | {r['start']:.3f} | {r['final']:.3f} | "
                     f"{r['peak']:.3f} ({r['peak_step']}) | {r['p_final']:.2g} | {log['wall_time'][-1] / 60:.1f} min |")
    text = "\n".join(lines) + ("\n\nFrom `python bench/axis.py`, which reads the logs that "
                               "`python bench/lm_rung.py --config configs/<name>.yaml --threads 1` keeps in "
                               "bench/results/. Every row ran with 1 thread pinned to one core while other jobs used "
                               "the second; each run's results file states its command.\n")
    (out / 'axis.md').write_text(text)
    print(text)
    if args.quick: print(f"(quick mode: written to {out / 'axis.md'})")

if __name__ == '__main__': main()
