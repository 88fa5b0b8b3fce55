import DBusKit
import FilmtoneCore
import Foundation
import Synchronization

/// What a running export shows and holds on the desktop, through the session bus — the Live Activity of this
/// platform:
/// - **one notification**, updated in place at most once a second, with the title, the progress, the time left
///   and a **Cancel** button that cancels the export through its token (reason `notification`): the portal's
///   `Notification` where it serves this program, else `org.freedesktop.Notifications`; at the end a last one
///   (done, with **Open** and **Show in folder** where the process stays to answer them; or the failure's
///   `[CODE]`; or cancelled);
/// - **dock progress** (`com.canonical.Unity.LauncherEntry.Update` for the studio's desktop id), cleared at the end;
/// - **the machine kept awake**: the portal's `Inhibit` (suspend) for the export's duration;
/// - **low-memory warnings** (the portal's `MemoryMonitor`) counted for the export's record.
///
/// Nothing here can fail an export: no bus, no portal, no notification server, a call that errs or outruns its
/// deadline — each part just does not happen (`state` says which did). Every call has a 2-s deadline.
final class ExportDesktop: Sendable {
    /// Which notification service shows the export.
    enum Notifier: String, Sendable {
        case portal
        case freedesktop
    }

    /// The studio's desktop file id, whose dock entry shows the progress.
    static let desktopID = "io.github.ftgst.Studio"
    static let callTimeout = 2_000
    static let portal = "org.freedesktop.portal.Desktop"
    static let portalPath = "/org/freedesktop/portal/desktop"
    static let notifications = "org.freedesktop.Notifications"
    static let notificationsPath = "/org/freedesktop/Notifications"

    private struct State {
        var notifier: Notifier?
        /// The freedesktop id of the notification shown (its `replaces_id`).
        var shownID: UInt32 = 0
        var lastUpdate: ContinuousClock.Instant?
        var inhibitHandle: String?
        var memoryWarnings = 0
        var memoryMonitor = false
        var finished = false
        /// What the last notification's buttons act on (after the end).
        var finishedOutput: String?
    }

    private let bus: DBusConnection
    private let name: String
    private let portalID: String
    private let state = Mutex(State())
    private let onCancel: @Sendable () -> Void

    /// Starts the export's desktop presence, or nil when there is no session bus. `name` is the output's file
    /// name; `onCancel` is called (on the bus's thread) when the user presses Cancel.
    static func start(
        name: String, environment: [String: String], onCancel: @escaping @Sendable () -> Void
    ) -> ExportDesktop? {
        guard let bus = try? DBusConnection.session(environment: environment, timeoutMilliseconds: callTimeout) else {
            return nil
        }
        let desktop = ExportDesktop(bus: bus, name: name, onCancel: onCancel)
        desktop.begin()
        return desktop
    }

    private init(bus: DBusConnection, name: String, onCancel: @escaping @Sendable () -> Void) {
        self.bus = bus
        self.name = name
        self.onCancel = onCancel
        portalID = "ftgst-export-\(getpid())-\(UInt32.random(in: 1...UInt32.max))"
    }

    deinit { bus.close() }

    /// Low-memory warnings received so far; nil when no memory monitor was there to send them.
    var memoryWarningCount: Int? { state.withLock { $0.memoryMonitor ? $0.memoryWarnings : nil } }

    private func begin() {
        inhibit()
        watchMemory()
        chooseNotifier()
        show(title: "Exporting \(name)", body: "Starting…", buttons: [("cancel", "Cancel")], ongoing: true)
        dock(progress: 0, visible: true)
    }

    // MARK: - Progress

