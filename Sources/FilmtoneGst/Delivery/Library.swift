import FilmtoneCore
import Foundation

/// What `saveToLibrary` is asked for. Defaults match `ftgst save`'s.
public struct SaveOptions: Sendable {
    /// The file to save: a path, absolute or relative to the current directory. Must be a regular file.
    public var file: String
    /// The library folder; nil: the user's folder for what the file holds (`LibraryKind`), plus `Filmtone`:
    /// `$(xdg-user-dir VIDEOS)/Filmtone` for a video (else `$HOME/Videos/Filmtone`), `MUSIC` for audio,
    /// `PICTURES` for a picture or anything not recognised (else `$HOME/Pictures/Filmtone`).
    public var library: String? = nil
    /// How long to wait for another process holding the library's lock before `WRITE_FAILED` "library busy".
    public var lockTimeoutMilliseconds: Int64 = 30_000

    public init(file: String) {
        self.file = file
    }
}

/// A file saved into the library.
public struct SaveResult: Equatable, Sendable {
    /// Absolute path of the copy in the library.
    public var path: String
    /// SHA-256 of the content, 64 lowercase hex digits: the key the library's ledger records.
    public var sha256: String

    /// The CLI's result object: `{"path":…,"sha256":…}`.
    public var json: JSONValue { .object([("path", .string(path)), ("sha256", .string(sha256))]) }
}

/// Copies an export into the user's library for what it holds (videos, pictures, music: `LibraryKind`), at most
/// once per content: the desktop counterpart of saving to the photo library.
///
/// The copy keeps the file's name (`name-2.ext`, `name-3.ext`… on a collision) and is placed atomically. The
/// library's ledger (`.ftgst-ledger.json`, guarded by `flock` on `.ftgst-ledger.lock`) maps each saved content's
/// SHA-256 to its name, so the same content is never written twice, even by processes racing each other: the
/// second is `SAVE_FAILED` "already saved as PATH". Other codes: `FILE_NOT_FOUND` (the source is missing, not a
/// regular file or unreadable), `WRITE_FAILED` (the library cannot be created or written, its ledger is damaged,
/// or its lock stays taken past `lockTimeoutMilliseconds`), `CANCELLED` (the task was cancelled while copying).
public func saveToLibrary(_ options: SaveOptions) async throws -> SaveResult {
    // The job's thread also finds the default library, which reads the file and may run `xdg-user-dir`.
    try await runDetached { isCancelled in try LibrarySave.run(SaveRequest(options), isCancelled: isCancelled) }
}

/// The user's Videos and Pictures folders (`xdg-user-dir VIDEOS|PICTURES`, else `$HOME/Videos`, `$HOME/Pictures`),
/// whether they exist or not: the studio's default `--allow` folders.
public func userMediaFolders(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
    [LibraryKind.videos, .pictures].map { SaveRequest.userFolder($0, environment) }
}

/// A validated save request: both paths absolute.
struct SaveRequest {
    var source: String
    /// The library given; nil: the default for the file's kind, found by `library()` once the file is checked.
    var explicitLibrary: URL?
    var lockTimeoutMilliseconds: Int64
    var environment: [String: String]

    /// Throws `INVALID_ARGUMENT`. Touches no file and runs nothing.
    init(_ options: SaveOptions, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard !options.file.isEmpty, !options.file.contains("\0") else {
            throw FilmtoneError(.invalidArgument, "FILE must be a path")
        }
        guard options.lockTimeoutMilliseconds > 0 else {
            throw FilmtoneError(.invalidArgument, "the library lock timeout must be positive")
        }
        if let library = options.library {
            guard !library.isEmpty, !library.contains("\0") else {
                throw FilmtoneError(.invalidArgument, "--library must be a path")
            }
        }
        source = URL(fileURLWithPath: options.file).standardizedFileURL.path
        explicitLibrary = options.library.map { URL(fileURLWithPath: $0, isDirectory: true).standardizedFileURL }
        lockTimeoutMilliseconds = options.lockTimeoutMilliseconds
        self.environment = environment
    }

