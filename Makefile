# Two commands matter: `make demo` (the main job of each package on an embedded default)
# and `make test` (the whole test suite). Both set up .venv on first use and are fast after.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test test-fast lint bench setup clean fast

setup: $(STAMP)

$(STAMP): constraints.txt pactrain/pyproject.toml dticn/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"
	$(PY) -m pip install --quiet -c constraints.txt -e "./pactrain[test,lightning,accelerate,hf]" -e "./dticn[test,ray]" ruff
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/pactrain demo
	$(VENV)/bin/dticn demo

# Each distribution is tested from its own folder (its own pytest configuration); both
# suites always run, and the target fails if either fails.
test: $(STAMP)
	status=0; for pkg in pactrain dticn; do \
	  (cd $$pkg && ../$(PY) -m pytest -q) || status=1; done; exit $$status

test-fast: $(STAMP)
	status=0; for pkg in pactrain dticn; do \
	  (cd $$pkg && ../$(PY) -m pytest -q -m "not slow and not root") || status=1; done; \
	exit $$status

lint: $(STAMP)
	$(VENV)/bin/ruff check .

bench: $(STAMP)
	$(PY) pactrain/benchmarks/run_all.py
	$(PY) dticn/benchmarks/run_all.py

# Optional: dticn with its forwarder hot path compiled by mypyc (dticn/setup.py), in its
# own venv so the pure .venv is never touched (docs/dticn-core.md "Performance"). Then e.g.
# `build/fast-venv/bin/dticn forwarder ...`; `make test` stays the pure build.
FASTVENV ?= build/fast-venv
fast:
	test -x $(FASTVENV)/bin/python || $(PYTHON) -m venv $(FASTVENV)
	$(FASTVENV)/bin/python -m pip install --quiet -c constraints.txt "pip>=24" "setuptools>=77" mypy
	rm -rf dticn/build  # setuptools would ship a stale extension left there
	$(FASTVENV)/bin/python -m pip uninstall --quiet -y dticn  # else the same version is kept
	DTICN_COMPILE=1 $(FASTVENV)/bin/python -m pip install --quiet --no-build-isolation \
	  -c constraints.txt "./dticn[test]"

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
