"""Measurement half of bench/desktop.sh: what the desktop costs an export, and how long the desktop calls take.

- `ftgst export CLIP -o OUT --notify` against the same export without `--notify`, alternating, on a private
  session bus (dbus-daemon with no service directories) where a python-dbusmock stand-in portal serves
  Notification, Inhibit and MemoryMonitor: wall time, CPU and peak memory, medians and ratios (the peer is the
  export itself; the promise is that showing it costs nothing measurable).
- `ftgst pick source` against the stand-in (which answers after 50 ms), and `ftgst desktop`: wall, medians.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

log = benchlib.log
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def fail(msg, tmp=None):
    benchlib.fail("bench/desktop", msg, tmp)


def private_bus(tmp, processes):
    socket = os.path.join(tmp, "bus")
    config = os.path.join(tmp, "bus.conf")
    with open(config, "w") as f:
        f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path={socket}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
<allow own="*"/></policy></busconfig>""")
    processes.append(subprocess.Popen(["/usr/bin/dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile"],
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    deadline = time.monotonic() + 20
    while not os.path.exists(socket):
        if time.monotonic() > deadline:
            fail("dbus-daemon did not listen within 20 s", tmp)
        time.sleep(0.02)
    address = "unix:path=" + socket
    env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address)
    template = os.path.join(REPO, "Tests", "Resources", "desktop", "portal.py")
    parameters = {"interfaces": ["Notification", "Inhibit", "MemoryMonitor"], "uris": ["file:///tmp/picked.mp4"]}
    processes.append(subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--session", "-t", template,
                                       "-l", os.path.join(tmp, "portal.log"), "-p", json.dumps(parameters)],
                                      env=env, stdout=subprocess.DEVNULL))
    while True:
        owned = subprocess.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path",
                                "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner",
                                "org.freedesktop.portal.Desktop"], env=env, capture_output=True, text=True)
        if "true" in owned.stdout:
            return address
        if time.monotonic() > deadline:
            fail("the stand-in portal did not start within 20 s", tmp)
        time.sleep(0.05)


def main():
    ap = benchlib.clip_arguments(__doc__, runs=5)
    a = benchlib.parse_runs(ap, "bench/desktop")
    tmp = tempfile.mkdtemp(prefix="ftgst-bench-desktop-")
    processes = []
    try:
        address = private_bus(tmp, processes)
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
        for process in reversed(processes):
            process.terminate()
            process.wait(10)
        if not a.keep_tmp:
            shutil.rmtree(tmp, True)


if __name__ == "__main__":
    main()
