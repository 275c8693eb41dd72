"""What the benchmarks share: serve Bozka as ``make run`` does, make
volunteers, drive them, time, print a table. Only 127.0.0.1 is used.

A scenario script typically does::

    with scratch() as workdir:
        env, database = bozka_instance(workdir, sentences=2000)
        with Server(env, workdir) as server:
            volunteers = register(server.url, 8, "v")
            figures = drive(server, volunteers, warmup=2, duration=8)
        table(["judgments/s", "p95 ms"], [[figures["per_second"], figures["p95"]]])
"""
import contextlib
import json
import os
import re
import resource
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[1:1] = [] if ROOT in sys.path else [ROOT]  # the scenarios import the app's services
SLUG = "test"
PASSWORD = "correct horse 1"
CONTROLS = {f"Control {i}.": f"Good {i}." for i in range(1, 21)}  # source -> better, as write_campaign makes them


def log(message):
    print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def scratch():
    """A temporary folder, removed afterwards unless something failed (its server logs are there)."""
    folder = tempfile.mkdtemp(prefix="bozka-bench-")
    try:
        yield folder
    except BaseException:
        log(f"kept {folder}")
        raise
    shutil.rmtree(folder, ignore_errors=True)


def bin_path(name):
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    return candidate if os.path.exists(candidate) else shutil.which(name) or name


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def cpu_seconds(pid):
    """User + system CPU seconds of a process, from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy(seconds=1.0):
    """Share of the machine busy over ``seconds`` (say it before a run: figures on a busy machine are low)."""
    def read():
        with open("/proc/stat") as handle:
            values = [int(v) for v in handle.readline().split()[1:]]
        return sum(values) - values[3] - values[4], sum(values)  # all but idle and I/O wait; all

    busy0, total0 = read()
    time.sleep(seconds)
    busy1, total1 = read()
    return 100 * (busy1 - busy0) / max(1, total1 - total0)


def percentile(ordered, p):
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def make_run_command(port, app="wsgi:app"):
    """The gunicorn command of the Makefile's ``run`` target, on ``port``, serving ``app``."""
    with open(os.path.join(ROOT, "Makefile")) as handle:
        target = re.search(r"^run:.*\n((?:\t.*\n?)+)", handle.read(), re.MULTILINE).group(1)
    line = next(line for line in target.splitlines() if "gunicorn" in line)
    command = shlex.split(line.strip())
    command[0] = bin_path("gunicorn")
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    command[-1] = app
    return command


class Server:
    """``make run``'s gunicorn on a free port; ``worker_pid`` is its one worker."""

    def __init__(self, env, workdir, app="wsgi:app", cwd=ROOT, name="bozka"):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = make_run_command(self.port, app)
        self.log_path = os.path.join(workdir, f"{name}-gunicorn.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(self.command, cwd=cwd, env=env, stdout=self.log,
                                        stderr=subprocess.STDOUT, preexec_fn=raise_fd_limit)
        self.worker_pid = None
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited; see {self.log_path}")
            try:
                with open(f"/proc/{self.process.pid}/task/{self.process.pid}/children") as handle:
                    children = handle.read().split()
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    pass
            except OSError:
                children = None
            if children:
                self.worker_pid = int(children[0])
                return
            time.sleep(0.1)
        raise RuntimeError(f"the server did not start in {timeout} s; see {self.log_path}")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def answer_for(item, rng):
    """What a simulated volunteer sends for ``item``: a control (known by its source text) answered
    correctly, a test item at random; a DA item (it has a ``translation``) scored 50-100 as the system
    wrote it, 0-40 when words are missing (a bad reference), so the live rule lets the volunteer be;
    an ESA item (it has ``previous``) with its first word marked a minor error one time in two."""
    if "previous" in item:
        spans = [{"start": 0, "end": len(item["translation"].split()[0]), "severity": "minor"}] * rng.randint(0, 1)
        return {"score": rng.randint(50, 100), "spans": json.dumps(spans)}
    if "translation" in item:
        whole = re.fullmatch(r"Output \d+ of \w+\.", item["translation"])
        return {"score": rng.randint(50, 100) if whole else rng.randint(0, 40)}
    from players import better_of  # a generated control too (issue 28): the side that is the system's own output

    better = better_of(item, CONTROLS)
    if better is None:
        return {"choice": rng.choices(("left", "right", "equal"), (45, 45, 10))[0]}
    return {"choice": "left" if item["left"] == better else "right"}


