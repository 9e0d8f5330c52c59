#define _GNU_SOURCE  // POLLRDHUP
#include "web_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

// A connection, watched until its request has arrived whole. libmicrohttpd's own timeout
// restarts with every byte, so a client trickling its headers one byte at a time would
// hold its connection (and its thread) for ever; the watchdog shuts down every connection
// whose request is not complete by its deadline, however it trickles.
struct sp_connection {
    int fd;
    int waiting;              // for a request (its headers and body), since `deadline - request_seconds`
    int shut;                 // shut down by the watchdog
    struct timespec deadline; // CLOCK_MONOTONIC
    struct sp_connection *previous, *next;
};

struct sp_server {
    sp_web_handler handler;
    void *cls;
    size_t body_limit;
    unsigned request_seconds;
    pthread_mutex_t lock;     // guards the list, `stopping` and every connection's fields
    pthread_cond_t wake;
    struct sp_connection *connections;
    int stopping;
    unsigned answering;       // requests handed to the handler whose response has not ended
    pthread_cond_t drained;   // signalled when `answering` falls
    pthread_t watchdog;
    int watchdog_started;
    unsigned long closed_slow;
};

static struct timespec sp_in(unsigned seconds) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    now.tv_sec += seconds;
    return now;
}

static int sp_passed(const struct timespec *deadline, const struct timespec *now) {
    return now->tv_sec > deadline->tv_sec || (now->tv_sec == deadline->tv_sec && now->tv_nsec >= deadline->tv_nsec);
}

static struct sp_connection *sp_connection_of(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

// The request has arrived (or, `waiting` 1, the next one may start: its clock starts now).
static void sp_set_waiting(struct sp_server *server, struct MHD_Connection *connection, int waiting) {
    struct sp_connection *watched = sp_connection_of(connection);
    if (watched == NULL) return;
    pthread_mutex_lock(&server->lock);
    watched->waiting = waiting;
    if (waiting) watched->deadline = sp_in(server->request_seconds);
    pthread_mutex_unlock(&server->lock);
}

static void sp_notify(void *cls, struct MHD_Connection *connection, void **context, enum MHD_ConnectionNotificationCode code) {
    struct sp_server *server = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        struct sp_connection *watched = calloc(1, sizeof *watched);
        if (watched == NULL) return;  // unwatched: libmicrohttpd's idle timeout still applies
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        watched->fd = info ? info->connect_fd : -1;
        watched->waiting = 1;
        watched->deadline = sp_in(server->request_seconds);
        pthread_mutex_lock(&server->lock);
        watched->next = server->connections;
        if (server->connections) server->connections->previous = watched;
        server->connections = watched;
        pthread_mutex_unlock(&server->lock);
        *context = watched;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        // Called before libmicrohttpd closes the socket: once unlisted here, the watchdog
        // never touches its descriptor (which the kernel may then give to another file).
        struct sp_connection *watched = *context;
        if (watched == NULL) return;
        pthread_mutex_lock(&server->lock);
        if (watched->previous) watched->previous->next = watched->next;
        else server->connections = watched->next;
        if (watched->next) watched->next->previous = watched->previous;
        pthread_mutex_unlock(&server->lock);
        free(watched);
        *context = NULL;
    }
}

static void *sp_watch(void *cls) {
    struct sp_server *server = cls;
    pthread_mutex_lock(&server->lock);
    while (!server->stopping) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        for (struct sp_connection *watched = server->connections; watched; watched = watched->next) {
            if (watched->waiting && !watched->shut && watched->fd >= 0 && sp_passed(&watched->deadline, &now)) {
                // Its thread, blocked in a read, sees the end and closes the connection.
                shutdown(watched->fd, SHUT_RDWR);
                watched->shut = 1;
                server->closed_slow += 1;
            }
        }
        struct timespec tick;
        clock_gettime(CLOCK_REALTIME, &tick);
        tick.tv_nsec += 250 * 1000 * 1000;
        if (tick.tv_nsec >= 1000000000L) { tick.tv_sec += 1; tick.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&server->wake, &server->lock, &tick);
    }
    pthread_mutex_unlock(&server->lock);
    return NULL;
}

struct sp_web {
    struct MHD_Daemon *daemon;
    struct sp_server *server;
};

struct sp_body {
    char *bytes;
    size_t size;
    int too_large;
    int answering;            // counted in the server's `answering`
};

