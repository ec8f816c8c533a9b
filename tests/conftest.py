"Shared by the tests that start real processes: the CLI runner and the quick tiny model."
import subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent

def runs_in(folder: Path) -> dict:
    "Every file under `folder` with its size and modification time."
    return {str(f): (f.stat().st_size, f.stat().st_mtime_ns) for f in folder.rglob('*') if f.is_file()}

@pytest.fixture(scope='session', autouse=True)
def runs_left_alone():
    "A user's runs in the repository's runs/ (the quick start leaves one): no test writes there or reads them."
    before = runs_in(ROOT / 'runs')
    yield
    after = runs_in(ROOT / 'runs')
    assert after == before, f"the tests changed runs/: {sorted(set(after.items()) ^ set(before.items()))[:5]}"

@pytest.fixture(scope='session')
def nanorl_cli():
    "Run `python -m nanorl.train ARGS` from the repository root; returns the CompletedProcess."
    def run(*args, timeout=900):
        return subprocess.run([sys.executable, '-m', 'nanorl.train', *args], capture_output=True, text=True, cwd=ROOT,
                              timeout=timeout)
    return run

@pytest.fixture(scope='session')
def quick_model():
    "A tiny Countdown model with a 100-step warm-up (cached; chapter 08), for runs that only need to work."
    from nanorl.tiny import tiny_model
    return str(tiny_model('countdown', seed=0, sft_steps=100, progress=False))
