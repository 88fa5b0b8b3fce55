import Dispatch
import FilmtoneGst
import Foundation
import Synchronization

// ftgst-bench: times FilmtoneGst's hot loops through the public API, for bench/lut.sh (see bench/README.md).
// Prints one JSON object per command on stdout; errors go to stderr with exit status 2 (usage) or 1 (failure).

let help = """
    usage: ftgst-bench COMMAND [options]
      write-cube OUT [--size N]          write the synthetic film look as an N³ .cube (default 33)
      lut --cube FILE --frame RGB24 --width W --height H [--frames N] [--interpolation NAME]
          [--creative FILE --intensity T] [--out RGB24] [--threads 1] [--builds N]
                                         time LUTKernel.apply on the frame as RGB and RGBx: CPU and wall
                                         per frame (median of N, default 60, after 3 warm-ups), table
                                         build time, peak RSS; --out writes the RGB result;
                                         --threads 1 applies in bands small enough to stay on one thread;
                                         --builds N builds the kernel N times (first and median reported)
      lutyuv --cube FILE --frame RGB24 --width W --height H [--frames N] [--interpolation NAME]
          [--creative FILE --intensity T] [--colorimetry bt601|bt709|bt2020] [--builds N]
                                         the frame converted to I420 (BT.709 limited by default, chroma the
                                         2×2 mean), then YUVKernel.apply timed on it: CPU and wall per frame
                                         (median of N, default 60, after 3 warm-ups), and the build of the
                                         YUV table (RGB table included) and of the RGB table alone
      lut-check --cube FILE [--creative FILE --intensity T] [--interpolation NAME|all]
                                         every one of the 2²⁴ 8-bit inputs against the Double reference
      frame16 IN.rgb24 OUT.rgba64 --width W --height H
                                         widens an 8-bit frame to RGBA64_LE: v·257 plus a fixed dither of
                                         ±128 (so the low bits vary as a 10/16-bit source's do), alpha 65535
      lut16 --cube FILE --frame RGBA64 --width W --height H [--frames N] [--interpolation NAME]
          [--creative FILE --intensity T] [--out RGBA64] [--threads 1]
                                         time LUTKernel16.apply on an RGBA64_LE frame: CPU and wall per frame
                                         (median of N, default 20, after 2 warm-ups), build time
      lutyuv10 --cube FILE --frame I420_10LE --width W --height H [--frames N] [--interpolation NAME]
          [--creative FILE --intensity T] [--colorimetry bt601|bt709|bt2020]
                                         time YUV10Kernel.apply (Y'CbCr → 16-bit R'G'B' → LUTKernel16 → back,
                                         per 2×2 block) on a raw I420_10LE frame (ffmpeg -pix_fmt yuv420p10le):
                                         CPU and wall per frame (median of N, default 20, after 2 warm-ups)
      lut16-check --cube FILE [--creative FILE --intensity T] [--interpolation NAME|all] [--random N]
                                         LUTKernel16 against the Double reference: N random 16-bit inputs
                                         (default 2²²), every 10-bit input on a lattice of step 8, and the
                                         10-bit ramps; worst and distribution of |difference| in 16-bit codes
    """

struct UsageError: Error, CustomStringConvertible { var description: String }

// MARK: - Arguments

struct Options {
    var positional: [String] = []
    var named: [String: String] = [:]

    init(_ words: ArraySlice<String>) throws {
        var words = words
        while let word = words.popFirst() {
            if word.hasPrefix("--") {
                guard let value = words.popFirst() else { throw UsageError(description: "\(word) needs a value") }
                named[String(word.dropFirst(2))] = value
            } else {
                positional.append(word)
            }
        }
    }

    func string(_ name: String) throws -> String {
        guard let value = named[name] else { throw UsageError(description: "--\(name) is required") }
        return value
    }

    func int(_ name: String, default fallback: Int? = nil) throws -> Int {
        guard let text = named[name] else {
            if let fallback { return fallback }
            throw UsageError(description: "--\(name) is required")
        }
        guard let value = Int(text), value > 0 else {
            throw UsageError(description: "--\(name) must be a positive integer, got '\(text)'")
        }
        return value
    }

