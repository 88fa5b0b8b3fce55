#ifndef FTGST_CLINUX_SHIM_H
#define FTGST_CLINUX_SHIM_H

#include <signal.h>
#include <sys/prctl.h>

/// `prctl(PR_SET_PDEATHSIG, signal)`: prctl is variadic (`int prctl(int option, ...)`), which Swift does not import.
/// Asks the kernel to send `signal` to the calling process when the thread that created it exits. 0 or -1 (errno).
static inline int ftgst_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

#endif
