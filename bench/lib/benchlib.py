"""Small helpers shared by the bench/ scripts (standard library only, Python 3.9+).

Timing model: every measured command runs as its own child of GNU time
(`/usr/bin/time -f ...`), so peak RSS is that one process tree's maximum,
not the running maximum over all children that RUSAGE_CHILDREN would give.
Wall time is taken here with time.perf_counter() around the whole thing
(GNU time's own %e only has 10 ms resolution); the fork/exec of GNU time
itself adds about a millisecond, the same on both sides of a comparison.
"""

import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

GNU_TIME = "/usr/bin/time"
# %M = max RSS (KiB), %U/%S = user/system CPU seconds, %x = exit status.
_TIME_FORMAT = "BENCHTIME %M %U %S %x"


class Sample:
    __slots__ = ("wall_s", "rss_kib", "user_s", "sys_s", "returncode", "stdout", "stderr")

    def __init__(self, wall_s, rss_kib, user_s, sys_s, returncode, stdout, stderr):
        self.wall_s = wall_s
        self.rss_kib = rss_kib
        self.user_s = user_s
        self.sys_s = sys_s
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


def log(msg):
    """Progress and errors go to stderr, so stdout stays the report."""
    print(msg, file=sys.stderr, flush=True)


def fail(prefix, msg, tmp=None):
    """Report an error (and a kept scratch folder) and exit 1."""
    log(f"{prefix}: ERROR: " + msg)
    if tmp:
        log(f"{prefix}: scratch directory kept for inspection: {tmp}")
    sys.exit(1)


def clip_arguments(description, runs, clip_help=None):
    """The arguments every clip benchmark's measurement half takes (--clip, --ftgst, --runs with its default,
    --pipeline-file, --json, --keep-tmp); the caller adds its own, then calls parse_runs."""
    import argparse

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--clip", required=True, help=clip_help)
    ap.add_argument("--ftgst", required=True)
    ap.add_argument("--runs", type=int, default=runs)
    ap.add_argument("--pipeline-file", default=None, help="only reported")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep-tmp", action="store_true")
    return ap


def parse_runs(ap, prefix):
    """ap.parse_args(), refusing fewer than one timed run per side."""
    a = ap.parse_args()
    if a.runs < 1:
        fail(prefix, "--runs must be at least 1")
    return a


def timed_run(cmd, cwd=None, env=None):
    """Run cmd (a list) once under GNU time; return a Sample.

    stdout/stderr of the command are captured (decoded, errors replaced).
    returncode is the command's own exit status (-signal if it was killed).
    """
    fd, report = tempfile.mkstemp(prefix="benchtime-", suffix=".txt")
    os.close(fd)
    try:
        full = [GNU_TIME, "-f", _TIME_FORMAT, "-o", report, "--"] + list(cmd)
        t0 = time.perf_counter()
        proc = subprocess.run(full, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wall = time.perf_counter() - t0
        with open(report, encoding="utf-8", errors="replace") as f:
            lines = [l for l in f.read().splitlines() if l.startswith("BENCHTIME ")]
    finally:
        os.unlink(report)
    rss = user = sys_ = None
    rc = proc.returncode
    if lines:
        _, m, u, s, x = lines[-1].split()
        rss, user, sys_ = int(m), float(u), float(s)
        rc = int(x)
    # GNU time itself exits 127/126 when it cannot run the command; signals show as rc<0 here.
    if proc.returncode != 0 and rc == 0:
        rc = proc.returncode
    return Sample(wall, rss, user, sys_, rc,
                  proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))


def summary(values):
    """median/min/max (and the samples) of a list of numbers."""
    vals = list(values)
    return {
        "median": round(statistics.median(vals), 3),
        "min": min(vals),
        "max": max(vals),
        "samples": vals,
    }


def shell_join(cmd):
    """Shell-quoted command line; the placeholders @TMP@ and @I@ come out as $TMP and $i."""
    return shlex.join(cmd).replace("@TMP@", "$TMP").replace("@I@", "$i")


def machine_info():
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        nproc = int(subprocess.run(["nproc"], capture_output=True, text=True, check=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError, ValueError):
        nproc = os.cpu_count()
    try:
        with open("/proc/loadavg", encoding="utf-8") as f:
            load = " ".join(f.read().split()[:3])
    except OSError:
        load = None
    return {
        "nproc": nproc,
        "cpu_model": model or platform.processor() or "unknown",
        "kernel": platform.release(),
        "loadavg_at_start": load,
    }


def first_line(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, errors="replace").stdout
    except OSError:
        return None
    return out.splitlines()[0].strip() if out.strip() else None


def all_lines(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, errors="replace").stdout
    except OSError:
        return None
    return " | ".join(l.strip() for l in out.splitlines() if l.strip()) or None


def jpeg_size(path):
    """(width, height) from the first SOF marker of a JPEG file, or None if not a JPEG."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if data[:2] != b"\xff\xd8":
        return None
    i = 2
    n = len(data)
    while i + 4 <= n:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        seglen = int.from_bytes(data[i + 2:i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if i + 9 > n:
                return None
            h = int.from_bytes(data[i + 5:i + 7], "big")
            w = int.from_bytes(data[i + 7:i + 9], "big")
            return (w, h)
        if marker == 0xDA:  # start of scan before any SOF: malformed
            return None
        i += 2 + seglen
    return None


def image_size(path):
    """(width, height) of a JPEG (its first SOF) or a PNG (its IHDR), or None if neither."""
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        return (int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big"))
    return jpeg_size(path)


def psnr_db(a, b):
    """Average PSNR (dB) between two same-sized images, via ffmpeg; inf if identical, None on failure."""
    try:
        err = subprocess.run(["ffmpeg", "-hide_banner", "-nostats", "-i", a, "-i", b,
                              "-lavfi", "psnr", "-f", "null", "-"],
                             capture_output=True, text=True, errors="replace").stderr
    except OSError:
        return None
    m = re.search(r"average:(inf|[0-9.]+)", err)
    if not m:
        return None
    return float("inf") if m.group(1) == "inf" else float(m.group(1))


def list_files(root):
    """Set of regular files under root (relative paths)."""
    found = set()
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            found.add(os.path.relpath(os.path.join(dirpath, name), root))
    return found
