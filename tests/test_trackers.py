("`--report_to tensorboard,wandb`: both trackers get every number the CSV gets, under the CSV's groups, and the config "
 "as hyperparameters; read back here from the files they wrote (W&B offline), no network.")
import json, math, subprocess, sys
from pathlib import Path
from nanorl.runlog import read_log, tracker_tag
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.hparams import plugin_data_pb2
from wandb.proto import wandb_internal_pb2

ROOT = Path(__file__).resolve().parent.parent

def wandb_records(path: Path) -> list:
    "The records of a W&B run file: a 7-byte header, then LevelDB log records in 32 KiB blocks, each a protobuf."
    data, pos, chunk, records = path.read_bytes(), 7, b'', []
    assert data[:4] == b':W&B', data[:8]
    while pos + 7 <= len(data):
        left = 32768 - pos % 32768
        if left < 7: pos += left; continue                  # a block's tail too short for a header is padding
        length, kind = int.from_bytes(data[pos + 4:pos + 6], 'little'), data[pos + 6]
        chunk += data[pos + 7:pos + 7 + length]; pos += 7 + length
        if kind in (1, 4):                                  # a whole record, or the last piece of one
            r = wandb_internal_pb2.Record(); r.ParseFromString(chunk); records.append(r); chunk = b''
    return records

def csv_numbers(log: dict) -> dict[tuple[str, int], float]:
    return {(tracker_tag(k), int(s)): v for k, col in log.items() if k != 'step'
            for s, v in zip(log['step'], col) if math.isfinite(v)}

def test_both_trackers_get_what_the_csv_gets(tmp_path, nanorl_cli):
    p = nanorl_cli('--steps', '4', '--eval_every', '2', '--stop_when_solved', 'false', '--out_dir', str(tmp_path),
                   '--report_to', 'tensorboard,wandb', '--progress', 'false', '--lr', '0.02')
    assert p.returncode == 0, p.stderr[-2000:]
    run = tmp_path / 'cartpole_reinforce'
    want = csv_numbers(read_log(run))
    assert ('eval/eval_return', 0) in want and ('time/t_rollout', 4) in want and ('reward/reward', 1) in want
    ea = EventAccumulator(str(run / 'tensorboard')); ea.Reload()
    tb = {(tag, e.step): e.value for tag in ea.Tags()['scalars'] for e in ea.Scalars(tag)}
    assert tb.keys() == want.keys()
    for k, v in want.items(): assert math.isclose(tb[k], v, rel_tol=1e-5, abs_tol=1e-6), (k, tb[k], v)
    hparams = ea.PluginTagToContent('hparams')['_hparams_/session_start_info']
    start = plugin_data_pb2.HParamsPluginData.FromString(hparams)
    assert start.session_start_info.hparams['lr'].number_value == 0.02
    (file,) = (run / 'wandb').glob('offline-run-*/run-*.wandb')
    records = wandb_records(file)
    key = lambda item: item.key or '/'.join(item.nested_key)
    wb = {(key(item), r.history.step.num): json.loads(item.value_json) for r in records
          if r.WhichOneof('record_type') == 'history' for item in r.history.item if not key(item).startswith('_')}
    assert wb.keys() == want.keys()
    for k, v in want.items(): assert math.isclose(wb[k], v, rel_tol=1e-5, abs_tol=1e-6), (k, wb[k], v)
    config = {i.key: json.loads(i.value_json) for r in records if r.WhichOneof('record_type') == 'run'
              for i in r.run.config.update}
    assert config['lr'] == 0.02 and config['name'] == 'cartpole_reinforce', config

def test_an_unknown_tracker_is_refused_before_the_run(tmp_path, nanorl_cli):
    p = nanorl_cli('--out_dir', str(tmp_path), '--report_to', 'tensorbord')
    assert p.returncode == 2 and "unknown report_to 'tensorbord'; did you mean 'tensorboard'?" in p.stderr, p.stderr
    assert not (tmp_path / 'cartpole_reinforce').exists()
