#!/usr/bin/env python3
"""bench/serve.sh's driver: times `ftgst serve`'s renderPreviewFrame over its stdio protocol (JSON-RPC 2.0, one
message per line), request written to answer read, and reports medians. See bench/serve.sh and bench/README.md."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def log(msg):
    print(f"bench/serve: {msg}", file=sys.stderr, flush=True)


class Engine:
    """One `ftgst serve` process; `call` sends one request and waits for its answer (no other request runs)."""

    def __init__(self, ftgst, args=()):
        self.proc = subprocess.Popen([ftgst, "serve", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.next_id = 0

    def call(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n"
        started = time.perf_counter()
        self.proc.stdin.write(line.encode())
        self.proc.stdin.flush()
        while True:
            answer = self.proc.stdout.readline()
            if not answer:
                raise SystemExit("bench/serve: the engine closed its output")
            message = json.loads(answer)
            if message.get("id") == self.next_id:
                break
        elapsed = (time.perf_counter() - started) * 1000
        if "error" in message:
            raise SystemExit(f"bench/serve: {method} failed: {message['error']}")
        return elapsed, message["result"]

    def memory(self):
        fields = {}
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = int(value.split()[0]) // 1024
        return fields

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def write_second_look(path, size=33):
    """A second synthetic 33^3 look (teal shadows, warm highlights, a little cross-talk), unlike write-cube's."""
    with open(path, "w") as out:
        out.write(f"TITLE \"bench teal-orange\"\nLUT_3D_SIZE {size}\n")
        for b in range(size):
            for g in range(size):
                for r in range(size):
                    x = [r / (size - 1), g / (size - 1), b / (size - 1)]
                    luma = 0.2126 * x[0] + 0.7152 * x[1] + 0.0722 * x[2]
                    rr = x[0] ** 0.95 + 0.06 * (luma - 0.5)
                    gg = x[1] * 0.97 + 0.02 * x[2]
                    bb = x[2] ** 1.08 - 0.05 * (luma - 0.5)
                    out.write(f"{rr:.6f} {gg:.6f} {bb:.6f}\n")


