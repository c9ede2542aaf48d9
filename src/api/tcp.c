/*
 * libssl's I/O API over TCP, the third front door (transport/record.c is its record layer):
 * the BIOs with OpenSSL 3.0's ownership rules (SSL_set_bio(3), SSL_set_fd(3): each slot owns one
 * reference, SSL_free releases them), SSL_read / SSL_peek / SSL_write with their _ex forms and
 * modes, SSL_shutdown's close_notify exchange, KeyUpdate, and what TLS 1.3 over TCP refuses
 * (renegotiation, kTLS's SSL_sendfile). A connection becomes a TCP one at its first handshake
 * step with BIOs set and no QUIC method (handshake.c, record_attach).
 *
 * On a QUIC connection these calls fail with "should not have been called": the stream data is
 * the QUIC stack's. The async functions answer as OpenSSL does for a connection that never
 * started an async job, which is every qtls connection: no engine can pause it.
 */
#include "internal.h"
#include "base/base.h"
#include "transport/transport.h"
#include "handshake/handshake.h"
#include "api/api.h"

#include <openssl/async.h>

/* Is s a QUIC connection, whose stream data the QUIC stack carries? */
static int is_quic(const SSL *s) { return s->quic_method != NULL && !s->tcp; }

/* The error stream calls report on a QUIC connection. */
static int quic_connection(const char *what)
{
    ERR_raise_data(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED,
                   "%s on a QUIC connection: the stream data is the QUIC stack's", what);
    return 0;
}

/* ------------------------------------------------------------------ */
/* BIOs                                                                */
/* ------------------------------------------------------------------ */

void tcp_free(SSL *s)
{
    record_free(s);
    if (s->cold == NULL)
        return;
    BIO_free_all(s->cold->wbio);
    s->cold->wbio = NULL;
    BIO_free_all(s->cold->rbio);
    s->cold->rbio = NULL;
}

BIO *SSL_get_rbio(const SSL *s) { return cold_peek(s)->rbio; }

BIO *SSL_get_wbio(const SSL *s) { return cold_peek(s)->wbio; }

/* Takes the reference `b` brings, releases the old one; if memory runs out `b` is released. */
static void set0_bio(SSL *s, int write, BIO *b)
{
    struct ssl_cold *k = cold_for(s, b != NULL);
    if (k == NULL) {
        BIO_free_all(b);
        return;
    }
    BIO **slot = write ? &k->wbio : &k->rbio;
    BIO_free_all(*slot);
    *slot = b;
}

/* SSL_set0_rbio(3): takes the caller's reference, releases the old one. */
void SSL_set0_rbio(SSL *s, BIO *rbio) { set0_bio(s, 0, rbio); }

void SSL_set0_wbio(SSL *s, BIO *wbio) { set0_bio(s, 1, wbio); }

/*
 * SSL_set_bio(3)'s rules, asymmetry included: rbio == wbio takes one extra reference; if only
 * the wbio changes one reference is adopted; if only the rbio changes and the two were
 * different one reference is adopted; otherwise both.
 */
void SSL_set_bio(SSL *s, BIO *rbio, BIO *wbio)
{
    if (rbio != NULL && rbio == wbio)
        BIO_up_ref(rbio);
    const struct ssl_cold *k = cold_peek(s);
    if (rbio == k->rbio) {
        SSL_set0_wbio(s, wbio);
        return;
    }
    if (wbio == k->wbio && k->rbio != k->wbio) {
        SSL_set0_rbio(s, rbio);
        return;
    }
    SSL_set0_rbio(s, rbio);
    SSL_set0_wbio(s, wbio);
}

/* A socket BIO on fd that does not close it (SSL_set_fd(3)). */
static BIO *socket_bio(int fd)
{
    BIO *b = BIO_new(BIO_s_socket());
    if (b == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_BUF_LIB);
        return NULL;
    }
    BIO_set_fd(b, fd, BIO_NOCLOSE);
    return b;
}

int SSL_set_fd(SSL *s, int fd)
{
    BIO *b = socket_bio(fd);
    if (b == NULL)
        return 0;
    SSL_set_bio(s, b, b);
    return 1;
}

