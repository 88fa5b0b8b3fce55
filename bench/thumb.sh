#!/usr/bin/env bash
# Benchmark: `ftgst thumb` against ffmpeg for one exact-seek 320x320-box JPEG at 5.5 s
# of a 1080p H.264 clip whose only keyframe before 5.5 s is at 0 s, and for one
# 512x512-box JPEG of a 24-megapixel JPEG photo (texts named photo*).
#
#   bench/thumb.sh            human-readable report on stdout (progress on stderr)
#   bench/thumb.sh --json     one JSON object on stdout instead
#
# Environment:
#   FTGST=path     binary under test (default: <repo>/.build/release/ftgst)
#   RUNS=n         timed runs per side (default 9), after 1 warm-up per side
#   KEEP_TMP=1     keep the scratch directory (thumbnails, cache) afterwards
#   CLIPS="a.gst b.ffmpeg"  clip texts under pipelines/bench/ to measure (default: all four)
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
    -h|--help) sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/thumb.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

FTGST="${FTGST:-$repo/.build/release/ftgst}"
RUNS="${RUNS:-9}"
PY=/usr/bin/python3
CLIP_DIR="$repo/.build/bench"

die() { echo "bench/thumb.sh: $*" >&2; exit 1; }

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$RUNS'"
for tool in gst-launch-1.0 ffmpeg ffprobe; do
  command -v "$tool" >/dev/null || die "$tool not found (run scripts/deps)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) not found (run scripts/deps)"
[ -x "$PY" ] || die "$PY not found"
if [[ "$FTGST" == */* ]]; then
  [ -x "$FTGST" ] || die "ftgst binary not found or not executable: $FTGST (build with 'swift build -c release' or set FTGST=...)"
  FTGST="$(cd "$(dirname "$FTGST")" && pwd)/$(basename "$FTGST")"
else
  command -v "$FTGST" >/dev/null || die "ftgst binary not found on PATH: $FTGST"
fi

# --- the clips: each generated once from its text, cached under .build/bench/ (bench/lib/clips.sh). ---
# shellcheck source=lib/clips.sh
. "$here/lib/clips.sh"

keep=()
[ "${KEEP_TMP:-0}" = 1 ] && keep=(--keep-tmp)

# CLIPS: which texts under pipelines/bench to measure (default: the three kinds of clip and the photo).
for text in ${CLIPS:-clip1080.gst gop30.gst web1080.ffmpeg photo24mp.ffmpeg}; do
  text_file="$repo/pipelines/bench/$text"
  [ -f "$text_file" ] || die "missing clip text $text_file"
  kind=()
  case "$text" in
    photo*) kind=(--photo); clip="$(make_clip "$text_file" jpg)" ;;
    *) clip="$(make_clip "$text_file")" ;;
  esac
  "$PY" "$here/lib/thumb.py" --clip "$clip" --ftgst "$FTGST" --runs "$RUNS" \
    --pipeline-file "${text_file#"$repo"/}" "${kind[@]}" "${json[@]}" "${keep[@]}"
done
