package import CGst
import Foundation

/// The string-valued tags of one or more `GstTagList`s, copied out (first value of each tag). Only strings are
/// kept: what ftgst reads from tags (`image-orientation`, codec names) is text.
package struct TagValues: Sendable, Equatable {
    package var strings: [String: String] = [:]

    package init(strings: [String: String] = [:]) { self.strings = strings }

    /// `GST_TAG_IMAGE_ORIENTATION` (a macro for the string "image-orientation"): `rotate-90`, `flip-rotate-270`…
    package var imageOrientation: String? { strings["image-orientation"] }

    /// Copies the string tags of a borrowed tag list; tags already present are kept (the first list read wins).
    package mutating func merge(borrowing list: UnsafePointer<GstTagList>) {
        for index in 0..<max(0, gst_tag_list_n_tags(list)) {
            guard let name = GLib.borrowString(gst_tag_list_nth_tag_name(list, guint(index))),
                strings[name] == nil,
                // gst_tag_list_get_string asserts (GLib-CRITICAL) on a tag of another type: check it first.
                gst_tag_get_type(name) == ftgst_type_string()
            else { continue }
            var value: UnsafeMutablePointer<gchar>? = nil
            // gst_tag_list_get_string: a copy (transfer full).
            if gst_tag_list_get_string(list, name, &value) != 0, let text = GLib.takeString(value) {
                strings[name] = text
            }
        }
    }
}
