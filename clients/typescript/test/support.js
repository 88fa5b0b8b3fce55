// What the client's tests share: the built client, the engine binary and fixtures (from `make test`'s environment),
// an engine per test in a temporary folder (over stdio, or listening on 127.0.0.1 for the WebSocket), and a
// throttled HTTP server that makes an export slow by construction.
"use strict";

const assert = require("node:assert/strict");
const childProcess = require("node:child_process");
const fs = require("node:fs");
const http = require("node:http");
const os = require("node:os");
const path = require("node:path");

const repo = path.resolve(__dirname, "..", "..", "..");
const client = require(process.env.FTGST_TS_CLIENT || path.join(repo, ".build", "ts-client"));

function required(name) {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set: run the tests with make test (or set it by hand)`);
    return value;
}

const binary = () => required("FTGST_BIN");

function fixture(name) {
    const file = path.join(required("FTGST_FIXTURES"), name);
    if (!fs.existsSync(file)) throw new Error(`no fixture ${file}: run make fixtures`);
    return file;
}

/** A fresh folder, removed when the test ends. */
function temporaryFolder(t) {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "ftgst-ts-client-"));
    t.after(() => fs.rmSync(folder, { recursive: true, force: true }));
    return folder;
}

/**
 * `ftgst serve` with its preview folder under `folder/runtime`, wrapped in a FilmtoneMedia. Killed (SIGKILL) when
 * the test ends if it is still running.
 */
function startEngine(t, folder, options = {}) {
    const runtime = path.join(folder, "runtime");
    fs.mkdirSync(runtime, { recursive: true });
    const transport = new client.StdioTransport({
        binary: options.binary || binary(),
        cwd: folder,
        // No session bus and no display: the pickers have no chooser (NOT_SUPPORTED), whatever desktop runs this.
        env: { ...process.env, XDG_RUNTIME_DIR: runtime, DBUS_SESSION_BUS_ADDRESS: "", DISPLAY: "", WAYLAND_DISPLAY: "" },
        stderr: "collect",
    });
    const media = new client.FilmtoneMedia(transport, { timeoutMs: options.timeoutMs || 60000 });
    t.after(() => {
        if (transport.child.exitCode === null && transport.child.signalCode === null) transport.kill("SIGKILL");
    });
    return { media, transport, runtime };
}

/** The engine's stderr kept for a failure's message: its last 64 KiB. */
const STDERR_KEPT = 64 * 1024;

/**
 * `ftgst serve --listen 127.0.0.1:0 --allow FOLDER` (and `args`) in `folder`, its previews under `folder/runtime`,
 * its stdin kept open (the engine ends when its stdin does). Resolves once the url line has come, with `url` (the
 * page address with the token), `child`, `exited` (resolves with `{code, signal}`), `stderr()` and `connect()`,
 * which opens a FilmtoneMedia over a new WebSocketTransport to it (closed when the test ends). The engine is
 * killed (SIGKILL) when the test ends if it is still running.
 */
async function startListeningEngine(t, folder, options = {}) {
    const runtime = path.join(folder, "runtime");
    fs.mkdirSync(runtime, { recursive: true });
    const child = childProcess.spawn(
        binary(),
        ["serve", "--listen", "127.0.0.1:0", "--allow", options.allow || folder, ...(options.args || [])],
        { cwd: folder, env: { ...process.env, XDG_RUNTIME_DIR: runtime }, stdio: ["pipe", "pipe", "pipe"] },
    );
    let stderrText = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
        stderrText = (stderrText + chunk).slice(-STDERR_KEPT);
    });
    const exited = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
    const clients = [];
    t.after(async () => {
        for (const media of clients) media.close();
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        await within(10000, "the engine's exit", exited);
    });
    let stdoutText = "";
    child.stdout.setEncoding("utf8");
    const firstLine = new Promise((resolve, reject) => {
        child.stdout.on("data", (chunk) => {
            stdoutText += chunk;
            const end = stdoutText.indexOf("\n");
            if (end >= 0) resolve(stdoutText.slice(0, end));
        });
        child.on("close", (code, signal) => reject(new Error(`the engine ended (${code}, ${signal}): ${stderrText}`)));
    });
    const line = await within(20000, "the engine's url line", firstLine);
    const { url } = JSON.parse(line);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}$/, line);
    const connect = (rpcUrl = client.WebSocketTransport.rpcUrl(url)) => {
        const transport = new client.WebSocketTransport(rpcUrl);
        const media = new client.FilmtoneMedia(transport, { timeoutMs: options.timeoutMs || 60000 });
        clients.push(media);
        return { media, transport };
    };
    return { url, child, exited, runtime, connect, stderr: () => stderrText };
}

/** Files left in `folder` other than the engine's own folders (staging files included). */
function leftovers(folder) {
    return fs.readdirSync(folder).filter((name) => !["workspace", "runtime"].includes(name));
}

/** A PNG's width and height (failing if `bytes` is not a PNG). */
function pngSize(bytes) {
    assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], "a PNG");
    return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

/** Resolves with `promise`'s value, or rejects after `ms` saying what was awaited. */
function within(ms, what, promise) {
    let timer;
    const deadline = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
    });
    return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/** Bytes of the slow clip sent at full speed: the moov and the first ~50 frames (as Tests/Support/SlowRemoteClip). */
const FULL_SPEED_BYTES = 64 * 1024;
/** The least time the whole slow clip takes to arrive: far above every deadline of these tests. */
const SLOW_SECONDS = 180;

/**
 * Serves `long-faststart.mp4` (600 frames) at `url` on 127.0.0.1 with single-range support, throttled like the Swift
 * tests' `/slow/` route: the first 64 KiB of the file at once, every later byte at a pace that makes the whole file
 * take ≥ 180 s, in slices of 1/20 s. An export of it is still rendering after any of these tests' deadlines, on any
 * machine. Stopped when the test ends.
 */
async function slowClip(t) {
    const file = fixture("long-faststart.mp4");
    const body = fs.readFileSync(file);
    const size = body.length;
    const bytesPerSlice = Math.max(1, Math.floor((size - FULL_SPEED_BYTES) / SLOW_SECONDS / 20));
    const timers = new Set();
    const server = http.createServer((request, response) => {
        if (request.url !== "/slow/long-faststart.mp4") {
            response.writeHead(404).end();
            return;
        }
        let start = 0;
        let end = size - 1;
        let status = 200;
        const range = /^bytes=(\d*)-(\d*)$/.exec(request.headers.range || "");
        if (range && (range[1] !== "" || range[2] !== "")) {
            if (range[1] === "") {
                start = Math.max(0, size - Number(range[2]));
            } else {
                start = Number(range[1]);
                if (range[2] !== "") end = Math.min(end, Number(range[2]));
            }
            if (start > end || start >= size) {
                response.writeHead(416, { "Content-Range": `bytes */${size}`, "Accept-Ranges": "bytes" }).end();
                return;
            }
            status = 206;
        }
        const headers = { "Content-Type": "video/mp4", "Content-Length": end - start + 1, "Accept-Ranges": "bytes" };
        if (status === 206) headers["Content-Range"] = `bytes ${start}-${end}/${size}`;
        response.writeHead(status, headers);
        if (request.method === "HEAD") {
            response.end();
            return;
        }
        let offset = start;
        const fast = Math.min(end + 1, Math.max(offset, FULL_SPEED_BYTES));
        if (fast > offset) {
            response.write(body.subarray(offset, fast));
            offset = fast;
        }
        const timer = setInterval(() => {
            if (offset > end || response.destroyed) {
                clearInterval(timer);
                timers.delete(timer);
                if (!response.destroyed) response.end();
                return;
            }
            const next = Math.min(end + 1, offset + bytesPerSlice);
            response.write(body.subarray(offset, next));
            offset = next;
        }, 50);
        timers.add(timer);
        response.on("close", () => {
            clearInterval(timer);
            timers.delete(timer);
        });
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    t.after(() => {
        for (const timer of timers) clearInterval(timer);
        server.closeAllConnections();
        server.close();
    });
    return { url: `http://127.0.0.1:${server.address().port}/slow/long-faststart.mp4`, frames: 600 };
}

/**
 * Starts exporting the slow clip and resolves once a rendering exportProgress with frames done has come: whatever
 * stops it next stops it mid-render. Returns the export's promise (already guarded against an unhandled rejection).
 */
async function startSlowExport(t, media, folder, output) {
    const clip = await slowClip(t);
    let rendering;
    const started = new Promise((resolve) => {
        rendering = resolve;
    });
    const handle = await media.addListener("exportProgress", (event) => {
        if (event.stage === "rendering" && event.currentFrame > 0) rendering(event);
    });
    const exporting = media.runExport({ source: clip.url, output, workspace: path.join(folder, "workspace") });
    exporting.catch(() => {});
    await within(60000, "rendering exportProgress with frames done", Promise.race([started, exporting]));
    await handle.remove();
    return { exporting, clip };
}

/** Awaits `promise`'s rejection and returns the error (fails if it resolved). */
async function rejection(promise) {
    try {
        const value = await promise;
        throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    } catch (error) {
        if (error instanceof client.FilmtoneMediaError) return error;
        throw error;
    }
}

module.exports = {
    client,
    fixture,
    temporaryFolder,
    startEngine,
    startListeningEngine,
    leftovers,
    pngSize,
    within,
    slowClip,
    startSlowExport,
    rejection,
};
