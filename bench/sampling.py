"""Tokens per second of HFPolicy.generate against plain transformers `model.generate`, same model and prompts.

    python bench/sampling.py [--model DIR] [--batch 64] [--new 48] [--repeats 5]
    python bench/sampling.py --quick     # CI: batch 4, 4 new tokens, 1 repeat; written to a temporary folder

Without --model it builds a small random Qwen2 model offline (nanorl.tiny). Both samplers draw with temperature 1
and nothing else (model.generate gets top_k=0/top_p=1 explicitly and a fixed number of new tokens, so both produce
exactly batch*new tokens). The two alternate, `repeats` times each, on one thread; the result is the ratio of
median tokens/s. Writes bench/results/sampling.md.
"""
import argparse, statistics, sys, tempfile, time
from pathlib import Path
import torch
from transformers import GenerationConfig

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nanorl.model import HFPolicy, left_pad
from nanorl.model import build_model, build_tokenizer, save_model

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--model', default=None); ap.add_argument('--batch', type=int, default=64)
    ap.add_argument('--new', type=int, default=48); ap.add_argument('--repeats', type=int, default=5)
    ap.add_argument('--quick', action='store_true', help='CI smoke run: batch 4, 4 new tokens, 1 repeat; '
                    'results go to a temporary folder, not bench/results')
    args = ap.parse_args()
    out = ROOT / 'bench/results'
    if args.quick: args.batch, args.new, args.repeats, out = 4, 4, 1, Path(tempfile.mkdtemp(prefix='bench_sampling_'))
    torch.set_num_threads(1)
    tmp = tempfile.TemporaryDirectory()
    if args.model is None:
        texts = [f"nums {a} {b} {c} target {a * b + c}\n<answer>{a}*{b}+{c}</answer>"
                 for a in range(1, 10) for b in range(1, 10) for c in range(1, 10)]
        tok = build_tokenizer(texts)
        args.model = str(save_model(build_model(tok), tok, f'{tmp.name}/tiny'))
    pi = HFPolicy.load(args.model)
    pi.stop_ids = []                       # fixed length: every row generates exactly args.new tokens
    prompts = pi.encode([f"nums {i % 9 + 1} {i % 7 + 1} {i % 5 + 1} target {i % 50 + 1}\n" for i in range(args.batch)])
    ids, attn = left_pad(prompts, pi.pad_id)
    gc = GenerationConfig(do_sample=True, temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=args.new,
                          min_new_tokens=args.new, pad_token_id=pi.pad_id, eos_token_id=None)
    def ours(): pi.generate(prompts, args.new, generator=torch.Generator().manual_seed(0))
    def plain():
        with torch.no_grad(): pi.model.generate(input_ids=ids, attention_mask=attn, generation_config=gc)
    rates = {'HFPolicy.generate': [], 'model.generate': []}
    for _ in range(args.repeats):
        for name, fn in (('HFPolicy.generate', ours), ('model.generate', plain)):
            t0 = time.perf_counter(); fn(); rates[name].append(args.batch * args.new / (time.perf_counter() - t0))
    med = {k: statistics.median(v) for k, v in rates.items()}
    ratio = med['HFPolicy.generate'] / med['model.generate']
    cmd = 'python bench/sampling.py' + ('' if args.model.startswith(tmp.name) else f' --model {args.model}')
    if args.quick:   # both samplers ran and gave a positive, finite rate
        assert 0 < ratio < float('inf'), rates
        cmd += ' --quick'
    text = (f"| sampler | median tokens/s |\n|---|---|\n" + ''.join(f"| {k} | {v:,.0f} |\n" for k, v in med.items())
            + f"\nRatio HFPolicy/model.generate: **{ratio:.2f}** (batch {args.batch}, {args.new} new tokens, "
            f"{args.repeats} alternating runs each, one thread); produced by `{cmd}`.\n")
    (out / 'sampling.md').write_text(text)
    print(text)
    if args.quick: print(f"(quick mode: written to {out / 'sampling.md'})")

if __name__ == '__main__': main()
