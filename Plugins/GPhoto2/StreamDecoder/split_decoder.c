/* A baseline JPEG's scaled preview, its entropy decoding split across two threads once the
 * last byte is here: split_decoder.h says why and how. The Huffman decoding follows ITU-T
 * T.81 (annex C for the tables, F.2.2 for the decoding); the scaled output is each 4x4 or
 * 8x8 quarter of a block's average, taken from the coefficients that contribute to it.
 * One file over 600 lines: the headers, the Huffman decoder, the two threads' meeting and
 * the scaled output share one struct and its invariants (what is published when). */

#include "split_decoder.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define FAST_BITS 10
/* Zero bytes after the entropy data: one MCU reads at most ~2.2 KB (ten blocks of 64
 * coefficients at 26 bits) past where it starts, so a decoder checking its position before
 * each MCU never reads past the buffer, whatever the bits say. */
#define PAD 8192
/* A streaming decode stays this far behind the last byte, so an MCU never runs out. */
#define MARGIN_BITS (PAD * 8)
/* Less than this left at the end: not worth a second thread. */
#define MIN_SPLIT_BITS ((uint64_t)128 * 1024 * 8)

typedef struct {
    uint16_t fast[1 << FAST_BITS];    /* (length << 8) | symbol, codes of at most FAST_BITS bits; 0: longer */
    int32_t fast_ac[1 << FAST_BITS];  /* AC tables: (value << 16) | (run << 8) | (code + value bits), where both fit */
    uint32_t maxcode[18];             /* left-aligned to 16 bits: a code of length l is below maxcode[l] */
    int delta[17];                    /* a code of length l is symbol (code - delta[l]) */
    uint8_t symbols[256];
    int defined;
} huff_table;

typedef struct {
    uint64_t bits;   /* the next bits, from the top */
    int count;       /* how many of them are valid */
    const uint8_t *p;
} reader;

struct sp_split {
    int width, height;            /* the picture's */
    int out_width, out_height;    /* the preview's */
    int vals;                     /* values a block gives per side: 2 (1/4 scale) or 1 (1/8) */
    int ncomp, hmax, vmax;
    struct { int id, h, v, tq, td, ta; } comp[3];
    int blocks;                   /* blocks in an MCU, and each one's component and place in it */
    uint8_t block_comp[10], block_dx[10], block_dy[10];
    long mcux, mcuy, total;       /* MCUs across, down, in all */
    uint16_t quant[4][64];
    int quant_defined[4];
    huff_table dc[4], ac[4];
    float weight[3][64];          /* per zigzag index: what a coefficient adds to its kind's sum */
    float dc_weight[3];
    uint8_t kind[64];             /* per zigzag index: 0 nothing at this scale, 1 across, 2 down, 3 both */

    size_t raw_pos;               /* where unstuffing goes on, in the file */
    uint8_t *clean;               /* the entropy data without its stuffed zero bytes, then PAD zeros */
    size_t clean_len, clean_cap;
    size_t expected;              /* the file's announced size, 0 unknown */
    int clean_done;               /* a marker (or the file's end) ended it */

    long mcu;                     /* the next MCU the first thread decodes */
    uint64_t pos;                 /* and the bit it starts at */
    int pred[3];                  /* the DC predictors there */
    int state;                    /* 0 decoding, 2 whole, -1 failed */
    long joined_at;
    const atomic_int *step_down;  /* set: a download waits, the decoding moves to nice 10 */
    int stepped_down;             /* the first thread did (the helper keeps its own) */

    uint8_t *plane[3];
    long plane_w[3], plane_h[3];
    uint8_t *rgb;
    long *cols;                   /* per pixel column and component: the sample under it */
    int rgb_done;                 /* rows of rgb converted */

    /* The second thread's guess: where each MCU it parsed began, its predictors there, and
     * its values. Published as it goes: count (release) after the entry it counts. */
    pthread_t helper;
    uint64_t helper_start;
    long helper_cap;
    uint64_t *helper_pos;
    int32_t (*helper_pred)[3];
    float *helper_out;
    atomic_long helper_count;     /* entries whose start is recorded */
    atomic_long helper_decoded;   /* entries whose values are written */
    atomic_long helper_error;     /* the last entry whose MCU failed (-1: none) */
    atomic_long helper_need;      /* stop once this many are decoded */
    atomic_int helper_done;
    uint64_t helper_end;          /* where its last MCU ended */
};

