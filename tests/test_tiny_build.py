"The tiny model's build as a user meets it (chapter 08): usage without a task, a Ctrl-C, a resume to the same bits."
import hashlib, os, re, shutil, signal, subprocess, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEPS, EVERY = 30, 5           # a checkpoint at step 5, then 25 more steps in which to interrupt the build

def one_cpu_and_default_sigint():
    "One CPU, where a build runs on one thread, the only count on which PyTorch's CPU kernels repeat bit for bit."
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    signal.signal(signal.SIGINT, signal.SIG_DFL)

def tiny(cache: Path, *args):
    "`python -m nanorl.tiny ARGS` with its own cache, and SIGINT raising KeyboardInterrupt in it as at a terminal."
    # a job that a shell started in the background (`cmd &`) has SIGINT ignored, and its children inherit that
    return subprocess.Popen([sys.executable, '-m', 'nanorl.tiny', *args], cwd=ROOT, text=True,
                            env={**os.environ, 'NANORL_CACHE': str(cache)}, preexec_fn=one_cpu_and_default_sigint,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)

def finish(p, timeout=300) -> tuple[int, str, str]:
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err

def notes(err: str) -> list[str]:
    "The lines of stderr that are not tqdm's bar."
    return [l for l in err.replace('\r', '\n').splitlines() if l.strip() and not l.startswith('sft:')]

def weights_sha(cache: Path) -> str:
    (model,) = cache.glob('tiny-countdown-*/model.safetensors')
    return hashlib.sha256(model.read_bytes()).hexdigest()

def test_no_arguments_prints_usage_and_builds_nothing(tmp_path):
    cache = tmp_path / 'cache'
    code, out, err = finish(tiny(cache))
    assert code == 0, err
    for word in ('usage: python -m nanorl.tiny', 'countdown', 'gsm8k', 'ifeval', '--seed', '--sft_steps',
                 str(cache), 'NANORL_CACHE'):
        assert word in out, (word, out)
    assert not cache.exists() or not any(cache.iterdir())
    code, out, err = finish(tiny(cache, '--seed', '1'))      # options but no task: an error, still no build
    assert code == 2 and 'name the task to build' in err
    assert not cache.exists() or not any(cache.iterdir())

def test_interrupted_build_resumes_to_the_same_weights(tmp_path):
    cache, args = tmp_path / 'cache', ['countdown', '--sft_steps', str(STEPS), '--save_every', str(EVERY)]
    code, out, err = finish(tiny(cache, *args))
    assert code == 0, err
    whole, folder = weights_sha(cache), Path(out.strip().splitlines()[-1])
    assert notes(err)[0].startswith(f'nanorl.tiny: building the tiny countdown model once (seed 0, {STEPS} SFT steps')
    assert notes(err)[-1].startswith('nanorl.tiny: built the tiny countdown model') and str(folder) in notes(err)[-1]
    assert not folder.with_name(folder.name + '.partial').exists()

    code, out, err = finish(tiny(cache, *args))               # found in the cache: the folder, nothing else
    assert (code, out.strip(), notes(err)) == (0, str(folder), [])

    shutil.rmtree(folder)                                      # the same build again (the task's rows stay cached)
    p = tiny(cache, *args)
    checkpoint = folder.with_name(folder.name + '.partial') / 'state.pt'
    t0 = time.time()
    while not checkpoint.exists() and p.poll() is None and time.time() - t0 < 240: time.sleep(0.02)
    p.send_signal(signal.SIGINT)
    code, out, err = finish(p)
    assert code == 130, err
    assert 'Traceback' not in err and out.strip() == ''
    stop = notes(err)[-1]
    assert len(notes(err)) == 2 and stop.startswith(f'nanorl.tiny: stopped building {folder.name}; its checkpoint'), err
    saved = int(re.search(rf'checkpoint at step (\d+) of {STEPS}', stop).group(1))
    assert saved % EVERY == 0 and 0 < saved < STEPS and not folder.exists()

    code, out, err = finish(tiny(cache, *args))
    assert code == 0, err
    assert f'nanorl.tiny: resuming the build from step {saved} of {STEPS}' in notes(err)[1]
    assert weights_sha(cache) == whole                       # bit for bit the uninterrupted build's weights
    assert not checkpoint.parent.exists()

def test_the_folder_alone_on_stdout_from_an_empty_cache(tmp_path):
    ("The README's `--model \"$(python -m nanorl.tiny countdown)\"` from an empty cache: stdout holds the folder "
     "alone (the tokenizer trainer's blank lines go to stderr), so the shell substitution names a model that loads.")
    train = (f'"{sys.executable}" -m nanorl.train --task countdown --algo grpo --group_size 2 --n_prompts 2 --steps 1 '
             f'--n_eval 4 --eval_every 1 --progress false --out_dir "{tmp_path / "runs"}" >&2')
    script = (f'm="$("{sys.executable}" -m nanorl.tiny countdown --sft_steps 5)" && {train} --model "$m" && '
              f'printf %s "$m"')
    p = subprocess.run(['bash', '-c', script], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, 'NANORL_CACHE': str(tmp_path / 'cache')})
    assert p.returncode == 0, p.stderr[-2000:]
    (folder,) = [d for d in (tmp_path / 'cache').glob('tiny-countdown-s0-sft5-*') if d.is_dir()]   # not its .lock
    assert p.stdout == str(folder), repr(p.stdout)
    assert (tmp_path / 'runs').is_dir() and 'held-out' in p.stderr, p.stderr[-2000:]   # the run loaded it and trained

def test_without_the_lm_extra_one_line_names_it(tmp_path):
    ("Without transformers, `python -m nanorl.tiny countdown` says in one line which extra to install, and builds "
     "nothing. The package is hidden from the import system's search (a venv without the extra costs a minute of "
     "installs); everything else runs as a user's command would.")
    hide = ("import importlib.util as u, runpy, sys; find = u.find_spec\n"
            "u.find_spec = lambda name, *a: None if name == 'transformers' else find(name, *a)\n"
            "sys.argv = ['nanorl.tiny', 'countdown']; runpy.run_module('nanorl.tiny', run_name='__main__')")
    p = subprocess.run([sys.executable, '-c', hide], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, 'NANORL_CACHE': str(tmp_path / 'cache')})
    assert p.returncode == 1 and p.stdout == '', (p.returncode, p.stdout, p.stderr)
    assert p.stderr.strip().splitlines() == [
        "nanorl.tiny: building a model: transformers is not installed; install the lm extra: pip install -e '.[lm]'"]
    assert not (tmp_path / 'cache').exists()
