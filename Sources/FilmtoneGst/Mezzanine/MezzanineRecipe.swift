import FilmtoneCore
import FilmtoneElements
import Foundation
import GstKit

/// Who a source is, as far as the mezzanine cache can tell without decoding it: for a local file its absolute
/// path, size, modification time (ns) and inode (a rewrite, a `touch` or a replacement by rename all change one
/// of them); for a remote source its URL only (no request is made to learn an ETag).
struct SourceIdentity: Hashable, Codable, Sendable {
    var location: String
    var size: Int64?
    var modifiedNanoseconds: Int64?
    var inode: UInt64?
}

extension SourceIdentity {
    /// A remote source's location as the files an identity goes into may keep it (a mezzanine's manifest): its URL
    /// with the password and query values hidden (`MediaSource.redacted`) and, when that hid anything, the SHA-256
    /// of the whole URL after `#sha256=`, so that two tokens are still two sources. No secret is written to disk.
    static func remoteLocation(_ url: String) -> String {
        let shown = MediaSource.redacted(url)
        return shown == url ? url : shown + "#sha256=" + SHA256.hex(of: Array(url.utf8))
    }

    /// The identity as the lines a request key hashes (thumbnails' stamps, batch's storyboard records and
    /// preview stamps): `location …`, `size …`, `mtime-ns …`, `inode …`, `-` for what a remote source lacks.
    /// `prefix` names whose identity it is when a key holds several (a LUT file's).
    func keyLines(prefix: String = "") -> [String] {
        [
            "\(prefix)location \(location)", "\(prefix)size \(size.map(String.init) ?? "-")",
            "\(prefix)mtime-ns \(modifiedNanoseconds.map(String.init) ?? "-")",
            "\(prefix)inode \(inode.map(String.init) ?? "-")",
        ]
    }
}

/// The settings a mezzanine is built with. Everything that changes its bytes is in `description`, which goes
/// into the cache key, so a change of encoder settings (or `formatVersion`) never reuses an old file.
struct MezzanineSettings: Equatable, Codable {
    /// Bump when the recipe's output changes (codec, quality, chroma, container, timestamps). 2: PQ and HLG
    /// sources are tone-mapped to SDR (a version-1 mezzanine of one holds its codes as they are).
    static let formatVersion = 2
    /// jpegenc quality: 90 keeps the mezzanine within ~1 dB PSNR of decoding the source directly at preview size.
    static let jpegQuality = 90

    var maxWidth: Int
    var maxHeight: Int

    var description: String {
        "v\(MezzanineSettings.formatVersion) mjpeg Y444 q\(MezzanineSettings.jpegQuality) quicktime "
            + "box \(maxWidth)x\(maxHeight)"
    }
}

/// Frame-accurate facts about one built mezzanine file, checked before each use.
struct MezzanineFileFacts: Equatable, Codable {
    var name: String
    var size: Int64
    var modifiedNanoseconds: Int64
    var inode: UInt64
    /// Hex SHA-256 of the whole file: verified by `Mezzanines.prepare` on a cache hit (a full read); previews only
    /// compare size, mtime and inode, which any write, truncation or replacement changes.
    var sha256: String
}

/// The manifest written beside a mezzanine (`<slot>.json`): what it was built from and what it holds.
struct MezzanineManifest: Equatable, Codable {
    var formatVersion: Int
    var key: String
    var source: SourceIdentity
    var settings: MezzanineSettings
    /// The mezzanine's picture (upright, square pixels).
    var width: Int
    var height: Int
    /// The source's upright display size, from which a preview's output size is computed as if it had decoded
    /// the source itself.
    var sourceDisplayWidth: Int
    var sourceDisplayHeight: Int
    var frames: Int
    var durationMilliseconds: Int64
    var file: MezzanineFileFacts
    var buildMilliseconds: Int64
}

/// What is known of a cache slot before deciding to use it.
enum MezzanineVerdict: Equatable {
    case ready
    case stale(String)
    case missing
}