    func look(interpolation: Interpolation) throws -> Look {
        let input = try CubeLUT.load(path: string("cube"))
        let creative = try named["creative"].map { try CubeLUT.load(path: $0) }
        let intensity =
            try named["intensity"].map { text -> Double in
                guard let value = Double(text) else { throw UsageError(description: "--intensity: not a number") }
                return value
            } ?? 1
        return try Look(inputLUT: input, creativeLUT: creative, intensity: intensity, interpolation: interpolation)
    }

    func interpolations() throws -> [Interpolation] {
        let name = named["interpolation"] ?? Interpolation.default.rawValue
        if name == "all" { return Interpolation.allCases }
        guard let method = Interpolation(rawValue: name) else {
            throw UsageError(description: "--interpolation: one of tetrahedral, trilinear, nearest, all")
        }
        return [method]
    }
}

// MARK: - Clocks

/// CPU time of the whole process (every thread), in milliseconds: what the target is stated in.
func processCPUms() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e3 + Double(time.tv_nsec) / 1e6
}

func wallms() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) * 1e3 + Double(time.tv_nsec) / 1e6
}

/// Peak resident set so far, MiB (`ru_maxrss` is in KiB on Linux).
func peakRSSMiB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

/// Anonymous memory backed by transparent huge pages, MiB (the kernel's table asks for them).
func hugePagesMiB() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/smaps_rollup", encoding: .utf8) else { return -1 }
    for line in text.split(separator: "\n") where line.hasPrefix("AnonHugePages:") {
        return (Double(line.split(separator: " ").dropFirst().first ?? "") ?? -1024) / 1024
    }
    return -1
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

func rounded(_ value: Double, _ places: Int = 3) -> Double {
    let scale = pow(10, Double(places))
    return (value * scale).rounded() / scale
}

func printJSON(_ object: [String: Any]) throws {
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
}

// MARK: - write-cube

/// The synthetic film look the benchmark uses: saturation, split toning (teal shadows, warm highlights), a filmic
/// S-curve and a little channel crosstalk. Not separable per channel (saturation and toning mix the channels), so
/// a 3D table is needed and the tetrahedra really differ from trilinear.
func filmLook(_ rgb: SIMD3<Double>) -> SIMD3<Double> {
    let luma = (rgb * SIMD3(0.2126, 0.7152, 0.0722)).sum()
    var value = luma + (rgb - luma) * 1.25
    value += (1 - luma) * (1 - luma) * SIMD3(-0.04, 0.02, 0.05) + luma * luma * SIMD3(0.05, 0.01, -0.05)
    value = value.clamped(lowerBound: .zero, upperBound: .one)
    value = value * value * (3 - 2 * value) * 0.6 + value * 0.4
    value = SIMD3(
        (value * SIMD3(0.92, 0.05, 0.03)).sum(), (value * SIMD3(0.03, 0.94, 0.03)).sum(),
        (value * SIMD3(0.02, 0.06, 0.92)).sum())
    return value.clamped(lowerBound: .zero, upperBound: .one)
}

func writeCube(_ options: Options) throws {
    guard let path = options.positional.first else { throw UsageError(description: "write-cube needs OUT") }
    let size = try options.int("size", default: 33)
    guard size >= 2 && size <= 256 else { throw UsageError(description: "--size must be 2…256") }
    var text = "TITLE \"ftgst-bench film look\"\nLUT_3D_SIZE \(size)\nDOMAIN_MIN 0 0 0\nDOMAIN_MAX 1 1 1\n"
    text.reserveCapacity(size * size * size * 30)
    for blue in 0..<size {
        for green in 0..<size {
            for red in 0..<size {
                let node = filmLook(SIMD3(Double(red), Double(green), Double(blue)) / Double(size - 1))
                text += String(format: "%.6f %.6f %.6f\n", node.x, node.y, node.z)
            }
        }
    }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    try printJSON(["cube": path, "size": size])
}

// MARK: - lut

