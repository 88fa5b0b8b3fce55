// How the client reaches an engine: one JSON text per message, in both directions (docs/RPC.md, transport).

export interface Transport {
    /** Sends one JSON text (the transport adds its framing: a newline on stdio, one message on a WebSocket). */
    send(text: string): void;
    /** Calls `handler` with every JSON text that arrives, in order. */
    onMessage(handler: (text: string) => void): void;
    /** Calls `handler` once, when the transport has closed (no message arrives after it), with why. */
    onClose(handler: (reason: string) => void): void;
    /** Starts closing: ends the engine's stdin, or closes the socket. `onClose` follows once it is closed. */
    close(): void;
}
