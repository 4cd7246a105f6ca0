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

test: all lint test-go fuzz

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

test-go:
	$(GO) test -race -count=1 ./...

# A short run of every fuzz target, as a smoke test of the decoders.
FUZZTIME ?= 10s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzOpen$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x ./flowgraph
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeRank$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x ./flowgraph

bench:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

clean:
	rm -rf $(BIN) $(LIBDIR)
