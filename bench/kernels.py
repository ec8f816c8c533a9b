"""Do CPU kernels change the tiny model? Build it (Countdown, seed 0, the 1,500-step warm-up) once per kernel set.

    python bench/kernels.py default avx2          # on an AVX2 machine; add avx512 where the CPU has it

Each build runs in its own process with `ATEN_CPU_CAPABILITY` set (torch's switch for its vectorised kernels) and
its own empty cache, then evaluates greedy held-out accuracy on 1,024 problems. Prints one JSON line per build and
the largest weight difference between the first two. About 4 to 5 minutes per build on 2 cores.
"""
import json, os, subprocess, sys, tempfile
import torch

BUILD = r"""
import json, sys, time, torch
from nanorl.tiny import tiny_model
from nanorl.lmtask import LanguageTask
from nanorl.train import Config
t = time.time(); path = tiny_model('countdown', 0, progress=False); build = time.time() - t
cfg = Config(task='countdown', algo='grpo', group_size=8, model=str(path), n_eval=1024, progress=False)
task = LanguageTask('countdown'); policy, _ = task.setup(cfg)
accuracy = task.evaluate(policy, cfg)
torch.save(policy.model.state_dict(), sys.argv[1])
print(json.dumps({'kernels': torch.backends.cpu.get_cpu_capability(), 'build_s': round(build),
                  'heldout_accuracy': accuracy}))
"""

def main(kernels: list[str]):
    root, tmp = os.path.dirname(os.path.dirname(os.path.abspath(__file__))), tempfile.mkdtemp(prefix='bench_kernels_')
    for k in kernels:
        env = {**os.environ, 'ATEN_CPU_CAPABILITY': k, 'NANORL_CACHE': os.path.join(tmp, k)}
        p = subprocess.run([sys.executable, '-c', BUILD, os.path.join(tmp, f'{k}.pt')], env=env, cwd=root,
                           capture_output=True, text=True, check=True)
        print(p.stdout.strip().splitlines()[-1], flush=True)
    a, b = (torch.load(os.path.join(tmp, f'{k}.pt')) for k in kernels[:2])
    print(json.dumps({'max_abs_weight_difference': max((a[n] - b[n]).abs().max().item() for n in a),
                      'identical': all(torch.equal(a[n], b[n]) for n in a)}))

if __name__ == '__main__': main(sys.argv[1:] or ['default', 'avx2'])
