// libsoup 3 (GNOME's HTTP library): the server, its WebSocket connections and the client session SoupKit uses.
// Shims exist only for what Swift cannot import as written (variadic constructors, macros); each names what it
// replaces.
#ifndef FTGST_CSOUP_SHIM_H
#define FTGST_CSOUP_SHIM_H

#include <libsoup/soup.h>

/// soup_server_new(optname1, ...): variadic and NULL-terminated, which Swift cannot call. `raw-paths` stays FALSE,
/// so libsoup decodes the request path and itself refuses (400) one whose decoding introduces a `..` segment.
static inline SoupServer *ftgst_soup_server_new(void) { return soup_server_new(NULL, NULL); }

/// G_SOURCE_REMOVE: a macro; an idle callback returns it to run once.
static inline gboolean ftgst_source_remove(void) { return G_SOURCE_REMOVE; }

/// G_PRIORITY_DEFAULT: a macro.
static inline gint ftgst_priority_default(void) { return G_PRIORITY_DEFAULT; }

#endif
