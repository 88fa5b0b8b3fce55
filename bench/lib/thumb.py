"""Measurement half of bench/thumb.sh: `ftgst thumb` against ffmpeg on one exact-seek thumbnail
of a video, or (--photo) on one thumbnail of a large JPEG, PNG or WebP photo.

Called by bench/thumb.sh once the clip exists; not meant to be run on its own
(but it can be: see --help).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

SEEK_MS = 5500
VIDEO_BOX = 320
PHOTO_BOX = 512
# Issue 13's targets: ftgst/ffmpeg median wall time and peak RSS must be <= these.
VIDEO_TARGETS = {"wall": 0.9, "peak_rss": 1.0}
PHOTO_TARGETS = {"wall": 0.3, "peak_rss": 0.6}
# PNG and WebP photos have no ratio target ("as today, but never two full-size copies"): figures only.
PHOTO_CODECS = {"mjpeg": "JPEG", "png": "PNG", "webp": "WebP"}
# PSNR between the two warm-up thumbnails. Different scalers and JPEG encoders keep even the
# same frame near 20-30 dB, and neighbouring frames score about the same, so this only
# catches a grossly wrong picture (e.g. the keyframe at 0 s scores about 6 dB).
PSNR_WARN_DB = 12.0


log = benchlib.log


def fail(msg, tmp=None):
    benchlib.fail("bench/thumb", msg, tmp)


def ftgst_cmd(ftgst, clip, tmp, name, photo=False):
    seek = [] if photo else ["--time-ms", str(SEEK_MS), "--tolerance-ms", "0"]
    box = PHOTO_BOX if photo else VIDEO_BOX
    return [ftgst, "thumb", clip, *seek,
            "--max-width", str(box), "--max-height", str(box),
            "--format", "jpeg", "--cache-dir", tmp, "--cache-name", name]


def ffmpeg_cmd(clip, tmp, name, photo=False):
    if photo:
        # ffmpeg's usual command: full decode, then its default scaler into the same box.
        scale = f"scale=w={PHOTO_BOX}:h={PHOTO_BOX}:force_original_aspect_ratio=decrease"
        return ["ffmpeg", "-v", "error", "-y", "-i", clip, "-frames:v", "1", "-vf", scale,
                "-q:v", "3", os.path.join(tmp, f"{name}.jpg")]
    return ["ffmpeg", "-v", "error", "-y", "-ss", f"{SEEK_MS / 1000:g}", "-i", clip,
            "-frames:v", "1", "-vf",
            # The box ftgst fits: the same as scale=320:-2 for a landscape clip, 180x320 for a portrait one.
            f"scale=w={VIDEO_BOX}:h={VIDEO_BOX}:force_original_aspect_ratio=decrease:force_divisible_by=2",
            "-q:v", "3",
            os.path.join(tmp, f"{name}.jpg")]


def floor_cmd(clip, pictures):
    """GStreamer's own decode of the pictures an exact seek decodes (the keyframe before the target up to the
    target), with nothing else: no ftgst, no conversion, scaling or encoding. The floor any GStreamer-based
    thumbnailer with the same decoder stands on."""
    return ["gst-launch-1.0", "-q", "filesrc", f"location={clip}", "!", "qtdemux", "!", "h264parse", "!",
            "avdec_h264", "!", "fakevideosink", "sync=false", f"num-buffers={pictures}"]


def probe_clip(clip):
    """Frame count, size and keyframe times of the clip's video stream (via ffprobe)."""
    try:
        out = subprocess.run(
            ["ffprobe", "-v", "error", "-select_streams", "v:0",
             "-show_entries", "stream=width,height,codec_name,nb_frames,duration:packet=pts_time,flags",
             "-of", "json", clip],
            capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        fail(f"ffprobe could not read {clip}: {e}")
    info = json.loads(out)
    st = info["streams"][0]
    keys = sorted(float(p["pts_time"]) for p in info.get("packets", [])
                  if "K" in p.get("flags", "") and p.get("pts_time") not in (None, "N/A"))
    return {
        "path": clip,
        "codec": st.get("codec_name"),
        "width": st.get("width"),
        "height": st.get("height"),
        "frames": int(st["nb_frames"]) if str(st.get("nb_frames", "")).isdigit() else len(info.get("packets", [])),
        "duration_s": float(st["duration"]) if st.get("duration") not in (None, "N/A") else None,
        "keyframes_s": [round(k, 3) for k in keys],
    }


def check_ffmpeg(sample, cmd, out, tmp):
    if sample.returncode != 0:
        fail(f"ffmpeg exited with status {sample.returncode}\n  command: {benchlib.shell_join(cmd)}\n"
             f"  stderr: {sample.stderr.strip()[-2000:]}", tmp)
    if not os.path.isfile(out) or os.path.getsize(out) == 0:
        fail(f"ffmpeg reported success but wrote no output at {out}\n  command: {benchlib.shell_join(cmd)}", tmp)
    size = benchlib.jpeg_size(out)
    if size is None:
        fail(f"ffmpeg output {out} is not a JPEG", tmp)
    return size


def check_ftgst(sample, cmd, before, tmp):
    where = f"\n  command: {benchlib.shell_join(cmd)}"
    if sample.returncode != 0:
        fail(f"ftgst exited with status {sample.returncode}{where}\n"
             f"  stdout: {sample.stdout.strip()[-1000:]}\n  stderr: {sample.stderr.strip()[-2000:]}", tmp)
    lines = [l for l in sample.stdout.splitlines() if l.strip()]
    if len(lines) != 1:
        fail(f"ftgst should print exactly one JSON line, printed {len(lines)}{where}\n"
             f"  stdout: {sample.stdout.strip()[-1000:]}", tmp)
    try:
        obj = json.loads(lines[0])
    except ValueError:
        fail(f"ftgst printed a line that is not JSON: {lines[0][:500]}{where}", tmp)
    if not isinstance(obj, dict):
        fail(f"ftgst printed JSON that is not an object: {lines[0][:500]}{where}", tmp)
    for key in ("cached", "cache_hit", "cacheHit"):
        if obj.get(key) is True:
            fail(f"ftgst answered from its cache ({key}: true), so nothing was decoded{where}", tmp)
    new = sorted(benchlib.list_files(tmp) - before)
    jpegs = []
    for rel in new:
        p = os.path.join(tmp, rel)
        if os.path.getsize(p) > 0:
            size = benchlib.jpeg_size(p)
            if size is not None:
                jpegs.append((rel, size))
    if not jpegs:
        fail(f"ftgst reported success but no new JPEG file appeared in the cache dir {tmp} "
             f"(new files: {new or 'none'}){where}", tmp)
    return jpegs[0][1], obj, os.path.join(tmp, jpegs[0][0])


def main():
    ap = benchlib.clip_arguments(__doc__, 9)
    ap.add_argument("--photo", action="store_true",
                    help="the clip is a still JPEG, PNG or WebP: no seek, a 512-px box, the photo targets (JPEG only)")
    a = benchlib.parse_runs(ap, "bench/thumb")

    clip = os.path.abspath(a.clip)
    ftgst = a.ftgst
    photo = a.photo
    clipinfo = probe_clip(clip)
    seek_s = SEEK_MS / 1000
    box = PHOTO_BOX if photo else VIDEO_BOX
    targets = PHOTO_TARGETS if photo else VIDEO_TARGETS
    photo_kind = PHOTO_CODECS.get(clipinfo["codec"], "") if photo else ""
    if photo:
        if not photo_kind:
            fail(f"--photo wants a JPEG, PNG or WebP, {clip} is {clipinfo['codec']}")
        if photo_kind != "JPEG":
            targets = None
        clipinfo["bytes"] = os.path.getsize(clip)
    else:
        if not clipinfo["keyframes_s"] or clipinfo["keyframes_s"][0] > 0.001:
            fail(f"clip {clip} has no keyframe at 0 s (keyframes: {clipinfo['keyframes_s']})")
        # How much an exact seek must decode: from the last keyframe at or before the seek point.
        last_key = max(k for k in clipinfo["keyframes_s"] if k <= seek_s + 1e-6)
        clipinfo["decode_from_s"] = last_key
        if not clipinfo["duration_s"]:
            fail(f"clip {clip} has no duration")
        fps = clipinfo["frames"] / clipinfo["duration_s"]
        # The pictures from the keyframe at 0 up to and including the one on screen at the target.
        clipinfo["pictures_to_target"] = int(round((seek_s - last_key) * fps)) + 1 if last_key == 0 else None

    tmp = tempfile.mkdtemp(prefix="ftgst-bench-thumb-")
    machine = benchlib.machine_info()
    versions = {
        "ffmpeg": benchlib.first_line(["ffmpeg", "-version"]),
        "gstreamer": benchlib.all_lines(["gst-launch-1.0", "--version"]),
        "ftgst_path": os.path.abspath(ftgst) if os.sep in ftgst else (shutil.which(ftgst) or ftgst),
    }

    samples = {"ftgst": [], "ffmpeg": []}
    # The decode floor runs only where it is the same pictures from the file's start (the keyframe at 0).
    floor = None if photo or not clipinfo.get("pictures_to_target") else floor_cmd(clip, clipinfo["pictures_to_target"])
    if floor:
        samples["gst-decode"] = []
    sizes = {}
    outputs = {}

    def one(side, name, record):
        if side == "gst-decode":
            s = benchlib.timed_run(floor)
            if s.returncode != 0:
                fail(f"the decode floor failed (status {s.returncode}): {benchlib.shell_join(floor)}\n"
                     f"  stderr: {s.stderr.strip()[-1000:]}", tmp)
            if record:
                samples[side].append(s)
            return s
        if side == "ftgst":
            cmd = ftgst_cmd(ftgst, clip, tmp, name, photo)
            before = benchlib.list_files(tmp)
            s = benchlib.timed_run(cmd)
            size, _obj, path = check_ftgst(s, cmd, before, tmp)
        else:
            cmd = ffmpeg_cmd(clip, tmp, name, photo)
            s = benchlib.timed_run(cmd)
            size = check_ffmpeg(s, cmd, cmd[-1], tmp)
            path = cmd[-1]
        if s.rss_kib is None:
            fail(f"GNU time gave no figures for {side} (is {benchlib.GNU_TIME} GNU time?)", tmp)
        sizes.setdefault(side, size)
        outputs.setdefault(side, path)
        if sizes[side] != size:
            fail(f"{side} output size changed between runs: {sizes[side]} then {size}", tmp)
        if record:
            samples[side].append(s)
        return s

    shape = (f"a still {photo_kind}" if photo else
             f"{clipinfo['frames']} frames, keyframes at {clipinfo['keyframes_s']} s")
    log(f"bench/thumb: clip {clip} ({clipinfo['width']}x{clipinfo['height']}, {shape}); "
        f"{a.runs} runs each after 1 warm-up; scratch {tmp}")
    one("ftgst", "warmup", False)
    one("ffmpeg", "ff-warmup", False)
    if sizes["ftgst"] != sizes["ffmpeg"]:
        fail(f"the two sides produce different picture sizes (ftgst {sizes['ftgst'][0]}x{sizes['ftgst'][1]}, "
             f"ffmpeg {sizes['ffmpeg'][0]}x{sizes['ffmpeg'][1]}), so they are not doing the same work", tmp)
    psnr = benchlib.psnr_db(outputs["ftgst"], outputs["ffmpeg"])
    psnr_note = None
    if psnr is None:
        psnr_note = "could not compare the two thumbnails"
    elif psnr < PSNR_WARN_DB:
        what = "the photo" if photo else f"the frame at {seek_s:g} s"
        psnr_note = (f"the thumbnails differ a lot (PSNR {psnr:.1f} dB < {PSNR_WARN_DB:g}): "
                     f"ftgst may not be showing {what}")
    if psnr_note:
        log("bench/thumb: WARNING: " + psnr_note)
    if floor:
        one("gst-decode", "floor-warmup", False)
    for i in range(1, a.runs + 1):
        f = one("ftgst", f"run-{i}", True)
        g = one("ffmpeg", f"ff-{i}", True)
        if floor:
            one("gst-decode", f"floor-{i}", True)
        log(f"  run {i}/{a.runs}: ftgst {f.wall_s * 1000:7.1f} ms {f.rss_kib / 1024:6.1f} MiB   "
            f"ffmpeg {g.wall_s * 1000:7.1f} ms {g.rss_kib / 1024:6.1f} MiB")

    results = {}
    for side, ss in samples.items():
        results[side] = {
            "wall_ms": benchlib.summary([round(s.wall_s * 1000, 2) for s in ss]),
            "peak_rss_mib": benchlib.summary([round(s.rss_kib / 1024, 2) for s in ss]),
            "cpu_ms": benchlib.summary([round((s.user_s + s.sys_s) * 1000, 1) for s in ss]),
        }
        if side in sizes:
            results[side]["output_size"] = list(sizes[side])
    wall_ratio = results["ftgst"]["wall_ms"]["median"] / results["ffmpeg"]["wall_ms"]["median"]
    rss_ratio = results["ftgst"]["peak_rss_mib"]["median"] / results["ffmpeg"]["peak_rss_mib"]["median"]
    verdict = lambda r, t: "PASS" if r <= t else "MISS"  # noqa: E731
    floor_ratios = None
    if floor:
        f = results["gst-decode"]
        floor_ratios = {
            "command": benchlib.shell_join(floor),
            "pictures": clipinfo["pictures_to_target"],
            "wall_vs_ffmpeg": round(f["wall_ms"]["median"] / results["ffmpeg"]["wall_ms"]["median"], 3),
            "peak_rss_vs_ffmpeg": round(f["peak_rss_mib"]["median"] / results["ffmpeg"]["peak_rss_mib"]["median"], 3),
        }

    templates = {
        "ftgst": benchlib.shell_join(ftgst_cmd(ftgst, clip, "@TMP@", "run-@I@", photo)),
        "ffmpeg": benchlib.shell_join(ffmpeg_cmd(clip, "@TMP@", "ff-@I@", photo)),
    }
    if photo:
        description = (f"one {box}x{box}-box JPEG thumbnail of a {clipinfo['width']}x{clipinfo['height']} "
                       f"{photo_kind} photo")
    else:
        description = (f"one {box}x{box}-box JPEG thumbnail at {seek_s:g} s, exact seek, "
                       f"from a {clipinfo['width']}x{clipinfo['height']} {clipinfo['codec']} clip")
    report = {
        "benchmark": "thumb-photo" if photo else "thumb",
        "description": description,
        "runs": a.runs,
        "warmup_runs": 1,
        "order": "alternating, ftgst first in each pair",
        "clip": clipinfo,
        "pipeline_file": a.pipeline_file,
        "commands": templates,
        "timing": f"wall: python perf_counter around `{benchlib.GNU_TIME} -f ...`; peak RSS: GNU time %M",
        "machine": machine,
        "versions": versions,
        "results": results,
        "thumbnail_psnr_db": (None if psnr is None else ("inf" if psnr == float("inf") else round(psnr, 2))),
        "warnings": [psnr_note] if psnr_note else [],
        "ratios": {"wall": round(wall_ratio, 3), "peak_rss": round(rss_ratio, 3)},
        "floor": floor_ratios,
        "targets": None if targets is None else {
            "wall": {"max_ratio": targets["wall"], "verdict": verdict(wall_ratio, targets["wall"])},
            "peak_rss": {"max_ratio": targets["peak_rss"], "verdict": verdict(rss_ratio, targets["peak_rss"])},
        },
    }

    if a.keep_tmp:
        log(f"bench/thumb: scratch directory kept: {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)

    if a.json:
        print(json.dumps(report, indent=None, sort_keys=False))
        return

    def row(side):
        r = results[side]
        w = r["wall_ms"]
        return (f"  {side:<10} {w['median']:9.1f} {w['min']:9.1f} {w['max']:9.1f}   "
                f"{r['peak_rss_mib']['median']:9.1f}   {r['cpu_ms']['median']:9.1f}")

    out = []
    out.append(f"thumb benchmark: {report['description']}")
    out.append(f"  clip     {clip}")
    if photo:
        shape = f"{clipinfo['bytes'] / 1e6:.1f} MB"
    else:
        shape = (f"{clipinfo['frames']} frames, {clipinfo['duration_s']} s, "
                 f"keyframes at {clipinfo['keyframes_s']} s")
    out.append(f"           {clipinfo['codec']} {clipinfo['width']}x{clipinfo['height']}, {shape}"
               + (f"; from {a.pipeline_file}" if a.pipeline_file else ""))
    out.append(f"  output   {sizes['ftgst'][0]}x{sizes['ftgst'][1]} JPEG on both sides; PSNR ftgst vs ffmpeg "
               + ("n/a" if psnr is None else f"{psnr:.1f} dB")
               + (f"  WARNING: {psnr_note}" if psnr_note else "  (sanity check, see README)"))
    out.append(f"  runs     {a.runs} per side, alternating ftgst/ffmpeg, after 1 warm-up each")
    out.append("commands ($i = run number, $TMP = fresh scratch dir, so every ftgst run is a cache miss):")
    out.append(f"  ftgst   {templates['ftgst']}")
    out.append(f"  ffmpeg  {templates['ffmpeg']}")
    out.append(f"  each under: {benchlib.GNU_TIME} -f '%M %U %S %x' (peak RSS, CPU); wall = perf_counter around it")
    out.append("machine:")
    out.append(f"  nproc {machine['nproc']}, CPU {machine['cpu_model']}, kernel {machine['kernel']}, "
               f"load at start {machine['loadavg_at_start']}")
    out.append("versions:")
    out.append(f"  {versions['ffmpeg']}")
    out.append(f"  {versions['gstreamer']}")
    out.append(f"  ftgst binary: {versions['ftgst_path']}")
    out.append("")
    out.append(f"  {'':<7} {'wall ms':>9} {'min':>9} {'max':>9}   {'RSS MiB':>9}   {'CPU ms':>9}")
    out.append(f"  {'':<7} {'(median)':>9} {'':>9} {'':>9}   {'(median)':>9}   {'(median)':>9}")
    out.append(row("ftgst"))
    out.append(row("ffmpeg"))
    if floor:
        out.append(row("gst-decode"))
    out.append("")
    if targets is None:
        out.append(f"  ftgst/ffmpeg  wall {wall_ratio:5.2f}  (no target)")
        out.append(f"  ftgst/ffmpeg  RSS  {rss_ratio:5.2f}  (no target)")
    else:
        out.append(f"  ftgst/ffmpeg  wall {wall_ratio:5.2f}  (target <= {targets['wall']:.2f})  "
                   f"{report['targets']['wall']['verdict']}")
        out.append(f"  ftgst/ffmpeg  RSS  {rss_ratio:5.2f}  (target <= {targets['peak_rss']:.2f})  "
                   f"{report['targets']['peak_rss']['verdict']}")
    if floor:
        out.append(f"  gst-decode = {floor_ratios['command']}")
        out.append(f"    (GStreamer decoding the {floor_ratios['pictures']} pictures an exact seek decodes, nothing else)")
        out.append(f"  gst-decode/ffmpeg  wall {floor_ratios['wall_vs_ffmpeg']:5.2f}  "
                   f"RSS {floor_ratios['peak_rss_vs_ffmpeg']:5.2f}")
    if psnr_note:
        out.append(f"  WARNING: {psnr_note}; the figures above may not compare like with like")
    print("\n".join(out))


if __name__ == "__main__":
    main()
