#ifndef FTGST_CLINUX_SHIM_H
#define FTGST_CLINUX_SHIM_H

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

/// `prctl(PR_SET_PDEATHSIG, signal)`: prctl is variadic (`int prctl(int option, ...)`), which Swift does not import.
/// Asks the kernel to send `signal` to the calling process when the thread that created it exits. 0 or -1 (errno).
static inline int ftgst_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

/// `mallopt(M_MMAP_THRESHOLD, …)` and `mallopt(M_TRIM_THRESHOLD, …)`: glibc's <malloc.h> is not in Swift's Glibc
/// module. Allocations below `mmap_threshold` come from the heap, and freed heap memory up to `trim_threshold` at
/// its top stays in the process. 1 when both were accepted.
static inline int ftgst_keep_freed_memory(int mmap_threshold, int trim_threshold) {
    return mallopt(M_MMAP_THRESHOLD, mmap_threshold) && mallopt(M_TRIM_THRESHOLD, trim_threshold);
}

/// `renameat2(a, b, RENAME_EXCHANGE)`: swaps the two names atomically (both must exist). Through `syscall`, as glibc
/// declares `renameat2` only under _GNU_SOURCE. 0, or -1 with errno (EINVAL where the file system cannot, ENOSYS
/// before Linux 3.15).
static inline int ftgst_rename_exchange(const char *a, const char *b) {
    return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

#endif
