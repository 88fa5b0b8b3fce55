/// A Swift closure handed to a C library as a callback's `user_data`: the one box for every callback ftgst gives
/// GLib (GStreamer's signals and pad probes in GstKit, libsoup's handlers and idle calls in SoupKit). `retained()`
/// passes the C side one reference, which it gives back through a destroy notify (`releaseCallbackBox`, or GstKit's
/// `releaseClosureData` for a signal) when the handler goes. So a body must not capture what owns the C object
/// holding the handler, or that object would never be freed.
///
/// The body runs on whatever thread the library calls from (a streaming thread, a server's main-loop thread),
/// hence `@Sendable`; the box holds nothing else, so it is Sendable as well.
package final class CallbackBox<Argument, Result>: Sendable {
    package let body: @Sendable (Argument) -> Result

    package init(_ body: @escaping @Sendable (Argument) -> Result) { self.body = body }

    /// The `user_data` pointer: one reference, owned by the C side from here on.
    package func retained() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

    /// The box behind `user_data`, borrowed for the duration of one call.
    package static func borrow(_ data: UnsafeMutableRawPointer) -> CallbackBox {
        Unmanaged.fromOpaque(data).takeUnretainedValue()
    }
}

/// The `GDestroyNotify` for a `user_data` made by `CallbackBox.retained()`: drops the C side's reference. The box's
/// type does not matter for a release, so one function serves every `CallbackBox<A, R>`.
package let releaseCallbackBox: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
    guard let data else { return }
    Unmanaged<AnyObject>.fromOpaque(data).release()
}