    /// A progress event: the notification and the dock, at most once a second (the first at once).
    func progress(_ event: ExportProgress) {
        let now = ContinuousClock.now
        let due = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            if let last = state.lastUpdate, now - last < .seconds(1) { return false }
            state.lastUpdate = now
            return true
        }
        guard due else { return }
        show(
            title: "Exporting \(name)", body: ExportDesktop.progressText(event), buttons: [("cancel", "Cancel")],
            ongoing: true)
        dock(progress: event.progress, visible: true)
    }

    /// "42 % · about 1 min 20 s left", or the stage while there is no estimate.
    static func progressText(_ event: ExportProgress) -> String {
        let percent = "\(Int((event.progress * 100).rounded(.down))) %"
        guard event.stage == .rendering, let left = event.remainingMilliseconds, left > 0 else {
            switch event.stage {
            case .probing: return "\(percent) · reading the source"
            case .mezzanine: return "\(percent) · building the mezzanine"
            case .rendering: return percent
            case .finalizing: return "\(percent) · finishing"
            }
        }
        return "\(percent) · about \(duration(left)) left"
    }

    static func duration(_ milliseconds: Int64) -> String {
        let seconds = max(1, Int((Double(milliseconds) / 1000).rounded()))
        if seconds < 60 { return "\(seconds) s" }
        let minutes = seconds / 60
        if minutes < 60 { return seconds % 60 == 0 ? "\(minutes) min" : "\(minutes) min \(seconds % 60) s" }
        return "\(minutes / 60) h \(minutes % 60) min"
    }

    // MARK: - The end

    /// The desktop presence of the last export that ended with buttons to answer, kept (with its connection) for
    /// `lingering` after its end, or until the next one ends.
    private static let lingering = Mutex<ExportDesktop?>(nil)
    static let lingerTime = 30 * 60

    /// The export ended: `result` on success, else `error`. `answersButtons`: this process stays to answer the last
    /// notification's Open and Show in folder (the engine); a one-shot CLI leaves them out.
    func finish(result: ExportResult?, error: FilmtoneError?, answersButtons: Bool) {
        state.withLock { state in
            state.finished = true
            state.finishedOutput = answersButtons ? result?.path : nil
        }
        if answersButtons, result != nil {
            Self.lingering.withLock { $0 = self }
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Self.lingerTime)) { [weak self] in
                Self.lingering.withLock { if $0 === self { $0 = nil } }
            }
        }
        dock(progress: 1, visible: false)
        if let result {
            let size = ByteCountFormatter.string(fromByteCount: result.sizeBytes, countStyle: .file)
            show(
                title: "Exported \(name)", body: "\(result.width)×\(result.height), \(size)",
                buttons: answersButtons ? [("open", "Open"), ("show", "Show in folder")] : [], ongoing: false)
        } else if let error, error.code == .cancelled {
            show(title: "Export cancelled", body: "\(name): \(error.message)", buttons: [], ongoing: false)
        } else {
            show(
                title: "Export failed", body: "\(name): \(error?.description ?? "unknown error")", buttons: [],
                ongoing: false)
        }
        releaseInhibitor()
    }

    // MARK: - Notifications

    private func chooseNotifier() {
        // The portal's, where it serves this program (outside a sandbox it may refuse one without an app id:
        // the first AddNotification tells); else the freedesktop server's.
        if (try? bus.property(
            Self.portal, Self.portalPath, "org.freedesktop.portal.Notification", "version",
            timeoutMilliseconds: Self.callTimeout)) != nil
        {
            state.withLock { $0.notifier = .portal }
            bus.subscribe(
                interface: "org.freedesktop.portal.Notification", member: "ActionInvoked", path: Self.portalPath
            ) { [weak self] signal in
                let values = signal.elements
                guard let self, values.count >= 2, values[0].string == self.portalID, let action = values[1].string
                else { return }
                self.act(action)
            }
            return
        }
        chooseFreedesktop()
    }

    private func chooseFreedesktop() {
        // A server that answers GetCapabilities is there.
        guard
            (try? bus.call(
                Self.notifications, Self.notificationsPath, Self.notifications, "GetCapabilities",
                timeoutMilliseconds: Self.callTimeout)) != nil
        else {
            state.withLock { $0.notifier = nil }
            return
        }
        state.withLock { $0.notifier = .freedesktop }
        bus.subscribe(interface: Self.notifications, member: "ActionInvoked", path: Self.notificationsPath) {
            [weak self] signal in
            let values = signal.elements
            guard let self, values.count >= 2, let id = values[0].uint32, let action = values[1].string else { return }
            guard id != 0, id == self.state.withLock({ $0.shownID }) else { return }
            self.act(action)
        }
    }

    /// A button pressed.
    private func act(_ action: String) {
        switch action {
        case "cancel":
            if !state.withLock({ $0.finished }) { onCancel() }
        case "open", "show":
            guard let output = state.withLock({ $0.finishedOutput }) else { return }
            DesktopOpener(bus: bus).open(output, folder: action == "show")
        default:
            break
        }
    }

    private func show(title: String, body: String, buttons: [(String, String)], ongoing: Bool) {
        switch state.withLock({ $0.notifier }) {
        case .portal?:
            var notification: [String: DBusValue] = [
                "title": .string(title), "body": .string(body), "priority": .string(ongoing ? "normal" : "high"),
            ]
            if !buttons.isEmpty {
                notification["buttons"] = .array(
                    elementType: "a{sv}",
                    buttons.map { .vardict(["label": .string($0.1), "action": .string($0.0)]) })
            }
            do {
                _ = try bus.call(
                    Self.portal, Self.portalPath, "org.freedesktop.portal.Notification", "AddNotification",
                    .tuple([.string(portalID), .vardict(notification)]), timeoutMilliseconds: Self.callTimeout)
            } catch {
                // Refused (no app id outside a sandbox, say): the freedesktop server instead, from now on.
                chooseFreedesktop()
                if state.withLock({ $0.notifier }) == .freedesktop {
                    show(title: title, body: body, buttons: buttons, ongoing: ongoing)
                }
            }
        case .freedesktop?:
            let replaces = state.withLock { $0.shownID }
            let actions = buttons.flatMap { [$0.0, $0.1] }
            let hints: [String: DBusValue] = [
                "desktop-entry": .string(Self.desktopID), "urgency": .byte(ongoing ? 0 : 1),
                "resident": .bool(ongoing), "transient": .bool(false),
            ]
            let reply = try? bus.call(
                Self.notifications, Self.notificationsPath, Self.notifications, "Notify",
                .tuple([
                    .string("ftgst"), .uint32(replaces), .string("video-x-generic"), .string(title), .string(body),
                    .array(elementType: "s", actions.map { .string($0) }), .vardict(hints),
                    .int32(ongoing ? 0 : -1),
                ]), timeoutMilliseconds: Self.callTimeout)
            if let id = reply?.elements.first?.uint32 { state.withLock { $0.shownID = id } }
        case nil:
            break
        }
    }

    // MARK: - Dock, inhibitor, memory

    private func dock(progress: Double, visible: Bool) {
        try? bus.emitSignal(
            path: "/io/github/ftgst/export", interface: "com.canonical.Unity.LauncherEntry", member: "Update",
            .tuple([
                .string("application://\(Self.desktopID).desktop"),
                .vardict(["progress": .double(min(1, max(0, progress))), "progress-visible": .bool(visible)]),
            ]))
    }

    private func inhibit() {
        let reply = try? bus.call(
            Self.portal, Self.portalPath, "org.freedesktop.portal.Inhibit", "Inhibit",
            .tuple([
                .string(""), .uint32(4),  // suspend
                .vardict([
                    "reason": .string("Exporting \(name)"),
                    "handle_token": .string("ftgst_inhibit_\(UInt32.random(in: 1...UInt32.max))"),
                ]),
            ]), timeoutMilliseconds: Self.callTimeout)
        if let handle = reply?.elements.first?.string { state.withLock { $0.inhibitHandle = handle } }
    }

    private func releaseInhibitor() {
        guard
            let handle = state.withLock({ state in
                defer { state.inhibitHandle = nil }
                return state.inhibitHandle
            })
        else { return }
        _ = try? bus.call(
            Self.portal, handle, "org.freedesktop.portal.Request", "Close", timeoutMilliseconds: Self.callTimeout)
    }

    private func watchMemory() {
        guard
            (try? bus.property(
                Self.portal, Self.portalPath, "org.freedesktop.portal.MemoryMonitor", "version",
                timeoutMilliseconds: Self.callTimeout)) != nil
        else { return }
        state.withLock { $0.memoryMonitor = true }
        bus.subscribe(interface: "org.freedesktop.portal.MemoryMonitor", member: "LowMemoryWarning", path: nil) {
            [weak self] _ in
            self?.state.withLock { $0.memoryWarnings += 1 }
        }
    }
}
