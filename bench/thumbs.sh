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

# shellcheck source=lib/driver.sh
. "$here/lib/driver.sh"
bench_driver thumbs.sh 5 2,18 "$@"

for text in ${CLIPS:-clip1080.gst gop30.gst}; do
  text_file="$repo/pipelines/bench/$text"
  [ -f "$text_file" ] || die "missing clip text $text_file"
  clip="$(make_clip "$text_file")"
  "$PY" "$here/lib/thumbs.py" --clip "$clip" --ftgst "$FTGST" --runs "$RUNS" \
    --pipeline-file "${text_file#"$repo"/}" "${json[@]}" "${keep[@]}"
done
