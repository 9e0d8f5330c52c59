#ifndef SHUTTERPIPE_STREAM_DECODER_H
#define SHUTTERPIPE_STREAM_DECODER_H

#include <stddef.h>

/* A JPEG decoded while its bytes arrive, scaled in the DCT: the camera worker feeds each
 * piece of a download as it comes off the wire, and has the scaled picture a few
 * milliseconds after the last one, instead of a whole decode after the file is stored.
 *
 * A baseline JPEG scaled by 1/4 or 1/8 (a camera's, for the page) goes to split_decoder.c,
 * which decodes what is left at the last byte on two threads; any other JPEG to libjpeg,
 * with a suspending source. No call waits for bytes. */
typedef struct sp_stream sp_stream;

/* A decoder that scales to the largest n/8 whose long edge is at most `long_edge`, and
 * refuses a picture of more than `max_pixels` (from the header, before any pixel). */
sp_stream *sp_stream_new(int long_edge, long long max_pixels);

/* The file is expected to be `size` bytes (the camera announced it): room is made at once
 * (up to 256 MiB), rather than grown by copies as it comes. Before the first feed. */
void sp_stream_expect(sp_stream *stream, size_t size);

/* Feeds the next bytes of the file (libjpeg's decoding goes as far as they go). Returns 1
 * while it goes on, 2 once the picture is whole, -1 once it failed (a damaged or
 * unsupported JPEG, over the budget): later calls do nothing. */
int sp_stream_feed(sp_stream *stream, const unsigned char *bytes, size_t count);

/* Decodes a little more of what was fed (two MCU rows), so that the caller can take the
 * next bytes between steps. Returns 1 while more of what was fed waits, 0 when it waits
 * for bytes, 3 when every byte the picture needs is here (its entropy data ended: call
 * sp_stream_end now, without waiting for the download's end), 2 once whole, -1 once
 * failed. */
int sp_stream_step(sp_stream *stream);

/* The last byte was fed (or sp_stream_step said every byte the picture needs is here):
 * decodes what is left, on this thread and a second one. Returns 2 once whole, -1 when it
 * failed or the file was cut short. */
int sp_stream_end(sp_stream *stream);

/* The whole picture, turned by the EXIF orientation `orientation` (1-8), encoded as a
 * JPEG of `quality`; *out is malloc'd, the caller frees it. Returns 0, or -1 when the
 * picture is not whole. */
int sp_stream_jpeg(sp_stream *stream, int orientation, int quality, unsigned char **out, unsigned long *size);

/* The whole picture, RGB, 3 bytes a pixel, as decoded (not turned); NULL when it is not
 * whole. The stream keeps it. */
const unsigned char *sp_stream_pixels(sp_stream *stream, int *width, int *height);

/* How the picture was decoded, for the worker's log: 0 by libjpeg, 1 by split_decoder on
 * one thread, or the MCU (of `*total`) from which the second thread's decode was taken. */
long sp_stream_joined_at(const sp_stream *stream, long *total);

/* Asks the decoding to step down to nice 10 (a download waits for the core it uses); safe
 * from any thread while another decodes. Each decoding thread moves itself, within 256
 * MCUs. */
void sp_stream_step_down(sp_stream *stream);

/* The calling thread's id (gettid): tests read a decoding thread's nice value by it. */
int sp_thread_id(void);

void sp_stream_free(sp_stream *stream);

#endif
