// FilmtoneMedia over WebSocketTransport against the real `ftgst serve --listen` (FTGST_BIN), with Node's standard
// WebSocket (Node 22+; Node 20 with --experimental-websocket, which make test-ts-client passes) and the generated
// fixtures (FTGST_FIXTURES). Every wait has a deadline; every test has a timeout.
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { test } = require("node:test");
const {
    client,
    fixture,
    temporaryFolder,
    startListeningEngine,
    leftovers,
    pngSize,
    within,
    startSlowExport,
    rejection,
} = require("./support");

/** From a stop (cancel, SIGTERM) to the answer or the exit: as ServeCLITests' promptStop. */
const PROMPT_STOP_MS = 10000;

test("Node has the standard WebSocket (Node 22+, or Node 20 with --experimental-websocket)", () => {
    assert.equal(typeof WebSocket, "function", "run node with --experimental-websocket (make test-ts-client does)");
});

/** `clip.mp4` copied into `folder` (inside the engine's --allow). */
function clipIn(folder) {
    const clip = path.join(folder, "clip.mp4");
    fs.copyFileSync(fixture("clip.mp4"), clip);
    return clip;
}

test("probeSource and renderPreviewFrame over the WebSocket; the preview's url serves it with the token", {
    timeout: 60000,
}, async (t) => {
    const folder = temporaryFolder(t);
    const clip = clipIn(folder);
    const engine = await startListeningEngine(t, folder);
    const { media, transport } = engine.connect();
    await within(10000, "the WebSocket's open", transport.opened);

    const probe = await media.probeSource({ uri: clip });
    assert.equal(probe.container, "mp4");
    assert.equal(probe.durationMs, 3000);
    assert.deepEqual([probe.video.codec, probe.video.width, probe.video.height], ["h264", 320, 240]);

    const preview = await media.renderPreviewFrame({ source: clip, timeMs: 1000, maxWidth: 160 });
    assert.deepEqual([preview.width, preview.height, preview.timeMs], [160, 120, 1000]);
    assert.ok(preview.path.startsWith(path.join(engine.runtime, "ftgst-serve-")), preview.path);
    const written = fs.readFileSync(preview.path);
    assert.deepEqual(pngSize(written), [160, 120]);

    const origin = new URL(engine.url).origin;
    const token = new URL(engine.url).searchParams.get("token");
    assert.equal(typeof preview.url, "string", "a url over --listen");
    const served = new URL(preview.url);
    assert.equal(served.origin, origin);
    assert.match(served.pathname, /^\/previews\/[^/]+\.png$/);
    assert.equal(served.searchParams.get("token"), token);
    const response = await within(10000, "the preview's GET", fetch(preview.url));
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type"), /^image\/png/);
    assert.deepEqual(Buffer.from(await response.arrayBuffer()), written, "the url serves the file the path names");
    const tokenless = await within(10000, "the tokenless GET", fetch(`${origin}${served.pathname}`));
    assert.equal(tokenless.status, 403, "no token, no preview");
    await tokenless.arrayBuffer();

    // The preview written to an output the client names is there (and has no url: nothing serves it).
    const output = path.join(folder, "frame.png");
    const named = await media.renderPreviewFrame({ source: clip, output, timeMs: 500 });
    assert.equal(named.path, output);
    assert.deepEqual(pngSize(fs.readFileSync(output)), [320, 240]);
});

const EXPORT_PROGRESS = "runExport over the WebSocket sends exportProgress to 1, and none after remove()";
test(EXPORT_PROGRESS, { timeout: 120000 }, async (t) => {
    const folder = temporaryFolder(t);
    const clip = clipIn(folder);
    const engine = await startListeningEngine(t, folder);
    const { media } = engine.connect();
    const events = [];
    const kept = await media.addListener("exportProgress", (event) => events.push(event));
    let removedBefore = 0;
    const before = await media.addListener("exportProgress", () => removedBefore++);
    await before.remove();

    const output = path.join(folder, "out.mp4");
    const workspace = path.join(folder, "workspace");
    const result = await media.runExport({ source: clip, output, workspace });
    assert.deepEqual([result.event, result.path, result.frames], ["result", output, 90]);
    assert.equal(result.sizeBytes, fs.statSync(output).size);
    assert.ok(events.length >= 2, JSON.stringify(events));
    assert.equal(events[0].stage, "probing");
    assert.ok(events.some((event) => event.stage === "rendering"), JSON.stringify(events));
    const last = events[events.length - 1];
    assert.deepEqual([last.stage, last.progress, last.currentFrame, last.totalFrames], ["finalizing", 1, 90, 90]);
    for (let i = 1; i < events.length; i++) assert.ok(events[i].progress >= events[i - 1].progress, "never decreasing");
    assert.equal(removedBefore, 0, "a listener removed before the export hears nothing");

    await kept.remove();
    const count = events.length;
    await media.runExport({ source: clip, output: path.join(folder, "again.mp4"), workspace, maxWidth: 160 });
    assert.equal(events.length, count, "no event after remove()");
    assert.ok(fs.statSync(path.join(folder, "again.mp4")).size > 0);
});