    /// The library: the one given, else the default for what the (checked) source holds, read from its first
    /// bytes (`LibraryKind.of`): a video goes to the videos folder, not the pictures folder.
    func library() throws -> URL {
        if let explicitLibrary { return explicitLibrary }
        let header = try SaveRequest.header(of: source)
        let tracks = LibraryKind.isISOMedia(header) ? SaveRequest.trackHandlers(of: source) : []
        let kind = LibraryKind.of(header: header, name: source, tracks: tracks)
        return URL(fileURLWithPath: SaveRequest.defaultLibrary(kind, environment), isDirectory: true)
            .standardizedFileURL
    }

    /// The first 4 KiB of the file (less if it is shorter): enough for every signature `LibraryKind` reads.
    static func header(of path: String) throws -> [UInt8] {
        do {
            let file = try POSIXFile(path: path, flags: O_RDONLY)
            var bytes = [UInt8](repeating: 0, count: 4096)
            var filled = 0
            while filled < bytes.count {
                let count = try bytes.withUnsafeMutableBytes {
                    try file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[filled...]))
                }
                if count == 0 { break }
                filled += count
            }
            return Array(bytes[..<filled])
        } catch let error as SystemCallError {
            throw FilmtoneError(.fileNotFound, "cannot read \(path): \(error.reason)")
        }
    }

    /// The handler types of an ISO media file's tracks (`vide`, `soun`…), from its `moov` box wherever it is (an
    /// export's is at the end): the top-level boxes are walked by their sizes, and a `moov` of up to 64 MiB is read.
    /// Empty when there is none or the file cannot be walked.
    static func trackHandlers(of path: String) -> Set<String> {
        guard let file = try? POSIXFile(path: path, flags: O_RDONLY) else { return [] }
        func read(_ count: Int, at offset: Int64) -> [UInt8]? {
            var bytes = [UInt8](repeating: 0, count: count)
            let got = bytes.withUnsafeMutableBytes { pread(file.descriptor, $0.baseAddress, count, off_t(offset)) }
            return got == count ? bytes : nil
        }
        var offset: Int64 = 0
        for _ in 0..<1000 {
            guard let head = read(8, at: offset) else { return [] }
            var size = Int64(head[0..<4].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            var headerSize: Int64 = 8
            if size == 1, let large = read(8, at: offset + 8) {
                size = Int64(bitPattern: large.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
                headerSize = 16
            }
            guard size >= headerSize else { return [] }  // 0 (to the end) or damaged: nothing more to walk
            if String(decoding: head[4..<8], as: UTF8.self) == "moov" {
                guard size <= 64 << 20, let moov = read(Int(size - headerSize), at: offset + headerSize) else {
                    return []
                }
                return LibraryKind.handlerTypes(inMoov: moov)
            }
            offset += size
        }
        return []
    }

    /// `$(xdg-user-dir VIDEOS|MUSIC|PICTURES)/Filmtone`, else `$HOME/Videos|Music|Pictures/Filmtone`.
    static func defaultLibrary(_ kind: LibraryKind, _ environment: [String: String]) -> String {
        URL(fileURLWithPath: userFolder(kind, environment)).appendingPathComponent("Filmtone").path
    }

    /// `$(xdg-user-dir VIDEOS|MUSIC|PICTURES)`, else `$HOME/Videos|Music|Pictures`. `xdg-user-dir` gets 2 s.
    static func userFolder(_ kind: LibraryKind, _ environment: [String: String]) -> String {
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NSHomeDirectory()
        var answer: String? = nil
        if let tool = Subprocess.find("xdg-user-dir", environment: environment),
            let outcome = try? Subprocess.run(
                tool, [kind.xdgName], environment: environment, timeoutMilliseconds: 2000),
            outcome.status == 0
        {
            answer = outcome.stdout
        }
        return userFolder(kind, xdgAnswer: answer, home: home)
    }

    /// The user's folder for `kind` from `xdg-user-dir NAME`'s answer. It prints `$HOME` when no such folder is
    /// configured, and a desktop-less machine may print nothing: both (and anything not absolute) mean
    /// `$HOME/Pictures` (`Videos`, `Music`). Pure.
    static func userFolder(_ kind: LibraryKind, xdgAnswer: String?, home: String) -> String {
        let homePath = URL(fileURLWithPath: home).standardizedFileURL.path
        let answer = xdgAnswer?.trimmingCharacters(in: .newlines) ?? ""
        if answer.hasPrefix("/") {
            let path = URL(fileURLWithPath: answer).standardizedFileURL.path
            if path != homePath { return path }
        }
        return URL(fileURLWithPath: homePath).appendingPathComponent(kind.homeFolder).path
    }
}

/// Which of the user's folders a saved file belongs in, told from its content (not its name, which may say
/// anything): a video, audio alone, or a picture. What is not recognised goes with pictures, the library's
/// original home, unless its extension is a video's or audio's. Pure.
enum LibraryKind: Equatable, Sendable {
    case pictures
    case videos
    case music

    /// The `xdg-user-dir` name (XDG user-dirs: `XDG_PICTURES_DIR`, `XDG_VIDEOS_DIR`, `XDG_MUSIC_DIR`).
    var xdgName: String {
        switch self {
        case .pictures: "PICTURES"
        case .videos: "VIDEOS"
        case .music: "MUSIC"
        }
    }

    /// The folder under `$HOME` when `xdg-user-dir` gives none.
    var homeFolder: String {
        switch self {
        case .pictures: "Pictures"
        case .videos: "Videos"
        case .music: "Music"
        }
    }

    /// ISO base media brands of pictures (HEIF, HEIC, AVIF and their sequences) and of audio alone (M4A, M4B…).
    static let pictureBrands: Set<String> = [
        "mif1", "msf1", "heic", "heix", "hevc", "hevx", "heim", "heis", "avif", "avis",
    ]
    static let audioBrands: Set<String> = ["M4A ", "M4B ", "M4P ", "F4A ", "F4B "]
    static let videoExtensions: Set<String> = [
        "mp4", "m4v", "mov", "qt", "mkv", "webm", "avi", "ts", "m2ts", "mts", "mpg", "mpeg", "ogv", "flv", "wmv", "mxf",
        "3gp", "3g2",
    ]
    static let audioExtensions: Set<String> = ["m4a", "m4b", "mp3", "aac", "flac", "wav", "ogg", "oga", "opus", "wma"]

    /// The kind of a file from its first bytes (`header`) and, for ISO media, its tracks' handler types (`tracks`:
    /// a `vide` track makes a video, `soun` tracks alone audio), else from `name`'s extension.
    static func of(header: [UInt8], name: String, tracks: Set<String> = []) -> LibraryKind {
        if isISOMedia(header), !tracks.isEmpty, fromContent(header) == .videos {
            if tracks.contains("vide") { return .videos }
            if tracks.contains("soun") { return .music }
        }
        if let kind = fromContent(header) { return kind }
        let ext = (name as NSString).pathExtension.lowercased()
        if videoExtensions.contains(ext) { return .videos }
        if audioExtensions.contains(ext) { return .music }
        return .pictures
    }

    /// An ISO base media file (MP4, MOV, 3GP, M4A, HEIF): an `ftyp` box, or a QuickTime file's first atom.
    static func isISOMedia(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 8 else { return false }
        return ["ftyp", "moov", "mdat", "wide", "free", "skip", "pnot"].contains(
            String(decoding: bytes[4..<8], as: UTF8.self))
    }

    /// The handler type of every `hdlr` box in a `moov` box's body: `hdlr`, 4 bytes of version and flags, 4 of
    /// `pre_defined`, then the type. Pure.
    static func handlerTypes(inMoov bytes: [UInt8]) -> Set<String> {
        let tag = Array("hdlr".utf8)
        var types: Set<String> = []
        var index = 0
        while index + 16 <= bytes.count {
            if bytes[index] == tag[0], Array(bytes[index..<index + 4]) == tag {
                types.insert(String(decoding: bytes[index + 12..<index + 16], as: UTF8.self))
                index += 16
            } else {
                index += 1
            }
        }
        return types
    }

    static func fromContent(_ bytes: [UInt8]) -> LibraryKind? {
        func tag(_ offset: Int, _ count: Int = 4) -> String? {
            guard bytes.count >= offset + count else { return nil }
            return String(decoding: bytes[offset..<offset + count], as: UTF8.self)
        }
        func starts(_ prefix: [UInt8]) -> Bool { bytes.starts(with: prefix) }
        // ISO base media (MP4, MOV, 3GP, M4A, HEIF): an `ftyp` box names the major and compatible brands.
        if tag(4) == "ftyp" {
            let size = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
            let end = min(max(size, 16), bytes.count)
            var brands = [tag(8)].compactMap { $0 }
            var offset = 16
            while offset + 4 <= end, let brand = tag(offset) {
                brands.append(brand)
                offset += 4
            }
            if let major = brands.first, pictureBrands.contains(major) { return .pictures }
            if let major = brands.first, audioBrands.contains(major) { return .music }
            return .videos
        }
        // QuickTime without `ftyp`: its first atom.
        if let atom = tag(4), ["moov", "mdat", "wide", "free", "skip", "pnot"].contains(atom) { return .videos }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return .videos }  // Matroska, WebM
        if tag(0) == "RIFF", let form = tag(8) {
            switch form {
            case "AVI ": return .videos
            case "WAVE": return .music
            case "WEBP": return .pictures
            default: return nil
            }
        }
        if bytes.count > 376, bytes[0] == 0x47, bytes[188] == 0x47, bytes[376] == 0x47 { return .videos }  // MPEG-TS
        if starts([0x00, 0x00, 0x01, 0xBA]) || starts([0x00, 0x00, 0x01, 0xB3]) { return .videos }  // MPEG-PS, ES
        if tag(0, 3) == "FLV" { return .videos }
        if starts([0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11]) { return .videos }  // ASF (WMV, WMA)
        if starts([0x06, 0x0E, 0x2B, 0x34]) { return .videos }  // MXF
        if tag(0) == "OggS" {
            // Theora's or another video codec's header in the first page makes a video; else audio (Vorbis, Opus).
            let text = String(decoding: bytes, as: UTF8.self)
            return ["theora", "fishead", "dirac", "OVP80"].contains(where: text.contains) ? .videos : .music
        }
        if tag(0, 3) == "ID3" || tag(0) == "fLaC" { return .music }
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 { return .music }  // AAC ADTS
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 { return .music }  // MPEG audio
        if starts([0xFF, 0xD8, 0xFF]) || starts([0x89, 0x50, 0x4E, 0x47]) || tag(0, 4) == "GIF8"
            || starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) || tag(0, 2) == "BM"
        {
            return .pictures
        }
        return nil
    }
}

