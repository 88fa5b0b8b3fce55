// FilmtoneMedia: the FilmtoneMediaPlugin interface over a JSON-RPC 2.0 engine (`ftgst serve`), on any Transport.

import type {
    CancelExportOptions,
    CancelExportResult,
    ErrorCode,
    ExportProgressEvent,
    ExportRequest,
    ExportResult,
    FilmtoneMediaPlugin,
    PickLutFileOptions,
    PickLutFileResult,
    PickSourceResult,
    PluginListenerHandle,
    PreviewRequest,
    PreviewResult,
    ProbeResult,
    ProbeSourceOptions,
    SaveToPhotosOptions,
    SaveToPhotosResult,
    ShareOutputOptions,
    ShareOutputResult,
} from "./definitions.js";
import type { Transport } from "./transport.js";

/**
 * A failed call. `code` is the engine's stable code (`data.code`: `FILE_NOT_FOUND`, `EXPORT_BUSY`, `CANCELLED`…),
 * or the client's own `CLOSED` (the engine closed, or the client was closed, before answering) or `TIMEOUT` (the
 * call's `timeoutMs` passed); `rpcCode` is the JSON-RPC error code (66, 75, 130, -32602…), null for the client's own.
 * `message` is the engine's `[CODE] text` line.
 */
export class FilmtoneMediaError extends Error {
    readonly code: ErrorCode | string;
    readonly rpcCode: number | null;
    readonly method: string;

    constructor(message: string, code: ErrorCode | string, rpcCode: number | null, method: string) {
        super(message);
        this.name = "FilmtoneMediaError";
        this.code = code;
        this.rpcCode = rpcCode;
        this.method = method;
    }
}

export interface CallOptions {
    /**
     * Rejects the call with `TIMEOUT` if no answer came within this many milliseconds (the engine's job keeps
     * running: give the request's own `timeoutMs`, or call `cancelExport`, to stop it). Default: the client's.
     */
    timeoutMs?: number;
}

export interface FilmtoneMediaOptions {
    /** Every call's default `timeoutMs`; none when left out. */
    timeoutMs?: number;
}

interface Pending {
    method: string;
    resolve(value: unknown): void;
    reject(error: FilmtoneMediaError): void;
    timer?: ReturnType<typeof setTimeout>;
}

type Listener = (event: ExportProgressEvent) => void;

function isObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

export class FilmtoneMedia implements FilmtoneMediaPlugin {
    private readonly transport: Transport;
    private readonly defaultTimeoutMs: number | undefined;
    private readonly pending = new Map<number, Pending>();
    private readonly listeners = new Set<Listener>();
    private nextId = 1;
    private closing: string | null = null;
    private closedReason: string | null = null;
    private readonly closedPromise: Promise<string>;
    private resolveClosed!: (reason: string) => void;

    constructor(transport: Transport, options: FilmtoneMediaOptions = {}) {
        this.transport = transport;
        this.defaultTimeoutMs = options.timeoutMs;
        this.closedPromise = new Promise((resolve) => {
            this.resolveClosed = resolve;
        });
        transport.onMessage((text) => this.receive(text));
        transport.onClose((reason) => this.transportClosed(reason));
    }

    /** Resolves with the transport's reason once it has closed (the engine exited, the socket closed). */
    get closed(): Promise<string> {
        return this.closedPromise;
    }

    // MARK: - FilmtoneMediaPlugin

    /** The desktop's file chooser for a video or photo; null when the user cancelled. */
    pickSource(options?: CallOptions): Promise<PickSourceResult | null> {
        return this.call("pickSource", undefined, options) as Promise<PickSourceResult | null>;
    }

    /** The desktop's file chooser for a `.cube` look; null when the user cancelled. */
    pickLutFile(params: PickLutFileOptions, options?: CallOptions): Promise<PickLutFileResult | null> {
        return this.call("pickLutFile", params, options) as Promise<PickLutFileResult | null>;
    }

    probeSource(params: ProbeSourceOptions, options?: CallOptions): Promise<ProbeResult> {
        return this.call("probeSource", params, options) as Promise<ProbeResult>;
    }

    renderPreviewFrame(request: PreviewRequest, options?: CallOptions): Promise<PreviewResult> {
        return this.call("renderPreviewFrame", request, options) as Promise<PreviewResult>;
    }

    runExport(request: ExportRequest, options?: CallOptions): Promise<ExportResult> {
        return this.call("runExport", request, options) as Promise<ExportResult>;
    }

    saveToPhotos(params: SaveToPhotosOptions, options?: CallOptions): Promise<SaveToPhotosResult> {
        return this.call("saveToPhotos", params, options) as Promise<SaveToPhotosResult>;
    }

    shareOutput(params: ShareOutputOptions, options?: CallOptions): Promise<ShareOutputResult> {
        return this.call("shareOutput", params, options) as Promise<ShareOutputResult>;
    }

