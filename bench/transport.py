"""The async transport, measured: bytes per publish, publish-to-fetch latency, batch submissions per second, async
CartPole against sync.

    python bench/transport.py                         # every part
    python bench/transport.py --parts bytes latency   # some of them: bytes latency submit cartpole fair
    python bench/transport.py --quick                 # CI: every part at the smallest size, in a temporary folder

- bytes: the safetensors body one publish sends, with LoRA (rank 8 on q/k/v/o) and with full weights, for the tiny
  model (chapter 08) and for a ~100M-parameter Qwen2 config built here with random weights (no hub).
- latency: a trainer (`TrainerSource`, serving in this process) publishes a version; a client in another process
  fetches `/weights/latest` and unpacks it. Publish-to-fetch = pack time + fetch time. The physical limit is a plain
  TCP socket sending the same number of bytes between the same two processes; we report the ratio.
- submit: a client process posts the same CartPole batch (16 prompts) to `/batch` in a loop, a thread drains the
  queue; against a plain socket sending the same bytes and waiting for a one-byte reply, one connection per message
  as HTTP/1.0 does.
- cartpole: `configs/cartpole_async.yaml` (a trainer and two workers, three processes on loopback) against the same
  config run synchronously (`--role local`), seeds 0 to 14: environment steps per second and wall time to solve,
  from the trainer's start to its exit.
- fair: chapter 12b's fair shares on a CartPole trainer whose policy stands still (learning rate 1e-9, so every
  window samples alike), each a ratio within one run: a worker beside a second honest sender ten times slower (its
  valid batch every ten of the fast worker's intervals) against the worker alone, at max_staleness 1 and 2; two
  workers at equal speed against a trainer slowed to be the bottleneck (each one's share of the trained batches);
  a worker beside a junk flood (its share); a worker beside stale batches under a made-up name every 2 s (the
  rate against alone). Windows alternate (alone, beside, alone, beside); the ratio is of their medians.

Each timing is the median of several repetitions. Writes bench/results/transport.csv (every measurement) and
bench/results/transport.md (the tables). --quick runs the same code with 1 repetition, 10 submissions, a 100-step SFT
tiny model and a small random Qwen2 in place of the 100M one (latency: its LoRA and the tiny model's full weights),
CartPole seed 0 for 3 steps, and writes to a temporary folder.
"""
import argparse, csv, math, multiprocessing as mp, os, secrets, socket, statistics
import subprocess, sys, tempfile, threading, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import torch
from nanorl.train import TASKS, Config, build, load_yaml, read_log
from nanorl.model import weights_of
from nanorl.serve import Client, TrainerSource
from nanorl.wire import batch_tensors, pack, unpack
sys.path.insert(0, str(ROOT / 'bench'))
from seeds import commit, machine

RESULTS = ROOT / 'bench/results'
ROWS = []

def record(part, what, value, unit):
    ROWS.append({'part': part, 'what': what, 'value': value, 'unit': unit})
    print(f"  {part}: {what} = {value:.4g} {unit}", flush=True)

def free_port():
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]

QWEN2_QUICK = dict(vocab_size=1_000, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                   num_key_value_heads=2)   # --quick: the same architecture, small enough for seconds

def qwen2_100m(lora_rank=0, **dims):
    from transformers import AutoModelForCausalLM, Qwen2Config
    from nanorl.model import add_lora
    cfg = Qwen2Config(**{**dict(vocab_size=32_000, hidden_size=768, intermediate_size=2048, num_hidden_layers=12,
                                num_attention_heads=12, num_key_value_heads=4, tie_word_embeddings=True), **dims})
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg)
    return add_lora(model, lora_rank) if lora_rank else model

def tiny(lora_rank=0, sft_steps=None):
    from nanorl.model import HFPolicy
    from nanorl.tiny import tiny_model
    return HFPolicy.load(str(tiny_model('countdown', 0, progress=False, sft_steps=sft_steps)), lora_rank=lora_rank)

def n_params(m): return sum(p.numel() for p in m.parameters())

