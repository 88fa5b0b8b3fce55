"""Measurement half of bench/thumbs.sh: ONE `ftgst thumb` process making five exact thumbnails of
a clip (--time-ms A,B,C,D,E --tolerance-ms 0) against the five equivalent one-picture ffmpeg
processes run one after another.

Called by bench/thumbs.sh once the clip exists; not meant to be run on its own
(but it can be: see --help).
"""

import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from thumb import probe_clip  # noqa: E402  (ffprobe of the clip: frames, size, keyframes)

TIMES_MS = [1000, 3000, 5000, 7000, 9000]
BOX = 320
# The picture whose two sides are compared (PSNR), as bench/thumb.sh compares its one pair.
CHECK_MS = 5000
# Different scalers and JPEG encoders keep even the same frame near 20-30 dB: this only catches a
# grossly wrong picture (bench/thumb.py's threshold).
PSNR_WARN_DB = 12.0

log = benchlib.log


def fail(msg, tmp=None):
    benchlib.fail("bench/thumbs", msg, tmp)


def ftgst_cmd(ftgst, clip, tmp, name):
    return [ftgst, "thumb", clip, "--time-ms", ",".join(str(t) for t in TIMES_MS), "--tolerance-ms", "0",
            "--max-width", str(BOX), "--max-height", str(BOX), "--format", "jpeg",
            "--cache-dir", tmp, "--cache-name", f"{name}-%d"]


def ffmpeg_cmd(clip, tmp, name, index, ms):
    return ["ffmpeg", "-v", "error", "-y", "-ss", f"{ms / 1000:g}", "-i", clip,
            "-frames:v", "1", "-vf", f"scale={BOX}:-2", "-q:v", "3",
            os.path.join(tmp, f"{name}-{index}.jpg")]


def check_ftgst(sample, cmd, tmp):
    """The five JSON lines: exact times in the order given, none from the cache, five JPEGs of one size."""
    where = f"\n  command: {benchlib.shell_join(cmd)}"
    if sample.returncode != 0:
        fail(f"ftgst exited with status {sample.returncode}{where}\n"
             f"  stdout: {sample.stdout.strip()[-1000:]}\n  stderr: {sample.stderr.strip()[-2000:]}", tmp)
    lines = [l for l in sample.stdout.splitlines() if l.strip()]
    if len(lines) != len(TIMES_MS):
        fail(f"ftgst should print {len(TIMES_MS)} JSON lines, printed {len(lines)}{where}\n"
             f"  stdout: {sample.stdout.strip()[-1000:]}", tmp)
    objs = []
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            fail(f"ftgst printed a line that is not JSON: {line[:500]}{where}", tmp)
        if not isinstance(obj, dict):
            fail(f"ftgst printed JSON that is not an object: {line[:500]}{where}", tmp)
        objs.append(obj)
    paths, sizes = [], set()
    for ms, obj in zip(TIMES_MS, objs):
        if obj.get("cached") is not False:
            fail(f"ftgst answered {ms} ms from its cache (cached: {obj.get('cached')}){where}", tmp)
        if obj.get("requestedMs") != ms or obj.get("timeMs") != ms:
            fail(f"ftgst's picture for {ms} ms is not the exact frame: {json.dumps(obj)}{where}", tmp)
        path = obj.get("path")
        size = benchlib.jpeg_size(path) if isinstance(path, str) and path.startswith(tmp) else None
        if size is None:
            fail(f"ftgst's picture for {ms} ms is not a JPEG in the scratch dir: {path}{where}", tmp)
        paths.append(path)
        sizes.add(size)
    if len(sizes) != 1:
        fail(f"ftgst's pictures have different sizes: {sorted(sizes)}{where}", tmp)
    facts = {"source_opens": objs[0].get("sourceOpens"), "seeks": objs[0].get("seeks"),
             "decoded_frames": len({o.get("frame") for o in objs})}
    return sizes.pop(), paths, facts


def check_ffmpeg(sample, cmd, tmp):
    out = cmd[-1]
    if sample.returncode != 0:
        fail(f"ffmpeg exited with status {sample.returncode}\n  command: {benchlib.shell_join(cmd)}\n"
             f"  stderr: {sample.stderr.strip()[-2000:]}", tmp)
    size = benchlib.jpeg_size(out)
    if size is None:
        fail(f"ffmpeg wrote no JPEG at {out}\n  command: {benchlib.shell_join(cmd)}", tmp)
    return size


