"The committed configs are exactly what the chapters' presets write, and every one of them loads."
from pathlib import Path
from nanorl.train import Config, PRESETS, load_yaml, write_presets
from nanorl.prefs import PREF_PRESETS
from nanorl.lm import LM_PRESETS
from nanorl.serve import ASYNC_PRESETS

ROOT = Path(__file__).resolve().parent.parent

def test_committed_configs_equal_the_presets(tmp_path):
    written = [*write_presets(Config, PRESETS, tmp_path, prefix='cartpole_'),
               *[p for presets in (PREF_PRESETS, LM_PRESETS, ASYNC_PRESETS)
                 for p in write_presets(Config, presets, tmp_path)]]
    assert sorted(p.name for p in written) == sorted(p.name for p in (ROOT / 'configs').glob('*.yaml'))
    for p in written:
        assert p.read_text() == (ROOT / 'configs' / p.name).read_text(), f"configs/{p.name} is stale: run its chapter"
        Config.from_dict(load_yaml(ROOT / 'configs' / p.name))