static int is_socket_on(BIO *b, int fd)
{
    return b != NULL && BIO_method_type(b) == BIO_TYPE_SOCKET && (int)BIO_get_fd(b, NULL) == fd;
}

/* As OpenSSL: the other direction's socket BIO is shared when it is on the same fd. */
static int set_one_fd(SSL *s, int fd, int write)
{
    BIO *other = write ? cold_peek(s)->rbio : cold_peek(s)->wbio;
    BIO *b = other;
    if (is_socket_on(other, fd))
        BIO_up_ref(other);
    else if ((b = socket_bio(fd)) == NULL)
        return 0;
    if (write)
        SSL_set0_wbio(s, b);
    else
        SSL_set0_rbio(s, b);
    return 1;
}

int SSL_set_wfd(SSL *s, int fd) { return set_one_fd(s, fd, 1); }

int SSL_set_rfd(SSL *s, int fd) { return set_one_fd(s, fd, 0); }

static int bio_fd(BIO *b)
{
    int fd = -1;
    BIO *d = BIO_find_type(b, BIO_TYPE_DESCRIPTOR);
    if (d != NULL)
        BIO_get_fd(d, &fd);
    return fd;
}

int SSL_get_rfd(const SSL *s) { return bio_fd(cold_peek(s)->rbio); }

int SSL_get_wfd(const SSL *s) { return bio_fd(cold_peek(s)->wbio); }

int SSL_get_fd(const SSL *s) { return SSL_get_rfd(s); }

/* ------------------------------------------------------------------ */
/* Stream I/O                                                          */
/* ------------------------------------------------------------------ */

/* A call starts with no wait and no I/O failure of an earlier one. */
static void start_call(SSL *s)
{
    s->want_read = 0;
    s->want_write = 0;
    s->syscall_error = 0;
}

/* A failure the engine recorded an alert for: the alert goes out once. */
static int failed(SSL *s)
{
    if (s->alert != 0 && !s->alert_sent)
        quic_send_pending_alert(s);
    if (s->alert != 0)
        s->phase = PHASE_FAILED;
    return -1;
}

/* SSL_read(3) and SSL_peek(3): 1 with *readbytes, 0 after the peer's close_notify, -1. */
static int read_common(SSL *s, void *buf, size_t num, size_t *readbytes, int peek)
{
    *readbytes = 0;
    start_call(s);
    /* The handshake first, as SSL_read does implicitly; after it, a CertificateRequest that
       SSL_verify_client_post_handshake asked for goes out (OpenSSL's SSL_in_init). */
    if (s->phase != PHASE_DONE || pha_in_init(s)) {
        int r = SSL_do_handshake(s);
        if (r <= 0)
            return r;
    }
    if (s->phase == PHASE_FAILED)
        return -1;
    if (num == 0) /* nothing to read into: nothing is read (the handshake has run) */
        return 0;
    for (;;) {
        size_t n = record_take_app(s, buf, num, peek);
        if (n > 0) {
            *readbytes = n;
            return 1;
        }
        if (s->shutdown & SSL_RECEIVED_SHUTDOWN)
            return record_close_notify_received(s) ? 0 : -1;
        /* A NewSessionTicket or KeyUpdate (§4.6) read before: one message at a time. Without
           SSL_MODE_AUTO_RETRY OpenSSL 3.0 ends SSL_read with want-read after each. */
        if (quic_input_pending(s, ssl_encryption_application)) {
            int done =
                hs_process_post_handshake_n(s, (s->mode & SSL_MODE_AUTO_RETRY) ? SIZE_MAX : 1);
            if (done < 0)
                return failed(s);
            if (done > 0 && !(s->mode & SSL_MODE_AUTO_RETRY)) {
                BIO_set_retry_read(SSL_get_rbio(s));
                s->want_read = 1;
                return -1;
            }
        }
        switch (record_next(s)) {
        case REC_APP:
        case REC_AGAIN:
        case REC_HANDSHAKE: /* processed at the top of the loop */
            continue;
        case REC_CLOSED:
        case REC_EOF:
            return 0;
        case REC_WANT:
            return -1;
        case REC_ERROR:
            return failed(s);
        }
    }
}

