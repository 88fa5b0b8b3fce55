// GIO's D-Bus client (GDBusConnection, GVariant, GUnixFDList): what DBusKit calls, and nothing else of GIO. Shims
// exist only for what Swift cannot import as written (macros); each names what it replaces.
#ifndef FTGST_CGIO_SHIM_H
#define FTGST_CGIO_SHIM_H

#include <gio/gio.h>
#include <gio/gunixfdlist.h>

/// G_IO_ERROR: a macro over g_io_error_quark().
static inline GQuark ftgst_io_error_quark(void) { return G_IO_ERROR; }

/// G_DBUS_ERROR: a macro over g_dbus_error_quark().
static inline GQuark ftgst_dbus_error_quark(void) { return G_DBUS_ERROR; }

#endif
