# ftgst: every target installs what it needs first (scripts/deps), so a fresh Debian 12 machine with the Swift
# toolchain needs nothing else.
SHELL := /bin/bash
FIXTURES := .build/fixtures
SWIFT_TEST_FLAGS ?=

PLUGIN_DIR := .build/gst-plugins
TEST_PLUGIN_DIR := .build/gst-plugins-debug

.PHONY: deps build release plugin fixtures test lint format demo bench bench-lut bench-lut16 bench-export bench-mezzanine clean \
	man completions share

# What `swift format` formats and lints, with the checked-in .swift-format (4 spaces, 120 columns).
SWIFT_SOURCES := Package.swift Sources Plugins Tests

deps:
	@scripts/deps

build: deps
	swift build
	swift build --product gstfilmtone
	@mkdir -p $(TEST_PLUGIN_DIR) && cp .build/debug/libgstfilmtone.so $(TEST_PLUGIN_DIR)/

# The loadable GStreamer plugin (ftlut, fttrim), built with every release build: `ftgst export --dry-run` from the
# release binary names this folder. GST_PLUGIN_PATH=$(PLUGIN_DIR) gst-inspect-1.0 ftlut
plugin: release
	@echo "plugin: $(PLUGIN_DIR)/libgstfilmtone.so (GST_PLUGIN_PATH=$(CURDIR)/$(PLUGIN_DIR) gst-inspect-1.0 ftlut)"

release: deps
	swift build -c release
	swift build -c release --product gstfilmtone
	@mkdir -p $(PLUGIN_DIR) && cp .build/release/libgstfilmtone.so $(PLUGIN_DIR)/

# The man page and the shell completions, printed by the built ftgst from the tables its --help comes from, at the
# paths `make install` copies from (each written beside its target, then renamed: never a half file).
SHARE := .build/share
MAN_PAGE := $(SHARE)/man/man1/ftgst.1
COMPLETIONS := $(SHARE)/bash-completion/completions/ftgst $(SHARE)/zsh/site-functions/_ftgst \
	$(SHARE)/fish/vendor_completions.d/ftgst.fish

share: man completions

man: build
	@mkdir -p $(dir $(MAN_PAGE))
	.build/debug/ftgst man > $(MAN_PAGE).tmp && mv $(MAN_PAGE).tmp $(MAN_PAGE)

completions: build
	@mkdir -p $(foreach f,$(COMPLETIONS),$(dir $(f)))
	.build/debug/ftgst completion bash > $(word 1,$(COMPLETIONS)).tmp && mv $(word 1,$(COMPLETIONS)).tmp $(word 1,$(COMPLETIONS))
	.build/debug/ftgst completion zsh > $(word 2,$(COMPLETIONS)).tmp && mv $(word 2,$(COMPLETIONS)).tmp $(word 2,$(COMPLETIONS))
	.build/debug/ftgst completion fish > $(word 3,$(COMPLETIONS)).tmp && mv $(word 3,$(COMPLETIONS)).tmp $(word 3,$(COMPLETIONS))

fixtures: deps
	@scripts/fixtures $(FIXTURES)

# Rewrites the Swift sources in place as .swift-format says.
format:
	swift format format --in-place --recursive --parallel $(SWIFT_SOURCES)

# Fails on any formatting or lint finding (warnings count): run `make format` to fix the formatting ones.
lint:
	swift format lint --strict --recursive --parallel $(SWIFT_SOURCES)

# The whole suite: the lint, unit tests, in-process GStreamer tests, and end-to-end tests of the built CLI binary.
test: lint build fixtures
	FTGST_FIXTURES=$(CURDIR)/$(FIXTURES) FTGST_BIN=$(CURDIR)/.build/debug/ftgst \
	FTGST_PLUGIN_DIR=$(CURDIR)/$(TEST_PLUGIN_DIR) swift test --disable-swift-testing $(SWIFT_TEST_FLAGS)

# Runs the main jobs on a generated sample and prints where the outputs are.
demo: release
	@scripts/demo

bench: release
	bench/thumb.sh

# LUTKernel against ffmpeg's lut3d: CPU time per 1080p frame, table build, memory, accuracy (bench/README.md).
bench-lut: release
	bench/lut.sh

# The same for the 16-bit path: LUTKernel16 on an RGBA64_LE frame against lut3d on rgba64le.
bench-lut16: release
	DEPTH=16 bench/lut.sh

# ftgst export (33^3 look, h264-mp4) against ffmpeg lut3d + libx264 on the same clip: wall, memory, ratios.
bench-export: release
	bench/export.sh

# Exact-time previews of a 60 s 1080p long-GOP clip, from the source and from its mezzanine (bench/README.md).
bench-mezzanine: release
	bench/mezzanine.sh

clean:
	rm -rf .build demo-out
