"""Measurement half of bench/desktop.sh: what the desktop costs an export, and how long the desktop calls take.

- `ftgst export CLIP -o OUT --notify` against the same export without `--notify`, alternating, on a private
  session bus (dbus-daemon with no service directories) where a python-dbusmock stand-in portal serves
  Notification, Inhibit and MemoryMonitor: wall time, CPU and peak memory, medians and ratios (the peer is the
  export itself; the promise is that showing it costs nothing measurable).
- `ftgst pick source` against the stand-in (which answers after 50 ms), and `ftgst desktop`: wall, medians.
"""

import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "Tests", "Resources", "desktop"))
import private_bus  # noqa: E402  (the tests' private session bus and stand-in portal)

log = benchlib.log


def fail(msg, tmp=None):
    benchlib.fail("bench/desktop", msg, tmp)


def main():
    ap = benchlib.clip_arguments(__doc__, runs=5)
    a = benchlib.parse_runs(ap, "bench/desktop")
    tmp = tempfile.mkdtemp(prefix="ftgst-bench-desktop-")
    processes = []
    try:
        try:
            parameters = {"interfaces": ["Notification", "Inhibit", "MemoryMonitor"], "uris": ["file:///tmp/picked.mp4"]}
            address, _, processes = private_bus.start(tmp, parameters)
        except RuntimeError as error:
            fail(str(error), tmp)
        env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address, DISPLAY="", WAYLAND_DISPLAY="",
                   XDG_STATE_HOME=os.path.join(tmp, "state"))
        workspace = os.path.join(tmp, "workspace")
        out = os.path.join(tmp, "out.mp4")
        base = [a.ftgst, "export", a.clip, "-o", out, "--overwrite", "--workspace", workspace,
                "--progress", "none", "--audio", "none"]
        sides = {"plain": base, "notify": base + ["--notify"]}
        samples = {name: [] for name in sides}
        for name, cmd in sides.items():  # warm-up
            benchlib.timed_run(cmd, env=env)
        for round_ in range(a.runs):
            order = list(sides.items()) if round_ % 2 == 0 else list(reversed(sides.items()))
            for name, cmd in order:
                s = benchlib.timed_run(cmd, env=env)
                if s.returncode != 0:
                    fail(f"{name}: exit status {s.returncode}: {s.stderr.strip()[-1000:]}", tmp)
                samples[name].append(s)
            log(f"bench/desktop: round {round_ + 1}/{a.runs}")
        notifications = sum(1 for line in open(os.path.join(tmp, "portal.log"))
                            if "ftgst-call " in line and "Notification.AddNotification" in line)
        if notifications == 0:
            fail("the --notify exports showed no notification", tmp)
        calls = {}
        for name, cmd in {"pick": [a.ftgst, "pick", "source"], "desktop": [a.ftgst, "desktop"]}.items():
            runs = []
            for _ in range(a.runs):
                s = benchlib.timed_run(cmd, env=env)
                if s.returncode != 0:
                    fail(f"{name}: exit status {s.returncode}: {s.stderr.strip()}", tmp)
                runs.append(s.wall_s)
            calls[name] = benchlib.summary([round(w * 1000, 1) for w in runs])

        def stats(name):
            return {"wall_s": benchlib.summary([round(s.wall_s, 3) for s in samples[name]]),
                    "cpu_s": benchlib.summary([round(s.user_s + s.sys_s, 3) for s in samples[name]]),
                    "peak_rss_mib": benchlib.summary([round(s.rss_kib / 1024, 1) for s in samples[name]])}
        report = {"clip": a.clip, "pipeline_file": a.pipeline_file, "runs": a.runs,
                  "plain": stats("plain"), "notify": stats("notify"),
                  "notifications_shown": notifications, "calls_ms": calls, "machine": benchlib.machine_info()}
        report["ratio_wall"] = round(report["notify"]["wall_s"]["median"] / report["plain"]["wall_s"]["median"], 3)
        report["ratio_rss"] = round(report["notify"]["peak_rss_mib"]["median"]
                                    / report["plain"]["peak_rss_mib"]["median"], 3)
        if a.json:
            print(json.dumps(report))
        else:
            print(f"export of {a.pipeline_file or a.clip}, {a.runs} runs each, medians")
            for name in ("plain", "notify"):
                r = report[name]
                print(f"  {name:7s} wall {r['wall_s']['median']:.3f} s  cpu {r['cpu_s']['median']:.3f} s  "
                      f"peak {r['peak_rss_mib']['median']:.1f} MiB")
            print(f"  --notify / plain: wall {report['ratio_wall']:.3f}x  peak memory {report['ratio_rss']:.3f}x "
                  f"({notifications} notifications shown)")
            print(f"  ftgst pick source (stand-in answers after 50 ms): {calls['pick']['median']:.1f} ms")
            print(f"  ftgst desktop: {calls['desktop']['median']:.1f} ms")
    finally:
        private_bus.stop(processes)
        if not a.keep_tmp:
            shutil.rmtree(tmp, True)


if __name__ == "__main__":
    main()
