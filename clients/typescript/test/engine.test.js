// FilmtoneMedia over the stdio transport against the real `ftgst serve` (FTGST_BIN), with the generated fixtures
// (FTGST_FIXTURES). Every wait has a deadline; every test has a timeout.
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { test } = require("node:test");
const {
    client,
    fixture,
    temporaryFolder,
    startEngine,
    leftovers,
    pngSize,
    within,
    slowClip,
    startSlowExport,
    rejection,
} = require("./support");

/** From a stop (cancel, stdin's end) to the answer or the exit: as ServeCLITests' promptStop. */
const PROMPT_STOP_MS = 10000;

test("probeSource describes clip.mp4", { timeout: 60000 }, async (t) => {
    const { media } = startEngine(t, temporaryFolder(t));
    const probe = await media.probeSource({ uri: fixture("clip.mp4") });
    assert.equal(probe.container, "mp4");
    assert.equal(probe.isImage, false);
    assert.equal(probe.durationMs, 3000);
    assert.equal(probe.video.codec, "h264");
    assert.deepEqual([probe.video.width, probe.video.height, probe.video.frameCount], [320, 240, 90]);
    assert.equal(probe.audio.codec, "aac");
    await media.close();
});

test("renderPreviewFrame writes the PNG it names, at OUT or in the engine's folder", { timeout: 60000 }, async (t) => {
    const folder = temporaryFolder(t);
    const { media, runtime } = startEngine(t, folder);
    const output = path.join(folder, "frame.png");
    const named = await media.renderPreviewFrame({ source: fixture("clip.mp4"), output, timeMs: 1000 });
    assert.equal(named.path, output);
    assert.deepEqual([named.width, named.height, named.timeMs, named.mezzanine], [320, 240, 1000, false]);
    assert.equal(typeof named.renderMs, "number");
    assert.deepEqual(pngSize(fs.readFileSync(output)), [320, 240]);

    const own = await media.renderPreviewFrame({ source: fixture("clip.mp4"), timeMs: 500, maxWidth: 160 });
    assert.ok(own.path.startsWith(path.join(runtime, "ftgst-serve-")), own.path);
    assert.deepEqual(pngSize(fs.readFileSync(own.path)), [160, 120]);
    await media.close();
    assert.equal(fs.existsSync(own.path), false, "the engine removes its own previews at exit");
    assert.equal(fs.existsSync(output), true, "and never a preview at OUT");
});

test("runExport sends exportProgress to listeners until they are removed", { timeout: 120000 }, async (t) => {
    const folder = temporaryFolder(t);
    const { media } = startEngine(t, folder);
    const events = [];
    const kept = await media.addListener("exportProgress", (event) => events.push(event));
    let removedBefore = 0;
    const before = await media.addListener("exportProgress", () => removedBefore++);
    await before.remove();
    let removedInside = 0;
    let inside;
    inside = await media.addListener("exportProgress", () => {
        removedInside++;
        inside.remove();
    });

    const output = path.join(folder, "out.mp4");
    const workspace = path.join(folder, "workspace");
    const result = await media.runExport({ source: fixture("clip.mp4"), output, workspace });
    assert.equal(result.event, "result");
    assert.equal(result.path, output);
    assert.deepEqual([result.width, result.height, result.frames], [320, 240, 90]);
    assert.equal(result.sizeBytes, fs.statSync(output).size);

    assert.ok(events.length >= 2, JSON.stringify(events));
    assert.equal(events[0].stage, "probing");
    assert.ok(events.some((event) => event.stage === "rendering"), JSON.stringify(events));
    const last = events[events.length - 1];
    assert.deepEqual([last.stage, last.progress, last.currentFrame, last.totalFrames], ["finalizing", 1, 90, 90]);
    for (let i = 1; i < events.length; i++) assert.ok(events[i].progress >= events[i - 1].progress, "never decreasing");
    assert.equal(removedBefore, 0, "a listener removed before the export hears nothing");
    assert.equal(removedInside, 1, "a listener removed at its first event hears no other");

    await kept.remove();
    const count = events.length;
    await media.runExport({
        source: fixture("clip.mp4"),
        output: path.join(folder, "again.mp4"),
        workspace,
        maxWidth: 160,
    });
    assert.equal(events.length, count, "no event after remove()");
    await media.close();
});