static const uint8_t natural_order[64] = {
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
    35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
};

static inline int extend(int raw, int size) { return raw < (1 << (size - 1)) ? raw - (1 << size) + 1 : raw; }

static inline uint64_t load_be64(const uint8_t *p) {
    uint64_t value;
    memcpy(&value, p, 8);
    return __builtin_bswap64(value);
}

/* At least 56 valid bits after it. */
static inline void refill(reader *r) {
    r->bits |= load_be64(r->p) >> r->count;
    r->p += (63 - r->count) >> 3;
    r->count |= 56;
}

static inline void consume(reader *r, int n) {
    r->bits <<= n;
    r->count -= n;
}

static void reader_at(reader *r, const uint8_t *base, uint64_t bit) {
    r->p = base + bit / 8;
    r->bits = 0;
    r->count = 0;
    refill(r);
    consume(r, (int)(bit & 7));
}

static inline uint64_t reader_bit(const reader *r, const uint8_t *base) { return (uint64_t)(r->p - base) * 8 - (uint64_t)r->count; }

/* Annex C: the canonical codes from the counts per length. */
static int build_table(huff_table *t, const uint8_t counts[16], const uint8_t *symbols, int n, int ac) {
    memset(t, 0, sizeof *t);
    memcpy(t->symbols, symbols, (size_t)n);
    uint32_t code = 0;
    int k = 0;
    for (int l = 1; l <= 16; l++) {
        t->delta[l] = (int)code - k;
        for (int i = 0; i < counts[l - 1]; i++, k++, code++) {
            if (l <= FAST_BITS) {
                int shift = FAST_BITS - l;
                for (int fill = 0; fill < (1 << shift); fill++) t->fast[(code << shift) | (uint32_t)fill] = (uint16_t)((l << 8) | symbols[k]);
            }
        }
        if (code > (1u << l)) return -1;  /* more codes than the length has */
        t->maxcode[l] = code << (16 - l);
        code <<= 1;
    }
    t->maxcode[17] = 0xffffffffu;
    /* AC: the symbols whose code and value fit the lookup together, decoded in one step;
     * the end of block as a run of 64, sixteen zeros as a run of 15 before a zero. */
    for (int i = 0; ac && i < (1 << FAST_BITS); i++) {
        int entry = t->fast[i];
        if (!entry) continue;
        int length = entry >> 8, run = (entry & 255) >> 4, size = entry & 15;
        if (!size) {
            if (run == 0) t->fast_ac[i] = (64 << 8) | length;
            else if (run == 15) t->fast_ac[i] = (15 << 8) | length;
            continue;
        }
        if (length + size > FAST_BITS) continue;
        int raw = (i >> (FAST_BITS - length - size)) & ((1 << size) - 1);
        t->fast_ac[i] = (int32_t)((uint32_t)extend(raw, size) << 16) | (run << 8) | (length + size);
    }
    t->defined = 1;
    return 0;
}

static inline int decode_symbol(const huff_table *t, reader *r) {
    int entry = t->fast[r->bits >> (64 - FAST_BITS)];
    if (entry) {
        consume(r, entry >> 8);
        return entry & 255;
    }
    uint32_t prefix = (uint32_t)(r->bits >> 48);
    for (int l = FAST_BITS + 1; l <= 16; l++) {
        if (prefix < t->maxcode[l]) {
            int index = (int)(prefix >> (16 - l)) - t->delta[l];
            if (index < 0 || index > 255) return -1;
            consume(r, l);
            return t->symbols[index];
        }
    }
    return -1;  /* no such code */
}

