"""Measurement half of bench/mezzanine.sh: exact-time previews with and without the mezzanine.

Called by bench/mezzanine.sh once the clip exists; not meant to be run on its own
(but it can be: see --help).
"""

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

SPEEDUP_TARGET = 5.0   # median direct preview / median preview from the mezzanine must be >= this
PSNR_WARN_DB = 35.0    # a preview from the mezzanine against the direct one at the same time


def fail(msg, tmp=None):
    benchlib.fail("bench/mezzanine", msg, tmp)


def one_json(sample, cmd, tmp):
    where = f"\n  command: {benchlib.shell_join(cmd)}"
    if sample.returncode != 0:
        fail(f"ftgst exited with status {sample.returncode}{where}\n  stderr: {sample.stderr.strip()[-2000:]}", tmp)
    lines = [l for l in sample.stdout.splitlines() if l.strip()]
    if len(lines) != 1:
        fail(f"ftgst should print exactly one JSON line, printed {len(lines)}{where}", tmp)
    try:
        obj = json.loads(lines[0])
    except ValueError:
        fail(f"ftgst printed a line that is not JSON: {lines[0][:500]}{where}", tmp)
    return obj


def preview_cmd(ftgst, clip, ms, out, mezzanine_dir, use):
    return [ftgst, "preview", clip, "--time-ms", str(ms), "--format", "jpeg", "-o", out,
            "--mezzanine", "auto" if use else "off", "--mezzanine-dir", mezzanine_dir]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--clip", required=True)
    ap.add_argument("--ftgst", required=True)
    ap.add_argument("--times", type=int, default=20)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--pipeline-file", default=None, help="only reported")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep-tmp", action="store_true")
    a = ap.parse_args()

    clip = os.path.abspath(a.clip)
    tmp = tempfile.mkdtemp(prefix="ftgst-bench-mezzanine-")
    mezz_dir = os.path.join(tmp, "mezzanines")
    machine = benchlib.machine_info()
    rng = random.Random(a.seed)
    # Whole milliseconds over the clip, away from its very end (the last frame starts at 59.967 s).
    times = [rng.randrange(0, 59_900) for _ in range(a.times)]

    # Warm-up: page cache, GStreamer registry, dynamic loader.
    benchlib.log("bench/mezzanine: warm-up ...")
    warm = preview_cmd(a.ftgst, clip, 1000, os.path.join(tmp, "warm.jpg"), mezz_dir, False)
    one_json(benchlib.timed_run(warm), warm, tmp)

    benchlib.log("bench/mezzanine: building the mezzanine ...")
    build_cmd = [a.ftgst, "mezzanine", clip, "--mezzanine-dir", mezz_dir]
    build_sample = benchlib.timed_run(build_cmd)
    built = one_json(build_sample, build_cmd, tmp)
    if built.get("built") is not True:
        fail(f"the mezzanine was not built (a fresh cache folder): {built}", tmp)
    hit_sample = benchlib.timed_run(build_cmd)
    hit = one_json(hit_sample, build_cmd, tmp)
    if hit.get("built") is not False:
        fail(f"the second call built again: {hit}", tmp)

    direct_ms, mezz_ms, psnrs, rows = [], [], [], []
    for i, ms in enumerate(times):
        benchlib.log(f"bench/mezzanine: preview {i + 1}/{len(times)} at {ms} ms")
        pair = {}
        for use in (False, True):  # alternate, so background noise falls on both sides alike
            out = os.path.join(tmp, f"{'mezz' if use else 'direct'}-{i}.jpg")
            cmd = preview_cmd(a.ftgst, clip, ms, out, mezz_dir, use)
            sample = benchlib.timed_run(cmd)
            obj = one_json(sample, cmd, tmp)
            if obj.get("mezzanine") is not use:
                fail(f"preview reported mezzanine={obj.get('mezzanine')}, expected {use}", tmp)
            if not os.path.isfile(out) or os.path.getsize(out) == 0:
                fail(f"no preview written at {out}", tmp)
            pair[use] = (sample.wall_s * 1000, obj, out)
        if pair[True][1].get("timeMs") != pair[False][1].get("timeMs"):
            fail(f"at {ms} ms the mezzanine gave the frame at {pair[True][1].get('timeMs')} ms, "
                 f"the source the frame at {pair[False][1].get('timeMs')} ms", tmp)
        direct_ms.append(round(pair[False][0], 1))
        mezz_ms.append(round(pair[True][0], 1))
        psnrs.append(benchlib.psnr_db(pair[True][2], pair[False][2]))
        rows.append({"time_ms": ms, "frame_ms": pair[True][1].get("timeMs"), "direct_ms": direct_ms[-1],
                     "mezzanine_ms": mezz_ms[-1], "psnr_db": psnrs[-1]})

    direct_med = statistics.median(direct_ms)
    mezz_med = statistics.median(mezz_ms)
    speedup = direct_med / mezz_med if mezz_med > 0 else float("inf")
    build_wall = build_sample.wall_s * 1000
    saved = direct_med - mezz_med
    finite = [p for p in psnrs if p is not None]
    warnings = [f"PSNR {p:.1f} dB at {r['time_ms']} ms" for p, r in zip(psnrs, rows)
                if p is not None and p < PSNR_WARN_DB]
    result = {
        "clip": {"path": clip, "pipeline_file": a.pipeline_file},
        "seed": a.seed,
        "times_ms": times,
        "commands": {
            "build": benchlib.shell_join([a.ftgst, "mezzanine", "CLIP", "--mezzanine-dir", "@TMP@/mezzanines"]),
            "direct": benchlib.shell_join(preview_cmd(a.ftgst, "CLIP", "T", "@TMP@/direct-@I@.jpg",
                                                      "@TMP@/mezzanines", False)),
            "mezzanine": benchlib.shell_join(preview_cmd(a.ftgst, "CLIP", "T", "@TMP@/mezz-@I@.jpg",
                                                         "@TMP@/mezzanines", True)),
        },
        "mezzanine": {"build_wall_ms": round(build_wall, 1), "build_cpu_ms": round(
            (build_sample.user_s + build_sample.sys_s) * 1000, 1), "build_peak_rss_mib": round(
            build_sample.rss_kib / 1024, 1), "hit_wall_ms": round(hit_sample.wall_s * 1000, 1),
            "width": built.get("width"), "height": built.get("height"), "frames": built.get("frames"),
            "size_bytes": built.get("sizeBytes")},
        "results": {"direct_ms": benchlib.summary(direct_ms), "mezzanine_ms": benchlib.summary(mezz_ms),
                    "direct_total_ms": round(sum(direct_ms), 1), "mezzanine_total_ms": round(sum(mezz_ms), 1),
                    "psnr_db": {"min": min(finite) if finite else None,
                                "median": statistics.median(finite) if finite else None}},
        "per_time": rows,
        "ratios": {"speedup_median": round(speedup, 2)},
        "targets": {"speedup": {"min_ratio": SPEEDUP_TARGET,
                                "verdict": "PASS" if speedup >= SPEEDUP_TARGET else "MISS"}},
        "break_even_previews": round(build_wall / saved, 1) if saved > 0 else None,
        "warnings": warnings,
        "machine": machine,
        "versions": {"gstreamer": benchlib.first_line(["gst-launch-1.0", "--version"])},
    }
    if a.json:
        print(json.dumps(result, indent=1))
    else:
        m = result["mezzanine"]
        r = result["results"]
        print(f"clip {clip} ({a.pipeline_file}); {len(times)} exact-time previews, seed {a.seed}; "
              f"{machine['nproc']} cores, load {machine['loadavg_at_start']}")
        print(f"  mezzanine build   {m['build_wall_ms']:8.0f} ms wall, {m['build_cpu_ms']:.0f} ms CPU, "
              f"{m['build_peak_rss_mib']} MiB peak; {m['width']}x{m['height']}, {m['frames']} frames, "
              f"{m['size_bytes'] / 1e6:.1f} MB; cache hit (SHA-256 check) {m['hit_wall_ms']:.0f} ms")
        print("                     median       min       max     total   (ms per preview, wall)")
        for name, key, total in (("direct (source)", "direct_ms", "direct_total_ms"),
                                 ("from mezzanine", "mezzanine_ms", "mezzanine_total_ms")):
            s = r[key]
            print(f"  {name:16} {s['median']:8.1f}  {s['min']:8.1f}  {s['max']:8.1f}  {r[total]:8.0f}")
        print(f"\n  speedup (median)  {speedup:.1f}x  (target >= {SPEEDUP_TARGET:g}x)  "
              f"{result['targets']['speedup']['verdict']}")
        print(f"  break-even after  {result['break_even_previews']} previews")
        print(f"  PSNR mezzanine vs direct, same frame: min {r['psnr_db']['min']}, median {r['psnr_db']['median']} dB")
        for w in warnings:
            print(f"  WARNING: {w}")
    if a.keep_tmp:
        benchlib.log(f"bench/mezzanine: scratch directory kept: {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
