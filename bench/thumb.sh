#!/usr/bin/env bash
# Benchmark: `ftgst thumb` against ffmpeg for one exact-seek 320x320-box JPEG at 5.5 s
# of a 1080p H.264 clip whose only keyframe before 5.5 s is at 0 s.
#
#   bench/thumb.sh            human-readable report on stdout (progress on stderr)
#   bench/thumb.sh --json     one JSON object on stdout instead
#
# Environment:
#   FTGST=path     binary under test (default: <repo>/.build/release/ftgst)
#   RUNS=n         timed runs per side (default 9), after 1 warm-up per side
#   KEEP_TMP=1     keep the scratch directory (thumbnails, cache) afterwards
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
    -h|--help) sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/thumb.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

FTGST="${FTGST:-$repo/.build/release/ftgst}"
RUNS="${RUNS:-9}"
PY=/usr/bin/python3
GST_TEXT="$repo/pipelines/bench/clip1080.gst"
CLIP_DIR="$repo/.build/bench"
CLIP="$CLIP_DIR/clip1080.mp4"

die() { echo "bench/thumb.sh: $*" >&2; exit 1; }

[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$RUNS'"
for tool in gst-launch-1.0 ffmpeg ffprobe; do
  command -v "$tool" >/dev/null || die "$tool not found (run scripts/deps)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) not found (run scripts/deps)"
[ -x "$PY" ] || die "$PY not found"
[ -f "$GST_TEXT" ] || die "missing pipeline text $GST_TEXT"
if [[ "$FTGST" == */* ]]; then
  [ -x "$FTGST" ] || die "ftgst binary not found or not executable: $FTGST (build with 'swift build -c release' or set FTGST=...)"
  FTGST="$(cd "$(dirname "$FTGST")" && pwd)/$(basename "$FTGST")"
else
  command -v "$FTGST" >/dev/null || die "ftgst binary not found on PATH: $FTGST"
fi

# --- the clip: generated once from the pipeline text, cached under .build/bench/ ---
# The text it was made from is kept next to it; an edited .gst file makes a new clip.
pipeline_text="$(sed -e 's/#.*$//' "$GST_TEXT" | tr '\n' ' ')"
if [ ! -s "$CLIP" ] || [ ! -f "$CLIP.gst" ] || [ "$(cat "$CLIP.gst")" != "$pipeline_text" ]; then
  mkdir -p "$CLIP_DIR"
  partial="$CLIP.partial.mp4"
  rm -f "$partial"
  # Split on whitespace (the pipeline text uses no quoting), then substitute @OUT@ per word
  # so the output path stays one argument even if it contains spaces.
  read -r -a words <<<"$pipeline_text"
  args=()
  for w in "${words[@]}"; do args+=("${w//@OUT@/$partial}"); done
  echo "bench/thumb.sh: generating $CLIP from ${GST_TEXT#"$repo"/} ..." >&2
  gst-launch-1.0 -q "${args[@]}" >&2 || { rm -f "$partial"; die "clip generation failed"; }
  [ -s "$partial" ] || die "clip generation wrote nothing"
  mv -f "$partial" "$CLIP"
  printf '%s' "$pipeline_text" >"$CLIP.gst"
fi

keep=()
[ "${KEEP_TMP:-0}" = 1 ] && keep=(--keep-tmp)

exec "$PY" "$here/lib/thumb.py" --clip "$CLIP" --ftgst "$FTGST" --runs "$RUNS" \
  --pipeline-file "${GST_TEXT#"$repo"/}" "${json[@]}" "${keep[@]}"
