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


def reused(result):
    """What a warm preview reused of its frame and look (the `warm` object also says `pipeline`)."""
    return result["warm"]["frame"], result["warm"]["look"]


def frame_ms(n, fps=30):
    """A time on the 0-based timeline that frame n of a constant-rate clip is on screen at (its start, rounded up)."""
    return (n * 1000 + fps - 1) // fps


def kept_pipeline_times(engine, params, calls, log_label):
    """(e)/(f): medians of exact-frame previews answered by the kept pipeline: forward steps of one frame, of
    ~0.5 s (15 frames), and backward jumps, each timed alone. Untimed calls put the pipeline where a series starts.
    Every timed answer must come from the kept pipeline (warm.pipeline) and decode a frame not cached."""
    last = {}

    def timed(ms):
        elapsed, result = engine.call("renderPreviewFrame", {**params, "timeMs": ms})
        assert result["warm"]["pipeline"] is True and result["warm"]["frame"] is False, result
        last.update(result)
        return elapsed

    out = {}
    # One frame forward: frames 60, 61, ... (2.0 s on), each a new time.
    log(f"{log_label}: forward steps of one frame")
    engine.call("renderPreviewFrame", {**params, "timeMs": frame_ms(59)})
    out["oneFrame_ms"] = median([timed(frame_ms(60 + i)) for i in range(calls)])
    # Half a second forward: 15 frames a step, from frame 15 + round up to 240 (8.0 s, inside the first GOP); each
    # round starts one frame later (untimed: a backward jump), so no time repeats one the frame cache holds.
    log(f"{log_label}: forward steps of 0.5 s")
    times, round_, frame = [], 0, 15
    engine.call("renderPreviewFrame", {**params, "timeMs": frame_ms(frame) + 1})
    while len(times) < calls:
        if frame + 15 > 240:
            round_ += 1
            frame = 15 + round_
            engine.call("renderPreviewFrame", {**params, "timeMs": frame_ms(frame) + 1})
        frame += 15
        times.append(timed(frame_ms(frame) + 1))
    out["halfSecond_ms"] = median(times)
    # Backward jumps of 0.23 s, from 8.0 s down to ~1.3 s: each an accurate seek decoding from the keyframe at 0.
    log(f"{log_label}: backward jumps")
    engine.call("renderPreviewFrame", {**params, "timeMs": 8050})
    backward = [timed(8000 - i * 230 + 2) for i in range(calls)]
    out["backward_ms"] = median(backward)
    out["backward_first_last_ms"] = [round(backward[0], 1), round(backward[-1], 1)]
    out["backward_first_last_at_ms"] = [8002, 8000 - (calls - 1) * 230 + 2]
    out["size"] = [last["width"], last["height"]]
    return out


def pipeline_memory(ftgst, params):
    """A fresh engine's VmRSS idle, and after opening the pipeline (a preview at 3.0 s) and two one-frame steps:
    the kept pipeline's own memory (plus three cached 1280x720 frames, 2.6 MiB each), unlike the figure after a
    series, which the frame cache dominates."""
    engine = Engine(ftgst)
    time.sleep(1)
    idle = engine.memory()["VmRSS"]
    for ms in (3000, 3034, 3067):
        engine.call("renderPreviewFrame", {**params, "timeMs": ms})
    kept = engine.memory()["VmRSS"]
    engine.close()
    return {"idle": idle, "one_pipeline_three_frames": kept}


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
                assert reused(result) == (True, True), result
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
            assert reused(result) == (True, True), result
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
            assert reused(result) == (False, True), result
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

        # (e) new exact times within the first GOP (keyframes at 0 and 8.3 s) of the 1080p clip, kept pipeline.
        log("(e) new times in one GOP of the 1080p clip (kept pipeline)")
        engine = Engine(a.ftgst)
        mezz_dir = out("mezzanines")
        os.makedirs(mezz_dir)
        source = {"source": a.clip, "output": out("e.jpg"), "mezzanine": "off"}
        results["gop"] = kept_pipeline_times(engine, source, a.calls, "(e)")
        results["memory_kept_1080p_mib"] = engine.memory()
        engine.close()
        results["memory_pipeline_1080p_mib"] = pipeline_memory(a.ftgst, source)

        # (f) the same from the clip's mezzanine (all-intra MJPEG: a seek is one decode).
        log("(f) the same from a mezzanine (ftgst mezzanine)")
        started = time.perf_counter()
        subprocess.run([a.ftgst, "mezzanine", a.clip, "--mezzanine-dir", mezz_dir], check=True,
                       stdout=subprocess.DEVNULL)
        results["mezzanine_build_ms"] = round((time.perf_counter() - started) * 1000)
        engine = Engine(a.ftgst)
        source = {"source": a.clip, "output": out("f.jpg"), "mezzanineDir": mezz_dir}
        _, check = engine.call("renderPreviewFrame", {**source, "timeMs": 100})
        assert check["mezzanine"] is True, check
        results["mezzanine"] = kept_pipeline_times(engine, source, a.calls, "(f)")
        results["memory_kept_mezzanine_mib"] = engine.memory()
        engine.close()
        results["memory_pipeline_mezzanine_mib"] = pipeline_memory(a.ftgst, source)

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
            for key, label, target in (("gop", "(e) 1080p H.264, one GOP", 60), ("mezzanine", "(f) its mezzanine", 25)):
                r = results[key]
                print(f"  {label}, exact frames -> {r['size'][0]}x{r['size'][1]} .jpg (target <= {target} ms): "
                      f"one frame on {r['oneFrame_ms']} ms, 0.5 s on {r['halfSecond_ms']} ms, "
                      f"backward {r['backward_ms']} ms (to {r['backward_first_last_at_ms'][0]} ms: "
                      f"{r['backward_first_last_ms'][0]} ms, to {r['backward_first_last_at_ms'][1]} ms: "
                      f"{r['backward_first_last_ms'][1]} ms)")
            print(f"      engine memory after (e): {results['memory_kept_1080p_mib']} MiB, after (f) "
                  f"{results['memory_kept_mezzanine_mib']} MiB (the frame cache holds most of it); a fresh engine "
                  f"idle, then with one kept pipeline and three frames: source "
                  f"{results['memory_pipeline_1080p_mib']} MiB, mezzanine {results['memory_pipeline_mezzanine_mib']}"
                  f" MiB (mezzanine built in {results['mezzanine_build_ms']} ms)")
    finally:
        if a.keep_tmp:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
