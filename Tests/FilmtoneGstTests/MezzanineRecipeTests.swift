import XCTest

@testable import FilmtoneGst
@testable import GstKit

/// The pure decisions of mezzanines: key, slots, manifest verdicts, choice, eviction. No media.
final class MezzanineRecipeTests: XCTestCase {
    private let source = SourceIdentity(
        location: "/media/a.mp4", size: 1000, modifiedNanoseconds: 1_700_000_000_123,
        inode: 42)
    private let settings = MezzanineSettings(maxWidth: 1280, maxHeight: 1280)

    private func manifest(key: String? = nil, width: Int = 1280, height: Int = 720, display: (Int, Int) = (1920, 1080))
        -> MezzanineManifest
    {
        MezzanineManifest(
            formatVersion: MezzanineSettings.formatVersion,
            key: key ?? MezzanineRecipe.key(source: source, settings: settings),
            source: source, settings: settings, width: width, height: height, sourceDisplayWidth: display.0,
            sourceDisplayHeight: display.1, frames: 30, durationMilliseconds: 1000,
            file: MezzanineFileFacts(name: "x.mov", size: 500, modifiedNanoseconds: 7, inode: 9, sha256: "ab"),
            buildMilliseconds: 10)
    }

    func testKeyChangesWithEveryIdentityFieldAndTheSettings() {
        let key = MezzanineRecipe.key(source: source, settings: settings)
        XCTAssertEqual(key.count, 64)
        XCTAssertEqual(key, MezzanineRecipe.key(source: source, settings: settings), "deterministic")
        var changed: [SourceIdentity] = []
        for edit in [
            { (s: inout SourceIdentity) in s.size = 1001 }, { $0.modifiedNanoseconds! += 1 },
            { $0.inode = 43 }, { $0.location = "/media/b.mp4" },
        ] {
            var copy = source
            edit(&copy)
            changed.append(copy)
        }
        let keys = Set(changed.map { MezzanineRecipe.key(source: $0, settings: settings) } + [key])
        XCTAssertEqual(keys.count, 5)
        XCTAssertNotEqual(
            key,
            MezzanineRecipe.key(
                source: source,
                settings: MezzanineSettings(
                    maxWidth: 640,
                    maxHeight: 1280)))
    }

    func testSlotIsPerLocationAndSettingsNotPerVersionOfTheSource() {
        let slot = MezzanineRecipe.slot(location: source.location, settings: settings)
        XCTAssertTrue(slot.hasPrefix(MezzanineRecipe.locationPrefix(source.location)))
        XCTAssertEqual(slot.count, 33)
        XCTAssertNotEqual(slot, MezzanineRecipe.slot(location: "/media/b.mp4", settings: settings))
        XCTAssertNotEqual(
            slot,
            MezzanineRecipe.slot(
                location: source.location,
                settings: MezzanineSettings(maxWidth: 320, maxHeight: 320)))
        XCTAssertEqual(MezzanineRecipe.slot(ofFileNamed: slot + ".mov"), slot)
        XCTAssertEqual(MezzanineRecipe.slot(ofFileNamed: slot + ".json"), slot)
        XCTAssertNil(MezzanineRecipe.slot(ofFileNamed: ".\(slot).mov.ftgst-12-34.part"), "temporaries are not entries")
        XCTAssertNil(MezzanineRecipe.slot(ofFileNamed: "notes.txt"))
    }

    func testVerdicts() {
        let key = MezzanineRecipe.key(source: source, settings: settings)
        let good = manifest()
        let facts = (size: Int64(500), modifiedNanoseconds: Int64(7), inode: UInt64(9))
        XCTAssertEqual(MezzanineRecipe.verdict(manifest: good, key: key, file: facts), .ready)
        XCTAssertEqual(MezzanineRecipe.verdict(manifest: nil, key: key, file: nil), .missing)
        let cases: [(MezzanineManifest?, (Int64, Int64, UInt64)?)] = [
            (nil, facts),  // a video without manifest
            (good, nil),  // a manifest without video
            (manifest(key: "other"), facts),  // the source changed
            (good, (499, 7, 9)),  // truncated
            (good, (500, 8, 9)),  // rewritten in place
            (good, (500, 7, 10)),  // replaced
        ]
        for (index, (candidate, file)) in cases.enumerated() {
            guard
                case .stale = MezzanineRecipe.verdict(
                    manifest: candidate, key: key,
                    file: file.map { (size: $0.0, modifiedNanoseconds: $0.1, inode: $0.2) })
            else { return XCTFail("case \(index) must be stale") }
        }
        var old = good
        old.formatVersion = 0
        XCTAssertNotEqual(MezzanineRecipe.verdict(manifest: old, key: key, file: facts), .ready)
    }