/* One MCU: each block's values (vals x vals, before the level shift) into out, in order. */
static int decode_mcu(const sp_split *s, reader *r, int *pred, float *out) {
    for (int b = 0; b < s->blocks; b++) {
        int c = s->block_comp[b];
        const huff_table *ac = &s->ac[s->comp[c].ta];
        const float *weight = s->weight[c];
        float sum[4] = {0, 0, 0, 0};
        refill(r);
        int size = decode_symbol(&s->dc[s->comp[c].td], r);
        if (size < 0 || size > 11) return -1;
        if (size) {
            pred[c] += extend((int)(r->bits >> (64 - size)), size);
            consume(r, size);
        }
        int k = 1;
        for (;;) {
            refill(r);
            /* Up to four lookup-sized symbols (10 bits each) between refills. */
            int32_t fast = ac->fast_ac[r->bits >> (64 - FAST_BITS)];
            for (int n = 0; fast && n < 4; n++) {
                consume(r, fast & 255);
                int run = (fast >> 8) & 255;
                k += run;
                if (k > 63) {
                    if (run == 64) goto block_end;
                    return -1;
                }
                sum[s->kind[k]] += (float)(fast >> 16) * weight[k];
                if (++k == 64) goto block_end;
                fast = ac->fast_ac[r->bits >> (64 - FAST_BITS)];
            }
            if (fast) continue;
            refill(r);
            int symbol = decode_symbol(ac, r);
            if (symbol < 0) return -1;
            int run = symbol >> 4;
            size = symbol & 15;
            if (!size) {
                if (run != 15) goto block_end;
                k += 16;
                if (k > 64) return -1;
                if (k == 64) goto block_end;
                continue;
            }
            k += run;
            if (k > 63 || size > 10) return -1;
            sum[s->kind[k]] += (float)extend((int)(r->bits >> (64 - size)), size) * weight[k];
            consume(r, size);
            if (++k == 64) goto block_end;
        }
    block_end:;
        float dc = (float)pred[c] * s->dc_weight[c];
        if (s->vals == 1) {
            out[b] = dc;
        } else {
            float across = sum[1], down = sum[2], both = sum[3];
            out[b * 4 + 0] = dc + across + down + both;
            out[b * 4 + 1] = dc - across + down - both;
            out[b * 4 + 2] = dc + across - down - both;
            out[b * 4 + 3] = dc - across - down + both;
        }
    }
    return 0;
}

static inline uint8_t clamp_sample(float value) {
    value += 128.5f;
    return value <= 0 ? 0 : value >= 255 ? 255 : (uint8_t)value;
}

/* MCU m's values into the component planes, each component's DC moved by shift[c]. */
static void place(sp_split *s, long m, const float *out, const float *shift) {
    long mx = m % s->mcux, my = m / s->mcux;
    int vals = s->vals;
    for (int b = 0; b < s->blocks; b++) {
        int c = s->block_comp[b];
        long x = (mx * s->comp[c].h + s->block_dx[b]) * vals, y = (my * s->comp[c].v + s->block_dy[b]) * vals;
        uint8_t *row = s->plane[c] + y * s->plane_w[c] + x;
        const float *v = out + b * vals * vals;
        float d = shift ? shift[c] : 0;
        if (vals == 1) {
            row[0] = clamp_sample(v[0] + d);
        } else {
            row[0] = clamp_sample(v[0] + d);
            row[1] = clamp_sample(v[1] + d);
            row[s->plane_w[c]] = clamp_sample(v[2] + d);
            row[s->plane_w[c] + 1] = clamp_sample(v[3] + d);
        }
    }
}

typedef struct {
    sp_split *s;
    int first, last;  /* rows [first, last) */
    long *cols[3];    /* per pixel column, each component's sample */
} rgb_rows;

/* JFIF's YCbCr to RGB (libjpeg's jdcolor.c) over some of the preview's rows, each chroma
 * sample repeated over the pixels it covers (as libjpeg without "fancy" upsampling). */