/// The pure part of mezzanines: key, file names, launch line, validation, choice. No file system, no GStreamer.
enum MezzanineRecipe {
    /// Decode, turn upright, convert to RGB and scale with lanczos exactly as a preview does (so a preview from the
    /// mezzanine sees the same picture, once JPEG-coded), then code every frame as a 4:4:4 JPEG in full range
    /// (`1:4:0:0`: BT.601 full range, what JFIF means and what jpegdec assumes; left at videoconvert's default
    /// limited range, every preview from the mezzanine had its contrast stretched: 23.8 dB instead of 41.3 dB
    /// PSNR against the direct preview on the SMPTE fixture; 4:2:0 gives 40.9 dB, 20 % smaller) — every frame is
    /// a keyframe, so an exact seek decodes one frame — and mux into QuickTime, whose sample table gives
    /// sample-exact seeks and keeps each frame's timestamp and duration. The `size` capsfilter's width and height
    /// are set from the upright caps (see `MezzanineBuilder`); `uri` and `location` are set as properties.
    /// PQ and HLG sources are tone-mapped to SDR through the same slot as a preview's (`rgb`, `tonemap`:
    /// `FrameRecipe.launchDescription`), so a preview from the mezzanine shows what one from the source shows with
    /// its default `--tone-map on` (a preview with `--tone-map off` does not read mezzanines).
    static func launchDescription() -> String {
        """
        uridecodebin name=src caps=video/x-raw ! videoconvert ! videoflip name=flip video-direction=auto \
        ! videoconvert ! capsfilter name=rgb caps=video/x-raw,format=RGB ! videoscale method=lanczos \
        ! capsfilter name=size caps=video/x-raw,format=RGB,pixel-aspect-ratio=1/1 \
        ! \(LUTFilterElement.factoryName) name=tonemap ! videoconvert ! video/x-raw,format=RGB \
        ! videoconvert ! video/x-raw,format=Y444,colorimetry=1:4:0:0 \
        ! jpegenc name=enc quality=\(MezzanineSettings.jpegQuality) \
        ! qtmux name=mux ! filesink name=out sync=false
        """
    }

    /// The content key: SHA-256 of the source identity and the settings, in a fixed text form.
    static func key(source: SourceIdentity, settings: MezzanineSettings) -> String {
        let text = [
            "ftgst-mezzanine", settings.description, "location \(source.location)",
            "size \(source.size.map(String.init) ?? "-")",
            "mtime-ns \(source.modifiedNanoseconds.map(String.init) ?? "-")",
            "inode \(source.inode.map(String.init) ?? "-")",
        ].joined(separator: "\n")
        return SHA256.hex(of: Array(text.utf8))
    }

    /// The cache slot of a source location and settings: `<16 hex of the location>-<16 hex of the settings>`.
    /// A rebuilt mezzanine (the source changed) replaces the stale one in the same slot instead of leaving it
    /// behind, and all mezzanines of one source share a prefix, which is how a preview finds them.
    static func slot(location: String, settings: MezzanineSettings) -> String {
        locationPrefix(location) + String(SHA256.hex(of: Array(settings.description.utf8)).prefix(16))
    }

    /// `<16 hex of the location>-`: the start of every slot name of that source.
    static func locationPrefix(_ location: String) -> String {
        String(SHA256.hex(of: Array(location.utf8)).prefix(16)) + "-"
    }

    /// Whether `name` has the form `slot(location:settings:)` gives: 16 hex digits, `-`, 16 hex digits.
    static func isSlotName(_ name: String) -> Bool {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 2
            && parts.allSatisfy { $0.count == 16 && $0.allSatisfy { "0123456789abcdef".contains($0) } }
    }

    static func videoName(slot: String) -> String { slot + ".mov" }
    static func manifestName(slot: String) -> String { slot + ".json" }