# (row, make, payload name)
MODELS = [('tiny (chapter 08)', tiny, 'tiny'), ('Qwen2 ~100M (random weights)', qwen2_100m, '100M')]
QUICK_MODELS = [('tiny (100 SFT steps)', lambda r=0: tiny(r, sft_steps=100), 'tiny'),
                ('Qwen2 small (random weights)', lambda r=0: qwen2_100m(r, **QWEN2_QUICK), 'small Qwen2')]
# --quick: a full-weights and a LoRA publish (each payload spawns 2 clients)
QUICK_LATENCY = ['tiny full', 'small Qwen2 LoRA']

def part_bytes(payloads, models=MODELS):
    lines = ['| model | parameters | bytes per publish, full weights | bytes per publish, LoRA rank 8 | ratio |',
             '|---|---|---|---|---|']
    for name, make, short in models:
        full, lora = make(), make(8)
        b_full, b_lora = len(pack(weights_of(full), {'version': 0})), len(pack(weights_of(lora), {'version': 0}))
        record('bytes', f'{name} full', b_full, 'B'); record('bytes', f'{name} lora8', b_lora, 'B')
        lines.append(f"| {name} | {n_params(full) / 1e6:.1f}M | {b_full / 2**20:,.2f} MiB | "
                     f"{b_lora / 2**20:,.3f} MiB | {b_full / b_lora:,.0f}x |")
        if name.startswith('Qwen2'): payloads.update({f'{short} full': full, f'{short} LoRA': lora})
        else: payloads[f'{short} full'] = full
    return '\n'.join(lines)

# ---- the client side, run in a spawned process so that it does not share the server's interpreter lock

def fetch_loop(url, token, n, q):
    c, times = Client(url, token), []
    for _ in range(n):
        t0 = time.perf_counter(); tensors, meta = c.weights('latest'); times.append(time.perf_counter() - t0)
    q.put(times)

def raw_recv_loop(port, n, q):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        with socket.create_connection(('127.0.0.1', port)) as s:
            s.sendall(b'G')
            size = int.from_bytes(s.recv(8, socket.MSG_WAITALL), 'little')
            buf = bytearray(size); view, got = memoryview(buf), 0
            while got < size: got += s.recv_into(view[got:])
        times.append(time.perf_counter() - t0)
    q.put(times)

def submit_loop(url, token, body_path, n, q):
    c, body = Client(url, token), Path(body_path).read_bytes()
    t0 = time.perf_counter()
    for _ in range(n):
        status, _ = c.request('POST', '/batch', body)
        assert status in (202, 409), status
    q.put(n / (time.perf_counter() - t0))

def raw_send_loop(port, body_path, n, q):
    body = Path(body_path).read_bytes()
    t0 = time.perf_counter()
    for _ in range(n):
        with socket.create_connection(('127.0.0.1', port)) as s:
            s.sendall(len(body).to_bytes(8, 'little') + body); assert s.recv(1) == b'k'
    q.put(n / (time.perf_counter() - t0))

def in_child(target, *args):
    ctx = mp.get_context('spawn')
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, q)); p.start()
    out = q.get(); p.join()
    return out

def raw_server(handle):
    "A plain TCP server on loopback running `handle(conn)` per connection; returns (port, stop)."
    srv = socket.create_server(('127.0.0.1', 0)); srv.settimeout(0.5)
    stop = threading.Event()
    def loop():
        while not stop.is_set():
            try: conn, _ = srv.accept()
            except socket.timeout: continue
            with conn: handle(conn)
        srv.close()
    threading.Thread(target=loop, daemon=True).start()
    return srv.getsockname()[1], stop

def cartpole_trainer(token, port, max_staleness=2, n_prompts=16):
    cfg = Config(role='trainer', port=port, max_staleness=max_staleness, n_prompts=n_prompts, max_len=500,
                 fair_share=0)
    task, policy, *_ = build(cfg)
    return TrainerSource(task, cfg, token), task, policy

