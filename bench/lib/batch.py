"""Measurement half of bench/batch.sh: ONE `ftgst batch` process making 40 exact thumbnails (4 times from each
of 10 clips, 1080p H.264) against the same 40 `ffmpeg -ss T -i CLIP -frames:v 1 -vf scale=320:-2` processes,
run one after another (the target's baseline) and, for honesty about the cores ftgst's worker pool uses, also
NPROC at a time.

Called by bench/batch.sh once the clip exists; not meant to be run on its own (but it can be: see --help).
"""

import concurrent.futures
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from thumb import probe_clip  # noqa: E402  (ffprobe of the clip: frames, size, keyframes)

CLIPS = 10
TIMES_MS = [1500, 4000, 6500, 9000]
BOX = 320
# The pictures' format: jpg (the default) or png (FORMAT=png bench/batch.sh), on both sides.
EXT = "jpg"
PSNR_WARN_DB = 12.0  # as bench/thumbs.py: only a grossly wrong picture
log = benchlib.log


def fail(msg, tmp=None):
    benchlib.fail("bench/batch", msg, tmp)


def jobs_file(clips, out_dir, path):
    """The 40 job lines, clip by clip (so a clip's four times are one decode), written with json.dumps."""
    with open(path, "w") as f:
        for c, clip in enumerate(clips):
            for t, ms in enumerate(TIMES_MS):
                f.write(json.dumps({"id": f"c{c}t{t}", "kind": "thumbnail", "source": clip, "timeMs": ms,
                                    "toleranceMs": 0, "maxWidth": BOX, "maxHeight": BOX,
                                    "output": os.path.join(out_dir, f"c{c}-t{t}.{EXT}")}) + "\n")


def ffmpeg_cmd(clip, out, ms):
    quality = ["-q:v", "3"] if EXT == "jpg" else []  # PNG: ffmpeg's encoder defaults (no filter, zlib level 6)
    return ["ffmpeg", "-v", "error", "-y", "-ss", f"{ms / 1000:g}", "-i", clip, "-frames:v", "1",
            "-vf", f"scale={BOX}:-2", *quality, out]


def check_ftgst(sample, cmd, tmp, skipped):
    where = f"\n  command: {benchlib.shell_join(cmd)}"
    if sample.returncode != 0:
        fail(f"ftgst exited with status {sample.returncode}{where}\n  stderr: {sample.stderr.strip()[-2000:]}", tmp)
    lines = [json.loads(l) for l in sample.stdout.splitlines() if l.strip()]
    if len(lines) != CLIPS * len(TIMES_MS):
        fail(f"ftgst printed {len(lines)} results, not {CLIPS * len(TIMES_MS)}{where}", tmp)
    sizes, groups = set(), set()
    for index, obj in enumerate(lines):
        ms = TIMES_MS[index % len(TIMES_MS)]
        result = obj.get("result") or {}
        if obj.get("status") != "ok" or obj.get("skipped") is not skipped:
            fail(f"job {index + 1}: {json.dumps(obj)[:600]} (expected ok, skipped {skipped}){where}", tmp)
        if result.get("timeMs") != ms:
            fail(f"job {index + 1} is not the exact frame at {ms} ms: {json.dumps(result)}{where}", tmp)
        size = benchlib.image_size(obj["outputs"][0])
        if size is None:
            fail(f"job {index + 1} wrote no {EXT.upper()}: {obj['outputs']}", tmp)
        sizes.add(size)
        groups.add(result.get("decodeGroup"))
    if len(sizes) != 1:
        fail(f"ftgst's pictures have different sizes: {sorted(sizes)}", tmp)
    return sizes.pop(), sorted(g for g in groups if g is not None)


