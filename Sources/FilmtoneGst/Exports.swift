// What a program that imports FilmtoneGst sees besides the features: the error and JSON types (FilmtoneCore), the
// looks (CubeLUT, Look, from FilmtoneLooks) and the image types (ImageFormat, RGBImage, from ImageCodecs).
// The GStreamer wrapper and the elements stay out of the public API.
@_exported import FilmtoneCore
@_exported import FilmtoneLooks
@_exported import ImageCodecs
