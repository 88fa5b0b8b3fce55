"""Measurement half of bench/tonemap.sh: one exact 320-px JPEG thumbnail of a PQ (HDR10) clip, tone-mapped to
SDR BT.709, `ftgst thumb` (its default --tone-map on) against ffmpeg's zscale + tonemap chain on the same frame.
The same two without a tone map (`--tone-map off`; ffmpeg's plain scale) are measured in the same run, so the
tone map's own cost on each side is the difference.

With --export, the whole clip exported instead: `ftgst export --preset h264-mp4 --audio none` (tone-mapped by
default) against ffmpeg's zscale + tonemap chain into libx264 at the preset's settings (veryfast, CRF 20, GOP 250),
and both without a tone map.

Called by bench/tonemap.sh once the clip exists; not meant to be run on its own (but it can be: see --help).
"""

import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

# 5.52 s is the start of frame 138 at 25 fps: ffmpeg -ss takes the first frame at or after the time and ftgst the
# frame on screen at it, so a time on a frame start makes both show the same frame.
SEEK_MS = 5520
BOX = 320
# The reference chain (zscale + tonemap) with the Möbius curve ToneMapCLITests compares against (the
# closest of tonemap's curves to BT.2390's; hable costs the same and looks darker), then bench/thumb.sh's scaler.
# It ends in RGB, not the issue's `zscale=t=bt709:m=bt709:r=tv,format=yuv420p`: that hands the JPEG encoder BT.709
# YCbCr, which it stores as is in a JFIF file (read back as BT.601: the red bar comes out dark red).
FFMPEG_TONEMAP = ("zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=mobius:desat=0,"
                  "zscale=t=bt709,format=gbrp,scale=320:-2")
SIDES = ("ftgst", "ffmpeg", "ftgst-off", "ffmpeg-off")
# The export's ffmpeg side: the same chain ending in BT.709 4:2:0 for x264, tagged as ftgst's output is.
FFMPEG_EXPORT_TONEMAP = ("zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=mobius:desat=0,"
                         "zscale=t=bt709:m=bt709:r=tv,format=yuv420p")
X264 = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-g", "250", "-profile:v", "high"]


def fail(msg, tmp=None):
    benchlib.fail("bench/tonemap", msg, tmp)


def export_command(side, ftgst, clip, tmp, name):
    out = os.path.join(tmp, f"{name}.mp4")
    if side.startswith("ftgst"):
        return [ftgst, "export", clip, "--preset", "h264-mp4", "--audio", "none", "--overwrite",
                "--tone-map", "off" if side.endswith("-off") else "on", "-o", out]
    chain = ["-pix_fmt", "yuv420p"] if side.endswith("-off") else [
        "-vf", FFMPEG_EXPORT_TONEMAP, "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709"]
    return ["ffmpeg", "-v", "error", "-y", "-i", clip, "-an", *chain, *X264, out]


def command(side, ftgst, clip, tmp, name, export=False):
    if export:
        return export_command(side, ftgst, clip, tmp, name)
    out = os.path.join(tmp, f"{name}.jpg")
    if side.startswith("ftgst"):
        return [ftgst, "thumb", clip, "--time-ms", str(SEEK_MS), "--tolerance-ms", "0",
                "--max-width", str(BOX), "--max-height", str(BOX), "--format", "jpeg",
                "--tone-map", "off" if side.endswith("-off") else "on", "-o", out]
    chain = f"scale={BOX}:-2" if side.endswith("-off") else FFMPEG_TONEMAP
    return ["ffmpeg", "-v", "error", "-y", "-ss", f"{SEEK_MS / 1000:g}", "-i", clip,
            "-frames:v", "1", "-vf", chain, "-q:v", "3", out]


