# ftgst: every target installs what it needs first (scripts/deps), so a fresh Debian 12 machine with the Swift
# toolchain needs nothing else.
SHELL := /bin/bash
FIXTURES := .build/fixtures
SWIFT_TEST_FLAGS ?=

PLUGIN_DIR := .build/gst-plugins
TEST_PLUGIN_DIR := .build/gst-plugins-debug

.PHONY: deps build release plugin fixtures test lint format demo bench bench-lut bench-lut16 bench-export bench-mezzanine bench-serve bench-thumbs bench-photos bench-storyboard bench-batch bench-thumbnailer bench-tonemap bench-desktop bench-hevc \
	man completions share install uninstall stage deb clean \
	ts-client test-ts-client test-studio studio-screenshot test-ts-browser

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

# Release builds carry the Swift runtime inside (static stdlib, Foundation included), so the binary and the plugin
# run where GStreamer is installed but no Swift toolchain is (README: what they need at run time). The toolchain's
# static libraries are beside its `swift`; a shared library needs their folder named for the link.
SWIFT_STATIC := $(shell cd "$$(dirname "$$(readlink -f "$$(command -v swift)")")/../lib/swift_static/linux" 2>/dev/null && pwd)
RELEASE_FLAGS := -c release --static-swift-stdlib -Xswiftc -static-stdlib -Xlinker -L$(SWIFT_STATIC)

release: deps
	swift build $(RELEASE_FLAGS) --product ftgst
	swift build $(RELEASE_FLAGS) --product ftgst-bench
	swift build $(RELEASE_FLAGS) --product gstfilmtone
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

# The whole suite: the lint, unit tests, in-process GStreamer tests, end-to-end tests of the built CLI binary, and
# of the staged install (the release build, installed under .build/stage as the .deb holds it).
test: lint build fixtures stage ts-client
	FTGST_FIXTURES=$(CURDIR)/$(FIXTURES) FTGST_BIN=$(CURDIR)/.build/debug/ftgst \
	FTGST_PLUGIN_DIR=$(CURDIR)/$(TEST_PLUGIN_DIR) FTGST_STAGE=$(CURDIR)/$(STAGE) \
	swift test --disable-swift-testing $(SWIFT_TEST_FLAGS)
	@$(MAKE) --no-print-directory test-ts-client
	@$(MAKE) --no-print-directory test-studio
	@$(MAKE) --no-print-directory test-ts-browser

# The TypeScript client (clients/typescript), compiled by Debian's tsc into .build/ts-client (never the source tree):
# CommonJS for Node there, and the browser's part (client, definitions, transport, websocket) as ES modules in
# .build/ts-client/browser, for <script type="module">.
TS_CLIENT := .build/ts-client

ts-client: deps
	tsc -p clients/typescript/tsconfig.json --outDir $(TS_CLIENT)
	tsc -p clients/typescript/tsconfig.browser.json --outDir $(TS_CLIENT)/browser

