import FilmtoneCore
import Foundation

/// The mezzanine cache folder on disk: identities from `stat`, manifests read and written, slots looked up,
/// touched and evicted. The decisions themselves are `MezzanineRecipe`'s.
struct MezzanineStore {
    let directory: URL

    /// `$XDG_CACHE_HOME/ftgst/mezzanines`, else `$HOME/.cache/ftgst/mezzanines`.
    static func defaultDirectory(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return xdg + "/ftgst/mezzanines" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.cache/ftgst/mezzanines"
    }

    /// The identity of a source now. A local file must exist (`FILE_NOT_FOUND` otherwise).
    static func identity(of source: MediaSource) throws -> SourceIdentity {
        switch source {
        case .remote(let url):
            return SourceIdentity(location: SourceIdentity.remoteLocation(url.absoluteString))
        case .local(let path):
            try source.checkExists()
            guard let facts = fileFacts(path) else { throw FilmtoneError(.fileNotFound, "cannot stat \(path)") }
            return SourceIdentity(
                location: path, size: facts.size, modifiedNanoseconds: facts.modifiedNanoseconds,
                inode: facts.inode)
        }
    }

    /// Size, mtime in ns and inode of a regular file; nil if there is none.
    static func fileFacts(_ path: String) -> (size: Int64, modifiedNanoseconds: Int64, inode: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (
            Int64(info.st_size), Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            UInt64(info.st_ino)
        )
    }

    func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// The manifest of a slot; nil when absent or unreadable (a garbage manifest is as good as none).
    func manifest(slot: String) -> MezzanineManifest? {
        guard let data = FileManager.default.contents(atPath: url(MezzanineRecipe.manifestName(slot: slot)).path)
        else { return nil }
        return try? JSONDecoder().decode(MezzanineManifest.self, from: data)
    }

    /// The verdict on one slot for `key`, from its manifest and the video file's current facts.
    func verdict(slot: String, key: String) -> (MezzanineVerdict, MezzanineManifest?) {
        let manifest = manifest(slot: slot)
        let facts = MezzanineStore.fileFacts(url(MezzanineRecipe.videoName(slot: slot)).path)
        return (MezzanineRecipe.verdict(manifest: manifest, key: key, file: facts), manifest)
    }

    /// Ready mezzanines of `identity` in any slot (any settings), for a preview to choose from.
    func readySlots(for identity: SourceIdentity) -> [(slot: String, manifest: MezzanineManifest)] {
        let prefix = MezzanineRecipe.locationPrefix(identity.location)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.sorted().compactMap { name in
            guard let slot = MezzanineRecipe.slot(ofFileNamed: name), let manifest = manifest(slot: slot),
                manifest.source.location == identity.location
            else { return nil }
            let key = MezzanineRecipe.key(source: identity, settings: manifest.settings)
            guard case (.ready, _) = verdict(slot: slot, key: key) else { return nil }
            return (slot, manifest)
        }
    }

    /// Marks a slot as just used (its manifest's mtime; see `MezzanineRecipe.evictionPlan`).
    func touch(slot: String) {
        CacheDirectory.touch(url(MezzanineRecipe.manifestName(slot: slot)))
    }

    /// Whether a file in the folder is provably this cache's: a slot's manifest that decodes as one, or the video
    /// that manifest describes (its name and inode). Nothing else is ever counted or deleted by eviction: a user's
    /// `holiday.mov` in the folder is left alone.
    func owns(_ name: String) -> Bool {
        guard let slot = MezzanineRecipe.slot(ofFileNamed: name), MezzanineRecipe.isSlotName(slot),
            let manifest = manifest(slot: slot)
        else { return false }
        if name == MezzanineRecipe.manifestName(slot: slot) { return true }
        return name == MezzanineRecipe.videoName(slot: slot) && manifest.file.name == name
            && MezzanineStore.fileFacts(url(name).path)?.inode == manifest.file.inode
    }

    /// Removes a slot's files that are provably its own (video first: a manifest without its video is stale,
    /// never used).
    func remove(slot: String) {
        let video = MezzanineRecipe.videoName(slot: slot)
        let manifest = MezzanineRecipe.manifestName(slot: slot)
        let (ownsVideo, ownsManifest) = (owns(video), owns(manifest))
        if ownsVideo { unlink(url(video).path) }
        if ownsManifest { unlink(url(manifest).path) }
    }

    /// Evicts least recently used slots until this cache's files in the folder add up to at most `capBytes`, never
    /// `keep` and never a slot used at or after `startedAt` (another run's). Call it holding the folder's lock
    /// (`CacheDirectory.withLock`).
    func evict(capBytes: Int64, keep: String, startedAt: Date?) {
        let files = CacheDirectory.entries(in: directory) { owns($0.lastPathComponent) }
        for slot in MezzanineRecipe.evictionPlan(files: files, capBytes: capBytes, keep: keep, startedAt: startedAt) {
            remove(slot: slot)
        }
    }
}
