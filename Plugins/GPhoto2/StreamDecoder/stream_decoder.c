#include "stream_decoder.h"
#include "split_decoder.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <sys/syscall.h>
#include <unistd.h>

struct sp_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
};

struct sp_stream {
    struct jpeg_decompress_struct info;
    struct sp_error error;
    struct jpeg_source_mgr source;
    unsigned char *data;       /* every byte fed so far (libjpeg may step back within what it was given) */
    size_t size, capacity;
    size_t offset;             /* where libjpeg goes on from, in data */
    size_t skip_to;            /* a skip past what had arrived: where to go on once it has (0: none) */
    int state;                 /* 0 header, 1 starting, 2 scanlines, 3 whole, -1 failed */
    int mode;                  /* 0 not known yet, 1 split_decoder's, 2 libjpeg's */
    sp_split *split;
    size_t expected;           /* the announced size, 0 unknown */
    atomic_int step_down;      /* set by sp_stream_step_down, from any thread */
    int stepped_down;          /* the decoding thread moved itself (libjpeg's path) */
    int long_edge;
    long long max_pixels;
    unsigned char *pixels;
    int width, height;
};

static void on_error(j_common_ptr info) {
    struct sp_error *error = (struct sp_error *)info->err;
    longjmp(error->jump, 1);
}

static void on_message(j_common_ptr info) { (void)info; }  /* warnings: a damaged tail still gives a picture */

static int encode(const unsigned char *pixels, int w, int h, int orientation, int quality, unsigned char **out, unsigned long *size);
static int compress_halves(const unsigned char *pixels, int w, int h, int quality, unsigned char **out, unsigned long *size);

static void init_source(j_decompress_ptr info) { (void)info; }
static boolean fill_input_buffer(j_decompress_ptr info) { (void)info; return FALSE; }  /* suspend: more bytes come */
static void term_source(j_decompress_ptr info) { (void)info; }

static void skip_input_data(j_decompress_ptr info, long count) {
    struct jpeg_source_mgr *source = info->src;
    if (count <= 0) return;
    if ((size_t)count <= source->bytes_in_buffer) {
        source->next_input_byte += count;
        source->bytes_in_buffer -= (size_t)count;
    } else {
        /* Past what arrived: skipped once it comes. */
        sp_stream *stream = (sp_stream *)info->client_data;
        stream->skip_to = (size_t)(source->next_input_byte - stream->data) + (size_t)count;
        source->next_input_byte += source->bytes_in_buffer;
        source->bytes_in_buffer = 0;
    }
}

sp_stream *sp_stream_new(int long_edge, long long max_pixels) {
    sp_stream *stream = calloc(1, sizeof *stream);
    if (!stream) return NULL;
    stream->long_edge = long_edge;
    stream->max_pixels = max_pixels;
    stream->info.err = jpeg_std_error(&stream->error.manager);
    stream->error.manager.error_exit = on_error;
    stream->error.manager.output_message = on_message;
    if (setjmp(stream->error.jump)) { free(stream); return NULL; }
    jpeg_create_decompress(&stream->info);
    stream->info.client_data = stream;
    stream->source.init_source = init_source;
    stream->source.fill_input_buffer = fill_input_buffer;
    stream->source.skip_input_data = skip_input_data;
    stream->source.resync_to_restart = jpeg_resync_to_restart;
    stream->source.term_source = term_source;
    stream->info.src = &stream->source;
    return stream;
}

