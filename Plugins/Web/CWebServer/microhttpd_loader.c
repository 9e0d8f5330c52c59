// The functions of libmicrohttpd that the web plugin calls, each defined here under its own
// name and forwarded to the library, which is opened with dlopen when a server starts
// (sp_web_load). The target links nothing of it, so a shutterpipe that serves no page
// does not load libmicrohttpd and the ten libraries it brings (GnuTLS, Nettle, GMP, p11-kit
// and the rest) at every start: a C program that only links them takes 2.1 ms to start
// against 0.7 ms.
#include "web_server.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/// The soname the header here was made for, first; then the unversioned name the -dev
/// package adds.
static const char *const sp_names[] = {"libmicrohttpd.so.12", "libmicrohttpd.so", NULL};

static void *sp_handle;
static char sp_error[512];
static pthread_once_t sp_once = PTHREAD_ONCE_INIT;

static void sp_open(void) {
    const char *reason = "not found";
    for (const char *const *name = sp_names; *name; name++) {
        void *handle = dlopen(*name, RTLD_NOW | RTLD_LOCAL);
        if (handle) {
            __atomic_store_n(&sp_handle, handle, __ATOMIC_RELEASE);
            return;
        }
        reason = dlerror();
    }
    snprintf(sp_error, sizeof sp_error, "%s could not be loaded (%s): install the package libmicrohttpd12", sp_names[0],
             reason ? reason : "not found");
}

int sp_web_load(char *error, size_t error_size) {
    pthread_once(&sp_once, sp_open);
    if (__atomic_load_n(&sp_handle, __ATOMIC_ACQUIRE)) return 0;
    if (error && error_size > 0) snprintf(error, error_size, "%s", sp_error);
    return -1;
}

/// The function `name`: the library is loaded before a server starts, and nothing here is
/// called without a server. A missing function is a library unlike the header: said, and
/// the process ends rather than call through nothing.
static void *sp_symbol(const char *name) {
    char error[512];
    if (sp_web_load(error, sizeof error) != 0) {
        fprintf(stderr, "shutterpipe: %s, needed for %s\n", error, name);
        abort();
    }
    void *found = dlsym(sp_handle, name);
    if (!found) {
        fprintf(stderr, "shutterpipe: %s has no %s\n", sp_names[0], name);
        abort();
    }
    return found;
}

#define SP_REAL(name)                                                       \
    static __typeof__(&name) real;                                          \
    __typeof__(&name) function = __atomic_load_n(&real, __ATOMIC_ACQUIRE);  \
    if (!function) {                                                        \
        function = (__typeof__(&name))sp_symbol(#name);                     \
        __atomic_store_n(&real, function, __ATOMIC_RELEASE);                \
    }

// Variadic in the library: the options go on as a va_list (MHD_start_daemon_va), and the
// info calls take no argument after the type for the types asked here.

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
                                    MHD_AccessHandlerCallback dh, void *dh_cls, ...) {
    SP_REAL(MHD_start_daemon_va)
    va_list options;
    va_start(options, dh_cls);
    struct MHD_Daemon *daemon = function(flags, port, apc, apc_cls, dh, dh_cls, options);
    va_end(options);
    return daemon;
}

const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection, enum MHD_ConnectionInfoType info_type, ...) {
    SP_REAL(MHD_get_connection_info) return function(connection, info_type);
}

const union MHD_DaemonInfo *MHD_get_daemon_info(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType info_type, ...) {
    SP_REAL(MHD_get_daemon_info) return function(daemon, info_type);
}

void MHD_stop_daemon(struct MHD_Daemon *daemon) { SP_REAL(MHD_stop_daemon) function(daemon); }

// What the plugin's Swift side calls.

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header, const char *content) {
    SP_REAL(MHD_add_response_header) return function(response, header, content);
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code, struct MHD_Response *response) {
    SP_REAL(MHD_queue_response) return function(connection, status_code, response);
}

int MHD_get_connection_values(struct MHD_Connection *connection, enum MHD_ValueKind kind, MHD_KeyValueIterator iterator, void *iterator_cls) {
    SP_REAL(MHD_get_connection_values) return function(connection, kind, iterator, iterator_cls);
}

void MHD_destroy_response(struct MHD_Response *response) { SP_REAL(MHD_destroy_response) function(response); }

struct MHD_Response *MHD_create_response_from_callback(uint64_t size, size_t block_size, MHD_ContentReaderCallback crc, void *crc_cls,
                                                       MHD_ContentReaderFreeCallback crfc) {
    SP_REAL(MHD_create_response_from_callback) return function(size, block_size, crc, crc_cls, crfc);
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode) {
    SP_REAL(MHD_create_response_from_buffer) return function(size, buffer, mode);
}
