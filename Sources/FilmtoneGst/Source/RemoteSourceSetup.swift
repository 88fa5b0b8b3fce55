import FilmtoneCore
import Foundation
import GstKit

/// How every job configures the HTTP source `uridecodebin` creates for a remote URL: the user's headers on every
/// request (libsoup keeps a message's headers across redirects), a read timeout no longer than the whole job's,
/// and ftgst's user agent. Shared by the frame grabber and the prober so that both treat a server the same way.
enum RemoteSourceSetup {
    static let userAgent = "ftgst/\(FilmtoneVersion.string)"

    /// souphttpsrc's own I/O timeout: the job's deadline rounded up to whole seconds, between 1 and 60.
    static func timeoutSeconds(forJobMilliseconds milliseconds: Int64) -> Int64 {
        // Rounded up without adding first: `milliseconds + 999` overflows near Int64.max.
        max(1, min(60, milliseconds / 1000 + (milliseconds % 1000 > 0 ? 1 : 0)))
    }

    /// Connects to `uriDecodeBin`'s `source-setup` and configures each source it creates. Properties a source
    /// does not have (a file source, another HTTP element) are skipped.
    static func configure(_ uriDecodeBin: Element, headers: [HTTPHeader], timeoutMilliseconds: Int64) {
        let seconds = timeoutSeconds(forJobMilliseconds: timeoutMilliseconds)
        uriDecodeBin.onSourceSetup { source in
            if !headers.isEmpty, source.hasProperty("extra-headers") {
                try? source.setProperty(
                    "extra-headers", .structure(name: "extra-headers", fields: headers.map { ($0.name, $0.value) }))
            }
            if source.hasProperty("timeout") { try? source.setProperty("timeout", .int(seconds)) }
            if source.hasProperty("user-agent") { try? source.setProperty("user-agent", .string(userAgent)) }
        }
    }
}
