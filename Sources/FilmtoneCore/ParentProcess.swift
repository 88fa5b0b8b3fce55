internal import CLinux
import Glibc

/// The process that started this one, for a helper that must not outlive it (`ftgst serve`, whose client is its
/// parent: a desktop app's sidecar, an editor's child process).
public enum ParentProcess {
    /// Asks the kernel to send `signal` to this process when its parent exits (`prctl(PR_SET_PDEATHSIG)`, through
    /// `ftgst_set_parent_death_signal`), and sends it at once if the parent has already gone (between this
    /// process's start and the call it would otherwise be missed: the orphan is adopted, `getppid()` changes).
    ///
    /// The kernel sends it when the *thread* that started this process exits, and keeps it across `exec` of the
    /// same program: a parent that starts helpers from a short-lived thread should start them from one that lives.
    /// Throws `INTERNAL` when the kernel refuses (it does not on Linux for a valid signal).
    public static func signalOnExit(_ signal: Int32) throws {
        let parent = getppid()
        guard ftgst_set_parent_death_signal(signal) == 0 else {
            let reason = String(cString: strerror(errno))
            throw FilmtoneError(.internalError, "prctl(PR_SET_PDEATHSIG) failed: \(reason)")
        }
        if getppid() != parent { raise(signal) }
    }
}