func benchLUT(_ options: Options) throws {
    let (width, height) = (try options.int("width"), try options.int("height"))
    let frames = try options.int("frames", default: 60)
    let warmUps = 3
    guard let interpolation = try options.interpolations().first, options.named["interpolation"] != "all" else {
        throw UsageError(description: "lut takes one --interpolation")
    }
    let look = try options.look(interpolation: interpolation)
    let rgb = try [UInt8](Data(contentsOf: URL(fileURLWithPath: options.string("frame"))))
    guard rgb.count == width * height * 3 else {
        throw UsageError(description: "frame is \(rgb.count) bytes, expected \(width)×\(height)×3")
    }
    var rgbx = [UInt8](repeating: 0xFF, count: width * height * 4)
    for pixel in 0..<width * height {
        for channel in 0..<3 { rgbx[pixel * 4 + channel] = rgb[pixel * 3 + channel] }
    }
    let rssBeforeKernel = peakRSSMiB()
    let singleThread = options.named["threads"] == "1"
    let bandRows = max(1, (LUTKernel.parallelPixelThreshold - 1) / width)

    // The first build is the one an element pays when it starts (fresh pages from the kernel); later builds
    // (--builds N) reuse freed memory and show the evaluation alone.
    var buildWall: [Double] = []
    var buildCPU: [Double] = []
    var built: LUTKernel? = nil
    for _ in 0..<(try options.int("builds", default: 1)) {
        built = nil
        let start = (wallms(), processCPUms())
        built = try LUTKernel(look: look)
        buildWall.append(wallms() - start.0)
        buildCPU.append(processCPUms() - start.1)
    }
    let kernel = built!
    let rssAfterBuild = peakRSSMiB()

    func time(_ pristine: [UInt8], layout: PackedRGBLayout) -> (cpu: [Double], wall: [Double], last: [UInt8]) {
        var work = pristine
        var cpu: [Double] = []
        var wall: [Double] = []
        for run in 0..<warmUps + frames {
            // Each timed frame starts from the original pixels (apply works in place); the copy is not timed.
            work.withUnsafeMutableBufferPointer { work in
                pristine.withUnsafeBufferPointer { work.baseAddress!.update(from: $0.baseAddress!, count: $0.count) }
                let stride = width * layout.bytesPerPixel
                let start = (wallms(), processCPUms())
                if singleThread {
                    // Bands under LUTKernel's threshold for going parallel: the same work on the calling thread.
                    for top in Swift.stride(from: 0, to: height, by: bandRows) {
                        kernel.apply(
                            to: work.baseAddress! + top * stride, width: width, height: min(bandRows, height - top),
                            stride: stride, layout: layout)
                    }
                } else {
                    kernel.apply(to: work.baseAddress!, width: width, height: height, stride: stride, layout: layout)
                }
                let end = (wallms(), processCPUms())
                if run >= warmUps {
                    wall.append(end.0 - start.0)
                    cpu.append(end.1 - start.1)
                }
            }
        }
        return (cpu, wall, work)
    }

    var results: [String: Any] = [:]
    var rgbOut: [UInt8] = []
    for (name, layout, pristine) in [("rgb", PackedRGBLayout.rgb, rgb), ("rgbx", .rgbx, rgbx)] {
        let (cpu, wall, last) = time(pristine, layout: layout)
        if name == "rgb" { rgbOut = last }
        results[name] = [
            "cpu_ms": ["median": rounded(median(cpu)), "min": rounded(cpu.min()!), "max": rounded(cpu.max()!)],
            "wall_ms": ["median": rounded(median(wall)), "min": rounded(wall.min()!), "max": rounded(wall.max()!)],
            "ns_per_pixel_cpu": rounded(median(cpu) * 1e6 / Double(width * height), 2),
        ]
    }
    if let out = options.named["out"] { try Data(rgbOut).write(to: URL(fileURLWithPath: out)) }
    try printJSON([
        "width": width, "height": height, "frames": frames, "warm_ups": warmUps,
        "interpolation": interpolation.rawValue, "strategy": kernel.strategy.rawValue,
        "threads": singleThread ? 1 : ProcessInfo.processInfo.activeProcessorCount,
        "build": [
            "first": ["wall_ms": rounded(buildWall[0]), "cpu_ms": rounded(buildCPU[0])],
            "median": ["wall_ms": rounded(median(buildWall)), "cpu_ms": rounded(median(buildCPU))],
            "count": buildWall.count,
        ],
        "table_mib": rounded(Double(kernel.tableByteCount) / 1_048_576),
        "huge_pages_mib": rounded(hugePagesMiB(), 1),
        "peak_rss_mib": [
            "before_kernel": rounded(rssBeforeKernel, 1), "after_build": rounded(rssAfterBuild, 1),
            "end": rounded(peakRSSMiB(), 1),
        ],
        "layouts": results,
    ])
}