def median(values):
    return round(statistics.median(values), 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ftgst", required=True)
    parser.add_argument("--bench", required=True)
    parser.add_argument("--photo", required=True)
    parser.add_argument("--clip", required=True)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep-tmp", action="store_true")
    a = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="ftgst-bench-serve-")
    try:
        look_a = os.path.join(tmp, "look-a.cube")
        look_b = os.path.join(tmp, "look-b.cube")
        subprocess.run([a.bench, "write-cube", look_a, "--size", "33"], check=True, stdout=subprocess.DEVNULL)
        write_second_look(look_b)
        results = {"calls": a.calls}
        intensities = [round(0.05 + 0.9 * ((i * 7) % a.calls) / max(1, a.calls - 1), 3) for i in range(a.calls)]

        def out(name):
            return os.path.join(tmp, name)

        # (a) intensity only, JPEG and PNG output.
        for fmt in ("jpg", "png"):
            log(f"(a) intensity only, {fmt} output")
            engine = Engine(a.ftgst)
            base = {"source": a.photo, "creativeLut": look_a, "output": out(f"a.{fmt}")}
            engine.call("renderPreviewFrame", {**base, "intensity": 1})
            times = []
            for index, intensity in enumerate(intensities):
                elapsed, result = engine.call("renderPreviewFrame", {**base, "intensity": intensity})
                assert result["warm"] == {"frame": True, "look": True}, result
                times.append(elapsed)
            engine.close()
            results[f"intensityOnly_{fmt}_ms"] = median(times)
            results[f"intensityOnly_{fmt}_size"] = [result["width"], result["height"]]

        # (b) the creative LUT only, two looks alternating once both were seen.
        log("(b) creative LUT only, two 33^3 looks alternating")
        engine = Engine(a.ftgst)
        base = {"source": a.photo, "intensity": 0.8, "output": out("b.jpg")}
        for look in (look_a, look_b):
            engine.call("renderPreviewFrame", {**base, "creativeLut": look})
        times = []
        for index in range(a.calls):
            elapsed, result = engine.call("renderPreviewFrame", {**base, "creativeLut": (look_a, look_b)[index % 2]})
            assert result["warm"] == {"frame": True, "look": True}, result
            times.append(elapsed)
        engine.close()
        results["lutOnly_jpg_ms"] = median(times)

        # (c) the first preview of a new source (a new file each call, the look already kept) vs one-shot preview.
        log("(c) first preview of a new source vs one-shot ftgst preview")
        engine = Engine(a.ftgst)
        engine.call("renderPreviewFrame", {"source": a.photo, "creativeLut": look_a, "intensity": 0.8,
                                           "output": out("c.jpg")})
        warm_new, cold_engine, one_shot = [], [], []
        for index in range(a.calls):
            source = out(f"new-{index}.jpg")
            shutil.copyfile(a.photo, source)
            request = {"source": source, "creativeLut": look_a, "intensity": 0.8, "output": out("c.jpg")}
            elapsed, result = engine.call("renderPreviewFrame", request)
            assert result["warm"] == {"frame": False, "look": True}, result
            warm_new.append(elapsed)
        engine.close()
        for index in range(min(a.calls, 10)):
            fresh = Engine(a.ftgst)
            elapsed, _ = fresh.call("renderPreviewFrame", {"source": a.photo, "creativeLut": look_a,
                                                           "intensity": 0.8, "output": out("c.jpg")})
            cold_engine.append(elapsed)
            fresh.close()
        for index in range(a.calls):
            started = time.perf_counter()
            subprocess.run([a.ftgst, "preview", a.photo, "--creative-lut", look_a, "--intensity", "0.8",
                            "-o", out("c-cli.jpg")], check=True, stdout=subprocess.DEVNULL)
            one_shot.append((time.perf_counter() - started) * 1000)
        results["newSource_warmEngine_ms"] = median(warm_new)
        results["newSource_freshEngine_ms"] = median(cold_engine)
        results["oneShotPreview_ms"] = median(one_shot)
        results["oneShot_over_newSource"] = round(median(one_shot) / median(warm_new), 2)

        # (d) memory with one 1080p source and two looks.
        log("(d) memory: one 1080p source, two looks")
        engine = Engine(a.ftgst)
        time.sleep(1)  # the process started and settled: its idle footprint
        results["memory_idle_mib"] = engine.memory()
        for look in (look_a, look_b, look_a):
            engine.call("renderPreviewFrame", {"source": a.clip, "timeMs": 5500, "maxWidth": 1920,
                                               "maxHeight": 1080, "creativeLut": look, "intensity": 0.8,
                                               "output": out("d.jpg")})
        results["memory_1080p_two_looks_mib"] = engine.memory()
        engine.close()

        if a.json:
            print(json.dumps(results))
        else:
            print("ftgst serve warm previews (bench/serve.sh), medians of", a.calls, "calls")
            print(f"  (a) intensity only, 1280x720 JPEG source -> .jpg: {results['intensityOnly_jpg_ms']} ms "
                  f"(-> .png: {results['intensityOnly_png_ms']} ms); target <= 16 ms")
            print(f"  (b) creative LUT only, two 33^3 looks alternating -> .jpg: {results['lutOnly_jpg_ms']} ms")
            print(f"  (c) first preview of a new source: {results['newSource_warmEngine_ms']} ms in a running "
                  f"engine (look kept), {results['newSource_freshEngine_ms']} ms in a fresh engine; one-shot "
                  f"ftgst preview {results['oneShotPreview_ms']} ms (x{results['oneShot_over_newSource']})")
            print(f"  (d) engine memory idle {results['memory_idle_mib']} MiB; one 1080p source + two looks "
                  f"{results['memory_1080p_two_looks_mib']} MiB")
    finally:
        if a.keep_tmp:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
