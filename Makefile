# xp's build. Every target does its own set-up: `make test` on a fresh
# Debian/Ubuntu machine installs libtorch, compiles the binding and runs
# the whole suite. See docs/build.md.
#
#   make quickstart   the main job (quick-start run)
#   make test         the whole test suite (CI runs exactly this)
#   make torch        only prepare the libtorch binding (cached)
#
# Variables: XP_DATA=DIR (data root), LIBTORCH=DIR (an unpacked libtorch or .../site-packages/torch;
# default: Debian's libtorch-dev), XP_CUDA=auto|on|off, CXX, XP_CXXFLAGS.

GO    ?= go
BIN   := bin/xp

# The data root: real datasets and embeddings (see docs/data.md). Tests that
# need it skip, saying so, when it is unset. Default: ../shared/data beside
# the clone, where this project's machines and CI keep it.
XP_DATA ?= $(if $(wildcard ../shared/data),$(abspath ../shared/data),)
export XP_DATA

# libtorch's OpenMP workers sleep when idle instead of spinning against
# OpenBLAS's threads (2.9× faster training on 2 cores; docs/models.md).
# bin/xp sets this itself; the tests and benchmarks get it here.
OMP_WAIT_POLICY ?= passive
export OMP_WAIT_POLICY

# Files tests keep for a person to look at (the report page's screenshot,
# TestReportInBrowser), under the build folder.
XP_ARTIFACTS ?= $(CURDIR)/build/artifacts
export XP_ARTIFACTS

.PHONY: all setup setup-build torch build test fuzz quickstart doctor clean bench-pytorch bench-bert paper paper-tables paper-quick docs

all: build

# What the build needs (a C++ compiler, libtorch, OpenBLAS); setup adds
# what only the tests use (Slurm, Chromium).
setup-build:
	@./scripts/setup.sh build

setup: setup-build
	@./scripts/setup.sh

torch: setup-build
	@GOWORK=off $(GO) run ./tools/torchbuild

# -buildvcs=true: the commit (and whether the tree had changes) is stamped
# into the binary, and every record it writes names it; go.work (written by
# make torch) would otherwise leave it out. Outside a git checkout, none.
build: torch
	$(GO) build $$(git rev-parse --git-dir >/dev/null 2>&1 && echo -buildvcs=true) -o $(BIN) ./cmd/xp

# The suite runs through gotestsum, which ends with every skipped test and
# its reason: a test that did not run on this machine says so in
# `make test`'s output; then the ten slowest tests. TEST_TIMEOUT bounds
# each package: no package takes 3 minutes on 2 quiet cores, so the bound
# leaves room for a machine several times as busy (Go's default, 10
# minutes, failed the runner package under load).
GOTESTSUM := v1.13.0
TEST_TIMEOUT ?= 30m

test: setup torch
	@files=$$(git ls-files '*.go' 2>/dev/null); test -z "$$files" || { \
		unformatted=$$("$$($(GO) env GOROOT)/bin/gofmt" -l $$files); \
		test -z "$$unformatted" || { echo "gofmt -w needed: $$unformatted"; exit 1; }; }
	$(GO) vet ./...
	GOWORK=off GOBIN=$(CURDIR)/build/bin $(GO) install gotest.tools/gotestsum@$(GOTESTSUM)
	@status=0; build/bin/gotestsum --format pkgname --format-hide-empty-pkg --jsonfile build/test.json -- -timeout $(TEST_TIMEOUT) ./... || status=$$?; \
		echo "== the ten slowest tests"; build/bin/gotestsum tool slowest --jsonfile build/test.json --threshold 0s | awk '$$2 !~ /\//' | head -10; \
		exit $$status

