# loadnode: `make test` installs what the tests need and runs every test.
GO ?= go
PKGS := ./...
TEST_TIMEOUT ?= 14m
# The longest test packages first. go test runs the packages it is given in
# that order, two at a time on 2 cores; in ./... order tests/e2e (270-340 s)
# came last and ran alone at the end. Only for a whole run (PKGS=./...).
LONGEST_PKGS := ./tests/e2e ./tests/conformance ./tests/chaos
TEST_PKGS := $(if $(filter ./...,$(PKGS)),$(LONGEST_PKGS)) $(PKGS)

.PHONY: all build loadnode loadnode-bench test deps vet fmt proto fuzz-short clean

all: build

build:
	$(GO) build ./...

# The release and benchmark binary, ./loadnode, built without cgo: Pebble
# then allocates its memtables and block cache on the Go heap instead of
# with calloc, which the store ceiling measured 1.4-1.5x faster (fresh
# calloc'd arenas page-fault on every first write; see BENCHMARKS.md).
# Nothing in loadnode needs cgo. `loadnode bench` prints which build it is.
loadnode:
	CGO_ENABLED=0 $(GO) build -o loadnode ./cmd/loadnode

# The benchmark harness, a command of its own so that the release binary
# links no test code; `./loadnode bench ARGS` runs it from beside ./loadnode.
loadnode-bench: loadnode
	CGO_ENABLED=0 $(GO) build -o loadnode-bench ./cmd/loadnode-bench

# Every test, as CI runs it. Long soaks and benchmarks live behind their own
# targets and environment variables (see README).
test: deps vet
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(TEST_PKGS)
	$(MAKE) fuzz-short

# A short pass of every fuzz target beyond its seed corpus (the seeds run in
# the ordinary tests). The budget is a count of executions, not a duration:
# Go 1.26's fuzz coordinator can fail a duration run with a bare "context
# deadline exceeded" at the deadline on a loaded machine (golang/go#75804),
# with no failing input. FUZZTIME=1m (or 2000000x) for a longer pass.
# Each new interesting input is minimized for up to 60 s by default, with
# no executions counted meanwhile: FuzzScanWAL sat at "0/sec" for minutes
# in make test. A short pass keeps what it finds unminimized instead.
FUZZTIME ?= 20000x
FUZZMINTIME ?= 100x
# FuzzSchemaText compiles whole schemas (its seeds are 100,000 levels deep
# and 20,000 fields wide): about 40 executions a second, so fewer of them.
FUZZSCHEMATIME ?= 2000x
fuzz-short:
	$(GO) test -run '^$$' -fuzz '^FuzzParseJobSpec$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./config
	$(GO) test -run '^$$' -fuzz '^FuzzParseJSON$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./table
	$(GO) test -run '^$$' -fuzz '^FuzzParseCSV$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./table
	$(GO) test -run '^$$' -fuzz '^FuzzConvert$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./table
	$(GO) test -run '^$$' -fuzz '^FuzzParseFloat$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./table
	$(GO) test -run '^$$' -fuzz '^FuzzExpr$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./table
	$(GO) test -run '^$$' -fuzz '^FuzzLineEnd$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./table
	$(GO) test -run '^$$' -fuzz '^FuzzJSONKeys$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./table
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./doris
	$(GO) test -run '^$$' -fuzz '^FuzzAvroDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./formats/registry
	$(GO) test -run '^$$' -fuzz '^FuzzProtobufDecode$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./formats/registry
	$(GO) test -run '^$$' -fuzz '^FuzzSchemaText$$' -fuzztime $(FUZZSCHEMATIME) -fuzzminimizetime $(FUZZMINTIME) ./formats/registry
	$(GO) test -run '^$$' -fuzz '^FuzzDeaggregate$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./sources/kinesis
	$(GO) test -run '^$$' -fuzz '^FuzzScanWAL$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME) ./persistence

# Go modules; kinesalite (a local Kinesis, pinned by
# tests/kinesalite/package-lock.json, run by Debian's nodejs) for the
# Kinesis source's tests; the Debian PostgreSQL server for the PostgreSQL
# sink's tests (internal/pgtest runs a private cluster of it); Debian's
# chromium for the web console's browser test (tests/e2e/console_test.go);
# the Debian etcd server for cluster mode's tests (internal/etcdtest runs a
# private member); kcat (librdkafka) for the compression and kcat
# tests; and mariadb-client (mysql) for the MySQL-protocol session test. A test whose program is missing fails, naming it, unless its
# LOADNODE_SKIP_* variable is 1 (internal/testdeps; README, "Testing");
# `make test` sets none of them.
deps:
	$(GO) mod download
	@dpkg -s postgresql >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || echo "make: chromium could not be installed; TestConsoleInChromium fails (LOADNODE_SKIP_BROWSER=1 skips it locally)"
	@command -v etcd >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null; }
	@command -v kcat >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kcat >/dev/null; } || echo "make: kcat could not be installed; tests/bench.TestKcat, tests/bench.TestQuickTiny and tests/e2e.TestCompressedRecordsLoad fail (LOADNODE_SKIP_KCAT=1 skips their kcat part locally)"
	@command -v mysql >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-client >/dev/null; } || echo "make: mariadb-client (mysql) could not be installed; tests/e2e.TestMySQLClientSession fails (LOADNODE_SKIP_MYSQL=1 skips it locally)"
	@command -v npm >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }
	npm ci --prefix tests/kinesalite --no-audit --no-fund --loglevel=error >/dev/null

# staticcheck, pinned, run through go run (the module proxy serves it).
STATICCHECK ?= v0.8.2

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK) $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

# Regenerate api/loadnode.pb.go (needs protoc and protoc-gen-go; the
# generated file is committed, so building does not).
proto:
	protoc --go_out=. --go_opt=paths=source_relative api/loadnode.proto

clean:
	$(GO) clean -testcache
