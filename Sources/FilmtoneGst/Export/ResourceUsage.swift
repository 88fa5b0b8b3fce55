import Foundation
import Glibc

/// CPU time and memory of this process, and the kernel's memory-pressure counters, for the export's
/// benchmark record. Reading only: nothing here acts on pressure.
struct ResourceUsage {
    /// User + system CPU time of the process (`getrusage(RUSAGE_SELF)`), in milliseconds.
    static func cpuMilliseconds() -> Int64 {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let micro =
            Int64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000
            + Int64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
        return micro / 1000
    }

    /// Resets the process's peak RSS (`VmHWM`) so the peak measured belongs to this export (Linux ≥ 4.0:
    /// writing 5 to `/proc/self/clear_refs`); harmless where refused.
    static func resetPeakMemory() {
        let fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = write(fd, "5", 1)
        close(fd)
    }

    /// `VmHWM` from `/proc/self/status`: the peak resident set, in bytes.
    static func peakMemoryBytes() -> Int64? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return field(in: status, prefix: "VmHWM:").map { $0 * 1024 }
    }

    static func field(in text: String, prefix: String) -> Int64? {
        for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
            let digits = line.dropFirst(prefix.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? ""
            return Int64(digits)
        }
        return nil
    }
}

/// Memory-pressure events while an export runs, counted from what the kernel offers here:
/// - the memory cgroup's event counters (v2 `memory.events`: `high` + `max` + `oom` + `oom_kill`; v1
///   `memory.failcnt`: times the limit was hit), as a difference between the start and the end;
/// - PSI (`/proc/pressure/memory`, `some total=` µs stalled): each sample (taken with the progress ticks) in
///   which the stall total grew counts as one event.
final class MemoryPressureCounter {
    private let cgroupFile: String?
    private let cgroupStart: Int64?
    private var lastStall: Int64?
    private(set) var stallSamples: Int64 = 0
    private(set) var stallMicroseconds: Int64 = 0

    init() {
        cgroupFile = MemoryPressureCounter.findCgroupCounter()
        cgroupStart = cgroupFile.flatMap(MemoryPressureCounter.readCgroupEvents)
        lastStall = MemoryPressureCounter.readStallTotal()
    }

    /// Where the counts come from: `cgroup+psi`, `cgroup`, `psi` or `unavailable`.
    var source: String {
        switch (cgroupStart != nil, lastStall != nil) {
        case (true, true): return "cgroup+psi"
        case (true, false): return "cgroup"
        case (false, true): return "psi"
        case (false, false): return "unavailable"
        }
    }

    func sample() {
        guard let previous = lastStall, let now = MemoryPressureCounter.readStallTotal() else { return }
        if now > previous {
            stallSamples += 1
            stallMicroseconds += now - previous
        }
        lastStall = now
    }

    /// Events since `init` (nil when the kernel offers no counter here).
    var count: Int64? {
        sample()
        let cgroupEvents: Int64? = {
            guard let file = cgroupFile, let start = cgroupStart, let end = MemoryPressureCounter.readCgroupEvents(file)
            else { return nil }
            return max(0, end - start)
        }()
        if cgroupEvents == nil && lastStall == nil { return nil }
        return (cgroupEvents ?? 0) + stallSamples
    }

    private static func findCgroupCounter() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            if parts[0] == "0", parts[1].isEmpty {
                let path = "/sys/fs/cgroup\(parts[2] == "/" ? "" : parts[2])/memory.events"
                if access(path, R_OK) == 0 { return path }
            } else if parts[1].split(separator: ",").contains("memory") {
                for root in ["/sys/fs/cgroup/memory\(parts[2])", "/sys/fs/cgroup/memory"] {
                    let path = root + "/memory.failcnt"
                    if access(path, R_OK) == 0 { return path }
                }
            }
        }
        return nil
    }

    private static func readCgroupEvents(_ path: String) -> Int64? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        if path.hasSuffix("memory.failcnt") { return Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) }
        var total: Int64 = 0
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, ["high", "max", "oom", "oom_kill"].contains(String(parts[0])),
                let value = Int64(parts[1])
            else { continue }
            total += value
        }
        return total
    }

    private static func readStallTotal() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/pressure/memory", encoding: .utf8),
            let some = text.split(separator: "\n").first(where: { $0.hasPrefix("some") }),
            let total = some.split(separator: " ").first(where: { $0.hasPrefix("total=") })
        else { return nil }
        return Int64(total.dropFirst("total=".count))
    }
}
