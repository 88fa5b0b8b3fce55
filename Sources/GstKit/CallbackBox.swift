package import CGst

/// A Swift closure handed to GLib as a signal's or a pad probe's `user_data`: the one box for every callback in
/// this module. `retained()` passes GLib one reference, which GLib gives back through `releaseClosureData` (a
/// signal's `GClosureNotify`) or `releaseProbeData` (a probe's `GDestroyNotify`) when the handler goes, that is when
/// the element is finalised or the probe removed. So a body must not capture what owns the element, or the
/// pipeline would never be freed.
///
/// The body runs on whatever thread GStreamer calls from (usually a streaming thread), hence `@Sendable`; the box
/// holds nothing else, so it is Sendable as well.
package final class CallbackBox<Argument, Result>: Sendable {
    package let body: @Sendable (Argument) -> Result

    package init(_ body: @escaping @Sendable (Argument) -> Result) { self.body = body }

    /// The `user_data` pointer: one reference, owned by GLib from here on.
    package func retained() -> gpointer { Unmanaged.passRetained(self).toOpaque() }

    /// The box behind `user_data`, borrowed for the duration of one call.
    package static func borrow(_ data: gpointer) -> CallbackBox { Unmanaged.fromOpaque(data).takeUnretainedValue() }
}

/// The `GClosureNotify` of every signal connection made with a `CallbackBox`: drops GLib's reference. The box's
/// type does not matter for a release, so one function serves every `CallbackBox<A, R>`.
package let releaseClosureData: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
    guard let data else { return }
    Unmanaged<AnyObject>.fromOpaque(data).release()
}

/// The `GDestroyNotify` of every pad probe added with a `CallbackBox`.
package let releaseProbeData: @convention(c) (gpointer?) -> Void = { data in
    guard let data else { return }
    Unmanaged<AnyObject>.fromOpaque(data).release()
}

extension Element {
    /// `g_signal_connect_data` (`g_signal_connect` is a macro over it) with `box` as the user data, released by
    /// GLib when the handler goes. `GCallback` erases the handler's C signature.
    package func connect<A, R>(_ signal: String, _ handler: GCallback, _ box: CallbackBox<A, R>) {
        g_signal_connect_data(pointer, signal, handler, box.retained(), releaseClosureData, GConnectFlags(rawValue: 0))
    }
}