/* The int forms' return: the count, or what went wrong (<= 0). */
static int as_int(int r, size_t n) { return r > 0 ? (int)n : r; }

/*
 * The read calls' front door: OpenSSL 3.5's QUIC API reads post-handshake CRYPTO data through
 * them (tls35_read), a quictls QUIC connection has no stream data here, and TCP reads records.
 * 1 with *readbytes, 0 or -1 as read_common.
 */
static int read_door(SSL *s, void *buf, size_t num, size_t *readbytes, int peek, const char *fn)
{
    *readbytes = 0;
    if (s->tls35 != NULL)
        return tls35_read(s);
    if (is_quic(s))
        return quic_connection(fn) - 1;
    return read_common(s, buf, num, readbytes, peek);
}

/* The int forms: a negative count is refused, as OpenSSL's. */
static int read_int(SSL *s, void *buf, int num, int peek, const char *fn)
{
    size_t n;
    if (num < 0 && s->tls35 == NULL && !is_quic(s)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_LENGTH);
        return -1;
    }
    int r = read_door(s, buf, num < 0 ? 0 : (size_t)num, &n, peek, fn);
    return as_int(r, n);
}

static int read_ex(SSL *s, void *buf, size_t num, size_t *readbytes, int peek, const char *fn)
{
    size_t n;
    int r = read_door(s, buf, num, &n, peek, fn);
    if (readbytes != NULL)
        *readbytes = r > 0 ? n : 0;
    return r > 0;
}

int SSL_read_ex(SSL *s, void *buf, size_t num, size_t *readbytes)
{
    return read_ex(s, buf, num, readbytes, 0, "SSL_read_ex");
}

int SSL_peek_ex(SSL *s, void *buf, size_t num, size_t *readbytes)
{
    return read_ex(s, buf, num, readbytes, 1, "SSL_peek_ex");
}

int SSL_read(SSL *s, void *buf, int num) { return read_int(s, buf, num, 0, "SSL_read"); }

int SSL_peek(SSL *s, void *buf, int num) { return read_int(s, buf, num, 1, "SSL_peek"); }

/* SSL_write(3): 1 with *written (all of num, or with SSL_MODE_ENABLE_PARTIAL_WRITE at least one
   record's worth), -1 (SSL_get_error says why). */
static int write_common(SSL *s, const void *buf, size_t num, size_t *written)
{
    *written = 0;
    start_call(s);
    if (s->shutdown & SSL_SENT_SHUTDOWN) {
        ERR_raise(ERR_LIB_SSL, SSL_R_PROTOCOL_IS_SHUTDOWN);
        return -1;
    }
    if (s->phase != PHASE_DONE || pha_in_init(s)) {
        int r = SSL_do_handshake(s);
        if (r <= 0)
            return r;
    }
    if (s->phase == PHASE_FAILED)
        return -1;
    int r = record_write_app(s, ssl_encryption_application, buf, num, written);
    if (r < 0)
        return failed(s);
    return r > 0 ? 1 : -1;
}

int SSL_write_ex(SSL *s, const void *buf, size_t num, size_t *written)
{
    size_t n = 0;
    if (s->tls35 != NULL || is_quic(s)) {
        if (written != NULL)
            *written = 0;
        return quic_connection("SSL_write_ex");
    }
    int r = write_common(s, buf, num, &n);
    if (written != NULL)
        *written = n;
    return r > 0;
}

int SSL_write(SSL *s, const void *buf, int num)
{
    size_t n = 0;
    if (s->tls35 != NULL || is_quic(s))
        return quic_connection("SSL_write") - 1;
    if (num < 0) {
        ERR_raise(ERR_LIB_SSL, SSL_R_BAD_LENGTH);
        return -1;
    }
    int r = write_common(s, buf, (size_t)num, &n);
    return as_int(r, n);
}