static void *to_rgb_rows(void *argument) {
    rgb_rows *job = argument;
    sp_split *s = job->s;
    int w = s->out_width;
    static const int half = 1 << 15;
    for (int y = job->first; y < job->last; y++) {
        uint8_t *out = s->rgb + (size_t)y * w * 3;
        const uint8_t *row[3];
        for (int c = 0; c < s->ncomp; c++) row[c] = s->plane[c] + (long)y * s->comp[c].v / s->vmax * s->plane_w[c];
        if (s->ncomp == 1) {
            for (int x = 0; x < w; x++) out[3 * x] = out[3 * x + 1] = out[3 * x + 2] = row[0][job->cols[0][x]];
            continue;
        }
        const long *luma = job->cols[0], *blue = job->cols[1], *red = job->cols[2];
        for (int x = 0; x < w; x++) {
            int l = row[0][luma[x]], cb = row[1][blue[x]] - 128, cr = row[2][red[x]] - 128;
            int r = l + ((91881 * cr + half) >> 16);
            int g = l + ((-22554 * cb - 46802 * cr + half) >> 16);
            int b = l + ((116130 * cb + half) >> 16);
            out[3 * x] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
            out[3 * x + 1] = (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
            out[3 * x + 2] = (uint8_t)(b < 0 ? 0 : b > 255 ? 255 : b);
        }
    }
    return NULL;
}

/* The planes to RGB, the bottom half on a second thread when one can be had. */
/* The picture and the column maps, made once (its pages are touched as rows come). */
static int make_rgb(sp_split *s) {
    if (s->rgb) return 0;
    int w = s->out_width, h = s->out_height;
    s->rgb = malloc((size_t)w * h * 3);
    s->cols = malloc(sizeof(long) * (size_t)w * (size_t)s->ncomp);
    if (!s->rgb || !s->cols) return -1;
    for (int c = 0; c < s->ncomp; c++)
        for (int x = 0; x < w; x++) s->cols[(size_t)c * w + x] = (long)x * s->comp[c].h / s->hmax;
    return 0;
}

static rgb_rows rows_job(sp_split *s, int first, int last) {
    rgb_rows job = {.s = s, .first = first, .last = last};
    for (int c = 0; c < s->ncomp; c++) job.cols[c] = s->cols + (size_t)c * s->out_width;
    return job;
}

/* The rows whose MCU rows are all decoded, to RGB as the bytes come (one thread), so that
 * little of it is left for the last byte. */
static int rgb_as_decoded(sp_split *s) {
    long ready = s->mcu / s->mcux * s->vmax * s->vals;
    if (ready > s->out_height) ready = s->out_height;
    if (ready <= s->rgb_done) return 0;
    if (make_rgb(s) != 0) return -1;
    rgb_rows job = rows_job(s, s->rgb_done, (int)ready);
    to_rgb_rows(&job);
    s->rgb_done = (int)ready;
    return 0;
}

/* The rows not yet converted, the lower half of them on a second thread when one can be had. */
static int to_rgb(sp_split *s) {
    if (make_rgb(s) != 0) return -1;
    int first = s->rgb_done, h = s->out_height, middle = first + (h - first) / 2;
    rgb_rows top = rows_job(s, first, middle), bottom = rows_job(s, middle, h);
    pthread_t helper;
    int helped = pthread_create(&helper, NULL, to_rgb_rows, &bottom) == 0;
    to_rgb_rows(&top);
    if (helped) pthread_join(helper, NULL);
    else to_rgb_rows(&bottom);
    s->rgb_done = h;
    return 0;
}

/* The headers, from SOI to SOS: 1 read, 0 not all here, -1 not ours, -2 damaged. */
static int read_headers(sp_split *s, const uint8_t *d, size_t size) {
    if (size < 2) return 0;
    if (d[0] != 0xFF || d[1] != 0xD8) return -2;
    size_t at = 2;
    int have_frame = 0, adobe_rgb = 0;
    for (;;) {
        while (at < size && d[at] == 0xFF && at + 1 < size && d[at + 1] == 0xFF) at++;  /* fill bytes */
        if (at + 4 > size) return 0;
        if (d[at] != 0xFF) return -2;
        int marker = d[at + 1];
        if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD9)) return -2;  /* none of these belongs in the headers */
        size_t length = (size_t)d[at + 2] << 8 | d[at + 3];
        if (length < 2) return -2;
        if (at + 2 + length > size) return 0;
        const uint8_t *p = d + at + 4;
        size_t n = length - 2;
        at += 2 + length;
        if (marker == 0xC0 || marker == 0xC1) {
            if (have_frame || n < 6) return -2;
            if (p[0] != 8) return -1;  /* 12-bit */
            s->height = p[1] << 8 | p[2];
            s->width = p[3] << 8 | p[4];
            s->ncomp = p[5];
            if (s->height == 0) return -1;  /* the height comes in a DNL marker */
            if (s->width == 0) return -2;
            if (s->ncomp != 1 && s->ncomp != 3) return -1;
            if (n < 6 + 3 * (size_t)s->ncomp) return -2;
            for (int c = 0; c < s->ncomp; c++) {
                s->comp[c].id = p[6 + 3 * c];
                s->comp[c].h = p[7 + 3 * c] >> 4;
                s->comp[c].v = p[7 + 3 * c] & 15;
                s->comp[c].tq = p[8 + 3 * c];
                if (s->comp[c].h < 1 || s->comp[c].h > 4 || s->comp[c].v < 1 || s->comp[c].v > 4 || s->comp[c].tq > 3) return -2;
            }
            if (s->ncomp == 3 && s->comp[0].id == 'R' && s->comp[1].id == 'G' && s->comp[2].id == 'B') return -1;
            have_frame = 1;
        } else if (marker >= 0xC2 && marker <= 0xCF && marker != 0xC4) {
            return -1;  /* progressive, lossless, hierarchical or arithmetic */
        } else if (marker == 0xC4) {
            while (n > 0) {
                if (n < 17) return -2;
                int class = p[0] >> 4, id = p[0] & 15;
                int count = 0;
                for (int i = 0; i < 16; i++) count += p[1 + i];
                if (class > 1 || id > 3 || count > 256 || n < 17 + (size_t)count) return -2;
                if (build_table(class ? &s->ac[id] : &s->dc[id], p + 1, p + 17, count, class) != 0) return -2;
                p += 17 + count;
                n -= 17 + (size_t)count;
            }
        } else if (marker == 0xDB) {
            while (n > 0) {
                int precision = p[0] >> 4, id = p[0] & 15;
                size_t need = precision ? 129 : 65;
                if (precision > 1 || id > 3 || n < need) return -2;
                for (int k = 0; k < 64; k++) s->quant[id][k] = precision ? (uint16_t)(p[1 + 2 * k] << 8 | p[2 + 2 * k]) : p[1 + k];
                s->quant_defined[id] = 1;
                p += need;
                n -= need;
            }
        } else if (marker == 0xDD) {
            if (n < 2) return -2;
            if (p[0] || p[1]) return -1;  /* restart markers: libjpeg's */
        } else if (marker == 0xEE) {
            /* Adobe's: a transform of 0 means RGB, not YCbCr. */
            if (n >= 12 && memcmp(p, "Adobe", 5) == 0 && p[11] == 0) adobe_rgb = 1;
        } else if (marker == 0xDA) {
            if (!have_frame || n < 1) return -2;
            if (adobe_rgb && s->ncomp == 3) return -1;
            int scan = p[0];
            if (scan != s->ncomp) return -1;  /* more than one scan */
            if (n < 4 + 2 * (size_t)scan) return -2;
            for (int i = 0; i < scan; i++) {
                if (p[1 + 2 * i] != s->comp[i].id) return -1;
                s->comp[i].td = p[2 + 2 * i] >> 4;
                s->comp[i].ta = p[2 + 2 * i] & 15;
                if (s->comp[i].td > 3 || s->comp[i].ta > 3) return -2;
                if (!s->dc[s->comp[i].td].defined || !s->ac[s->comp[i].ta].defined || !s->quant_defined[s->comp[i].tq]) return -2;
            }
            const uint8_t *q = p + 1 + 2 * scan;
            if (q[0] != 0 || q[1] != 63 || q[2] != 0) return -1;
            s->raw_pos = at;
            return 1;
        }
    }
}