# Its tests, with node --test against the debug ftgst serve, over stdio and over --listen's WebSocket (make test
# runs them after the Swift tests). Node 20 has the standard WebSocket behind --experimental-websocket (Node 22+
# by default); node --test passes the flag on to each test file's process.
test-ts-client: ts-client build fixtures
	FTGST_FIXTURES=$(CURDIR)/$(FIXTURES) FTGST_BIN=$(CURDIR)/.build/debug/ftgst \
	FTGST_TS_CLIENT=$(CURDIR)/$(TS_CLIENT) node --experimental-websocket --test --test-reporter=spec \
	clients/typescript/test/*.test.js

# The client's browser build in a real headless Chromium against the debug ftgst serve --listen (make test runs it
# after the studio's test); Debian's python3, as test-studio.
test-ts-browser: ts-client build fixtures
	FTGST_FIXTURES=$(CURDIR)/$(FIXTURES) FTGST_BIN=$(CURDIR)/.build/debug/ftgst \
	FTGST_TS_CLIENT=$(CURDIR)/$(TS_CLIENT) /usr/bin/python3 Tests/studio/client_test.py

# The web studio (studio/) in a real headless Chromium, driven by Selenium, against the debug ftgst serve --listen
# and ftgst studio, the installed one (with its installed page) when make stage has run, as make test does first
# (make test runs it after the TypeScript client's tests). Debian's python3 (/usr/bin/python3),
# whose python3-selenium scripts/deps installs, not whichever python3 comes first on PATH. Its screenshots at three
# window sizes are kept in .build/studio-screenshots/.
test-studio: build fixtures
	FTGST_FIXTURES=$(CURDIR)/$(FIXTURES) FTGST_BIN=$(CURDIR)/.build/debug/ftgst \
	FTGST_STAGE=$(if $(wildcard $(STAGE)/usr/bin/ftgst),$(CURDIR)/$(STAGE)) \
	FTGST_STUDIO_SCREENSHOTS=$(CURDIR)/.build/studio-screenshots /usr/bin/python3 Tests/studio/studio_test.py

# The README's screenshot: the 1280x800 one the studio's test takes (not drawn), copied into docs/images/.
studio-screenshot: test-studio
	mkdir -p docs/images
	cp .build/studio-screenshots/studio-1280x800.png docs/images/studio.png

# Runs the main jobs on a generated sample and prints where the outputs are.
demo: release
	@scripts/demo

bench: release
	bench/thumb.sh

# A 6 and a 24-megapixel PNG and a 24-megapixel WebP photo to a 512-px thumbnail against ffmpeg (bench/README.md).
bench-photos: release
	CLIPS="photo6mp-png.ffmpeg photo24mp-png.ffmpeg photo24mp-webp.ffmpeg" bench/thumb.sh

# What phones record: one exact 320-px thumbnail of a 4K HEVC Main 10 HLG portrait .mov and of a 1080p HEVC .mov
# against ffmpeg (bench/README.md, docs/PERFORMANCE.md).
bench-hevc: release
	CLIPS="phone4k-hlg.ffmpeg hevc1080.ffmpeg" bench/thumb.sh

# Five exact thumbnails of a 1080p clip from one ftgst thumb against five ffmpeg processes (bench/README.md).
bench-thumbs: release
	bench/thumbs.sh

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

# ftgst thumbnailer against ffmpegthumbnailer: the 256-px PNG a file manager asks for (bench/README.md).
bench-thumbnailer: release
	bench/thumbnailer.sh

# ftgst serve's warm previews through its stdio protocol: intensity-only and LUT-only changes, a new source
# against one-shot ftgst preview, the engine's memory (bench/README.md, docs/PERFORMANCE.md).
bench-serve: release
	bench/serve.sh

# ftgst storyboard (12 tiles of a 2-minute 1080p clip) against ffmpeg's keyframe-only and exact sprite-sheet
# commands (bench/README.md, docs/PERFORMANCE.md).
bench-storyboard: release
	bench/storyboard.sh

# HDR to SDR: an exact thumbnail of a 1080p PQ clip, ftgst's tone map against ffmpeg's zscale + tonemap, and both
# without one (bench/README.md, docs/PERFORMANCE.md).
bench-tonemap: release
	bench/tonemap.sh

# What the desktop costs an export: --notify against the same export without it, on a private session bus with a
# stand-in portal; and pick's and desktop's own time.
bench-desktop: release
	bench/desktop.sh

# ftgst batch: 40 exact thumbnails (4 times of 10 1080p clips) in one process against the 40 ffmpeg processes
# (bench/README.md, docs/PERFORMANCE.md).
bench-batch: release
	bench/batch.sh

# Installing. `make install PREFIX=/usr DESTDIR=/tmp/stage` stages a tree; without DESTDIR it installs for real.
# The GStreamer plugin goes where GStreamer looks under that prefix (/usr: plain gst-inspect-1.0 finds it; other
# prefixes: GST_PLUGIN_PATH=$(PREFIX)/lib/<multiarch>/gstreamer-1.0). Presets are compiled into the binary, so the
# tree works wherever PREFIX points; share/ftgst/presets holds the same files to copy for `--presets DIR`.
PREFIX ?= /usr/local
DESTDIR ?=
MULTIARCH := $(shell gcc -print-multiarch 2>/dev/null || dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
BINDIR = $(PREFIX)/bin
GST_PLUGINDIR = $(PREFIX)/lib/$(MULTIARCH)/gstreamer-1.0
DATADIR = $(PREFIX)/share
DOCDIR = $(DATADIR)/doc/ftgst
MAN1DIR = $(DATADIR)/man/man1
# Where each shell looks for completions under the prefix: bash-completion and fish search
# <XDG data dir>/…; Debian's zsh reads vendor-completions under /usr and site-functions elsewhere.
BASH_COMPLETIONDIR = $(DATADIR)/bash-completion/completions
ZSH_COMPLETIONDIR = $(DATADIR)/zsh/$(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)
FISH_COMPLETIONDIR = $(DATADIR)/fish/vendor_completions.d
PRESET_FILES := $(notdir $(wildcard pipelines/presets/*.preset))
# The studio's page and its files (one flat folder), served by `ftgst serve --listen` from share/ftgst/studio.
STUDIO_FILES := $(notdir $(wildcard studio/*))
DOC_FILES := README.md $(addprefix docs/,$(notdir $(wildcard docs/*.md)))

# The man page and completions are printed by the release binary being installed (the same tables as its --help).
install: release
	install -d "$(DESTDIR)$(BINDIR)" "$(DESTDIR)$(GST_PLUGINDIR)" "$(DESTDIR)$(DATADIR)/ftgst/presets" \
		"$(DESTDIR)$(DATADIR)/ftgst/studio" "$(DESTDIR)$(DATADIR)/thumbnailers" \
		"$(DESTDIR)$(DATADIR)/applications" "$(DESTDIR)$(DATADIR)/icons/hicolor/scalable/apps" \
		"$(DESTDIR)$(DOCDIR)" "$(DESTDIR)$(MAN1DIR)" "$(DESTDIR)$(BASH_COMPLETIONDIR)" \
		"$(DESTDIR)$(ZSH_COMPLETIONDIR)" "$(DESTDIR)$(FISH_COMPLETIONDIR)"
	install -m 755 --strip .build/release/ftgst "$(DESTDIR)$(BINDIR)/ftgst"
	install -m 644 .build/release/libgstfilmtone.so "$(DESTDIR)$(GST_PLUGINDIR)/libgstfilmtone.so"
	strip --strip-unneeded "$(DESTDIR)$(GST_PLUGINDIR)/libgstfilmtone.so"
	install -m 644 $(addprefix pipelines/presets/,$(PRESET_FILES)) "$(DESTDIR)$(DATADIR)/ftgst/presets/"
	install -m 644 $(addprefix studio/,$(STUDIO_FILES)) "$(DESTDIR)$(DATADIR)/ftgst/studio/"
	install -m 644 $(DOC_FILES) "$(DESTDIR)$(DOCDIR)/"
	install -m 644 data/ftgst.thumbnailer "$(DESTDIR)$(DATADIR)/thumbnailers/ftgst.thumbnailer"
	install -m 644 data/ftgst-studio.desktop "$(DESTDIR)$(DATADIR)/applications/ftgst-studio.desktop"
	install -m 644 data/ftgst-studio.svg "$(DESTDIR)$(DATADIR)/icons/hicolor/scalable/apps/ftgst-studio.svg"
	.build/release/ftgst man | gzip -n9 > "$(DESTDIR)$(MAN1DIR)/ftgst.1.gz.tmp"
	mv "$(DESTDIR)$(MAN1DIR)/ftgst.1.gz.tmp" "$(DESTDIR)$(MAN1DIR)/ftgst.1.gz"
	.build/release/ftgst completion bash > "$(DESTDIR)$(BASH_COMPLETIONDIR)/ftgst.tmp"
	mv "$(DESTDIR)$(BASH_COMPLETIONDIR)/ftgst.tmp" "$(DESTDIR)$(BASH_COMPLETIONDIR)/ftgst"
	.build/release/ftgst completion zsh > "$(DESTDIR)$(ZSH_COMPLETIONDIR)/_ftgst.tmp"
	mv "$(DESTDIR)$(ZSH_COMPLETIONDIR)/_ftgst.tmp" "$(DESTDIR)$(ZSH_COMPLETIONDIR)/_ftgst"
	.build/release/ftgst completion fish > "$(DESTDIR)$(FISH_COMPLETIONDIR)/ftgst.fish.tmp"
	mv "$(DESTDIR)$(FISH_COMPLETIONDIR)/ftgst.fish.tmp" "$(DESTDIR)$(FISH_COMPLETIONDIR)/ftgst.fish"

# Removes exactly the files `install` writes (by name), then the folders that are ftgst's own if they are empty.
uninstall:
	rm -f "$(DESTDIR)$(BINDIR)/ftgst" "$(DESTDIR)$(GST_PLUGINDIR)/libgstfilmtone.so" \
		$(addprefix "$(DESTDIR)$(DATADIR)/ftgst/presets/,$(addsuffix ",$(PRESET_FILES))) \
		$(addprefix "$(DESTDIR)$(DATADIR)/ftgst/studio/,$(addsuffix ",$(STUDIO_FILES))) \
		$(addprefix "$(DESTDIR)$(DOCDIR)/,$(addsuffix ",$(notdir $(DOC_FILES)))) \
		"$(DESTDIR)$(MAN1DIR)/ftgst.1.gz" "$(DESTDIR)$(BASH_COMPLETIONDIR)/ftgst" \
		"$(DESTDIR)$(DATADIR)/thumbnailers/ftgst.thumbnailer" \
		"$(DESTDIR)$(DATADIR)/applications/ftgst-studio.desktop" \
		"$(DESTDIR)$(DATADIR)/icons/hicolor/scalable/apps/ftgst-studio.svg" \
		"$(DESTDIR)$(ZSH_COMPLETIONDIR)/_ftgst" "$(DESTDIR)$(FISH_COMPLETIONDIR)/ftgst.fish"
	-rmdir "$(DESTDIR)$(DATADIR)/ftgst/presets" "$(DESTDIR)$(DATADIR)/ftgst/studio" "$(DESTDIR)$(DATADIR)/ftgst" \
		"$(DESTDIR)$(DOCDIR)" 2>/dev/null

# The tree a package holds, under .build/stage (PREFIX=/usr), which the install test checks. A second staged
# install is uninstalled at once: `make uninstall` must leave no file behind.
STAGE := .build/stage
stage:
	rm -rf $(STAGE) $(STAGE)-uninstalled
	$(MAKE) --no-print-directory install PREFIX=/usr DESTDIR=$(CURDIR)/$(STAGE)
	@$(MAKE) --no-print-directory install PREFIX=/usr DESTDIR=$(CURDIR)/$(STAGE)-uninstalled >/dev/null
	@$(MAKE) --no-print-directory uninstall PREFIX=/usr DESTDIR=$(CURDIR)/$(STAGE)-uninstalled >/dev/null
	@left=$$(find $(STAGE)-uninstalled -type f); \
		[ -z "$$left" ] || { echo "make uninstall left files behind: $$left" >&2; exit 1; }
	@rm -rf $(STAGE)-uninstalled && echo "stage: $(STAGE) (make uninstall removes every file)"

# A Debian package of the staged tree: scripts/deb writes DEBIAN/control (Depends derived with dpkg -S from what
# ldd and the pipelines load) and builds .build/ftgst_VERSION_ARCH.deb with dpkg-deb.
deb: stage
	scripts/deb $(STAGE) .build

clean:
	rm -rf .build demo-out
