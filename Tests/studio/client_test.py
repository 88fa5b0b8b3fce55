#!/usr/bin/env python3
"""The TypeScript client's browser build (FilmtoneMedia over WebSocketTransport) in a real headless Chromium.

Run by `make test-ts-browser` (in `make test`, after the studio's test). Needs FTGST_BIN (the ftgst binary),
FTGST_FIXTURES (the generated fixtures) and FTGST_TS_CLIENT (`make ts-client`'s output, whose browser/ folder holds
the ES modules). The engine serves a folder of this test's (`--studio`) holding the test page of
clients/typescript/test/browser and the compiled modules; the page runs probe → preview → export → cancel and
leaves what it saw in window.results, which this test reads and checks against the file system. A page from
another origin (a second local server) is refused the WebSocket even with the token. Every wait has a deadline;
the engine, the browser and the servers are stopped in cleanups.
"""

import functools
import http.server
import json
import os
import shutil
import struct
import sys
import tempfile
import threading
import unittest
import urllib.parse

from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from studio_test import SlowHandler, headless_chrome, start_engine  # noqa: E402 (shared with the studio test)

BIN = os.environ.get("FTGST_BIN", "")
FIXTURES = os.environ.get("FTGST_FIXTURES", "")
TS_CLIENT = os.environ.get("FTGST_TS_CLIENT", "")
PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "typescript", "test", "browser")


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


