"""Measurement half of bench/lut.sh: LUTKernel.apply against ffmpeg's lut3d filter, CPU time per frame.

Called by bench/lut.sh once the frame exists; not meant to be run on its own
(but it can be: see --help).

ftgst side: `ftgst-bench lut` times LUTKernel.apply in process, frame by frame, with
clock_gettime(CLOCK_PROCESS_CPUTIME_ID) (all threads) and CLOCK_MONOTONIC, and reports
medians; it also times the table build and reports peak RSS.
ffmpeg side: the same frame looped FRAMES times through `-vf lut3d=...`, CPU time
(user + sys from GNU time) minus that of the same command without the filter, divided
by FRAMES.

--depth 16: the same for LUTKernel16 (`ftgst-bench lut16`) on the frame widened to
RGBA64_LE (`ftgst-bench frame16`: v*257 plus a fixed dither of +-128), against ffmpeg's
lut3d on the same rgba64le frame; accuracy from `ftgst-bench lut16-check`.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

CPU_TARGET = 0.10   # ftgst CPU ms per frame / ffmpeg CPU ms per frame must be <= this
LUT_SIZE = 33
INTERP = "tetrahedral"


log = benchlib.log


def fail(msg, tmp=None):
    benchlib.fail("bench/lut", msg, tmp)


def run_json(cmd, tmp):
    """Runs an ftgst-bench command; its one JSON line as a dict."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    except OSError as e:
        fail(f"cannot run {cmd[0]}: {e}", tmp)
    if p.returncode != 0:
        fail(f"exit status {p.returncode}\n  command: {benchlib.shell_join(cmd)}\n  stderr: {p.stderr.strip()[-2000:]}",
             tmp)
    try:
        return json.loads(p.stdout)
    except ValueError:
        fail(f"not JSON: {p.stdout[:500]}\n  command: {benchlib.shell_join(cmd)}", tmp)


def timed_ok(cmd, tmp):
    s = benchlib.timed_run(cmd)
    if s.returncode != 0:
        fail(f"exit status {s.returncode}\n  command: {benchlib.shell_join(cmd)}\n  stderr: {s.stderr.strip()[-2000:]}",
             tmp)
    if s.user_s is None:
        fail(f"GNU time gave no figures (is {benchlib.GNU_TIME} GNU time?)", tmp)
    return s


def compare(a_path, b_path):
    """Per-byte comparison of two raw frames: max |a-b|, mean |a-b|, mean (a-b), share of bytes differing."""
    with open(a_path, "rb") as f:
        a = f.read()
    with open(b_path, "rb") as f:
        b = f.read()
    if len(a) != len(b) or not a:
        return None
    histogram = [0] * 511
    for x, y in zip(a, b):
        histogram[x - y + 255] += 1
    n = len(a)
    diffs = [(d - 255, c) for d, c in enumerate(histogram) if c]
    return {
        "max_abs": max(abs(d) for d, _ in diffs),
        "mean_abs": round(sum(abs(d) * c for d, c in diffs) / n, 4),
        "mean_signed": round(sum(d * c for d, c in diffs) / n, 4),
        "share_differing": round(sum(c for d, c in diffs if d) / n, 4),
    }


def compare16(a_path, b_path):
    """Per-sample comparison of two raw RGBA64_LE frames, R, G and B only, in 16-bit codes."""
    with open(a_path, "rb") as f:
        a = f.read()
    with open(b_path, "rb") as f:
        b = f.read()
    if len(a) != len(b) or not a or len(a) % 8:
        return None
    import array
    x = array.array("H", a)
    y = array.array("H", b)
    if sys.byteorder != "little":
        x.byteswap()
        y.byteswap()
    diffs = [x[i] - y[i] for i in range(len(x)) if i % 4 != 3]
    n = len(diffs)
    return {
        "max_abs": max(abs(d) for d in diffs),
        "mean_abs": round(sum(abs(d) for d in diffs) / n, 4),
        "mean_signed": round(sum(diffs) / n, 4),
        "share_differing": round(sum(1 for d in diffs if d) / n, 4),
    }