// MARK: - lutyuv

func benchLUTYUV(_ options: Options) throws {
    let (width, height) = (try options.int("width"), try options.int("height"))
    let frames = try options.int("frames", default: 60)
    let warmUps = 3
    guard let interpolation = try options.interpolations().first, options.named["interpolation"] != "all" else {
        throw UsageError(description: "lutyuv takes one --interpolation")
    }
    let colorimetry: YUVColorimetry
    switch options.named["colorimetry"] ?? "bt709" {
    case "bt601": colorimetry = .bt601
    case "bt709": colorimetry = .bt709
    case "bt2020": colorimetry = .bt2020
    default: throw UsageError(description: "--colorimetry: one of bt601, bt709, bt2020")
    }
    let look = try options.look(interpolation: interpolation)
    let rgb = try [UInt8](Data(contentsOf: URL(fileURLWithPath: options.string("frame"))))
    guard rgb.count == width * height * 3 else {
        throw UsageError(description: "frame is \(rgb.count) bytes, expected \(width)×\(height)×3")
    }
    // The frame as I420: each pixel's Y', each 2×2 block's Cb and Cr the mean of its pixels'.
    let (chromaWidth, chromaHeight) = ((width + 1) / 2, (height + 1) / 2)
    var luma = [UInt8](repeating: 0, count: width * height)
    var sums = [SIMD3<Double>](repeating: .zero, count: chromaWidth * chromaHeight)
    var counts = [Double](repeating: 0, count: chromaWidth * chromaHeight)
    func code(_ value: Double) -> UInt8 { UInt8(min(255, max(0, value.rounded()))) }
    for y in 0..<height {
        for x in 0..<width {
            let at = (y * width + x) * 3
            let yuv = colorimetry.yuv(rgb: SIMD3(Double(rgb[at]), Double(rgb[at + 1]), Double(rgb[at + 2])))
            luma[y * width + x] = code(yuv.x)
            sums[y / 2 * chromaWidth + x / 2] += yuv
            counts[y / 2 * chromaWidth + x / 2] += 1
        }
    }
    let pristine =
        luma + sums.indices.map { code(sums[$0].y / counts[$0]) }
        + sums.indices.map { code(sums[$0].z / counts[$0]) }

    // The RGB table alone (what the BGRx path builds), then the YUV table (which builds its own RGB table first).
    var rgbBuild: (wall: [Double], cpu: [Double]) = ([], [])
    var yuvBuild: (wall: [Double], cpu: [Double]) = ([], [])
    var built: YUVKernel? = nil
    for _ in 0..<(try options.int("builds", default: 1)) {
        var start = (wallms(), processCPUms())
        _ = try LUTKernel(look: look)
        rgbBuild.wall.append(wallms() - start.0)
        rgbBuild.cpu.append(processCPUms() - start.1)
        built = nil
        start = (wallms(), processCPUms())
        built = try YUVKernel(look: look, colorimetry: colorimetry)
        yuvBuild.wall.append(wallms() - start.0)
        yuvBuild.cpu.append(processCPUms() - start.1)
    }
    let kernel = built!
    var work = pristine
    var cpu: [Double] = []
    var wall: [Double] = []
    for run in 0..<warmUps + frames {
        work.withUnsafeMutableBufferPointer { work in
            // Each timed frame starts from the original samples (apply works in place); the copy is not timed.
            pristine.withUnsafeBufferPointer { work.baseAddress!.update(from: $0.baseAddress!, count: $0.count) }
            let base = work.baseAddress!
            let cb = base + width * height
            let planes = YUV420Planes.i420(
                luma: base, lumaStride: width, cb: cb, cr: cb + chromaWidth * chromaHeight, chromaStride: chromaWidth)
            let start = (wallms(), processCPUms())
            kernel.apply(to: planes, width: width, height: height)
            let end = (wallms(), processCPUms())
            if run >= warmUps {
                wall.append(end.0 - start.0)
                cpu.append(end.1 - start.1)
            }
        }
    }
    if let out = options.named["out"] { try Data(work).write(to: URL(fileURLWithPath: out)) }
    func summary(_ values: (wall: [Double], cpu: [Double])) -> [String: Any] {
        [
            "first": ["wall_ms": rounded(values.wall[0]), "cpu_ms": rounded(values.cpu[0])],
            "median": ["wall_ms": rounded(median(values.wall)), "cpu_ms": rounded(median(values.cpu))],
            "count": values.wall.count,
        ]
    }
    try printJSON([
        "width": width, "height": height, "frames": frames, "warm_ups": warmUps, "format": "I420",
        "colorimetry": colorimetry.description, "interpolation": interpolation.rawValue,
        "strategy": kernel.strategy.rawValue, "threads": ProcessInfo.processInfo.activeProcessorCount,
        "build_yuv_table": summary(yuvBuild), "build_rgb_table_alone": summary(rgbBuild),
        "table_mib": rounded(Double(kernel.tableByteCount) / 1_048_576),
        "peak_rss_mib": rounded(peakRSSMiB(), 1),
        "cpu_ms": ["median": rounded(median(cpu)), "min": rounded(cpu.min()!), "max": rounded(cpu.max()!)],
        "wall_ms": ["median": rounded(median(wall)), "min": rounded(wall.min()!), "max": rounded(wall.max()!)],
        "ns_per_pixel_cpu": rounded(median(cpu) * 1e6 / Double(width * height), 2),
    ])
}

