#!/usr/bin/env bash
# Benchmark: HDR to SDR (issue 13, item 7). One exact 320-px JPEG thumbnail at 5.52 s of a 10 s 1080p PQ (HDR10)
# HEVC Main 10 clip: `ftgst thumb` (tone map on, its default) against ffmpeg's zscale + tonemap chain, and both
# without a tone map, round robin in the same run: medians of wall time, peak RSS and CPU.
#
#   bench/tonemap.sh           human-readable report on stdout (progress on stderr)
#   bench/tonemap.sh --json    one JSON object on stdout instead
#
# Environment:
#   OF=export      export the whole clip instead (ftgst export h264-mp4 against ffmpeg's chain into libx264)
#   FTGST=path     binary under test (default: <repo>/.build/release/ftgst)
#   RUNS=n         timed runs per side (default 5), after 1 warm-up per side
#   KEEP_TMP=1     keep the scratch directory (thumbnails) afterwards
#
# Exit status: 0 when everything ran, whatever the figures say (this is a
# measurement, not a test); non-zero when a command failed or wrote no output.
# See bench/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"

# shellcheck source=lib/driver.sh
. "$here/lib/driver.sh"
bench_driver tonemap.sh 5 2,17 "$@"
export_mode=()
case "${OF:-thumb}" in
  thumb) ;;
  export) export_mode=(--export) ;;
  *) die "OF must be thumb or export, got '$OF'" ;;
esac

text_file="$repo/pipelines/bench/pq1080.ffmpeg"
clip="$(make_clip "$text_file")"
"$PY" "$here/lib/tonemap.py" --clip "$clip" --ftgst "$FTGST" --runs "$RUNS" \
  --pipeline-file "${text_file#"$repo"/}" "${json[@]}" "${keep[@]}" "${export_mode[@]}"
