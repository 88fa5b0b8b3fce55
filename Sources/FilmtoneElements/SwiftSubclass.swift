package import CGst

/// The instance layout of a GObject subclass written in Swift (`ftlut`, `fttrim`): the parent's instance struct,
/// then one pointer to a retained Swift object holding the element's state. G_DEFINE_TYPE and its instance
/// private data are C macros, so the type is registered by hand with the parent's sizes plus that pointer.
package struct SwiftSubclass<State: AnyObject> {
    package let type: GType
    /// Where the state pointer sits in an instance: the parent's instance size, rounded up to a pointer.
    package let stateOffset: Int

    /// Registers `name` under `parent`, once per process: a second copy of this code (the loadable plugin in a
    /// process that already registered the element statically) finds the existing type by name. The offset is
    /// computed either way: this copy's code must address instances the same way.
    package init(parent: GType, name: String, classInit: GClassInitFunc, instanceInit: GInstanceInitFunc) {
        var query = GTypeQuery()
        g_type_query(parent, &query)
        let pointerSize = MemoryLayout<UnsafeMutableRawPointer>.size
        stateOffset = (Int(query.instance_size) + pointerSize - 1) / pointerSize * pointerSize
        let existing = g_type_from_name(name)
        type = existing != 0 ? existing : g_type_register_static_simple(
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
}
