# ftgst: every target installs what it needs first (scripts/deps), so a fresh Debian 12 machine with the Swift
# toolchain needs nothing else.
SHELL := /bin/bash
FIXTURES := .build/fixtures
SWIFT_TEST_FLAGS ?=

.PHONY: deps build release fixtures test demo bench clean

deps:
	@scripts/deps

build: deps
	swift build

release: deps
	swift build -c release

fixtures: deps
	@scripts/fixtures $(FIXTURES)

# The whole suite: unit tests, in-process GStreamer tests, and end-to-end tests of the built CLI binary.
test: build fixtures
	FTGST_FIXTURES=$(CURDIR)/$(FIXTURES) FTGST_BIN=$(CURDIR)/.build/debug/ftgst swift test --disable-swift-testing $(SWIFT_TEST_FLAGS)

# Runs the main jobs on a generated sample and prints where the outputs are.
demo: release
	@scripts/demo

bench: release
	bench/thumb.sh

clean:
	rm -rf .build demo-out
