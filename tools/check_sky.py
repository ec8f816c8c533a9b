"""SkyPilot's own loader on every file in sky/ (run by .ci/run in a virtual environment holding skypilot==0.14.1).

Each file parses as SkyPilot parses it at launch: a job group (a header with `execution: parallel`) with
`load_job_group_from_yaml`, a single task with `Task.from_yaml`; unknown keys are refused with SkyPilot's "did you
mean". Then: every task names resources, a setup and a run; every accelerator is one of SkyPilot's canonical GPU
names (its catalog of clouds needs the network, the names do not); a secret is declared without a value.
Importing sky writes ~/.sky: run this with HOME set to a temporary folder.
"""
import copy, sys
from pathlib import Path
import yaml

def gpu_names(spec) -> list[str]:
    "The names in an accelerator request: 'NAME:COUNT', {NAME: COUNT, ...} or a list of such strings."
    items = list(spec) if isinstance(spec, (dict, list)) else [spec]
    return [str(s).split(':')[0] for s in items]

def check(path: Path) -> list[str]:
    "What is wrong with one file, as SkyPilot sees it (empty when nothing is)."
    import sky
    from sky.utils import dag_utils, gpu_names as names
    docs = list(yaml.safe_load_all(path.read_text()))
    group = docs[0].get('execution') == 'parallel'
    raw = docs[1:] if group else docs
    # an env left null must be given at launch (--env NAME=...): give each a stand-in, as the launch would
    given = [(k, 'stand-in') for d in raw for k, v in (d.get('envs') or {}).items() if v is None]
    if group: tasks = dag_utils.load_job_group_from_yaml(str(path), env_overrides=given).tasks
    else: tasks = [sky.Task.from_yaml_config(copy.deepcopy(raw[0]), env_overrides=given)]   # it pops keys
    problems = [] if len(tasks) == len(raw) else [f"{path.name}: SkyPilot read {len(tasks)} tasks of {len(raw)}"]
    for t, d in zip(tasks, raw):
        where = f"{path.name}: task {t.name}"
        if not d.get('resources'): problems.append(f"{where} names no resources")
        if not (t.setup or '').strip() or not (t.run or '').strip(): problems.append(f"{where} lacks setup or run")
        for name in gpu_names((d.get('resources') or {}).get('accelerators') or []):
            if name not in names.CANONICAL_GPU_NAMES:
                problems.append(f"{where}: accelerator {name!r} is not one of SkyPilot's canonical GPU names")
        problems += [f"{where}: secret {k} has a value in the file" for k, v in (d.get('secrets') or {}).items()
                     if v is not None]
    return problems

if __name__ == '__main__':
    files = sorted(Path(sys.argv[1] if len(sys.argv) > 1 else 'sky').glob('*.yaml'))
    if not files: sys.exit("check_sky: no .yaml files found")
    problems = [p for f in files for p in check(f)]
    for p in problems: print(p, file=sys.stderr)
    print(f"check_sky: {len(files)} files, {len(problems)} problems")
    sys.exit(1 if problems else 0)