    func testPreviewSizeAndChoice() throws {
        let big = manifest()  // 1280x720 from 1920x1080
        let small = manifest(width: 320, height: 180)
        XCTAssertEqual(
            MezzanineRecipe.previewSize(from: big, maxWidth: 1280, maxHeight: 1280).map { [$0.0, $0.1] },
            [1280, 720])
        XCTAssertNil(MezzanineRecipe.previewSize(from: big, maxWidth: 1920, maxHeight: 1920), "would upscale")
        XCTAssertEqual(
            MezzanineRecipe.previewSize(from: small, maxWidth: 200, maxHeight: 200).map { [$0.0, $0.1] },
            [200, 113], "the size the source would give, not the mezzanine's own aspect rounding")
        let chosen = try XCTUnwrap(MezzanineRecipe.choose([("b", big), ("s", small)], maxWidth: 320, maxHeight: 320))
        XCTAssertEqual(chosen.slot, "s", "the smallest that serves")
        XCTAssertEqual(MezzanineRecipe.choose([("b", big), ("s", small)], maxWidth: 640, maxHeight: 640)?.slot, "b")
        XCTAssertNil(MezzanineRecipe.choose([("s", small)], maxWidth: 640, maxHeight: 640))
    }

    func testEvictionTakesWholeSlotsLeastRecentlyUsedByManifest() {
        func file(_ name: String, _ size: Int64, _ time: TimeInterval) -> CacheEntry {
            CacheEntry(name: name, size: size, modified: Date(timeIntervalSince1970: time))
        }
        let files = [
            // a: video old, manifest touched recently (used) → newest.
            file("a.mov", 100, 10), file("a.json", 1, 500),
            file("b.mov", 100, 20), file("b.json", 1, 30),
            file("c.mov", 100, 40), file("c.json", 1, 40),
            file(".c.mov.ftgst-1-2.part", 100, 1), file("other.txt", 100, 1),
        ]
        XCTAssertEqual(MezzanineRecipe.evictionPlan(files: files, capBytes: 250, keep: "c"), ["b"])
        XCTAssertEqual(MezzanineRecipe.evictionPlan(files: files, capBytes: 50, keep: "c"), ["b", "a"])
        XCTAssertEqual(MezzanineRecipe.evictionPlan(files: files, capBytes: 1000, keep: "c"), [])
    }

    func testLaunchDescriptionBuilds() throws {
        let pipeline = try Pipeline(launch: MezzanineRecipe.launchDescription())
        for name in ["src", "flip", "size", "enc", "mux", "out"] { XCTAssertNoThrow(try pipeline.element(named: name)) }
    }

    func testAMezzanineFrameMustAnswerTheRequestedTime() throws {
        // 30 frames in 1000 ms: each lasts 33.3 ms. A damaged mezzanine can hand over a later frame than asked.
        let duration = try XCTUnwrap(Previews.frameDuration(manifest()))
        XCTAssertEqual(duration.nanoseconds, 33_333_333)
        let frame = ClockTime.milliseconds(500)
        func accepts(_ target: Int64, tolerance: Int64 = 0) -> Bool {
            FrameRecipe.accepts(
                frame: frame, duration: duration, target: .milliseconds(target), tolerance: .milliseconds(tolerance))
        }
        XCTAssertTrue(accepts(500))
        XCTAssertTrue(accepts(533), "still on screen")
        XCTAssertFalse(accepts(300), "a later frame than the one on screen")
        XCTAssertFalse(accepts(534))
        XCTAssertTrue(accepts(300, tolerance: 200))
        var empty = manifest()
        empty.frames = 0
        XCTAssertNil(Previews.frameDuration(empty))
    }
}