    /// The slot a cache file belongs to (`abc-def.mov` → `abc-def`); nil for temporaries and foreign files.
    static func slot(ofFileNamed name: String) -> String? {
        guard !StagedFile.isStaging(name) else { return nil }
        for suffix in [".mov", ".json"] where name.hasSuffix(suffix) {
            return String(name.dropLast(suffix.count))
        }
        return nil
    }

    /// Whether `manifest` describes a usable mezzanine of `source` for `key`, given what `stat` says of the file
    /// now (nil: no such file). A different format version, key (the source changed), or file facts (truncated,
    /// rewritten, replaced) make it stale.
    static func verdict(
        manifest: MezzanineManifest?, key: String,
        file: (
            size: Int64, modifiedNanoseconds: Int64,
            inode: UInt64
        )?
    ) -> MezzanineVerdict {
        guard let manifest else { return file == nil ? .missing : .stale("no manifest beside the mezzanine") }
        guard manifest.formatVersion == MezzanineSettings.formatVersion else {
            return .stale("format version \(manifest.formatVersion), current \(MezzanineSettings.formatVersion)")
        }
        guard manifest.key == key else { return .stale("the source changed since it was built") }
        guard let file else { return .stale("the mezzanine file is missing") }
        guard file.size == manifest.file.size else {
            return .stale("the mezzanine is \(file.size) bytes, the manifest says \(manifest.file.size)")
        }
        guard file.modifiedNanoseconds == manifest.file.modifiedNanoseconds, file.inode == manifest.file.inode else {
            return .stale("the mezzanine file was modified or replaced after it was built")
        }
        guard manifest.frames > 0, manifest.width > 0, manifest.height > 0 else { return .stale("empty mezzanine") }
        return .ready
    }

    /// Whether a mezzanine can answer a preview fitted into `maxWidth`×`maxHeight` without upscaling: the size the
    /// preview would have from the source must fit inside the mezzanine's picture. Returns that size.
    static func previewSize(from manifest: MezzanineManifest, maxWidth: Int, maxHeight: Int)
        -> (width: Int, height: Int)?
    {
        let size = FrameRecipe.outputSize(
            width: manifest.sourceDisplayWidth, height: manifest.sourceDisplayHeight,
            pixelAspect: Fraction(1, 1), maxWidth: maxWidth, maxHeight: maxHeight)
        guard size.width <= manifest.width, size.height <= manifest.height else { return nil }
        return size
    }

    /// Among ready mezzanines of a source, the one a preview should read: the smallest that serves its size
    /// (fewest pixels to decode), the slot name breaking ties.
    static func choose(_ candidates: [(slot: String, manifest: MezzanineManifest)], maxWidth: Int, maxHeight: Int)
        -> (slot: String, manifest: MezzanineManifest, size: (width: Int, height: Int))?
    {
        candidates.compactMap { candidate in
            previewSize(from: candidate.manifest, maxWidth: maxWidth, maxHeight: maxHeight).map {
                (candidate.slot, candidate.manifest, $0)
            }
        }.min { ($0.manifest.width * $0.manifest.height, $0.slot) < ($1.manifest.width * $1.manifest.height, $1.slot) }
    }

    /// Eviction of whole slots (video + manifest together), least recently used first. A slot's last use is its
    /// manifest's modification time — the manifest, not the video, is touched on use, because the video's mtime is
    /// one of the facts that prove it intact. Reuses `CacheDirectory.evictionPlan` on slots.
    static func evictionPlan(files: [CacheEntry], capBytes: Int64, keep: String, startedAt: Date? = nil) -> [String] {
        var slots: [String: CacheEntry] = [:]
        for file in files {
            guard let slot = slot(ofFileNamed: file.name) else { continue }
            var entry = slots[slot] ?? CacheEntry(name: slot, size: 0, modified: file.modified)
            entry.size += file.size
            if file.name.hasSuffix(".json") || slots[slot] == nil { entry.modified = file.modified }
            slots[slot] = entry
        }
        return CacheDirectory.evictionPlan(
            entries: slots.values.sorted { $0.name < $1.name }, capBytes: capBytes,
            keep: keep, startedAt: startedAt)
    }
}
