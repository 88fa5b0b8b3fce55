#!/usr/bin/env bash
# Benchmark: the warm previews of `ftgst serve` (issue 12, item 3), driven through its stdio protocol by a small
# python3 client that writes JSON-RPC lines and times each request to its answer. Medians over CALLS calls of:
#   (a) changing only the intensity of a 1280x720 JPEG preview (target <= 16 ms);
#   (b) changing only the creative LUT, two 33^3 looks alternating after both were seen once;
#   (c) the first preview of a new source (a fresh engine each call) against one-shot `ftgst preview`;
#   (d) the engine's VmRSS/VmHWM (/proc) with one 1080p source open and two looks;
#   (e) new exact times within the first GOP (keyframes at 0 and 8.3 s) of the 1080p clip, answered by the kept
#       pipeline: forward steps of one frame, of 0.5 s, and backward jumps, each a median of its own (target
#       <= 60 ms), and the engine's memory with that pipeline kept;
#   (f) the same read from the clip's mezzanine (`ftgst mezzanine`, timed once; target <= 25 ms).
#
#   bench/serve.sh            human-readable report on stdout (progress on stderr)
#   bench/serve.sh --json     one JSON object on stdout instead
#
# Environment:
#   FTGST=path     binary under test (default: <repo>/.build/release/ftgst)
#   CALLS=n        calls per median (default 30)
#   KEEP_TMP=1     keep the scratch directory afterwards
#
# Exit status: 0 when everything ran, whatever the figures say (a measurement, not a test). See bench/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"

json=()
for arg in "$@"; do
  case "$arg" in
    --json) json=(--json) ;;
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/serve.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

FTGST="${FTGST:-$repo/.build/release/ftgst}"
BENCH="$(dirname "$FTGST")/ftgst-bench"
CALLS="${CALLS:-30}"
PY=/usr/bin/python3
CLIP_DIR="$repo/.build/bench"

die() { echo "bench/serve.sh: $*" >&2; exit 1; }

[[ "$CALLS" =~ ^[1-9][0-9]*$ ]] || die "CALLS must be a positive integer, got '$CALLS'"
for tool in gst-launch-1.0 ffmpeg; do
  command -v "$tool" >/dev/null || die "$tool not found (run scripts/deps)"
done
[ -x "$PY" ] || die "$PY not found"
[ -x "$FTGST" ] || die "ftgst binary not found or not executable: $FTGST (make release, or set FTGST=...)"
[ -x "$BENCH" ] || die "ftgst-bench not found beside ftgst: $BENCH (make release)"

# The 1080p clip (bench/lib/clips.sh) and the 720p JPEG, each generated once from its text under .build/bench/.
# shellcheck source=lib/clips.sh
. "$here/lib/clips.sh"
clip="$(make_clip "$repo/pipelines/bench/clip1080.gst")"
photo_text="$repo/pipelines/bench/photo720.ffmpeg"
photo="$CLIP_DIR/photo720.jpg"
photo_words="$(sed -e 's/#.*$//' "$photo_text" | tr '\n' ' ')"
if [ ! -s "$photo" ] || [ "$(cat "$photo.txt" 2>/dev/null)" != "$photo_words" ]; then
  mkdir -p "$CLIP_DIR"
  read -r -a words <<<"$photo_words"
  args=()
  for w in "${words[@]}"; do args+=("${w//@OUT@/$photo.partial.jpg}"); done
  echo "bench: generating $photo from ${photo_text#"$repo"/} ..." >&2
  ffmpeg "${args[@]}" >&2 || die "photo generation failed"
  mv -f "$photo.partial.jpg" "$photo"
  printf '%s' "$photo_words" >"$photo.txt"
fi

keep=()
[ "${KEEP_TMP:-0}" = 1 ] && keep=(--keep-tmp)
"$PY" "$here/lib/serve.py" --ftgst "$FTGST" --bench "$BENCH" --photo "$photo" --clip "$clip" --calls "$CALLS" \
  "${json[@]}" "${keep[@]}"