def main():
    ap = benchlib.clip_arguments(__doc__, 5)
    a = benchlib.parse_runs(ap, "bench/thumbs")

    clip = os.path.abspath(a.clip)
    ftgst = a.ftgst
    info = probe_clip(clip)
    if not info["keyframes_s"] or info["keyframes_s"][0] > 0.001:
        fail(f"clip {clip} has no keyframe at 0 s (keyframes: {info['keyframes_s']})")
    if info["duration_s"] is not None and info["duration_s"] * 1000 <= max(TIMES_MS):
        fail(f"clip {clip} lasts {info['duration_s']} s, not past {max(TIMES_MS)} ms")
    # What one ffmpeg process decodes for each time: from the keyframe at or before it.
    info["decode_from_s"] = {str(ms): max(k for k in info["keyframes_s"] if k <= ms / 1000 + 1e-6)
                             for ms in TIMES_MS}

    tmp = tempfile.mkdtemp(prefix="ftgst-bench-thumbs-")
    machine = benchlib.machine_info()
    versions = {
        "ffmpeg": benchlib.first_line(["ffmpeg", "-version"]),
        "gstreamer": benchlib.all_lines(["gst-launch-1.0", "--version"]),
        "ftgst_path": os.path.abspath(ftgst) if os.sep in ftgst else (shutil.which(ftgst) or ftgst),
    }

    samples = {"ftgst": [], "ffmpeg": []}
    sizes, facts, checked = {}, {}, {}

    def run_ftgst(name, record):
        cmd = ftgst_cmd(ftgst, clip, tmp, name)
        s = benchlib.timed_run(cmd)
        if s.rss_kib is None:
            fail(f"GNU time gave no figures for ftgst (is {benchlib.GNU_TIME} GNU time?)", tmp)
        size, paths, fact = check_ftgst(s, cmd, tmp)
        sizes.setdefault("ftgst", size)
        facts.setdefault("ftgst", fact)
        checked.setdefault("ftgst", paths[TIMES_MS.index(CHECK_MS)])
        if record:
            samples["ftgst"].append({"wall_s": s.wall_s, "rss_kib": s.rss_kib, "cpu_s": s.user_s + s.sys_s})
        return samples["ftgst"][-1] if record else None

    def run_ffmpeg(name, record):
        # The five processes one after another, as a script would run them: the set's wall and CPU time are
        # the sums, its peak memory the largest of the five.
        wall = cpu = 0.0
        rss = 0
        for index, ms in enumerate(TIMES_MS, start=1):
            cmd = ffmpeg_cmd(clip, tmp, name, index, ms)
            s = benchlib.timed_run(cmd)
            if s.rss_kib is None:
                fail(f"GNU time gave no figures for ffmpeg (is {benchlib.GNU_TIME} GNU time?)", tmp)
            size = check_ffmpeg(s, cmd, tmp)
            sizes.setdefault("ffmpeg", size)
            if size != sizes["ffmpeg"]:
                fail(f"ffmpeg's pictures have different sizes: {sizes['ffmpeg']} then {size}", tmp)
            if ms == CHECK_MS:
                checked.setdefault("ffmpeg", cmd[-1])
            wall += s.wall_s
            cpu += s.user_s + s.sys_s
            rss = max(rss, s.rss_kib)
        if record:
            samples["ffmpeg"].append({"wall_s": wall, "rss_kib": rss, "cpu_s": cpu})
        return samples["ffmpeg"][-1] if record else None

    log(f"bench/thumbs: clip {clip} ({info['width']}x{info['height']}, {info['frames']} frames, keyframes at "
        f"{info['keyframes_s']} s); times {TIMES_MS} ms; {a.runs} runs each after 1 warm-up; scratch {tmp}")
    run_ftgst("warmup", False)
    run_ffmpeg("ff-warmup", False)
    if sizes["ftgst"] != sizes["ffmpeg"]:
        fail(f"the two sides produce different picture sizes (ftgst {sizes['ftgst']}, ffmpeg {sizes['ffmpeg']}), "
             "so they are not doing the same work", tmp)
    psnr = benchlib.psnr_db(checked["ftgst"], checked["ffmpeg"])
    psnr_note = None
    if psnr is None:
        psnr_note = f"could not compare the two pictures at {CHECK_MS} ms"
    elif psnr < PSNR_WARN_DB:
        psnr_note = (f"the pictures at {CHECK_MS} ms differ a lot (PSNR {psnr:.1f} dB < {PSNR_WARN_DB:g}): "
                     "ftgst may not be showing that frame")
    if psnr_note:
        log("bench/thumbs: WARNING: " + psnr_note)
    for i in range(1, a.runs + 1):
        f = run_ftgst(f"run-{i}", True)
        g = run_ffmpeg(f"ff-{i}", True)
        log(f"  run {i}/{a.runs}: ftgst {f['wall_s'] * 1000:7.1f} ms {f['rss_kib'] / 1024:6.1f} MiB   "
            f"ffmpeg x{len(TIMES_MS)} {g['wall_s'] * 1000:7.1f} ms {g['rss_kib'] / 1024:6.1f} MiB")

    results = {}
    for side, ss in samples.items():
        results[side] = {
            "wall_ms": benchlib.summary([round(s["wall_s"] * 1000, 2) for s in ss]),
            "peak_rss_mib": benchlib.summary([round(s["rss_kib"] / 1024, 2) for s in ss]),
            "cpu_ms": benchlib.summary([round(s["cpu_s"] * 1000, 1) for s in ss]),
            "output_size": list(sizes[side]),
        }
    ratio = lambda key: results["ftgst"][key]["median"] / results["ffmpeg"][key]["median"]  # noqa: E731
    ratios = {"wall": round(ratio("wall_ms"), 3), "peak_rss": round(ratio("peak_rss_mib"), 3),
              "cpu": round(ratio("cpu_ms"), 3)}

    ffmpeg_one = ffmpeg_cmd(clip, "@TMP@", "ff-@I@", "$n", 0)
    ffmpeg_one[ffmpeg_one.index("-ss") + 1] = "$T"
    times_s = " ".join(f"{t / 1000:g}" for t in TIMES_MS)
    templates = {
        "ftgst": benchlib.shell_join(ftgst_cmd(ftgst, clip, "@TMP@", "run-@I@")),
        # Unquoted $T and $n: a shell loop, one process per time (n = 1..5).
        "ffmpeg": f"n=0; for T in {times_s}; do n=$((n+1)); "
        + benchlib.shell_join(ffmpeg_one).replace("'$T'", "$T").replace("'$TMP/ff-$i-$n.jpg'", '"$TMP/ff-$i-$n.jpg"')
        + "; done",
    }
    report = {
        "benchmark": "thumbs",
        "description": (f"{len(TIMES_MS)} exact {BOX}x{BOX}-box JPEG thumbnails at {TIMES_MS} ms of a 1080p "
                        f"H.264 clip: one ftgst process against {len(TIMES_MS)} ffmpeg processes in a row"),
        "runs": a.runs,
        "warmup_runs": 1,
        "order": "alternating, ftgst first in each pair",
        "clip": info,
        "pipeline_file": a.pipeline_file,
        "times_ms": TIMES_MS,
        "commands": templates,
        "timing": (f"wall: python perf_counter around `{benchlib.GNU_TIME} -f ...` per process; ffmpeg's set: "
                   "the sum of its five walls and CPU times, the largest of its five peak RSS"),
        "machine": machine,
        "versions": versions,
        "results": results,
        "ftgst_facts": facts["ftgst"],
        "psnr_at_ms": CHECK_MS,
        "thumbnail_psnr_db": (None if psnr is None else ("inf" if psnr == float("inf") else round(psnr, 2))),
        "warnings": [psnr_note] if psnr_note else [],
        "ratios": ratios,
    }

    if a.keep_tmp:
        log(f"bench/thumbs: scratch directory kept: {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)

    if a.json:
        print(json.dumps(report, indent=None, sort_keys=False))
        return

    def row(side, label):
        r = results[side]
        w = r["wall_ms"]
        return (f"  {label:<10} {w['median']:9.1f} {w['min']:9.1f} {w['max']:9.1f}   "
                f"{r['peak_rss_mib']['median']:9.1f}   {r['cpu_ms']['median']:9.1f}")

    fact = facts["ftgst"]
    out = [f"thumbs benchmark: {report['description']}",
           f"  clip     {clip}",
           f"           {info['codec']} {info['width']}x{info['height']}, {info['frames']} frames, "
           f"{info['duration_s']} s, keyframes at {info['keyframes_s']} s"
           + (f"; from {a.pipeline_file}" if a.pipeline_file else ""),
           f"  output   {len(TIMES_MS)} x {sizes['ftgst'][0]}x{sizes['ftgst'][1]} JPEG on both sides; ftgst: "
           f"source opens {fact['source_opens']}, seeks {fact['seeks']}, frames handed out {fact['decoded_frames']}; "
           f"PSNR at {CHECK_MS} ms ftgst vs ffmpeg " + ("n/a" if psnr is None else f"{psnr:.1f} dB")
           + (f"  WARNING: {psnr_note}" if psnr_note else "  (sanity check)"),
           f"  runs     {a.runs} per side, alternating ftgst / the ffmpeg set, after 1 warm-up each",
           "commands ($i = run number, $TMP = fresh scratch dir, so every ftgst run is a cache miss):",
           f"  ftgst   {templates['ftgst']}",
           f"  ffmpeg  {templates['ffmpeg']}",
           f"  each process under: {benchlib.GNU_TIME} -f '%M %U %S %x'; wall = perf_counter around it; the ffmpeg "
           "set's wall and CPU are sums, its RSS the largest",
           "machine:",
           f"  nproc {machine['nproc']}, CPU {machine['cpu_model']}, kernel {machine['kernel']}, "
           f"load at start {machine['loadavg_at_start']}",
           "versions:",
           f"  {versions['ffmpeg']}",
           f"  {versions['gstreamer']}",
           f"  ftgst binary: {versions['ftgst_path']}",
           "",
           f"  {'':<10} {'wall ms':>9} {'min':>9} {'max':>9}   {'RSS MiB':>9}   {'CPU ms':>9}",
           f"  {'':<10} {'(median)':>9} {'':>9} {'':>9}   {'(median)':>9}   {'(median)':>9}",
           row("ftgst", "ftgst"),
           row("ffmpeg", f"ffmpeg x{len(TIMES_MS)}"),
           "",
           f"  ftgst/ffmpeg  wall {ratios['wall']:5.2f}   RSS {ratios['peak_rss']:5.2f}   CPU {ratios['cpu']:5.2f}"]
    if psnr_note:
        out.append(f"  WARNING: {psnr_note}; the figures above may not compare like with like")
    print("\n".join(out))


if __name__ == "__main__":
    main()
