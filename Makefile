# Every target that runs something does all set-up itself on a fresh machine.
# The first Python 3.11 or later that can make a venv, the distribution's own first: Debian builds CPython with
# profile-guided and link-time optimisation, a pyenv or source build by default without, and the RocketMQ hour
# runs 2-11 % faster on the former (docs/performance.md, RocketMQ, "The interpreter").
PYTHON ?= $(shell for p in /usr/bin/python3.11 python3.11 python3; do \
	  q=$$(command -v $$p) && $$q -c 'import ensurepip, sys; sys.exit(sys.version_info[:2] < (3, 11))' 2>/dev/null \
	  && { echo $$q; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNS ?= runs

.PHONY: install demo test java chromium clean

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo 'make: no Python 3.11 or later with venv support found (set PYTHON=...)'; exit 2; }
	$(PYTHON) -m venv $(VENV)
	@# pip's and setuptools' notices are noise on success; the whole log is shown on a failure
	@$(BIN)/pip install -q --upgrade pip > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@$(BIN)/pip install -q -e '.[test]' >> $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	touch $(STAMP)

java:
	@bash tools/ensure_java.sh

# The report's browser test needs headless Chromium: installed when missing and we are root with apt-get;
# elsewhere it is not an error (that test skips, saying why).
chromium:
	@bash tools/ensure_chromium.sh || true

install: $(STAMP) java

DEMO_SCENARIO ?= avgshedder-homogeneous

# A fresh run directory each time, so an earlier demo is never overwritten.
demo: install
	@run=$(RUNS)/demo-$$(date +%Y%m%d-%H%M%S); \
	$(BIN)/clusteremu run $(DEMO_SCENARIO) --out $$run && \
	PYSPARK_PYTHON=$(abspath $(BIN)/python) $(BIN)/clusteremu analyze $$run && \
	echo "report: $$(cd $$run/analysis && pwd)/report.html"

test: install chromium
	PYSPARK_PYTHON=$(abspath $(BIN)/python) $(BIN)/python -m pytest -q -n 2 --dist loadgroup

clean:
	rm -rf $(VENV) $(RUNS) .pytest_cache
