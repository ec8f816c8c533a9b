"""The CPU rung: GRPO on Countdown with the tiny model, from the shipped config, in a fresh process.

    python bench/lm_rung.py                         # configs/countdown_tiny_cpu.yaml
    python bench/lm_rung.py --config configs/gsm8k_tiny_cpu.yaml

Builds the tiny model first if it is not cached (timed separately), then trains with the config unchanged. Copies
the run's log to bench/results/<config>_log.csv and writes bench/results/<config>.md: held-out greedy accuracy at
the start, at its peak and at the end, Fisher's one-sided p against the start, the training wall time, and the
trainer's time breakdown.
"""
import argparse, shutil, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanorl.train import from_dict, load_yaml, read_log, time_breakdown
from nanorl.lm import rung_report

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--config', default='configs/countdown_tiny_cpu.yaml')
    args = ap.parse_args()
    name = Path(args.config).stem
    cfg = from_dict(load_yaml(ROOT / args.config))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, '-c', f"from nanorl.tiny import tiny_model; print(tiny_model({cfg.task!r}, {cfg.seed}))"],
                   check=True, cwd=ROOT)
    t_build = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, '-m', 'nanorl.train', '--config', args.config, '--out_dir', tmp, '--name', name]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, cwd=ROOT)
        wall = time.perf_counter() - t0
        log = read_log(Path(tmp) / name)
        shutil.copy(Path(tmp) / name / 'log.csv', ROOT / f'bench/results/{name}_log.csv')
    r = rung_report(log, cfg.n_eval)
    text = (f"| held-out greedy accuracy ({cfg.n_eval} problems) | value |\n|---|---|\n"
            f"| start (SFT warm-up only) | {r['start']:.3f} |\n| peak (step {r['peak_step']}) | {r['peak']:.3f} |\n"
            f"| final (step {r['final_step']}) | {r['final']:.3f} |\n"
            f"| Fisher one-sided p, final > start | {r['p_final']:.2g} |\n| Fisher one-sided p, peak > start | {r['p_peak']:.2g} |\n\n"
            f"Training took {wall / 60:.1f} min of wall time (process start included) on this 2-core machine; building the "
            f"tiny model took {t_build / 60:.1f} min when not cached. {time_breakdown(log)}. "
            f"Produced by `python bench/lm_rung.py --config {args.config}`, which runs "
            f"`python -m nanorl.train --config {args.config}`.\n")
    (ROOT / f'bench/results/{name}.md').write_text(text)
    print(text)

if __name__ == '__main__': main()
