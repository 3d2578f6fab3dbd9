# framewire: the two commands a user needs are `make run` and `make test`.
SHELL := /bin/bash
GO ?= go
# The opus tag builds the libopus codec (Debian libopus-dev); nolibopusfile
# avoids needing libopusfile-dev.
TAGS ?= opus nolibopusfile
GOFLAGS_TAGS := -tags "$(TAGS)"
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: run test test-go test-e2e bench lint fuzz deps-opus fmt

run: deps-opus
	$(GO) run $(GOFLAGS_TAGS) ./examples/custom-processor

test: deps-opus lint test-go

test-go:
	$(GO) test $(GOFLAGS_TAGS) -race -count=1 ./...

bench:
	$(GO) run ./bench/cmd/framewire-bench

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './e2e/node_modules/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet $(GOFLAGS_TAGS) ./...
	$(GO) run $(STATICCHECK) -tags "$(TAGS)" ./...

# fuzz runs every fuzz target for FUZZTIME each.
FUZZTIME ?= 10s
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test $(GOFLAGS_TAGS) -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target"; \
	    $(GO) test $(GOFLAGS_TAGS) -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

# deps-opus installs libopus-dev when it is missing (as root), or says how.
deps-opus:
	@if ! pkg-config --exists opus 2>/dev/null && ! [ -f /usr/include/opus/opus.h ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing libopus-dev and pkg-config"; \
	    (apt-get install -y -q libopus-dev pkg-config >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q libopus-dev pkg-config >/dev/null)); \
	  else \
	    echo "libopus-dev is missing: run 'sudo apt-get install libopus-dev pkg-config', or build without it: make TAGS=" >&2; exit 1; \
	  fi; \
	fi

fmt:
	gofmt -w $$(git ls-files '*.go')