void sp_step_down_if_asked(const atomic_int *step_down, int *done) {
    if (*done || !step_down || !atomic_load_explicit(step_down, memory_order_relaxed)) return;
    setpriority(PRIO_PROCESS, 0, 10);  /* 0: the calling thread, on Linux */
    *done = 1;
}

sp_split *sp_split_new(const unsigned char *data, size_t size, int long_edge, long long max_pixels,
                       const atomic_int *step_down, int *verdict) {
    sp_split *s = calloc(1, sizeof *s);
    if (!s) { *verdict = SP_SPLIT_UNSUPPORTED; return NULL; }
    s->step_down = step_down;
    int read = read_headers(s, data, size);
    if (read != 1) {
        free(s);
        *verdict = read == 0 ? SP_SPLIT_MORE : read == -1 ? SP_SPLIT_UNSUPPORTED : SP_SPLIT_REFUSED;
        return NULL;
    }
    if ((long long)s->width * s->height > max_pixels) { free(s); *verdict = SP_SPLIT_REFUSED; return NULL; }
    int edge = s->width > s->height ? s->width : s->height;
    int denom = 1;
    while (denom < 8 && (edge + denom - 1) / denom > long_edge) denom *= 2;
    if (denom < 4) { free(s); *verdict = SP_SPLIT_UNSUPPORTED; return NULL; }  /* small: libjpeg is quick enough */
    s->vals = denom == 4 ? 2 : 1;
    s->out_width = (s->width + denom - 1) / denom;
    s->out_height = (s->height + denom - 1) / denom;
    if (s->ncomp == 1) s->comp[0].h = s->comp[0].v = 1;  /* one component: an MCU is one block (A.2.2) */
    for (int c = 0; c < s->ncomp; c++) {
        if (s->comp[c].h > s->hmax) s->hmax = s->comp[c].h;
        if (s->comp[c].v > s->vmax) s->vmax = s->comp[c].v;
    }
    for (int c = 0; c < s->ncomp; c++) {
        for (int dy = 0; dy < s->comp[c].v; dy++) {
            for (int dx = 0; dx < s->comp[c].h; dx++) {
                if (s->blocks == 10) { free(s); *verdict = SP_SPLIT_REFUSED; return NULL; }
                s->block_comp[s->blocks] = (uint8_t)c;
                s->block_dx[s->blocks] = (uint8_t)dx;
                s->block_dy[s->blocks] = (uint8_t)dy;
                s->blocks++;
            }
        }
        if (s->hmax % s->comp[c].h || s->vmax % s->comp[c].v) { free(s); *verdict = SP_SPLIT_UNSUPPORTED; return NULL; }
    }
    s->mcux = (s->width + 8 * s->hmax - 1) / (8 * s->hmax);
    s->mcuy = (s->height + 8 * s->vmax - 1) / (8 * s->vmax);
    s->total = s->mcux * s->mcuy;
    /* A 4x4 quarter's average takes the DC and the odd frequencies (the even ones sum to
     * zero over half a block): a_u is cos((2x+1)u pi/16) averaged over the left half. */
    double half[8] = {1, 0, 0, 0, 0, 0, 0, 0};
    for (int u = 1; u < 8; u += 2) {
        double sum = 0;
        for (int x = 0; x < 4; x++) sum += cos((2 * x + 1) * u * M_PI / 16);
        half[u] = sum / 4;
    }
    for (int k = 0; k < 64; k++) {
        int v = natural_order[k] / 8, u = natural_order[k] % 8;
        s->kind[k] = (uint8_t)(k == 0 || s->vals == 1 ? 0 : v == 0 && (u & 1) ? 1 : u == 0 && (v & 1) ? 2 : (u & 1) && (v & 1) ? 3 : 0);
        for (int c = 0; c < s->ncomp; c++) {
            double q = s->quant[s->comp[c].tq][k];
            double w = s->kind[k] == 1 ? half[u] / (4 * M_SQRT2) : s->kind[k] == 2 ? half[v] / (4 * M_SQRT2) : s->kind[k] == 3 ? half[u] * half[v] / 4 : 0;
            s->weight[c][k] = (float)(w * q);
        }
    }
    for (int c = 0; c < s->ncomp; c++) {
        s->dc_weight[c] = (float)s->quant[s->comp[c].tq][0] / 8;
        s->plane_w[c] = s->mcux * s->comp[c].h * s->vals;
        s->plane_h[c] = s->mcuy * s->comp[c].v * s->vals;
        s->plane[c] = malloc((size_t)(s->plane_w[c] * s->plane_h[c]));
        if (!s->plane[c]) { sp_split_free(s); *verdict = SP_SPLIT_REFUSED; return NULL; }
    }
    atomic_init(&s->helper_error, -1);
    return s;
}