def main16(a):
    """--depth 16: LUTKernel16 on an RGBA64_LE frame against ffmpeg's lut3d on rgba64le."""
    w, h, n = a.width, a.height, a.frames
    tmp = tempfile.mkdtemp(prefix="ftgst-bench-lut16-")
    cube = os.path.join(tmp, "look.cube")
    frame = os.path.join(tmp, "frame.rgba64")
    run_json([a.bench, "write-cube", cube, "--size", str(LUT_SIZE)], tmp)
    run_json([a.bench, "frame16", a.frame, frame, "--width", str(w), "--height", str(h)], tmp)
    ours_out = os.path.join(tmp, "ours.rgba64")
    ff_out = os.path.join(tmp, "ffmpeg.rgba64")

    ours = [a.bench, "lut16", "--cube", cube, "--frame", frame, "--width", str(w), "--height", str(h),
            "--frames", str(n), "--interpolation", INTERP]
    ours_single = ours + ["--threads", "1"]
    raw_in = ["-f", "rawvideo", "-pix_fmt", "rgba64le", "-s", f"{w}x{h}"]
    lut3d = f"lut3d=file={cube}:interp={INTERP}"
    loop = ["ffmpeg", "-v", "error", "-nostdin", "-stream_loop", str(n - 1)] + raw_in + ["-i", frame]
    ff = loop + ["-vf", lut3d, "-f", "null", "-"]
    base = loop + ["-f", "null", "-"]
    ff_one = ["ffmpeg", "-v", "error", "-nostdin", "-y"] + raw_in + ["-i", frame, "-vf", lut3d,
                                                                     "-frames:v", "1"] + raw_in[:4] + [ff_out]
    machine = benchlib.machine_info()
    log(f"bench/lut: 16-bit, {LUT_SIZE}^3 {INTERP} LUT on {w}x{h} RGBA64_LE, {n} frames per run, {a.runs} runs "
        f"after 1 warm-up; scratch {tmp}")
    run_json(ours + ["--frames", "2", "--out", ours_out], tmp)
    timed_ok(ff_one, tmp)
    timed_ok(ff, tmp)
    timed_ok(base, tmp)
    rounds = []
    for i in range(1, a.runs + 1):
        o = run_json(ours, tmp)
        o1 = run_json(ours_single, tmp)
        f = timed_ok(ff, tmp)
        b = timed_ok(base, tmp)
        r = {
            "ftgst_cpu_ms": o["layouts"]["rgba64"]["cpu_ms"]["median"],
            "ftgst_wall_ms": o["layouts"]["rgba64"]["wall_ms"]["median"],
            "ftgst_1thread_cpu_ms": o1["layouts"]["rgba64"]["cpu_ms"]["median"],
            "build_wall_ms": o["build"]["wall_ms"],
            "ftgst_rss_mib": o["peak_rss_mib"],
            "ffmpeg_cpu_ms": round(((f.user_s + f.sys_s) - (b.user_s + b.sys_s)) * 1000 / n, 3),
            "ffmpeg_wall_ms": round((f.wall_s - b.wall_s) * 1000 / n, 3),
        }
        rounds.append(r)
        log(f"  run {i}/{a.runs}: ftgst RGBA64 {r['ftgst_cpu_ms']:6.2f} ms CPU/frame (1 thread "
            f"{r['ftgst_1thread_cpu_ms']:.2f});  ffmpeg {r['ffmpeg_cpu_ms']:6.2f} ms CPU/frame")
    results = {k: benchlib.summary([r[k] for r in rounds]) for k in rounds[0]}
    ratio = results["ftgst_cpu_ms"]["median"] / results["ffmpeg_cpu_ms"]["median"]
    vs_ffmpeg = compare16(ours_out, ff_out)
    check = None
    if not a.no_exhaustive:
        log("bench/lut: LUTKernel16 against the Double reference (lut16-check) ...")
        check = run_json([a.bench, "lut16-check", "--cube", cube, "--interpolation", "all"], tmp)
    report = {
        "benchmark": "lut16",
        "description": f"a {LUT_SIZE}^3 {INTERP} LUT applied to one {w}x{h} RGBA64_LE frame, CPU time per frame",
        "runs": a.runs, "frames_per_run": n, "pipeline_file": a.pipeline_file,
        "commands": {"ftgst": benchlib.shell_join(ours), "ffmpeg": benchlib.shell_join(ff),
                     "ffmpeg_baseline": benchlib.shell_join(base)},
        "machine": machine,
        "versions": {"ffmpeg": benchlib.first_line(["ffmpeg", "-version"])},
        "strategy": o["strategy"], "table_mib": o["table_mib"], "ftgst_threads": o["threads"],
        "results": results, "ratios": {"cpu_rgba64": round(ratio, 4)},
        "accuracy_vs_ffmpeg_16bit_codes": vs_ffmpeg, "accuracy_vs_reference": check,
    }
    if a.keep_tmp:
        log(f"bench/lut: scratch directory kept: {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        print(json.dumps(report, indent=None, sort_keys=False))
        return

    def row(label, key, unit_key=None):
        s = results[key]
        extra = f"   {results[unit_key]['median']:8.2f}" if unit_key else ""
        return f"  {label:<34} {s['median']:8.2f} {s['min']:8.2f} {s['max']:8.2f}{extra}"

    out = [f"lut benchmark: {report['description']}",
           f"  frame    {frame} (from {a.frame} by ftgst-bench frame16)",
           f"  LUT      synthetic film look, {LUT_SIZE}^3 (ftgst-bench write-cube), {INTERP}",
           f"  runs     {a.runs}, each {n} frames per side; ftgst and ffmpeg alternate",
           "commands:",
           f"  ftgst            {report['commands']['ftgst']}",
           f"  ffmpeg           {report['commands']['ffmpeg']}",
           f"  ffmpeg baseline  {report['commands']['ffmpeg_baseline']}",
           "machine:",
           f"  nproc {machine['nproc']}, CPU {machine['cpu_model']}, kernel {machine['kernel']}, "
           f"load at start {machine['loadavg_at_start']}",
           f"  {report['versions']['ffmpeg']}",
           "",
           f"  {'CPU ms per frame, over runs':<34} {'median':>8} {'min':>8} {'max':>8}   {'wall ms':>8}",
           row(f"ftgst RGBA64 ({o['threads']} threads)", "ftgst_cpu_ms", "ftgst_wall_ms"),
           row("ftgst RGBA64 (1 thread)", "ftgst_1thread_cpu_ms"),
           row("ffmpeg lut3d rgba64le", "ffmpeg_cpu_ms", "ffmpeg_wall_ms"),
           "",
           f"  ftgst/ffmpeg CPU per frame  RGBA64 {ratio:.3f}",
           f"  kernel build {results['build_wall_ms']['median']:.1f} ms wall; strategy {o['strategy']}, tables "
           f"{o['table_mib']:.1f} MiB; peak RSS (ftgst-bench) {results['ftgst_rss_mib']['median']:.1f} MiB"]
    if vs_ffmpeg:
        out.append(f"  vs ffmpeg's output, same frame: max |diff| {vs_ffmpeg['max_abs']} 16-bit codes, mean |diff| "
                   f"{vs_ffmpeg['mean_abs']}, mean (ftgst - ffmpeg) {vs_ffmpeg['mean_signed']:+}")
    if check:
        parts = [f"{r['interpolation']} {r['difference_histogram']}" for r in check["results"]]
        out.append(f"  vs the Double reference, {check['inputs']} inputs, |diff| in 16-bit codes: " + "; ".join(parts))
    print("\n".join(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bench", required=True, help="ftgst-bench binary")
    ap.add_argument("--frame", required=True, help="raw rgb24 frame")
    ap.add_argument("--width", type=int, default=1920)
    ap.add_argument("--height", type=int, default=1080)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--pipeline-file", default=None, help="only reported")
    ap.add_argument("--no-exhaustive", action="store_true", help="skip the 2^24-input accuracy check")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep-tmp", action="store_true")
    ap.add_argument("--depth", type=int, choices=[8, 16], default=8,
                    help="16: LUTKernel16 on the frame widened to RGBA64_LE, against lut3d on rgba64le")
    a = ap.parse_args()
    if a.runs < 1 or a.frames < 2:
        fail("--runs must be at least 1 and --frames at least 2")
    w, h, n = a.width, a.height, a.frames
    if os.path.getsize(a.frame) != w * h * 3:
        fail(f"{a.frame} is {os.path.getsize(a.frame)} bytes, expected {w}x{h}x3")
    if a.depth == 16:
        main16(a)
        return

    tmp = tempfile.mkdtemp(prefix="ftgst-bench-lut-")
    cube = os.path.join(tmp, "look.cube")
    run_json([a.bench, "write-cube", cube, "--size", str(LUT_SIZE)], tmp)
    ours_out = os.path.join(tmp, "ours.rgb")
    ff_out = os.path.join(tmp, "ffmpeg.rgb")

    ours = [a.bench, "lut", "--cube", cube, "--frame", a.frame, "--width", str(w), "--height", str(h),
            "--frames", str(n), "--interpolation", INTERP]
    ours_single = ours + ["--threads", "1"]
    raw_in = ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{w}x{h}"]
    lut3d = f"lut3d=file={cube}:interp={INTERP}"
    ff = ["ffmpeg", "-v", "error", "-nostdin", "-stream_loop", str(n - 1)] + raw_in + ["-i", a.frame,
                                                                                      "-vf", lut3d, "-f", "null", "-"]
    base = ["ffmpeg", "-v", "error", "-nostdin", "-stream_loop", str(n - 1)] + raw_in + ["-i", a.frame,
                                                                                        "-f", "null", "-"]
    ff_one = ["ffmpeg", "-v", "error", "-nostdin", "-y"] + raw_in + ["-i", a.frame, "-vf", lut3d,
                                                                     "-frames:v", "1"] + raw_in[:4] + [ff_out]

    machine = benchlib.machine_info()
    versions = {"ffmpeg": benchlib.first_line(["ffmpeg", "-version"]), "bench_path": os.path.abspath(a.bench)}
    log(f"bench/lut: {LUT_SIZE}^3 {INTERP} LUT on {w}x{h}, {n} frames per run, {a.runs} runs after 1 warm-up; "
        f"scratch {tmp}")

    # Warm-up (page cache, dynamic loader), also producing the two outputs for the accuracy check.
    run_json(ours + ["--frames", "2", "--out", ours_out], tmp)
    timed_ok(ff_one, tmp)
    timed_ok(ff, tmp)
    timed_ok(base, tmp)

    rounds = []
    for i in range(1, a.runs + 1):
        o = run_json(ours, tmp)
        o1 = run_json(ours_single, tmp)
        f = timed_ok(ff, tmp)
        b = timed_ok(base, tmp)
        ff_cpu = ((f.user_s + f.sys_s) - (b.user_s + b.sys_s)) * 1000 / n
        ff_wall = (f.wall_s - b.wall_s) * 1000 / n
        r = {
            "ftgst_rgb_cpu_ms": o["layouts"]["rgb"]["cpu_ms"]["median"],
            "ftgst_rgb_wall_ms": o["layouts"]["rgb"]["wall_ms"]["median"],
            "ftgst_rgbx_cpu_ms": o["layouts"]["rgbx"]["cpu_ms"]["median"],
            "ftgst_rgbx_wall_ms": o["layouts"]["rgbx"]["wall_ms"]["median"],
            "ftgst_rgb_1thread_cpu_ms": o1["layouts"]["rgb"]["cpu_ms"]["median"],
            "ftgst_rgbx_1thread_cpu_ms": o1["layouts"]["rgbx"]["cpu_ms"]["median"],
            "build_wall_ms": o["build"]["first"]["wall_ms"],
            "build_cpu_ms": o["build"]["first"]["cpu_ms"],
            "rss_before_kernel_mib": o["peak_rss_mib"]["before_kernel"],
            "rss_after_build_mib": o["peak_rss_mib"]["after_build"],
            "rss_end_mib": o["peak_rss_mib"]["end"],
            "huge_pages_mib": o.get("huge_pages_mib"),
            "ffmpeg_cpu_ms": round(ff_cpu, 3),
            "ffmpeg_wall_ms": round(ff_wall, 3),
            "ffmpeg_filter_rss_mib": round(f.rss_kib / 1024, 1),
            "ffmpeg_base_rss_mib": round(b.rss_kib / 1024, 1),
        }
        rounds.append(r)
        log(f"  run {i}/{a.runs}: ftgst RGB {r['ftgst_rgb_cpu_ms']:6.2f} ms CPU/frame "
            f"(RGBx {r['ftgst_rgbx_cpu_ms']:.2f}, 1 thread {r['ftgst_rgb_1thread_cpu_ms']:.2f}), "
            f"build {r['build_wall_ms']:.0f} ms;  ffmpeg {ff_cpu:6.2f} ms CPU/frame")
    threads = o["threads"]
    table_mib = o["table_mib"]
    strategy = o["strategy"]

    results = {k: benchlib.summary([r[k] for r in rounds]) for k in rounds[0]}
    ratio = results["ftgst_rgb_cpu_ms"]["median"] / results["ffmpeg_cpu_ms"]["median"]
    ratio_rgbx = results["ftgst_rgbx_cpu_ms"]["median"] / results["ffmpeg_cpu_ms"]["median"]
    verdict = "PASS" if ratio <= CPU_TARGET else "MISS"

    vs_ffmpeg = compare(ours_out, ff_out)
    exhaustive = None
    if not a.no_exhaustive:
        log("bench/lut: checking all 2^24 inputs against the Double reference ...")
        exhaustive = run_json([a.bench, "lut-check", "--cube", cube, "--interpolation", "all"], tmp)["results"]

    report = {
        "benchmark": "lut",
        "description": f"a {LUT_SIZE}^3 {INTERP} LUT applied to one {w}x{h} 8-bit frame, CPU time per frame",
        "runs": a.runs,
        "frames_per_run": n,
        "pipeline_file": a.pipeline_file,
        "commands": {
            "ftgst": benchlib.shell_join(ours),
            "ffmpeg": benchlib.shell_join(ff),
            "ffmpeg_baseline": benchlib.shell_join(base),
        },
        "timing": ("ftgst: in-process CLOCK_PROCESS_CPUTIME_ID around each apply, median of the frames; "
                   "ffmpeg: GNU time user+sys of the filtered run minus the baseline run, / frames"),
        "machine": machine,
        "versions": versions,
        "ftgst_threads": threads,
        "strategy": strategy,
        "table_mib": table_mib,
        "results": results,
        "ratios": {"cpu_rgb": round(ratio, 4), "cpu_rgbx": round(ratio_rgbx, 4)},
        "targets": {"cpu": {"max_ratio": CPU_TARGET, "verdict": verdict}},
        "accuracy_vs_ffmpeg": vs_ffmpeg,
        "accuracy_vs_reference_all_inputs": exhaustive,
    }

    if a.keep_tmp:
        log(f"bench/lut: scratch directory kept: {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)

    if a.json:
        print(json.dumps(report, indent=None, sort_keys=False))
        return

    def row(label, key, unit_key=None):
        s = results[key]
        extra = f"   {results[unit_key]['median']:8.2f}" if unit_key else ""
        return f"  {label:<34} {s['median']:8.2f} {s['min']:8.2f} {s['max']:8.2f}{extra}"

    out = []
    out.append(f"lut benchmark: {report['description']}")
    out.append(f"  frame    {a.frame} ({w}x{h} rgb24" + (f", from {a.pipeline_file})" if a.pipeline_file else ")"))
    out.append(f"  LUT      synthetic film look, {LUT_SIZE}^3 (ftgst-bench write-cube), {INTERP}")
    out.append(f"  runs     {a.runs}, each {n} frames per side; ftgst and ffmpeg alternate")
    out.append("commands:")
    out.append(f"  ftgst            {report['commands']['ftgst']}")
    out.append(f"  ffmpeg           {report['commands']['ffmpeg']}")
    out.append(f"  ffmpeg baseline  {report['commands']['ffmpeg_baseline']}")
    out.append("machine:")
    out.append(f"  nproc {machine['nproc']}, CPU {machine['cpu_model']}, kernel {machine['kernel']}, "
               f"load at start {machine['loadavg_at_start']}")
    out.append(f"  {versions['ffmpeg']}")
    out.append("")
    out.append(f"  {'CPU ms per frame, over runs':<34} {'median':>8} {'min':>8} {'max':>8}   {'wall ms':>8}")
    out.append(row(f"ftgst RGB ({threads} threads)", "ftgst_rgb_cpu_ms", "ftgst_rgb_wall_ms"))
    out.append(row(f"ftgst RGBx ({threads} threads)", "ftgst_rgbx_cpu_ms", "ftgst_rgbx_wall_ms"))
    out.append(row("ftgst RGB (1 thread)", "ftgst_rgb_1thread_cpu_ms"))
    out.append(row("ftgst RGBx (1 thread)", "ftgst_rgbx_1thread_cpu_ms"))
    out.append(row("ffmpeg lut3d rgb24", "ffmpeg_cpu_ms", "ffmpeg_wall_ms"))
    out.append("")
    out.append(f"  ftgst/ffmpeg CPU per frame  RGB {ratio:.3f}  RGBx {ratio_rgbx:.3f}  "
               f"(target <= {CPU_TARGET:.2f})  {verdict}")
    out.append(f"  table build (first, as an element starting): {results['build_wall_ms']['median']:.1f} ms wall, "
               f"{results['build_cpu_ms']['median']:.1f} ms CPU; strategy {strategy}, table {table_mib:.0f} MiB, "
               f"huge pages {results['huge_pages_mib']['median']:.0f} MiB")
    out.append(f"  peak RSS (ftgst-bench): {results['rss_before_kernel_mib']['median']:.1f} MiB before the kernel "
               f"(frames loaded), {results['rss_after_build_mib']['median']:.1f} after the build, "
               f"{results['rss_end_mib']['median']:.1f} at the end;  ffmpeg {results['ffmpeg_filter_rss_mib']['median']:.1f}"
               f" (without the filter {results['ffmpeg_base_rss_mib']['median']:.1f})")
    if vs_ffmpeg:
        out.append(f"  vs ffmpeg's output, same frame: max |diff| {vs_ffmpeg['max_abs']} codes, mean |diff| "
                   f"{vs_ffmpeg['mean_abs']}, mean (ftgst - ffmpeg) {vs_ffmpeg['mean_signed']:+}, "
                   f"{vs_ffmpeg['share_differing'] * 100:.1f} % of bytes differ (ffmpeg truncates, see bench/README.md)")
    if exhaustive:
        parts = [f"{r['interpolation']} max {r['max_code_difference']} ({r['channels_off_by_one']} of "
                 f"{r['channels']} channels off by 1)" for r in exhaustive]
        out.append("  vs the Double reference, all 2^24 inputs: " + "; ".join(parts))
    print("\n".join(out))


if __name__ == "__main__":
    main()
