"""Measurement half of bench/thumbnailer.sh: `ftgst thumbnailer` against ffmpegthumbnailer, each making the
256-px PNG a file manager asks a desktop thumbnailer for (`-s 256 -i CLIP -o OUT.png`), each picking its own
frame (ftgst: --time auto's keyframe of the first third; ffmpegthumbnailer: its default 10 % seek).
"""

import argparse
import json
import os
import shutil
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

SIZE = 256


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--clip", required=True)
    ap.add_argument("--ftgst", required=True)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--pipeline-file", default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ftgst-bench-thumbnailer-")
    cmds = {
        "ftgst": lambda out: [a.ftgst, "thumbnailer", "-s", str(SIZE), "-i", a.clip, "-o", out],
        "ffmpegthumbnailer": lambda out: ["ffmpegthumbnailer", "-s", str(SIZE), "-i", a.clip, "-o", out],
    }
    samples = {side: [] for side in cmds}
    sizes = {}
    for i in range(a.runs + 1):  # run 0 is the warm-up of each side
        for side, make in cmds.items():
            out = os.path.join(tmp, f"{side}-{i}.png")
            s = benchlib.timed_run(make(out))
            size = png_size(out) if os.path.isfile(out) else None
            if s.returncode != 0 or size is None or max(size) > SIZE:
                benchlib.fail("bench/thumbnailer", f"{side} failed or wrote no PNG within {SIZE} px "
                              f"(status {s.returncode}, size {size}): {s.stderr.strip()[-1000:]}", tmp)
            sizes[side] = size
            if i > 0:
                samples[side].append(s)
                benchlib.log(f"  run {i}/{a.runs}: {side:<17} {s.wall_s * 1000:7.1f} ms {s.rss_kib / 1024:6.1f} MiB")
    shutil.rmtree(tmp, ignore_errors=True)
    results = {side: {"wall_ms": benchlib.summary([round(s.wall_s * 1000, 2) for s in ss]),
                      "peak_rss_mib": benchlib.summary([round(s.rss_kib / 1024, 2) for s in ss]),
                      "cpu_ms": benchlib.summary([round((s.user_s + s.sys_s) * 1000, 1) for s in ss]),
                      "output_size": list(sizes[side])}
               for side, ss in samples.items()}
    ratio = {k: round(results["ftgst"][k]["median"] / results["ffmpegthumbnailer"][k]["median"], 3)
             for k in ("wall_ms", "peak_rss_mib")}
    report = {"benchmark": "thumbnailer", "clip": a.clip, "pipeline_file": a.pipeline_file, "runs": a.runs,
              "commands": {side: benchlib.shell_join(make("$TMP/out.png")) for side, make in cmds.items()},
              "machine": benchlib.machine_info(),
              "versions": {"ffmpegthumbnailer": benchlib.first_line(["ffmpegthumbnailer", "-v"])},
              "results": results, "ratios": {"wall": ratio["wall_ms"], "peak_rss": ratio["peak_rss_mib"]}}
    if a.json:
        print(json.dumps(report))
        return
    print(f"thumbnailer benchmark: {SIZE}-px PNG of {a.clip}" + (f" ({a.pipeline_file})" if a.pipeline_file else ""))
    for side, cmd in report["commands"].items():
        print(f"  {side:<17} {cmd}")
    print(f"  machine: nproc {report['machine']['nproc']}, load at start {report['machine']['loadavg_at_start']}")
    print(f"  {'':<17} {'wall ms':>9} {'RSS MiB':>9} {'CPU ms':>9}  (medians of {a.runs}, alternating)")
    for side, r in results.items():
        print(f"  {side:<17} {r['wall_ms']['median']:9.1f} {r['peak_rss_mib']['median']:9.1f} "
              f"{r['cpu_ms']['median']:9.1f}  {r['output_size'][0]}x{r['output_size'][1]}")
    print(f"  ftgst/ffmpegthumbnailer  wall {ratio['wall_ms']:.2f}  RSS {ratio['peak_rss_mib']:.2f}")


if __name__ == "__main__":
    main()
