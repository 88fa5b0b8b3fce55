import FilmtoneCore
import Foundation

/// One file in a cache folder, as eviction sees it.
struct CacheEntry: Equatable {
    var name: String
    var size: Int64
    var modified: Date
}

/// Size-capped cache folder: oldest-first eviction (files are written through `StagedFile`).
enum CacheDirectory {
    /// Which files to delete so the folder's total is at most `capBytes`: oldest modification first (name as a
    /// tie-break, so the choice is deterministic), never `keep` (the file just written), even if `keep` alone
    /// is over the cap. Pure: unit-tested without a file system.
    static func evictionPlan(entries: [CacheEntry], capBytes: Int64, keep: String) -> [String] {
        var total = entries.reduce(Int64(0)) { $0 + $1.size }
        var victims: [String] = []
        let oldestFirst = entries.filter { $0.name != keep }.sorted {
            ($0.modified, $0.name) < ($1.modified, $1.name)
        }
        for entry in oldestFirst where total > capBytes {
            victims.append(entry.name)
            total -= entry.size
        }
        return victims
    }

    /// Creates the folder (and parents). `WRITE_FAILED` if it cannot exist as a folder.
    static func prepare(_ directory: URL) throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw FilmtoneError(.writeFailed, "cannot create cache folder \(directory.path): \(reason(error))")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue
        else { throw FilmtoneError(.writeFailed, "cache folder is not a folder: \(directory.path)") }
    }

    /// Lists the folder's cache entries (regular files, temporaries excluded).
    static func entries(in directory: URL) -> [CacheEntry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.compactMap { name in
            guard !StagedFile.isStaging(name) else { return nil }
            var info = stat()
            guard stat(directory.appendingPathComponent(name).path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG
            else { return nil }
            let modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
            return CacheEntry(name: name, size: Int64(info.st_size), modified: modified)
        }
    }

    /// Evicts per `evictionPlan`. A file another process removed first is not an error.
    static func evict(in directory: URL, capBytes: Int64, keep: String) {
        for name in evictionPlan(entries: entries(in: directory), capBytes: capBytes, keep: keep) {
            unlink(directory.appendingPathComponent(name).path)
        }
    }

    /// Marks a cache hit as recently used (eviction is by modification time).
    static func touch(_ file: URL) {
        utimes(file.path, nil)
    }

    private static func reason(_ error: Error) -> String {
        (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
    }
}
