("The async transport with real processes on loopback: "
 "a trainer and rollout workers started as `python -m nanorl.train`.")
import ast, json, math, os, secrets, signal, socket, struct, subprocess, sys, time
from pathlib import Path
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st
from nanorl.train import CKPT, Config, build, read_log
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from nanorl.serve import Client, batch_tensors, pack

ROOT = Path(__file__).resolve().parent.parent
TOKEN = secrets.token_hex(16)
SMALL = ['--n_prompts', '4', '--max_len', '50']                  # the fixture trainer's batch shape

def free_port() -> int:
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

def start(*args, token=TOKEN) -> subprocess.Popen:
    env = {**os.environ, 'NANORL_TOKEN': token, 'OMP_NUM_THREADS': '1', 'PYTHONPATH': str(ROOT)}
    return subprocess.Popen([sys.executable, '-m', 'nanorl.train', '--progress', 'false', *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

def trainer(tmp, port, *args, name='t'):
    return start('--role', 'trainer', '--port', str(port), '--out_dir', str(tmp), '--name', name,
                 '--stop_when_solved', 'false', *args)

def worker(port, *args):
    return start('--role', 'rollout', '--trainer_url', f'http://127.0.0.1:{port}', '--patience', '30', *args)

def wait_for(pred, timeout=120, every=0.2, what='condition'):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if (v := pred()): return v
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")

def version(c: Client) -> int: return c.json('/health')['version']

def meta(c: Client, v: int | None = None, worker: str = 'test') -> dict:
    "Metadata of a batch sampled by version `v` (default: the trainer's current one) of the running trainer."
    h = c.json('/health')
    return {'version': h['version'] if v is None else v, 'run': h['run'], 'worker': worker}

def stop(p: subprocess.Popen, sig=signal.SIGTERM, timeout=60) -> str:
    if p.poll() is None: p.send_signal(sig)
    out, _ = p.communicate(timeout=timeout)
    return out

def final_stats(out: str) -> dict:
    "The counters the trainer prints when it stops."
    line = [l for l in out.splitlines() if l.startswith('trainer: stopped at version')][-1]
    return json.loads(line.split('; ', 1)[1])

def balanced(s: dict) -> bool:
    return s['submitted'] == s['trained'] + s['rejected'] + s['displaced'] + s['dropped'] + s['queue']

@pytest.fixture(scope='module')
def served(tmp_path_factory):
    "A trainer that waits for batches (none from workers): the tests submit them by hand."
    port, tmp = free_port(), tmp_path_factory.mktemp('served')
    p = trainer(tmp, port, *SMALL, '--steps', '100000', '--eval_every', '100000', '--save_every', '100000',
                '--max_staleness', '2', '--max_body_mb', '0.05')
    c = Client(f'http://127.0.0.1:{port}', TOKEN, patience=60)
    c.json('/health')
    cfg = Config(n_prompts=4, max_len=50)
    task, policy, *_ = build(cfg)
    ok = batch_tensors(task.rollout(policy, cfg, seed=0, generator=torch.Generator().manual_seed(0)))
    task.close()
    yield c, ok, p
    out = stop(p)
    assert p.returncode == 143 and 'Traceback' not in out, out[-3000:]
    assert balanced(final_stats(out))

def post(c, body, headers=None):
    status, data = c.request('POST', '/batch', body) if headers is None else raw(c, 'POST', '/batch', body, headers)
    return status, json.loads(data).get('error', '') if data.startswith(b'{') else data.decode(errors='replace')

def raw(c, method, path, body=None, headers=None):
    import http.client
    conn = http.client.HTTPConnection(c.host, c.port, timeout=30)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for k, v in (headers or {}).items(): conn.putheader(k, v)
        conn.endheaders(body)
        r = conn.getresponse(); return r.status, r.read()
    finally: conn.close()

def submit_valid(c, ok, patience=60.0):
    """A valid batch at the trainer's current version: accepted. It is sampled again while the queue is too full
    for it (409), or while a place is held for a batch that a worker the fuzz invented claims to sample (429)."""
    end = time.monotonic() + patience
    while True:
        status, msg = post(c, pack(ok, meta(c)))
        if status not in (409, 429) or time.monotonic() > end: break
        time.sleep(0.05)
    assert status == 202, (status, msg)

ENDPOINTS = [('GET', '/health'), ('GET', '/stats'), ('GET', '/config'), ('GET', '/weights/latest'),
             ('GET', '/weights/0'), ('POST', '/batch'), ('GET', '/no/such/path'), ('PUT', '/batch'),
             ('DELETE', '/weights/latest')]

@pytest.mark.parametrize('method, path', ENDPOINTS)
def test_auth_on_every_endpoint(served, method, path):
    c, ok, _ = served
    body = pack(ok, meta(c, 0)) if method == 'POST' else None
    for headers, want in [({}, 401), ({'Authorization': 'Bearer wrong-token'}, 403), ({'Authorization': TOKEN}, 403),
                          ({'Authorization': 'Bearer ' + TOKEN[:-1]}, 403)]:
        if body is not None: headers = {**headers, 'Content-Length': str(len(body))}
        status, data = raw(c, method, path, body, headers)
        assert status == want, (method, path, headers, status, data)
        assert ('missing token' if want == 401 else 'wrong token') in json.loads(data)['error']

@pytest.mark.parametrize('query, status', [('worker=w-1', 200), ('worker=a%20b', 400), ('worker=', 400),
                                           ('who=w-1', 400), ('worker=' + 'x' * 65, 400), ('worker=a&x=1', 400)])
def test_health_names_the_asking_worker(served, query, status):
    "/health?worker=NAME answers as that worker's next batch meets the queue; any other query is a 400 naming the form."
    c, _, _ = served
    got, data = c.request('GET', '/health?' + query)
    assert got == status, (query, got, data)
    if status == 400: assert "takes one query, worker=NAME" in json.loads(data)['error']
    else: assert json.loads(data)['senders'] >= 1

def corrupt(body: bytes) -> bytes:
    n = struct.unpack('<Q', body[:8])[0]
    return body[:8] + body[8:8 + n].replace(b'"F32"', b'"Q99"', 1) + body[8 + n:]

def bad_cases(ok, m):
    nan, inf = ok['logp'].clone(), ok['reward'].clone()
    nan[0, 0, 0], inf[1, 0, 0] = math.nan, math.inf
    good = pack(ok, m)
    n = struct.unpack('<Q', good[:8])[0]
    return [
        ('truncated', good[:len(good) // 2], 400, "truncated or corrupt"),
        ('corrupt dtype in header', corrupt(good), 400, "not a valid safetensors file"),
        ('random bytes', secrets.token_bytes(300), 400, "safetensors"),
        ('non-JSON header', struct.pack('<Q', n) + b'\x00not json' + good[17 + 0:8 + n] + good[8 + n:], 400,
         "header is not JSON"),
        ('wrong dtype', pack({**ok, 'act': ok['act'].int()}, m), 400,
         "'act' has dtype torch.int32, expected torch.int64"),
        ('wrong shape', pack({**ok, 'obs': ok['obs'][..., :3]}, m), 400, "'obs' has shape"),
        ('wrong batch size', pack({k: v[:2] for k, v in ok.items()}, m), 400, "has shape [2, 1,"),
        ('NaN', pack({**ok, 'logp': nan}, m), 400, "'logp' holds NaN or inf"),
        ('inf', pack({**ok, 'reward': inf}, m), 400, "'reward' holds NaN or inf"),
        ('unknown tensor', pack({**ok, 'advantage': ok['reward']}, m), 400, "unknown tensor 'advantage'"),
        ('unknown metadata', pack(ok, {**m, 'old_logp': 'sampler'}), 400, "unknown metadata field 'old_logp'"),
        ('no version', pack(ok, {'worker': 'w'}), 400, "'version' must be the non-negative integer"),
        ('version from the future', pack(ok, {**m, 'version': 10 ** 9}), 400, "is from the future"),
        ('action out of range', pack({**ok, 'act': ok['act'] + 7}, m), 400, "actions outside [0, 2)"),
        ('oversized body', pack({**ok, 'obs': torch.zeros(4, 1, 50, 4).repeat(1, 1, 1, 100)}, m), 413,
         "exceeds the limit"),
    ]

def test_malformed_input_gets_4xx_naming_the_problem_then_valid_succeeds(served):
    c, ok, p = served
    for name, body, want_status, want in bad_cases(ok, meta(c, 0)):
        status, msg = post(c, body)
        assert status == want_status and want in msg, (name, status, msg)
        submit_valid(c, ok)
    status, msg = post(c, b'x' * 10, headers={'Authorization': f'Bearer {TOKEN}'})           # no Content-Length
    assert status == 411 and 'Content-Length' in msg, (status, msg)
    status, msg = post(c, None, headers={'Authorization': f'Bearer {TOKEN}', 'Content-Length': str(10 ** 9)})
    assert status == 413 and 'exceeds the limit' in msg
    status, data = c.request('GET', '/weights/abc')
    assert status == 400 and b"'latest' or a number" in data
    submit_valid(c, ok)
    assert p.poll() is None

def test_stale_batch_is_409_saying_how_stale(served):
    c, ok, _ = served
    while version(c) < 3: submit_valid(c, ok)
    v = version(c)
    status, msg = post(c, pack(ok, meta(c, v - 3)))
    assert status == 409 and "versions stale" in msg and "max_staleness is 2" in msg, (status, msg)
    assert f"sampled by version {v - 3}" in msg
    s = c.json('/stats')
    assert s['rejected'] >= 1 and s['queue_max'] <= s['bound'] == 3 and balanced(s)

def fuzz_request(c, ok, data) -> int:
    ("One request drawn by hypothesis (random bytes, a valid batch with bytes changed or cut, odd tensors and "
     "metadata, a path, an Authorization header): the status it got.")
    kind = data.draw(st.sampled_from(['bytes', 'mutate', 'tensors', 'path', 'auth']))
    good = pack(ok, meta(c, 0))
    if kind == 'bytes': status, _ = c.request('POST', '/batch', data.draw(st.binary(max_size=600)))
    elif kind == 'mutate':
        b = bytearray(good)
        for _ in range(data.draw(st.integers(1, 8))):
            i = data.draw(st.integers(0, len(b) - 1)); b[i] = data.draw(st.integers(0, 255))
        cut = data.draw(st.integers(0, len(b)))
        status, _ = c.request('POST', '/batch', bytes(b[:cut]) if data.draw(st.booleans()) else bytes(b))
    elif kind == 'tensors':
        names = data.draw(st.lists(st.sampled_from(['obs', 'act', 'logp', 'reward', 'mask', 'terminated',
                                                    'last_obs', 'x']),
                                   max_size=8, unique=True))
        dtypes = [torch.float32, torch.int64, torch.bool, torch.float16, torch.uint8]
        t = {n: torch.zeros(data.draw(st.lists(st.integers(0, 5), max_size=4))).to(data.draw(st.sampled_from(dtypes)))
             for n in names}
        md = data.draw(st.dictionaries(st.sampled_from(['version', 'worker', 'step', '']),
                                         st.one_of(st.integers(-5, 10 ** 12), st.text(max_size=5), st.none(),
                                                   st.floats()),
                                         max_size=3))
        status, _ = c.request('POST', '/batch', pack({**ok, **t} if data.draw(st.booleans()) else t, md))
    elif kind == 'path':
        path = '/' + data.draw(st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters='#%?'),
                                       max_size=30))
        status, _ = c.request(data.draw(st.sampled_from(['GET', 'POST', 'PUT', 'DELETE'])), path, b'' )
    else:
        h = data.draw(st.sampled_from(['', 'Bearer', 'Bearer ', 'bearer ' + TOKEN, 'Bearer ' + TOKEN + 'x', 'Basic abc',
                                       'Bearer \u00e9']))
        status, _ = raw(c, 'GET', '/health',
                        headers={'Authorization': h.encode('utf-8').decode('latin-1')} if h else {})
    return status

def test_fuzz_no_5xx_then_the_trainer_still_answers(served):
    "2,000 fuzzed requests, none answered 5xx, the trainer alive through them; then a valid batch is accepted."
    c, ok, p = served
    statuses = []

    @settings(max_examples=2000, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def fuzz(data):
        status = fuzz_request(c, ok, data)
        assert status < 500, status
        assert p.poll() is None
        statuses.append(status)

    fuzz()
    assert len(statuses) >= 2000, len(statuses)
    print(f"{len(statuses)} fuzzed requests, statuses {sorted(set(statuses))}")
    submit_valid(c, ok)
    assert c.json('/health')['ok'] and p.poll() is None

@pytest.mark.parametrize('dtype, low, high', [('float32', 0, 1e-6), ('bfloat16', 1e-4, 1.0)])
def test_recompute_is_exact_over_http(tmp_path, dtype, low, high):
    "A worker's fp32 logprobs equal the trainer's recompute under the sampling version; a bf16 worker's do not."
    port = free_port()
    t = trainer(tmp_path, port, '--steps', '8', '--n_prompts', '8', '--max_len', '100', '--max_staleness', '2',
                '--eval_every', '8', '--sampler_dtype', dtype, '--report_to', 'tensorboard')
    w = worker(port)
    out = t.communicate(timeout=240)[0]
    w.communicate(timeout=60)
    assert t.returncode == 0, out[-3000:]
    log = read_log(tmp_path / 't')
    gaps = log['logp_gap'][1:]
    assert len(gaps) == 8 and all(low <= g < high for g in gaps), gaps
    assert all(0 <= lag <= 2 for lag in log['lag'][1:]) and max(log['lag'][1:]) >= 1   # scored under older versions too
    ea = EventAccumulator(str(tmp_path / 't' / 'tensorboard')); ea.Reload()       # the trainer reports the transport
    assert [e.value for e in ea.Scalars('transport/lag')] == log['lag'][1:]

@pytest.mark.parametrize('task', ['countdown', 'countdown_multiturn'])
def test_language_model_async_end_to_end(tmp_path, task):
    ("Countdown on a tiny model, single answers and conversations (longer than max_len): token batches cross the "
     "wire, pass the checks, and are scored under their version.")
    from nanorl.tiny import tiny_model
    model = str(tiny_model('countdown', seed=0, sft_steps=100, progress=False))
    port = free_port()
    t = trainer(tmp_path, port, '--task', task, '--algo', 'grpo', '--group_size', '4', '--n_prompts', '4',
                '--max_len', '16', '--model', model, '--steps', '4', '--eval_every', '4', '--n_eval', '16',
                '--max_staleness', '1')
    w = worker(port)
    out = t.communicate(timeout=300)[0]
    w.communicate(timeout=60)
    assert t.returncode == 0 and w.returncode == 0, out[-3000:]
    assert final_stats(out)['bad_requests'] == 0, out[-3000:]
    log = read_log(tmp_path / 't')
    assert log['step'] == [0, 1, 2, 3, 4] and max(log['logp_gap'][1:]) < 1e-5
    assert all(math.isfinite(v) for v in log['loss'][1:] + log['ratio_max'][1:])

def test_holes_in_the_mask_only_for_conversations():
    "A mask may skip tokens the policy did not write only in a multi-turn task's batch, and never covers padding."
    from nanorl.wire import BadRequest, check_batch
    t = {'obs': torch.tensor([[[5, 6, 7, 8]]]), 'obs_mask': torch.ones(1, 1, 4, dtype=torch.long),
         'act': torch.tensor([[[6, 7, 8]]]), 'logp': torch.full((1, 1, 3), -1.0), 'reward': torch.zeros(1, 1, 3),
         'mask': torch.tensor([[[1.0, 0.0, 1.0]]]), 'terminated': torch.ones(1, 1, dtype=torch.bool),
         'last_obs': torch.zeros(1, 1, 1)}
    spec = {'P': 1, 'G': 1, 'T': 3, 'lm': True, 'n_actions': 10, 'range': {}, 'holes': True}
    m = {'version': 0, 'run': 'r', 'worker': 'w'}
    assert check_batch(t, m, spec).mask.tolist() == [[[1.0, 0.0, 1.0]]]
    with pytest.raises(BadRequest, match=r"obs_mask\[..., -T:\] == mask"): check_batch(t, m, {**spec, 'holes': False})
    padded = {**t, 'obs_mask': torch.tensor([[[1, 1, 1, 0]]])}      # the mask's last 1 sits on padding
    with pytest.raises(BadRequest, match="tensor 'mask' must be 1"): check_batch(padded, m, spec)

def test_worker_killed_mid_generation_trainer_keeps_training(tmp_path):
    port = free_port()
    t = trainer(tmp_path, port, '--steps', '40', '--n_prompts', '16', '--max_len', '500', '--max_staleness', '2',
                '--eval_every', '40')
    a, b = worker(port), worker(port)
    c = Client(f'http://127.0.0.1:{port}', TOKEN, patience=60)
    wait_for(lambda: len(c.json('/stats')['by_worker']) == 2 and version(c) >= 4, what='both workers contributing')
    a.send_signal(signal.SIGKILL); a.wait()
    at_kill = c.json('/stats')
    out = t.communicate(timeout=300)[0]
    b.communicate(timeout=60)
    assert t.returncode == 0, out[-3000:]
    end = final_stats(out)
    assert end['version'] == 40 and end['trained'] == 40 and balanced(end)
    gained = sorted(n - at_kill['by_worker'].get(w, 0) for w, n in end['by_worker'].items())
    # after the kill, the survivor's batches (plus the dead one's queued)
    assert gained[0] <= 3 and gained[-1] >= 40 - at_kill['trained'] - 3, (at_kill, end)
    assert b.returncode == 0

def test_trainer_killed_and_resumed_workers_reconnect(tmp_path):
    port, steps = free_port(), 300        # far more steps than one poll can miss: the kill must land mid-run
    # the resumed trainer keeps the checkpoint's version until max_staleness + 1 newer ones: room for the probe below
    args = ['--steps', str(steps), '--n_prompts', '8', '--max_len', '200', '--max_staleness', '8',
            '--eval_every', str(steps), '--save_every', '5']
    t = trainer(tmp_path, port, *args)
    ws = [worker(port), worker(port)]
    c = Client(f'http://127.0.0.1:{port}', TOKEN, patience=60)
    wait_for(lambda: version(c) >= 12, every=0.02, what='12 steps')
    ck_run = c.json('/health')['run']
    t.send_signal(signal.SIGKILL); t.wait()
    ck = torch.load(tmp_path / 't' / CKPT, weights_only=True)
    s = ck['step']
    assert 10 <= s < steps and s % 5 == 0, s
    t = start('--resume', str(tmp_path / 't'))                       # the same address, from the saved config
    quick = Client(f'http://127.0.0.1:{port}', TOKEN, patience=0)    # polls faster than the workers' backoff
    def probe():
        try: return quick.weights(s)
        except (ConnectionError, OSError): return None
    w, m = wait_for(probe, every=0.02, what='the restarted trainer')
    assert m['version'] == s and m['run'] != ck_run                  # the checkpoint's step, under a new run id
    for k, v in ck['policy'].items(): torch.testing.assert_close(w[k], v, rtol=0, atol=0)
    out = t.communicate(timeout=300)[0]
    assert t.returncode == 0, out[-3000:]
    end = final_stats(out)
    assert end['version'] == steps and end['trained'] == steps - s and balanced(end)
    log = read_log(tmp_path / 't')
    assert log['step'] == list(range(0, steps + 1))
    for p in ws:
        p.communicate(timeout=60)
        assert p.returncode == 0
    assert torch.load(tmp_path / 't' / CKPT, weights_only=True)['step'] == steps

def cartpole_batch(n_prompts, max_len) -> dict:
    cfg = Config(n_prompts=n_prompts, max_len=max_len)
    task, policy, *_ = build(cfg)
    b = task.rollout(policy, cfg, seed=0, generator=torch.Generator().manual_seed(0))
    task.close()
    return batch_tensors(b)

def test_batch_of_a_dead_trainer_is_refused_after_restart(tmp_path):
    ("After a restart the trainer counts versions from its checkpoint again: a batch sampled by the dead trainer's "
     "weights is refused (409, naming the earlier run), never scored under the wrong snapshot.")
    port, ok = free_port(), cartpole_batch(4, 50)
    t = trainer(tmp_path, port, *SMALL, '--steps', '100', '--max_staleness', '2', '--save_every', '5',
                '--eval_every', '100')
    c = Client(f'http://127.0.0.1:{port}', TOKEN, patience=60)
    while version(c) < 6: submit_valid(c, ok)
    old = meta(c, 5)
    t.send_signal(signal.SIGKILL); t.wait()
    t = start('--resume', str(tmp_path / 't'))
    assert version(c) == 5
    status, msg = post(c, pack(ok, old))
    assert status == 409 and f"earlier trainer (run {old['run']})" in msg, (status, msg)
    s = c.json('/stats')
    assert s['trained'] == 0 and s['version'] == 5 and s['run'] != old['run'] and balanced(s)
    submit_valid(c, ok)
    wait_for(lambda: version(c) == 6, what='a step on a valid batch')
    # the step publishes its weights before it writes its row: wait for the row too
    wait_for(lambda: read_log(tmp_path / 't')['step'][-1] == 6, every=0.05, what="step 6's row in the log")
    stop(t)

def test_sigterm_finishes_the_step_and_checkpoints(tmp_path):
    port = free_port()
    t = trainer(tmp_path, port, '--steps', '1000', '--n_prompts', '8', '--max_len', '100', '--max_staleness', '2',
                '--save_every', '1000')
    w = worker(port, '--patience', '3')
    c = Client(f'http://127.0.0.1:{port}', TOKEN, patience=60)
    wait_for(lambda: version(c) >= 5, what='5 steps')
    out = stop(t, signal.SIGTERM)
    assert t.returncode == 143 and 'SIGTERM: finishing this step' in out, out[-3000:]
    assert 'stopped at step' in out.splitlines()[-1] and '(SIGTERM), checkpointed' in out, out[-3000:]
    step = torch.load(tmp_path / 't' / CKPT, weights_only=True)['step']
    assert step >= 5 and read_log(tmp_path / 't')['step'][-1] == step == final_stats(out)['version']
    w.communicate(timeout=60)

def test_load_8_workers_queue_bounded_nothing_lost(tmp_path):
    port = free_port()
    t = trainer(tmp_path, port, '--steps', '100000', '--n_prompts', '4', '--max_len', '100', '--max_staleness', '1',
                '--eval_every', '100000', '--save_every', '100000')
    ws = [worker(port, '--patience', '10') for _ in range(8)]
    c = Client(f'http://127.0.0.1:{port}', TOKEN, patience=60)
    # 8 workers and a trainer start on 2 cores: on a busy machine the last worker's first batch can take minutes
    try: wait_for(lambda: len(c.json('/stats')['by_worker']) == 8, timeout=300, what='a batch of every worker')
    except AssertionError:
        s = c.json('/stats'); stop(t)
        raise AssertionError((s, [stop(w)[-600:] for w in ws])) from None
    t0, depths = time.monotonic(), []
    while time.monotonic() - t0 < 15:
        s = c.json('/stats'); depths.append(s['queue'])
        assert s['queue'] <= s['bound'] == 2 and s['queue_max'] <= 2
        time.sleep(0.25)
    out = stop(t)
    assert t.returncode == 143, out[-3000:]
    end = final_stats(out)
    outs = [p.communicate(timeout=60)[0] for p in ws]
    last = [o.strip().splitlines()[-1] for o in outs]
    assert all('{' in l for l in last), [o[-600:] for o in outs]
    accepted = sum(ast.literal_eval(l[l.rindex('{'):])['accepted'] for l in last)
    assert end['queue_max'] <= 2 and balanced(end)
    # every accepted batch is trained, still queued, or displaced by a worker with a smaller share
    assert accepted == end["trained"] + end["queue"] + end["displaced"] and end["dropped"] == 0, (accepted, end, last)
    assert end['trained'] >= 10 and len(end['by_worker']) == 8, end
    print(f"8 workers, 15 s: {end}")

@pytest.mark.parametrize('args, message', [
    (['--role', 'trainer', '--host', '0.0.0.0'], "refusing to listen on 0.0.0.0 without a token"),
    (['--role', 'rollout'], "role rollout needs the trainer's address"),
    (['--role', 'rollout', '--trainer_url', 'ftp://x'], "trainer_url must look like http://HOST:PORT"),
    (['--max_staleness', '-1'], "max_staleness must be 0 or positive"),
    (['--role', 'boss'], "unknown role 'boss'"),
])
def test_transport_config_errors_are_one_line(args, message, tmp_path):
    p = start(*args, '--out_dir', str(tmp_path), token='')
    out = p.communicate(timeout=120)[0].strip()
    assert p.returncode == 2 and message in out.splitlines()[-1] and 'Traceback' not in out, out[-2000:]
