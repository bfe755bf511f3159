# loadnode: `make test` installs what the tests need and runs every test.
GO ?= go
PKGS := ./...
TEST_TIMEOUT ?= 14m

.PHONY: all build test vet fmt proto fuzz-short clean

all: build

build:
	$(GO) build ./...

# Every test, as CI runs it. Long soaks and benchmarks live behind their own
# targets and environment variables (see README).
test: deps vet
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

deps:
	$(GO) mod download

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

# Regenerate api/loadnode.pb.go (needs protoc and protoc-gen-go; the
# generated file is committed, so building does not).
proto:
	protoc --go_out=. --go_opt=paths=source_relative api/loadnode.proto

clean:
	$(GO) clean -testcache
