#!/usr/bin/env bash
# Benchmark: what the desktop costs an export — `ftgst export --notify` (a notification updated once a second,
# dock progress, the suspend inhibitor, a memory monitor) against the same export without it, on a private
# session bus with a python-dbusmock stand-in portal; wall time, CPU and peak memory, medians and ratios. Also
# how long `ftgst pick source` (the stand-in answering after 50 ms) and `ftgst desktop` take.
#
#   bench/desktop.sh            human-readable report on stdout (progress on stderr)
#   bench/desktop.sh --json     one JSON object on stdout instead
#
# Environment:
#   FTGST=path        ftgst binary (default: <repo>/.build/release/ftgst)
#   RUNS=n            runs per side (default 5), after 1 warm-up each
#   KEEP_TMP=1        keep the scratch directory afterwards
#
# Exit status: 0 when everything ran, whatever the figures say (a measurement, not a test).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"

args=()
for arg in "$@"; do
  case "$arg" in
    --json) args+=(--json) ;;
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/desktop.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

FTGST="${FTGST:-$repo/.build/release/ftgst}"
RUNS="${RUNS:-5}"
CLIP_DIR="$repo/.build/bench"
die() { echo "bench/desktop.sh: $*" >&2; exit 1; }
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$RUNS'"
for tool in gst-launch-1.0 gdbus /usr/bin/dbus-daemon; do
  command -v "$tool" >/dev/null || die "$tool not found (run scripts/deps)"
done
/usr/bin/python3 -c 'import dbusmock' 2>/dev/null || die "python3-dbusmock not found (run scripts/deps)"
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) not found (run scripts/deps)"
[ -x "$FTGST" ] || die "ftgst not found: $FTGST (make release)"

# shellcheck source=lib/clips.sh
. "$here/lib/clips.sh"
[ "${KEEP_TMP:-0}" = 1 ] && args+=(--keep-tmp)
text_file="$repo/pipelines/bench/clip1080.gst"
clip="$(make_clip "$text_file")"
/usr/bin/python3 "$here/lib/desktop.py" --ftgst "$FTGST" --clip "$clip" --pipeline-file "${text_file#"$repo"/}" \
  --runs "$RUNS" "${args[@]}"