void sp_split_expect(sp_split *s, size_t size) { s->expected = size; }

int sp_split_more(sp_split *s, const unsigned char *data, size_t size) {
    if (s->clean_done || size <= s->raw_pos) return 0;
    size_t need = s->clean_len + (size - s->raw_pos) + PAD;
    if (need > s->clean_cap) {
        size_t cap = s->clean_cap ? s->clean_cap * 2 : 1 << 20;
        if (!s->clean_cap && s->expected > cap) cap = s->expected + PAD;
        while (cap < need) cap *= 2;
        uint8_t *grown = realloc(s->clean, cap);
        if (!grown) return -1;
        s->clean = grown;
        s->clean_cap = cap;
    }
    const uint8_t *src = data + s->raw_pos, *end = data + size;
    uint8_t *dst = s->clean + s->clean_len;
    while (src < end) {
        const uint8_t *ff = memchr(src, 0xFF, (size_t)(end - src));
        if (!ff) {
            memcpy(dst, src, (size_t)(end - src));
            dst += end - src;
            src = end;
            break;
        }
        memcpy(dst, src, (size_t)(ff - src));
        dst += ff - src;
        src = ff;
        if (src + 1 >= end) break;  /* a 0xFF last: what follows it says what it is */
        if (src[1] == 0x00) {
            *dst++ = 0xFF;
            src += 2;
        } else if (src[1] == 0xFF) {
            src++;  /* a fill byte before a marker */
        } else {
            s->clean_done = 1;  /* a marker: the entropy data ends */
            break;
        }
    }
    s->clean_len = (size_t)(dst - s->clean);
    s->raw_pos = (size_t)(src - data);
    memset(s->clean + s->clean_len, 0, PAD);
    return 0;
}

