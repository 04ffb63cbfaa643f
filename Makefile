# Prism: thin targets; CI runs the same ones (.ci/run calls `make test`).
#
#   make run         install what is missing, build, benchmark every device with verification
#   make test        install what is missing, vet, test on PoCL and Rusticl and a small pass under Oclgrind
#   make build       build bin/prism
#   make bench       go test benchmarks of the kernels
#   make gpu-bundle  binaries for the GPU machine in .gpu/ (see docs/PERFORMANCE.md)
#   make lint        gofmt and go vet
#   make fuzz        every Go fuzz target for FUZZTIME each (their seed corpora run in make test)
#   make deps        install the system packages (apt-get) that the rest needs

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
GO ?= go
# Silences the OpenCL headers' note that no target version was chosen: go-opencl uses 1.2.
export CGO_CFLAGS ?= -DCL_TARGET_OPENCL_VERSION=120
# The results store's SQLite driver (mattn/go-sqlite3) links the system's libsqlite3
# (libsqlite3-dev) instead of compiling its own copy of SQLite: about 2 s instead of 35 s
# cold. Every build and test below, the GPU bundle's included, uses the same tag (added to
# the GOFLAGS that go env reports). -trimpath keeps the checkout's path out of what is
# built, so that Go's build cache serves a clone at any path: a package's test binary
# built again in a second clone took 0.8 s with it and 18.9 s without.
export GOFLAGS := $(shell $(GO) env GOFLAGS) -tags=libsqlite3 -trimpath
# PoCL's settings (no recompile per local size, a program cache under Prism's cache
# directory) and Rusticl's device (RUSTICL_ENABLE=llvmpipe) are Prism's own defaults, set by
# the OpenCL backend where the environment does not set them: `prism` run by hand behaves
# as these targets do (cl/doc.go).

# What `make run` needs: the OpenCL drivers and loader, the vendor libraries CLBlast and
# clFFT, and SQLite for the results store.
RUN_PACKAGES := pocl-opencl-icd mesa-opencl-icd libclc-15 ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers clinfo libclblast1 libclfft2 libsqlite3-dev
# What `make test` needs beside them: oclgrind (the second pass); clang-15 compiles every
# kernel through the CUDA prelude to PTX (cuda tests), without a GPU; python3-numpy writes
# the .npy files bench/userkernel's tests read; postgresql: the results store's tests start
# throw-away PostgreSQL servers of their own (its initdb and postgres, run as nobody under
# root; bench/store/cluster_test.go); chromium: the published site's test loads every page
# in headless Chromium (bench/site); openmpi-bin: mpirun and libmpi.so.40, which Prism loads at
# run time, for the collectives across processes through MPI (internal/mpi, engine/group).
TEST_PACKAGES := oclgrind clang-15 llvm-spirv-15 python3-numpy postgresql chromium openmpi-bin
APT_PACKAGES := $(RUN_PACKAGES) $(TEST_PACKAGES)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Binaries and reports name their commit: stamp it wherever this is a git checkout, even
# where GOFLAGS says -buildvcs=false (auto elsewhere, e.g. an unpacked archive).
BUILDVCS := $(shell git rev-parse --git-dir >/dev/null 2>&1 && echo true || echo auto)
.PHONY: deps run-deps build test test-bins unit unit-run oclgrind oclgrind-run run bench gpu-bundle lint fuzz

# deps installs every package; run-deps those of make run (a browser and a database server
# are the tests' business).
deps: PACKAGES = $(APT_PACKAGES)
run-deps: PACKAGES = $(RUN_PACKAGES)
deps run-deps:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q $$missing; \
	fi
	@command -v $(GO) >/dev/null || { echo "Go is not installed: see https://go.dev/doc/install"; exit 1; }

# -w leaves out the DWARF tables (for debuggers; panics keep their stack traces): a second
# less to link.
build: run-deps
	$(GO) build -buildvcs=$(BUILDVCS) -ldflags=-w -o bin/prism ./cmd/prism  # the report names the commit

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@# Only cl has files that the noopencl tag swaps; cmd/prism must still build without them.
	$(GO) vet -tags noopencl,libsqlite3 ./cl ./cmd/prism

# The test binaries first (one go command compiles every package), then vet (on what they
# compiled), the unit tests and the Oclgrind pass. Run side by side, vet, the unit tests and
# Oclgrind took as long as one after another (562 s against 569 on two cores, cold).
test: deps
	$(MAKE) --no-print-directory test-bins
	$(MAKE) --no-print-directory lint unit-run oclgrind-run

