#!/usr/bin/env python3
"""The web studio (studio/) in a real headless Chromium against `ftgst serve --listen`.

Run by `make test-studio` (after the Swift tests in `make test`). Needs FTGST_BIN (the ftgst binary) and
FTGST_FIXTURES (the generated fixtures); Chromium, chromedriver and python3-selenium come from scripts/deps.
Every wait has a deadline; the engine, the browser and the slow HTTP server are stopped in tearDown.
"""

import base64
import http.server
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Resources", "desktop"))
import private_bus as desktop_bus  # noqa: E402

from selenium import webdriver
from selenium.common.exceptions import JavascriptException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

BIN = os.environ.get("FTGST_BIN", "")
FIXTURES = os.environ.get("FTGST_FIXTURES", "")
CHROMEDRIVER = "/usr/bin/chromedriver"

# An inverting 3D LUT (2 points a side): at intensity 1 the picture is its negative, at 0 the source.
INVERT_CUBE = "LUT_3D_SIZE 2\n" + "".join(
    f"{1 - r} {1 - g} {1 - b}\n" for b in (0, 1) for g in (0, 1) for r in (0, 1)
)

# The throttled route of Tests/Support/HTTPTestServer.swift's /slow/: the first 64 KiB at full speed (the moov of
# a faststart file and its first frames), then 16 KiB/s, so an export of long-faststart.mp4 (~700 KB) cannot end
# before ~40 s whatever the machine: "still running when cancelled" holds by construction.
FULL_SPEED_BYTES = 64 * 1024
BYTES_PER_SECOND = 16 * 1024


class SlowHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = ""
    stopping = threading.Event()

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.respond(body=False)

    def do_GET(self):
        self.respond(body=True)

    def respond(self, body):
        name = self.path.split("?")[0].rsplit("/", 1)[-1]
        path = os.path.join(self.root, name)
        if not self.path.startswith("/slow/") or not os.path.isfile(path):
            self.send_error(404)
            return
        size = os.path.getsize(path)
        start, end = 0, size - 1
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if match:
            start = int(match.group(1))
            if match.group(2):
                end = min(int(match.group(2)), size - 1)
            if start >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        else:
            self.send_response(200)
        self.send_header("Content-Type", "video/mp4")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        if not body:
            return
        try:
            with open(path, "rb") as f:
                f.seek(start)
                offset = start
                while offset <= end and not self.stopping.is_set():
                    if offset < FULL_SPEED_BYTES:
                        n = min(end + 1, FULL_SPEED_BYTES) - offset
                    else:
                        n = min(end + 1 - offset, BYTES_PER_SECOND // 20)
                        time.sleep(0.05)
                    chunk = f.read(n)
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    offset += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True


def error_lines(browser):
    """The page's non-empty error lines (data-test="error"), by the part they are in (data-where)."""
    return {e.get_attribute("data-where"): e.text
            for e in browser.find_elements(By.CSS_SELECTOR, '[data-test="error"]') if e.text}


def start_engine(test, arguments, env, command="serve", binary=None):
    """Starts `ftgst serve ARGUMENTS` (or `ftgst studio …`, of `binary`, default FTGST_BIN; stdin kept open: the
    engine ends when its stdin does), stopped at the test's cleanup; returns it and the url of its first stdout
    line."""
    engine = subprocess.Popen(
        [binary or BIN, command, *arguments], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
    )

    def stop():
        if engine.poll() is None:
            engine.kill()
        engine.wait(timeout=10)
        engine.stdin.close()
        engine.stdout.close()

    test.addCleanup(stop)
    ready, _, _ = select.select([engine.stdout], [], [], 20)
    test.assertTrue(ready, "the engine printed no url line within 20 s")
    return engine, json.loads(engine.stdout.readline())["url"]


def headless_chrome(test, *arguments):
    """Debian's Chromium, headless, through chromedriver; quit at the test's cleanup."""
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", *arguments):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    test.addCleanup(browser.quit)
    browser.set_page_load_timeout(20)
    browser.set_script_timeout(20)
    return browser


def private_bus(test, folder, portal_parameters):
    """A private session bus with the stand-in portal (Tests/Resources/desktop/private_bus.py), stopped at cleanup.
    Returns the bus address and the stand-in's log file."""
    try:
        address, log, processes = desktop_bus.start(folder, portal_parameters)
    except RuntimeError as error:
        test.fail(str(error))
    test.addCleanup(desktop_bus.stop, processes)
    return address, log


class StudioTest(unittest.TestCase):
    def setUp(self):
        self.assertTrue(BIN and os.access(BIN, os.X_OK), "FTGST_BIN must name the ftgst binary")
        self.assertTrue(FIXTURES and os.path.isdir(FIXTURES), "FTGST_FIXTURES must name the fixtures folder")
        self.tmp = tempfile.mkdtemp(prefix="ftgst-studio-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.media = os.path.join(self.tmp, "media")
        self.out = os.path.join(self.tmp, "out")
        run = os.path.join(self.tmp, "run")
        for folder in (self.media, self.out, run):
            os.mkdir(folder, 0o700)
        shutil.copy(os.path.join(FIXTURES, "clip.mp4"), self.media)
        self.lut = os.path.join(self.media, "invert.cube")
        with open(self.lut, "w") as f:
            f.write(INVERT_CUBE)

        # Outside the allowed folder: a photo, linked from inside it; the studio must never show it.
        self.outside = tempfile.mkdtemp(prefix="ftgst-studio-outside-")
        self.addCleanup(shutil.rmtree, self.outside, True)
        shutil.copy(os.path.join(FIXTURES, "photo.jpg"), os.path.join(self.outside, "secret.jpg"))
        os.symlink(os.path.join(self.outside, "secret.jpg"), os.path.join(self.media, "linked-out.jpg"))

        # The desktop: a home of its own (the default library is HOME/Videos/Filmtone), and a stand-in xdg-open on
        # PATH with a display, recording the URI it is handed (what shareOutput does on a desktop without a portal).
        self.home = os.path.join(self.tmp, "home")
        bin_folder = os.path.join(self.tmp, "bin")
        os.mkdir(self.home, 0o700)
        os.mkdir(bin_folder, 0o700)
        self.shared = os.path.join(self.tmp, "shared.txt")
        with open(os.path.join(bin_folder, "xdg-open"), "w") as f:
            f.write(f"#!/bin/sh\necho \"$1\" >> '{self.shared}'\n")
        os.chmod(os.path.join(bin_folder, "xdg-open"), 0o755)

        # The engine: its previews and workspace in this test's folder (XDG_RUNTIME_DIR), stdin kept open (the
        # engine ends when its stdin does).
        env = dict(os.environ, XDG_RUNTIME_DIR=run, HOME=self.home, XDG_CONFIG_HOME=os.path.join(self.home, ".config"),
                   PATH=bin_folder + ":" + os.environ.get("PATH", "/usr/bin:/bin"), DISPLAY=":99")
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        env.pop("WAYLAND_DISPLAY", None)
        if self._testMethodName == "test_pickers":
            # The desktop's file chooser: a stand-in portal answering a clip outside --allow, then the LUT.
            self.picked = os.path.join(self.outside, "picked clip.mp4")
            shutil.copy(os.path.join(FIXTURES, "clip.mp4"), self.picked)
            self.picked_folder = os.path.join(self.outside, "Holiday")
            os.mkdir(self.picked_folder)
            shutil.copy(os.path.join(FIXTURES, "clip.mp4"), os.path.join(self.picked_folder, "beach.mp4"))
            answers = [["file://" + self.picked.replace(" ", "%20")], ["file://" + self.lut],
                       ["file://" + self.picked_folder]]
            address, self.portal_log = private_bus(self, self.tmp, {"answers": answers})
            env["DBUS_SESSION_BUS_ADDRESS"] = address
        self.engine, self.url = start_engine(self, ["--listen", "127.0.0.1:0", "--allow", self.tmp], env)
        self.assertTrue(self.url.startswith("http://127.0.0.1:"), self.url)

        self.browser = headless_chrome(self, "--window-size=1200,900")
        self.browser.get(self.url)

    # Helpers.

    def el(self, testid):
        return self.browser.find_element(By.CSS_SELECTOR, f'[data-testid="{testid}"]')

    def wait(self, what, condition, seconds=30):
        """Waits for condition() to be truthy, failing with `what` and the page's error lines after `seconds`."""
        try:
            return WebDriverWait(self.browser, seconds, poll_frequency=0.1).until(lambda _: condition())
        except Exception as error:  # TimeoutException, with the page's own error lines for the reason
            self.fail(f"{what} within {seconds} s (error lines: {error_lines(self.browser)!r}; {error!r})")

    def error_lines(self):
        return error_lines(self.browser)

    def part_of(self, testid):
        """The panel (its heading's id) or the main area an element is in."""
        return self.browser.execute_script(
            "const p = arguments[0].closest('section, main');"
            "return p.getAttribute('aria-labelledby') || p.tagName;", self.el(testid))

    def type_into(self, testid, text):
        field = self.el(testid)
        field.clear()
        field.send_keys(text)

    def open_source(self, source):
        self.type_into("source", source)
        self.el("open").click()
        self.wait("the probe", lambda: self.el("probe").get_attribute("data-ready") == "true")

    def preview_bytes(self):
        """The PNG the preview <img> shows, fetched by the page (with its token) once it is loaded."""
        self.wait("a loaded preview", lambda: self.browser.execute_script(
            "const i = arguments[0]; return i.complete && i.naturalWidth > 0 && i.dataset.state === 'idle';",
            self.el("preview")))
        encoded = self.browser.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            fetch(arguments[0].src).then((r) => r.arrayBuffer()).then((b) => {
              let s = ""; for (const x of new Uint8Array(b)) s += String.fromCharCode(x); done(btoa(s));
            }).catch((e) => done("error: " + e));
            """, self.el("preview"))
        self.assertFalse(encoded.startswith("error"), encoded)
        data = base64.b64decode(encoded)
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n", "the preview is a PNG")
        return data

    def set_range(self, testid, value):
        self.browser.execute_script(
            "const e = arguments[0]; e.value = arguments[1];"
            "e.dispatchEvent(new Event('input', {bubbles: true}));"
            "e.dispatchEvent(new Event('change', {bubbles: true}));",
            self.el(testid), str(value))

    # Tests.

    def test_probe_preview_intensity_and_export(self):
        self.wait("the WebSocket connected", lambda: self.el("connection").text == "connected")
        self.type_into("creative-lut", self.lut)
        self.set_range("intensity", 0)
        self.open_source(os.path.join(self.media, "clip.mp4"))
        self.assertIn("container: mp4", self.el("probe").text)
        self.assertIn("320×240", self.el("probe").text)
        self.assertEqual(self.el("time").get_attribute("max"), "2999", "the time slider spans the duration")

        plain = self.preview_bytes()
        ticket = self.el("preview").get_attribute("data-ticket")
        self.set_range("intensity", 1)
        self.wait("a new preview after the intensity moved",
                  lambda: self.el("preview").get_attribute("data-ticket") != ticket)
        inverted = self.preview_bytes()
        self.assertTrue(plain != inverted, "moving the intensity slider changes the picture (the same PNG bytes)")
        self.assertEqual(self.el("preview-error").text, "")

        # The time slider: the preview follows (the SMPTE bars of clip.mp4 scroll sideways).
        ticket = self.el("preview").get_attribute("data-ticket")
        self.set_range("time", 2000)
        self.wait("a new preview after the time moved",
                  lambda: self.el("preview").get_attribute("data-ticket") != ticket)
        later = self.preview_bytes()
        self.assertTrue(later != inverted, "scrubbing the time slider changes the picture (the same PNG bytes)")
        self.assertEqual(self.el("time-label").text, "2000 ms")

        output = os.path.join(self.out, "clip-look.mp4")
        self.type_into("output", output)
        self.wait("the presets", lambda: self.el("preset").get_attribute("data-ready") == "true")
        self.browser.execute_script("arguments[0].value = 'h264-mp4';", self.el("preset"))
        self.assertEqual(self.el("preset").get_attribute("value"), "h264-mp4")
        self.el("export").click()
        self.wait("the export's result", lambda: self.el("result").get_attribute("data-state") in ("done", "failed"),
                  seconds=40)
        self.assertEqual(self.el("result").get_attribute("data-state"), "done", self.el("export-error").text)
        progress = self.el("progress")
        self.assertEqual(float(progress.get_attribute("value")), float(progress.get_attribute("max")),
                         "the progress bar reached its end")
        self.assertIn(output, self.el("result").text)
        self.assertIn("90 frames", self.el("result").text)
        self.assertTrue(os.path.getsize(output) > 0, "the export is at OUT")

        # Save: the export is copied into the library once; a second save is SAVE_FAILED on the errors line.
        self.el("save").click()
        self.wait("the save's answer", lambda: self.el("result").get_attribute("data-saveToPhotos") == "done"
                  or self.el("export-error").text != "")
        self.assertEqual(self.el("export-error").text, "")
        saved = os.path.join(self.home, "Videos", "Filmtone", "clip-look.mp4")
        self.assertIn("saved: " + saved, self.el("result").text)
        with open(saved, "rb") as a, open(output, "rb") as b:
            self.assertEqual(a.read(), b.read(), "the library holds the export")
        self.el("save").click()
        self.wait("the second save refused", lambda: self.el("export-error").text != "")
        self.assertTrue(self.el("export-error").text.startswith("[SAVE_FAILED] already saved as " + saved),
                        self.el("export-error").text)

        # Share: handed to the desktop's handler (the stand-in xdg-open), which got the export's file:// URI.
        self.el("share").click()
        self.wait("the share's answer", lambda: self.el("result").get_attribute("data-shareOutput") == "done"
                  or self.el("export-error").text.startswith("[SHARE"))
        self.assertIn("shared with xdg-open", self.el("result").text)
        with open(self.shared) as f:
            self.assertEqual(f.read(), "file://" + output + "\n")

        # Show in folder: the export's folder handed to the desktop's handler (xdg-open here, without a portal).
        self.el("show-folder").click()
        self.wait("the folder shown", lambda: self.el("result").get_attribute("data-showInFolder") == "done"
                  or self.el("export-error").text != "")
        self.assertIn("shown in its folder with xdg-open", self.el("result").text)
        with open(self.shared) as f:
            self.assertEqual(f.read().splitlines()[-1], "file://" + self.out)

    def test_files_and_presets(self):
        self.wait("the WebSocket connected", lambda: self.el("connection").text == "connected")
        # The presets come from the engine: those `ftgst presets` lists, after "by the output's extension".
        self.wait("the presets", lambda: self.el("preset").get_attribute("data-ready") == "true")
        listed = [json.loads(line)["name"] for line in
                  subprocess.run([BIN, "presets"], check=True, capture_output=True, text=True).stdout.splitlines()]
        options = [o.get_attribute("value") for o in self.el("preset").find_elements(By.TAG_NAME, "option")]
        self.assertEqual(options, [""] + listed)
        self.assertIn("h264-mp4", listed)

        # The files: first the allowed folder, then what is inside; never the link out, nor anything outside.
        self.wait("the allowed folders", lambda: self.el("files").get_attribute("data-ready") == "true")
        real_tmp = os.path.realpath(self.tmp)

        def entries():
            return [(li.get_attribute("data-kind"), li.get_attribute("data-path"))
                    for li in self.el("files").find_elements(By.TAG_NAME, "li")]

        self.assertEqual(entries(), [("folder", real_tmp)])
        self.el("files").find_element(By.CSS_SELECTOR, '[data-testid="file-open"]').click()
        self.wait("the allowed folder's listing", lambda: self.el("files").get_attribute("data-dir") == real_tmp)
        self.assertEqual([path for _, path in entries()],
                         [os.path.join(real_tmp, name) for name in ("bin", "home", "media", "out", "run")])
        self.el("files").find_element(By.CSS_SELECTOR, f'[data-path="{real_tmp}/media"] button').click()
        media = os.path.join(real_tmp, "media")
        self.wait("the media folder", lambda: self.el("files").get_attribute("data-dir") == media)
        self.assertEqual(entries(), [("media", os.path.join(media, "clip.mp4")),
                                     ("lut", os.path.join(media, "invert.cube"))])
        self.assertNotIn("secret", self.el("files").text)
        self.assertNotIn("linked-out", self.el("files").text)

        # A LUT into the creative slot, the clip as the source: its probe and a preview.
        self.el("files").find_element(By.CSS_SELECTOR, '[data-testid="file-creative-lut"]').click()
        self.assertEqual(self.el("creative-lut").get_attribute("value"), os.path.join(media, "invert.cube"))
        self.el("files").find_element(By.CSS_SELECTOR, f'[data-path="{media}/clip.mp4"] button').click()
        self.wait("the probe", lambda: self.el("probe").get_attribute("data-ready") == "true")
        self.assertEqual(self.el("source").get_attribute("value"), os.path.join(media, "clip.mp4"))
        self.preview_bytes()
        # Up: back to the allowed folder, then to the list of allowed folders, never above.
        self.el("files-up").click()
        self.wait("up to the allowed folder", lambda: self.el("files").get_attribute("data-dir") == real_tmp)
        self.el("files-up").click()
        self.wait("up to the allowed folders", lambda: self.el("files").get_attribute("data-dir") == "")
        self.assertEqual(entries(), [("folder", real_tmp)])
        self.assertFalse(self.el("files-up").is_enabled())
        self.assertEqual(self.error_lines(), {})

    def test_pickers(self):
        """Open… and Choose look… ask the desktop's chooser (the stand-in portal); the picked clip, outside the
        allowed folder, opens all the same (the user chose it), and the picked look goes into its slot."""
        self.wait("the WebSocket connected", lambda: self.el("connection").text == "connected")
        self.el("pick-source").click()
        self.wait("the picked clip's probe", lambda: self.el("probe").get_attribute("data-ready") == "true")
        self.assertEqual(self.el("source").get_attribute("value"), self.picked)
        self.assertEqual(self.el("picked").text, "picked: " + self.picked)
        self.preview_bytes()
        self.el("pick-creative-lut").click()
        self.wait("the picked look", lambda: self.el("creative-lut").get_attribute("value") == self.lut)
        self.assertEqual(self.el("looks-picked").text, "picked: " + self.lut)
        self.assertEqual(self.error_lines(), {})

        # Add folder…: the chosen folder, outside --allow, is listed and its clip opens; Up shows it with the
        # allowed folder.
        folder = os.path.realpath(self.picked_folder)
        self.el("pick-folder").click()
        self.wait("the chosen folder listed", lambda: self.el("files").get_attribute("data-dir") == folder)
        beach = self.el("files").find_element(By.CSS_SELECTOR, f'[data-path="{folder}/beach.mp4"] button')
        beach.click()
        self.wait("the clip in the chosen folder opened",
                  lambda: self.el("source").get_attribute("value") == folder + "/beach.mp4"
                  and self.el("probe").get_attribute("data-ready") == "true")
        self.el("files-up").click()
        self.wait("up to the folders", lambda: self.el("files").get_attribute("data-dir") == "")
        roots = [li.get_attribute("data-path") for li in self.el("files").find_elements(By.TAG_NAME, "li")]
        self.assertEqual(roots, [os.path.realpath(self.tmp), folder])
        self.assertEqual(self.error_lines(), {})
        with open(self.portal_log) as f:
            calls = [json.loads(line.split("ftgst-call ", 1)[1]) for line in f if "ftgst-call " in line]
        self.assertEqual([c["method"] for c in calls], ["FileChooser.OpenFile"] * 3)
        self.assertTrue(calls[2]["args"][2]["directory"])
        self.assertEqual(calls[0]["args"][2]["filters"][0][0], "Videos and photos")
        self.assertEqual(calls[1]["args"][2]["filters"][0][0], "Looks (.cube)")

    def test_the_studio_command_opens_the_file_it_is_given(self):
        # `ftgst studio FILE`, as the launcher entry runs it for a file manager's Open with: the page it prints opens
        # that file by itself (probe and preview), and its folder is the page's.
        given = os.path.join(self.out, "given clip.mp4")
        shutil.copy(os.path.join(FIXTURES, "clip.mp4"), given)
        env = dict(os.environ, HOME=self.home, XDG_RUNTIME_DIR=os.path.join(self.tmp, "run"))
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        _, url = start_engine(self, ["--no-open", given], env, command="studio")
        self.assertIn("&source=", url)
        self.browser.get(url)
        self.wait("the given file's probe", lambda: self.el("probe").get_attribute("data-ready") == "true")
        self.assertEqual(self.el("source").get_attribute("value"), given)
        self.assertIn("320×240", self.el("probe").text)
        self.assertTrue(self.preview_bytes())

    def test_errors_show_where_they_happen(self):
        """Each part's error shows on its own line, in that part, with its [CODE]; the other lines stay empty, and
        the part's next success clears it."""
        self.wait("the WebSocket connected", lambda: self.el("connection").text == "connected")
        # The source: a missing file, then a file outside --allow.
        self.type_into("source", os.path.join(self.media, "missing.mp4"))
        self.el("open").click()
        self.wait("an error", lambda: self.error_lines())
        self.assertEqual(list(self.error_lines()), ["source"])
        self.assertTrue(self.el("source-error").text.startswith("[FILE_NOT_FOUND] "), self.el("source-error").text)
        self.assertEqual(self.part_of("source-error"), self.part_of("source"), "under the source field")
        self.type_into("source", "/etc/passwd")
        self.el("open").click()
        self.wait("the --allow refusal", lambda: "--allow" in self.el("source-error").text)
        self.assertTrue(self.el("source-error").text.startswith("[INVALID_ARGUMENT] uri /etc/passwd is outside"),
                        self.el("source-error").text)
        # Export before a source is open: the export's line.
        self.el("export").click()
        self.wait("the export's refusal", lambda: self.el("export-error").text != "")
        self.assertEqual(self.el("export-error").text, "[INVALID_ARGUMENT] open a source first")
        self.assertEqual(self.part_of("export-error"), self.part_of("export"), "beside the Export button")

        # A source that opens clears the source's line; a bad look is the looks' LUT_INVALID, not the preview's.
        self.open_source(os.path.join(self.media, "clip.mp4"))
        self.assertEqual(self.el("source-error").text, "")
        bad = os.path.join(self.media, "bad.cube")
        with open(bad, "w") as f:
            f.write("LUT_3D_SIZE 2\n0 0 0\n")
        self.type_into("creative-lut", bad + "\n")
        self.wait("the look's error", lambda: self.el("looks-error").text != "")
        self.assertTrue(self.el("looks-error").text.startswith("[LUT_INVALID] "), self.el("looks-error").text)
        self.assertEqual(self.part_of("looks-error"), self.part_of("creative-lut"), "beside the LUT fields")
        self.assertEqual(self.el("preview-error").text, "")
        # A look not there: FILE_NOT_FOUND, still the looks' (it names the LUT file).
        self.type_into("creative-lut", os.path.join(self.media, "gone.cube") + "\n")
        self.wait("the missing look", lambda: self.el("looks-error").text.startswith("[FILE_NOT_FOUND] "))
        # Back to the good look: the preview renders and the looks' line is empty again.
        ticket = self.el("preview").get_attribute("data-ticket")
        self.type_into("creative-lut", self.lut + "\n")
        self.wait("the look's preview", lambda: self.el("preview").get_attribute("data-ticket") != ticket
                  and self.el("looks-error").text == "")
        self.assertEqual(set(self.error_lines()), {"export"})

    def test_cancel_leaves_nothing(self):
        shutil.copy(os.path.join(FIXTURES, "long-faststart.mp4"), self.media)
        SlowHandler.root = self.media
        SlowHandler.stopping.clear()
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowHandler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()

        def stop_server():
            SlowHandler.stopping.set()
            server.shutdown()
            server.server_close()
            thread.join(timeout=10)

        self.addCleanup(stop_server)
        source = f"http://127.0.0.1:{server.server_address[1]}/slow/long-faststart.mp4"

        self.wait("the WebSocket connected", lambda: self.el("connection").text == "connected")
        self.open_source(source)
        output = os.path.join(self.out, "long-look.mp4")
        self.type_into("output", output)
        self.el("export").click()
        self.wait("the export rendering", lambda: self.el("stage").text.startswith("rendering"))
        self.el("cancel").click()
        self.wait("the export cancelled", lambda: self.el("result").get_attribute("data-state") is not None)
        self.assertEqual(self.el("result").get_attribute("data-state"), "cancelled", self.el("export-error").text)
        self.assertTrue(self.el("export-error").text.startswith("[CANCELLED] api"), self.el("export-error").text)
        self.assertFalse(os.path.exists(output), "nothing at OUT")
        self.assertEqual(os.listdir(self.out), [], "nothing left beside OUT")


# Where the page's screenshots go (kept as test artifacts; `make studio-screenshot` copies the 1280x800 one into
# docs/images/ for the README).
SCREENSHOTS = os.environ.get("FTGST_STUDIO_SCREENSHOTS", "")

# JavaScript for the checks below: a PNG (base64) decoded in the page, and the mean RGB of a rectangle of it (as
# fractions of its size), so that pixels are read without an image library in Python.
MEAN_RGB = """
const [data, x0, x1, y0, y1, done] = arguments;
const img = new Image();
img.onload = () => {
  const c = document.createElement("canvas");
  c.width = img.naturalWidth; c.height = img.naturalHeight;
  const g = c.getContext("2d"); g.drawImage(img, 0, 0);
  const w = c.width, h = c.height;
  const px = g.getImageData(Math.floor(x0 * w), Math.floor(y0 * h),
                            Math.max(1, Math.floor((x1 - x0) * w)), Math.max(1, Math.floor((y1 - y0) * h))).data;
  const sum = [0, 0, 0];
  for (let i = 0; i < px.length; i += 4) { sum[0] += px[i]; sum[1] += px[i + 1]; sum[2] += px[i + 2]; }
  const n = px.length / 4;
  done([sum[0] / n, sum[1] / n, sum[2] / n]);
};
img.onerror = () => done(null);
img.src = "data:image/png;base64," + data;
"""


class StudioAppTest(unittest.TestCase):
    """`ftgst studio --no-open FILE` (issue 31): the page as a person uses it, its looks library from the looks folder
    (an inverting look and a dimming one), before/after, the layout at three window sizes."""

    def setUp(self):
        self.assertTrue(BIN and os.access(BIN, os.X_OK), "FTGST_BIN must name the ftgst binary")
        self.tmp = tempfile.mkdtemp(prefix="ftgst-studio-app-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.home = os.path.join(self.tmp, "home")
        looks = os.path.join(self.home, ".local", "share", "ftgst", "looks")
        os.makedirs(looks)
        os.makedirs(os.path.join(self.home, "Videos"))
        with open(os.path.join(looks, "Invert.cube"), "w") as f:
            f.write(INVERT_CUBE)
        with open(os.path.join(looks, "Dim.cube"), "w") as f:
            f.write("LUT_3D_SIZE 2\n" + "".join(
                f"{r * 0.5} {g * 0.5} {b * 0.5}\n" for b in (0, 1) for g in (0, 1) for r in (0, 1)))
        self.clip = os.path.join(self.home, "Videos", "clip.mp4")
        shutil.copy(os.path.join(FIXTURES, "clip.mp4"), self.clip)
        env = dict(os.environ, HOME=self.home, XDG_RUNTIME_DIR=os.path.join(self.tmp, "run"),
                   XDG_CONFIG_HOME=os.path.join(self.home, ".config"))
        os.mkdir(os.path.join(self.tmp, "run"), 0o700)
        for name in ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "XDG_DATA_HOME"):
            env.pop(name, None)
        # The installed ftgst (make stage's tree, with its installed page), as the launcher entry runs it, when
        # there is one; else the build's.
        stage = os.environ.get("FTGST_STAGE", "")
        installed = os.path.join(stage, "usr", "bin", "ftgst") if stage else ""
        self.installed = bool(installed) and os.access(installed, os.X_OK)
        self.binary = installed if self.installed else BIN
        _, self.url = start_engine(self, ["--no-open", self.clip], env, command="studio", binary=self.binary)
        self.page = self.url.split("&source=")[0]
        self.browser = headless_chrome(self, "--window-size=1280,800")

    def el(self, testid):
        return self.browser.find_element(By.CSS_SELECTOR, f'[data-test="{testid}"]')

    def wait(self, what, condition, seconds=30):
        try:
            return WebDriverWait(self.browser, seconds, poll_frequency=0.1).until(lambda _: condition())
        except Exception as error:
            self.fail(f"{what} within {seconds} s (error lines: {error_lines(self.browser)!r}; {error!r})")

    def wait_preview(self):
        self.wait("a loaded preview", lambda: self.browser.execute_script(
            "const i = arguments[0]; return !i.hidden && i.complete && i.naturalWidth > 0 && i.dataset.state === 'idle';",
            self.el("preview")))

    def mean(self, png, x0=0.0, x1=1.0, y0=0.0, y1=1.0):
        value = self.browser.execute_async_script(MEAN_RGB, base64.b64encode(png).decode(), x0, x1, y0, y1)
        self.assertIsNotNone(value, "the PNG decodes")
        return value

    def preview_png(self):
        self.wait_preview()
        encoded = self.browser.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch(arguments[0].src).then((r) => r.arrayBuffer()).then((b) => {
              let s = ""; for (const x of new Uint8Array(b)) s += String.fromCharCode(x); done(btoa(s));
            }).catch((e) => done("error: " + e));""", self.el("preview"))
        self.assertFalse(encoded.startswith("error"), encoded)
        return base64.b64decode(encoded)

    def tiles(self):
        return self.browser.find_elements(By.CSS_SELECTOR, '[data-test="look-tile"]')

    def test_layout_at_three_sizes(self):
        if os.environ.get("FTGST_STAGE"):
            self.assertTrue(self.installed, "FTGST_STAGE names no installed ftgst")
        # Before a source: a placeholder, never a broken image.
        self.browser.get(self.page)
        self.wait("the connection", lambda: self.browser.find_element(By.ID, "conn").text == "connected")
        self.assertTrue(self.browser.execute_script("return arguments[0].hidden;", self.el("preview")))
        self.assertTrue(self.browser.find_element(By.ID, "placeholder").is_displayed())

        for width, height in ((1280, 800), (1920, 1080), (800, 900)):
            self.browser.set_window_size(width, height)
            self.browser.get(self.url)
            self.wait_preview()
            inner = self.browser.execute_script("return window.innerWidth;")
            shown = self.el("preview").rect["width"]
            share = 0.55 if width > 900 else 0.9
            self.assertGreaterEqual(shown, share * inner, f"the preview at {width}x{height}: {shown} of {inner} px")
            self.assertLessEqual(self.browser.execute_script("return document.documentElement.scrollWidth;"), inner,
                                 f"nothing wider than the window at {width}x{height}")
            for testid in ("source", "open", "timeline", "looks", "intensity", "compare", "output", "export",
                           "progress", "cancel"):
                self.assertTrue(self.el(testid).is_displayed() or testid == "timeline-hover", testid)
            self.wait("the look tiles", lambda: self.el("looks").get_attribute("data-tiles") == "rendered")
            if SCREENSHOTS:
                os.makedirs(SCREENSHOTS, exist_ok=True)
                self.browser.save_screenshot(os.path.join(SCREENSHOTS, f"studio-{width}x{height}.png"))

    def test_looks_intensity_compare_and_keys(self):
        self.browser.get(self.url)
        self.wait("the given file opened", lambda: self.browser.find_element(By.ID, "probe")
                  .get_attribute("data-ready") == "true")
        self.wait("the library", lambda: self.el("looks").get_attribute("data-ready") == "true")
        names = [t.text for t in self.tiles()]
        self.assertEqual(names, ["None", "Dim", "Invert"], "None, then the looks folder's .cube files by name")
        original = self.preview_png()
        self.wait("the look tiles", lambda: self.el("looks").get_attribute("data-tiles") == "rendered")

        # A tile applies its look: the preview is the inverted frame.
        invert = [t for t in self.tiles() if t.text == "Invert"][0]
        ticket = self.el("preview").get_attribute("data-ticket")
        invert.click()
        self.wait("the look's preview", lambda: self.el("preview").get_attribute("data-ticket") != ticket)
        looked = self.preview_png()
        self.assertEqual(invert.get_attribute("aria-pressed"), "true")
        before, after = self.mean(original), self.mean(looked)
        for channel in range(3):
            self.assertAlmostEqual(before[channel] + after[channel], 255, delta=12, msg=f"inverted: {before} {after}")

        # Intensity 0 gives the original back.
        ticket = self.el("preview").get_attribute("data-ticket")
        self.browser.execute_script(
            "const e = arguments[0]; e.value = '0'; e.dispatchEvent(new Event('input', {bubbles: true}));",
            self.el("intensity"))
        self.wait("the intensity's preview", lambda: self.el("preview").get_attribute("data-ticket") != ticket)
        for a, b in zip(self.mean(self.preview_png()), before):
            self.assertAlmostEqual(a, b, delta=0.5)
        self.browser.execute_script(
            "const e = arguments[0]; e.value = '1'; e.dispatchEvent(new Event('input', {bubbles: true}));",
            self.el("intensity"))

        # Before / after: the original left of the divider, the look right of it, in what the viewer shows.
        self.el("compare").click()
        self.wait("the split", lambda: self.browser.find_element(By.ID, "viewer").get_attribute("data-compare") == "on")
        self.wait_preview()
        shot = self.browser.find_element(By.ID, "viewer").screenshot_as_png
        left, right = self.mean(shot, 0.05, 0.45, 0.2, 0.8), self.mean(shot, 0.55, 0.95, 0.2, 0.8)
        plain_left, plain_right = self.mean(original, 0.05, 0.45, 0.2, 0.8), self.mean(original, 0.55, 0.95, 0.2, 0.8)
        for channel in range(3):
            self.assertAlmostEqual(left[channel], plain_left[channel], delta=20, msg=f"left is the original {left}")
            self.assertAlmostEqual(right[channel], 255 - plain_right[channel], delta=20,
                                   msg=f"right is the look {right}")

        # Keys: one frame on (33 ms at 30 fps), one second with Shift.
        body = self.browser.find_element(By.TAG_NAME, "body")
        self.browser.execute_script("document.activeElement.blur();")
        body.send_keys("\ue014")  # ArrowRight
        self.wait("one frame on", lambda: self.el("timeline").get_attribute("value") == "33")
        body.send_keys("\ue008\ue014")  # Shift+ArrowRight
        self.wait("one second on", lambda: self.el("timeline").get_attribute("value") == "1033")

        # Hovering the timeline shows the storyboard tile of the time under the pointer: the engine's WebVTT cue
        # (about a hundred tiles over a clip, none closer than 100 ms: 3 s gives 30, ten a row).
        self.wait("the storyboard", lambda: self.el("timeline-hover").get_attribute("data-storyboard") == "ready")
        timeline = self.el("timeline")
        ActionChains(self.browser).move_to_element_with_offset(timeline, int(timeline.rect["width"] * 0.25), 0).perform()
        hover = self.el("timeline-hover")
        self.wait("the hover", lambda: hover.is_displayed() and hover.get_attribute("data-ms") is not None)
        ms = int(hover.get_attribute("data-ms"))
        tile = self.browser.find_element(By.ID, "hover-tile")
        start, end = (float(v) for v in tile.get_attribute("data-cue").split("-"))
        self.assertTrue(start <= ms < end, f"the cue {start}-{end} holds {ms} ms")
        index = int(start // 100)
        x, y, w, h = (int(v) for v in tile.get_attribute("data-xywh").split(","))
        self.assertEqual((x, y), ((index % 10) * w, (index // 10) * h), f"the tile of the cue {start}-{end}")
        self.assertEqual((w, h), (160, 120))
        self.assertEqual((round(tile.rect["width"]), round(tile.rect["height"])), (w, h))
        self.assertTrue(tile.value_of_css_property("background-image").startswith('url("blob:'))

        # The output name suggested from the source.
        self.assertEqual(self.el("output").get_attribute("value"), os.path.join(self.home, "Videos", "clip-look.mp4"))

    def test_a_phone_clip_upright_tone_mapped_looked_and_exported(self):
        """The phone's own clip (HEVC Main 10 HLG in .mov, recorded upright): the page shows it upright and
        tone-mapped as `ftgst preview` renders it, says the source is tone-mapped, applies a look and exports an
        upright SDR file."""
        clip = os.path.join(self.home, "Videos", "IMG_0001.MOV")
        shutil.copy(os.path.join(FIXTURES, "phone-hlg.mov"), clip)
        env = dict(os.environ, HOME=self.home, XDG_RUNTIME_DIR=os.path.join(self.tmp, "run"),
                   XDG_CONFIG_HOME=os.path.join(self.home, ".config"))
        for name in ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "XDG_DATA_HOME"):
            env.pop(name, None)
        _, url = start_engine(self, ["--no-open", clip], env, command="studio", binary=self.binary)
        self.browser.get(url)
        probe = self.browser.find_element(By.ID, "probe")
        self.wait("the phone clip's probe", lambda: probe.get_attribute("data-ready") == "true")
        self.assertIn("h265 360×640 @ 24/1, 10-bit, hlg", probe.text)
        policy = self.browser.find_element(By.ID, "input-policy").text
        self.assertTrue(policy.startswith("suggested: hdr-to-sdr") and "tone-mapped" in policy, policy)
        self.assertEqual(self.browser.find_element(By.ID, "export-hdr").text,
                         "This HLG source is exported tone-mapped to SDR BT.709, as the preview shows it.")

        # Upright: a portrait picture in a portrait viewer that fits the window's height.
        shown = self.preview_png()
        size = self.browser.execute_script(
            "const i = arguments[0]; return [i.naturalWidth, i.naturalHeight];", self.el("preview"))
        self.assertAlmostEqual(size[0] / size[1], 360 / 640, delta=0.02, msg=f"the preview is upright: {size}")
        viewer = self.browser.find_element(By.ID, "viewer").rect
        inner_height = self.browser.execute_script("return window.innerHeight;")
        self.assertAlmostEqual(viewer["width"] / viewer["height"], 360 / 640, delta=0.02, msg=f"{viewer}")
        self.assertLessEqual(viewer["y"] + viewer["height"], inner_height, "the whole picture in the window")

        # Tone-mapped: what `ftgst preview` renders at that size, not the HLG codes as decoded.
        def cli_preview(*extra):
            out = os.path.join(self.tmp, f"cli{len(extra)}.png")
            subprocess.run([BIN, "preview", clip, "--time-ms", "0", "--max-width", str(size[0]), "--max-height",
                            str(size[1]), *extra, "-o", out], check=True, capture_output=True, timeout=60, env=env)
            with open(out, "rb") as f:
                return f.read()

        page, mapped, raw = self.mean(shown), self.mean(cli_preview()), self.mean(cli_preview("--tone-map", "off"))
        for channel in range(3):
            self.assertAlmostEqual(page[channel], mapped[channel], delta=1.5, msg=f"{page} vs {mapped}")
        self.assertGreater(max(abs(a - b) for a, b in zip(mapped, raw)), 5, f"tone-mapped {mapped} vs as decoded {raw}")

        # A look from the library, then the export: upright, SDR BT.709, with the look.
        self.wait("the library", lambda: self.el("looks").get_attribute("data-ready") == "true")
        ticket = self.el("preview").get_attribute("data-ticket")
        [t for t in self.tiles() if t.text == "Invert"][0].click()
        self.wait("the look's preview", lambda: self.el("preview").get_attribute("data-ticket") != ticket)
        looked = self.mean(self.preview_png())
        for channel in range(3):
            self.assertAlmostEqual(page[channel] + looked[channel], 255, delta=12, msg=f"inverted: {page} {looked}")
        output = os.path.join(self.home, "Videos", "IMG_0001-look.mp4")
        self.assertEqual(self.el("output").get_attribute("value"), output)
        self.el("export").click()
        result = self.browser.find_element(By.ID, "result")
        self.wait("the export", lambda: result.get_attribute("data-state") in ("done", "failed"), seconds=90)
        self.assertEqual(result.get_attribute("data-state"), "done", error_lines(self.browser))
        self.assertIn("360×640, 24 frames", result.text)
        streams = json.loads(subprocess.run(
            ["ffprobe", "-v", "error", "-of", "json", "-show_streams", "-select_streams", "v", output],
            check=True, capture_output=True, text=True, timeout=30).stdout)["streams"][0]
        self.assertEqual((streams["width"], streams["height"]), (360, 640))
        self.assertNotIn("side_data_list", streams, "no rotation left to apply")
        self.assertEqual(streams.get("color_transfer"), "bt709")

    def test_every_control_is_labelled_and_reachable_by_keyboard(self):
        """Every control the page shows has an accessible name (Chromium's computed label) and Tab reaches it; the
        keys work where they are: arrows on the intensity slider move it (not the timeline), Enter on a look tile
        applies it, arrows on the focused divider move it."""
        self.browser.get(self.url)
        self.wait("the given file opened", lambda: self.browser.find_element(By.ID, "probe")
                  .get_attribute("data-ready") == "true")
        self.wait("the look tiles", lambda: self.el("looks").get_attribute("data-tiles") == "rendered")
        self.el("compare").click()  # the divider is a control too, while the split shows
        self.wait("the split", lambda: self.browser.find_element(By.ID, "viewer").get_attribute("data-compare") == "on")
        controls = self.browser.execute_script("""
            return Array.from(document.querySelectorAll("input, select, button, summary, [tabindex]"))
              .filter((e) => !e.disabled && e.tabIndex >= 0 && e.checkVisibility({ checkVisibilityCSS: true }));""")
        self.assertGreater(len(controls), 20, "the page's controls")
        unnamed = [c.get_attribute("outerHTML")[:120] for c in controls if not c.accessible_name.strip()]
        self.assertEqual(unnamed, [], "controls without a label")

        self.browser.execute_script("document.activeElement.blur(); window.scrollTo(0, 0);")
        reached = []
        for _ in range(len(controls) * 2):
            ActionChains(self.browser).send_keys(Keys.TAB).perform()
            reached.append(self.browser.switch_to.active_element)
        missed = [c.get_attribute("outerHTML")[:120] for c in controls if c not in reached]
        self.assertEqual(missed, [], "controls Tab never reaches")

        # Arrows on the intensity slider move it, and leave the time alone.
        time_before = self.el("timeline").get_attribute("value")
        self.browser.execute_script("arguments[0].focus();", self.el("intensity"))
        ActionChains(self.browser).send_keys(Keys.ARROW_LEFT).perform()
        self.wait("the intensity one step down", lambda: self.el("intensity").get_attribute("value") == "0.99")
        self.assertEqual(self.el("timeline").get_attribute("value"), time_before)
        # Enter on a look tile applies it.
        invert = [t for t in self.tiles() if t.text == "Invert"][0]
        self.browser.execute_script("arguments[0].focus();", invert)
        ActionChains(self.browser).send_keys(Keys.ENTER).perform()
        self.wait("the look applied", lambda: invert.get_attribute("aria-pressed") == "true")
        self.assertTrue(self.browser.find_element(By.ID, "creative-lut").get_attribute("value").endswith("Invert.cube"))
        # The divider: focused, ← moves it left.
        divider = self.browser.find_element(By.ID, "divider")
        left = divider.rect["x"]
        self.browser.execute_script("arguments[0].focus();", divider)
        ActionChains(self.browser).send_keys(Keys.ARROW_LEFT).perform()
        self.wait("the divider moved", lambda: divider.rect["x"] < left)
        self.assertEqual(self.el("timeline").get_attribute("value"), time_before)


class StudioLauncherTest(unittest.TestCase):
    """The installed launcher entry, as a file manager uses it (issue 31's "Open with"): GIO lists ftgst Studio for a
    phone clip's type once the entry is installed as the .deb installs it (desktop-file-utils' trigger writes
    mimeinfo.cache), `gio open CLIP` runs its Exec line, the studio asks the portal (a stand-in on a private bus) to
    open its page, and that page, loaded in Chromium, has the clip open."""

    def setUp(self):
        stage = os.environ.get("FTGST_STAGE", "")
        self.installed = os.path.join(stage, "usr") if stage else ""
        if not (self.installed and os.access(os.path.join(self.installed, "bin", "ftgst"), os.X_OK)):
            self.skipTest("needs make stage's installed tree (FTGST_STAGE); make test stages it")
        self.tmp = tempfile.mkdtemp(prefix="ftgst-studio-launcher-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_open_with_runs_the_studio_on_the_clip(self):
        # The installed entry and icon in a data folder of their own, indexed as the .deb's trigger indexes them.
        share = os.path.join(self.tmp, "share")
        shutil.copytree(os.path.join(self.installed, "share", "applications"), os.path.join(share, "applications"))
        subprocess.run(["update-desktop-database", os.path.join(share, "applications")], check=True, timeout=30)
        # `ftgst` on PATH is the installed binary, through a wrapper that notes its pid (the studio outlives gio).
        bin_folder = os.path.join(self.tmp, "bin")
        os.mkdir(bin_folder)
        pid_file = os.path.join(self.tmp, "studio.pid")
        with open(os.path.join(bin_folder, "ftgst"), "w") as f:
            f.write(f"#!/bin/sh\necho $$ > '{pid_file}'\nexec '{self.installed}/bin/ftgst' \"$@\"\n")
        os.chmod(os.path.join(bin_folder, "ftgst"), 0o755)
        home = os.path.join(self.tmp, "home")
        os.makedirs(os.path.join(home, "Videos"))
        clip = os.path.join(home, "Videos", "IMG_0002.MOV")
        shutil.copy(os.path.join(FIXTURES, "phone-hlg.mov"), clip)
        run = os.path.join(self.tmp, "run")
        os.mkdir(run, 0o700)
        address, portal_log = private_bus(self, self.tmp, {"interfaces": ["OpenURI"]})
        env = dict(os.environ, PATH=bin_folder + ":/usr/bin:/bin", HOME=home, XDG_RUNTIME_DIR=run,
                   XDG_DATA_DIRS=share + ":/usr/share", XDG_DATA_HOME=os.path.join(home, ".local", "share"),
                   XDG_CONFIG_HOME=os.path.join(home, ".config"), DBUS_SESSION_BUS_ADDRESS=address)
        for name in ("DISPLAY", "WAYLAND_DISPLAY"):
            env.pop(name, None)

        def stop_studio():
            try:
                with open(pid_file) as f:
                    pid = int(f.read())
                os.kill(pid, 15)
            except (OSError, ValueError):
                return
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except OSError:
                    return
                time.sleep(0.05)

        self.addCleanup(stop_studio)
        mime = subprocess.run(["gio", "mime", "video/quicktime"], env=env, capture_output=True, text=True, timeout=30)
        self.assertIn("Registered applications:\n\tftgst-studio.desktop", mime.stdout, mime.stdout + mime.stderr)

        # Its output to a file: the studio gio starts inherits it and outlives gio (a pipe would stay open).
        output = os.path.join(self.tmp, "gio-open.txt")
        with open(output, "w") as f:
            opened = subprocess.run(["gio", "open", clip], env=env, stdin=subprocess.DEVNULL, stdout=f,
                                    stderr=subprocess.STDOUT, timeout=30)
        with open(output) as f:
            self.assertEqual(opened.returncode, 0, f.read())
        url = None
        deadline = time.monotonic() + 30
        while url is None and time.monotonic() < deadline:
            with open(portal_log) as f:
                for line in f:
                    if "ftgst-call " in line:
                        call = json.loads(line.split("ftgst-call ", 1)[1])
                        if call["method"] == "OpenURI.OpenURI":
                            url = call["args"][1]
            time.sleep(0.1)
        self.assertIsNotNone(url, "the studio asked the portal to open its page")
        self.assertTrue(url.startswith("http://127.0.0.1:") and "&source=" in url, url)

        browser = headless_chrome(self, "--window-size=1280,800")
        browser.get(url)
        probe = browser.find_element(By.ID, "probe")
        WebDriverWait(browser, 30, poll_frequency=0.1).until(lambda _: probe.get_attribute("data-ready") == "true")
        self.assertEqual(browser.find_element(By.ID, "source").get_attribute("value"), clip)
        self.assertIn("360×640", probe.text)
        preview = browser.find_element(By.ID, "preview")
        WebDriverWait(browser, 30, poll_frequency=0.1).until(lambda _: browser.execute_script(
            "const i = arguments[0]; return !i.hidden && i.complete && i.naturalWidth > 0;", preview))


if __name__ == "__main__":
    unittest.main(verbosity=2)
