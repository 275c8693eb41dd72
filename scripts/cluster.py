"""Bozka as docs/deployment.md deploys it, on this machine, on loopback:
several gunicorn processes (``deploy/gunicorn.conf.py``) behind nginx
(``deploy/nginx.conf``, with its ports and paths substituted), sharing
PostgreSQL and Redis. Used by tests/multiprocess and scripts/bench/load.py;
also runnable to try the setup by hand:

    eval "$(bash scripts/services.sh start)"
    .venv/bin/python scripts/cluster.py --processes 2 --demo   # serves until Ctrl-C
"""
import argparse
import grp
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
GUNICORN_CONF = os.path.join(ROOT, "deploy", "gunicorn.conf.py")
NGINX_SITE = os.path.join(ROOT, "deploy", "nginx.conf")
MIME_TYPES = "/etc/nginx/mime.types"


def free_port(host="127.0.0.1"):
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def bin_path(name):
    candidate = os.path.join(BIN, name)
    return candidate if os.path.exists(candidate) else shutil.which(name) or name


def nginx_binary():
    return shutil.which("nginx") or "/usr/sbin/nginx"


def server_command(port):
    """The production server command, one process on one port."""
    return [bin_path("gunicorn"), "-c", GUNICORN_CONF, "--bind", f"127.0.0.1:{port}", "wsgi:app"]


def site_config(listen_port, backend_ports, template=None):
    """deploy/nginx.conf with this run's ports and the static folder's path."""
    if template is None:
        with open(NGINX_SITE) as handle:
            template = handle.read()
    lines = "".join(f"    server 127.0.0.1:{port};\n" for port in backend_ports)
    text, count = re.subn(r"(?:[ \t]*server 127\.0\.0\.1:\d+;\n)+", lines, template)
    if count != 2:
        raise ValueError("deploy/nginx.conf: not two upstream blocks of server lines")
    text, count = re.subn(r"listen 80;", f"listen 127.0.0.1:{listen_port};", text)
    if count != 1:
        raise ValueError("deploy/nginx.conf: no 'listen 80;' line")
    return text.replace("/srv/bozka/", ROOT.rstrip("/") + "/")


def worker_user():
    """nginx's ``user`` line, so that its workers run as whoever runs this script.

    Started by root, nginx runs them as nobody, who may not enter the checkout
    (a clone in a 0700 folder: 403 for every static file); started by anyone
    else, nginx runs them as that user already (no line needed)."""
    if os.geteuid() != 0:
        return ""
    user = pwd.getpwuid(os.geteuid())
    return f"user {user.pw_name} {grp.getgrgid(user.pw_gid).gr_name};\n"


def wait_http(url, process=None, log_path=None, timeout=40):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{url}: the server exited ({process.returncode}):\n{tail(log_path)}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status < 500:
                    return
        except urllib.error.HTTPError as exc:
            if exc.code < 500:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout} s:\n{tail(log_path)}")


def tail(path, lines=60):
    if not path or not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8", errors="replace") as handle:
        return "\n".join(handle.read().splitlines()[-lines:])


