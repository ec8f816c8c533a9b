"""Does a static KV cache and `torch.compile` make the tiny model's decode step faster on this CPU?

    python bench/decode.py                 # batch 128, 24 steps, 1 and 2 threads, 5 alternating repeats
    python bench/decode.py --quick         # CI: batch 4, 4 steps, 1 repeat, results in a temporary folder

Three ways to run the same fixed-length decode (no stop tokens, greedy, so all three do the same arithmetic) of the
tiny Countdown model from one batch of prompts:
- `HFPolicy.generate`: transformers' growing (dynamic) KV cache, eager PyTorch, as the loop samples;
- a static KV cache (`transformers.StaticCache`, allocated once at its full length), eager;
- the same static cache with the one-token forward compiled by `torch.compile(fullgraph=True)` (TorchInductor, which
  generates and compiles C++ for the CPU).
The three alternate; the result is the median time per decode step, and the compile time of the first call.
Writes bench/results/decode.md.
"""
import argparse, statistics, sys, tempfile, time
from pathlib import Path
import torch
from transformers import StaticCache

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanorl.model import HFPolicy, left_pad, positions
from nanorl.tasks import make_language_task
from nanorl.tiny import tiny_model

def static_decode(model, forward, ids: torch.Tensor, attn: torch.Tensor, steps: int) -> torch.Tensor:
    "Greedy decode of `steps` tokens with a static cache; `forward` runs the one-token steps."
    B, L = ids.shape
    cache = StaticCache(config=model.config, max_cache_len=L + steps)
    full = torch.zeros(B, L + steps, dtype=attn.dtype); full[:, :L] = attn
    out = model(input_ids=ids, attention_mask=attn, position_ids=positions(attn), past_key_values=cache,
                use_cache=True, cache_position=torch.arange(L), logits_to_keep=1)
    logits, nxt, tokens = out.logits[:, -1], positions(attn)[:, -1] + 1, []
    for t in range(steps):
        tokens.append(act := logits.argmax(-1))
        if t + 1 == steps: break
        full[:, L + t] = 1
        out = forward(input_ids=act[:, None], attention_mask=full, position_ids=nxt[:, None], past_key_values=cache,
                      use_cache=True, cache_position=torch.tensor([L + t]), logits_to_keep=1)
        logits, nxt = out.logits[:, -1], nxt + 1
    return torch.stack(tokens, 1)

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--batch', type=int, default=128); ap.add_argument('--steps', type=int, default=24)
    ap.add_argument('--repeats', type=int, default=5); ap.add_argument('--threads', type=int, nargs='*', default=[1, 2])
    ap.add_argument('--quick', action='store_true', help='CI: batch 4, 4 steps, 1 repeat, temporary results')
    args = ap.parse_args()
    out = ROOT / 'bench/results'
    if args.quick:
        args.batch, args.steps, args.repeats, args.threads = 4, 4, 1, [1]
        out = Path(tempfile.mkdtemp(prefix='bench_decode_'))
    policy = HFPolicy.load(str(tiny_model('countdown', 0, **(dict(sft_steps=100, progress=False) if args.quick
                                                             else {}))))
    policy.stop_ids, model = [], policy.model.eval()
    task = make_language_task('countdown', 0)
    prompt_ids = policy.encode([task.build_prompt(r) for r in task.train_rows[:args.batch]])
    ids, attn = left_pad(prompt_ids, policy.pad_id)
    compiled = torch.compile(model, fullgraph=True, dynamic=False)
    lines = ['| threads | HFPolicy.generate ms/step | static cache ms/step | static cache + torch.compile ms/step | '
             'first compiled call s | tokens equal to generate\'s |', '|---|---|---|---|---|---|']
    for threads in args.threads:
        torch.set_num_threads(threads)
        with torch.no_grad():
            t0 = time.perf_counter(); first = static_decode(model, compiled, ids, attn, args.steps)
            t_compile = time.perf_counter() - t0
            want = policy.generate(prompt_ids, args.steps, greedy=True)['tokens']
            agree = min(float((x == want).float().mean()) for x in (first, static_decode(model, model, ids, attn,
                                                                                          args.steps)))
            assert agree > 0.95, f"the static-cache decodes agree with generate on only {agree:.1%} of the tokens"
            fns = {'generate': lambda: policy.generate(prompt_ids, args.steps, greedy=True),
                   'static': lambda: static_decode(model, model, ids, attn, args.steps),
                   'compiled': lambda: static_decode(model, compiled, ids, attn, args.steps)}
            times = {k: [] for k in fns}
            for _ in range(args.repeats):
                for k, fn in fns.items():
                    t0 = time.perf_counter(); fn(); times[k].append(time.perf_counter() - t0)
        ms = {k: 1000 * statistics.median(v) / args.steps for k, v in times.items()}
        lines.append(f"| {threads} | {ms['generate']:.2f} | {ms['static']:.2f} | {ms['compiled']:.2f} | "
                     f"{t_compile:.1f} | {agree:.1%} |")
    cmd = 'python bench/decode.py' + (' --quick' if args.quick else '')
    text = ('\n'.join(lines) + f"\n\nBatch {args.batch}, {args.steps} greedy steps; "
            f"medians of {args.repeats} alternating repeats; torch {torch.__version__}, CPU kernels "
            f"{torch.backends.cpu.get_cpu_capability()}; produced by `{cmd}`.\n")
    (out / 'decode.md').write_text(text)
    print(text)

if __name__ == '__main__': main()
