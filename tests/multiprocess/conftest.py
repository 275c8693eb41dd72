"""Fixtures for the multi-process tests: two gunicorn processes (the
production command, deploy/gunicorn.conf.py) behind nginx (deploy/nginx.conf
with this run's ports), on PostgreSQL with Redis as Socket.IO's message
queue. ``make test`` starts both services (scripts/services.sh) and sets
BOZKA_TEST_DATABASE_URL and BOZKA_TEST_REDIS_URL; without them these tests
are skipped, unless BOZKA_REQUIRE_SERVICES=1 (as in ``make test``), when they
fail instead."""
import os
import shutil
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cluster import Cluster, nginx_binary  # noqa: E402
from databases import scratch_database  # noqa: E402
from helpers import QUIET_SIGNS, write_campaign  # noqa: E402
from scripts.bench.harness import opening_args  # noqa: E402

INTERVAL = 0.5  # seconds between ranking broadcasts


def required_services():
    database = os.environ.get("BOZKA_TEST_DATABASE_URL", "")
    redis_url = os.environ.get("BOZKA_TEST_REDIS_URL", "")
    missing = []
    if not database.startswith("postgresql"):
        missing.append("BOZKA_TEST_DATABASE_URL (PostgreSQL)")
    if not redis_url.startswith("redis"):
        missing.append("BOZKA_TEST_REDIS_URL")
    if not (shutil.which("nginx") or os.path.exists(nginx_binary())):
        missing.append("nginx")
    if missing:
        message = f"needs {', '.join(missing)}: run `eval \"$(bash scripts/services.sh start)\"` first"
        if os.environ.get("BOZKA_REQUIRE_SERVICES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return database, redis_url


@pytest.fixture(scope="session")
def redis_url():
    return required_services()[1]


def running_cluster(tmp_path_factory, name, sentences):
    """Two server processes behind nginx on a scratch database, with a test
    campaign of ``sentences`` imported; cleaned up afterwards."""
    _database, redis_url = required_services()
    import redis

    connection = redis.Redis.from_url(redis_url)
    connection.flushdb()  # change versions of earlier runs
    folder = tmp_path_factory.mktemp(name)
    with scratch_database(folder, f"bozka_{name}") as url:
        cluster = Cluster(url, redis_url, processes=2, env={"BOZKA_BROADCAST_INTERVAL": str(INTERVAL),
                                                              "BOZKA_PUBLIC_FIGURES_SECONDS": "0"})
        try:
            cluster.start()
            campaign = write_campaign(
                str(folder / "campaign"), sentences=sentences, systems=("A", "B", "C"), controls=20,
                judgments_per_pair=3, **QUIET_SIGNS,  # the clients answer at once
            )
            cluster.flask("campaign", "import", campaign, *opening_args())
            yield cluster
        finally:
            cluster.cleanup()
            connection.flushdb()
            connection.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from running_cluster(tmp_path_factory, "multiprocess", sentences=30)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    running = item.funcargs.get("cluster") if hasattr(item, "funcargs") else None
    if report.failed and running is not None:
        for name, text in running.logs().items():
            report.sections.append((f"{name} (last lines)", text))