// MARK: - lut-check

/// Every 8-bit input once: a 4096×4096 RGB frame whose pixel (x, y) is (x mod 256, y mod 256, 16·(y / 256) +
/// x / 256), run through the kernel and compared with the reference in `Double`, in parallel.
func checkLUT(_ options: Options) throws {
    var reports: [[String: Any]] = []
    for interpolation in try options.interpolations() {
        let look = try options.look(interpolation: interpolation)
        let side = 4096
        var frame = [UInt8](repeating: 0, count: side * side * 3)
        @Sendable func input(_ x: Int, _ y: Int) -> (Int, Int, Int) { (x & 255, y & 255, 16 * (y >> 8) + (x >> 8)) }
        for y in 0..<side {
            for x in 0..<side {
                let (r, g, b) = input(x, y)
                frame[(y * side + x) * 3] = UInt8(r)
                frame[(y * side + x) * 3 + 1] = UInt8(g)
                frame[(y * side + x) * 3 + 2] = UInt8(b)
            }
        }
        let kernel = try LUTKernel(look: look)
        frame.withUnsafeMutableBufferPointer {
            kernel.apply(to: $0.baseAddress!, width: side, height: side, stride: side * 3, layout: .rgb)
        }
        // Per row: the largest difference and how many channels are off by one (computed per row, stored once).
        let pixels = frame
        let rows = Mutex([(worst: Int, offByOne: Int)](repeating: (0, 0), count: side))
        DispatchQueue.concurrentPerform(iterations: side) { y in
            var row = (worst: 0, offByOne: 0)
            for x in 0..<side {
                let (r, g, b) = input(x, y)
                let expected = look.apply(SIMD3(Double(r), Double(g), Double(b)) / 255)
                for channel in 0..<3 {
                    let want = Int(UInt8(min(255, max(0, (expected[channel] * 255).rounded()))))
                    let difference = abs(want - Int(pixels[(y * side + x) * 3 + channel]))
                    row.worst = max(row.worst, difference)
                    if difference == 1 { row.offByOne += 1 }
                }
            }
            rows.withLock { $0[y] = row }
        }
        let perRow = rows.withLock { $0 }
        let rowWorst = perRow.map(\.worst)
        let rowOffByOne = perRow.map(\.offByOne)
        reports.append([
            "interpolation": interpolation.rawValue, "strategy": kernel.strategy.rawValue,
            "max_code_difference": rowWorst.max() ?? 0, "channels_off_by_one": rowOffByOne.reduce(0, +),
            "channels": side * side * 3,
        ])
    }
    try printJSON(["inputs": 1 << 24, "results": reports])
}