/* Runs the decoder as far as the bytes go. */
static int advance(sp_stream *stream) {
    struct jpeg_decompress_struct *info = &stream->info;
    if (setjmp(stream->error.jump)) { stream->state = -1; return -1; }
    if (stream->state == 0) {
        if (jpeg_read_header(info, TRUE) == JPEG_SUSPENDED) return 1;
        if ((long long)info->image_width * info->image_height > stream->max_pixels || info->image_width == 0 || info->image_height == 0) {
            stream->state = -1;
            return -1;
        }
        unsigned int edge = info->image_width > info->image_height ? info->image_width : info->image_height;
        unsigned int denom = 1;
        while (denom < 8 && (edge + denom - 1) / denom > (unsigned int)stream->long_edge) denom *= 2;
        info->scale_num = 1;
        info->scale_denom = denom;
        info->out_color_space = JCS_RGB;
        info->dct_method = JDCT_IFAST;
        info->do_fancy_upsampling = FALSE;
        stream->state = 1;
    }
    if (stream->state == 1) {
        if (!jpeg_start_decompress(info)) return 1;
        stream->width = (int)info->output_width;
        stream->height = (int)info->output_height;
        if (info->output_components != 3) { stream->state = -1; return -1; }
        stream->pixels = malloc((size_t)stream->width * stream->height * 3);
        if (!stream->pixels) { stream->state = -1; return -1; }
        stream->state = 2;
    }
    while (stream->state == 2 && info->output_scanline < info->output_height) {
        JSAMPROW row = stream->pixels + (size_t)info->output_scanline * stream->width * 3;
        if (jpeg_read_scanlines(info, &row, 1) == 0) return 1;
    }
    if (stream->state == 2) stream->state = 3;  /* whole: the rest of the file (its tail) is not needed */
    return 2;
}

/* Which decoder takes this JPEG, once its headers are here: split_decoder's where it can,
 * libjpeg's otherwise. */
static void choose(sp_stream *stream) {
    int verdict;
    stream->split = sp_split_new(stream->data, stream->size, stream->long_edge, stream->max_pixels, &stream->step_down, &verdict);
    if (stream->split) {
        stream->mode = 1;
        sp_split_expect(stream->split, stream->expected);
    }
    else if (verdict == SP_SPLIT_UNSUPPORTED) stream->mode = 2;
    else if (verdict == SP_SPLIT_REFUSED) stream->state = -1;
}

void sp_stream_expect(sp_stream *stream, size_t size) {
    if (stream->size || size == 0 || size > ((size_t)256 << 20)) return;  /* a size past any camera JPEG's: grown as it comes */
    unsigned char *room = realloc(stream->data, size);
    if (!room) return;
    stream->data = room;
    stream->capacity = size;
    stream->expected = size;
}

int sp_stream_feed(sp_stream *stream, const unsigned char *bytes, size_t count) {
    if (stream->state < 0) return -1;
    if (stream->state == 3) return 2;
    if (stream->size + count > stream->capacity) {
        size_t capacity = stream->capacity ? stream->capacity : 1 << 20;
        while (capacity < stream->size + count) capacity *= 2;
        unsigned char *grown = realloc(stream->data, capacity);
        if (!grown) { stream->state = -1; return -1; }
        stream->data = grown;
        stream->capacity = capacity;
    }
    memcpy(stream->data + stream->size, bytes, count);
    stream->size += count;
    sp_step_down_if_asked(&stream->step_down, &stream->stepped_down);
    if (stream->mode == 0) choose(stream);
    if (stream->state < 0) return -1;
    if (stream->mode == 1) {
        if (sp_split_more(stream->split, stream->data, stream->size) != 0) { stream->state = -1; return -1; }
        return 1;
    }
    if (stream->mode != 2) return 1;
    size_t start = stream->offset;
    if (stream->skip_to) {
        if (stream->skip_to > stream->size) return 1;  /* still skipping what a marker said to skip */
        start = stream->skip_to;
        stream->skip_to = 0;
    }
    /* Positions, not pointers, across calls: the buffer moves as it grows. */
    stream->source.next_input_byte = stream->data + start;
    stream->source.bytes_in_buffer = stream->size - start;
    int result = advance(stream);
    stream->offset = (size_t)(stream->source.next_input_byte - stream->data);
    return result;
}

int sp_stream_step(sp_stream *stream) {
    if (stream->state < 0) return -1;
    if (stream->state == 3) return 2;
    if (stream->mode != 1) return 0;  /* libjpeg decodes as the bytes are fed */
    int result = sp_split_step(stream->split, 2);
    if (result == 3) return 3;
    if (result == 2) stream->state = 3;
    if (result < 0) stream->state = -1;
    return result;
}

int sp_stream_end(sp_stream *stream) {
    if (stream->state < 0) return -1;
    if (stream->state == 3) return 2;
    if (stream->mode != 1) { stream->state = -1; return -1; }  /* cut short */
    int result = sp_split_end(stream->split);
    stream->state = result == 2 ? 3 : -1;
    return result == 2 ? 2 : -1;
}