# Every package with tests, as a path from the module root (. is the root).
TEST_PKGS := $(shell $(GO) list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.Dir}}{{end}}' ./... 2>/dev/null | sed "s|^$(CURDIR)/\?||; s|^$$|.|")
# The longest first, so that the lanes end together (seconds of wall time, three at a time
# on two cores, 2026-12-01: cmd/prism 177 in two shards of 77 and 100, kernels/suite 77,
# cuda/clc/translate 60, cl 57, kernels/sort 45, engine/group 35, kernels/gemm 34,
# kernels/attention 32, engine 28, bench 27, the rest 19 or less). cmd/prism runs as two
# shards of its tests (scripts/test-run.sh's PKG@K/M): much of its time is waiting on the
# commands it starts.
UNIT_FIRST := cmd/prism kernels/suite cuda/clc/translate cl kernels/sort engine/group kernels/gemm kernels/attention engine bench cuda kernels/reduce kernels/scan kernels/conv bench/store kernels/fft kernels/montecarlo kernels/softmax kernels/histogram kernels/layernorm
UNIT_SHARDED := cmd/prism
UNIT_PKGS := $(foreach p,$(filter $(TEST_PKGS),$(UNIT_FIRST)) $(filter-out $(UNIT_FIRST),$(TEST_PKGS)),$(if $(filter $(UNIT_SHARDED),$(p)),$(p)@1/2 $(p)@2/2,$(p)))

