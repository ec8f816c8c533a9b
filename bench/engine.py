"""vLLM (chapter 13) against HFPolicy.generate on this machine's CPU, and separate generation and scoring batch sizes.

    python bench/engine.py [--batch 64] [--new 32] [--repeats 5]
    python bench/engine.py --quick     # CI: the small model only, batch 4, 4 new tokens, 1 repeat; a temporary folder

Two models built offline with random weights and the Countdown tokenizer: the tiny model's shape with head size 32
(width 96, 4 layers, 3 heads, 1 key/value head; vLLM's CPU attention refuses the tiny model's 24) and a wider one
(width 384, 8 layers, 6 heads of 64, 17.5M parameters). Both samplers draw `new` tokens for each of `batch`
prompts at temperature 1 with no stop token, so both produce exactly batch*new tokens; they alternate, `repeats`
times each, and the result is the ratio of median tokens per second. The engine's start-up is timed once per model
(the first one includes importing and initialising vLLM in this process).

The batch-size part uses HFPolicy alone: one step's sampling and scoring (forward and backward) of 128 sequences,
with one shared size for both against generation all at once and scoring in micro-batches of that size.
Writes bench/results/engine.md.
"""
import argparse, os, platform, statistics, sys, tempfile, time
from pathlib import Path
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanorl.core import micro_batches
from nanorl.model import HFPolicy, join
from nanorl.vllm import VLLMEngine, servable_model

def models(tmp: Path, quick: bool) -> dict[str, str]:
    shapes = {'tiny shape, head size 32': dict(),
              'width 384, 8 layers': dict(hidden=384, layers=8, heads=6, kv_heads=2)}
    if quick: shapes = dict(list(shapes.items())[:1])
    paths = {name: tmp / name.replace(' ', '_').replace(',', '') for name in shapes}
    for name, kw in shapes.items(): servable_model(paths[name], **kw)
    return {name: str(p) for name, p in paths.items()}

def prompts_of(pi, n: int) -> list[list[int]]:
    return pi.encode([f"nums {i % 9 + 1} {i % 7 + 1} {i % 5 + 1} target {i % 50 + 1}\n" for i in range(n)])

def tokens_per_s(fn, n_tokens: int) -> float:
    t0 = time.perf_counter(); out = fn(); dt = time.perf_counter() - t0
    assert int(out['mask'].sum()) == n_tokens, (int(out['mask'].sum()), n_tokens)
    return n_tokens / dt

def engines(args, path: str) -> dict:
    pi = HFPolicy.load(path); pi.stop_ids = []             # fixed length: every row generates exactly args.new tokens
    prompts = prompts_of(pi, args.batch)
    t0 = time.perf_counter()
    engine = VLLMEngine(path, max_num_seqs=max(args.batch, 1))
    start = time.perf_counter() - t0
    g, n = torch.Generator().manual_seed(0), args.batch * args.new
    hf = lambda: pi.generate(prompts, args.new, generator=g)
    vl = lambda: engine.generate(prompts, args.new, 1.0, [], pi.pad_id, generator=g)
    hf(); vl()                                               # warm-up
    rates = {'hf': [], 'vllm': []}
    for _ in range(args.repeats):
        rates['hf'].append(tokens_per_s(hf, n)); rates['vllm'].append(tokens_per_s(vl, n))
    engine.close()
    params = sum(p.numel() for p in pi.parameters())
    return {'params': params, 'start': start, **{k: statistics.median(v) for k, v in rates.items()},
            'range': {k: (min(v), max(v)) for k, v in rates.items()}}

def step_time(pi, prompts, new: int, gen_batch: int, score_batch: int, g) -> float:
    "Seconds for one step's sampling of every prompt and a forward and backward over every sequence."
    t0 = time.perf_counter()
    out = pi.generate(prompts, new, generator=g, batch_size=gen_batch)
    obs, obs_mask = join(prompts, out, pi.pad_id)
    for s in micro_batches(len(prompts), score_batch):
        lp, _ = pi.score(obs[s], out['tokens'][s], obs_mask[s])
        (lp * out['mask'][s]).sum().backward()
    return time.perf_counter() - t0

def batch_sizes(args, path: str, n: int = 128, shared: int = 16) -> dict:
    pi = HFPolicy.load(path); pi.stop_ids = []
    prompts, g = prompts_of(pi, n), torch.Generator().manual_seed(0)
    cases = {f'shared {shared}': (shared, shared), f'generate {n} at once, score {shared}': (n, shared)}
    step_time(pi, prompts[:8], 4, 8, 8, g)
    times = {k: [] for k in cases}
    for _ in range(args.repeats):
        for k, (gb, sb) in cases.items(): times[k].append(step_time(pi, prompts, args.new, gb, sb, g))
    return {k: (statistics.median(v), min(v), max(v)) for k, v in times.items()}

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--batch', type=int, default=64); ap.add_argument('--new', type=int, default=32)
    ap.add_argument('--repeats', type=int, default=5); ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--quick', action='store_true', help='CI smoke run: small model, batch 4, 4 new tokens, 1 repeat')
    args = ap.parse_args()
    out = ROOT / 'bench/results'
    if args.quick: args.batch, args.new, args.repeats, out = 4, 4, 1, Path(tempfile.mkdtemp(prefix='bench_vllm_'))
    torch.set_num_threads(args.threads)
    tmp = Path(tempfile.mkdtemp(prefix='bench_vllm_models_'))
    paths = models(tmp, args.quick)
    rows = {name: engines(args, p) for name, p in paths.items()}
    sizes = batch_sizes(args, next(iter(paths.values())), n=16 if args.quick else 128, shared=4 if args.quick else 16)
    import vllm
    info = open('/proc/cpuinfo').read() if os.path.exists('/proc/cpuinfo') else ''
    cpu = next((ln.split(':', 1)[1].strip() for ln in info.splitlines() if ln.startswith('model name')),
               platform.machine())
    flags = info
    lines = ["# vLLM against HFPolicy.generate on CPU", "",
             f"Produced by `python bench/engine.py{' --quick' if args.quick else ''}` with vLLM {vllm.__version__}, "
             f"torch {torch.__version__}, {args.threads} threads; {args.batch} prompts x {args.new} new tokens, "
             f"{args.repeats} alternating repeats, medians (min to max). CPU: {cpu}, "
             f"{os.cpu_count()} cores, avx2 {'yes' if ' avx2' in flags else 'no'}, "
             f"avx512f {'yes' if 'avx512f' in flags else 'no'}.", "",
             "| model | parameters | engine start (s) | HF tokens/s | vLLM tokens/s | vLLM / HF |",
             "|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['params'] / 1e6:.2f}M | {r['start']:.0f} | {r['hf']:.0f} "
                     f"({r['range']['hf'][0]:.0f} to {r['range']['hf'][1]:.0f}) | {r['vllm']:.0f} "
                     f"({r['range']['vllm'][0]:.0f} to {r['range']['vllm'][1]:.0f}) | {r['vllm'] / r['hf']:.2f} |")
    lines += ["", "One step's sampling and scoring (forward and backward) with HFPolicy, the first model:", "",
              "| batch sizes | seconds per step |", "|---|---|"]
    lines += [f"| {k} | {m:.2f} ({lo:.2f} to {hi:.2f}) |" for k, (m, lo, hi) in sizes.items()]
    out.mkdir(parents=True, exist_ok=True)
    (out / "engine.md").write_text('\n'.join(lines) + '\n')
    print('\n'.join(lines))

if __name__ == '__main__':
    main()
