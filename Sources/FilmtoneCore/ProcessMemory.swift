internal import CLinux

/// How this process's allocator treats freed memory.
public enum ProcessMemory {
    /// Keeps freed memory for reuse instead of handing it back to the kernel at once: allocations up to 32 MiB
    /// come from the heap (not a mapping of their own, unmapped on free), and up to 512 MiB free at the heap's top
    /// stay. For a process that builds many pipelines in turn (`ftgst batch`): each clip's decoder and pools
    /// allocate tens of MiB of frames, which glibc would otherwise return at each pipeline's end and the kernel
    /// would fault in, cleared, for the next. The peak is unchanged: what is kept is reused. False when glibc
    /// refused a setting.
    @discardableResult
    public static func keepFreedMemory() -> Bool {
        ftgst_keep_freed_memory(32 << 20, 512 << 20) == 1
    }
}