/* The first thread: MCUs from s->mcu on, up to `limit`, while the bytes go. */
static int decode_run(sp_split *s, long limit) {
    uint64_t end = (uint64_t)s->clean_len * 8;
    reader r;
    reader_at(&r, s->clean, s->pos);
    float out[40];
    while (s->mcu < limit) {
        uint64_t at = reader_bit(&r, s->clean);
        if (!s->clean_done && at + MARGIN_BITS > end) break;
        if ((s->mcu & 255) == 0) sp_step_down_if_asked(s->step_down, &s->stepped_down);
        if (at > end || decode_mcu(s, &r, s->pred, out) != 0) return -1;  /* damaged, or cut short */
        place(s, s->mcu, out, NULL);
        s->mcu++;
    }
    s->pos = reader_bit(&r, s->clean);
    /* The last MCU may not end past the data: zeros in its place mean a file cut short. */
    if (s->mcu == s->total && s->pos > end) return -1;
    return 0;
}

static int finish(sp_split *s) {
    if (to_rgb(s) != 0) { s->state = -1; return -1; }
    s->state = 2;
    return 2;
}

int sp_split_step(sp_split *s, int rows) {
    if (s->state != 0) return s->state;
    if (s->clean_done) return 3;  /* all of it is here: the caller ends it, on two threads */
    long before = s->mcu;
    long limit = s->mcu + (long)rows * s->mcux;
    if (decode_run(s, limit < s->total ? limit : s->total) != 0 || rgb_as_decoded(s) != 0) { s->state = -1; return -1; }
    if (s->mcu == s->total) return finish(s);
    return s->mcu == before ? 0 : 1;
}

/* The second thread: MCUs from helper_start, as if one began there, each one's start and
 * predictors recorded. A failed MCU means it is not in step yet: it goes on a bit later. */
static void *helper_main(void *argument) {
    sp_split *s = argument;
    uint64_t end = (uint64_t)s->clean_len * 8;
    int pred[3] = {0, 0, 0};
    reader r;
    reader_at(&r, s->clean, s->helper_start);
    long i = 0;
    int stepped_down = s->stepped_down;  /* it starts at the first thread's nice */
    while (i < s->helper_cap && i < atomic_load_explicit(&s->helper_need, memory_order_relaxed)) {
        uint64_t at = reader_bit(&r, s->clean);
        if (at >= end) break;
        if ((i & 255) == 0) sp_step_down_if_asked(s->step_down, &stepped_down);
        s->helper_pos[i] = at;
        memcpy(s->helper_pred[i], pred, sizeof pred);
        atomic_store_explicit(&s->helper_count, i + 1, memory_order_release);
        if (decode_mcu(s, &r, pred, s->helper_out + (size_t)i * s->blocks * s->vals * s->vals) != 0) {
            atomic_store_explicit(&s->helper_error, i, memory_order_release);
            memset(pred, 0, sizeof pred);
            reader_at(&r, s->clean, at + 1);
        }
        i++;
        atomic_store_explicit(&s->helper_decoded, i, memory_order_release);
    }
    s->helper_end = reader_bit(&r, s->clean);
    atomic_store_explicit(&s->helper_done, 1, memory_order_release);
    return NULL;
}

static void pause_briefly(void) {
    struct timespec pause = {0, 20000};
    nanosleep(&pause, NULL);
}

/* Whether the first thread, at an MCU starting at `at`, meets an MCU the helper began
 * there: 1 met (*entry says which), 0 not here (ask again at the next), -1 never. */