const unsigned char *sp_stream_pixels(sp_stream *stream, int *width, int *height) {
    if (stream->state != 3) return NULL;
    if (stream->mode == 1) return sp_split_pixels(stream->split, width, height);
    *width = stream->width;
    *height = stream->height;
    return stream->pixels;
}

int sp_stream_jpeg(sp_stream *stream, int orientation, int quality, unsigned char **out, unsigned long *size) {
    int width, height;
    const unsigned char *pixels = sp_stream_pixels(stream, &width, &height);
    if (!pixels) return -1;
    return encode(pixels, width, height, orientation, quality, out, size);
}

/* `pixels` (w x h, RGB) turned by the EXIF orientation and encoded as a JPEG. */
static int encode(const unsigned char *pixels, int w, int h, int orientation, int quality, unsigned char **out, unsigned long *size) {
    int turned = orientation >= 5 && orientation <= 8;
    int ow = turned ? h : w, oh = turned ? w : h;
    int upright_already = orientation < 2 || orientation > 8;
    unsigned char *upright = upright_already ? (unsigned char *)pixels : malloc((size_t)ow * oh * 3);
    if (!upright) return -1;
    for (int y = 0; y < h && !upright_already; y++) {
        for (int x = 0; x < w; x++) {
            int tx, ty;
            switch (orientation) {
            case 2: tx = w - 1 - x; ty = y; break;
            case 3: tx = w - 1 - x; ty = h - 1 - y; break;
            case 4: tx = x; ty = h - 1 - y; break;
            case 5: tx = y; ty = x; break;
            case 6: tx = h - 1 - y; ty = x; break;
            case 7: tx = h - 1 - y; ty = w - 1 - x; break;
            case 8: tx = y; ty = w - 1 - x; break;
            default: tx = x; ty = y; break;
            }
            memcpy(upright + ((size_t)ty * ow + tx) * 3, pixels + ((size_t)y * w + x) * 3, 3);
        }
    }
    int result = compress_halves(upright, ow, oh, quality, out, size);
    if (!upright_already) free(upright);
    return result;
}

/* rows[0..h) (w wide, RGB) as a JPEG of `quality`; *out is malloc'd. 0, or -1. */
static int compress_rows(const unsigned char *rows, int w, int h, int quality, unsigned char **out, unsigned long *size) {
    struct jpeg_compress_struct info;
    struct sp_error error;
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = on_error;
    error.manager.output_message = on_message;
    *out = NULL;
    *size = 0;
    if (setjmp(error.jump)) { jpeg_destroy_compress(&info); free(*out); *out = NULL; return -1; }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, out, size);
    info.image_width = (JDIMENSION)w;
    info.image_height = (JDIMENSION)h;
    info.input_components = 3;
    info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    info.dct_method = JDCT_IFAST;
    jpeg_start_compress(&info, TRUE);
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = (JSAMPROW)rows + (size_t)info.next_scanline * w * 3;
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    return 0;
}

typedef struct {
    const unsigned char *rows;
    int w, h, quality;
    unsigned char *out;
    unsigned long size;
    int result;
} compress_job;

static void *compress_job_run(void *argument) {
    compress_job *job = argument;
    job->result = compress_rows(job->rows, job->w, job->h, job->quality, &job->out, &job->size);
    return NULL;
}

/* In a JPEG compress_rows made: where its SOF0 and SOS segments are, and where its
 * entropy-coded data starts (0: not found). */
static size_t scan_start(const unsigned char *jpeg, size_t size, size_t *sof, size_t *sos) {
    size_t at = 2;
    while (at + 4 <= size && jpeg[at] == 0xFF) {
        int marker = jpeg[at + 1];
        size_t length = (size_t)jpeg[at + 2] << 8 | jpeg[at + 3];
        if (marker == 0xC0) *sof = at;
        if (marker == 0xDA) {
            *sos = at;
            return at + 2 + length <= size ? at + 2 + length : 0;
        }
        at += 2 + length;
    }
    return 0;
}

