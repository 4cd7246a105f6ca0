# mpiflow build. `make` builds the CLI and the interposition libraries.
GO      ?= go
BIN     := bin
LIBDIR  := lib
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

.PHONY: all cli test lint test-go fuzz bench clean
all: cli libs

cli:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN)/mpiflow ./cmd/mpiflow

# The interposition libraries, one per MPI found (see interpose/build.mk).
include interpose/build.mk

# The test applications (testdata/apps), and the demo: the halo app with 4
# ranks under `mpiflow run` (which writes the profile and its HTML report
# to build/demo), then `mpiflow stats` and `mpiflow loops` of the profile.
# Open MPI refuses to run as root without the two variables; with 2 cores,
# 4 ranks need --oversubscribe.
APPDIR       ?= build/apps
MPIRUN       ?= mpirun
MPIRUN_FLAGS ?= --oversubscribe
MPIFC        ?= mpif90
MPICXX       ?= mpicxx
DEMO_ITERS   ?= 500
DEMO_ENV     := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
.PHONY: apps demo
apps:
	@mkdir -p $(APPDIR)
	for s in testdata/apps/*.c; do $(MPICC) -g -O2 -o $(APPDIR)/$$(basename $$s .c) $$s -lm || exit 1; done
	if command -v $(MPICXX) >/dev/null; then for s in testdata/apps/*.cpp; do [ -e "$$s" ] || continue; \
		$(MPICXX) -g -O2 -o $(APPDIR)/$$(basename $$s .cpp) $$s || exit 1; done; fi
	if command -v $(MPIFC) >/dev/null; then for s in testdata/apps/*.f90; do [ -e "$$s" ] || continue; \
		$(MPIFC) -g -O2 -fopenmp -o $(APPDIR)/$$(basename $$s .f90) $$s || exit 1; done; fi

demo: all apps
	@rm -rf build/demo && mkdir -p build/demo
	$(DEMO_ENV) $(BIN)/mpiflow run --dir build/demo -- $(MPIRUN) $(MPIRUN_FLAGS) -np 4 $(APPDIR)/halo $(DEMO_ITERS)
	$(BIN)/mpiflow stats build/demo/*.mpiflow
	$(BIN)/mpiflow loops build/demo/*.mpiflow
	@echo; echo "Open the report: $$(ls build/demo/*.html)"

# Profile size and fidelity on real applications with 2 ranks
# (scripts/bench-size.sh; not part of test or CI): LAMMPS' LJ melt with
# STEPS steps and full traces, HPCC with N=HPCC_N bare and under mpiflow,
# alternately, ROUNDS=n times (default 3): medians of the wall time and of
# MPIRandomAccess's time, and their ratios. Each skips with a message when
# lmp or hpcc is not installed.
STEPS  ?= 3000
HPCC_N ?= 4000
ITERS  ?= 3000 10000 30000
BENCH_SIZE = $(DEMO_ENV) MPIRUN="$(MPIRUN)" MPIRUN_FLAGS="$(MPIRUN_FLAGS)" MPIFLOW_BIN=$(BIN)/mpiflow \
	STEPS=$(STEPS) HPCC_N=$(HPCC_N) ROUNDS="$(ROUNDS)" ITERS="$(ITERS)" scripts/bench-size.sh
.PHONY: bench-lammps bench-hpcc bench-irregular bench-scale screenshots
# PNGs of every report section at 4 and 64 ranks of the halo app for the
# README (docs/screenshots; headless Chromium). Not part of test or CI.
screenshots: all apps
	$(DEMO_ENV) MPIRUN="$(MPIRUN)" MPIRUN_FLAGS="$(MPIRUN_FLAGS)" scripts/screenshots.sh
bench-lammps: all
	$(BENCH_SIZE) lammps
bench-hpcc: all
	$(BENCH_SIZE) hpcc
# testdata/apps/irregular at ITERS iterations: sizes and fidelity.
bench-irregular: all apps
	$(BENCH_SIZE) irregular
# Generated jobs of the HPCC shape at SCALE_RANKS ranks: each command's time
# and peak RSS on one core.
bench-scale: all
	GO="$(GO)" scripts/bench-scale.sh

test: all lint test-go fuzz

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# interpose runs every test program under both MPIs: 550-580 s with -race on
# a 2-core machine, close to go test's default limit of 10 min per package.
test-go:
	$(GO) test -race -count=1 -timeout 30m ./...

# A short run of every fuzz target, as a smoke test of the decoders. The
# budget is a count of executions (about 10 s each here), not a duration:
# Go 1.26's fuzzing coordinator can report "context deadline exceeded" as
# a failure when a duration runs out while a worker is busy (Go issue
# 75804, fixed in Go 1.27); a count has no deadline to race.
FUZZTIME ?= 50000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzOpen$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x ./flowgraph
	$(GO) test -run '^$$' -fuzz '^FuzzOpenValidCRC$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x ./flowgraph
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeRank$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x ./flowgraph
	$(GO) test -run '^$$' -fuzz '^FuzzTiming$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x ./flowgraph
	$(GO) test -run '^$$' -fuzz '^FuzzSeq$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x ./flowgraph
	$(GO) test -run '^$$' -fuzz '^FuzzParsePaje$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x ./importer
	$(GO) test -run '^$$' -fuzz '^FuzzEvents$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x ./importer/otf2
	$(GO) test -run '^$$' -fuzz '^FuzzParseSpec$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x ./aggregate

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

clean:
	rm -rf $(BIN) $(LIBDIR)
