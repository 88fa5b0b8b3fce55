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

# shellcheck source=lib/driver.sh
. "$here/lib/driver.sh"
bench_driver storyboard.sh 5 2,17 "$@"

text_file="$repo/pipelines/bench/story120.gst"
[ -f "$text_file" ] || die "missing clip text $text_file"
clip="$(make_clip "$text_file")"

"$PY" "$here/lib/storyboard.py" --clip "$clip" --ftgst "$FTGST" --runs "$RUNS" \
  --pipeline-file "${text_file#"$repo"/}" "${json[@]}" "${keep[@]}"
