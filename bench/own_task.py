"""A task of your own, from the command line: the README's every-number Countdown run, over several seeds.

    python bench/own_task.py              # seeds 0 1 2, 300 steps each, from the tiny Countdown model (seed 0)
    python bench/own_task.py --quick      # CI: seed 0, 2 steps from the 100-step tiny model, 16 evaluation prompts

Each seed is a fresh `python -m nanorl.train --data examples/every_number.jsonl --reward
examples.every_number:uses_every_number --model <tiny Countdown model> ...` process in the repository's folder (so
the reward imports from examples/). The seed draws the held-out prompts and the samples; the model is the same.
Reads each run's log and writes bench/results/every_number.md: held-out accuracy (every number used, target
reached) at the start and at the last evaluation, fixed before the run, with Fisher's one-sided p, and the training
wall time.
"""
import argparse, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanorl.train import read_log
from nanorl.lmtask import rung_report
from nanorl.tiny import tiny_model
sys.path.insert(0, str(ROOT / 'bench'))
from seeds import commit, machine, spread

KNOBS = ['--data', 'examples/every_number.jsonl', '--reward', 'examples.every_number:uses_every_number',
         '--algo', 'grpo', '--group_size', '8', '--n_prompts', '16', '--max_len', '24', '--lr', '1e-4']

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seeds', type=int, nargs='+', default=[0, 1, 2])
    ap.add_argument('--steps', type=int, default=300)
    ap.add_argument('--quick', action='store_true',
                    help='CI smoke run: seed 0, 2 steps, the 100-step model, 16 prompts')
    args = ap.parse_args()
    model = str(tiny_model('countdown', 0, progress=False, **({'sft_steps': 100} if args.quick else {})))
    steps, n_eval = (2, 16) if args.quick else (args.steps, 1024)
    if args.quick: args.seeds = [0]
    knobs = [*KNOBS, '--steps', str(steps), '--eval_every', '50', '--n_eval', str(n_eval), '--threads', '2']
    reports = {}
    with tempfile.TemporaryDirectory() as out:
        for seed in args.seeds:
            cmd = [sys.executable, '-m', 'nanorl.train', *knobs, '--model', model, '--seed', str(seed),
                   '--out_dir', out, '--name', f's{seed}', '--progress', 'false']
            p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if p.returncode: raise SystemExit(f"seed {seed} failed:\n{p.stderr[-2000:]}")
            log = read_log(Path(out) / f's{seed}')
            reports[seed] = {**rung_report(log, n_eval), 'wall_min': log['wall_time'][-1] / 60}
            print(f"seed {seed}: {reports[seed]}", flush=True)
    rows = '\n'.join(f"| {s} | {r['start']:.3f} | {r['final']:.3f} | {r['p_final']:.2g} | {r['wall_min']:.1f} |"
                     for s, r in reports.items())
    med = lambda k, fmt='{:.3f}': spread([r[k] for r in reports.values()], fmt)
    text = (f"| seed | held-out start | final | p, final > start | training wall min |\n|---|---|---|---|---|\n{rows}\n"
            f"| median (range) | {med('start')} | {med('final')} | {med('p_final', '{:.2g}')} | "
            f"{med('wall_min', '{:.1f}')} |\n\n"
            f"Countdown with every number used (chapter 08a's task of your own), GRPO from the tiny Countdown model "
            f"(seed 0, {'100' if args.quick else '1,500'} SFT steps), {steps} steps; held-out greedy accuracy on "
            f"{n_eval} prompts of the file, drawn by the seed; final: the last evaluation, fixed before the run; "
            f"Fisher's one-sided p of final > start. Machine: {machine()}; 2 training threads. Measured "
            f"{time.strftime('%Y-%m-%d')} at commit {commit()}. Produced by `python bench/own_task.py"
            f"{' --quick' if args.quick else ''}`, which runs `python -m nanorl.train {' '.join(knobs)} --model "
            f"<the tiny Countdown model> --seed N` for each seed.\n")
    print(text)
    if not args.quick: (ROOT / 'bench/results/every_number.md').write_text(text)

if __name__ == '__main__': main()
