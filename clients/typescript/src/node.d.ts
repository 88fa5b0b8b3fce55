// The few Node APIs the stdio transport uses, declared here: Debian 12 has no package of Node's type declarations,
// and the client takes nothing from npm. Only what src/stdio.ts calls, as Node 18+ defines it.

declare module "child_process" {
    interface Readable {
        setEncoding(encoding: "utf8"): this;
        on(event: "data", listener: (chunk: string) => void): this;
        on(event: "error", listener: (error: Error) => void): this;
    }
    interface Writable {
        write(chunk: string, callback?: (error?: Error | null) => void): boolean;
        end(): this;
        on(event: "error", listener: (error: Error) => void): this;
    }
    interface ChildProcess {
        readonly pid?: number;
        readonly stdin: Writable | null;
        readonly stdout: Readable | null;
        readonly stderr: Readable | null;
        readonly exitCode: number | null;
        readonly signalCode: string | null;
        kill(signal?: string | number): boolean;
        on(event: "close", listener: (code: number | null, signal: string | null) => void): this;
        on(event: "error", listener: (error: Error) => void): this;
    }
    interface SpawnOptions {
        cwd?: string;
        env?: Record<string, string | undefined>;
        stdio?: Array<"pipe" | "inherit" | "ignore">;
    }
    function spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
}
