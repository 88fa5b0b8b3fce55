// The WebSocket transport: `ftgst serve --listen`'s `/rpc`, one JSON text per text message, through the standard
// WebSocket API (browsers; Node 22+, Node 20 with --experimental-websocket). Tested against a real engine in Node
// (test/websocket-engine.test.js) and in Chromium (Tests/studio/client_test.py).

import type { Transport } from "./transport.js";

/** The part of the standard `WebSocket` this transport uses (so that a test may pass its own constructor). */
export interface WebSocketLike {
    readonly readyState: number;
    send(data: string): void;
    close(code?: number, reason?: string): void;
    addEventListener(type: "open", listener: () => void): void;
    addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
    addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
    addEventListener(type: "error", listener: () => void): void;
}

export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface WebSocketTransportOptions {
    /** The WebSocket class; default the global `WebSocket`. */
    WebSocket?: WebSocketConstructor;
}

const OPEN = 1;

export class WebSocketTransport implements Transport {
    /**
     * `ws://HOST:PORT/rpc?token=…` from the studio's address, `http://HOST:PORT/?token=…` (the first line
     * `ftgst serve --listen` prints, `{"url":…}`), or a page's `location.href` (its `#…` dropped: a WebSocket's
     * address has none).
     */
    static rpcUrl(pageUrl: string): string {
        const url = new URL(pageUrl);
        url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
        url.pathname = "/rpc";
        url.hash = "";
        return url.toString();
    }

    readonly socket: WebSocketLike;
    /** Resolves when the socket is open; rejects if it closed first. */
    readonly opened: Promise<void>;
    private readonly messageHandlers: Array<(text: string) => void> = [];
    private readonly closeHandlers: Array<(reason: string) => void> = [];
    /** What was sent before the socket opened, sent on open in order. */
    private queue: string[] = [];
    private closeReason: string | null = null;
    private rejectOpened: (error: Error) => void = () => {};

    /** `url`: the RPC WebSocket's address with its token, `ws://127.0.0.1:PORT/rpc?token=…`. */
    constructor(url: string, options: WebSocketTransportOptions = {}) {
        const Socket =
            options.WebSocket ?? (globalThis as unknown as { WebSocket?: WebSocketConstructor }).WebSocket;
        if (Socket === undefined) throw new Error("no WebSocket class: pass options.WebSocket");
        this.socket = new Socket(url);
        this.opened = new Promise((resolve, reject) => {
            this.socket.addEventListener("open", () => {
                for (const text of this.queue.splice(0)) this.socket.send(text);
                resolve();
            });
            this.socket.addEventListener("close", (event) => {
                reject(new Error(`the WebSocket closed before opening (${event.code})`));
            });
            this.rejectOpened = reject;
        });
        this.opened.catch(() => {});
        this.socket.addEventListener("message", (event) => {
            if (typeof event.data !== "string") return; // The protocol is text messages only.
            for (const handler of this.messageHandlers) handler(event.data);
        });
        // The standard says a close event follows every error event; Node 20's WebSocket (undici) fires none after a
        // refused handshake (a 403: wrong token, another Origin) and stays CONNECTING. So an error before the open
        // closes the transport itself; a close event after it finds it closed. Once open, the close event comes.
        let open = false;
        this.socket.addEventListener("open", () => {
            open = true;
        });
        this.socket.addEventListener("error", () => {
            if (open) return;
            this.failedToOpen("the WebSocket could not connect (refused, or nothing answers at its address)");
        });
        this.socket.addEventListener("close", (event) => {
            this.finish(`the WebSocket closed (${event.code}${event.reason === "" ? "" : ` ${event.reason}`})`);
        });
    }

    send(text: string): void {
        if (this.closeReason !== null) throw new Error(this.closeReason);
        if (this.socket.readyState === OPEN) {
            this.socket.send(text);
        } else {
            this.queue.push(text);
        }
    }

    onMessage(handler: (text: string) => void): void {
        this.messageHandlers.push(handler);
    }

    onClose(handler: (reason: string) => void): void {
        if (this.closeReason !== null) {
            handler(this.closeReason);
        } else {
            this.closeHandlers.push(handler);
        }
    }

    close(): void {
        this.socket.close(1000, "client closed");
    }

    private failedToOpen(reason: string): void {
        if (this.closeReason !== null) return; // Closing it below fires another error event in Node 20.
        this.rejectOpened(new Error(reason));
        this.finish(reason);
        try {
            this.socket.close();
        } catch {
            // Already closing: nothing to stop.
        }
    }

    private finish(reason: string): void {
        if (this.closeReason !== null) return;
        this.closeReason = reason;
        this.queue = [];
        for (const handler of this.closeHandlers.splice(0)) handler(reason);
    }
}