/* The picture encoded in two halves at once, the bottom one on a second thread, joined
 * into one baseline JPEG: a restart interval of the top half's MCUs, so that the bottom's
 * data follows an RST0 marker, its DC predictors starting from zero as a restart's do
 * (T.81 F.1.1.5). The same tables serve both (libjpeg's defaults at one quality). About
 * half the wall time of one encode; on any surprise, one encode. */
static int compress_halves(const unsigned char *pixels, int w, int h, int quality, unsigned char **out, unsigned long *size) {
    /* Whole MCU rows (16: libjpeg's default 2x2 luma sampling), the top half the larger:
     * every interval but the last is the restart interval long, the last may be shorter. */
    int top = ((h + 15) / 16 + 1) / 2 * 16;
    long top_mcus = (long)((w + 15) / 16) * (top / 16);
    if (top < 64 || h - top < 1 || top_mcus > 65535) return compress_rows(pixels, w, h, quality, out, size);
    compress_job bottom = {pixels + (size_t)top * w * 3, w, h - top, quality, NULL, 0, -1};
    pthread_t helper;
    int helped = pthread_create(&helper, NULL, compress_job_run, &bottom) == 0;
    unsigned char *upper = NULL;
    unsigned long upper_size = 0;
    int result = compress_rows(pixels, w, top, quality, &upper, &upper_size);
    if (helped) pthread_join(helper, NULL);
    else compress_job_run(&bottom);
    size_t sof = 0, sos = 0, lower_sof = 0, lower_sos = 0;
    size_t upper_data = result == 0 ? scan_start(upper, upper_size, &sof, &sos) : 0;
    size_t lower_data = bottom.result == 0 ? scan_start(bottom.out, bottom.size, &lower_sof, &lower_sos) : 0;
    if (!upper_data || !lower_data || !sof || upper_size < upper_data + 2 || bottom.size < lower_data + 2 ||
        upper[upper_size - 2] != 0xFF || upper[upper_size - 1] != 0xD9 || bottom.out[bottom.size - 2] != 0xFF || bottom.out[bottom.size - 1] != 0xD9) {
        free(upper);
        free(bottom.out);
        return compress_rows(pixels, w, h, quality, out, size);
    }
    size_t upper_entropy = upper_size - 2 - upper_data, lower_entropy = bottom.size - 2 - lower_data;
    size_t total = sos + 6 + (upper_data - sos) + upper_entropy + 2 + lower_entropy + 2;
    unsigned char *joined = malloc(total), *at = joined;
    if (!joined) {
        free(upper);
        free(bottom.out);
        return -1;
    }
    memcpy(at, upper, sos);  /* SOI, JFIF, tables, SOF0 (its height set below) */
    joined[sof + 5] = (unsigned char)(h >> 8);
    joined[sof + 6] = (unsigned char)h;
    at += sos;
    const unsigned char restart[6] = {0xFF, 0xDD, 0x00, 0x04, (unsigned char)(top_mcus >> 8), (unsigned char)top_mcus};
    memcpy(at, restart, 6);
    at += 6;
    memcpy(at, upper + sos, upper_data - sos + upper_entropy);  /* SOS, then the top's data */
    at += upper_data - sos + upper_entropy;
    *at++ = 0xFF;
    *at++ = 0xD0;
    memcpy(at, bottom.out + lower_data, lower_entropy);
    at += lower_entropy;
    *at++ = 0xFF;
    *at++ = 0xD9;
    free(upper);
    free(bottom.out);
    *out = joined;
    *size = (unsigned long)total;
    return 0;
}

long sp_stream_joined_at(const sp_stream *stream, long *total) {
    *total = 0;
    if (stream->mode != 1) return 0;
    long joined = sp_split_joined_at(stream->split, total);
    return joined ? joined : 1;
}

int sp_thread_id(void) { return (int)syscall(SYS_gettid); }

void sp_stream_step_down(sp_stream *stream) { atomic_store(&stream->step_down, 1); }

void sp_stream_free(sp_stream *stream) {
    if (!stream) return;
    sp_split_free(stream->split);
    jpeg_destroy_decompress(&stream->info);
    free(stream->data);
    free(stream->pixels);
    free(stream);
}
