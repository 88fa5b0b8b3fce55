package import CGst
import FilmtoneCore

// The box itself (`CallbackBox`) lives in FilmtoneCore, shared with SoupKit; what is GStreamer's is here.

/// The `GClosureNotify` of every signal connection made with a `CallbackBox`: drops GLib's reference. The box's
/// type does not matter for a release, so one function serves every `CallbackBox<A, R>`.
package let releaseClosureData: @convention(c) (gpointer?, UnsafeMutablePointer<GClosure>?) -> Void = { data, _ in
    releaseCallbackBox(data)
}

/// The `GDestroyNotify` of every pad probe added with a `CallbackBox`.
package let releaseProbeData: @convention(c) (gpointer?) -> Void = releaseCallbackBox

extension Element {
    /// `g_signal_connect_data` (`g_signal_connect` is a macro over it) with `box` as the user data, released by
    /// GLib when the handler goes. `GCallback` erases the handler's C signature.
    package func connect<A, R>(_ signal: String, _ handler: GCallback, _ box: CallbackBox<A, R>) {
        g_signal_connect_data(pointer, signal, handler, box.retained(), releaseClosureData, GConnectFlags(rawValue: 0))
    }
}