/// The save job: hash, copy, then under the library's lock check the ledger, place the copy and record it.
enum LibrarySave {
    static let ledgerName = ".ftgst-ledger.json"
    static let lockName = ".ftgst-ledger.lock"

    /// The synchronous job.
    ///
    /// The copy is made *before* the lock is taken, into a temporary file in the library, hashing the bytes as
    /// they are written; under the lock only the ledger is read, the copy renamed and the ledger rewritten. So
    /// the lock is held for milliseconds whatever the file's size, and a process waiting for it never times out
    /// behind a long copy. The source is hashed once before copying too, so content that is already saved is
    /// refused without writing anything; if the two hashes differ the source changed during the save and
    /// nothing is kept.
    static func run(_ request: SaveRequest, isCancelled: @escaping () -> Bool) throws -> SaveResult {
        try checkSource(request.source)
        let library = try request.library()
        try prepare(library)
        let name = URL(fileURLWithPath: request.source).lastPathComponent

        let digest: String
        do {
            digest = try SHA256.hash(file: request.source, isCancelled: isCancelled)
        } catch let error as SystemCallError {
            throw FilmtoneError(.fileNotFound, "cannot read \(request.source): \(error.reason)")
        }
        // Unlocked early answer: the ledger is only ever replaced whole by a rename, so this read sees a
        // complete version. The decisive check is repeated under the lock.
        if let entry = try LibraryLedger.read(in: library).entry(sha256: digest) {
            throw alreadySaved(entry, in: library)
        }

        // Removed again unless placed (StagedFile), whatever ends this function.
        let copy = try copyToStagedFile(
            request.source, in: library, name: name, expectedSHA256: digest,
            isCancelled: isCancelled)

        return try LibraryLock.withLock(
            in: library, timeoutMilliseconds: request.lockTimeoutMilliseconds,
            isCancelled: isCancelled
        ) {
            var ledger = try LibraryLedger.read(in: library)
            if let entry = ledger.entry(sha256: digest) { throw alreadySaved(entry, in: library) }
            let savedName = try place(copy, in: library, preferredName: name)
            let saved = library.appendingPathComponent(savedName)
            var size = stat()
            ledger.entries.append(
                LibraryLedger.Entry(
                    sha256: digest, name: savedName, size: stat(saved.path, &size) == 0 ? Int64(size.st_size) : 0,
                    savedAt: LibraryLedger.timestamp(Date())))
            do {
                try StagedFile.write(ledger.serialized, to: LibraryLedger.url(in: library))
            } catch {
                // Not recorded means not saved: a copy the ledger does not know would break the invariant later.
                unlink(saved.path)
                throw error
            }
            return SaveResult(path: saved.path, sha256: digest)
        }
    }

