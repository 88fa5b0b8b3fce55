#!/usr/bin/env bash
# Benchmark: `ftgst export` with a 33^3 look to the h264-mp4 preset against ffmpeg's
# `-vf lut3d=...:interp=tetrahedral -c:v libx264` with the same encoder settings (veryfast, constant
# quality 20, High, 4:2:0), on the same 10 s 1080p clips: wall time and peak memory, medians and ratios;
# both again without the look; and ftgst's peak memory on a clip three times as long.
#
#   bench/export.sh            human-readable report on stdout (progress on stderr)
#   bench/export.sh --json     one JSON object on stdout instead
#
# Environment:
#   FTGST=path        ftgst binary (default: <repo>/.build/release/ftgst)
#   FTGST_BENCH=path  ftgst-bench binary, writes the LUT (default: <repo>/.build/release/ftgst-bench)
#   RUNS=n            runs per command (default 3), after 1 warm-up each
#   CLIPS="a b"       texts under pipelines/bench (default: clip1080.gst web1080.ffmpeg)
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
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/export.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

FTGST="${FTGST:-$repo/.build/release/ftgst}"
BENCH="${FTGST_BENCH:-$repo/.build/release/ftgst-bench}"
RUNS="${RUNS:-3}"
PY=/usr/bin/python3
CLIP_DIR="$repo/.build/bench"

die() { echo "bench/export.sh: $*" >&2; exit 1; }

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$RUNS'"
for tool in gst-launch-1.0 ffmpeg ffprobe; do
  command -v "$tool" >/dev/null || die "$tool not found (run scripts/deps)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) not found (run scripts/deps)"
[ -x "$FTGST" ] || die "ftgst not found: $FTGST (make release)"
[ -x "$BENCH" ] || die "ftgst-bench not found: $BENCH (make release)"

# shellcheck source=lib/clips.sh
. "$here/lib/clips.sh"
[ "${KEEP_TMP:-0}" = 1 ] && args+=(--keep-tmp)

# CLIPS: which texts under pipelines/bench to export. clip1080.gst (moving SMPTE bars, ~12 Mbit/s at CRF 20) is
# expensive to encode; web1080.ffmpeg (testsrc2, mostly flat) is cheap, so the look's cost weighs more there.
# The memory-growth check (the same export of clip1080-30s.gst, three times as long) runs with clip1080.gst.
for text in ${CLIPS:-clip1080.gst web1080.ffmpeg}; do
  text_file="$repo/pipelines/bench/$text"
  [ -f "$text_file" ] || die "missing clip text $text_file"
  clip="$(make_clip "$text_file")"
  long=()
  if [ "$text" = clip1080.gst ]; then long=(--long-clip "$(make_clip "$repo/pipelines/bench/clip1080-30s.gst")"); fi
  "$PY" "$here/lib/export.py" --ftgst "$FTGST" --bench "$BENCH" --clip "$clip" "${long[@]}" \
    --pipeline-file "${text_file#"$repo"/}" --runs "$RUNS" "${args[@]}"
done
