#!/usr/bin/env bash
# Benchmark: exact-time `ftgst preview` of a 60 s 1080p long-GOP clip (keyframe every 250 frames) at 20
# seeded random times, decoding the source (--mezzanine off) and reading its mezzanine, plus the time to
# build the mezzanine (`ftgst mezzanine`).
#
#   bench/mezzanine.sh            human-readable report on stdout (progress on stderr)
#   bench/mezzanine.sh --json     one JSON object on stdout instead
#
# Environment:
#   FTGST=path     binary under test (default: <repo>/.build/release/ftgst)
#   TIMES=n        previews per side (default 20), at seeded random times
#   SEED=n         seed of the times (default 7)
#   KEEP_TMP=1     keep the scratch directory (previews, mezzanine) afterwards
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
    *) echo "bench/mezzanine.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

FTGST="${FTGST:-$repo/.build/release/ftgst}"
TIMES="${TIMES:-20}"
SEED="${SEED:-7}"
PY=/usr/bin/python3
CLIP_DIR="$repo/.build/bench"
TEXT="$repo/pipelines/bench/long1080.gst"

die() { echo "bench/mezzanine.sh: $*" >&2; exit 1; }

[[ "$TIMES" =~ ^[1-9][0-9]*$ ]] || die "TIMES must be a positive integer, got '$TIMES'"
[[ "$SEED" =~ ^[0-9]+$ ]] || die "SEED must be a whole number, got '$SEED'"
for tool in gst-launch-1.0 ffmpeg ffprobe; do
  command -v "$tool" >/dev/null || die "$tool not found (run scripts/deps)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) not found (run scripts/deps)"
[ -x "$PY" ] || die "$PY not found"
[ -x "$FTGST" ] || die "ftgst binary not found or not executable: $FTGST (build with 'swift build -c release' or set FTGST=...)"
FTGST="$(cd "$(dirname "$FTGST")" && pwd)/$(basename "$FTGST")"

# The clip: generated once from its text, cached under .build/bench/ (bench/lib/clips.sh).
# shellcheck source=lib/clips.sh
. "$here/lib/clips.sh"
clip="$(make_clip "$TEXT")"

keep=()
[ "${KEEP_TMP:-0}" = 1 ] && keep=(--keep-tmp)
"$PY" "$here/lib/mezzanine.py" --clip "$clip" --ftgst "$FTGST" --times "$TIMES" --seed "$SEED" \
  --pipeline-file "${TEXT#"$repo"/}" "${json[@]}" "${keep[@]}"