def part_latency(payloads, reps):
    token = secrets.token_hex(16)
    lines = ['| payload | bytes | pack (publish) ms | fetch + unpack ms | plain socket ms | fetch / socket | '
             'publish-to-fetch / socket |',
             '|---|---|---|---|---|---|---|']
    for name, model in payloads.items():
        src, task, _ = cartpole_trainer(token, free_port())
        t0 = time.perf_counter(); src.publish(model, 0); t_pack = time.perf_counter() - t0
        body = src.latest[1]
        fetch = statistics.median(in_child(fetch_loop, f'http://127.0.0.1:{src.cfg.port}', token, reps))
        src.stopping = 'bench done'; src.close(); task.close()
        def send(conn):
            conn.recv(1); conn.sendall(len(body).to_bytes(8, 'little')); conn.sendall(body)
        port, stop = raw_server(send)
        raw = statistics.median(in_child(raw_recv_loop, port, reps)); stop.set()
        record('latency', f'{name} pack', t_pack * 1e3, 'ms'); record('latency', f'{name} fetch', fetch * 1e3, 'ms')
        record('latency', f'{name} socket', raw * 1e3, 'ms')
        lines.append(f"| {name} | {len(body) / 2**20:,.2f} MiB | {t_pack * 1e3:,.1f} | {fetch * 1e3:,.1f} | "
                     f"{raw * 1e3:,.1f} | {fetch / raw:.1f}x | {(t_pack + fetch) / raw:.1f}x |")
    return '\n'.join(lines)

def part_submit(n, reps):
    token = secrets.token_hex(16)
    src, task, policy = cartpole_trainer(token, free_port(), max_staleness=2)
    src.publish(policy, 0)
    cfg = src.cfg
    body = pack(batch_tensors(task.rollout(policy, cfg, 0, torch.Generator().manual_seed(0))),
                {'version': 0, 'run': src.run_id, 'worker': 'bench'})
    stop = threading.Event()
    def drain():
        while not stop.is_set():
            with src.cond:
                if src.queue: src.queue.popleft(); src.counts['trained'] += 1
            time.sleep(0.0005)
    threading.Thread(target=drain, daemon=True).start()
    with tempfile.NamedTemporaryFile(suffix='.safetensors', delete=False) as f: f.write(body)
    http = statistics.median(in_child(submit_loop, f'http://127.0.0.1:{cfg.port}', token, f.name, n)
                             for _ in range(reps))
    stats = src.snapshot()
    stop.set(); src.stopping = 'bench done'; src.close(); task.close()
    def recv(conn):
        size = int.from_bytes(conn.recv(8, socket.MSG_WAITALL), 'little')
        buf = bytearray(size); view, got = memoryview(buf), 0
        while got < size: got += conn.recv_into(view[got:])
        conn.sendall(b'k')
    port, stop_raw = raw_server(recv)
    raw = statistics.median(in_child(raw_send_loop, port, f.name, n) for _ in range(reps)); stop_raw.set()
    os.unlink(f.name)
    record('submit', 'http batches/s', http, '1/s'); record('submit', 'socket messages/s', raw, '1/s')
    record('submit', 'batch bytes', len(body), 'B')
    return (f"| transfer of one CartPole batch ({len(body) / 1024:,.0f} KiB, 16 prompts) | per second |\n|---|---|\n"
            f"| `POST /batch` (checked, queued; {stats['rejected']} of {stats['submitted']} answered 409) | "
            f"{http:,.0f} |\n"
            f"| plain socket, same bytes, one-byte reply | {raw:,.0f} |\n| ratio (HTTP / socket) | {http / raw:.2f} |")