/* SSL_sendfile needs kernel TLS, which qtls never turns on: OpenSSL's answer without it. */
ossl_ssize_t SSL_sendfile(SSL *s, int fd, off_t offset, size_t size, int flags)
{
    if (is_quic(s) || s->tls35 != NULL)
        return quic_connection("SSL_sendfile") - 1;
    ERR_raise_data(ERR_LIB_SSL, SSL_R_UNINITIALIZED, "SSL_sendfile needs kernel TLS");
    return -1;
}

/* Application data decrypted and not yet read: the rest of the current record. */
int SSL_pending(const SSL *s)
{
    size_t n = record_pending(s);
    return n > INT_MAX ? INT_MAX : (int)n;
}

int SSL_has_pending(const SSL *s) { return record_has_pending(s); }

/* ------------------------------------------------------------------ */
/* Shutdown (§6.1)                                                     */
/* ------------------------------------------------------------------ */

/* After our close_notify: records are read until the peer's; its application data is dropped. */
static int await_close_notify(SSL *s)
{
    uint8_t sink[256];
    for (;;) {
        while (record_take_app(s, sink, sizeof(sink), 0) > 0)
            ;
        switch (record_next(s)) {
        case REC_APP:
        case REC_AGAIN:
            continue;
        case REC_HANDSHAKE:
            if (!hs_process_post_handshake(s))
                return failed(s);
            continue;
        case REC_CLOSED:
            return 1;
        case REC_WANT:
            return -1;
        case REC_EOF:
        case REC_ERROR:
            return failed(s);
        }
    }
}

/*
 * OpenSSL 3.0's ssl3_shutdown over TCP: the first call sends close_notify and returns 0 (1 if the
 * peer's came already); later calls finish writing it, then wait for the peer's (1 once it came,
 * -1 with want-read until then). A quiet shutdown sends nothing.
 */
