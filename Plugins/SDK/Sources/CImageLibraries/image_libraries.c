// The functions of libheif, LibRaw and libtiff that ShutterPipeImaging calls, each defined
// here under its own name and forwarded to the library, which is opened with dlopen the
// first time it is needed (sp_image_library_load). The module maps of CHeif, CLibRaw and
// CTIFF declare the functions and link nothing, so no binary that uses the imaging module
// depends on these libraries at start-up.
#include "image_libraries.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libheif/heif.h>
#include <libraw/libraw.h>
#include <libraw/libraw_version.h>
#include <tiffio.h>

#define SP_STRING_(x) #x
#define SP_STRING(x) SP_STRING_(x)

/// The sonames the headers here were made for, first; then the unversioned name a -dev
/// package adds.
static const char *const sp_names[3][3] = {
    {"libheif.so.1", "libheif.so", NULL},
    {"libraw_r.so." SP_STRING(LIBRAW_SHLIB_CURRENT), "libraw_r.so", NULL},
    {"libtiff.so.6", "libtiff.so", NULL},
};

static void *sp_handles[3];
static char sp_errors[3][512];
static pthread_once_t sp_once[3] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};

static void sp_open(int library) {
    const char *reason = "not found";
    for (const char *const *name = sp_names[library]; *name; name++) {
        void *handle = dlopen(*name, RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            __atomic_store_n(&sp_handles[library], handle, __ATOMIC_RELEASE);
            return;
        }
        reason = dlerror();
    }
    snprintf(sp_errors[library], sizeof sp_errors[library], "%s could not be loaded (%s)", sp_names[library][0],
             reason ? reason : "not found");
}

static void sp_open_heif(void) { sp_open(SP_IMAGE_LIBRARY_HEIF); }
static void sp_open_raw(void) { sp_open(SP_IMAGE_LIBRARY_RAW); }
static void sp_open_tiff(void) { sp_open(SP_IMAGE_LIBRARY_TIFF); }

int sp_image_library_load(sp_image_library library, char *error, size_t size) {
    static void (*const openers[3])(void) = {sp_open_heif, sp_open_raw, sp_open_tiff};
    if ((int)library < 0 || (int)library > 2) return -1;
    pthread_once(&sp_once[library], openers[library]);
    if (__atomic_load_n(&sp_handles[library], __ATOMIC_ACQUIRE)) return 0;
    if (error && size > 0) snprintf(error, size, "%s", sp_errors[library]);
    return -1;
}

/// The function `name` of `library`, which must be loaded: the imaging module loads it
/// before its first call. A missing function is a library unlike the headers: said, and
/// the process ends rather than call through nothing.
static void *sp_symbol(sp_image_library library, const char *name) {
    char error[512];
    if (sp_image_library_load(library, error, sizeof error) != 0) {
        fprintf(stderr, "shutterpipe: %s, needed for %s\n", error, name);
        abort();
    }
    void *found = dlsym(sp_handles[library], name);
    if (!found) {
        fprintf(stderr, "shutterpipe: %s has no %s\n", sp_names[library][0], name);
        abort();
    }
    return found;
}

