"""Measurement half of bench/export.sh: `ftgst export` against ffmpeg (lut3d + libx264) on the same clip.

Every command runs as its own process under GNU time (wall, peak RSS, CPU); the four commands take turns
in each round so machine noise falls on all of them alike. Medians are reported, with ratios
ftgst / ffmpeg. The encoders are configured alike: x264 veryfast, constant quality 20 (x264enc
pass=qual quantizer=20 ↔ libx264 -crf 20), High profile, 4:2:0, no audio. The outputs are compared
with PSNR (ours against ffmpeg's) to show both applied the same look.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

WALL_TARGET = 0.5   # ftgst wall / ffmpeg wall, with the look
RSS_TARGET = 1.0    # ftgst peak RSS / ffmpeg peak RSS, with the look
log = benchlib.log


def fail(msg, tmp=None):
    benchlib.fail("bench/export", msg, tmp)


def timed_ok(cmd, tmp):
    s = benchlib.timed_run(cmd)
    if s.returncode != 0:
        fail(f"exit status {s.returncode}\n  command: {benchlib.shell_join(cmd)}\n  stderr: {s.stderr.strip()[-2000:]}",
             tmp)
    return s


def frames_of(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets", "-show_entries",
                          "stream=nb_read_packets,pix_fmt,profile", "-of", "json", path],
                         capture_output=True, text=True).stdout
    return json.loads(out)["streams"][0]


def first_frame_rgb(path, out):
    """Frame 0 as raw rgb24, converted with the BT.709 limited-range matrix the clips are tagged with."""
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", path, "-frames:v", "1", "-vf",
                    "scale=in_color_matrix=bt709:in_range=tv,format=rgb24", "-f", "rawvideo", out], check=True)
    return out


def psnr_raw(a, b):
    """PSNR (dB) of two same-sized raw byte files, on every 7th byte (plenty for a 6 MB frame)."""
    x = open(a, "rb").read()[::7]
    y = open(b, "rb").read()[::7]
    if len(x) != len(y) or not x:
        return None
    mse = sum((p - q) ** 2 for p, q in zip(x, y)) / len(x)
    return float("inf") if mse == 0 else round(10 * math.log10(255 * 255 / mse), 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ftgst", required=True)
    ap.add_argument("--bench", required=True, help="ftgst-bench (writes the LUT)")
    ap.add_argument("--clip", required=True)
    ap.add_argument("--long-clip", default=None, help="the same content, longer: peak memory must not grow")
    ap.add_argument("--pipeline-file", default=None, help="only reported")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep-tmp", action="store_true")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="ftgst-bench-export-")
    cube = os.path.join(tmp, "look.cube")
    subprocess.run([a.bench, "write-cube", cube, "--size", "33"], check=True, capture_output=True)
    workspace = os.path.join(tmp, "workspace")

    def ours(clip, out, look=True):
        cmd = [a.ftgst, "export", clip, "-o", out, "--preset", "h264-mp4", "--audio", "none", "--progress", "none",
               "--workspace", workspace, "--overwrite"]
        return cmd + (["--creative-lut", cube] if look else [])

    def ffmpeg(clip, out, look=True):
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", clip]
        if look:
            cmd += ["-vf", f"lut3d=file={cube}:interp=tetrahedral"]
        return cmd + ["-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-profile:v", "high",
                      "-pix_fmt", "yuv420p", "-an", out]

    out = {k: os.path.join(tmp, k + ".mp4") for k in ("ours", "ours_plain", "ff", "ff_plain", "ours_long")}
    clip_name = a.pipeline_file or os.path.basename(a.clip)
    commands = {
        "ftgst_look": ours(a.clip, out["ours"]),
        "ffmpeg_look": ffmpeg(a.clip, out["ff"]),
        "ftgst_plain": ours(a.clip, out["ours_plain"], look=False),
        "ffmpeg_plain": ffmpeg(a.clip, out["ff_plain"], look=False),
    }
    log(f"bench/export: {a.runs} runs of each command after 1 warm-up; scratch {tmp}")
    for cmd in commands.values():
        timed_ok(cmd, tmp)
    samples = {k: [] for k in commands}
    for i in range(a.runs):
        for name, cmd in commands.items():
            samples[name].append(timed_ok(cmd, tmp))
        log(f"bench/export: round {i + 1}/{a.runs}: " + ", ".join(
            f"{k} {samples[k][-1].wall_s:.2f} s" for k in commands))

    # Memory against clip length: the 30 s clip, same command.
    long_samples = [timed_ok(ours(a.long_clip, out["ours_long"]), tmp) for _ in range(max(1, min(a.runs, 2)))] \
        if a.long_clip else []

    def med(name, attr):
        return benchlib.summary([getattr(s, attr) for s in samples[name]])["median"]

    figures = {}
    for name in commands:
        figures[name] = {
            "wall_s": benchlib.summary([s.wall_s for s in samples[name]]),
            "rss_mib": round(med(name, "rss_kib") / 1024, 1),
            "cpu_s": round(benchlib.summary([s.user_s + s.sys_s for s in samples[name]])["median"], 2),
        }
    record = json.load(open(out["ours"] + ".ftgst-bench.json"))
    long_rss = benchlib.summary([s.rss_kib for s in long_samples])["median"] / 1024 if long_samples else None
    ratios = {
        "wall_look": round(figures["ftgst_look"]["wall_s"]["median"] / figures["ffmpeg_look"]["wall_s"]["median"], 3),
        "rss_look": round(figures["ftgst_look"]["rss_mib"] / figures["ffmpeg_look"]["rss_mib"], 3),
        "wall_plain": round(figures["ftgst_plain"]["wall_s"]["median"] / figures["ffmpeg_plain"]["wall_s"]["median"],
                            3),
        "ffmpeg_look_over_plain": round(figures["ffmpeg_look"]["wall_s"]["median"]
                                        / figures["ffmpeg_plain"]["wall_s"]["median"], 2),
        "ftgst_look_over_plain": round(figures["ftgst_look"]["wall_s"]["median"]
                                       / figures["ftgst_plain"]["wall_s"]["median"], 2),
        "ftgst_rss_30s_over_10s": round(long_rss / figures["ftgst_look"]["rss_mib"], 3) if long_rss else None,
    }
    result = {
        "clip": a.clip, "clip_text": clip_name, "long_clip": a.long_clip, "runs": a.runs, "machine": benchlib.machine_info(),
        "ffmpeg": benchlib.first_line(["ffmpeg", "-version"]),
        "commands": {k: benchlib.shell_join(v) for k, v in commands.items()},
        "figures": figures, "ratios": ratios,
        "targets": {"wall_look": WALL_TARGET, "rss_look": RSS_TARGET},
        "ftgst_long_rss_mib": round(long_rss, 1) if long_rss else None,
        "ftgst_record": {k: record.get(k) for k in ("stages", "fps", "cpuMs", "peakMemoryBytes",
                                                      "memoryPressureCount", "memoryPressureSource")},
        "outputs": {k: frames_of(out[k]) | {"bytes": os.path.getsize(out[k])} for k in ("ours", "ff")},
        "psnr_ours_vs_ffmpeg_db": benchlib.psnr_db(out["ours"], out["ff"]),
    }
    # Which output shows the look: frame 0 of each against the look applied to the source's frame 0 in process
    # (ftgst-bench lut: the same table, checked against the Double reference in bench/lut.sh).
    src = first_frame_rgb(a.clip, os.path.join(tmp, "src.rgb"))
    ref = os.path.join(tmp, "ref.rgb")
    subprocess.run([a.bench, "lut", "--cube", cube, "--frame", src, "--width", "1920", "--height", "1080",
                    "--frames", "2", "--out", ref], check=True, capture_output=True)
    result["psnr_vs_reference_look_db"] = {
        k: psnr_raw(first_frame_rgb(out[k], os.path.join(tmp, k + ".rgb")), ref) for k in ("ours", "ff")}
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        f = figures
        lines = [
            f"bench/export — {result['machine']['nproc']} cores, {result['machine']['cpu_model']}",
            f"  clip      {clip_name}: {a.clip} (10 s 1080p)" + (f"; long clip {a.long_clip} (30 s)" if a.long_clip else ""),
            f"  runs      {a.runs} per command, medians",
            "",
            f"  {'':16} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9}",
        ]
        for name in commands:
            lines.append(f"  {name:16} {f[name]['wall_s']['median']:8.2f} {f[name]['cpu_s']:8.2f} "
                         f"{f[name]['rss_mib']:9.1f}")
        lines += [
            "",
            f"  wall ftgst/ffmpeg with the look   {ratios['wall_look']:.3f}  (target <= {WALL_TARGET})",
            f"  peak memory ftgst/ffmpeg          {ratios['rss_look']:.3f}  (target <= {RSS_TARGET})",
            f"  wall ftgst/ffmpeg without a look  {ratios['wall_plain']:.3f}",
            f"  look cost: ffmpeg {ratios['ffmpeg_look_over_plain']}x its plain transcode, "
            f"ftgst {ratios['ftgst_look_over_plain']}x",
            (f"  ftgst peak memory, 30 s clip / 10 s clip: {ratios['ftgst_rss_30s_over_10s']:.3f} "
             f"({result['ftgst_long_rss_mib']} MiB)" if long_rss else "  (no long clip for this one)"),
            f"  outputs: ours {result['outputs']['ours']}, ffmpeg {result['outputs']['ff']}",
            f"  PSNR ours vs ffmpeg: {result['psnr_ours_vs_ffmpeg_db']} dB; frame 0 against the look applied to the "
            f"source's frame 0: ours {result['psnr_vs_reference_look_db']['ours']} dB, "
            f"ffmpeg {result['psnr_vs_reference_look_db']['ff']} dB",
            f"  ftgst record: {result['ftgst_record']}",
        ]
        print("\n".join(lines))
    if a.keep_tmp:
        log(f"bench/export: scratch kept: {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
