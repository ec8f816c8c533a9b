("Masked values are inert in backward too: NaN and ±inf at every kind of masked position (padding, an environment's "
 "tokens) leave the loss, every gradient and the updated weights equal to the clean batch's, bit for bit, for every "
 "algorithm and objective, and no step is skipped.")
import json, math
from dataclasses import replace
import pytest
import torch
from nanorl.train import from_dict, load_yaml
from nanorl.loop import Run, backward, update
from conftest import ROOT

FILLS = (math.nan, math.inf, -math.inf)
FLOAT_STEPS = ('logp', 'old_logp', 'advantage', 'returns', 'old_value', 'ref_logp')

def spoiled(d, fill: float):
    "`d` with `fill` at every masked position of every per-step float field (and of observations that are per step)."
    pad = d.mask == 0
    assert pad.any()                                  # something to spoil
    out = {k: v.masked_fill(pad, fill) for k in FLOAT_STEPS if (v := getattr(d, k)) is not None}
    if d.obs_mask is None: out['obs'] = d.obs.masked_fill(pad[..., None], fill)
    return replace(d, **out)

def prepared(cfg) -> tuple:
    "A run of `cfg` and one batch its objective sampled and prepared (seeded: two runs of one cfg start equal)."
    run = Run(cfg)
    g = torch.Generator().manual_seed(1)
    batch = run.objective.sample(run.task, run.policy, run.part, 7, g)
    return run, batch, run.objective.prepare(batch, run.policy, run.critic, run.ref, run.cfg)

def trained(cfg, d) -> tuple:
    "From a fresh run of `cfg`: loss and gradients of one backward over all of `d`, then `update`'s stats and weights."
    run = Run(cfg)
    params = [p for g in run.opt.param_groups for p in g['params']]
    loss, _ = backward(d, torch.arange(len(d)), run.policy, run.critic, cfg, run.objective)
    grads = [None if p.grad is None else p.grad.clone() for p in params]
    stats = update(d, run.policy, run.critic, run.opt, cfg, torch.Generator().manual_seed(3), run.objective)
    return loss, grads, stats, [p.detach().clone() for p in params]

def same(a, b) -> bool:
    "Equal bit for bit: floats, tensors (None alike), and lists of them."
    if isinstance(a, (list, tuple)): return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor): return b is not None and torch.equal(a, b)
    return a == b or (a != a and b != b)

def check_inert(cfg):
    run, batch, d = prepared(cfg)
    clean = trained(cfg, d)
    assert clean[2]['skipped'] == 0 and math.isfinite(clean[0])
    assert any(g is not None and g.abs().sum() > 0 for g in clean[1])     # a real gradient, or the check tests nothing
    for fill in FILLS:
        dirty = trained(cfg, spoiled(d, fill))
        assert dirty[2]['skipped'] == 0, (fill, dirty[2].get('why'))
        assert same(clean[0], dirty[0]), (fill, 'loss', clean[0], dirty[0])
        assert same(clean[1], dirty[1]), (fill, 'gradients')
        assert same(clean[3], dirty[3]), (fill, 'weights after update')

CONTROL = {'reinforce': {}, 'reinforce_baseline': {},
           'ppo': dict(epochs=2, minibatches=2, micro_batch=3),
           'grpo': dict(group_size=2, kl_coef=0.1), 'dr_grpo': dict(group_size=2), 'rloo': dict(group_size=2)}

@pytest.mark.parametrize('algo', CONTROL)
def test_control_masked_values_are_inert(algo, tmp_path):
    check_inert(from_dict({'algo': algo, 'n_prompts': 4, 'max_len': 60, 'progress': False, 'out_dir': str(tmp_path),
                           **CONTROL[algo]}))

def test_prepare_on_a_raw_batch_with_nan_observations(tmp_path):
    ("`prepare` itself zeroes what a sampler left on padding: a raw batch with NaN observations and -inf logprobs "
     "there prepares to the clean batch's tensors, critic values included.")
    cfg = from_dict({'algo': 'ppo', 'n_prompts': 4, 'max_len': 60, 'progress': False, 'out_dir': str(tmp_path)})
    run, batch, d = prepared(cfg)
    pad = batch.mask == 0
    raw = replace(batch, obs=batch.obs.masked_fill(pad[..., None], math.nan),
                  logp=batch.logp.masked_fill(pad, -math.inf))
    d2 = run.objective.prepare(raw, run.policy, run.critic, run.ref, run.cfg)
    for k in ('obs', 'logp', 'advantage', 'returns', 'old_value'): assert torch.equal(getattr(d, k), getattr(d2, k)), k
    assert same(trained(cfg, d)[3], trained(cfg, d2)[3])

def language(model: str, tmp_path, config: str, **over):
    return from_dict({**load_yaml(ROOT / 'configs' / config), 'model': model, 'n_prompts': 2, 'max_len': 12,
                      'progress': False, 'out_dir': str(tmp_path), 'micro_batch': 3, **over})

@pytest.mark.parametrize('config, over', [
    ('countdown_tiny_cpu.yaml', dict(group_size=4, kl_coef=0.05, dynamic_sampling=0)),
    ('countdown_ppo_tiny_cpu.yaml', dict(n_prompts=4)),
    ('countdown_multiturn_tiny_cpu.yaml', dict(group_size=4, epochs=2, ent_coef=0.01)),
])
def test_language_masked_values_are_inert(quick_model, tmp_path, config, over):
    "GRPO with a KL penalty, PPO with a critic on tokens, and two-turn conversations whose replies are masked."
    check_inert(language(quick_model, tmp_path, config, **over))

def test_sft_and_dpo_masked_values_are_inert(quick_model, tmp_path):
    sft = tmp_path / 'sft.jsonl'
    sft.write_text(''.join(json.dumps({'prompt': f'nums {a} 2 target {a + 2}\n', 'completion': f'<answer>{a}+2'
                                       + ' ' * a + '</answer>'}) + '\n' for a in range(6)))
    check_inert(language(quick_model, tmp_path, 'countdown_sft_tiny_cpu.yaml', data=str(sft), n_prompts=4))
    pairs = tmp_path / 'pairs.jsonl'
    pairs.write_text(''.join(json.dumps({'prompt': f'nums {a} 3 target {a + 3}\n', 'chosen': f'<answer>{a}+3</answer>',
                                         'rejected': f'<answer>{a}*3 ' + 'x' * a + '</answer>'}) + '\n'
                             for a in range(6)))
    check_inert(language(quick_model, tmp_path, 'countdown_dpo_tiny_cpu.yaml', data=str(pairs), n_prompts=4))