def run_proc(args, env):
    return subprocess.Popen([sys.executable, '-m', 'nanorl.train', '--progress', 'false', *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

def cartpole_run(mode, seed, tmp, extra=()):
    env = {**os.environ, 'NANORL_TOKEN': secrets.token_hex(16), 'OMP_NUM_THREADS': '1', 'PYTHONPATH': str(ROOT)}
    name, port = f'{mode}_s{seed}', free_port()
    common = ['--config', 'configs/cartpole_async.yaml', '--seed', str(seed), '--out_dir', tmp, '--name', name, *extra]
    t0 = time.perf_counter()
    if mode == 'sync':
        p = run_proc([*common, '--role', 'local', '--max_staleness', '0'], env); out = p.communicate()[0]; workers = []
    else:
        p = run_proc([*common, '--port', str(port)], env)
        workers = [run_proc(['--role', 'rollout', '--trainer_url', f'http://127.0.0.1:{port}', '--patience', '20'], env)
                   for _ in range(2)]
        out = p.communicate()[0]
    wall = time.perf_counter() - t0
    for w in workers: w.communicate(timeout=60)
    if p.returncode: raise RuntimeError(f"{mode} seed {seed} failed:\n{out[-2000:]}")
    log = read_log(Path(tmp) / name)
    evals = [v for v in log['eval_return'] if not math.isnan(v)]
    row = {'mode': mode, 'seed': seed, 'solved': evals[-1] >= TASKS['cartpole']().solved_at, 'wall_s': wall,
           'steps': int(log['step'][-1]), 'env_steps': int(log['env_steps'][-1]),
           'samples_per_s': log['env_steps'][-1] / log['wall_time'][-1]}
    for k in ('wall_s', 'samples_per_s', 'env_steps'): record('cartpole', f'{mode} seed {seed} {k}', row[k], '')
    return row

def part_cartpole(seeds, extra=()):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            for mode in ('sync', 'async'): rows.append(cartpole_run(mode, seed, tmp, extra))
    med = lambda mode, k: statistics.median(r[k] for r in rows if r['mode'] == mode)
    lines = ['| CartPole, configs/cartpole_async.yaml | sync (1 process) | async (trainer + 2 workers) | '
             'async / sync |',
             '|---|---|---|---|']
    lines.append(f"| solved | {sum(r['solved'] for r in rows if r['mode'] == 'sync')}/{len(seeds)} | "
                 f"{sum(r['solved'] for r in rows if r['mode'] == 'async')}/{len(seeds)} | |")
    for k, label in [('samples_per_s', 'environment steps per second (median)'),
                     ('wall_s', 'wall seconds to solve, process start to exit (median)'),
                     ('env_steps', 'environment steps to solve (median)')]:
        lines.append(f"| {label} | {med('sync', k):,.0f} | {med('async', k):,.0f} | "
                     f"{med('async', k) / med('sync', k):.2f} |")
    return '\n'.join(lines)

def versions_per_s(c: Client, secs: float) -> float:
    v0, t0 = c.json('/health')['version'], time.monotonic()
    time.sleep(secs)
    return (c.json('/health')['version'] - v0) / (time.monotonic() - t0)

def trained_by(c: Client, secs: float) -> dict:
    "Batches trained from each worker during `secs` seconds."
    b0 = c.json('/stats')['by_worker']; time.sleep(secs); b1 = c.json('/stats')['by_worker']
    return {w: n - b0.get(w, 0) for w, n in b1.items()}

class Sender:
    ("A thread posting one valid CartPole batch as `worker` every `every` s, sampled (so it says) by the trainer's "
     "current version, or by `version`; it asks /health as that worker first when it `announces`, as workers do.")
    def __init__(self, c: Client, body: dict, worker: str, every: float, version=None, announces=True):
        self.c, self.body, self.worker, self.every, self.stop = c, body, worker, every, threading.Event()
        self.version, self.answers, self.announces = version, {}, announces
        self.thread = threading.Thread(target=self.loop, daemon=True); self.thread.start()
    def loop(self):
        while not self.stop.is_set():
            h = self.c.json(f'/health?worker={self.worker}' if self.announces else '/health')
            meta = {'version': h['version'] if self.version is None else self.version, 'run': h['run'],
                    'worker': self.worker}
            status = self.c.request('POST', '/batch', pack(self.body, meta))[0]
            self.answers[status] = self.answers.get(status, 0) + 1
            self.stop.wait(self.every)
    def close(self): self.stop.set(); self.thread.join()

class Trainer:
    "`configs/cartpole_async.yaml` as a trainer process that trains until closed, its policy still, and its workers."
    def __init__(self, tmp, env, *extra):
        self.port, self.env = free_port(), env
        self.p = run_proc(['--config', 'configs/cartpole_async.yaml', '--port', str(self.port), '--steps', '10000000',
                           '--eval_every', '10000000', '--save_every', '10000000', '--stop_when_solved', 'false',
                           '--lr', '1e-9', '--idle_timeout', '0', '--out_dir', tmp, '--name', f'fair{self.port}',
                           *extra], env)
        self.c = Client(f'http://127.0.0.1:{self.port}', env['NANORL_TOKEN'], patience=60)
        self.c.json('/health'); self.workers = []
    def worker(self):
        self.workers.append(run_proc(['--role', 'rollout', '--trainer_url', f'http://127.0.0.1:{self.port}',
                                      '--patience', '20'], self.env))
        return self
    def warm(self, versions: int = 5):
        v0 = self.c.json('/health')['version']
        while self.c.json('/health')['version'] < v0 + versions: time.sleep(0.1)
        return self
    def close(self):
        for q in [self.p, *self.workers]: q.terminate()
        for q in [self.p, *self.workers]: q.communicate(timeout=60)

def part_fair(window: float, rounds: int):
    env = {**os.environ, 'NANORL_TOKEN': secrets.token_hex(16), 'OMP_NUM_THREADS': '1', 'PYTHONPATH': str(ROOT)}
    cfg = Config.from_dict({**load_yaml(ROOT / 'configs/cartpole_async.yaml'), 'role': 'local'})
    task, policy, *_ = build(cfg)
    body = batch_tensors(task.rollout(policy, cfg, 0, torch.Generator().manual_seed(0)))
    task.close()
    lines = ['| fair shares (chapter 12b) | alone | beside the other | ratio or share |', '|---|---|---|---|']
    def alternate(t, start, stop):
        alone, beside = [], []
        for _ in range(rounds):
            alone.append(versions_per_s(t.c, window)); extra = start(); beside.append(versions_per_s(t.c, window))
            stop(extra)
        return statistics.median(alone), statistics.median(beside)
    with tempfile.TemporaryDirectory() as tmp:
        for staleness in (1, 2):
            t = Trainer(tmp, env, '--max_staleness', str(staleness)).worker().warm()
            every = 10 / max(versions_per_s(t.c, window), 0.1)     # ten of the fast worker's intervals
            a, b = alternate(t, lambda: Sender(t.c, body, 'slow', every), lambda s: s.close())
            t.close()
            record('fair', f'slow sender beside, max_staleness {staleness}', b / a, 'ratio')
            lines.append(f"| a worker beside an honest sender 10 times slower, max_staleness {staleness} "
                         f"(versions/s) | {a:.2f} | {b:.2f} | {b / a:.2f} |")
        t = Trainer(tmp, env, '--max_staleness', '2', '--epochs', '8').worker().worker().warm()
        by = trained_by(t.c, window * max(rounds, 3)); t.close()
        share = min(by.values()) / max(sum(by.values()), 1)
        record('fair', 'equal workers, the smaller share', share, 'share')
        lines.append(f"| two workers at equal speed, the trainer the bottleneck (trained batches; the smaller "
                     f"share) | | {' and '.join(map(str, sorted(by.values())))} | {share:.2f} |")
        t = Trainer(tmp, env, '--max_staleness', '1').worker().warm()
        junk = {**body, 'act': torch.zeros_like(body['act'])}
        flood = Sender(t.c, junk, 'flooder', 0.0, announces=False)
        by = trained_by(t.c, window * max(rounds, 3)); flood.close(); t.close()
        honest = sum(n for w, n in by.items() if w != 'flooder') / max(sum(by.values()), 1)
        record('fair', 'honest share beside a flood', honest, 'share')
        lines.append(f"| a worker beside a junk flood (its share of the trained batches) | | "
                     f"{sum(by.values())} trained, {flood.answers.get(202, 0)} of the flood's "
                     f"{sum(flood.answers.values())} accepted | {honest:.2f} |")
        t = Trainer(tmp, env, '--max_staleness', '1').worker().warm()
        a, b = alternate(t, lambda: Sender(t.c, body, 'made-up', 2.0, version=0), lambda s: s.close())
        t.close()
        record('fair', 'stale made-up sender beside', b / a, 'ratio')
        lines.append(f"| a worker beside stale batches under a made-up name every 2 s (versions/s) | {a:.2f} | "
                     f"{b:.2f} | {b / a:.2f} |")
    return '\n'.join(lines)

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--parts', nargs='*', default=['bytes', 'latency', 'submit', 'cartpole', 'fair'])
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--submits', type=int, default=300)
    ap.add_argument('--seeds', nargs='*', type=int, default=list(range(15)),
                    help='cartpole: seeds (its steps to solve vary tenfold from run to run, so fifteen of them)')
    ap.add_argument('--window', type=float, default=10.0, help='fair: seconds of each measurement window')
    ap.add_argument('--quick', action='store_true', help='CI smoke run: every part (or --parts) at the smallest size; '
                    'results go to a temporary folder, not bench/results')
    args = ap.parse_args()
    results, models, cartpole_extra = RESULTS, MODELS, []
    if args.quick:
        args.reps, args.submits, args.seeds, models, cartpole_extra = 1, 10, [0], QUICK_MODELS, ['--steps', '3']
        args.window = 2.0
        results = Path(tempfile.mkdtemp(prefix='bench_transport_'))
    torch.set_num_threads(1)
    sections, payloads = [], {}
    if 'bytes' in args.parts or 'latency' in args.parts:
        print("bytes per publish", flush=True)
        sections.append(part_bytes(payloads, models))
    if 'latency' in args.parts:
        print("publish-to-fetch latency", flush=True)
        sections.append(part_latency({k: payloads[k] for k in QUICK_LATENCY} if args.quick else payloads, args.reps))
    if 'submit' in args.parts:
        print("batch submissions", flush=True)
        sections.append(part_submit(args.submits, args.reps))
    if 'cartpole' in args.parts:
        print("async vs sync CartPole", flush=True)
        sections.append(part_cartpole(args.seeds, cartpole_extra))
    if 'fair' in args.parts:
        print("fair shares", flush=True)
        sections.append(part_fair(args.window, 1 if args.quick else args.reps))
    if args.quick:   # every part that ran measured something: finite, positive numbers
        assert {r['part'] for r in ROWS} == set(args.parts) | ({'bytes'} if 'latency' in args.parts else set()), ROWS
        assert all(0 < r['value'] < math.inf for r in ROWS), [r for r in ROWS if not 0 < r['value'] < math.inf]
    suffix = '' if set(args.parts) == {'bytes', 'latency', 'submit', 'cartpole', 'fair'} else '_' + '_'.join(args.parts)
    with open(results / f'transport{suffix}.csv', 'w', newline='') as f:
        w = csv.DictWriter(f, ['part', 'what', 'value', 'unit']); w.writeheader(); w.writerows(ROWS)
    cmd = ('python bench/transport.py' + (f" --parts {' '.join(args.parts)}" if suffix else '')
           + (f" --seeds {' '.join(map(str, args.seeds))}"
              if args.seeds != ap.get_default('seeds') and not args.quick else '')
           + (' --quick' if args.quick else ''))
    (results / f'transport{suffix}.md').write_text('\n\n'.join(sections)
                                                   + f"\n\nMedians of {args.reps} repetitions (CartPole: seeds "
                                                     f"{args.seeds}), loopback, on {machine()}; "
                                                     f"torch on {torch.get_num_threads()} thread(s) here, the runs' "
                                                     f"`threads` from their configs. Measured "
                                                     f"{time.strftime('%Y-%m-%d')} at commit {commit()}; "
                                                     f"produced by `{cmd}`.\n")
    print((results / f'transport{suffix}.md').read_text())
    if args.quick: print(f"(quick mode: results in {results})")

if __name__ == '__main__':
    main()
