internal import CSoup

/// Takes a transfer-full `GError*` (from a libsoup call that failed): copies its message and frees it.
func takeErrorMessage(_ error: UnsafeMutablePointer<GError>?) -> String {
    guard let error else { return "unknown error" }
    defer { g_error_free(error) }
    return error.pointee.message.map { String(cString: $0) } ?? "unknown error"
}
