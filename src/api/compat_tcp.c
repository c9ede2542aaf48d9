/*
 * The record-layer half of libssl's API, for consumers that load with LD_BIND_NOW or share code
 * between TCP and QUIC (nginx calls SSL_set_fd on its QUIC connections too).
 *
 * qtls has no record layer: handshake bytes travel through SSL_provide_quic_data and the
 * SSL_QUIC_METHOD. So the BIOs are only held, with OpenSSL 3.0's ownership rules (SSL_set_bio(3),
 * SSL_set_fd(3)): each slot owns one reference and SSL_free releases them; nothing reads or
 * writes them. Stream I/O, early data, sendfile and renegotiation fail with one error in the
 * queue: "TLS over TCP is not supported" (on a QUIC connection: "should not have been called",
 * the stream data is QUIC's). The async functions answer as OpenSSL does for a connection that
 * never started an async job, which is every qtls connection: no engine can pause it.
 */
#include "internal.h"
#include "base/base.h"
#include "api/api.h"

#include <openssl/async.h>

/* The one error record-layer I/O reports. */
static int no_record_layer(const SSL *s, const char *what)
{
    if (s != NULL && s->quic_method != NULL)
        ERR_raise_data(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED,
                       "%s on a QUIC connection: the stream data is the QUIC stack's", what);
    else
        ERR_raise_data(ERR_LIB_SSL, QTLS_R_TLS_OVER_TCP_UNSUPPORTED, "%s", what);
    return 0;
}

/* ------------------------------------------------------------------ */
/* BIOs                                                                */
/* ------------------------------------------------------------------ */

void compat_free_bios(SSL *s)
{
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
int SSL_set_wfd(SSL *s, int fd)
{
    BIO *r = cold_peek(s)->rbio;
    if (is_socket_on(r, fd)) {
        BIO_up_ref(r);
        SSL_set0_wbio(s, r);
        return 1;
    }
    BIO *b = socket_bio(fd);
    if (b == NULL)
        return 0;
    SSL_set0_wbio(s, b);
    return 1;
}

int SSL_set_rfd(SSL *s, int fd)
{
    BIO *w = cold_peek(s)->wbio;
    if (is_socket_on(w, fd)) {
        BIO_up_ref(w);
        SSL_set0_rbio(s, w);
        return 1;
    }
    BIO *b = socket_bio(fd);
    if (b == NULL)
        return 0;
    SSL_set0_rbio(s, b);
    return 1;
}

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
/* Stream I/O: QUIC streams carry the application data               */
/* ------------------------------------------------------------------ */

/* OpenSSL 3.5's QUIC API reads post-handshake CRYPTO data through SSL_read (quic_tls35.c). */
int SSL_read(SSL *s, void *buf, int num)
{
    return s->tls35 != NULL ? tls35_read(s) : no_record_layer(s, "SSL_read") - 1;
}

int SSL_peek(SSL *s, void *buf, int num)
{
    return s->tls35 != NULL ? tls35_read(s) : no_record_layer(s, "SSL_peek") - 1;
}

int SSL_write(SSL *s, const void *buf, int num) { return no_record_layer(s, "SSL_write") - 1; }

int SSL_read_ex(SSL *s, void *buf, size_t num, size_t *readbytes)
{
    if (readbytes != NULL)
        *readbytes = 0;
    if (s->tls35 != NULL)
        return tls35_read(s) > 0;
    return no_record_layer(s, "SSL_read_ex");
}

int SSL_peek_ex(SSL *s, void *buf, size_t num, size_t *readbytes)
{
    if (readbytes != NULL)
        *readbytes = 0;
    if (s->tls35 != NULL)
        return tls35_read(s) > 0;
    return no_record_layer(s, "SSL_peek_ex");
}

int SSL_write_ex(SSL *s, const void *buf, size_t num, size_t *written)
{
    if (written != NULL)
        *written = 0;
    return no_record_layer(s, "SSL_write_ex");
}

ossl_ssize_t SSL_sendfile(SSL *s, int fd, off_t offset, size_t size, int flags)
{
    return no_record_layer(s, "SSL_sendfile") - 1;
}

/* Nothing is ever buffered for SSL_read: the counts OpenSSL gives an empty record layer. */
int SSL_pending(const SSL *s) { return 0; }

int SSL_has_pending(const SSL *s) { return 0; }

/* 0-RTT over QUIC is the QUIC stack's (SSL_set_quic_early_data_enabled, the 0-RTT secrets). */
int SSL_read_early_data(SSL *s, void *buf, size_t num, size_t *readbytes)
{
    if (readbytes != NULL)
        *readbytes = 0;
    no_record_layer(s, "SSL_read_early_data");
    return SSL_READ_EARLY_DATA_ERROR;
}

int SSL_write_early_data(SSL *s, const void *buf, size_t num, size_t *written)
{
    if (written != NULL)
        *written = 0;
    return no_record_layer(s, "SSL_write_early_data");
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

/* RFC 9001 §6: QUIC updates its keys itself; a TLS KeyUpdate message is forbidden. */
int SSL_key_update(SSL *s, int updatetype)
{
    if (updatetype != SSL_KEY_UPDATE_NOT_REQUESTED && updatetype != SSL_KEY_UPDATE_REQUESTED) {
        ERR_raise(ERR_LIB_SSL, SSL_R_INVALID_KEY_UPDATE_TYPE);
        return 0;
    }
    ERR_raise(ERR_LIB_SSL, QTLS_R_KEY_UPDATE_NOT_ALLOWED);
    return 0;
}

int SSL_get_key_update_type(const SSL *s) { return SSL_KEY_UPDATE_NONE; }

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

/* Read-ahead is a record-layer buffer: meaningless here, never on (docs/limits.md). */
void SSL_set_read_ahead(SSL *s, int yes) {}

int SSL_get_read_ahead(const SSL *s) { return 0; }

/* quictls's OPENSSL_info(OPENSSL_INFO_QUIC) (include/compat/openssl/quic.h). */
const char *qtls_quic_openssl_info(int type)
{
    return type == 2000 ? "QUIC" : OPENSSL_info(type);
}
