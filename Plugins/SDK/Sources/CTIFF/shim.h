#ifndef SHUTTERPIPE_CTIFF_SHIM_H
#define SHUTTERPIPE_CTIFF_SHIM_H
#include <stdint.h>
#include <tiffio.h>

// TIFFGetField is variadic, which Swift cannot call: one function per field read.

/// The first image's width and height; 0 when the file has none.
static inline void sp_tiff_size(TIFF *tiff, uint32_t *width, uint32_t *height) {
    *width = 0; *height = 0;
    TIFFGetField(tiff, TIFFTAG_IMAGEWIDTH, width);
    TIFFGetField(tiff, TIFFTAG_IMAGELENGTH, height);
}

/// The Orientation tag (1–8), 1 when absent.
static inline int sp_tiff_orientation(TIFF *tiff) {
    uint16_t orientation = ORIENTATION_TOPLEFT;
    TIFFGetFieldDefaulted(tiff, TIFFTAG_ORIENTATION, &orientation);
    return orientation;
}

/// The ICC profile (tag 34675) and its size; NULL when the file has none.
static inline const void *sp_tiff_icc_profile(TIFF *tiff, uint32_t *size) {
    void *data = NULL;
    *size = 0;
    if (!TIFFGetField(tiff, TIFFTAG_ICCPROFILE, size, &data)) return NULL;
    return data;
}

/// Keeps libtiff's warnings and errors off standard error (the caller reports failures).
static inline void sp_tiff_quiet(void) {
    TIFFSetWarningHandler(NULL);
    TIFFSetErrorHandler(NULL);
}
#endif