    cancelExport(params: CancelExportOptions = {}, options?: CallOptions): Promise<CancelExportResult> {
        return this.call("cancelExport", params, options) as Promise<CancelExportResult>;
    }

    addListener(eventName: "exportProgress", listener: Listener): Promise<PluginListenerHandle> {
        if (eventName !== "exportProgress") {
            return Promise.reject(
                new FilmtoneMediaError(`no such event: ${String(eventName)}`, "INVALID_ARGUMENT", null, "addListener"),
            );
        }
        // A wrapper of its own, so that adding the same function twice gives two handles that remove one each.
        const entry: Listener = (event) => listener(event);
        this.listeners.add(entry);
        return Promise.resolve({
            remove: async () => {
                this.listeners.delete(entry);
            },
        });
    }

    /** Removes every listener (Capacitor plugins have it too). */
    async removeAllListeners(): Promise<void> {
        this.listeners.clear();
    }

    // MARK: - Calls

    /**
     * Sends one request and resolves with its `result`, or rejects with a `FilmtoneMediaError`. `params` left out
     * sends none.
     */
    call(method: string, params?: object, options: CallOptions = {}): Promise<unknown> {
        const refusal = this.closedReason ?? this.closing;
        if (refusal !== null) {
            return Promise.reject(new FilmtoneMediaError(refusal, "CLOSED", null, method));
        }
        const id = this.nextId++;
        const message: Record<string, unknown> = { jsonrpc: "2.0", id, method };
        if (params !== undefined) message.params = params;
        return new Promise((resolve, reject) => {
            const entry: Pending = { method, resolve, reject };
            const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
            if (timeoutMs !== undefined) {
                entry.timer = setTimeout(() => {
                    if (this.pending.get(id) !== entry) return;
                    this.pending.delete(id);
                    const text = `${method}: no answer within ${timeoutMs} ms`;
                    reject(new FilmtoneMediaError(text, "TIMEOUT", null, method));
                }, timeoutMs);
            }
            this.pending.set(id, entry);
            try {
                this.transport.send(JSON.stringify(message));
            } catch (error) {
                this.settle(id);
                reject(new FilmtoneMediaError(`${method}: could not send: ${String(error)}`, "CLOSED", null, method));
            }
        });
    }

    /**
     * Closes the connection: no call is sent after it (they reject with `CLOSED` at once), the engine's stdin is
     * ended (or the socket closed), and the engine answers what it had read (a running export with `[CANCELLED]
     * disconnected: stdin closed`). Calls the engine leaves unanswered are rejected with `CLOSED` when the transport
     * closes. Resolves with the transport's reason once it has closed.
     */
    close(): Promise<string> {
        if (this.closedReason === null && this.closing === null) {
            this.closing = "the client was closed";
            this.transport.close();
        }
        return this.closedPromise;
    }

    // MARK: - Messages

    private settle(id: number): Pending | undefined {
        const entry = this.pending.get(id);
        if (entry === undefined) return undefined;
        this.pending.delete(id);
        if (entry.timer !== undefined) clearTimeout(entry.timer);
        return entry;
    }

    private receive(text: string): void {
        let message: unknown;
        try {
            message = JSON.parse(text);
        } catch {
            return; // Not JSON: nothing the engine sends; nothing to match it with.
        }
        // A batch's answer (the client sends none, but the protocol has them).
        const messages = Array.isArray(message) ? message : [message];
        for (const item of messages) {
            if (isObject(item)) this.dispatch(item);
        }
    }

    private dispatch(message: Record<string, unknown>): void {
        if (typeof message.method === "string" && !("id" in message)) {
            if (message.method === "exportProgress" && isObject(message.params)) {
                const event = message.params as unknown as ExportProgressEvent;
                for (const listener of [...this.listeners]) {
                    try {
                        listener(event);
                    } catch {
                        // One listener's failure must not stop the others, nor the client.
                    }
                }
            }
            return;
        }
        if (typeof message.id !== "number") return; // Ours are numbers; null is an answer to an unreadable line.
        const entry = this.settle(message.id);
        if (entry === undefined) return; // Timed out meanwhile.
        if ("error" in message) {
            const error = isObject(message.error) ? message.error : {};
            const data = isObject(error.data) ? error.data : {};
            const rpcCode = typeof error.code === "number" ? error.code : null;
            const code = typeof data.code === "string" ? data.code : "INTERNAL";
            const text = typeof error.message === "string" ? error.message : `[${code}] ${entry.method} failed`;
            entry.reject(new FilmtoneMediaError(text, code, rpcCode, entry.method));
        } else {
            entry.resolve(message.result);
        }
    }

    private transportClosed(reason: string): void {
        if (this.closedReason !== null) return;
        this.closedReason = this.closing ?? `the engine closed: ${reason}`;
        for (const [id, entry] of [...this.pending]) {
            this.settle(id);
            const text = `${entry.method}: closed before an answer (${reason})`;
            entry.reject(new FilmtoneMediaError(text, "CLOSED", null, entry.method));
        }
        this.resolveClosed(reason);
    }
}
