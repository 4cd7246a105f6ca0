# Owned by the interposer: targets that build $(LIBDIR)/libmpiflow-*.so.
#
# lib/libmpiflow-openmpi.so  the LD_PRELOAD library: plain C (wrappers
#                            generated from interpose/gen/mpi.spec, the
#                            recorder), built against the Open MPI found by
#                            mpicc --showme.
# lib/libmpiflow-mpich.so    the same, built against MPICH (mpicc.mpich
#                            -show), when MPICH is installed.
# lib/libmpiflow-go.so       the Go part (c-shared, no MPI headers), loaded
#                            by the preload library only at MPI_Finalize.
MPICC        ?= mpicc
CC           ?= cc
OMPI_VERSION := $(shell $(MPICC) --showme:version 2>/dev/null)
OMPI_CFLAGS  := $(if $(OMPI_VERSION),$(shell $(MPICC) --showme:compile))
OMPI_LDFLAGS := $(if $(OMPI_VERSION),$(shell $(MPICC) --showme:link))
MPICH_CC     ?= mpicc.mpich
MPICH_SHOW   := $(shell $(MPICH_CC) -show 2>/dev/null)
MPICH_CFLAGS := $(filter -I% -D%,$(MPICH_SHOW))
MPICH_LDFLAGS:= $(filter -L% -l% -Wl%,$(MPICH_SHOW))
MF_CFLAGS    := -O2 -g -std=gnu11 -fPIC -fvisibility=hidden -Wall -Wextra -Wno-unused-parameter
MF_REC_SRC   := $(addprefix interpose/csrc/,recorder.c tables.c seq.c settle.c tight.c trace.c timing.c tmenc.c)
MF_SRC       := $(MF_REC_SRC) $(addprefix interpose/csrc/,partial.c mpout.c jobid.c core.c clock.c handles.c papi.c crash.c finalize.c fortran.c regions.c wrappers_gen.c)
MF_HDR       := $(wildcard interpose/csrc/*.h)
MF_LIBS      := $(LIBDIR)/libmpiflow-go.so $(if $(OMPI_VERSION),$(LIBDIR)/libmpiflow-openmpi.so) $(if $(MPICH_SHOW),$(LIBDIR)/libmpiflow-mpich.so)

.PHONY: libs bench-overhead bench-overhead-papi bench-recorder bench-replay bench-wrappers $(LIBDIR)/libmpiflow-go.so
libs: $(MF_LIBS)
ifeq ($(OMPI_VERSION),)
	@echo "note: no Open MPI mpicc found; built only the Go part of the interposer"
endif

$(LIBDIR)/libmpiflow-openmpi.so: $(MF_SRC) $(MF_HDR)
	@mkdir -p $(LIBDIR)
	$(CC) $(MF_CFLAGS) $(OMPI_CFLAGS) -shared -o $@ $(MF_SRC) $(OMPI_LDFLAGS) -ldl -Wl,--no-undefined

$(LIBDIR)/libmpiflow-mpich.so: $(MF_SRC) $(MF_HDR)
	@mkdir -p $(LIBDIR)
	$(CC) $(MF_CFLAGS) $(MPICH_CFLAGS) -shared -o $@ $(MF_SRC) $(MPICH_LDFLAGS) -ldl -Wl,--no-undefined

$(LIBDIR)/libmpiflow-go.so:
	@mkdir -p $(LIBDIR)
	$(GO) build -buildmode=c-shared -o $@ ./interpose
	@rm -f $(LIBDIR)/libmpiflow-go.h

# Overhead per MPI call: no library, a minimal clock_gettime wrapper, and
# libmpiflow, alternating in one invocation (see interpose/bench/).
# bench-overhead-papi does the same with hardware counters requested
# (where PAPI or the counters are missing, the cost of asking for them).
BENCH_ITERS ?= 400000
BENCH_PAPI  ?= PAPI_TOT_INS,PAPI_TOT_CYC
bench-overhead-papi:
	$(MAKE) bench-overhead MPIFLOW_PAPI=$(BENCH_PAPI)
# The recorder alone (interpose/bench/recbench.c): ns per event, and with
# valgrind installed instructions per event, for loops of 1, 4 and 16 calls.
REC_EVENTS ?= 1000000
bench-recorder:
	@mkdir -p $(LIBDIR)/bench
	$(CC) -O2 -std=gnu11 -Iinterpose/csrc -o $(LIBDIR)/bench/recbench interpose/bench/recbench.c $(MF_REC_SRC)
	for b in 1 4 16; do $(LIBDIR)/bench/recbench $(REC_EVENTS) $$b || exit 1; done
	if command -v valgrind >/dev/null; then for b in 1 4 16; do \
		valgrind --tool=callgrind --callgrind-out-file=/dev/null $(LIBDIR)/bench/recbench $(REC_EVENTS) $$b 1 2>&1 | \
		awk -v b=$$b -v n=$(REC_EVENTS) '/Collected/ { printf "recorder: loop of %d calls: %.0f instructions/event (the driver included)\n", b, $$4 / n }'; \
	done; fi
# bench-overhead: one table per MPI installed (Open MPI, MPICH), ROUNDS=n
# rounds (default 15).
BENCH_MPIS := $(if $(OMPI_VERSION),openmpi) $(if $(MPICH_SHOW),mpich)
bench-overhead: libs $(foreach m,$(BENCH_MPIS),$(LIBDIR)/bench/microbench-$(m) $(LIBDIR)/bench/libminwrap-$(m).so)
	sh interpose/bench/run.sh $(LIBDIR) $(BENCH_ITERS) $(BENCH_MPIS)
# How well fast repeats estimate the call time of real polls
# (interpose/bench/replay.sh): REPLAY_ROUNDS runs of the overhead
# microbenchmark per MPI with full traces, recorded again through the
# recorder (BenchmarkFastRepeatsReplay).
REPLAY_ROUNDS ?= 4
bench-replay: libs $(foreach m,$(BENCH_MPIS),$(LIBDIR)/bench/microbench-$(m) $(LIBDIR)/bench/libminwrap-$(m).so)
	GO=$(GO) sh interpose/bench/replay.sh $(LIBDIR) $(REPLAY_ROUNDS) $(BENCH_MPIS)
$(LIBDIR)/bench/microbench-openmpi: interpose/bench/microbench.c
	@mkdir -p $(@D)
	$(MPICC) -O2 -o $@ $< -ldl
# (MPICH's MPI_STATUSES_IGNORE sets off GCC's -Wstringop-overflow.)
$(LIBDIR)/bench/microbench-mpich: interpose/bench/microbench.c
	@mkdir -p $(@D)
	$(MPICH_CC) -O2 -Wno-stringop-overflow -o $@ $< -ldl
$(LIBDIR)/bench/libminwrap-openmpi.so: interpose/bench/minwrap.c
	@mkdir -p $(@D)
	$(CC) -O2 -fPIC -shared $(OMPI_CFLAGS) -o $@ $< $(OMPI_LDFLAGS)
$(LIBDIR)/bench/libminwrap-mpich.so: interpose/bench/minwrap.c
	@mkdir -p $(@D)
	$(CC) -O2 -fPIC -shared $(MPICH_CFLAGS) -o $@ $< $(MPICH_LDFLAGS)
# The instructions each wrapper adds per call (interpose/bench/wrapbench.*,
# needs valgrind): MPI_Comm_rank, MPI_Test, MPI_Testany and MPI_Allreduce
# repeated WRAP_CALLS times at one call site, and Irecv+Isend+Waitall (and
# the same with a Waitall each) as many times, per MPI, under a build of the
# library that sees time VALGRIND_SLOWDOWN times slower (clock.h,
# MF_SLOWDOWN), as valgrind runs code about that much slower.
WRAP_CALLS ?= 100000
VALGRIND_SLOWDOWN ?= 50
bench-wrappers: $(foreach m,$(BENCH_MPIS),$(LIBDIR)/bench/wrapbench-$(m) $(LIBDIR)/bench/libmpiflow-valgrind-$(m).so)
	sh interpose/bench/wrapbench.sh $(LIBDIR) $(WRAP_CALLS) $(BENCH_MPIS)
$(LIBDIR)/bench/libmpiflow-valgrind-openmpi.so: $(MF_SRC) $(MF_HDR)
	@mkdir -p $(@D)
	$(CC) $(MF_CFLAGS) -DMF_SLOWDOWN_BY=$(VALGRIND_SLOWDOWN) $(OMPI_CFLAGS) -shared -o $@ $(MF_SRC) $(OMPI_LDFLAGS) -ldl -Wl,--no-undefined
$(LIBDIR)/bench/libmpiflow-valgrind-mpich.so: $(MF_SRC) $(MF_HDR)
	@mkdir -p $(@D)
	$(CC) $(MF_CFLAGS) -DMF_SLOWDOWN_BY=$(VALGRIND_SLOWDOWN) $(MPICH_CFLAGS) -shared -o $@ $(MF_SRC) $(MPICH_LDFLAGS) -ldl -Wl,--no-undefined
$(LIBDIR)/bench/wrapbench-openmpi: interpose/bench/wrapbench.c
	@mkdir -p $(@D)
	$(MPICC) -O2 -g -o $@ $<
$(LIBDIR)/bench/wrapbench-mpich: interpose/bench/wrapbench.c
	@mkdir -p $(@D)
	$(MPICH_CC) -O2 -g -Wno-stringop-overflow -o $@ $<