DOCUMENT_SENTENCES = 5  # an ESA campaign's documents


def write_campaign(folder, sentences, systems=("A", "B", "C", "D", "E"), protocol="pairwise"):
    """A campaign folder (docs/campaign-format.md) with generated texts and the 20 CONTROLS
    (which a DA campaign does not use); an ESA campaign's sentences in documents of five."""
    os.makedirs(os.path.join(folder, "systems"), exist_ok=True)
    files = {"source.txt": [f"Source sentence number {i}." for i in range(1, sentences + 1)],
             "controls.tsv": ["source\tbetter\tworse"] + [f"Control {i}.\tGood {i}.\tBad {i}." for i in range(1, 21)]}
    for name in systems:
        files[f"systems/{name}.txt"] = [f"Output {i} of {name}." for i in range(1, sentences + 1)]
    if protocol == "esa":
        files["documents.tsv"] = [f"document-{(i - 1) // DOCUMENT_SENTENCES}" for i in range(1, sentences + 1)]
    for name, lines in files.items():
        with open(os.path.join(folder, name), "w") as handle:
            handle.write("\n".join(lines) + "\n")
    with open(os.path.join(folder, "campaign.toml"), "w") as handle:
        handle.write(f'slug = "{SLUG}"\nname = "Benchmark"\nsource_language = "en"\ntarget_language = "eu"\n'
                     'source = "source.txt"\n'
                     + ('controls = "controls.tsv"\n' if protocol == "pairwise" else f'protocol = "{protocol}"\n')
                     + ('documents = "documents.tsv"\n' if protocol == "esa" else "")
                     + "[systems]\n"
                     + "".join(f'{name} = "systems/{name}.txt"\n' for name in systems))
    return folder


