// The C surface ftgst uses: GStreamer (core, base, app, video, pbutils), TurboJPEG and libpng.
// Shims exist only for what Swift cannot import as written (function-like macros, casts); each names what it replaces.
#ifndef FTGST_CGST_SHIM_H
#define FTGST_CGST_SHIM_H

#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#include <gst/pbutils/pbutils.h>
#include <turbojpeg.h>
#include <png.h>

/// GST_CLOCK_TIME_NONE: imports, then fails to compile in Swift.
static inline GstClockTime ftgst_clock_time_none(void) { return GST_CLOCK_TIME_NONE; }

/// GST_IS_ELEMENT: a type-check macro.
static inline gboolean ftgst_is_element(gpointer obj) { return GST_IS_ELEMENT(obj); }

/// GST_IS_BIN: a type-check macro.
static inline gboolean ftgst_is_bin(gpointer obj) { return GST_IS_BIN(obj); }

/// GST_TYPE_STRUCTURE, GST_TYPE_CAPS and the G_TYPE_* fundamentals are macros (type functions, a global variable,
/// fundamental-type shifts): a GValue is initialised with them to set a property through its own type.
static inline GType ftgst_type_structure(void) { return GST_TYPE_STRUCTURE; }
static inline GType ftgst_type_caps(void) { return GST_TYPE_CAPS; }
static inline GType ftgst_type_string(void) { return G_TYPE_STRING; }
static inline GType ftgst_type_int64(void) { return G_TYPE_INT64; }
static inline GType ftgst_type_double(void) { return G_TYPE_DOUBLE; }
static inline GType ftgst_type_boolean(void) { return G_TYPE_BOOLEAN; }

/// G_OBJECT_GET_CLASS: a cast macro, needed to look a property up before setting it.
static inline GParamSpec *ftgst_find_property(gpointer obj, const gchar *name) {
    return g_object_class_find_property(G_OBJECT_GET_CLASS(obj), name);
}

/// G_PARAM_SPEC_VALUE_TYPE: a macro reading a property's declared type.
static inline GType ftgst_param_value_type(GParamSpec *spec) { return G_PARAM_SPEC_VALUE_TYPE(spec); }

#endif