// MARK: - 16-bit

/// SplitMix64: the fixed pseudo-random sequence behind the 16-bit frame's dither and the check's inputs.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func writeFrame16(_ options: Options) throws {
    guard options.positional.count == 2 else { throw UsageError(description: "frame16 needs IN and OUT") }
    let (width, height) = (try options.int("width"), try options.int("height"))
    let rgb = try [UInt8](Data(contentsOf: URL(fileURLWithPath: options.positional[0])))
    guard rgb.count == width * height * 3 else {
        throw UsageError(description: "frame is \(rgb.count) bytes, expected \(width)×\(height)×3")
    }
    var random = SplitMix(state: 16)
    var out = [UInt16](repeating: 65535, count: width * height * 4)
    for pixel in 0..<width * height {
        for channel in 0..<3 {
            let dither = Int(random.next() & 255) - 128
            out[pixel * 4 + channel] = UInt16(min(65535, max(0, Int(rgb[pixel * 3 + channel]) * 257 + dither)))
        }
    }
    try out.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: options.positional[1])) }
    try printJSON(["frame16": options.positional[1], "width": width, "height": height])
}

func benchLUT16(_ options: Options) throws {
    let (width, height) = (try options.int("width"), try options.int("height"))
    let frames = try options.int("frames", default: 20)
    let warmUps = 2
    guard let interpolation = try options.interpolations().first, options.named["interpolation"] != "all" else {
        throw UsageError(description: "lut16 takes one --interpolation")
    }
    let look = try options.look(interpolation: interpolation)
    let pristine = try [UInt8](Data(contentsOf: URL(fileURLWithPath: options.string("frame"))))
    guard pristine.count == width * height * 8 else {
        throw UsageError(description: "frame is \(pristine.count) bytes, expected \(width)×\(height)×8")
    }
    let singleThread = options.named["threads"] == "1"
    let bandRows = max(1, (LUTKernel.parallelPixelThreshold - 1) / width)
    let start = (wallms(), processCPUms())
    let kernel = try LUTKernel16(look: look)
    let build = (wall: wallms() - start.0, cpu: processCPUms() - start.1)
    var work = pristine
    var cpu: [Double] = []
    var wall: [Double] = []
    for run in 0..<warmUps + frames {
        work.withUnsafeMutableBytes { work in
            pristine.withUnsafeBytes { work.copyMemory(from: $0) }
            let stride = width * 8
            let start = (wallms(), processCPUms())
            if singleThread {
                for top in Swift.stride(from: 0, to: height, by: bandRows) {
                    kernel.apply(
                        to: work.baseAddress! + top * stride, width: width,
                        height: min(bandRows, height - top), stride: stride, layout: .rgba64)
                }
            } else {
                kernel.apply(to: work.baseAddress!, width: width, height: height, stride: stride, layout: .rgba64)
            }
            let end = (wallms(), processCPUms())
            if run >= warmUps {
                wall.append(end.0 - start.0)
                cpu.append(end.1 - start.1)
            }
        }
    }
    if let out = options.named["out"] { try Data(work).write(to: URL(fileURLWithPath: out)) }
    try printJSON([
        "width": width, "height": height, "frames": frames, "warm_ups": warmUps,
        "interpolation": interpolation.rawValue, "strategy": kernel.strategy.rawValue,
        "threads": singleThread ? 1 : ProcessInfo.processInfo.activeProcessorCount,
        "build": ["wall_ms": rounded(build.wall), "cpu_ms": rounded(build.cpu)],
        "table_mib": rounded(Double(kernel.tableByteCount) / 1_048_576),
        "peak_rss_mib": rounded(peakRSSMiB(), 1),
        "layouts": [
            "rgba64": [
                "cpu_ms": ["median": rounded(median(cpu)), "min": rounded(cpu.min()!), "max": rounded(cpu.max()!)],
                "wall_ms": ["median": rounded(median(wall)), "min": rounded(wall.min()!), "max": rounded(wall.max()!)],
                "ns_per_pixel_cpu": rounded(median(cpu) * 1e6 / Double(width * height), 2),
            ]
        ],
    ])
}

