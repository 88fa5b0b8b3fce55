// The GStreamer surface ftgst uses: core, base, app, video, pbutils (the image codecs are CImageCodecs).
// Shims exist only for what Swift cannot import as written (function-like macros, casts); each names what it replaces.
#ifndef FTGST_CGST_SHIM_H
#define FTGST_CGST_SHIM_H

#include <gst/gst.h>
#include <gst/app/gstappsink.h>
// appsrc: the tests push hand-made buffers (e.g. with a padded GstVideoMeta stride) through elements.
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <gst/pbutils/pbutils.h>

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

/// GST_ELEMENT_CLASS / G_OBJECT_CLASS / GST_BASE_TRANSFORM_CLASS / GST_VIDEO_FILTER_CLASS / GST_VIDEO_DECODER_CLASS /
/// GST_VIDEO_ENCODER_CLASS on a class pointer: the
/// class structs nest (each starts with its parent), so these are plain casts of the same pointer.
static inline GObjectClass *ftgst_object_class(gpointer klass) { return G_OBJECT_CLASS(klass); }
static inline GstElementClass *ftgst_element_class(gpointer klass) { return GST_ELEMENT_CLASS(klass); }
static inline GstBaseTransformClass *ftgst_base_transform_class(gpointer klass) {
    return GST_BASE_TRANSFORM_CLASS(klass);
}
static inline GstVideoFilterClass *ftgst_video_filter_class(gpointer klass) { return GST_VIDEO_FILTER_CLASS(klass); }
static inline GstVideoDecoderClass *ftgst_video_decoder_class(gpointer klass) { return GST_VIDEO_DECODER_CLASS(klass); }
static inline GstVideoEncoderClass *ftgst_video_encoder_class(gpointer klass) { return GST_VIDEO_ENCODER_CLASS(klass); }

/// GST_VIDEO_FRAME_FORMAT / GST_VIDEO_FRAME_PLANE_DATA / GST_VIDEO_FRAME_PLANE_STRIDE: macros over nested fields.
static inline GstVideoFormat ftgst_video_frame_format(GstVideoFrame *frame) { return GST_VIDEO_FRAME_FORMAT(frame); }
static inline guint8 *ftgst_video_frame_plane(GstVideoFrame *frame, guint plane) {
    return (guint8 *)GST_VIDEO_FRAME_PLANE_DATA(frame, plane);
}
static inline gint ftgst_video_frame_stride(GstVideoFrame *frame, guint plane) {
    return GST_VIDEO_FRAME_PLANE_STRIDE(frame, plane);
}

/// GST_PARAM_MUTABLE_PLAYING: a flag macro built from a shift.
static inline GParamFlags ftgst_param_mutable_playing(void) { return (GParamFlags)GST_PARAM_MUTABLE_PLAYING; }

/// GST_VERSION_MAJOR / GST_VERSION_MINOR are what a plugin descriptor must carry.
static inline gint ftgst_version_major(void) { return GST_VERSION_MAJOR; }
static inline gint ftgst_version_minor(void) { return GST_VERSION_MINOR; }

#endif
