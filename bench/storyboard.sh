#!/usr/bin/env bash
# Benchmark: `ftgst storyboard` (12 tiles of 320 px, one every 10 s, a 10x10 grid) of a 2-minute 1080p H.264
# clip with a keyframe every 2 s, against ffmpeg's keyframe-only sprite-sheet command
# (-skip_frame nokey ... fps=1/10,scale=320:-2,tile=10x10) and its exact form (no -skip_frame: every frame
# decoded). Issue 13's target: ftgst's wall time <= ffmpeg's keyframe-only command's.
#
#   bench/storyboard.sh          human-readable report on stdout (progress on stderr)
#   bench/storyboard.sh --json   one JSON object on stdout instead
#
# Environment:
#   FTGST=path     binary under test (default: <repo>/.build/release/ftgst)
#   RUNS=n         timed runs per command (default 5), after 1 warm-up per command
#   KEEP_TMP=1     keep the scratch directory (sheets, VTT files) afterwards
#
# Exit status: 0 when everything ran, whatever the figures say (this is a
# measurement, not a test); non-zero when a command failed or wrote no output.
# See bench/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"

json=()
for arg in "$@"; do
  case "$arg" in
    --json) json=(--json) ;;
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/storyboard.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

FTGST="${FTGST:-$repo/.build/release/ftgst}"
RUNS="${RUNS:-5}"
PY=/usr/bin/python3
CLIP_DIR="$repo/.build/bench"

die() { echo "bench/storyboard.sh: $*" >&2; exit 1; }

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$RUNS'"
for tool in gst-launch-1.0 ffmpeg ffprobe; do
  command -v "$tool" >/dev/null || die "$tool not found (run scripts/deps)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) not found (run scripts/deps)"
[ -x "$PY" ] || die "$PY not found"
if [[ "$FTGST" == */* ]]; then
  [ -x "$FTGST" ] || die "ftgst binary not found or not executable: $FTGST (build with 'make release' or set FTGST=...)"
  FTGST="$(cd "$(dirname "$FTGST")" && pwd)/$(basename "$FTGST")"
else
  command -v "$FTGST" >/dev/null || die "ftgst binary not found on PATH: $FTGST"
fi

# The clip: generated once from its text (about two minutes), cached under .build/bench/ (bench/lib/clips.sh).
# shellcheck source=lib/clips.sh
. "$here/lib/clips.sh"
text_file="$repo/pipelines/bench/story120.gst"
[ -f "$text_file" ] || die "missing clip text $text_file"
clip="$(make_clip "$text_file")"

keep=()
[ "${KEEP_TMP:-0}" = 1 ] && keep=(--keep-tmp)
"$PY" "$here/lib/storyboard.py" --clip "$clip" --ftgst "$FTGST" --runs "$RUNS" \
  --pipeline-file "${text_file#"$repo"/}" "${json[@]}" "${keep[@]}"
