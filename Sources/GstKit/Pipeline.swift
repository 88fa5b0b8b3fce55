internal import CGst
import FilmtoneCore
import Foundation

/// How a wait on a pipeline ended.
package enum WaitOutcome {
    case done
    case endOfStream
    case error(FilmtoneError.GStreamerCause)
    case timedOut
    case cancelled
}

/// A set of seek flags (`GstSeekFlags`), as a Swift option set.
package struct SeekFlags: OptionSet {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }
    package static let flush = SeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue)
    package static let accurate = SeekFlags(rawValue: GST_SEEK_FLAG_ACCURATE.rawValue)
    package static let keyUnit = SeekFlags(rawValue: GST_SEEK_FLAG_KEY_UNIT.rawValue)
    package static let snapBefore = SeekFlags(rawValue: GST_SEEK_FLAG_SNAP_BEFORE.rawValue)
}

/// A pipeline built from a launch description, owned from `gst_parse_launch` to its final `NULL` state.
// @unchecked Sendable: its stored properties are immutable (the element, its bus); GStreamer's state changes,
// seeks and queries are thread-safe by design (the application thread and streaming threads share them).
package final class Pipeline: @unchecked Sendable {
    package let element: Element
    package let bus: Bus

    /// `gst_parse_launch`. A description that does not parse is a bug in ftgst's recipe (`INTERNAL`), unless an
    /// element is simply not installed (`UNSUPPORTED_FORMAT`).
    package convenience init(launch description: String) throws {
        try self.init { error in gst_parse_launch(description, &error) }
    }

    /// `gst_parse_launchv`: the description as separate words, exactly as `gst-launch-1.0` receives its argv
    /// (each word is escaped as one unit, so a path with spaces stays one property value).
    package convenience init(words: [String]) throws {
        try self.init { error in
            var pointers: [UnsafeMutablePointer<gchar>?] = words.map { strdup($0) } + [nil]
            defer { for pointer in pointers { free(pointer) } }
            return pointers.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<gchar>?.self, capacity: buffer.count) {
                    gst_parse_launchv($0, &error)
                }
            }
        }
    }

    private init(parse: (inout UnsafeMutablePointer<GError>?) -> UnsafeMutablePointer<GstElement>?) throws {
        try GstRuntime.ensure()
        var error: UnsafeMutablePointer<GError>? = nil
        let raw = parse(&error)  // floating
        if let failure = GLib.takeError(error) {
            if let raw { gst_object_unref(gst_object_ref_sink(raw)) }  // a partial result may come with an error
            let missing =
                failure.domain == gst_parse_error_quark()
                && failure.code == Int(GST_PARSE_ERROR_NO_SUCH_ELEMENT.rawValue)
            throw FilmtoneError(
                missing ? .unsupportedFormat : .internalError,
                "pipeline does not build: \(failure.message)")
        }
        guard let raw else { throw FilmtoneError(.internalError, "gst_parse_launch returned nothing") }
        element = Element(sinkingFloating: raw)
        guard let bus = gst_element_get_bus(raw) else {
            throw FilmtoneError(.internalError, "pipeline has no bus")
        }
        self.bus = Bus(takingFull: bus)
    }

    deinit {
        // A pipeline must be back in NULL before its last reference goes, or its threads outlive it.
        gst_element_set_state(element.pointer, GST_STATE_NULL)
    }

    /// `gst_bin_get_by_name`: a named element of the recipe; `INTERNAL` if the recipe has none.
    package func element(named name: String) throws -> Element {
        guard let child = element.child(named: name) else {
            throw FilmtoneError(.internalError, "pipeline has no element named '\(name)'")
        }
        return child
    }

    /// Starts prerolling (`GST_STATE_PAUSED`). False when the state change failed at once (its error, if any,
    /// is on the bus): waiting for ASYNC_DONE then would only run out the deadline.
    @discardableResult
    package func pause() -> Bool {
        gst_element_set_state(element.pointer, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE
    }

    package func play() {
        gst_element_set_state(element.pointer, GST_STATE_PLAYING)
    }

    package func stop() {
        gst_element_set_state(element.pointer, GST_STATE_NULL)
    }

    /// Posts an EOS message from the pipeline itself on its bus, as if every sink had finished: for a driver that
    /// kept an end of stream from reaching its sinks (see `Pipeline.endWithoutFrames` in the features) but must
    /// still learn that the stream ended. Any thread.
    package func postEndOfStream() {
        let object = UnsafeMutableRawPointer(element.pointer).assumingMemoryBound(to: GstObject.self)
        _ = gst_bus_post(bus.pointer, gst_message_new_eos(object))  // takes the message
    }

    /// Waits until the pipeline reports `ASYNC_DONE` (preroll or a flushing seek complete), an error, or EOS,
    /// giving up at `deadline` and checking `isCancelled` at least every 50 ms.
    package func waitForAsyncDone(deadline: Deadline, isCancelled: () -> Bool) -> WaitOutcome {
        wait(for: .asyncDone, deadline: deadline, isCancelled: isCancelled)
    }

    /// Waits for end of stream (or an error, a deadline, a cancel).
    package func waitForEndOfStream(deadline: Deadline, isCancelled: () -> Bool) -> WaitOutcome {
        wait(for: .endOfStream, deadline: deadline, isCancelled: isCancelled)
    }

    private func wait(for goal: Message.Kinds, deadline: Deadline, isCancelled: () -> Bool) -> WaitOutcome {
        let slice = ClockTime.milliseconds(50)
        while true {
            if isCancelled() { return .cancelled }
            if deadline.hasPassed { return .timedOut }
            switch bus.pop(timeout: deadline.remaining(cap: slice), kinds: [goal, .error, .endOfStream]) {
            case .error(let cause)?: return .error(cause)
            case .endOfStream?: return goal == .endOfStream ? .done : .endOfStream
            case .asyncDone?: return .done
            default: continue
            }
        }
    }

    /// `gst_element_seek_simple` in TIME. False when the pipeline refused the seek.
    package func seek(to time: ClockTime, flags: SeekFlags) -> Bool {
        gst_element_seek_simple(
            element.pointer, GST_FORMAT_TIME, GstSeekFlags(rawValue: flags.rawValue),
            gint64(clamping: time.nanoseconds)) != 0
    }

    /// `gst_element_query_duration` in TIME; nil when unknown.
    package func duration() -> ClockTime? {
        var value: gint64 = -1
        guard gst_element_query_duration(element.pointer, GST_FORMAT_TIME, &value) != 0, value >= 0 else {
            return nil
        }
        return ClockTime(nanoseconds: UInt64(value))
    }

    /// `gst_element_query_position` in TIME; nil when unknown.
    package func position() -> ClockTime? {
        var value: gint64 = -1
        guard gst_element_query_position(element.pointer, GST_FORMAT_TIME, &value) != 0, value >= 0 else {
            return nil
        }
        return ClockTime(nanoseconds: UInt64(value))
    }

    /// A SEEKING query in TIME: whether the pipeline can seek at all (a JPEG still or a non-Range server cannot).
    package func isSeekable() -> Bool {
        guard let query = gst_query_new_seeking(GST_FORMAT_TIME) else { return false }
        defer { gst_query_unref(query) }
        guard gst_element_query(element.pointer, query) != 0 else { return false }
        var seekable: gboolean = 0
        gst_query_parse_seeking(query, nil, &seekable, nil, nil)
        return seekable != 0
    }
}
