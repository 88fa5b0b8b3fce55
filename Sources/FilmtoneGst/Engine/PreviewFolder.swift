import FilmtoneCore
import Foundation
import Glibc
import Synchronization

/// Where the engine writes the previews it is asked for without an `output`: a folder of its own, made with
/// `mkdtemp` (mode 0700) under `$XDG_RUNTIME_DIR` (memory-backed, the user's own), else the temporary folder, on
/// the first such preview. It removes only what it can prove it wrote: a file still at a path it wrote, with the
/// same device and inode as when written (someone else's file put there since is kept: a read-only descriptor held
/// on each preview pins its inode, which a file system would otherwise give to the next new file at once), and
/// then the folder itself with `rmdir`, which fails if anything else is in it. The newest `keep` previews are kept while it runs (a
/// slider makes hundreds); the rest when the engine closes.
final class PreviewFolder: Sendable {
    private struct Written {
        var path: String
        var identity: (device: UInt64, inode: UInt64)
        /// Held open until the file is removed or let go, so its inode number cannot be reused meanwhile.
        var pin: POSIXFile
        /// Written for a client that fetches it by URL (`file(named:)` finds only these).
        var served: Bool
    }

    private struct State {
        var folder: URL? = nil
        var next: UInt64 = 1
        var written: [Written] = []
    }

    private let state = Mutex(State())
    private let parent: String
    let keep: Int

    /// `parent` nil: `$XDG_RUNTIME_DIR` when it is a folder, else the temporary folder.
    init(parent: String? = nil, keep: Int = 64, environment: [String: String] = ProcessInfo.processInfo.environment) {
        var isFolder: ObjCBool = false
        if let parent {
            self.parent = parent
        } else if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"),
            FileManager.default.fileExists(atPath: runtime, isDirectory: &isFolder), isFolder.boolValue
        {
            self.parent = runtime
        } else {
            self.parent = FileManager.default.temporaryDirectory.path
        }
        self.keep = keep
    }

    /// A new name in the folder (made now if needed), `preview-N.EXT`, not yet written.
    func nextPath(extension ext: String) throws -> String {
        try state.withLock { state in
            let folder = try state.folder ?? makeFolder()
            state.folder = folder
            defer { state.next += 1 }
            return folder.appendingPathComponent("preview-\(state.next)" + (ext.isEmpty ? "" : ".\(ext)")).path
        }
    }

    /// Remembers that the engine wrote `path` (`served`: for a client that fetches it by URL), and removes the
    /// oldest previews beyond `keep`.
    func wrote(_ path: String, served: Bool = false) {
        // Opened and removed under the lock: the pins are this object's alone (never handed out).
        state.withLock { state in
            guard let pin = try? POSIXFile(path: path, flags: O_RDONLY | O_CLOEXEC),
                let identity = StagedFile.identity(of: path)
            else { return }
            state.written.append(Written(path: path, identity: identity, pin: pin, served: served))
            guard state.written.count > keep else { return }
            let old = state.written.count - keep
            for file in state.written.prefix(old) { PreviewFolder.remove(file) }
            state.written.removeFirst(old)
        }
    }

    /// The path of a preview it wrote for a client that fetches it by URL whose file name is `name` and which is
    /// still its file (same device and inode); nil otherwise (a stdio client's preview, which may come from a
    /// source outside the WebSocket clients' folders, is never served).
    func file(named name: String) -> String? {
        state.withLock { state in
            guard let file = state.written.last(where: { ($0.path as NSString).lastPathComponent == name }),
                file.served,
                StagedFile.identity(of: file.path).map({ $0 == file.identity }) == true
            else { return nil }
            return file.path
        }
    }

    /// Removes every preview it wrote that is still its file, then the folder if it is empty.
    func removeAll() {
        state.withLock { state in
            for file in state.written { PreviewFolder.remove(file) }
            state.written = []
            if let folder = state.folder { rmdir(folder.path) }
            state.folder = nil
        }
    }

    private static func remove(_ file: Written) {
        guard let current = StagedFile.identity(of: file.path), current == file.identity else { return }
        unlink(file.path)
    }

    private func makeFolder() throws -> URL {
        var template = Array((parent + "/ftgst-serve-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            let reason = String(cString: strerror(errno))
            throw FilmtoneError(.writeFailed, "cannot make the engine's preview folder in \(parent): \(reason)")
        }
        return URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }
}
