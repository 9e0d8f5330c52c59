#ifndef SHUTTERPIPE_STREAM_DECODER_H
#define SHUTTERPIPE_STREAM_DECODER_H

#include <stddef.h>

/* A JPEG decoded while its bytes arrive (libjpeg with a suspending source), scaled in
 * the DCT: the camera worker feeds each piece of a download as it comes off the wire, and
 * has the scaled picture a few milliseconds after the last one, instead of a whole decode
 * after the file is stored. Every call returns at once; nothing blocks. */
typedef struct sp_stream sp_stream;

/* A decoder that scales to the largest n/8 whose long edge is at most `long_edge`, and
 * refuses a picture of more than `max_pixels` (from the header, before any pixel). */
sp_stream *sp_stream_new(int long_edge, long long max_pixels);

/* Feeds the next bytes of the file and decodes as far as they go. Returns 1 while it
 * goes on, 2 once the picture is whole, -1 once it failed (a damaged or unsupported
 * JPEG, over the budget): later calls do nothing. */
int sp_stream_feed(sp_stream *stream, const unsigned char *bytes, size_t count);

/* The whole picture, turned by the EXIF orientation `orientation` (1-8), encoded as a
 * JPEG of `quality`; *out is malloc'd, the caller frees it. Returns 0, or -1 when the
 * picture is not whole. */
int sp_stream_jpeg(sp_stream *stream, int orientation, int quality, unsigned char **out, unsigned long *size);

void sp_stream_free(sp_stream *stream);

#endif
