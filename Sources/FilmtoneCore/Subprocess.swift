import Foundation

/// How a helper program (`xdg-user-dir`, `xdg-open`, `zenity`) ended.
package struct SubprocessOutcome {
    /// The exit status, or nil when it was killed at the deadline (or by a signal).
    package var status: Int32?
    package var timedOut: Bool
    package var stdout: String
    package var stderr: String

    /// stderr (else stdout) squeezed onto one line and shortened, for a `[CODE] message` line.
    package var diagnostic: String {
        let text = stderr.isEmpty ? stdout : stderr
        let line = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
        return line.count > 300 ? String(line.prefix(300)) + "…" : line
    }
}

/// Runs helper programs with a deadline: they can never hang ftgst.
///
/// - stdin is `/dev/null` unless the caller passes a file (the portal call hands over its stdin descriptor);
/// - stdout and stderr go to unlinked temporary files, not pipes: a handler that starts a viewer which inherits
///   them (and lives on) would otherwise keep the pipe open, and a wait for its end would last as long as the
///   viewer;
/// - at the deadline the child's whole process group is killed (Foundation's `Process` starts the child as the
///   leader of its own group), so a script's own children (`sleep`) go with it.
package enum Subprocess {
    /// The first executable regular file named `name` in the `PATH` of `environment`.
    package static func find(_ name: String, environment: [String: String]) -> URL? {
        guard let path = environment["PATH"] else { return nil }
        for folder in path.split(separator: ":", omittingEmptySubsequences: true) where folder.hasPrefix("/") {
            let candidate = "\(folder)/\(name)"
            var info = stat()
            if stat(candidate, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(candidate, X_OK) == 0 {
                return URL(fileURLWithPath: candidate)
            }
        }
        return nil
    }

    /// Runs `executable` to its end or to `timeoutMilliseconds`, whichever comes first. Throws
    /// `SystemCallError` only when the program cannot be started at all.
    package static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String],
        standardInput: FileHandle? = nil, timeoutMilliseconds: Int64
    ) throws -> SubprocessOutcome {
        let out = try CapturedOutput()
        let err = try CapturedOutput()
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = standardInput ?? FileHandle.nullDevice
        process.standardOutput = out.handle
        process.standardError = err.handle
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        do {
            try process.run()
        } catch {
            let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
            throw SystemCallError(
                call: "run", path: executable.path,
                errno: underlying.map { Int32(clamping: $0.code) } ?? ENOEXEC)
        }
        let deadline = DispatchTime.now() + .milliseconds(Int(clamping: max(timeoutMilliseconds, 1)))
        if finished.wait(timeout: deadline) == .timedOut {
            let pid = process.processIdentifier
            // The child leads its own group: kill the group, so grandchildren cannot keep running either.
            if getpgid(pid) == pid { kill(-pid, SIGKILL) } else { kill(pid, SIGKILL) }
            _ = finished.wait(timeout: .now() + .seconds(2))
            return SubprocessOutcome(status: nil, timedOut: true, stdout: out.text(), stderr: err.text())
        }
        let status = process.terminationReason == .exit ? process.terminationStatus : nil
        return SubprocessOutcome(status: status, timedOut: false, stdout: out.text(), stderr: err.text())
    }
}

/// An anonymous temporary file a child writes its output to (unlinked at once, so nothing is left behind).
private final class CapturedOutput {
    package let handle: FileHandle
    private let descriptor: Int32

    package init() throws {
        let folder = FileManager.default.temporaryDirectory.path
        let path = "\(folder)/.ftgst-output.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemCallError(call: "open", path: path, errno: errno) }
        unlink(path)
        descriptor = fd
        handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    /// What the child wrote, up to 64 KiB (only a diagnostic line or a short answer is ever used).
    package func text() -> String {
        var bytes = [UInt8](repeating: 0, count: 64 * 1024)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        return String(decoding: bytes.prefix(max(count, 0)), as: UTF8.self)
    }
}
