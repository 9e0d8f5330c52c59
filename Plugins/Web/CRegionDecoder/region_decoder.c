#include "region_decoder.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

struct sp_region_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
};

static void on_error(j_common_ptr info) {
    struct sp_region_error *error = (struct sp_region_error *)info->err;
    longjmp(error->jump, 1);
}

static void on_message(j_common_ptr info) { (void)info; }  /* warnings: a damaged tail still gives its rows */

int sp_region_decode(const unsigned char *data, size_t size, long long max_pixels, int x, int y, int width, int height,
                     unsigned char *out, char *reason, size_t reason_size) {
    struct jpeg_decompress_struct info;
    struct sp_region_error error;
    unsigned char *volatile row = NULL;
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = on_error;
    error.manager.output_message = on_message;
    if (setjmp(error.jump)) {
        char text[JMSG_LENGTH_MAX];
        (*info.err->format_message)((j_common_ptr)&info, text);
        snprintf(reason, reason_size, "libjpeg: %s", text);
        jpeg_destroy_decompress(&info);
        free(row);
        return -1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, (unsigned long)size);
    jpeg_read_header(&info, TRUE);
    if (info.image_width == 0 || info.image_height == 0 || (long long)info.image_width * info.image_height > max_pixels) {
        snprintf(reason, reason_size, "a picture of %ux%u is over the budget", info.image_width, info.image_height);
        jpeg_destroy_decompress(&info);
        return -1;
    }
    if (x < 0 || y < 0 || width <= 0 || height <= 0 || (long long)x + width > info.image_width || (long long)y + height > info.image_height) {
        snprintf(reason, reason_size, "the rectangle %d,%d %dx%d is outside the picture of %ux%u", x, y, width, height, info.image_width, info.image_height);
        jpeg_destroy_decompress(&info);
        return -1;
    }
    info.out_color_space = JCS_RGB;
    info.dct_method = JDCT_ISLOW;
    info.do_fancy_upsampling = TRUE;
    jpeg_start_decompress(&info);
    if (info.output_components != 3) {
        snprintf(reason, reason_size, "not a picture of three colour components");
        jpeg_abort_decompress(&info);
        jpeg_destroy_decompress(&info);
        return -1;
    }
    /* The columns decoded start at an iMCU boundary at or before x and cover x+width, with
     * one iMCU column more on each side: a column at the crop's edge is upsampled without
     * the chroma beside it (it differs from the whole decode's). */
    int margin = info.max_h_samp_factor * DCTSIZE;
    int from = x > margin ? x - margin : 0;
    int to = x + width + margin < (int)info.image_width ? x + width + margin : (int)info.image_width;
    JDIMENSION left = (JDIMENSION)from, across = (JDIMENSION)(to - from);
    jpeg_crop_scanline(&info, &left, &across);
    row = malloc((size_t)across * 3);
    if (!row) {
        snprintf(reason, reason_size, "out of memory");
        jpeg_abort_decompress(&info);
        jpeg_destroy_decompress(&info);
        return -1;
    }
    /* libjpeg-turbo's skip keeps the upsampling's context: the first row read is the
     * whole decode's (tested against it). */
    if (y > 0) jpeg_skip_scanlines(&info, (JDIMENSION)y);
    size_t offset = (size_t)(x - (int)left) * 3;
    for (int line = 0; line < height; line++) {
        JSAMPROW rows[1] = { row };
        if (jpeg_read_scanlines(&info, rows, 1) != 1) {
            snprintf(reason, reason_size, "the picture ends before row %d", y + line);
            jpeg_abort_decompress(&info);
            jpeg_destroy_decompress(&info);
            free(row);
            return -1;
        }
        memcpy(out + (size_t)line * width * 3, row + offset, (size_t)width * 3);
    }
    /* The rows below are not needed. */
    jpeg_abort_decompress(&info);
    jpeg_destroy_decompress(&info);
    free(row);
    return 0;
}
