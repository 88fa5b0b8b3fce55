#!/usr/bin/env bash
# Benchmark: `ftgst thumb` against ffmpeg for one exact-seek 320x320-box JPEG at 5.5 s
# of a 1080p H.264 clip whose only keyframe before 5.5 s is at 0 s, and for one
# 512x512-box JPEG of a 24-megapixel JPEG photo (texts named photo*; photo*-png and
# photo*-webp are PNG and WebP photos: make bench-photos).
#
#   bench/thumb.sh            human-readable report on stdout (progress on stderr)
#   bench/thumb.sh --json     one JSON object on stdout instead
#
# Environment:
#   FTGST=path     binary under test (default: <repo>/.build/release/ftgst)
#   RUNS=n         timed runs per side (default 9), after 1 warm-up per side
#   KEEP_TMP=1     keep the scratch directory (thumbnails, cache) afterwards
#   CLIPS="a.gst b.ffmpeg"  clip texts under pipelines/bench/ to measure (default: all four; phone4k-hlg.ffmpeg
#                           and hevc1080.ffmpeg are the HEVC ones, written as .mov: make bench-hevc)
#
# Exit status: 0 when everything ran, whatever the figures say (this is a
# measurement, not a test); non-zero when a command failed or wrote no output.
# See bench/README.md.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"

# shellcheck source=lib/driver.sh
. "$here/lib/driver.sh"
bench_driver thumb.sh 9 2,16 "$@"

# CLIPS: which texts under pipelines/bench to measure (default: the three kinds of clip and the photo).
for text in ${CLIPS:-clip1080.gst gop30.gst web1080.ffmpeg photo24mp.ffmpeg}; do
  text_file="$repo/pipelines/bench/$text"
  [ -f "$text_file" ] || die "missing clip text $text_file"
  kind=()
  case "$text" in
    photo*-png.*) kind=(--photo); clip="$(make_clip "$text_file" png)" ;;
    photo*-webp.*) kind=(--photo); clip="$(make_clip "$text_file" webp)" ;;
    photo*) kind=(--photo); clip="$(make_clip "$text_file" jpg)" ;;
    phone*)
      # ffmpeg 5.1 writes a display matrix only when it copies the stream: turned here (cached beside the clip).
      coded="$(make_clip "$text_file" mov)"; clip="${coded%.mov}-rot90.mov"
      if [ ! -s "$clip" ] || [ "$coded" -nt "$clip" ]; then
        ffmpeg -v error -y -i "$coded" -c copy -metadata:s:v:0 rotate=90 -f mov "$clip.partial" && mv -f "$clip.partial" "$clip" \
          || die "could not turn $coded"
      fi ;;
    hevc*) clip="$(make_clip "$text_file" mov)" ;;
    *) clip="$(make_clip "$text_file")" ;;
  esac
  "$PY" "$here/lib/thumb.py" --clip "$clip" --ftgst "$FTGST" --runs "$RUNS" \
    --pipeline-file "${text_file#"$repo"/}" "${kind[@]}" "${json[@]}" "${keep[@]}"
done
