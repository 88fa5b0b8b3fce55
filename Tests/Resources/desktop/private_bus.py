"""A private D-Bus session bus with the stand-in portal (portal.py) on it, for the Python sides that need one:
the studio's Chromium test and bench/desktop.sh. (The Swift tests have Tests/Support/PrivateSessionBus.swift.)
Standard library only; every wait has a deadline."""

import json
import os
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def start(folder, portal_parameters, timeout=20):
    """Starts a dbus-daemon listening in `folder` (a configuration with no service directories: nothing of the
    machine's desktop is activated on it) and python-dbusmock serving portal.py with `portal_parameters`, and waits
    until the portal's name is owned. Returns (address, log file, processes); the caller terminates the processes
    (last first). Raises RuntimeError when either does not come up within `timeout` seconds."""
    socket = os.path.join(folder, "bus")
    config = os.path.join(folder, "bus.conf")
    with open(config, "w") as f:
        f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:path={socket}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/>
<allow own="*"/></policy></busconfig>""")
    processes = [subprocess.Popen(["/usr/bin/dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    deadline = time.monotonic() + timeout
    try:
        while not os.path.exists(socket):
            if time.monotonic() > deadline:
                raise RuntimeError(f"dbus-daemon did not listen within {timeout} s")
            time.sleep(0.02)
        address = "unix:path=" + socket
        env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address)
        log = os.path.join(folder, "portal.log")
        processes.append(subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--session", "-t",
                                           os.path.join(HERE, "portal.py"), "-l", log,
                                           "-p", json.dumps(portal_parameters)], env=env, stdout=subprocess.DEVNULL))
        while True:
            owned = subprocess.run(["/usr/bin/gdbus", "call", "--session", "--dest", "org.freedesktop.DBus",
                                    "--object-path", "/org/freedesktop/DBus", "--method",
                                    "org.freedesktop.DBus.NameHasOwner", "org.freedesktop.portal.Desktop"],
                                   env=env, capture_output=True, text=True, timeout=10)
            if "true" in owned.stdout:
                return address, log, processes
            if time.monotonic() > deadline:
                raise RuntimeError(f"the stand-in portal did not start within {timeout} s")
            time.sleep(0.05)
    except BaseException:
        stop(processes)
        raise


def stop(processes):
    """Terminates the processes `start` gave, last first."""
    for process in reversed(processes):
        process.terminate()
        process.wait(10)
