#ifndef SHUTTERPIPE_REGION_DECODER_H
#define SHUTTERPIPE_REGION_DECODER_H

#include <stddef.h>

/* A rectangle of a JPEG decoded without decoding the rest (libjpeg's jpeg_crop_scanline
 * and jpeg_skip_scanlines): the rows above it are entropy-decoded only, the columns
 * beside it not transformed at all. The page's 100 % view asks for the few tiles on
 * screen; this gives them in a fraction of a whole decode. Accurate integer DCT and fancy
 * upsampling, as libturbojpeg's whole decode: the same pixels. */

/* Decodes columns x..x+width-1 of rows y..y+height-1 (in the stored orientation) of the
 * JPEG `data` as 8-bit RGB into `out` (width*height*3 bytes). The picture is refused when
 * it has more than `max_pixels` (from the header, before any pixel) or when the rectangle
 * is not inside it. Returns 0, or -1 with a reason in `reason` (`reason_size` bytes). */
int sp_region_decode(const unsigned char *data, size_t size, long long max_pixels, int x, int y, int width, int height,
                     unsigned char *out, char *reason, size_t reason_size);

#endif
