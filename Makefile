# Bozka: `make run` starts the site with a demo campaign; `make test` runs every test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
FLASK := $(BIN)/flask --app wsgi
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
# Where `make run` serves: `make run PORT=8080`, `make run HOST=0.0.0.0` (every
# interface). Set on the command line only: a HOST or PORT in the environment is not read.
HOST = 127.0.0.1
PORT = 5000

.PHONY: run test install install-test lock audit catalogues chromium axe vendor db demo bench clean

# Every package comes from a lock file, pinned with its hashes (pip refuses a
# file whose hash differs). pip, setuptools and wheel first, from their own
# lock; PyICU, the one source distribution, is then built against those
# (--no-build-isolation), so no build tool is fetched unchecked.
$(STAMP): requirements-build.lock requirements.lock
	bash scripts/install-icu.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes -r requirements-build.lock
	$(BIN)/pip install --quiet --require-hashes --no-build-isolation -r requirements.lock
	touch $(STAMP)

# Test, benchmark and dependency tools, beside the runtime (not for `make run`).
$(TEST_STAMP): $(STAMP) requirements-test.lock
	$(BIN)/pip install --quiet --require-hashes -r requirements-test.lock
	touch $(TEST_STAMP)

install: $(STAMP)
install-test: $(TEST_STAMP)

# Regenerate the locks from requirements*.txt with pip-tools (PyPI's hashes).
lock: $(TEST_STAMP)
	bash scripts/lock.sh $(BIN)/pip-compile

# Known vulnerabilities in every locked package; says plainly if the advisory
# data cannot be reached (and then exits 0: nothing was checked).
audit: $(TEST_STAMP)
	PIP_AUDIT=$(BIN)/pip-audit bash scripts/audit.sh

# Compiled message catalogues are built here, never committed.
catalogues: install
	$(FLASK) translate compile

db: catalogues
	$(FLASK) db upgrade

demo: db
	$(FLASK) demo --url http://$(HOST):$(PORT)

# One gevent worker with WebSocket support, as Flask-SocketIO's documentation
# prefers; room for 4,000 open connections (every volunteer's page keeps a
# WebSocket open; gunicorn's default of 1,000 stops accepting at 1,000).
# app/worker.py bounds them: 1,000 per address, a request's head within 10 s
# (BOZKA_CONNECTIONS_PER_ADDRESS, BOZKA_HEAD_TIMEOUT; docs/security.md).
# The tests and benchmarks run this very line (scripts/bench/harness.py).
run: demo
	$(BIN)/gunicorn --worker-class app.worker.BoundedWorker --workers 1 --worker-connections 4000 --bind $(HOST):$(PORT) --access-logfile - wsgi:app

chromium:
	bash scripts/install-chromium.sh
	bash scripts/install-fonts.sh

# axe-core (npm, pinned in package-lock.json) for the accessibility test.
axe: node_modules/axe-core/axe.min.js
node_modules/axe-core/axe.min.js: package.json package-lock.json
	bash scripts/install-npm.sh
	npm ci --no-audit --no-fund
	touch $@

# Chart.js (npm, pinned in package.json) draws the dashboard's charts. The site
# serves the copy committed in static/js/vendor/ (no node_modules in
# production); after a new pin, this copies it there again.
vendor: axe
	cp node_modules/chart.js/dist/chart.umd.min.js static/js/vendor/chart.umd.min.js
	cp node_modules/chart.js/LICENSE.md static/js/vendor/chart.LICENSE

# Every test on SQLite; then again on PostgreSQL, with the multi-process
# tests (two servers behind nginx, Redis): scripts/services.sh installs,
# starts and afterwards stops PostgreSQL and Redis (tests/stats use no database).
test: catalogues install-test chromium axe
	$(BIN)/python -m pytest -q -p no:cacheprovider tests --ignore=tests/multiprocess
	BOZKA_REQUIRE_SERVICES=1 bash scripts/services.sh run $(BIN)/python -m pytest -q -p no:cacheprovider tests --ignore=tests/stats

bench: install-test
	$(BIN)/python scripts/bench/bench_judging.py

clean:
	rm -rf $(VENV) instance node_modules
