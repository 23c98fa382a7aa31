# Two set-up commands: `make demo` and `make test`. Both create .venv from nothing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-test

.PHONY: demo test test-slow charts clean venv kernels

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(VENV)/bin/python pyproject.toml
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

# the FFT kernels of this CPU, prebuilt (aot/fft/kernels): a first FFT loads them instead of compiling;
# skipped when up to date (a few seconds otherwise); without cc they build on first use instead
kernels: $(STAMP)
	$(PY) -m aot fft-kernels || echo "make: no prebuilt FFT kernels; aot builds them on first use"

venv: kernels

demo: kernels
	$(PY) examples/quickstart.py

# the suite CI runs (slow-marked tests excluded: the 20,000-program fuzz run, full-range ulp scans);
# loadscope: a test module runs on one worker, so its module-scoped JIT fixtures are built once;
# --max-worker-restart=0: a worker that dies ends the run, naming its test (xdist's loadscope
# scheduler can deadlock when it replaces a crashed worker)
test: kernels
	$(PY) -m pytest -n 2 --dist loadscope --max-worker-restart=0 -q -m "not slow"

test-slow: kernels
	$(PY) -m pytest -n 2 -q -m slow --timeout=1800

# the README's charts and their data (docs/charts): the benchmarks run under BENCH_PY, an environment
# with the contestants installed (torch, numba, numexpr, pyfftw, scipy), e.g. make charts BENCH_PY=~/bench/bin/python
BENCH_PY ?= $(PY)
charts: $(STAMP)
	$(PY) tools/plot_bench.py --run --python $(BENCH_PY) --results docs/charts/data -o docs/charts

clean:
	rm -rf $(VENV) build *.egg-info aot/fft/kernels