int tcp_shutdown(SSL *s)
{
    start_call(s);
    if (s->quiet_shutdown) {
        s->shutdown |= SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN;
        return 1;
    }
    if (!(s->shutdown & SSL_SENT_SHUTDOWN)) {
        s->shutdown |= SSL_SENT_SHUTDOWN;
        if (s->phase == PHASE_FAILED)
            return -1;
        if (record_send_close_notify(s) <= 0)
            return -1;
    } else if (record_output_waits(s)) { /* the close_notify went out in part: the rest */
        if (record_flush(s) <= 0)
            return -1;
    } else if (!(s->shutdown & SSL_RECEIVED_SHUTDOWN)) {
        if (await_close_notify(s) <= 0)
            return -1;
    }
    return (s->shutdown & SSL_RECEIVED_SHUTDOWN) ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* 0-RTT (RFC 8446 §4.2.10, §2.3)                                      */
/* ------------------------------------------------------------------ */

/* Server: are we past the client's early data (or was there none to read)? */
static int early_data_over(const SSL *s)
{
    return s->phase == PHASE_DONE ||
           (s->phase == PHASE_HANDSHAKE && s->read_level != ssl_encryption_initial &&
            s->read_level != ssl_encryption_early_data);
}

/*
 * SSL_read_early_data(3), server: a server accepts 0-RTT only when it reads it this way (as
 * OpenSSL's). The handshake runs until early data comes (SUCCESS with it), the client's
 * EndOfEarlyData or a rejection ends it (FINISH), or the transport has no more now (ERROR with
 * want-read); the handshake then completes in SSL_do_handshake or SSL_read.
 */
int SSL_read_early_data(SSL *s, void *buf, size_t num, size_t *readbytes)
{
    if (readbytes != NULL)
        *readbytes = 0;
    if (is_quic(s) || s->tls35 != NULL) {
        quic_connection("SSL_read_early_data");
        return SSL_READ_EARLY_DATA_ERROR;
    }
    if (!s->server || (s->phase != PHASE_BEFORE && !s->early_data_enabled)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
        return SSL_READ_EARLY_DATA_ERROR;
    }
    s->early_data_enabled = 1;
    for (;;) {
        if (record_pending(s) > 0) {
            size_t n = record_take_app(s, buf, num, 0);
            if (readbytes != NULL)
                *readbytes = n;
            return SSL_READ_EARLY_DATA_SUCCESS;
        }
        if (s->phase == PHASE_FAILED)
            return SSL_READ_EARLY_DATA_ERROR;
        if (early_data_over(s))
            return SSL_READ_EARLY_DATA_FINISH;
        int r = SSL_do_handshake(s);
        if (r > 0)
            return SSL_READ_EARLY_DATA_FINISH;
        if (record_pending(s) > 0) /* early data came: the loop returns it */
            continue;
        if (s->phase == PHASE_FAILED || !early_data_over(s))
            return SSL_READ_EARLY_DATA_ERROR; /* failed, or want-read / want-write */
    }
}

/*
 * SSL_write_early_data(3), server: once SSL_read_early_data started the handshake and the
 * server's flight (its Finished) is out, data goes under its application keys before the
 * handshake completes (0.5-RTT, RFC 8446 §2.3), as OpenSSL allows.
 */
static int server_write_early(SSL *s, const void *buf, size_t num, size_t *written)
{
    size_t n = 0;
    if (!s->early_data_enabled || s->phase != PHASE_HANDSHAKE || !record_app_writable(s)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
        return 0;
    }
    start_call(s);
    int r = record_write_app(s, ssl_encryption_application, buf, num, &n);
    if (r < 0)
        return failed(s) + 1;
    if (written != NULL)
        *written = n;
    return r > 0;
}

/*
 * SSL_write_early_data(3), client: with a session whose ticket allows 0-RTT, the first call
 * sends the ClientHello; each call then writes data under the early keys, at most the ticket's
 * max_early_data in all. SSL_connect or SSL_do_handshake completes the handshake, and
 * SSL_get_early_data_status says whether the server took the data.
 */
int SSL_write_early_data(SSL *s, const void *buf, size_t num, size_t *written)
{
    size_t n = 0;
    if (written != NULL)
        *written = 0;
    if (is_quic(s) || s->tls35 != NULL)
        return quic_connection("SSL_write_early_data");
    if (s->server) /* 0.5-RTT data, while the client's early data is being read */
        return server_write_early(s, buf, num, written);
    if (s->phase == PHASE_BEFORE) {
        if (s->server || s->session == NULL || s->session->max_early_data == 0) {
            ERR_raise(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
            return 0;
        }
        s->server = 0;
        s->early_data_enabled = 1;
    }
    if (s->server || !s->early_data_enabled || s->phase == PHASE_DONE) {
        ERR_raise(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
        return 0;
    }
    start_call(s);
    if (!record_early_writable(s)) {
        /* The ClientHello goes out (its early keys come with it); then the engine waits for
           the ServerHello, and the early data can go. */
        s->stop_after_flight = 1;
        (void)SSL_do_handshake(s);
        s->stop_after_flight = 0;
        if (s->phase != PHASE_HANDSHAKE || s->want_write)
            return 0; /* failed, or the ClientHello waits for the wbio: call again */
        s->want_read = 0;
        if (!record_early_writable(s)) { /* the session could not carry 0-RTT after all */
            ERR_raise(ERR_LIB_SSL, s->early_data_reason == ssl_early_data_alpn_mismatch
                                       ? SSL_R_INCONSISTENT_EARLY_DATA_ALPN
                                       : ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED);
            return 0;
        }
    }
    if (num > s->session->max_early_data - record_early_written(s)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_TOO_MUCH_EARLY_DATA);
        return 0;
    }
    int r = record_write_app(s, ssl_encryption_early_data, buf, num, &n);
    if (r < 0)
        return failed(s) + 1;
    if (written != NULL)
        *written = n;
    return r > 0;
}

/* ------------------------------------------------------------------ */
/* Renegotiation and KeyUpdate                                         */
/* ------------------------------------------------------------------ */

/* TLS 1.3 has no renegotiation: OpenSSL answers SSL_R_WRONG_SSL_VERSION on a TLS 1.3 connection. */
int SSL_renegotiate(SSL *s)
{
    ERR_raise(ERR_LIB_SSL, SSL_R_WRONG_SSL_VERSION);
    return 0;
}

int SSL_renegotiate_abbreviated(SSL *s)
{
    ERR_raise(ERR_LIB_SSL, SSL_R_WRONG_SSL_VERSION);
    return 0;
}

int SSL_renegotiate_pending(const SSL *s) { return 0; }

/*
 * §4.6.3 over TCP: the KeyUpdate goes out at the next SSL_write, SSL_do_handshake or SSL_read
 * that writes (OpenSSL 3.0's SSL_key_update(3)). RFC 9001 §6: QUIC updates its keys itself.
 */
int SSL_key_update(SSL *s, int updatetype)
{
    if (updatetype != SSL_KEY_UPDATE_NOT_REQUESTED && updatetype != SSL_KEY_UPDATE_REQUESTED) {
        ERR_raise(ERR_LIB_SSL, SSL_R_INVALID_KEY_UPDATE_TYPE);
        return 0;
    }
    if (is_quic(s) || s->tls35 != NULL) {
        ERR_raise(ERR_LIB_SSL, QTLS_R_KEY_UPDATE_NOT_ALLOWED);
        return 0;
    }
    if (s->phase != PHASE_DONE) {
        ERR_raise(ERR_LIB_SSL, SSL_R_STILL_IN_INIT);
        return 0;
    }
    return record_request_key_update(s, updatetype);
}

int SSL_get_key_update_type(const SSL *s) { return record_pending_key_update(s); }

/* ------------------------------------------------------------------ */
/* Async: no qtls connection ever runs or pauses an async job          */
/* ------------------------------------------------------------------ */

int SSL_waiting_for_async(SSL *s) { return 0; }

/* OpenSSL without a wait context: no fds, success. */
int SSL_get_all_async_fds(SSL *s, OSSL_ASYNC_FD *fds, size_t *numfds)
{
    *numfds = 0;
    return 1;
}

int SSL_get_changed_async_fds(SSL *s, OSSL_ASYNC_FD *addfd, size_t *numaddfds,
                              OSSL_ASYNC_FD *delfd, size_t *numdelfds)
{
    *numaddfds = 0;
    *numdelfds = 0;
    return 1;
}

/* OpenSSL returns 0 when the connection has no wait context, which a qtls one never has. */
int SSL_get_async_status(SSL *s, int *status) { return 0; }

/* Stored and inherited as in OpenSSL; never called, since no job ever pauses (docs/limits.md). */
int SSL_CTX_set_async_callback(SSL_CTX *ctx, SSL_async_callback_fn callback)
{
    ctx->async_cb = callback;
    return 1;
}

int SSL_CTX_set_async_callback_arg(SSL_CTX *ctx, void *arg)
{
    ctx->async_cb_arg = arg;
    return 1;
}

int SSL_set_async_callback(SSL *s, SSL_async_callback_fn callback)
{
    struct ssl_cold *k = cold_for(s, callback != NULL);
    if (k != NULL)
        k->async_cb = callback;
    return k != NULL || callback == NULL;
}

int SSL_set_async_callback_arg(SSL *s, void *arg)
{
    struct ssl_cold *k = cold_for(s, arg != NULL);
    if (k != NULL)
        k->async_cb_arg = arg;
    return k != NULL || arg == NULL;
}

/* ------------------------------------------------------------------ */
/* Settings that only a record layer has                               */
/* ------------------------------------------------------------------ */

/* Read-ahead: over TCP the record layer reads what the rbio has, not record by record. */
void SSL_set_read_ahead(SSL *s, int yes) { s->read_ahead = yes != 0; }

int SSL_get_read_ahead(const SSL *s) { return s->read_ahead; }

/* How much read-ahead asks the rbio for at once: at least one whole record (curl sets 64 KB). */
void SSL_CTX_set_default_read_buffer_len(SSL_CTX *ctx, size_t len) { ctx->read_buffer_len = len; }

void SSL_set_default_read_buffer_len(SSL *s, size_t len)
{
    struct ssl_cold *k = cold_for(s, len != 0);
    if (k != NULL)
        k->read_buffer_len = len;
}

/* quictls's OPENSSL_info(OPENSSL_INFO_QUIC) (include/compat/openssl/quic.h). */
const char *qtls_quic_openssl_info(int type)
{
    return type == 2000 ? "QUIC" : OPENSSL_info(type);
}
