#include "web_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct sp_server {
    sp_web_handler handler;
    void *cls;
    size_t body_limit;
};

struct sp_web {
    struct MHD_Daemon *daemon;
    struct sp_server *server;
};

struct sp_body {
    char *bytes;
    size_t size;
    int too_large;
};

static enum MHD_Result sp_access(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_data_size, void **state) {
    (void)version;
    struct sp_server *server = cls;
    struct sp_body *body = *state;
    if (body == NULL) {  // the headers: the body, if any, comes in the next calls
        body = calloc(1, sizeof *body);
        if (body == NULL) return MHD_NO;
        *state = body;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t room = server->body_limit > body->size ? server->body_limit - body->size : 0;
        size_t take = *upload_data_size < room ? *upload_data_size : room;
        if (take < *upload_data_size) body->too_large = 1;
        if (take > 0) {
            char *grown = realloc(body->bytes, body->size + take + 1);
            if (grown == NULL) return MHD_NO;
            body->bytes = grown;
            memcpy(body->bytes + body->size, upload_data, take);
            body->size += take;
            body->bytes[body->size] = 0;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    return server->handler(server->cls, connection, method, url, body->bytes ? body->bytes : "", body->size, body->too_large);
}

static void sp_completed(void *cls, struct MHD_Connection *connection, void **state, enum MHD_RequestTerminationCode code) {
    (void)cls; (void)connection; (void)code;
    struct sp_body *body = *state;
    if (body) {
        free(body->bytes);
        free(body);
        *state = NULL;
    }
}

struct sp_web *sp_web_start(const char *host, uint16_t port, unsigned connection_limit, unsigned timeout_seconds,
                                size_t body_limit, sp_web_handler handler, void *cls, char *error, size_t error_size) {
    struct sockaddr_storage address;
    memset(&address, 0, sizeof address);
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&address;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&address;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(error, error_size, "'%s' is not an IP address", host);
        return NULL;
    }
    struct sp_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    server->handler = handler;
    server->cls = cls;
    server->body_limit = body_limit;
    unsigned per_client = connection_limit / 4 > 0 ? connection_limit / 4 : 1;
    errno = 0;
    struct MHD_Daemon *daemon = MHD_start_daemon(flags, port, NULL, NULL, sp_access, server,
                                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                                                 MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                                 MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_client,
                                                 MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536,
                                                 MHD_OPTION_NOTIFY_COMPLETED, sp_completed, NULL,
                                                 MHD_OPTION_END);
    if (daemon == NULL) {
        snprintf(error, error_size, "%s", errno ? strerror(errno) : "libmicrohttpd could not start");
        free(server);
        return NULL;
    }
    struct sp_web *web = calloc(1, sizeof *web);
    if (web == NULL) {
        MHD_stop_daemon(daemon);
        free(server);
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    web->daemon = daemon;
    web->server = server;
    return web;
}

uint16_t sp_web_port(struct sp_web *web) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(web->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

void sp_web_stop(struct sp_web *web) {
    MHD_stop_daemon(web->daemon);
    free(web->server);
    free(web);
}

void sp_web_client_address(struct MHD_Connection *connection, char *buffer, size_t size) {
    buffer[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, size);
    else if (address->sa_family == AF_INET6) inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, size);
}
