"""What the trainer survives, measured: tests/test_robust.py's measuring attacks, run several times, each run's figures.

    python bench/robust.py               # 3 runs of every measuring test
    python bench/robust.py --runs 1 --tests flood slow   # some of them

Each run is `python -m pytest tests/test_robust.py -s -p no:xdist -k <test>` in a process of its own (the tests start
trainers, workers and attackers as real processes on loopback). A test prints its figures in one line; the result
file keeps, per attack, what it checks and the line of every run, with whether the run passed. The tests' asserts
hold the floors (a third of the steps for the honest worker, half the unloaded rate, ...); the figures here are what
the chapter reports. Writes bench/results/robust.md.
"""
import argparse, platform, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'bench'))
from seeds import machine

RESULTS = ROOT / 'bench/results'
# short name: (the test, the attack in words, the start of the line it prints)
TESTS = {
    'trickle': ('test_a_thousand_trickling_connections_do_not_starve_valid_requests',
                '1,000 connections sending one byte every 10 s', 'answered'),
    'reconnect': ('test_a_thousand_reconnecting_tricklers_starve_neither_requests_nor_training',
                  'the same 1,000 reconnecting as soon as they are dropped or answered, beside a training run',
                  'beside 1,000 reconnecting tricklers'),
    'flood': ('test_a_flooding_worker_gets_no_more_than_its_share',
              'a worker posting junk batches as fast as it can beside an honest worker, 20 s', '20 s of flooding'),
    'stale': ('test_stale_batches_under_a_made_up_name_never_make_the_honest_worker_wait',
              'a stale batch (409) under a made-up worker name every 2 s, beside an honest worker',
              "stale batches from 'made-up'"),
    'slow': ('test_a_second_sender_posting_every_2_s_never_slows_training',
             "a second sender's valid, current batch every 2 s, beside a worker", "a valid batch from 'slow'"),
    'restarts': ('test_restarts_never_deadlock', 'SIGKILL of the trainer and `--resume`, two workers attached',
                 '12 restarts'),
    'descriptors': ('test_out_of_descriptors_the_server_drops_the_slowest_and_does_not_spin',
                    'the process out of file descriptors (EMFILE)', 'out of descriptors'),
}

def run_test(test: str, start: str) -> tuple[bool, str]:
    "One pytest process for `test`: (passed, the figures' line it printed, or the tail of its output)."
    p = subprocess.run([sys.executable, '-m', 'pytest', 'tests/test_robust.py', '-s', '-q', '-p', 'no:xdist',
                        '-p', 'no:cacheprovider', '-k', test], cwd=ROOT, capture_output=True, text=True)
    found = [line.lstrip('.') for line in p.stdout.splitlines() if line.lstrip('.').startswith(start)]
    return p.returncode == 0, found[-1] if found else p.stdout[-300:].replace('\n', ' ')

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--tests', nargs='*', default=list(TESTS), choices=list(TESTS))
    args = ap.parse_args()
    lines = ['| attack (test) | run | passed | what the test printed |', '|---|---|---|---|']
    for name in args.tests:
        test, attack, start = TESTS[name]
        for r in range(args.runs):
            t0 = time.monotonic()
            ok, line = run_test(test, start)
            print(f"{name} run {r + 1}: {'passed' if ok else 'FAILED'} in {time.monotonic() - t0:.0f} s: {line}",
                  flush=True)
            lines.append(f"| {attack if r == 0 else ''} {f'(`{test}`)' if r == 0 else ''} | {r + 1} | "
                         f"{'yes' if ok else 'no'} | {line.replace('|', '/')} |")
    suffix = '' if args.tests == list(TESTS) else '_' + '_'.join(args.tests)
    cmd = 'python bench/robust.py' + (f' --runs {args.runs}' if args.runs != 3 else '') + \
          (f" --tests {' '.join(args.tests)}" if suffix else '')
    out = RESULTS / f'robust{suffix}.md'
    out.write_text('\n'.join(lines) + f"\n\nEach run a pytest process of its own, one test at a time (no other test "
                   f"beside it), on {machine()}; Python {platform.python_version()}. Measured "
                   f"{time.strftime('%Y-%m-%d')}; produced by `{cmd}`.\n")
    print(out.read_text())

if __name__ == '__main__':
    main()
