// The image codecs ftgst calls directly: TurboJPEG, libpng and libwebp's decoder. TurboJPEG, libpng's simplified
// API and libwebp report errors by return value. libpng's full API (needed to choose the row filters and the zlib
// level, which the simplified one does not offer) longjmps out of its error handler, which Swift cannot survive:
// `ftgst_png_encode_rgb` below keeps the setjmp and every libpng call on the C side and returns a status.
// libwebp's WebPGetFeatures and WebPInitDecoderConfig are static inline, which Swift imports as they are.
#ifndef FTGST_CIMAGECODECS_SHIM_H
#define FTGST_CIMAGECODECS_SHIM_H

#include <turbojpeg.h>
#include <png.h>
#include <webp/decode.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/// The growing output of `ftgst_png_encode_rgb`, and the error text of a failure.
typedef struct {
    unsigned char *data;
    size_t size;
    size_t capacity;
    char message[160];
} ftgst_png_output;

static void ftgst_png_write_data(png_structp png, png_bytep bytes, size_t length) {
    ftgst_png_output *out = (ftgst_png_output *)png_get_io_ptr(png);
    if (length > out->capacity - out->size) {
        size_t capacity = out->capacity;
        while (length > capacity - out->size) {
            if (capacity > ((size_t)-1) / 2) png_error(png, "PNG output too large");
            capacity *= 2;
        }
        unsigned char *grown = (unsigned char *)realloc(out->data, capacity);
        if (grown == NULL) png_error(png, "out of memory");
        out->data = grown;
        out->capacity = capacity;
    }
    memcpy(out->data + out->size, bytes, length);
    out->size += length;
}

static void ftgst_png_flush(png_structp png) { (void)png; }

/// libpng's error handler: keeps the message (nothing on stderr) and returns to the setjmp below.
static void ftgst_png_error(png_structp png, png_const_charp message) {
    ftgst_png_output *out = (ftgst_png_output *)png_get_error_ptr(png);
    strncpy(out->message, message ? message : "libpng error", sizeof out->message - 1);
    out->message[sizeof out->message - 1] = 0;
    png_longjmp(png, 1);
}

static void ftgst_png_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

/// Encodes packed 8-bit RGB rows (`stride` bytes apart) as a PNG: `filters` a PNG_FILTER_* mask (PNG_FILTER_NONE:
/// none), zlib `level` 0…9. Returns 1 with the file in out->data (malloc'd: the caller frees it) and its length in
/// out->size; 0 on failure, with out->message set and nothing to free. out->capacity is the first buffer's size.
static inline int ftgst_png_encode_rgb(const unsigned char *rgb, png_uint_32 width, png_uint_32 height,
                                       size_t stride, int filters, int level, ftgst_png_output *out) {
    out->data = (unsigned char *)malloc(out->capacity > 0 ? out->capacity : 65536);
    out->size = 0;
    if (out->capacity == 0) out->capacity = 65536;
    out->message[0] = 0;
    if (out->data == NULL) {
        strcpy(out->message, "out of memory");
        return 0;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, out, ftgst_png_error, ftgst_png_warning);
    png_infop info = png == NULL ? NULL : png_create_info_struct(png);
    if (png == NULL || info == NULL) {
        png_destroy_write_struct(&png, NULL);
        free(out->data);
        out->data = NULL;
        strcpy(out->message, "cannot create libpng's writer");
        return 0;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(out->data);
        out->data = NULL;
        out->size = 0;
        return 0;
    }
    png_set_write_fn(png, out, ftgst_png_write_data, ftgst_png_flush);
    png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, filters);
    png_set_compression_level(png, level);
    png_write_info(png, info);
    for (png_uint_32 y = 0; y < height; y++) png_write_row(png, rgb + (size_t)y * stride);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 1;
}

#endif
