#ifndef SHUTTERPIPE_SPLIT_DECODER_H
#define SHUTTERPIPE_SPLIT_DECODER_H

#include <stdatomic.h>
#include <stddef.h>

/* A baseline JPEG's screen preview (1/4 or 1/8 of its size, scaled in the DCT) whose
 * entropy decoding is split across two threads once the last byte is here.
 *
 * Why: a 24 MP camera JPEG is ~8 MB of Huffman-coded data with no restart markers, so
 * libjpeg-turbo decodes it on one core (75-90 ms), whatever the scale. When the bytes come
 * faster than that (a fast link, a camera's buffer), the preview waited for one core while
 * the other had little to do.
 *
 * How: until the last byte, one thread decodes as the bytes arrive. Then a second thread
 * starts at a guess, the middle of what is left, as if an MCU began there. Huffman codes
 * fall into step within a few symbols, so the guess soon parses the same MCUs as the true
 * decode. The first thread goes on from where it was and, at each MCU it begins, looks up
 * whether the second thread began an MCU at the same bit. From a shared bit at an MCU's
 * start, both parse the same way to the end (the parse depends on nothing else), so the
 * second thread's MCUs from there on are the true ones. Only their DC terms are off, by a
 * constant per component (the predictors the second thread started from zero), which
 * the join adds back. Where no such bit is found the first thread decodes the rest itself:
 * the second thread's work is a guess that is checked, never trusted.
 *
 * What it decodes: baseline or extended sequential Huffman JPEGs, 8-bit, one scan, one or
 * three components (YCbCr), no restart interval, scaled 1/4 or 1/8. Anything else is the
 * caller's (libjpeg's) to decode. */
typedef struct sp_split sp_split;

/* What sp_split_new found in the headers. */
enum sp_split_verdict {
    SP_SPLIT_MORE = 0,         /* the headers are not all here yet */
    SP_SPLIT_UNSUPPORTED = 1,  /* not a JPEG this decoder takes: use libjpeg */
    SP_SPLIT_REFUSED = 2,      /* over the pixel budget, or damaged headers */
};

/* Reads the headers in data[0..size) (the file from its start); a decoder whose preview's
 * long edge is the largest 1/4 or 1/8 of the picture's that is at most `long_edge`, or
 * NULL with *verdict saying why. Once *step_down is set (from any thread), each of its
 * threads moves itself to nice 10 (sp_step_down_if_asked). */
sp_split *sp_split_new(const unsigned char *data, size_t size, int long_edge, long long max_pixels,
                       const atomic_int *step_down, int *verdict);

/* Moves the calling thread to nice 10 once *step_down is set, and once only (*done). */
void sp_step_down_if_asked(const atomic_int *step_down, int *done);

/* The file is expected to be about `size` bytes (the camera announced it): room for its
 * entropy data is made at once, not grown by copies. */
void sp_split_expect(sp_split *split, size_t size);

/* The file's bytes so far: data[0..size), the same file grown (it may have moved).
 * Returns 0, or -1 when out of memory. */
int sp_split_more(sp_split *split, const unsigned char *data, size_t size);

/* Decodes up to `rows` MCU rows of what has arrived. Returns 1 while more of what has
 * arrived waits, 0 when it waits for bytes, 3 when the entropy data has ended (its marker
 * came: sp_split_end decodes the rest at once), 2 once whole, -1 once failed (damaged). */
int sp_split_step(sp_split *split, int rows);

/* No more bytes come: decodes the rest, on this thread and one more. Returns 2 once whole,
 * -1 when damaged or truncated. */
int sp_split_end(sp_split *split);

/* The MCU from which the second thread's decode was taken (0: one thread decoded it all),
 * and the picture's MCUs in *total; for the worker's log and for tests. */
long sp_split_joined_at(const sp_split *split, long *total);

/* The whole picture, RGB, 3 bytes a pixel; the decoder keeps it. */
const unsigned char *sp_split_pixels(const sp_split *split, int *width, int *height);

void sp_split_free(sp_split *split);

#endif