def flask(args, env):
    """``flask --app wsgi ARGS`` in the project folder; its output."""
    done = subprocess.run([bin_path("flask"), "--app", "wsgi", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
    if done.returncode:
        raise RuntimeError(f"flask {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout.strip()


def bozka_env(instance, **settings):
    """The environment of a fresh instance on SQLite: this machine's variables without a database or queue."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "SOCKETIO_MESSAGE_QUEUE", "BOZKA_RANDOM_SEED", "MAIL_SERVER")}
    return dict(env, BOZKA_INSTANCE=instance, SECRET_KEY=secrets.token_hex(16), PYTHONPATH=ROOT, **settings)


def opening_args(days=30):
    """``flask campaign import``'s options that open the campaign at once,
    its raffle committed in the same step (a benchmark never draws it)."""
    ends_at = datetime.utcnow().replace(microsecond=0) + timedelta(days=days)
    return ["--open", "--ends-at", ends_at.isoformat(), "--beacon", "none: a benchmark's raffle is never drawn",
            "--beacon-at", (ends_at + timedelta(hours=1)).isoformat()]


def bozka_instance(workdir, sentences, protocol="pairwise", **settings):
    """A fresh SQLite instance (migrations, then the generated campaign): (environment, database file)."""
    instance = os.path.join(workdir, "instance")
    env = bozka_env(instance, **settings)
    flask(["db", "upgrade"], env)
    folder = write_campaign(os.path.join(workdir, "campaign"), sentences, protocol=protocol)
    log(f"  {flask(['campaign', 'import', folder, *opening_args()], env)}")
    return env, os.path.join(instance, "bozka.sqlite3")


def csrf_from(html):
    match = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html) or re.search(
        r'value="([^"]+)"[^>]*name="csrf_token"', html)
    if match is None:
        raise RuntimeError("no csrf_token input on the page")
    return match.group(1)


def _volunteer(session, base, name):
    """{name, cookie, csrf} of a logged-in session (the API takes the CSRF token in a header)."""
    page = session.get(f"{base}/c/{SLUG}/welcome", timeout=30)
    page.raise_for_status()
    return {"name": name, "cookie": f"session={session.cookies.get('session')}", "csrf": csrf_from(page.text)}


def register(base, count, prefix):
    """``count`` volunteers registered through /c/<slug>/register (the rate limit must be off for many)."""
    import requests

    volunteers = []
    for number in range(1, count + 1):
        name = f"{prefix}{number:04d}"
        session = requests.Session()
        page = session.get(f"{base}/c/{SLUG}/register", timeout=30)
        response = session.post(f"{base}/c/{SLUG}/register", allow_redirects=False, timeout=30, data={
            "csrf_token": csrf_from(page.text), "username": name, "email": f"{name}@bench.example.org",
            "password": PASSWORD, "password2": PASSWORD, "age_group": "26-35", "studies_level": "university",
            "studies_field": "language", "source_level": "C1-C2", "target_level": "C1-C2", "consent": "y"})
        if response.status_code != 302:
            raise RuntimeError(f"registering {name}: HTTP {response.status_code} (rate limit? form change?)")
        volunteers.append(_volunteer(session, base, name))
    return volunteers


def signed_in(base, email):
    """A ``requests`` session of an existing account (``email``, PASSWORD) logged in through /login."""
    import requests

    session = requests.Session()
    page = session.get(f"{base}/login", timeout=30)
    response = session.post(f"{base}/login", allow_redirects=False, timeout=30, data={
        "csrf_token": csrf_from(page.text), "email": email, "password": PASSWORD})
    if response.status_code != 302:
        raise RuntimeError(f"logging in {email}: HTTP {response.status_code}")
    return session


def login(base, name):
    """An existing volunteer (``name``@bench.example.org, PASSWORD) logged in through /login."""
    return _volunteer(signed_in(base, f"{name}@bench.example.org"), base, name)


def drive(server, volunteers, warmup, duration, rate=None, seed=1, until=None):
    """Volunteers judging over HTTP (client.py, a process of its own) for ``warmup`` + ``duration`` seconds,
    or less if the file ``until`` appears (checked every 0.5 s: the window ends when something else has).

    Closed loop (no think time), or ``rate`` judgments per second in all. Returns the judgments as the
    client saw them and the window's figures: judgments acknowledged per second, latency percentiles
    in ms, the server worker's CPU and largest RSS.
    """
    job = {"host": "127.0.0.1", "port": server.port, "slug": SLUG, "volunteers": volunteers, "controls": CONTROLS,
           "warmup": warmup, "duration": duration, "rate": rate, "seed": seed, "server_pid": server.worker_pid,
           "until": until}
    done = subprocess.run([sys.executable, os.path.join(HERE, "client.py")], input=json.dumps(job),
                          capture_output=True, text=True, timeout=warmup + duration + 180)
    if done.returncode:
        raise RuntimeError(f"the client failed:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout)
    start, end = result["window"]
    acknowledged = [j for j in result["judgments"] if j[2] in ("accepted", "dismissed")]  # both store the answer
    latencies = sorted(1000 * (j[1] - j[0]) for j in acknowledged if start <= j[1] <= end)
    per_second = len(latencies) / (end - start)
    statuses = {}
    for j in result["judgments"]:
        statuses[j[2]] = statuses.get(j[2], 0) + 1
    result.update(
        per_second=per_second, statuses=statuses, tokens=[j[4] for j in acknowledged],
        p50=percentile(latencies, 50), p95=percentile(latencies, 95), p99=percentile(latencies, 99),
        cpu_percent=100 * result["server_cpu"] / (end - start),
        cpu_ms_per_judgment=1000 * result["server_cpu"] / len(latencies) if latencies else None,
    )
    return result


def stored_once(database_url, tokens, earlier=()):
    """How many of the acknowledged judgments (their items' tokens) the database holds exactly once,
    and how many answers it holds that were never acknowledged (``earlier``: tokens acknowledged by
    an earlier run on the same database, not counted)."""
    from collections import Counter

    from sqlalchemy import create_engine, text

    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            stored = Counter(connection.scalars(text("SELECT token FROM items WHERE answered_at IS NOT NULL")))
    finally:
        engine.dispose()
    acknowledged = Counter(tokens)
    earlier = set(earlier)
    return {"acknowledged": len(tokens),
            "once": sum(1 for token, n in acknowledged.items() if n == 1 and stored[token] == 1),
            "unacknowledged": sum(n for token, n in stored.items() if token not in acknowledged and token not in earlier)}


def fmt(value, digits=0):
    return "-" if value is None else f"{value:,.{digits}f}"


def markdown(header, rows):
    """A Markdown table as text; every column but the first right-aligned."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if n else "---" for n in range(len(header))) + "|"]
    return "\n".join(lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]) + "\n"


def table(header, rows):
    """Print a Markdown table; numbers right-aligned."""
    print(markdown(header, rows))