const BUSY_AND_CANCEL = "a second export is EXPORT_BUSY and cancelExport stops the first, leaving nothing";
test(BUSY_AND_CANCEL, { timeout: 120000 }, async (t) => {
    const folder = temporaryFolder(t);
    const { media } = startEngine(t, folder);
    const output = path.join(folder, "slow.mp4");
    const { exporting } = await startSlowExport(t, media, folder, output);

    const busy = await rejection(
        media.runExport({
            source: fixture("clip.mp4"),
            output: path.join(folder, "second.mp4"),
            workspace: path.join(folder, "workspace"),
        }),
    );
    assert.ok(busy instanceof client.FilmtoneMediaError);
    assert.deepEqual([busy.code, busy.rpcCode, busy.method], ["EXPORT_BUSY", 75, "runExport"]);
    assert.ok(busy.message.startsWith("[EXPORT_BUSY] "), busy.message);

    const cancelled = await media.cancelExport({ reason: "user pressed stop" }, { timeoutMs: PROMPT_STOP_MS });
    assert.deepEqual(cancelled, { cancelled: true });
    const stopped = await rejection(within(PROMPT_STOP_MS, "the export's answer", exporting));
    assert.deepEqual([stopped.code, stopped.rpcCode], ["CANCELLED", 130]);
    assert.equal(stopped.message, "[CANCELLED] api: user pressed stop");
    assert.deepEqual(leftovers(folder), [], "nothing at OUT, no staging file");
    const recordsFolder = path.join(folder, "workspace", "records");
    const records = fs.readdirSync(recordsFolder).filter((name) => name.endsWith("-cancelled.json"));
    assert.equal(records.length, 1, JSON.stringify(records));
    const record = JSON.parse(fs.readFileSync(path.join(recordsFolder, records[0]), "utf8"));
    assert.deepEqual([record.cancelReason, record.cancelDetail], ["api", "user pressed stop"]);

    assert.deepEqual(await media.cancelExport(), { cancelled: false }, "none runs now");
    await media.close();
});

test("failures reject with the engine's stable code, and the engine keeps serving", { timeout: 60000 }, async (t) => {
    const folder = temporaryFolder(t);
    const { media } = startEngine(t, folder);
    const missing = path.join(folder, "no-such-clip.mp4");
    const notFound = await rejection(media.probeSource({ uri: missing }));
    assert.deepEqual([notFound.code, notFound.rpcCode, notFound.method], ["FILE_NOT_FOUND", 66, "probeSource"]);
    assert.ok(notFound.message.startsWith("[FILE_NOT_FOUND] "), notFound.message);
    const preview = await rejection(media.renderPreviewFrame({ source: missing }));
    assert.deepEqual([preview.code, preview.rpcCode], ["FILE_NOT_FOUND", 66]);

    const badParams = await rejection(media.renderPreviewFrame({ source: fixture("clip.mp4"), intensity: 5 }));
    assert.deepEqual([badParams.code, badParams.rpcCode], ["INVALID_ARGUMENT", -32602]);
    const picker = await rejection(media.pickLutFile({ slot: "creativeLut" }));
    assert.deepEqual([picker.code, picker.rpcCode], ["NOT_SUPPORTED", 79]);
    const source = await rejection(media.pickSource());
    assert.deepEqual([source.code, source.rpcCode], ["NOT_SUPPORTED", 79]);

    assert.equal((await media.probeSource({ uri: fixture("clip.mp4") })).durationMs, 3000, "still serving");
    await media.close();
});

test("a call's timeoutMs rejects it with TIMEOUT while the engine's job runs on", { timeout: 120000 }, async (t) => {
    const folder = temporaryFolder(t);
    const { media } = startEngine(t, folder);
    const clip = await slowClip(t);
    let started;
    const running = new Promise((resolve) => {
        started = resolve;
    });
    const handle = await media.addListener("exportProgress", () => started());
    // The slow clip takes ≥ 180 s to arrive: its export cannot answer within a second.
    const exporting = media.runExport(
        { source: clip.url, output: path.join(folder, "slow.mp4"), workspace: path.join(folder, "workspace") },
        { timeoutMs: 1000 },
    );
    const timedOut = await rejection(exporting);
    assert.deepEqual([timedOut.code, timedOut.rpcCode, timedOut.method], ["TIMEOUT", null, "runExport"]);
    await within(60000, "the export's first exportProgress", running);
    await handle.remove();
    assert.deepEqual(await media.cancelExport({}, { timeoutMs: PROMPT_STOP_MS }), { cancelled: true }, "it still ran");
    assert.deepEqual(leftovers(folder), [], "nothing at OUT");
    await media.close();
});

const CLOSE = "close() ends the engine: a running export is cancelled, the child exits, later calls are CLOSED";
test(CLOSE, { timeout: 120000 }, async (t) => {
    const folder = temporaryFolder(t);
    const { media, transport } = startEngine(t, folder);
    const { exporting } = await startSlowExport(t, media, folder, path.join(folder, "slow.mp4"));
    const closing = media.close();
    const later = await rejection(media.probeSource({ uri: fixture("clip.mp4") }));
    assert.deepEqual([later.code, later.rpcCode], ["CLOSED", null]);

    const exit = await within(PROMPT_STOP_MS, "the engine's exit", transport.exited);
    assert.deepEqual(exit, { code: 0, signal: null }, transport.stderrText);
    const stopped = await rejection(exporting);
    assert.deepEqual([stopped.code, stopped.rpcCode], ["CANCELLED", 130]);
    assert.equal(stopped.message, "[CANCELLED] disconnected: stdin closed");
    assert.match(await closing, /exited with status 0/);
    assert.deepEqual(leftovers(folder), [], "nothing at OUT");
});

test("an engine that cannot start rejects calls with CLOSED", { timeout: 30000 }, async (t) => {
    const folder = temporaryFolder(t);
    const { media } = startEngine(t, folder, { binary: path.join(folder, "no-such-ftgst") });
    const error = await rejection(media.probeSource({ uri: "clip.mp4" }));
    assert.equal(error.code, "CLOSED");
    assert.match(error.message, /could not start the engine/);
    assert.match(await media.closed, /ENOENT/);
});
