# Sourced by bench/thumb.sh, thumbs.sh and storyboard.sh: the set-up every such driver shares. Call
#   bench_driver NAME DEFAULT_RUNS HELP_LINES "$@"
# from the driver (HELP_LINES: the sed range of its header comment printed by --help). It parses --json and
# --help, sets json=() / keep=() (KEEP_TMP=1), FTGST (absolute, checked), RUNS, PY, CLIP_DIR and die(), checks the
# tools every measurement needs, and sources bench/lib/clips.sh (make_clip). Needs: here, repo.
die() { echo "bench/$BENCH_NAME: $*" >&2; exit 1; }

bench_driver() {
  local name="$1" default_runs="$2" help_lines="$3" arg tool
  shift 3
  json=()
  for arg in "$@"; do
    case "$arg" in
      --json) json=(--json) ;;
      -h|--help) sed -n "${help_lines}p" "$here/$name" | sed 's/^# \{0,1\}//'; exit 0 ;;
      *) echo "bench/$name: unknown argument: $arg (try --help)" >&2; exit 2 ;;
    esac
  done
  FTGST="${FTGST:-$repo/.build/release/ftgst}"
  RUNS="${RUNS:-$default_runs}"
  PY=/usr/bin/python3
  CLIP_DIR="$repo/.build/bench"
  BENCH_NAME="$name"
  [[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$RUNS'"
  for tool in gst-launch-1.0 ffmpeg ffprobe; do
    command -v "$tool" >/dev/null || die "$tool not found (run scripts/deps)"
  done
  [ -x /usr/bin/time ] || die "/usr/bin/time (GNU time) not found (run scripts/deps)"
  [ -x "$PY" ] || die "$PY not found"
  if [[ "$FTGST" == */* ]]; then
    [ -x "$FTGST" ] || die "ftgst binary not found or not executable: $FTGST (build it with 'make release' or set FTGST=...)"
    FTGST="$(cd "$(dirname "$FTGST")" && pwd)/$(basename "$FTGST")"
  else
    command -v "$FTGST" >/dev/null || die "ftgst binary not found on PATH: $FTGST"
  fi
  keep=()
  [ "${KEEP_TMP:-0}" = 1 ] && keep=(--keep-tmp)
  # shellcheck source=clips.sh
  . "$here/lib/clips.sh"
}