# The fuzz tests of every parser of a user's file (config, vectors, tables,
# records, archives, a transformer checkpoint's files) and of the terminal door, each for FUZZTIME (default 1m) beyond the seed corpus that
# `make test` runs; what one finds is kept under the package's
# testdata/fuzz and replays in `make test` from then on.
FUZZTIME ?= 1m
FUZZ_TARGETS := ./experiments:FuzzParse ./datasets:FuzzReadTable ./datasets/embedding:FuzzParseText ./datasets/embedding:FuzzParseBinary ./results:FuzzRecord ./datasets/catalog:FuzzUnpack ./hf:FuzzSafetensors ./hf:FuzzReadConfig ./hf:FuzzWordPiece ./hf:FuzzTokenizerJSON ./hf:FuzzByteBPE ./internal/jsondup:FuzzFirst ./internal/show:FuzzWriter
fuzz:
	@for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name ($$pkg, $(FUZZTIME))"; \
		$(GO) test $$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

# The main job: the quick-start experiment on real data (SST-2 from the data
# root, Laplace at three ε, train- and test-time, with the baseline).
# Resumable: run it again and finished cells are reused.
quickstart: build
	@test -n "$(XP_DATA)" || { echo "quickstart: no data root: set XP_DATA (docs/data.md; bin/xp data get sst2 fasttext-xpcorpus-300d -mirror DIR fetches what it needs)"; exit 1; }
	$(BIN) run configs/sst2_quickstart.yaml

# xp's biLSTM training against the same model in PyTorch, side by side
# (docs/models.md). Installs Debian's python3-torch when missing.
bench-pytorch: torch
	@./scripts/setup.sh pytorch
	$(GO) test ./models -run '^$$' -bench TrainVsPyTorch -benchtime 1x -timeout 60m -v

# xp's BERT fine-tuning step against PyTorch's on the same shapes
# (bench/pytorch_bert.py): a few minutes on 2 cores.
bench-bert: torch
	@./scripts/setup.sh pytorch
	$(GO) test ./models -run '^$$' -bench BertStepVsPyTorch -benchtime 1x -timeout 60m -v

doctor: build
	$(BIN) doctor

clean:
	rm -rf build bin go.work go.work.sum

# The founding papers' runs (configs/published.yaml names each: a config of
# configs/paper with its overrides) into records/paper, the records the
# repository keeps — resumable: a run whose records are there is read, not
# rerun —, then the documents. A run whose data the root lacks (QNLI's
# train split) fails alone and is listed at the end.
paper: build
	@test -n "$(XP_DATA)" || { echo "paper: no data root: set XP_DATA"; exit 1; }
	@$(BIN) paper run -q; status=$$?; $(MAKE) --no-print-directory paper-tables; exit $$status

# docs/reproduction.md's generated blocks and docs/reproduction.html from
# the records in records/paper alone: runs nothing, needs neither libtorch
# nor the data root (TestPaperDocs fails when the committed documents
# differ from what this writes).
paper-tables:
	$(GO) run ./tools/papertables

# Every generated document: docs/config.md's parameter tables (from spec's
# descriptors), docs/errors.md (from the messages xp gives) and the
# reproduction documents (from the records).
docs: torch
	XP_UPDATE_DOCS=1 $(GO) test ./spec -run TestDocsMatchDescriptors
	XP_UPDATE_DOCS=1 $(GO) test ./cmd/xp -run TestErrorMessages
	$(GO) run ./tools/papertables

# A quick look at every item: each config with the overrides of its
# "# Quick look:" line (TestPaperConfigs checks they apply and reduce), into
# runs/paper-quick/<config>; minutes per item, and `time` says how many.
# docs/reproduction.md is not touched (its blocks read the full runs).
paper-quick: build
	@test -n "$(XP_DATA)" || { echo "paper-quick: no data root: set XP_DATA"; exit 1; }
	@set -f; failed=""; for f in configs/paper/*.yaml; do \
		n=$$(basename $$f .yaml); sets=$$(sed -n 's/^# Quick look[^:]*: //p' $$f); \
		echo "== $$f $$sets"; start=$$(date +%s); \
		$(BIN) run -q $$f $$sets --set output=runs/paper-quick/$$n || failed="$$failed $$f"; \
		echo "$$n: $$(( $$(date +%s) - start )) s"; \
	done; \
	test -z "$$failed" || { echo "paper-quick: failed:$$failed"; exit 1; }
