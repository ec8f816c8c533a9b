"""Do CPU kernels change the tiny model? Build it (Countdown, seed 0, the 1,500-step warm-up) once per kernel set.

    python bench/kernels.py default avx2 avx512   # -> bench/results/kernels.md (drop avx512 where the CPU lacks it)

Each build runs in its own process with `ATEN_CPU_CAPABILITY` set (torch's switch for its vectorised kernels) and
its own empty cache, then evaluates greedy held-out accuracy on 1,024 problems. The table gives, per kernel set, the
build's minutes, the held-out problems right, the weights' sha256 and their largest difference from the first
build's. About 2 to 3 minutes per build on a 2-core Intel Xeon
(bench/results/kernels.md).
"""
import datetime, json, os, subprocess, sys, tempfile
from pathlib import Path
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'bench'))
from seeds import commit, machine

BUILD = r"""
import json, sys, time, torch
from nanorl.tiny import tiny_model, weights_sha256
from nanorl.lmtask import LanguageTask
from nanorl.train import Config
t = time.time(); path = tiny_model('countdown', 0, progress=False); build = time.time() - t
cfg = Config(task='countdown', algo='grpo', group_size=8, model=str(path), n_eval=1024, progress=False)
task = LanguageTask('countdown'); policy, _ = task.setup(cfg)
right, n = task.eval_counts(policy, cfg)
torch.save(policy.model.state_dict(), sys.argv[1])
print(json.dumps({'kernels': torch.backends.cpu.get_cpu_capability(), 'build_s': build, 'right': right, 'n': n,
                  'threads': torch.get_num_threads(), 'sha256': weights_sha256(path)[:16]}))
"""

def build(kernels: str, tmp: str) -> dict:
    "One build in a fresh process on the kernels `kernels`, with its own empty cache."
    env = {**os.environ, 'ATEN_CPU_CAPABILITY': kernels, 'NANORL_CACHE': os.path.join(tmp, kernels)}
    p = subprocess.run([sys.executable, '-c', BUILD, os.path.join(tmp, f'{kernels}.pt')], env=env, cwd=ROOT,
                       capture_output=True, text=True, check=True)
    row = json.loads(p.stdout.strip().splitlines()[-1])
    print(json.dumps(row), flush=True)
    return row

def main(kernels: list[str]):
    tmp = tempfile.mkdtemp(prefix='bench_kernels_')
    rows = [build(k, tmp) for k in kernels]
    lines = ['| kernels asked | kernels torch used | build min | held-out right (of 1,024) | weights sha256 | '
             f'largest weight difference from {kernels[0]} |', '|---|---|---|---|---|---|']
    weights = [torch.load(os.path.join(tmp, f'{k}.pt')) for k in kernels]
    for k, r, w in zip(kernels, rows, weights):
        diff = max((w[n] - weights[0][n]).abs().max().item() for n in weights[0])
        lines.append(f"| {k} | {r['kernels']} | {r['build_s'] / 60:.1f} | {r['right']} | `{r['sha256']}` | "
                     f"{diff:.3g} |")
    text = '\n'.join(lines) + (
        f"\n\nThe tiny Countdown model of seed 0 (the 1,500-step warm-up), built once per kernel set from an empty "
        f"cache, each in its own process with `ATEN_CPU_CAPABILITY` set; greedy held-out accuracy on 1,024 problems; "
        f"the build on {rows[0]['threads']} torch threads. Produced by `python bench/kernels.py {' '.join(kernels)}` "
        f"on {datetime.date.today()} at commit {commit()}. Machine: {machine()}.\n")
    (ROOT / 'bench/results/kernels.md').write_text(text)
    print(text)

if __name__ == '__main__': main(sys.argv[1:] or ['default', 'avx2'])