static int meet(sp_split *s, uint64_t at, long *entry) {
    for (;;) {
        long count = atomic_load_explicit(&s->helper_count, memory_order_acquire);
        while (*entry < count && s->helper_pos[*entry] < at) (*entry)++;
        if (*entry < count) return s->helper_pos[*entry] == at ? 1 : 0;
        if (atomic_load_explicit(&s->helper_done, memory_order_acquire) &&
            *entry >= atomic_load_explicit(&s->helper_count, memory_order_acquire)) return -1;
        pause_briefly();  /* the helper has not got this far yet */
    }
}

int sp_split_end(sp_split *s) {
    if (s->state != 0) return s->state;
    s->clean_done = 1;
    uint64_t end = (uint64_t)s->clean_len * 8;
    int split = end > s->pos && end - s->pos >= MIN_SPLIT_BITS;
    if (split) {
        s->helper_start = (s->pos + (end - s->pos) / 2) & ~(uint64_t)7;
        s->helper_cap = s->total + s->total / 4 + 64;
        s->helper_pos = malloc(sizeof *s->helper_pos * (size_t)s->helper_cap);
        s->helper_pred = malloc(sizeof *s->helper_pred * (size_t)s->helper_cap);
        s->helper_out = malloc(sizeof(float) * (size_t)s->helper_cap * s->blocks * s->vals * s->vals);
        atomic_store(&s->helper_need, s->helper_cap);
        split = s->helper_pos && s->helper_pred && s->helper_out && pthread_create(&s->helper, NULL, helper_main, s) == 0;
    }
    if (!split) {
        if (decode_run(s, s->total) != 0 || s->mcu != s->total) { s->state = -1; return -1; }
        return finish(s);
    }
    /* Up to the helper's start alone, then MCU by MCU, looking for a start it shares. */
    long entry = 0;
    int met = 0;
    reader r;
    reader_at(&r, s->clean, s->pos);
    float out[40];
    while (s->mcu < s->total) {
        uint64_t at = reader_bit(&r, s->clean);
        if ((s->mcu & 255) == 0) sp_step_down_if_asked(s->step_down, &s->stepped_down);
        if (at >= s->helper_start && met == 0) {
            met = meet(s, at, &entry);
            if (met == 1) break;
        }
        if (at > end || decode_mcu(s, &r, s->pred, out) != 0) {
            atomic_store(&s->helper_need, 0);
            pthread_join(s->helper, NULL);
            s->state = -1;
            return -1;
        }
        place(s, s->mcu, out, NULL);
        s->mcu++;
    }
    s->pos = reader_bit(&r, s->clean);
    long need = met == 1 ? entry + (s->total - s->mcu) : 0;
    atomic_store(&s->helper_need, need);
    pthread_join(s->helper, NULL);
    long decoded = atomic_load(&s->helper_decoded);
    if (met == 1 && decoded >= need && atomic_load(&s->helper_error) < entry) {
        /* Where the picture's last MCU ended, in the helper's parse: past the data, the
         * file was cut short (its zeros parsed in place of the missing bytes). */
        uint64_t last_end = need < decoded ? s->helper_pos[need] : s->helper_end;
        if (last_end > end) { s->state = -1; return -1; }
        /* In step from `entry`: its values are the true ones but for the DC predictors it
         * started from, which the first thread's say. */
        float shift[3];
        for (int c = 0; c < s->ncomp; c++) shift[c] = (float)(s->pred[c] - s->helper_pred[entry][c]) * s->dc_weight[c];
        s->joined_at = s->mcu;
        size_t stride = (size_t)s->blocks * s->vals * s->vals;
        for (long i = entry; i < need; i++) place(s, s->mcu + (i - entry), s->helper_out + (size_t)i * stride, shift);
        s->mcu = s->total;
    } else if (decode_run(s, s->total) != 0 || s->mcu != s->total) {
        s->state = -1;
        return -1;
    }
    return finish(s);
}

long sp_split_joined_at(const sp_split *s, long *total) {
    *total = s->total;
    return s->joined_at;
}

const unsigned char *sp_split_pixels(const sp_split *s, int *width, int *height) {
    *width = s->out_width;
    *height = s->out_height;
    return s->state == 2 ? s->rgb : NULL;
}

void sp_split_free(sp_split *s) {
    if (!s) return;
    for (int c = 0; c < 3; c++) free(s->plane[c]);
    free(s->clean);
    free(s->rgb);
    free(s->cols);
    free(s->helper_pos);
    free(s->helper_pred);
    free(s->helper_out);
    free(s);
}
