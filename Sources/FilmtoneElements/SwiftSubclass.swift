package import CGst

/// The instance layout of a GObject subclass written in Swift (`ftlut`, `fttrim`): the parent's instance struct,
/// then one pointer to a retained Swift object holding the element's state. G_DEFINE_TYPE and its instance
/// private data are C macros, so the type is registered by hand with the parent's sizes plus that pointer.
package struct SwiftSubclass<State: AnyObject> {
    package let type: GType
    /// The parent type (`GstVideoFilter`, `GstBaseTransform`), whose class the vfuncs chain up to.
    package let parentType: GType
    /// Where the state pointer sits in an instance: the parent's instance size, rounded up to a pointer.
    package let stateOffset: Int

    /// Registers `name` under `parent`, once per process: a second copy of this code (the loadable plugin in a
    /// process that already registered the element statically) finds the existing type by name. The offset is
    /// computed either way: this copy's code must address instances the same way.
    package init(parent: GType, name: String, classInit: GClassInitFunc, instanceInit: GInstanceInitFunc) {
        var query = GTypeQuery()
        g_type_query(parent, &query)
        parentType = parent
        let pointerSize = MemoryLayout<UnsafeMutableRawPointer>.size
        stateOffset = (Int(query.instance_size) + pointerSize - 1) / pointerSize * pointerSize
        let existing = g_type_from_name(name)
        type =
            existing != 0
            ? existing
            : g_type_register_static_simple(
                parent, name, query.class_size, classInit, guint(stateOffset + pointerSize), instanceInit,
                GTypeFlags(rawValue: 0))
    }

    private func slot(_ instance: UnsafeMutableRawPointer) -> UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        (instance + stateOffset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    }

    /// instance_init: the new instance takes its (retained) state.
    package func attach(_ state: State, to instance: UnsafeMutableRawPointer) {
        slot(instance).pointee = Unmanaged.passRetained(state).toOpaque()
    }

    /// The instance's state, borrowed (valid until `detach`).
    package func state(of instance: UnsafeMutableRawPointer) -> State {
        Unmanaged<State>.fromOpaque(slot(instance).pointee!).takeUnretainedValue()
    }

    /// finalize: releases the state, before the parent's finalize runs.
    package func detach(from instance: UnsafeMutableRawPointer) {
        if let state = slot(instance).pointee { Unmanaged<State>.fromOpaque(state).release() }
        slot(instance).pointee = nil
    }

    /// The parent's class struct, to chain up to its vfuncs (C's `parent_class`, which `G_DEFINE_TYPE` keeps in a
    /// static variable). `g_type_class_peek` of the parent type is the same pointer as `g_type_class_peek_parent`
    /// of this class; the subclass holds a reference to it for as long as the subclass exists. Computed, so
    /// there is no global written in class_init.
    package func parentClass<Class>(as: Class.Type) -> UnsafeMutablePointer<Class> {
        g_type_class_peek(parentType)!.assumingMemoryBound(to: Class.self)
    }

    /// `finalize`: releases the instance's state, then chains up to the parent's finalize.
    package func finalize(_ object: UnsafeMutablePointer<GObject>) {
        detach(from: UnsafeMutableRawPointer(object))
        parentClass(as: GObjectClass.self).pointee.finalize?(object)
    }

    /// Adds an always-present `sink` and `src` pad template with the same caps (`gst_caps_from_string`).
    package static func addPadTemplates(_ elementClass: UnsafeMutablePointer<GstElementClass>, caps description: String)
    {
        for (name, direction) in [("sink", GST_PAD_SINK), ("src", GST_PAD_SRC)] {
            let caps = gst_caps_from_string(description)
            gst_element_class_add_pad_template(
                elementClass, gst_pad_template_new(name, direction, GST_PAD_ALWAYS, caps))
            gst_caps_unref(caps)  // the template took its own reference
        }
    }

    /// Posts an ERROR message from an element (what GST_ELEMENT_ERROR does; the macro is not importable).
    /// gst_element_message_full takes ownership of both strings.
    package static func postError(
        _ element: UnsafeMutableRawPointer, domain: GQuark, code: gint, message: String, debug: String,
        function: String
    ) {
        gst_element_message_full(
            element.assumingMemoryBound(to: GstElement.self), GST_MESSAGE_ERROR, domain, code, g_strdup(message),
            g_strdup(debug), #fileID, function, 0)
    }
}
