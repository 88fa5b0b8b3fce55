#!/usr/bin/env bash
# Benchmark: several thumbnails of one clip (issue 13, item 2). ONE `ftgst thumb` process with
# five exact times (--time-ms 1000,3000,5000,7000,9000 --tolerance-ms 0, 320x320 box, JPEG) against
# the five equivalent `ffmpeg -ss T -i CLIP -frames:v 1` processes run one after another, on
# 1080p H.264 clips (a long GOP and a keyframe every second).
#
#   bench/thumbs.sh           human-readable report on stdout (progress on stderr)
#   bench/thumbs.sh --json    one JSON object per clip on stdout instead
#
# Environment:
#   FTGST=path     binary under test (default: <repo>/.build/release/ftgst)
#   RUNS=n         timed runs per side (default 5), after 1 warm-up per side
#   KEEP_TMP=1     keep the scratch directory (thumbnails, cache) afterwards
#   CLIPS="a.gst"  clip texts under pipelines/bench/ to measure (default: clip1080.gst gop30.gst)
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
    -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/thumbs.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

FTGST="${FTGST:-$repo/.build/release/ftgst}"
RUNS="${RUNS:-5}"
PY=/usr/bin/python3
CLIP_DIR="$repo/.build/bench"

die() { echo "bench/thumbs.sh: $*" >&2; exit 1; }

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$RUNS'"
for tool in gst-launch-1.0 ffmpeg ffprobe; do
  command -v "$tool" >/dev/null || die "$tool not found (run scripts/deps)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) not found (run scripts/deps)"
[ -x "$PY" ] || die "$PY not found"
if [[ "$FTGST" == */* ]]; then
  [ -x "$FTGST" ] || die "ftgst binary not found or not executable: $FTGST (build it with 'make release' or set FTGST=...)"
  FTGST="$(cd "$(dirname "$FTGST")" && pwd)/$(basename "$FTGST")"
else
  command -v "$FTGST" >/dev/null || die "ftgst binary not found on PATH: $FTGST"
fi

# --- the clips: each generated once from its text, cached under .build/bench/ (bench/lib/clips.sh). ---
# shellcheck source=lib/clips.sh
. "$here/lib/clips.sh"

keep=()
[ "${KEEP_TMP:-0}" = 1 ] && keep=(--keep-tmp)

for text in ${CLIPS:-clip1080.gst gop30.gst}; do
  text_file="$repo/pipelines/bench/$text"
  [ -f "$text_file" ] || die "missing clip text $text_file"
  clip="$(make_clip "$text_file")"
  "$PY" "$here/lib/thumbs.py" --clip "$clip" --ftgst "$FTGST" --runs "$RUNS" \
    --pipeline-file "${text_file#"$repo"/}" "${json[@]}" "${keep[@]}"
done
