// libavcodec's types and constants for ftgst's own decoder and encoder elements (`fth264dec`, `fth265dec`,
// `ftx264enc`). Nothing here is linked: the functions are looked up with dlsym in the library whose major version
// these headers describe, so the structures Swift reads match the library it runs. Shims exist only for macros Swift
// cannot import.
#ifndef FTGST_CLIBAV_SHIM_H
#define FTGST_CLIBAV_SHIM_H

#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/mastering_display_metadata.h>
#include <libavutil/mem.h>
#include <libavutil/pixfmt.h>

/// The sonames of the libraries these headers belong to (`AV_STRINGIFY` of the major versions).
static inline const char *ftgst_libavcodec_soname(void) {
    return "libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR);
}
static inline const char *ftgst_libavutil_soname(void) { return "libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR); }

/// The major versions these headers describe: a library that reports another one lays its structures out otherwise.
static inline unsigned ftgst_libavcodec_major(void) { return LIBAVCODEC_VERSION_MAJOR; }
static inline unsigned ftgst_libavutil_major(void) { return LIBAVUTIL_VERSION_MAJOR; }

/// AVERROR(EAGAIN) and AVERROR_EOF: function-like and tag macros.
static inline int ftgst_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int ftgst_averror_eof(void) { return AVERROR_EOF; }

/// AV_LOG_QUIET: the level at which libavutil prints nothing.
static inline int ftgst_av_log_quiet(void) { return AV_LOG_QUIET; }

/// AV_NOPTS_VALUE: a cast of an unsigned constant.
static inline int64_t ftgst_av_nopts_value(void) { return AV_NOPTS_VALUE; }

/// Flags built from shifts.
static inline int ftgst_av_codec_flag_output_corrupt(void) { return AV_CODEC_FLAG_OUTPUT_CORRUPT; }
static inline int ftgst_av_frame_flag_corrupt(void) { return AV_FRAME_FLAG_CORRUPT; }
static inline int ftgst_ff_thread_frame_and_slice(void) { return FF_THREAD_FRAME | FF_THREAD_SLICE; }
static inline int ftgst_ff_thread_slice(void) { return FF_THREAD_SLICE; }
static inline int ftgst_av_input_buffer_padding_size(void) { return AV_INPUT_BUFFER_PADDING_SIZE; }

#endif