const BUSY_AND_CANCEL = "a second export from another connection is EXPORT_BUSY; its cancelExport stops the first";
test(BUSY_AND_CANCEL, { timeout: 120000 }, async (t) => {
    const folder = temporaryFolder(t);
    const clip = clipIn(folder);
    const engine = await startListeningEngine(t, folder);
    const { media } = engine.connect();
    const output = path.join(folder, "slow.mp4");
    const { exporting } = await startSlowExport(t, media, folder, output);

    const busy = await rejection(
        media.runExport({ source: clip, output: path.join(folder, "second.mp4"), workspace: path.join(folder, "w2") }),
    );
    assert.deepEqual([busy.code, busy.rpcCode, busy.method], ["EXPORT_BUSY", 75, "runExport"]);
    assert.ok(busy.message.startsWith("[EXPORT_BUSY] "), busy.message);
    const other = engine.connect().media;
    const otherBusy = await rejection(other.runExport({ source: clip, output: path.join(folder, "third.mp4") }));
    assert.equal(otherBusy.code, "EXPORT_BUSY", "one export at a time across connections");

    const cancelled = await other.cancelExport({ reason: "stopped in another tab" }, { timeoutMs: PROMPT_STOP_MS });
    assert.deepEqual(cancelled, { cancelled: true });
    const stopped = await rejection(within(PROMPT_STOP_MS, "the export's answer", exporting));
    assert.deepEqual([stopped.code, stopped.rpcCode], ["CANCELLED", 130]);
    assert.equal(stopped.message, "[CANCELLED] api: stopped in another tab");
    assert.deepEqual(leftovers(folder).sort(), ["clip.mp4"], "nothing at OUT, no staging file");
    assert.equal(fs.existsSync(path.join(folder, "w2")), false, "the refused export made no workspace");
    assert.deepEqual(await media.cancelExport(), { cancelled: false }, "none runs now");
});

const FAILURES = "failures reject with the engine's stable code: a missing file, a path outside --allow";
test(FAILURES, { timeout: 60000 }, async (t) => {
    const folder = temporaryFolder(t);
    const clip = clipIn(folder);
    const engine = await startListeningEngine(t, folder);
    const { media } = engine.connect();
    const missing = path.join(folder, "no-such-clip.mp4");
    const notFound = await rejection(media.probeSource({ uri: missing }));
    assert.deepEqual([notFound.code, notFound.rpcCode, notFound.method], ["FILE_NOT_FOUND", 66, "probeSource"]);
    assert.ok(notFound.message.startsWith("[FILE_NOT_FOUND] "), notFound.message);

    const outside = await rejection(media.probeSource({ uri: fixture("clip.mp4") }));
    assert.deepEqual([outside.code, outside.rpcCode], ["INVALID_ARGUMENT", -32602]);
    assert.ok(outside.message.startsWith(`[INVALID_ARGUMENT] uri ${fixture("clip.mp4")} is outside`), outside.message);
    assert.match(outside.message, /--allow/);
    const outsideOutput = await rejection(
        media.renderPreviewFrame({ source: clip, output: path.join(path.dirname(folder), "escaped.png") }),
    );
    assert.deepEqual([outsideOutput.code, outsideOutput.rpcCode], ["INVALID_ARGUMENT", -32602]);
    assert.match(outsideOutput.message, /^\[INVALID_ARGUMENT\] output .* is outside/);
    assert.equal(fs.existsSync(path.join(path.dirname(folder), "escaped.png")), false);

    assert.equal((await media.probeSource({ uri: clip })).durationMs, 3000, "still serving");
});

