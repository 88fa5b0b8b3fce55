// The image codecs ftgst calls directly: TurboJPEG, libpng's simplified API and libwebp's decoder. All report errors
// by return value; the classic libjpeg and libpng APIs longjmp out of their error handlers, which Swift cannot
// survive. No shims (libwebp's WebPGetFeatures and WebPInitDecoderConfig are static inline, which Swift imports).
#ifndef FTGST_CIMAGECODECS_SHIM_H
#define FTGST_CIMAGECODECS_SHIM_H

#include <turbojpeg.h>
#include <png.h>
#include <webp/decode.h>

#endif
