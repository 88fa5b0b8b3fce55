// The image codecs ftgst calls directly: TurboJPEG and libpng's simplified API. Both report errors by return value;
// the classic libjpeg and libpng APIs longjmp out of their error handlers, which Swift cannot survive. No shims.
#ifndef FTGST_CIMAGECODECS_SHIM_H
#define FTGST_CIMAGECODECS_SHIM_H

#include <turbojpeg.h>
#include <png.h>

#endif
