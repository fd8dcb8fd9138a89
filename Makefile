# Every target that runs something does all set-up itself on a fresh machine.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNS ?= runs

.PHONY: install demo test java chromium clean

$(STAMP): pyproject.toml
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