class ClientInChromiumTest(unittest.TestCase):
    def setUp(self):
        self.assertTrue(BIN and os.access(BIN, os.X_OK), "FTGST_BIN must name the ftgst binary")
        self.assertTrue(FIXTURES and os.path.isdir(FIXTURES), "FTGST_FIXTURES must name the fixtures folder")
        modules = os.path.join(TS_CLIENT, "browser")
        self.assertTrue(os.path.isfile(os.path.join(modules, "client.js")), "FTGST_TS_CLIENT: run make ts-client")
        self.tmp = tempfile.mkdtemp(prefix="ftgst-client-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.media = os.path.join(self.tmp, "media")
        self.out = os.path.join(self.tmp, "out")
        self.site = os.path.join(self.tmp, "site")
        self.run_dir = os.path.join(self.tmp, "run")
        for folder in (self.media, self.out, self.site, self.run_dir):
            os.mkdir(folder, 0o700)
        shutil.copy(os.path.join(FIXTURES, "clip.mp4"), self.media)
        # The engine's pages: the test page and the compiled client, side by side (page.js imports ./client.js).
        for folder in (PAGE, modules):
            for name in os.listdir(folder):
                if name.endswith((".html", ".js")):
                    shutil.copy(os.path.join(folder, name), self.site)

        env = dict(os.environ, XDG_RUNTIME_DIR=self.run_dir)
        self.engine, self.url = start_engine(
            self,
            ["--listen", "127.0.0.1:0", "--allow", self.media, "--allow", self.out, "--studio", self.site],
            env,
        )
        parsed = urllib.parse.urlsplit(self.url)
        self.origin = f"{parsed.scheme}://{parsed.netloc}"
        self.token = urllib.parse.parse_qs(parsed.query)["token"][0]
        self.rpc_url = f"ws://{parsed.netloc}/rpc?token={self.token}"

        self.browser = headless_chrome(self)

    def wait(self, what, script, seconds=30):
        """Waits for `script`'s value to be truthy in the page, failing with `what` after `seconds`."""
        try:
            return WebDriverWait(self.browser, seconds, poll_frequency=0.1).until(
                lambda _: self.browser.execute_script(script))
        except Exception as error:  # TimeoutException
            self.fail(f"{what} within {seconds} s ({error!r})")

    def serve_elsewhere(self, handler, folder=None):
        """A second local server (another origin: another port), stopped in a cleanup; its port."""
        if folder is not None:
            handler = functools.partial(handler, directory=folder)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()

        def stop():
            server.shutdown()
            server.server_close()
            thread.join(timeout=10)

        self.addCleanup(stop)
        return server.server_address[1]

    # Tests.

    def test_probe_preview_export_and_cancel_from_the_page(self):
        shutil.copy(os.path.join(FIXTURES, "long-faststart.mp4"), self.media)
        SlowHandler.root = self.media
        SlowHandler.stopping.clear()
        self.addCleanup(SlowHandler.stopping.set)
        slow_port = self.serve_elsewhere(SlowHandler)
        output = os.path.join(self.out, "clip-look.mp4")
        slow_output = os.path.join(self.out, "long-look.mp4")
        params = {
            "source": os.path.join(self.media, "clip.mp4"),
            "output": output,
            "workspace": os.path.join(self.out, "workspace"),
            "slowSource": f"http://127.0.0.1:{slow_port}/slow/long-faststart.mp4",
            "slowOutput": slow_output,
        }
        self.browser.get(self.url + "#" + urllib.parse.quote(json.dumps(params)))
        self.wait("the page's scenario", "return document.getElementById('results')?.dataset.state !== 'running'",
                  seconds=120)
        results = self.browser.execute_script("return window.results")
        state = self.browser.execute_script("return document.getElementById('results').dataset.state")
        self.assertEqual(state, "done", json.dumps(results))
        self.assertEqual(results["rpcUrl"], self.rpc_url, "rpcUrl(location.href): the token kept, the # dropped")

        self.assertEqual(results["probe"], {"container": "mp4", "durationMs": 3000, "width": 320})

        preview = results["preview"]
        self.assertEqual([preview["width"], preview["height"]], [160, 120])
        self.assertEqual([preview["naturalWidth"], preview["naturalHeight"]], [160, 120],
                         "the preview's url loaded as an image of its size")
        self.assertTrue(preview["url"].startswith(f"{self.origin}/previews/"), preview["url"])
        self.assertIn(f"token={self.token}", preview["url"])
        self.assertTrue(preview["path"].startswith(self.run_dir + os.sep), preview["path"])
        self.assertEqual(png_size(preview["path"]), (160, 120), "the PNG the path names")

        exported = results["export"]
        self.assertEqual([exported["path"], exported["frames"]], [output, 90])
        self.assertEqual(os.path.getsize(output), exported["sizeBytes"], "the export is at OUT")
        events = exported["events"]
        self.assertGreaterEqual(len(events), 2, json.dumps(events))
        self.assertEqual(events[0]["stage"], "probing")
        self.assertIn("rendering", [event["stage"] for event in events])
        last = events[-1]
        self.assertEqual([last["stage"], last["progress"], last["currentFrame"], last["totalFrames"]],
                         ["finalizing", 1, 90, 90], "the progress events reached 1")
        progress = [event["progress"] for event in events]
        self.assertEqual(progress, sorted(progress), "never decreasing")

        cancel = results["cancel"]
        self.assertEqual([cancel["busy"]["code"], cancel["busy"]["rpcCode"]], ["EXPORT_BUSY", 75],
                         "a second export while one runs")
        self.assertEqual(cancel["cancelled"], {"cancelled": True})
        self.assertEqual(cancel["outcome"], {"rejected": {
            "name": "FilmtoneMediaError", "code": "CANCELLED", "rpcCode": 130,
            "message": "[CANCELLED] api: cancelled in the browser"}})
        self.assertGreater(results["eventsBeforeCancel"], 0)
        self.assertFalse(os.path.exists(slow_output), "the cancelled export left nothing at OUT")
        self.assertFalse(os.path.exists(output + ".second.mp4"), "the refused export wrote nothing")
        others = [name for name in os.listdir(self.out) if name != "workspace" and not name.startswith("clip-look.mp4")]
        self.assertEqual(others, [], "beside the finished export (and its sidecars): no file, no staging file")
        self.assertRegex(results["closed"], r"^the WebSocket closed \(1000")
        self.assertIsNone(self.engine.poll(), "the engine serves on after the page closed its socket")

    def test_a_page_from_another_origin_is_refused(self):
        elsewhere = os.path.join(self.tmp, "elsewhere")
        os.mkdir(elsewhere)
        shutil.copy(os.path.join(PAGE, "other-origin.html"), elsewhere)
        port = self.serve_elsewhere(QuietFiles, elsewhere)
        fragment = "#" + urllib.parse.quote(self.rpc_url, safe="")

        # The control: the same page from the engine's own origin opens and is answered.
        self.browser.get(f"{self.origin}/other-origin.html?token={self.token}{fragment}")
        self.wait("the engine's own page answered", "return window.outcome?.answer != null")
        outcome = self.browser.execute_script("return window.outcome")
        self.assertTrue(outcome["opened"], json.dumps(outcome))
        self.assertEqual(json.loads(outcome["answer"]), {"jsonrpc": "2.0", "id": 1, "result": {"cancelled": False}})

        # The page elsewhere, with the token: refused at the handshake (403), so never open.
        self.browser.get(f"http://127.0.0.1:{port}/other-origin.html{fragment}")
        self.wait("the refused socket's close", "return window.outcome?.closeCode != null")
        outcome = self.browser.execute_script("return window.outcome")
        self.assertEqual(outcome, {"opened": False, "error": True, "closeCode": 1006, "answer": None})
        self.assertIsNone(self.engine.poll(), "the engine serves on")


if __name__ == "__main__":
    unittest.main(verbosity=2)