def main():
    ap = benchlib.clip_arguments(__doc__, 5)
    ap.add_argument("--export", action="store_true", help="export the whole clip instead of one thumbnail")
    a = benchlib.parse_runs(ap, "bench/tonemap")
    clip = os.path.abspath(a.clip)
    tmp = tempfile.mkdtemp(prefix="ftgst-bench-tonemap-")
    samples = {side: [] for side in SIDES}

    def one(side, name, record):
        cmd = command(side, a.ftgst, clip, tmp, name, a.export)
        s = benchlib.timed_run(cmd)
        if s.returncode != 0:
            fail(f"{side} exited with status {s.returncode}\n  command: {benchlib.shell_join(cmd)}\n"
                 f"  stderr: {s.stderr.strip()[-2000:]}", tmp)
        if a.export and not (os.path.exists(cmd[-1]) and os.path.getsize(cmd[-1]) > 0):
            fail(f"{side} wrote no export at {cmd[-1]}\n  command: {benchlib.shell_join(cmd)}", tmp)
        if not a.export and benchlib.jpeg_size(cmd[-1]) != (320, 180):
            fail(f"{side} wrote no 320x180 JPEG at {cmd[-1]}\n  command: {benchlib.shell_join(cmd)}", tmp)
        if s.rss_kib is None:
            fail(f"GNU time gave no figures for {side}", tmp)
        if record:
            samples[side].append(s)

    log = benchlib.log
    log(f"bench/tonemap: clip {clip}; {a.runs} runs per side after 1 warm-up; scratch {tmp}")
    for side in SIDES:
        one(side, f"{side}-warmup", False)
    def picture(side):
        """The warm-up's picture: the thumbnail, or the export's frame at SEEK_MS as RGB (read through its tags)."""
        if not a.export:
            return os.path.join(tmp, f"{side}-warmup.jpg")
        frame = os.path.join(tmp, f"{side}-warmup.png")
        benchlib.timed_run(["ffmpeg", "-v", "error", "-y", "-i", os.path.join(tmp, f"{side}-warmup.mp4"), "-vf",
                            f"select=eq(n\\,{SEEK_MS * 25 // 1000}),zscale=r=pc,format=gbrp", "-frames:v", "1", frame])
        return frame

    psnr = benchlib.psnr_db(picture("ftgst"), picture("ffmpeg"))
    psnr_off = benchlib.psnr_db(picture("ftgst-off"), picture("ffmpeg"))
    for i in range(1, a.runs + 1):
        for side in SIDES:
            one(side, f"{side}-{i}", True)
        log(f"  run {i}/{a.runs}: " + "  ".join(
            f"{side} {samples[side][-1].wall_s * 1000:6.1f} ms {samples[side][-1].rss_kib / 1024:5.1f} MiB"
            for side in SIDES))

    results = {}
    for side, ss in samples.items():
        results[side] = {
            "wall_ms": benchlib.summary([round(s.wall_s * 1000, 2) for s in ss]),
            "peak_rss_mib": benchlib.summary([round(s.rss_kib / 1024, 2) for s in ss]),
            "cpu_ms": benchlib.summary([round((s.user_s + s.sys_s) * 1000, 1) for s in ss]),
        }
    med = lambda side, key: results[side][key]["median"]  # noqa: E731
    report = {
        "benchmark": "tonemap-export" if a.export else "tonemap",
        "description": "the whole 1080p PQ HEVC clip exported to H.264 (x264 veryfast, CRF 20), tone-mapped to SDR "
                       "BT.709" if a.export else
                       f"one exact {BOX}-px JPEG thumbnail at {SEEK_MS / 1000:g} s of a 1080p PQ HEVC clip, "
                       "tone-mapped to SDR BT.709",
        "runs": a.runs,
        "order": "round robin: " + ", ".join(SIDES),
        "clip": clip,
        "pipeline_file": a.pipeline_file,
        "commands": {side: benchlib.shell_join(command(side, a.ftgst, clip, "@TMP@", f"{side}-@I@", a.export))
                     for side in SIDES},
        "machine": benchlib.machine_info(),
        "results": results,
        "psnr_db_against_ffmpeg_tonemap": {"ftgst": psnr, "ftgst-off": psnr_off},
        "ratios": {
            "wall": round(med("ftgst", "wall_ms") / med("ffmpeg", "wall_ms"), 3),
            "peak_rss": round(med("ftgst", "peak_rss_mib") / med("ffmpeg", "peak_rss_mib"), 3),
        },
        "tone_map_cost_ms": {
            "ftgst": round(med("ftgst", "wall_ms") - med("ftgst-off", "wall_ms"), 1),
            "ffmpeg": round(med("ffmpeg", "wall_ms") - med("ffmpeg-off", "wall_ms"), 1),
        },
    }
    if a.keep_tmp:
        log(f"bench/tonemap: scratch directory kept: {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        print(json.dumps(report))
        return
    print(f"tonemap benchmark: {report['description']}")
    print(f"  clip {clip}" + (f" (from {a.pipeline_file})" if a.pipeline_file else ""))
    print(f"  {'side':<11} {'wall ms':>9} {'min':>9} {'max':>9}   {'RSS MiB':>9}   {'CPU ms':>9}")
    for side in SIDES:
        r = results[side]
        w = r["wall_ms"]
        print(f"  {side:<11} {w['median']:9.1f} {w['min']:9.1f} {w['max']:9.1f}   "
              f"{r['peak_rss_mib']['median']:9.1f}   {r['cpu_ms']['median']:9.1f}")
    print(f"  ratios ftgst/ffmpeg (tone-mapped): wall {report['ratios']['wall']}, "
          f"peak RSS {report['ratios']['peak_rss']}")
    print(f"  the tone map's own cost (on - off): ftgst {report['tone_map_cost_ms']['ftgst']} ms, "
          f"ffmpeg {report['tone_map_cost_ms']['ffmpeg']} ms")
    print(f"  PSNR against ffmpeg's tone-mapped {'export (its frame at 5.52 s)' if a.export else 'thumbnail'}: "
          f"ftgst {psnr} dB, "
          f"ftgst --tone-map off {psnr_off} dB")
    for side in SIDES:
        print(f"  {side}: {report['commands'][side]}")


if __name__ == "__main__":
    main()
