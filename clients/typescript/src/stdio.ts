// The stdio transport: `ftgst serve` as a child process, one JSON text per line on its stdin and stdout
// (docs/RPC.md, transport). Node only.

import { spawn } from "child_process";
import type { ChildProcess } from "child_process";
import type { Transport } from "./transport.js";

export interface StdioTransportOptions {
    /** The ftgst binary: a path, or a name looked up in PATH. Default `ftgst`. */
    binary?: string;
    /** Arguments after `serve`. */
    args?: string[];
    /** The engine's current folder (relative paths in params are relative to it). */
    cwd?: string;
    /** The engine's environment (default: this process's). */
    env?: Record<string, string | undefined>;
    /**
     * The engine's stderr (its logs: `ftgst serve: ready…`): `inherit` passes it through to this process's stderr
     * (default), `collect` keeps it in `stderrText` (and in the close reason), `ignore` drops it.
     */
    stderr?: "inherit" | "collect" | "ignore";
}

/** How the engine ended. */
export interface EngineExit {
    code: number | null;
    signal: string | null;
}

/** Keeps the tail of the engine's stderr: enough to say why it ended, bounded. */
const STDERR_LIMIT = 64 * 1024;

export class StdioTransport implements Transport {
    readonly child: ChildProcess;
    /** Resolves once the engine has exited and its stdout is read to the end. */
    readonly exited: Promise<EngineExit>;
    private readonly messageHandlers: Array<(text: string) => void> = [];
    private readonly closeHandlers: Array<(reason: string) => void> = [];
    private buffered = "";
    private collected = "";
    private closeReason: string | null = null;
    private inputEnded = false;

    constructor(options: StdioTransportOptions = {}) {
        const stderr = options.stderr ?? "inherit";
        this.child = spawn(options.binary ?? "ftgst", ["serve", ...(options.args ?? [])], {
            cwd: options.cwd,
            env: options.env,
            stdio: ["pipe", "pipe", stderr === "collect" ? "pipe" : stderr],
        });
        let resolveExit!: (exit: EngineExit) => void;
        this.exited = new Promise((resolve) => {
            resolveExit = resolve;
        });
        const stdout = this.child.stdout;
        if (stdout !== null) {
            // UTF-8 decoded across chunk boundaries by the stream itself.
            stdout.setEncoding("utf8");
            stdout.on("data", (chunk) => this.receive(chunk));
            stdout.on("error", () => {});
        }
        if (stderr === "collect" && this.child.stderr !== null) {
            this.child.stderr.setEncoding("utf8");
            this.child.stderr.on("data", (chunk) => {
                this.collected = (this.collected + chunk).slice(-STDERR_LIMIT);
            });
        }
        // Writing to an engine that has exited is EPIPE: the close that follows says what happened.
        this.child.stdin?.on("error", () => {});
        this.child.on("error", (error) => {
            // The binary could not be started (no such file…): no "close" may follow.
            this.finish(`could not start the engine: ${error.message}`);
            resolveExit({ code: null, signal: null });
        });
        this.child.on("close", (code, signal) => {
            if (this.buffered.trim() !== "") this.deliver(this.buffered);
            this.buffered = "";
            const how = signal !== null ? `killed by ${signal}` : `exited with status ${String(code)}`;
            const tail = this.collected.trim().split("\n").slice(-3).join(" | ");
            this.finish(tail === "" ? `the engine ${how}` : `the engine ${how}: ${tail}`);
            resolveExit({ code, signal });
        });
    }

    /** The engine's stderr so far (with `stderr: "collect"`; the last 64 KiB). */
    get stderrText(): string {
        return this.collected;
    }

    send(text: string): void {
        if (this.closeReason !== null || this.inputEnded || this.child.stdin === null) {
            throw new Error(this.closeReason ?? "the engine's stdin is closed");
        }
        this.child.stdin.write(text + "\n");
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

    /** Ends the engine's stdin: it answers what it read, stops a running export, and exits. */
    close(): void {
        if (this.inputEnded) return;
        this.inputEnded = true;
        this.child.stdin?.end();
    }

    /** Sends the engine a signal (default SIGTERM: it stops a running export cleanly and exits). */
    kill(signal: string = "SIGTERM"): boolean {
        return this.child.kill(signal);
    }

    private receive(chunk: string): void {
        this.buffered += chunk;
        let newline = this.buffered.indexOf("\n");
        while (newline >= 0) {
            const line = this.buffered.slice(0, newline);
            this.buffered = this.buffered.slice(newline + 1);
            if (line.trim() !== "") this.deliver(line);
            newline = this.buffered.indexOf("\n");
        }
    }

    private deliver(line: string): void {
        for (const handler of this.messageHandlers) handler(line);
    }

    private finish(reason: string): void {
        if (this.closeReason !== null) return;
        this.closeReason = reason;
        this.inputEnded = true;
        for (const handler of this.closeHandlers.splice(0)) handler(reason);
    }
}