    // MARK: - Names

    /// The `attempt`-th name tried for `name`: `clip.mp4`, then `clip-2.mp4`, `clip-3.mp4`… The suffix goes
    /// before the last extension (`a.tar-2.gz`); a name without one, or a hidden name with no other dot, gets it
    /// at the end (`README-2`, `.profile-2`). Pure.
    static func candidateName(_ name: String, attempt: Int) -> String {
        guard attempt > 1 else { return name }
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return "\(name[..<dot])-\(attempt)\(name[dot...])"
        }
        return "\(name)-\(attempt)"
    }

    /// Gives the staged copy the first free name, without ever replacing an existing file
    /// (`StagedFile.commit(replacing: false)`: `link(2)`, which fails instead of replacing).
    static func place(_ copy: StagedFile, in library: URL, preferredName: String) throws -> String {
        for attempt in 1...10_000 {
            let candidate = candidateName(preferredName, attempt: attempt)
            if candidate == ledgerName || candidate == lockName || StagedFile.isStaging(candidate) { continue }
            do {
                try copy.commit(as: candidate, replacing: false)
                return candidate
            } catch is StagedFile.TargetExists {
                continue
            }
        }
        throw FilmtoneError(.writeFailed, "no free name for \(preferredName) in \(library.path)")
    }

    // MARK: - Steps

    /// The source must be an existing regular file that can be read (symbolic links followed): a FIFO would block
    /// the copy. The same check, and the same `FILE_NOT_FOUND`, as every command that reads a source.
    static func checkSource(_ path: String) throws {
        try MediaSource.checkReadableFile(path)
    }

    /// Creates the library folder (and parents). `WRITE_FAILED` if it cannot exist as a folder.
    static func prepare(_ library: URL) throws {
        do {
            try FileManager.default.createDirectory(at: library, withIntermediateDirectories: true)
        } catch {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: library.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                throw FilmtoneError(.writeFailed, "library is not a folder: \(library.path)")
            }
            throw FilmtoneError(.writeFailed, "cannot create library folder \(library.path): \(reason(error))")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: library.path, isDirectory: &isDirectory), isDirectory.boolValue
        else { throw FilmtoneError(.writeFailed, "library is not a folder: \(library.path)") }
    }

    /// Streams `source` into a staged file in the library (1 MiB at a time), hashing what it writes, then flushes
    /// it. Removed again on any failure (and later, unless it is placed).
    static func copyToStagedFile(
        _ source: String, in library: URL, name: String, expectedSHA256: String,
        isCancelled: () -> Bool
    ) throws -> StagedFile {
        let input: POSIXFile
        do {
            input = try POSIXFile(path: source, flags: O_RDONLY)
        } catch let error as SystemCallError {
            throw FilmtoneError(.fileNotFound, "cannot read \(source): \(error.reason)")
        }
        let copy = try StagedFile(beside: library.appendingPathComponent(name))
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            if isCancelled() { throw FilmtoneError(.cancelled, "cancelled") }
            let count: Int
            do {
                count = try input.read(into: buffer)
            } catch let error as SystemCallError {
                throw FilmtoneError(.fileNotFound, "cannot read \(source): \(error.reason)")
            }
            if count == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            hasher.update(chunk)
            try copy.write(chunk)
        }
        try copy.sync()
        guard SHA256.hexString(hasher.finalize()) == expectedSHA256 else {
            throw FilmtoneError(.writeFailed, "\(source) changed while it was being saved; nothing was saved")
        }
        return copy
    }

    /// `SAVE_FAILED` naming the copy the ledger holds for this content.
    static func alreadySaved(_ entry: LibraryLedger.Entry, in library: URL) -> FilmtoneError {
        let path = library.appendingPathComponent(entry.name).path
        if FileManager.default.fileExists(atPath: path) {
            return FilmtoneError(.saveFailed, "already saved as \(path)")
        }
        return FilmtoneError(
            .saveFailed,
            "already saved as \(path) (since removed from the library; its entry in "
                + "\(ledgerName) still counts)")
    }

    private static func reason(_ error: Error) -> String {
        (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
    }
}