# Each package's test binary, built once (without DWARF tables: a quarter less time
# linking) into .cache/bin and used by every pass below: the unit tests, the two-device
# pass and Oclgrind's (kernels/gemm: .cache/bin/kernels-gemm.test, the module root:
# root.test). One go command builds them all (go test -c -o DIR/ names each binary after its
# package's last path element), so that every package compiles once, two at a time: one
# command a package, two at once, compiled the packages they share twice over when the
# cache was cold (207 s against 164 for go vet and then those commands). The module root's
# binary would share its name with cmd/prism's: it is built apart.
TEST_PKGS_BUT_ROOT := $(filter-out .,$(TEST_PKGS))
test-bins:
	rm -rf .cache/bin .cache/bin-raw && mkdir -p .cache/bin .cache/bin-raw
	$(GO) test -c -ldflags=-w -o .cache/bin-raw/ $(addprefix ./,$(TEST_PKGS_BUT_ROOT))
	for p in $(TEST_PKGS_BUT_ROOT); do mv .cache/bin-raw/$${p##*/}.test .cache/bin/$$(echo $$p | tr / -).test; done
	$(if $(filter .,$(TEST_PKGS)),$(GO) test -c -ldflags=-w -o .cache/bin/root.test .)
	rmdir .cache/bin-raw

# Every package on the real OpenCL devices found (PoCL and Rusticl here), three at a time (much of a cold pass is single-threaded compiling). The
# log keeps every test and subtest result line, so it shows which devices each test ran on.
unit: test-bins
	$(MAKE) --no-print-directory unit-run
unit-run:
	rm -rf .cache/unit
	printf "%s\n" $(UNIT_PKGS) | xargs -P 3 -n 1 bash scripts/test-run.sh
	@cat .cache/unit/*.out > .cache/test.log
	@echo "unit tests: $$(grep -c -E '^\s*--- PASS' .cache/test.log) passed, $$(grep -c -E '^\s*--- SKIP' .cache/test.log) skipped"
	@# Splits and collectives again with PoCL as two devices, so that each part runs on a
	@# device of its own (and the tests that need two distinct devices run).
	printf '%s\n' $(filter kernels kernels/% cmd/prism,$(TEST_PKGS)) | POCL_DEVICES="pthread pthread" LOGDIR=.cache/unit-two-devices xargs -P 2 -I{} bash scripts/test-run.sh {} -test.run 'Split|Collective'
	POCL_DEVICES="pthread pthread" LOGDIR=.cache/unit-two-devices bash scripts/test-run.sh cl -test.run 'TestConformance/.*/Groups'

# The kernel packages with tests: the base, every family, the suite (TestOps) and ceiling.
KERNEL_PKGS := kernels $(sort $(patsubst %/,%,$(dir $(wildcard kernels/*/*_test.go))))

# The OpenCL tests again at small sizes under Oclgrind, which simulates a device and reports
# out-of-bounds accesses, data races and uninitialized reads (its log must stay empty), with
# the test binaries of .cache/bin. The families that time host-device copies, pipelines
# and allocations are left out: their kernels only make and check data (and overlap's
# chains of multiply-adds take minutes there); alloc's ops still run under it in
# kernels/suite's TestOps (races and bounds). Splits across devices are skipped there:
# their parts run the families' kernels, which run under it on their own, and their
# planning and combining happen on the host (tested on PoCL and Rusticl).
OCLGRIND_SKIP := kernels/transfer kernels/overlap kernels/alloc
# The longest first, so that the two at a time end together (each beside another package,
# in seconds, 2026-12-01: sort 90, gemm 45, conv 42, fft 39, attention 34, histogram 28,
# reduce 20, scan 17, stencil and layernorm 16, softmax 14, suite 13, montecarlo 11, the
# rest 9 or less); cmd/prism runs the OpenCL C corpus (cuda/clc/translate/testdata/corpus)
# as prism exec runs it (scripts/oclgrind-run.sh).
OCLGRIND_FIRST := kernels/sort kernels/gemm kernels/conv kernels/fft kernels/attention kernels/histogram kernels/reduce kernels/scan kernels/stencil kernels/layernorm kernels/softmax kernels/suite kernels/montecarlo
OCLGRIND_PKGS := $(OCLGRIND_FIRST) $(filter-out $(OCLGRIND_SKIP) $(OCLGRIND_FIRST),cl $(KERNEL_PKGS)) cmd/prism
oclgrind: test-bins
	$(MAKE) --no-print-directory oclgrind-run
oclgrind-run:
	mkdir -p .cache/oclgrind
	@# First a known report must fail scripts/oclgrind-run.sh: cl's TestOclgrindLog makes a
	@# race in a first context and runs a clean kernel in a second (Oclgrind reopens its log
	@# per context; the script must keep every report).
	@out=$$(PRISM_OCLGRIND_SELFCHECK=1 bash scripts/oclgrind-run.sh cl -test.run '^TestOclgrindLog$$') && rc=0 || rc=$$?; \
	  if [ "$$rc" = 0 ] || ! grep -q -- '--- PASS: TestOclgrindLog' <<< "$$out" || ! grep -q '^Write-write data race' <<< "$$out"; then \
	    printf '%s\n' "$$out"; echo "oclgrind: the known race (cl's TestOclgrindLog) did not fail scripts/oclgrind-run.sh"; exit 1; \
	  fi
	@# Two packages at a time: Oclgrind simulates on one core.
	printf '%s\n' $(OCLGRIND_PKGS) | xargs -P 2 -n 1 bash scripts/oclgrind-run.sh
	@echo "oclgrind: no memory error, race or uninitialized read"

# A quick pass of the whole suite on every device found (each op at its QuickSize, ceilings
# measured small), with each device's vendor library beside the GEMM, FFT, axpy, dot and sum cases
# (CLBlast and clFFT on PoCL and Rusticl): two OpenCL implementations side by side on one
# CPU. RUN_ARGS adds flags (--json, --ops ...).
# The bench lists the devices it found (prism devices shows them alone).
run: build
	./bin/prism bench --all-devices --quick --vendor $(RUN_ARGS)

# Every fuzz target of every package, FUZZTIME each (default 30s): Go runs one target at a
# time. New failing inputs land in the package's testdata/fuzz and then run in make test.
FUZZTIME ?= 30s
fuzz: deps
	@for p in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$p 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz: $$p $$f ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$p 2>&1 | tail -3; \
	  done; \
	done

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 5x ./kernels/...

# Everything the GPU machine needs, built here (it has no Go): see docs/PERFORMANCE.md.
gpu-bundle: deps
	rm -rf .gpu && mkdir -p .gpu/lib .gpu-pack
	$(GO) build -buildvcs=$(BUILDVCS) -ldflags='-s -w' -o .gpu/prism ./cmd/prism
	$(GO) test -c -ldflags='-s -w' -o .gpu/cl.test ./cl
	$(GO) test -c -ldflags='-s -w' -o .gpu/cuda.test ./cuda
	$(GO) test -c -ldflags='-s -w' -o .gpu/cuda-clc-translate.test ./cuda/clc/translate  # TestBuiltinsGeneratedGPU
	$(GO) test -c -ldflags='-s -w' -o .gpu/bench.test ./bench
	$(GO) test -c -ldflags='-s -w' -o .gpu/telemetry.test ./platform/telemetry
	$(GO) test -c -ldflags='-s -w' -o .gpu/cmd-prism.test ./cmd/prism  # TestCorpus
	@for p in $(KERNEL_PKGS); do \
	  echo "$(GO) test -c -ldflags='-s -w' -o .gpu/$$(echo $$p | tr / -).test ./$$p"; \
	  $(GO) test -c -ldflags='-s -w' -o .gpu/$$(echo $$p | tr / -).test ./$$p; \
	done
	# CLBlast and clFFT for NVIDIA's OpenCL there (PRISM_VENDOR_PATH=.gpu/lib).
	cp -a /lib/x86_64-linux-gnu/libclblast.so.1* /lib/x86_64-linux-gnu/libclFFT.so.2* .gpu/lib/  # links kept: the version is in the file name
	# SQLite for the results store (the binaries link it: -tags libsqlite3), where the machine has none.
	mkdir -p .gpu/lib/link && cp -a /lib/x86_64-linux-gnu/libsqlite3.so.0* .gpu/lib/link/
	git rev-parse HEAD > .gpu/COMMIT
	cp scripts/gpu-run.sh scripts/vendor.py scripts/launch.py scripts/ncu_stalls.py .gpu/
	# One compressed archive, small enough to travel: unpack with tar -xJf there.
	tar -C .gpu -cf - . | xz -6 -T2 > .gpu-pack/bundle.tar.xz
	@ls -l .gpu-pack/bundle.tar.xz