class Cluster:
    """``processes`` gunicorn processes on one database (and Redis, if given),
    behind nginx when ``nginx`` is true. ``start()`` runs ``flask db upgrade``
    first; ``flask(...)`` runs any command against the same settings."""

    def __init__(self, database_url=None, redis_url=None, processes=2, nginx=True, env=None, workdir=None):
        self.workdir = workdir or tempfile.mkdtemp(prefix="bozka-cluster-")
        self.instance = os.path.join(self.workdir, "instance")
        os.makedirs(self.instance, exist_ok=True)
        self.database_url = database_url or f"sqlite:///{self.instance}/bozka.sqlite3"
        self.redis_url = redis_url
        self.count = processes
        self.use_nginx = nginx
        self.env = {
            **os.environ,
            "BOZKA_ENV": "production",
            "SECRET_KEY": secrets.token_hex(32),
            "BOZKA_INSTANCE": self.instance,
            "DATABASE_URL": self.database_url,
            "FLASK_DEBUG": "0",
            "PYTHONUNBUFFERED": "1",
        }
        for name in ("SOCKETIO_MESSAGE_QUEUE", "RATELIMIT_STORAGE_URI", "MAIL_SERVER", "BOZKA_RANDOM_SEED"):
            self.env.pop(name, None)
        if redis_url:
            self.env["SOCKETIO_MESSAGE_QUEUE"] = redis_url
        if nginx:
            self.env["BOZKA_PROXIES"] = "1"  # the client's address from X-Forwarded-For
        self.env.update(env or {})
        self.servers = []  # (port, Popen, log path)
        self.nginx = None
        self.nginx_port = None

    # Commands -------------------------------------------------------------
    def flask(self, *args, timeout=180):
        command = [bin_path("flask"), "--app", "wsgi", *args]
        done = subprocess.run(command, cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout)
        if done.returncode:
            raise RuntimeError(f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    @property
    def urls(self):
        """Each process's own address (bypassing nginx)."""
        return [f"http://127.0.0.1:{port}" for port, _p, _l in self.servers]

    @property
    def url(self):
        """The site's address: nginx if there is one, else the first process."""
        return f"http://127.0.0.1:{self.nginx_port}" if self.nginx else self.urls[0]

    def server_pids(self):
        """The worker process of each gunicorn (where the work happens)."""
        pids = []
        for _port, process, _log in self.servers:
            try:
                with open(f"/proc/{process.pid}/task/{process.pid}/children") as handle:
                    children = handle.read().split()
            except OSError:
                children = []
            pids.append(int(children[0]) if children else process.pid)
        return pids

    def logs(self, lines=80):
        return {os.path.basename(path): tail(path, lines) for _p, _pr, path in self.servers}

    # Life cycle -----------------------------------------------------------
    def start(self, upgrade=True):
        if upgrade:
            self.flask("db", "upgrade")
        for number in range(self.count):
            port = free_port()
            log_path = os.path.join(self.workdir, f"server-{number + 1}.log")
            with open(log_path, "w") as log:
                process = subprocess.Popen(
                    server_command(port), cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            self.servers.append((port, process, log_path))
        for port, process, log_path in self.servers:
            wait_http(f"http://127.0.0.1:{port}/", process, log_path)
        if self.use_nginx:
            self._start_nginx()
        return self

    def _start_nginx(self):
        self.nginx_port = free_port()
        prefix = os.path.join(self.workdir, "nginx")
        os.makedirs(prefix, exist_ok=True)
        site = os.path.join(prefix, "bozka.conf")
        with open(site, "w") as handle:
            handle.write(site_config(self.nginx_port, [port for port, _p, _l in self.servers]))
        main = os.path.join(prefix, "nginx.conf")
        self.nginx_log = os.path.join(prefix, "error.log")
        with open(main, "w") as handle:
            handle.write(
                "daemon off;\nworker_processes 1;\n"
                + worker_user()
                + f"pid {prefix}/nginx.pid;\nerror_log {self.nginx_log} warn;\n"
                # Idle connections count too: room for a client holding
                # thousands (docs/deployment.md, "One hostile client").
                "events { worker_connections 16384; }\n"
                "http {\n"
                f"  access_log off;\n"
                # Content types of static files, as the distribution's nginx.conf includes them.
                + (f"  include {MIME_TYPES};\n" if os.path.exists(MIME_TYPES) else "")
                + "".join(
                    f"  {kind}_temp_path {prefix}/{kind}-temp;\n"
                    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
                )
                + f"  include {site};\n}}\n"
            )
        command = [nginx_binary(), "-p", prefix, "-c", main, "-e", self.nginx_log]
        check = subprocess.run([*command, "-t"], capture_output=True, text=True)
        if check.returncode:
            raise RuntimeError(f"nginx -t failed:\n{check.stderr}")
        self.nginx = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True
        )
        wait_http(f"http://127.0.0.1:{self.nginx_port}/", self.nginx, self.nginx_log)

    def stop(self):
        if self.nginx is not None:
            _stop(self.nginx, signal.SIGQUIT)
            self.nginx = None
        for _port, process, _log in self.servers:
            # SIGQUIT is gunicorn's quick shutdown: open WebSockets would hold
            # a graceful one for its whole timeout.
            _stop(process, signal.SIGQUIT)
        self.servers = []

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.cleanup()


def _stop(process, sig):
    if process.poll() is None:
        try:
            process.send_signal(sig)
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # its own session: master and workers
            process.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--database-url", default=os.environ.get("BOZKA_TEST_DATABASE_URL"))
    parser.add_argument("--redis-url", default=os.environ.get("BOZKA_TEST_REDIS_URL"))
    parser.add_argument("--demo", action="store_true", help="load the demo campaign and organiser")
    args = parser.parse_args()
    cluster = Cluster(args.database_url, args.redis_url, processes=args.processes)
    try:
        cluster.start()
        if args.demo:
            print(cluster.flask("demo"))
        print(f"Bozka on {cluster.url} (processes: {', '.join(cluster.urls)}); Ctrl-C stops it", flush=True)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        cluster.cleanup()


if __name__ == "__main__":
    main()