// MARK: - Lock

/// The library's kernel lock: `flock(LOCK_EX)` on `.ftgst-ledger.lock`. The kernel drops it when the holder's
/// descriptor closes, so a crashed or killed process never leaves the library locked. The lock file itself is
/// never removed (removing it would let two processes lock two different files).
enum LibraryLock {
    /// Runs `body` holding the lock. Waits at most `timeoutMilliseconds` for it (non-blocking attempts every
    /// 10 ms), then `WRITE_FAILED` "library busy".
    static func withLock<T>(
        in library: URL, timeoutMilliseconds: Int64, isCancelled: () -> Bool,
        _ body: () throws -> T
    ) throws -> T {
        let path = library.appendingPathComponent(LibrarySave.lockName).path
        let file: POSIXFile
        do {
            file = try POSIXFile(path: path, flags: O_RDWR | O_CREAT, mode: 0o644)
        } catch let error as SystemCallError {
            throw FilmtoneError(.writeFailed, "cannot open the library lock \(path): \(error.reason)")
        }
        return try file.withExclusiveLock(
            busy: "library", timeoutMilliseconds: timeoutMilliseconds, pollMilliseconds: 10, isCancelled: isCancelled,
            body)
    }
}

// MARK: - Ledger

/// `.ftgst-ledger.json`: which contents the library holds, by SHA-256, and under which name. Rewritten whole
/// (temporary file, `fsync`, rename) under the lock; one entry per line so it reads well:
///
///     {"version":1,"entries":[
///     {"sha256":"ba78…","name":"clip.mp4","size":1234,"savedAt":"2025-01-31T12:00:00Z"}
///     ]}
struct LibraryLedger: Equatable {
    struct Entry: Equatable {
        var sha256: String
        var name: String
        var size: Int64
        var savedAt: String
    }

