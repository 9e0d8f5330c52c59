#ifndef SHUTTERPIPE_IMAGE_LIBRARIES_H
#define SHUTTERPIPE_IMAGE_LIBRARIES_H
#include <stddef.h>

/// The image libraries loaded only when a photo needs them: a process that never meets a
/// HEIF, a RAW or a TIFF never maps libheif (and its x265, aom, dav1d and de265), LibRaw
/// (and OpenMP, lcms2) or libtiff (and webp, zstd, LERC, JBIG). Together they were most of
/// shutterpipe's start-up (measured: docs/benchmarks.md, "EXIF tagging at capture time").
typedef enum {
    SP_IMAGE_LIBRARY_HEIF = 0,
    SP_IMAGE_LIBRARY_RAW = 1,
    SP_IMAGE_LIBRARY_TIFF = 2,
} sp_image_library;

/// Loads `library` once (later calls return at once), with every function of it that
/// shutterpipe calls: 0 when it is ready, -1 when it could not be loaded, with the reason
/// in `error` (`size` bytes at most). Call it before the library's first function: a call
/// into a library that is not loaded ends the process, saying which.
int sp_image_library_load(sp_image_library library, char *error, size_t size);

#endif