static void sp_stop_watchdog(struct sp_server *server) {
    if (!server->watchdog_started) return;
    pthread_mutex_lock(&server->lock);
    server->stopping = 1;
    pthread_cond_signal(&server->wake);
    pthread_mutex_unlock(&server->lock);
    pthread_join(server->watchdog, NULL);
    server->watchdog_started = 0;
    pthread_cond_destroy(&server->wake);
    pthread_cond_destroy(&server->drained);
    pthread_mutex_destroy(&server->lock);
}

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
    sp_set_waiting(server, connection, 0);  // the request is whole: answering (a stream, say) has no deadline
    pthread_mutex_lock(&server->lock);
    server->answering += 1;
    body->answering = 1;
    pthread_mutex_unlock(&server->lock);
    return server->handler(server->cls, connection, method, url, body->bytes ? body->bytes : "", body->size, body->too_large);
}

static void sp_completed(void *cls, struct MHD_Connection *connection, void **state, enum MHD_RequestTerminationCode code) {
    (void)code;
    // Kept alive, the connection has as long for its next request as it had for this one.
    if (connection) sp_set_waiting(cls, connection, 1);
    struct sp_body *body = *state;
    if (body && body->answering) {  // its response was sent, or its connection ended
        struct sp_server *server = cls;
        pthread_mutex_lock(&server->lock);
        server->answering -= 1;
        pthread_cond_broadcast(&server->drained);
        pthread_mutex_unlock(&server->lock);
    }
    if (body) {
        free(body->bytes);
        free(body);
        *state = NULL;
    }
}

struct sp_web *sp_web_start(const char *host, uint16_t port, unsigned connection_limit, unsigned per_client_limit, unsigned timeout_seconds,
                            unsigned request_seconds, size_t body_limit, sp_web_handler handler, void *cls, char *error, size_t error_size) {
    if (sp_web_load(error, error_size) != 0) return NULL;
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
    server->request_seconds = request_seconds;
    pthread_mutex_init(&server->lock, NULL);
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_cond_init(&server->wake, &attributes);
    pthread_cond_init(&server->drained, &attributes);
    pthread_condattr_destroy(&attributes);
    if (pthread_create(&server->watchdog, NULL, sp_watch, server) != 0) {
        snprintf(error, error_size, "cannot start the connection watchdog thread");
        free(server);
        return NULL;
    }
    server->watchdog_started = 1;
    unsigned per_client = per_client_limit > 0 ? per_client_limit : 1;
    errno = 0;
    struct MHD_Daemon *daemon = MHD_start_daemon(flags, port, NULL, NULL, sp_access, server,
                                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                                                 MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                                 MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_client,
                                                 MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536,
                                                 MHD_OPTION_NOTIFY_COMPLETED, sp_completed, server,
                                                 MHD_OPTION_NOTIFY_CONNECTION, sp_notify, server,
                                                 MHD_OPTION_END);
    if (daemon == NULL) {
        snprintf(error, error_size, "%s", errno ? strerror(errno) : "libmicrohttpd could not start");
        sp_stop_watchdog(server);
        free(server);
        return NULL;
    }
    struct sp_web *web = calloc(1, sizeof *web);
    if (web == NULL) {
        MHD_stop_daemon(daemon);
        sp_stop_watchdog(server);
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

void sp_web_stop(struct sp_web *web, unsigned drain_ms) {
    // The responses being answered (a shot's answer, say) are sent before the connections
    // close, for at most `drain_ms`; streams end once their source closed.
    struct sp_server *server = web->server;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += drain_ms / 1000;
    deadline.tv_nsec += (long)(drain_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) { deadline.tv_sec += 1; deadline.tv_nsec -= 1000000000L; }
    pthread_mutex_lock(&server->lock);
    while (server->answering > 0) {
        if (pthread_cond_timedwait(&server->drained, &server->lock, &deadline) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&server->lock);
    MHD_stop_daemon(web->daemon);  // every connection closed: the watchdog's list is empty
    sp_stop_watchdog(web->server);
    free(web->server);
    free(web);
}

unsigned long sp_web_closed_slow(struct sp_web *web) {
    pthread_mutex_lock(&web->server->lock);
    unsigned long count = web->server->closed_slow;
    pthread_mutex_unlock(&web->server->lock);
    return count;
}

int sp_web_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

int sp_web_unsent_bytes(int fd) {
    int bytes = 0;
    return ioctl(fd, SIOCOUTQ, &bytes) == 0 ? bytes : -1;
}

int sp_web_peer_gone(int fd) {
    struct pollfd entry = { .fd = fd, .events = POLLRDHUP };
    return poll(&entry, 1, 0) == 1 && (entry.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

void sp_web_client_address(struct MHD_Connection *connection, char *buffer, size_t size) {
    buffer[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, size);
    else if (address->sa_family == AF_INET6) inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, size);
}
