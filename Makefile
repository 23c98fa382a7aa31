# Two set-up commands: `make demo` and `make test`. Both create .venv from nothing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-test

.PHONY: demo test test-slow charts clean venv prebuilt

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(VENV)/bin/python pyproject.toml
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

# native code every process would otherwise compile on first use, built for this CPU (runtime/prebuilt):
# the runtime's helpers and aot.fft's kernels; skipped when up to date (a few seconds otherwise);
# without cc aot builds them on first use instead
prebuilt: $(STAMP)
	$(PY) -m aot prebuild || echo "make: no prebuilt code; aot builds it on first use"

venv: prebuilt

demo: prebuilt
	$(PY) examples/quickstart.py

# the suite CI runs (slow-marked tests excluded: the 20,000-program fuzz run, full-range ulp scans);
# loadscope: a test module runs on one worker, so its module-scoped JIT fixtures are built once;
# --max-worker-restart=0: a worker that dies ends the run, naming its test (xdist's loadscope
# scheduler can deadlock when it replaces a crashed worker)
test: prebuilt
	$(PY) -m pytest -n 2 --dist loadscope --max-worker-restart=0 -q -m "not slow"

test-slow: prebuilt
	$(PY) -m pytest -n 2 -q -m slow --timeout=1800

# the README's charts and their data (docs/charts): the benchmarks run under BENCH_PY, an environment
# with the contestants installed (torch, numba, numexpr, pyfftw, scipy), e.g. make charts BENCH_PY=~/bench/bin/python
BENCH_PY ?= $(PY)
charts: $(STAMP)
	$(PY) tools/plot_bench.py --run --python $(BENCH_PY) --results docs/charts/data -o docs/charts

clean:
	rm -rf $(VENV) build *.egg-info runtime/prebuilt