    var entries: [Entry] = []

    static func url(in library: URL) -> URL { library.appendingPathComponent(LibrarySave.ledgerName) }

    func entry(sha256: String) -> Entry? { entries.first { $0.sha256 == sha256 } }

    /// The library's ledger; empty when there is none yet. A ledger that cannot be read or parsed is
    /// `WRITE_FAILED`: saving without it could break the once-only promise, so it must be repaired or removed.
    static func read(in library: URL) throws -> LibraryLedger {
        let path = url(in: library).path
        guard let data = FileManager.default.contents(atPath: path) else {
            if access(path, F_OK) != 0, errno == ENOENT { return LibraryLedger() }
            throw FilmtoneError(.writeFailed, "cannot read the library ledger \(path)")
        }
        return try parse(data, path: path)
    }

    /// Parses the JSON text; `path` only names the file in errors.
    static func parse(_ data: Data, path: String) throws -> LibraryLedger {
        func damaged(_ why: String) -> FilmtoneError {
            FilmtoneError(.writeFailed, "the library ledger \(path) is damaged (\(why)): repair or remove it")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw damaged("not a JSON object")
        }
        guard let list = object["entries"] as? [[String: Any]] else { throw damaged("no 'entries' list") }
        var ledger = LibraryLedger()
        for item in list {
            guard let sha256 = item["sha256"] as? String, sha256.count == 64,
                sha256.allSatisfy({ $0.isHexDigit && !$0.isUppercase }),
                let name = item["name"] as? String, !name.isEmpty
            else { throw damaged("an entry without a valid 'sha256' and 'name'") }
            let size = (item["size"] as? NSNumber)?.int64Value ?? 0
            ledger.entries.append(
                Entry(
                    sha256: sha256, name: name, size: size,
                    savedAt: item["savedAt"] as? String ?? ""))
        }
        return ledger
    }

    /// The file's bytes.
    var serialized: [UInt8] {
        let lines = entries.map { entry -> String in
            JSONValue.object([
                ("sha256", .string(entry.sha256)), ("name", .string(entry.name)), ("size", .int(entry.size)),
                ("savedAt", .string(entry.savedAt)),
            ]).serialized
        }
        let body = lines.isEmpty ? "" : "\n" + lines.joined(separator: ",\n") + "\n"
        return Array("{\"version\":1,\"entries\":[\(body)]}\n".utf8)
    }

    /// UTC, to the second: `2025-01-31T12:00:00Z`.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
