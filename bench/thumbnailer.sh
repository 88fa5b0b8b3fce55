#!/usr/bin/env bash
# Benchmark: `ftgst thumbnailer -s 256` (the desktop thumbnailer's job) against ffmpegthumbnailer, the
# thumbnailer Linux file managers use, on the 1080p bench clips; each tool picks its own frame.
#
#   bench/thumbnailer.sh [--json]     RUNS=n (default 9), FTGST=path, CLIPS="a.gst b.ffmpeg"
#
# Exit status 0 whatever the figures; non-zero when a command failed or wrote no PNG. See bench/README.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
FTGST="${FTGST:-$repo/.build/release/ftgst}"
CLIP_DIR="$repo/.build/bench"
die() { echo "bench/thumbnailer.sh: $*" >&2; exit 1; }
json=()
case "${1:-}" in --json) json=(--json) ;; "") ;; *) die "unknown argument: $1" ;; esac
command -v ffmpegthumbnailer >/dev/null || die "ffmpegthumbnailer not found (run scripts/deps)"
[ -x "$FTGST" ] || die "no ftgst at $FTGST (make release)"
# shellcheck source=lib/clips.sh
. "$here/lib/clips.sh"
for text in ${CLIPS:-clip1080.gst web1080.ffmpeg}; do
  clip="$(make_clip "$repo/pipelines/bench/$text")"
  /usr/bin/python3 "$here/lib/thumbnailer.py" --clip "$clip" --ftgst "$FTGST" --runs "${RUNS:-9}" \
    --pipeline-file "pipelines/bench/$text" "${json[@]}"
done
