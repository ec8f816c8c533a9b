"""Chapter 07a's IFEval checks against lm-evaluation-harness's at full size: 2,000 generated replies per id.

    python bench/ifeval_check.py            # 2,000 replies per id -> bench/results/ifeval_check.md
    python bench/ifeval_check.py --quick    # CI: 100 replies per id, results in a temporary folder

Runs `tests/test_ifeval.py` (its reference checkers: NANORL_IFEVAL_REF, as `.ci/run` installs them) with
NANORL_IFEVAL_REPLIES set to the size asked for. CI's pytest runs the same test at 400 replies per id; this is the
comparison at the size chapter 07a reports. Every id's verdicts, strict and loose, must equal the benchmark's.
"""
import argparse, os, re, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'bench'))

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--replies', type=int, default=2000, help='generated replies per instruction id')
    ap.add_argument('--quick', action='store_true', help='CI: 100 replies per id, results in a temporary folder')
    args = ap.parse_args()
    if args.quick: args.replies = 100
    results = Path(tempfile.mkdtemp(prefix='bench_ifeval_check_')) if args.quick else ROOT / 'bench/results'
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, '-m', 'pytest', 'tests/test_ifeval.py', '-q', '-p', 'no:cacheprovider',
                           '-k', 'thousands'], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, 'NANORL_IFEVAL_REPLIES': str(args.replies)})
    took = time.perf_counter() - t0
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-500:]
    if proc.returncode: raise SystemExit(f"the comparison failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}")
    passed = int(re.search(r'(\d+) passed', summary).group(1))
    from seeds import machine
    text = (f"| instruction ids | generated replies per id | adversarial replies per id | ids whose every verdict "
            f"equals lm-evaluation-harness's | seconds |\n|---|---|---|---|---|\n"
            f"| {passed} | {args.replies:,} | 20 | {passed} of {passed} | {took:.0f} |\n\n"
            f"Strict verdicts on seven replies in eight, loose on the eighth and on every adversarial reply, against "
            f"lm-evaluation-harness 0.4.13's IFEval checkers. Produced by `python bench/ifeval_check.py --replies "
            f"{args.replies}` on {time.strftime('%Y-%m-%d')}. Machine: {machine()}.\n")
    (results / 'ifeval_check.md').write_text(text)
    print(text)

if __name__ == '__main__': main()
