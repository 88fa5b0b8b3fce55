#!/usr/bin/env bash
# Benchmark: ftgst batch (issue 13, item 4). ONE `ftgst batch JOBS.jsonl` process making 40 exact
# thumbnails (4 times, 1.5/4/6.5/9 s, from each of 10 copies of a 1080p H.264 clip; 320-px box, JPEG) against
# the same 40 `ffmpeg -ss T -i CLIP -frames:v 1 -vf scale=320:-2` processes in a row (and NPROC at a time),
# plus the rerun of the same jobs (every output valid: skipped).
#
#   bench/batch.sh           human-readable report on stdout (progress on stderr)
#   bench/batch.sh --json    one JSON object per clip text on stdout instead
#
# Environment:
#   FTGST=path     binary under test (default: <repo>/.build/release/ftgst)
#   RUNS=n         timed runs per side (default 3), after 1 warm-up per side
#   KEEP_TMP=1     keep the scratch directory afterwards
#   CLIPS="a.gst"  clip texts under pipelines/bench/ (default: gop30.gst clip1080.gst)
#   FORMAT=png     PNG pictures on both sides instead of JPEG (ffmpeg's PNG encoder at its defaults)
#
# Exit status: 0 when everything ran, whatever the figures say (this is a
# measurement, not a test); non-zero when a command failed or wrote no output.
# See bench/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"

# shellcheck source=lib/driver.sh
. "$here/lib/driver.sh"
bench_driver batch.sh 3 2,19 "$@"

for text in ${CLIPS:-gop30.gst clip1080.gst}; do
  text_file="$repo/pipelines/bench/$text"
  [ -f "$text_file" ] || die "missing clip text $text_file"
  clip="$(make_clip "$text_file")"
  "$PY" "$here/lib/batch.py" --clip "$clip" --ftgst "$FTGST" --runs "$RUNS" \
    --pipeline-file "${text_file#"$repo"/}" --format "${FORMAT:-jpg}" "${json[@]}" "${keep[@]}"
done
