// WebSocketTransport's own logic (queueing before open, text messages, close) with a stand-in for the standard
// WebSocket class, which can make the events come in orders a real engine does not choose (a close before the open,
// an error with no close). Against a real `ftgst serve --listen`: websocket-engine.test.js.
"use strict";

const assert = require("node:assert/strict");
const { test } = require("node:test");
const { client, rejection } = require("./support");

/** The standard WebSocket API's surface, driven by the test; answers each request like the engine would. */
class FakeSocket {
    static last = null;
    constructor(url) {
        this.url = url;
        this.readyState = 0;
        this.sent = [];
        this.listeners = { open: [], message: [], close: [], error: [] };
        FakeSocket.last = this;
    }
    addEventListener(type, listener) {
        this.listeners[type].push(listener);
    }
    send(data) {
        assert.equal(this.readyState, 1, "sent only when open");
        this.sent.push(JSON.parse(data));
    }
    close(code, reason) {
        this.closeCall = [code, reason];
        this.emit("close", { code: 1000, reason: "" });
    }
    emit(type, event) {
        if (type === "open") this.readyState = 1;
        if (type === "close") this.readyState = 3;
        for (const listener of this.listeners[type]) listener(event);
    }
}

test("rpcUrl turns the studio's address into the RPC WebSocket's, token kept", () => {
    assert.equal(
        client.WebSocketTransport.rpcUrl("http://127.0.0.1:8123/?token=abc123"),
        "ws://127.0.0.1:8123/rpc?token=abc123",
    );
    assert.equal(
        client.WebSocketTransport.rpcUrl("http://127.0.0.1:8123/index.html?token=abc123#%7B%22a%22%3A1%7D"),
        "ws://127.0.0.1:8123/rpc?token=abc123",
        "a page's own path and fragment dropped",
    );
});

const OPEN_AND_MESSAGES = "calls wait for the socket to open, answers and progress arrive as text messages";
test(OPEN_AND_MESSAGES, { timeout: 10000 }, async () => {
    const transport = new client.WebSocketTransport("ws://127.0.0.1:1/rpc?token=t", { WebSocket: FakeSocket });
    const socket = FakeSocket.last;
    assert.equal(socket.url, "ws://127.0.0.1:1/rpc?token=t");
    const media = new client.FilmtoneMedia(transport);
    const events = [];
    await media.addListener("exportProgress", (event) => events.push(event));
    const probing = media.probeSource({ uri: "clip.mp4" });
    const exporting = media.runExport({ source: "clip.mp4", output: "out.mp4" });
    assert.deepEqual(socket.sent, [], "nothing sent before open");
    socket.emit("open");
    await transport.opened;
    assert.deepEqual(
        socket.sent.map((m) => [m.jsonrpc, m.id, m.method, m.params]),
        [
            ["2.0", 1, "probeSource", { uri: "clip.mp4" }],
            ["2.0", 2, "runExport", { source: "clip.mp4", output: "out.mp4" }],
        ],
    );
    const progress = { stage: "rendering", progress: 0.5, currentFrame: 45, totalFrames: 90 };
    socket.emit("message", { data: JSON.stringify({ jsonrpc: "2.0", method: "exportProgress", params: progress }) });
    socket.emit("message", { data: JSON.stringify({ jsonrpc: "2.0", id: 1, result: { durationMs: 3000 } }) });
    assert.deepEqual(await probing, { durationMs: 3000 });
    assert.deepEqual(events, [progress]);

    const closing = media.close();
    assert.deepEqual(socket.closeCall, [1000, "client closed"]);
    const unanswered = await rejection(exporting);
    assert.deepEqual([unanswered.code, unanswered.rpcCode], ["CLOSED", null]);
    assert.match(await closing, /the WebSocket closed \(1000\)/);
});

test("a socket that closes before opening rejects opened and every call", { timeout: 10000 }, async () => {
    const transport = new client.WebSocketTransport("ws://127.0.0.1:1/rpc?token=wrong", { WebSocket: FakeSocket });
    const media = new client.FilmtoneMedia(transport);
    const probing = media.probeSource({ uri: "clip.mp4" });
    FakeSocket.last.emit("close", { code: 1006, reason: "" });
    await assert.rejects(transport.opened, /closed before opening \(1006\)/);
    assert.equal((await rejection(probing)).code, "CLOSED");
    assert.equal((await rejection(media.probeSource({ uri: "clip.mp4" }))).code, "CLOSED");
});

test("an error before the open with no close after it (Node 20 after a 403) still closes the transport", {
    timeout: 10000,
}, async () => {
    const transport = new client.WebSocketTransport("ws://127.0.0.1:1/rpc?token=wrong", { WebSocket: FakeSocket });
    const media = new client.FilmtoneMedia(transport);
    const probing = media.probeSource({ uri: "clip.mp4" });
    FakeSocket.last.emit("error", {});
    await assert.rejects(transport.opened, /could not connect/);
    const error = await rejection(probing);
    assert.equal(error.code, "CLOSED");
    assert.match(error.message, /could not connect/);
    assert.match(await media.closed, /could not connect/);
    assert.notEqual(FakeSocket.last.closeCall, undefined, "the connecting socket is closed");
});