// MARK: - lutyuv10

func benchLUTYUV10(_ options: Options) throws {
    let (width, height) = (try options.int("width"), try options.int("height"))
    let frames = try options.int("frames", default: 20)
    let warmUps = 2
    guard let interpolation = try options.interpolations().first, options.named["interpolation"] != "all" else {
        throw UsageError(description: "lutyuv10 takes one --interpolation")
    }
    let colorimetry: YUVColorimetry
    switch options.named["colorimetry"] ?? "bt709" {
    case "bt601": colorimetry = .bt601
    case "bt709": colorimetry = .bt709
    case "bt2020": colorimetry = .bt2020
    default: throw UsageError(description: "--colorimetry: one of bt601, bt709, bt2020")
    }
    let look = try options.look(interpolation: interpolation)
    let pristine = try [UInt8](Data(contentsOf: URL(fileURLWithPath: options.string("frame"))))
    let (chromaWidth, chromaHeight) = ((width + 1) / 2, (height + 1) / 2)
    let (lumaBytes, chromaBytes) = (width * height * 2, chromaWidth * chromaHeight * 2)
    guard pristine.count == lumaBytes + 2 * chromaBytes else {
        throw UsageError(description: "frame is \(pristine.count) bytes, not one \(width)×\(height) I420_10LE frame")
    }
    let start = (wallms(), processCPUms())
    let kernel = YUV10Kernel(rgb: try LUTKernel16(look: look), colorimetry: colorimetry)
    let build = (wall: wallms() - start.0, cpu: processCPUms() - start.1)
    var work = pristine
    var cpu: [Double] = []
    var wall: [Double] = []
    for run in 0..<warmUps + frames {
        work.withUnsafeMutableBytes { work in
            // Each timed frame starts from the original samples (apply works in place); the copy is not timed.
            pristine.withUnsafeBytes { work.copyMemory(from: $0) }
            let base = work.baseAddress!
            let planes = YUV10Planes.i420(
                luma: base, lumaStride: width * 2, cb: base + lumaBytes, cr: base + lumaBytes + chromaBytes,
                chromaStride: chromaWidth * 2)
            let start = (wallms(), processCPUms())
            kernel.apply(to: planes, width: width, height: height)
            let end = (wallms(), processCPUms())
            if run >= warmUps {
                wall.append(end.0 - start.0)
                cpu.append(end.1 - start.1)
            }
        }
    }
    if let out = options.named["out"] { try Data(work).write(to: URL(fileURLWithPath: out)) }
    try printJSON([
        "width": width, "height": height, "frames": frames, "warm_ups": warmUps, "format": "I420_10LE",
        "colorimetry": colorimetry.description, "interpolation": interpolation.rawValue,
        "strategy": kernel.rgb.strategy.rawValue, "threads": ProcessInfo.processInfo.activeProcessorCount,
        "build": ["wall_ms": rounded(build.wall), "cpu_ms": rounded(build.cpu)],
        "peak_rss_mib": rounded(peakRSSMiB(), 1),
        "cpu_ms": ["median": rounded(median(cpu)), "min": rounded(cpu.min()!), "max": rounded(cpu.max()!)],
        "wall_ms": ["median": rounded(median(wall)), "min": rounded(wall.min()!), "max": rounded(wall.max()!)],
        "ns_per_pixel_cpu": rounded(median(cpu) * 1e6 / Double(width * height), 2),
    ])
}

