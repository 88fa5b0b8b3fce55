#!/usr/bin/env bash
# Benchmark: LUTKernel.apply (a 33^3 tetrahedral look on a 1080p 8-bit frame) against ffmpeg's lut3d
# filter on the same frame and LUT, in CPU time per frame; also the table build time, memory, and
# accuracy (against ffmpeg's output, and against the Double reference on all 2^24 inputs).
#
#   bench/lut.sh            human-readable report on stdout (progress on stderr)
#   bench/lut.sh --json     one JSON object on stdout instead
#
# Environment:
#   FTGST_BENCH=path  ftgst-bench binary (default: <repo>/.build/release/ftgst-bench)
#   RUNS=n            runs per side (default 5), after 1 warm-up each
#   FRAMES=n          frames per run (default 60)
#   EXHAUSTIVE=0      skip the accuracy check against the Double reference (saves ~10 s)
#   DEPTH=16          the 16-bit path instead: LUTKernel16 on the frame widened to RGBA64_LE,
#                     against ffmpeg's lut3d on rgba64le (make bench-lut16)
#   KEEP_TMP=1        keep the scratch directory (LUT, outputs) afterwards
#
# Exit status: 0 when everything ran, whatever the figures say (this is a
# measurement, not a test); non-zero when a command failed or wrote no output.
# See bench/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"

args=()
for arg in "$@"; do
  case "$arg" in
    --json) args+=(--json) ;;
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/lut.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

BENCH="${FTGST_BENCH:-$repo/.build/release/ftgst-bench}"
RUNS="${RUNS:-5}"
FRAMES="${FRAMES:-60}"
PY=/usr/bin/python3
FRAME_DIR="$repo/.build/bench"
TEXT="$repo/pipelines/bench/lutframe.ffmpeg"

die() { echo "bench/lut.sh: $*" >&2; exit 1; }

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$RUNS'"
[[ "$FRAMES" =~ ^[1-9][0-9]*$ ]] && [ "$FRAMES" -ge 2 ] || die "FRAMES must be an integer >= 2, got '$FRAMES'"
command -v ffmpeg >/dev/null || die "ffmpeg not found (run scripts/deps)"
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) not found (run scripts/deps)"
[ -x "$PY" ] || die "$PY not found"
[ -x "$BENCH" ] || die "ftgst-bench not found or not executable: $BENCH (build with 'swift build -c release' or set FTGST_BENCH=...)"
[ -f "$TEXT" ] || die "missing frame text $TEXT"

# --- the frame: generated once from its text with ffmpeg, cached under .build/bench/; an edited text makes a
# new frame. ---
frame="$FRAME_DIR/lutframe.rgb"
pipeline_text="$(sed -e 's/#.*$//' "$TEXT" | tr '\n' ' ')"
if [ ! -s "$frame" ] || [ ! -f "$frame.txt" ] || [ "$(cat "$frame.txt")" != "$pipeline_text" ]; then
  mkdir -p "$FRAME_DIR"
  partial="$FRAME_DIR/.lutframe.partial.rgb"
  rm -f "$partial"
  read -r -a words <<<"$pipeline_text"
  ffargs=()
  for w in "${words[@]}"; do ffargs+=("${w//@OUT@/$partial}"); done
  echo "bench/lut.sh: generating $frame from ${TEXT#"$repo"/} ..." >&2
  ffmpeg "${ffargs[@]}" >&2 || { rm -f "$partial"; die "frame generation failed: $TEXT"; }
  [ -s "$partial" ] || die "frame generation wrote nothing: $TEXT"
  mv -f "$partial" "$frame"
  printf '%s' "$pipeline_text" >"$frame.txt"
fi

[ "${KEEP_TMP:-0}" = 1 ] && args+=(--keep-tmp)
[ "${EXHAUSTIVE:-1}" = 0 ] && args+=(--no-exhaustive)
case "${DEPTH:-8}" in
  8) ;;
  16) args+=(--depth 16) ;;
  *) die "DEPTH must be 8 or 16, got '$DEPTH'" ;;
esac

exec "$PY" "$here/lib/lut.py" --bench "$BENCH" --frame "$frame" --width 1920 --height 1080 \
  --runs "$RUNS" --frames "$FRAMES" --pipeline-file "${TEXT#"$repo"/}" "${args[@]}"