const WRONG_TOKEN = "a wrong token: the handshake is refused, opened rejects and calls reject with CLOSED";
test(WRONG_TOKEN, { timeout: 60000 }, async (t) => {
    const folder = temporaryFolder(t);
    const engine = await startListeningEngine(t, folder);
    const wrong = client.WebSocketTransport.rpcUrl(engine.url).replace(/token=[0-9a-f]+/, `token=${"0".repeat(64)}`);
    const { media, transport } = engine.connect(wrong);
    const probing = media.probeSource({ uri: path.join(folder, "clip.mp4") });
    await assert.rejects(within(10000, "the refused handshake", transport.opened), /could not connect/);
    const error = await rejection(within(10000, "the queued call's rejection", probing));
    assert.deepEqual([error.code, error.rpcCode], ["CLOSED", null]);
    assert.match(error.message, /^probeSource: closed before an answer \(the WebSocket could not connect/);
    assert.match(await within(10000, "closed", media.closed), /could not connect/);
});

const CLOSE = "close() closes the socket, and the export it started stops with it (it belongs to its connection)";
test(CLOSE, { timeout: 120000 }, async (t) => {
    const folder = temporaryFolder(t);
    const clip = clipIn(folder);
    const engine = await startListeningEngine(t, folder);
    const { media } = engine.connect();
    const output = path.join(folder, "slow.mp4");
    const { exporting } = await startSlowExport(t, media, folder, output);
    const reason = await within(10000, "close()", media.close());
    assert.match(reason, /^the WebSocket closed \(1000/);
    const pending = await rejection(exporting);
    assert.deepEqual([pending.code, pending.rpcCode], ["CLOSED", null]);
    assert.match(pending.message, /^runExport: closed before an answer \(the WebSocket closed \(1000/);
    const later = await rejection(media.probeSource({ uri: output }));
    assert.deepEqual([later.code, later.message], ["CLOSED", "the client was closed"]);

    // The slow export takes minutes by construction: another connection gets the export slot within seconds only
    // because the closed connection's export stopped. Nothing is cancelled from here.
    const other = engine.connect().media;
    const quick = path.join(folder, "quick.mp4");
    const deadline = Date.now() + PROMPT_STOP_MS;
    let result = null;
    while (result === null) {
        try {
            result = await other.runExport({ source: clip, output: quick, workspace: path.join(folder, "w2") });
        } catch (error) {
            if (error.code !== "EXPORT_BUSY" || Date.now() > deadline) throw error;
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
    }
    assert.deepEqual([result.event, result.path], ["result", quick]);
    // The quick export's file, sidecar and benchmark record; of the slow one nothing, not even a staging file.
    const kept = leftovers(folder).filter((name) => name !== "w2").sort();
    const quickFiles = ["quick.mp4", "quick.mp4.ftgst-bench.json", "quick.mp4.ftgst.json"];
    assert.deepEqual(kept, ["clip.mp4", ...quickFiles], "nothing at the closed connection's OUT, no staging file");
});

// The engine's lifecycle (docs/RPC.md) as Node 20 sees it. The engine completes the closing handshake before it
// drops the TCP connection: Node 20's WebSocket (undici 6) inflates permessage-deflate messages asynchronously and,
// were the TCP end to come first, would drop what it had not yet delivered and report 1006.
test("SIGTERM: the running export is answered CANCELLED, then the socket closes (1001) and calls are CLOSED", {
    timeout: 120000,
}, async (t) => {
    const folder = temporaryFolder(t);
    const engine = await startListeningEngine(t, folder);
    const { media } = engine.connect();
    const { exporting } = await startSlowExport(t, media, folder, path.join(folder, "slow.mp4"));
    engine.child.kill("SIGTERM");
    const stopped = await rejection(within(PROMPT_STOP_MS, "the export's answer", exporting));
    assert.deepEqual([stopped.code, stopped.rpcCode, stopped.message], ["CANCELLED", 130, "[CANCELLED] terminated"]);
    assert.match(await within(PROMPT_STOP_MS, "the socket's close", media.closed), /^the WebSocket closed \(1001/);
    assert.deepEqual(await within(PROMPT_STOP_MS, "the engine's exit", engine.exited), { code: 0, signal: null });
    const later = await rejection(media.probeSource({ uri: "clip.mp4" }));
    assert.equal(later.code, "CLOSED");
    assert.match(later.message, /^the engine closed: the WebSocket closed \(1001/);
    assert.deepEqual(leftovers(folder), [], "nothing at OUT");
});

test("an engine that dies (SIGKILL) rejects the pending calls with CLOSED, saying the socket closed", {
    timeout: 120000,
}, async (t) => {
    const folder = temporaryFolder(t);
    const engine = await startListeningEngine(t, folder);
    const { media } = engine.connect();
    const { exporting } = await startSlowExport(t, media, folder, path.join(folder, "slow.mp4"));
    engine.child.kill("SIGKILL");
    const error = await rejection(within(PROMPT_STOP_MS, "the pending export's rejection", exporting));
    assert.deepEqual([error.code, error.rpcCode, error.method], ["CLOSED", null, "runExport"]);
    assert.match(error.message, /^runExport: closed before an answer \(the WebSocket closed \(1006/);
    assert.match(await media.closed, /^the WebSocket closed \(1006/);
});