def main():
    global EXT
    ap = benchlib.clip_arguments(__doc__, 3, clip_help="copied to 10 files: 10 clips to open and decode")
    ap.add_argument("--format", choices=["jpg", "png"], default="jpg")
    a = benchlib.parse_runs(ap, "bench/batch")
    EXT = a.format
    info = probe_clip(os.path.abspath(a.clip))
    if info["duration_s"] is not None and info["duration_s"] * 1000 <= max(TIMES_MS):
        fail(f"clip lasts {info['duration_s']} s, not past {max(TIMES_MS)} ms")
    tmp = tempfile.mkdtemp(prefix="ftgst-bench-batch-")
    clips = []
    for c in range(CLIPS):
        clips.append(os.path.join(tmp, f"clip{c}.mp4"))
        shutil.copyfile(a.clip, clips[-1])
    nproc = os.cpu_count() or 1
    samples = {"ftgst": [], "ftgst_rerun": [], "ffmpeg": [], "ffmpeg_parallel": []}
    sizes = {}
    facts = {}
    bytes_ = {}  # the mean file size of each side's 40 pictures

    def run_ftgst(name, record):
        out = os.path.join(tmp, name)
        jobs = os.path.join(tmp, f"{name}.jsonl")
        jobs_file(clips, out, jobs)
        cmd = [a.ftgst, "batch", jobs]
        s = benchlib.timed_run(cmd)
        sizes["ftgst"], facts["decode_groups"] = check_ftgst(s, cmd, tmp, skipped=False)
        names = [n for n in os.listdir(out) if n.endswith("." + EXT)]
        bytes_["ftgst"] = sum(os.path.getsize(os.path.join(out, n)) for n in names) // max(1, len(names))
        again = benchlib.timed_run(cmd)  # the same jobs again: every output valid, so skipped
        check_ftgst(again, cmd, tmp, skipped=True)
        if record:
            samples["ftgst"].append({"wall_s": s.wall_s, "rss_kib": s.rss_kib, "cpu_s": s.user_s + s.sys_s})
            samples["ftgst_rerun"].append(
                {"wall_s": again.wall_s, "rss_kib": again.rss_kib, "cpu_s": again.user_s + again.sys_s})
        return os.path.join(out, f"c0-t1.{EXT}")

    def ffmpeg_set(name, record, workers):
        out = os.path.join(tmp, name)
        os.makedirs(out)
        cmds = [ffmpeg_cmd(clip, os.path.join(out, f"c{c}-t{t}.{EXT}"), ms)
                for c, clip in enumerate(clips) for t, ms in enumerate(TIMES_MS)]
        start = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            runs = list(pool.map(benchlib.timed_run, cmds))
        wall = time.perf_counter() - start
        for cmd, s in zip(cmds, runs):
            if s.returncode != 0 or benchlib.image_size(cmd[-1]) is None:
                fail(f"ffmpeg failed: {benchlib.shell_join(cmd)}\n  {s.stderr.strip()[-1000:]}", tmp)
        sizes["ffmpeg"] = benchlib.image_size(cmds[0][-1])
        bytes_["ffmpeg"] = sum(os.path.getsize(cmd[-1]) for cmd in cmds) // len(cmds)
        if record:
            key = "ffmpeg" if workers == 1 else "ffmpeg_parallel"
            samples[key].append({"wall_s": wall, "rss_kib": max(s.rss_kib for s in runs),
                                 "cpu_s": sum(s.user_s + s.sys_s for s in runs)})
        return os.path.join(out, f"c0-t1.{EXT}")

    log(f"bench/batch: {CLIPS} copies of {a.clip} ({info['width']}x{info['height']}, keyframes at "
        f"{info['keyframes_s']} s), times {TIMES_MS} ms, {a.runs} runs after 1 warm-up; scratch {tmp}")
    mine = run_ftgst("warmup", False)
    theirs = ffmpeg_set("ff-warmup", False, 1)
    ffmpeg_set("ffp-warmup", False, nproc)
    if sizes["ftgst"] != sizes["ffmpeg"]:
        fail(f"different picture sizes (ftgst {sizes['ftgst']}, ffmpeg {sizes['ffmpeg']})", tmp)
    psnr = benchlib.psnr_db(mine, theirs)
    note = None if psnr is not None and psnr >= PSNR_WARN_DB else f"PSNR at {TIMES_MS[1]} ms is {psnr}"
    if note:
        log("bench/batch: WARNING: " + note)
    for i in range(1, a.runs + 1):
        run_ftgst(f"run-{i}", True)
        ffmpeg_set(f"ff-{i}", True, 1)
        ffmpeg_set(f"ffp-{i}", True, nproc)
        log(f"  run {i}/{a.runs}: ftgst {samples['ftgst'][-1]['wall_s'] * 1000:7.0f} ms "
            f"(rerun {samples['ftgst_rerun'][-1]['wall_s'] * 1000:5.0f} ms)   ffmpeg x40 "
            f"{samples['ffmpeg'][-1]['wall_s'] * 1000:7.0f} ms   ffmpeg x40 {nproc} at a time "
            f"{samples['ffmpeg_parallel'][-1]['wall_s'] * 1000:7.0f} ms")

    results = {side: {"wall_ms": benchlib.summary([round(s["wall_s"] * 1000, 1) for s in ss]),
                      "peak_rss_mib": benchlib.summary([round(s["rss_kib"] / 1024, 1) for s in ss]),
                      "cpu_ms": benchlib.summary([round(s["cpu_s"] * 1000, 1) for s in ss])}
               for side, ss in samples.items()}

    def ratio(side, key, base="ffmpeg"):
        return round(results[side][key]["median"] / results[base][key]["median"], 3)

    ratios = {"wall": ratio("ftgst", "wall_ms"), "wall_vs_parallel": ratio("ftgst", "wall_ms", "ffmpeg_parallel"),
              "cpu": ratio("ftgst", "cpu_ms"), "peak_rss": ratio("ftgst", "peak_rss_mib"),
              "rerun_wall": ratio("ftgst_rerun", "wall_ms")}
    report = {"benchmark": "batch", "clips": CLIPS, "times_ms": TIMES_MS, "box": BOX, "runs": a.runs,
              "clip": info, "pipeline_file": a.pipeline_file, "nproc": nproc,
              "commands": {"ftgst": f"{a.ftgst} batch JOBS.jsonl  (40 thumbnail lines, timeMs, toleranceMs 0, "
                                    f"maxWidth/maxHeight {BOX})",
                           "ffmpeg": benchlib.shell_join(ffmpeg_cmd("CLIP", f"OUT.{EXT}", 0)).replace("-ss 0", "-ss T")},
              "machine": benchlib.machine_info(), "results": results, "ratios": ratios,
              "decode_groups": facts["decode_groups"], "output_size": list(sizes["ftgst"]), "format": EXT,
              "mean_file_bytes": bytes_,
              "psnr_db": None if psnr is None else (round(psnr, 2) if psnr != float("inf") else "inf"),
              "warnings": [note] if note else []}
    if a.keep_tmp:
        log(f"bench/batch: scratch directory kept: {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        print(json.dumps(report))
        return
    m = report["machine"]
    out = [f"batch benchmark: {CLIPS} clips x {len(TIMES_MS)} exact times {TIMES_MS} ms, {BOX}-px {EXT.upper()}",
           f"  clip     {a.clip} ({a.pipeline_file}): {info['codec']} {info['width']}x{info['height']}, "
           f"{info['frames']} frames, keyframes at {info['keyframes_s']} s; {CLIPS} copies",
           f"  output   40 x {sizes['ftgst'][0]}x{sizes['ftgst'][1]} on both sides, ftgst decode groups "
           f"{facts['decode_groups']}, PSNR ftgst vs ffmpeg " + ("n/a" if psnr is None else f"{psnr:.1f} dB")
           + f"; mean file {bytes_['ftgst']} B (ftgst), {bytes_['ffmpeg']} B (ffmpeg)",
           f"  ftgst    {report['commands']['ftgst']}",
           f"  ffmpeg   {report['commands']['ffmpeg']}  (x40)",
           f"  machine  nproc {nproc}, {m['cpu_model']}, load at start {m['loadavg_at_start']}",
           "",
           f"  {'':<22} {'wall ms':>9} {'min':>9} {'max':>9}   {'RSS MiB':>9}   {'CPU ms':>9}"]
    for side, label in [("ftgst", "ftgst batch"), ("ftgst_rerun", "ftgst batch (rerun)"),
                        ("ffmpeg", "ffmpeg x40, in a row"), ("ffmpeg_parallel", f"ffmpeg x40, {nproc} at once")]:
        r = results[side]
        w = r["wall_ms"]
        out.append(f"  {label:<22} {w['median']:9.1f} {w['min']:9.1f} {w['max']:9.1f}   "
                   f"{r['peak_rss_mib']['median']:9.1f}   {r['cpu_ms']['median']:9.1f}")
    out += ["", f"  ftgst/ffmpeg in a row: wall {ratios['wall']:.3f}  CPU {ratios['cpu']:.3f}  RSS "
            f"{ratios['peak_rss']:.3f};  against {nproc} at once: wall {ratios['wall_vs_parallel']:.3f};  "
            f"rerun/ffmpeg wall {ratios['rerun_wall']:.3f}"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