func checkLUT16(_ options: Options) throws {
    let randomCount = try options.int("random", default: 1 << 22)
    var inputs: [SIMD3<UInt16>] = []
    var random = SplitMix(state: 10)
    for _ in 0..<randomCount {
        let bits = random.next()
        inputs.append(
            SIMD3(
                UInt16(truncatingIfNeeded: bits), UInt16(truncatingIfNeeded: bits >> 16),
                UInt16(truncatingIfNeeded: bits >> 32)))
    }
    func widened(_ code: Int) -> UInt16 { UInt16(code << 6 | code >> 4) }
    let lattice = Array(Swift.stride(from: 0, to: 1024, by: 8)) + [1023]
    for b in lattice {
        for g in lattice {
            for r in lattice { inputs.append(SIMD3(widened(r), widened(g), widened(b))) }
        }
    }
    for code in 0..<1024 {
        let other = widened(Int(random.next() % 1024))
        inputs += [
            SIMD3(repeating: widened(code)), SIMD3(widened(code), other, other),
            SIMD3(other, widened(code), other), SIMD3(other, other, widened(code)),
        ]
    }
    let width = 1024
    let height = (inputs.count + width - 1) / width
    var reports: [[String: Any]] = []
    for interpolation in try options.interpolations() {
        let look = try options.look(interpolation: interpolation)
        let kernel = try LUTKernel16(look: look)
        var frame = [UInt16](repeating: 0, count: width * height * 4)
        for (index, input) in inputs.enumerated() {
            (frame[index * 4], frame[index * 4 + 1], frame[index * 4 + 2]) = (input.x, input.y, input.z)
        }
        frame.withUnsafeMutableBytes {
            kernel.apply(to: $0.baseAddress!, width: width, height: height, stride: width * 8, layout: .rgba64)
        }
        // Per row: a histogram of |difference| (0, 1, 2, 3, 4–32, > 32), computed per row, stored once.
        let pixels = frame
        let checked = inputs
        let rows = Mutex([[Int]](repeating: [0, 0, 0, 0, 0, 0], count: height))
        DispatchQueue.concurrentPerform(iterations: height) { row in
            var histogram = [0, 0, 0, 0, 0, 0]
            for index in row * width..<min(checked.count, (row + 1) * width) {
                let input = checked[index]
                let expected = look.apply(SIMD3(Double(input.x), Double(input.y), Double(input.z)) / 65535)
                for channel in 0..<3 {
                    let want = Int(LUTKernel16.code(expected[channel]))
                    let difference = abs(want - Int(pixels[index * 4 + channel]))
                    histogram[difference <= 3 ? difference : (difference <= 32 ? 4 : 5)] += 1
                }
            }
            rows.withLock { $0[row] = histogram }
        }
        let histograms = rows.withLock { $0 }
        let total = histograms.reduce(into: [0, 0, 0, 0, 0, 0]) { sum, row in
            for bucket in 0..<6 { sum[bucket] += row[bucket] }
        }
        reports.append([
            "interpolation": interpolation.rawValue, "strategy": kernel.strategy.rawValue,
            "channels": inputs.count * 3,
            "difference_histogram": [
                "0": total[0], "1": total[1], "2": total[2], "3": total[3], "4-32": total[4],
                "over_32": total[5],
            ],
        ])
    }
    try printJSON(["inputs": inputs.count, "random": randomCount, "lattice_step_10bit": 8, "results": reports])
}

// MARK: - Main

do {
    let arguments = CommandLine.arguments.dropFirst()
    guard let command = arguments.first else { throw UsageError(description: "no command\n\(help)") }
    let options = try Options(arguments.dropFirst())
    switch command {
    case "write-cube": try writeCube(options)
    case "lut": try benchLUT(options)
    case "lutyuv": try benchLUTYUV(options)
    case "lut-check": try checkLUT(options)
    case "frame16": try writeFrame16(options)
    case "lut16": try benchLUT16(options)
    case "lut16-check": try checkLUT16(options)
    case "lutyuv10": try benchLUTYUV10(options)
    case "-h", "--help", "help": print(help)
    default: throw UsageError(description: "unknown command '\(command)'\n\(help)")
    }
} catch let error as UsageError {
    FileHandle.standardError.write(Data("ftgst-bench: \(error)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("ftgst-bench: \(error)\n".utf8))
    exit(1)
}
