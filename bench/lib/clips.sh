# Sourced by the bench/*.sh drivers: make_clip TEXT_FILE [EXT] prints the path of the clip (EXT: its extension,
# default mp4; jpg for a photo) generated from that text
# (pipelines/bench/NAME.gst with gst-launch-1.0, NAME.ffmpeg with ffmpeg), cached under $CLIP_DIR; an edited
# text makes a new clip. Needs: repo, CLIP_DIR, die.
make_clip() {  # $1 = text file, $2 = output extension (default mp4); prints the clip path
  local text_file="$1" out_ext="${2:-mp4}" name ext clip pipeline_text partial w
  name="$(basename "$text_file")"; ext="${name##*.}"; name="${name%.*}"
  clip="$CLIP_DIR/$name.$out_ext"
  pipeline_text="$(sed -e 's/#.*$//' "$text_file" | tr '\n' ' ')"
  if [ ! -s "$clip" ] || [ ! -f "$clip.txt" ] || [ "$(cat "$clip.txt")" != "$pipeline_text" ]; then
    mkdir -p "$CLIP_DIR"
    partial="$CLIP_DIR/.$name.partial.$out_ext"
    rm -f "$partial"
    # Split on whitespace (the texts use no quoting), then substitute @OUT@ per word.
    read -r -a words <<<"$pipeline_text"
    local args=()
    for w in "${words[@]}"; do args+=("${w//@OUT@/$partial}"); done
    echo "bench: generating $clip from ${text_file#"$repo"/} ..." >&2
    case "$ext" in
      gst) gst-launch-1.0 -q "${args[@]}" >&2 ;;
      ffmpeg) ffmpeg "${args[@]}" >&2 ;;
      *) false ;;
    esac || { rm -f "$partial"; die "clip generation failed: $text_file"; }
    [ -s "$partial" ] || die "clip generation wrote nothing: $text_file"
    mv -f "$partial" "$clip"
    printf '%s' "$pipeline_text" >"$clip.txt"
  fi
  printf '%s' "$clip"
}