#define SP_REAL(library, name)                                                          \
    static __typeof__(&name) real;                                                      \
    __typeof__(&name) function = __atomic_load_n(&real, __ATOMIC_ACQUIRE);              \
    if (!function) {                                                                    \
        function = (__typeof__(&name))sp_symbol(library, #name);                        \
        __atomic_store_n(&real, function, __ATOMIC_RELEASE);                            \
    }

#define HEIF(name) SP_REAL(SP_IMAGE_LIBRARY_HEIF, name)
#define RAW(name) SP_REAL(SP_IMAGE_LIBRARY_RAW, name)
#define TIFFLIB(name) SP_REAL(SP_IMAGE_LIBRARY_TIFF, name)

// libheif

struct heif_context *heif_context_alloc(void) { HEIF(heif_context_alloc) return function(); }
void heif_context_free(struct heif_context *context) { HEIF(heif_context_free) function(context); }
struct heif_error heif_context_read_from_file(struct heif_context *context, const char *filename, const struct heif_reading_options *options) {
    HEIF(heif_context_read_from_file) return function(context, filename, options);
}
struct heif_error heif_context_get_primary_image_handle(struct heif_context *context, struct heif_image_handle **handle) {
    HEIF(heif_context_get_primary_image_handle) return function(context, handle);
}
void heif_context_set_maximum_image_size_limit(struct heif_context *context, int maximum_width) {
    HEIF(heif_context_set_maximum_image_size_limit) function(context, maximum_width);
}
struct heif_error heif_decode_image(const struct heif_image_handle *handle, struct heif_image **image, enum heif_colorspace colorspace,
                                    enum heif_chroma chroma, const struct heif_decoding_options *options) {
    HEIF(heif_decode_image) return function(handle, image, colorspace, chroma, options);
}
int heif_image_get_width(const struct heif_image *image, enum heif_channel channel) { HEIF(heif_image_get_width) return function(image, channel); }
int heif_image_get_height(const struct heif_image *image, enum heif_channel channel) { HEIF(heif_image_get_height) return function(image, channel); }
const uint8_t *heif_image_get_plane_readonly(const struct heif_image *image, enum heif_channel channel, int *stride) {
    HEIF(heif_image_get_plane_readonly) return function(image, channel, stride);
}
void heif_image_release(const struct heif_image *image) { HEIF(heif_image_release) function(image); }
int heif_image_handle_get_width(const struct heif_image_handle *handle) { HEIF(heif_image_handle_get_width) return function(handle); }
int heif_image_handle_get_height(const struct heif_image_handle *handle) { HEIF(heif_image_handle_get_height) return function(handle); }
enum heif_color_profile_type heif_image_handle_get_color_profile_type(const struct heif_image_handle *handle) {
    HEIF(heif_image_handle_get_color_profile_type) return function(handle);
}
size_t heif_image_handle_get_raw_color_profile_size(const struct heif_image_handle *handle) {
    HEIF(heif_image_handle_get_raw_color_profile_size) return function(handle);
}
struct heif_error heif_image_handle_get_raw_color_profile(const struct heif_image_handle *handle, void *data) {
    HEIF(heif_image_handle_get_raw_color_profile) return function(handle, data);
}
int heif_image_handle_get_list_of_metadata_block_IDs(const struct heif_image_handle *handle, const char *type, heif_item_id *ids, int count) {
    HEIF(heif_image_handle_get_list_of_metadata_block_IDs) return function(handle, type, ids, count);
}
size_t heif_image_handle_get_metadata_size(const struct heif_image_handle *handle, heif_item_id id) {
    HEIF(heif_image_handle_get_metadata_size) return function(handle, id);
}
struct heif_error heif_image_handle_get_metadata(const struct heif_image_handle *handle, heif_item_id id, void *data) {
    HEIF(heif_image_handle_get_metadata) return function(handle, id, data);
}
void heif_image_handle_release(const struct heif_image_handle *handle) { HEIF(heif_image_handle_release) function(handle); }

// LibRaw

libraw_data_t *libraw_init(unsigned int flags) { RAW(libraw_init) return function(flags); }
int libraw_open_file(libraw_data_t *data, const char *path) { RAW(libraw_open_file) return function(data, path); }
int libraw_unpack(libraw_data_t *data) { RAW(libraw_unpack) return function(data); }
int libraw_unpack_thumb(libraw_data_t *data) { RAW(libraw_unpack_thumb) return function(data); }
int libraw_dcraw_process(libraw_data_t *data) { RAW(libraw_dcraw_process) return function(data); }
libraw_processed_image_t *libraw_dcraw_make_mem_image(libraw_data_t *data, int *error) { RAW(libraw_dcraw_make_mem_image) return function(data, error); }
void libraw_dcraw_clear_mem(libraw_processed_image_t *image) { RAW(libraw_dcraw_clear_mem) function(image); }
const char *libraw_strerror(int error) { RAW(libraw_strerror) return function(error); }
void libraw_close(libraw_data_t *data) { RAW(libraw_close) function(data); }

// libtiff (TIFFGetField and TIFFGetFieldDefaulted are variadic: forwarded through their
// va_list forms)

TIFF *TIFFOpen(const char *path, const char *mode) { TIFFLIB(TIFFOpen) return function(path, mode); }
void TIFFClose(TIFF *tiff) { TIFFLIB(TIFFClose) function(tiff); }
int TIFFReadRGBAImageOriented(TIFF *tiff, uint32_t width, uint32_t height, uint32_t *raster, int orientation, int stop) {
    TIFFLIB(TIFFReadRGBAImageOriented) return function(tiff, width, height, raster, orientation, stop);
}
TIFFErrorHandler TIFFSetWarningHandler(TIFFErrorHandler handler) { TIFFLIB(TIFFSetWarningHandler) return function(handler); }
TIFFErrorHandler TIFFSetErrorHandler(TIFFErrorHandler handler) { TIFFLIB(TIFFSetErrorHandler) return function(handler); }
#define SP_TIFF_GET(name, vname)                                                        \
    int name(TIFF *tiff, uint32_t tag, ...) {                                           \
        TIFFLIB(vname)                                                                  \
        va_list arguments;                                                              \
        va_start(arguments, tag);                                                       \
        int found = function(tiff, tag, arguments);                                     \
        va_end(arguments);                                                              \
        return found;                                                                   \
    }
SP_TIFF_GET(TIFFGetField, TIFFVGetField)
SP_TIFF_GET(TIFFGetFieldDefaulted, TIFFVGetFieldDefaulted)
