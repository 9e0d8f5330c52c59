// The few parts of libmicrohttpd that Swift cannot call itself (variadic functions), and
// the collection of a request's body, so the Swift side sees one call per request. The
// library itself is opened when the first server starts (microhttpd_loader.c).
#ifndef SHUTTERPIPE_WEB_SERVER_H
#define SHUTTERPIPE_WEB_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <microhttpd.h>

/// Called once per request, on the connection's own thread, when its body has arrived.
/// `body_too_large` is set when it was longer than the limit (the body is then cut).
typedef enum MHD_Result (*sp_web_handler)(void *cls, struct MHD_Connection *connection, const char *method, const char *url,
                                          const char *body, size_t body_size, int body_too_large);

/// Opens libmicrohttpd, once (microhttpd_loader.c: it is loaded when a server starts, not
/// with the program). 0, or -1 with `error` naming the library, why, and the package.
int sp_web_load(char *error, size_t error_size);

/// A running server.
struct sp_web;

/// Starts a server on `host` (an IPv4 or IPv6 address) and `port` (0: any free one), one
/// thread per connection, at most `connection_limit` connections and `per_client_limit`
/// per client address. A connection is closed after `timeout_seconds` without traffic,
/// and when a request (headers and body) has not arrived whole `request_seconds` after
/// the connection opened or its previous request ended, however it trickles. Bodies are
/// cut at `body_limit` bytes. NULL on failure, with `error` filled in.
struct sp_web *sp_web_start(const char *host, uint16_t port, unsigned connection_limit, unsigned per_client_limit, unsigned timeout_seconds,
                            unsigned request_seconds, size_t body_limit, sp_web_handler handler, void *cls, char *error, size_t error_size);

/// How many connections were closed so far for sending their request too slowly.
unsigned long sp_web_closed_slow(struct sp_web *web);

/// The connection's socket.
int sp_web_connection_fd(struct MHD_Connection *connection);

/// Bytes written to the socket that the peer has not acknowledged (SIOCOUTQ), or -1.
int sp_web_unsent_bytes(int fd);

/// Whether the peer has closed or reset the connection (without reading from it).
int sp_web_peer_gone(int fd);

/// The port the server listens on.
uint16_t sp_web_port(struct sp_web *web);

/// Stops the server: waits at most `drain_ms` for the responses being answered to be
/// sent, then closes every connection and waits for their threads.
void sp_web_stop(struct sp_web *web, unsigned drain_ms);

/// The client's address, as text, into `buffer`.
void sp_web_client_address(struct MHD_Connection *connection, char *buffer, size_t size);

#endif
