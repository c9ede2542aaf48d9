/*
 * d2i_SSL_SESSION on the input (PEM_read_bio_SSL_SESSION when it starts
 * with "-----BEGIN"); whatever decodes must encode (i2d) to bytes
 * that decode again and re-encode to the same bytes: clients store sessions
 * across processes, so a session that does not survive the round trip is lost
 * resumption at best. Then what a client does with a stored session: the
 * getters (the peer certificate is decoded only when asked for) and
 * SSL_set_session + SSL_do_handshake, which offers it (PSK identity, binder,
 * early data) in a ClientHello.
 */
#include "fuzz_common.h"

#include <stdio.h>

#include <openssl/pem.h>

static unsigned char *encode(const SSL_SESSION *s, int *len)
{
    *len = i2d_SSL_SESSION(s, NULL);
    if (*len <= 0)
        return NULL;
    unsigned char *buf = OPENSSL_malloc((size_t)*len), *p = buf;
    if (buf == NULL)
        abort();
    if (i2d_SSL_SESSION(s, &p) != *len || p != buf + *len) {
        fprintf(stderr, "i2d_SSL_SESSION: length query and encoding disagree\n");
        abort();
    }
    return buf;
}

/* Reads every field an application reads, then offers the session from a 0-RTT client. */
static void use_as_client(SSL_SESSION *s)
{
    const unsigned char *p;
    size_t n;
    unsigned int len;
    unsigned char key[64];
    (void)SSL_SESSION_get0_peer(s);
    (void)SSL_SESSION_is_resumable(s);
    (void)SSL_SESSION_has_ticket(s);
    (void)SSL_SESSION_get_time(s);
    (void)SSL_SESSION_get_timeout(s);
    (void)SSL_SESSION_get_ticket_lifetime_hint(s);
    (void)SSL_SESSION_get_max_early_data(s);
    (void)SSL_SESSION_get_protocol_version(s);
    (void)SSL_SESSION_get0_cipher(s);
    (void)SSL_SESSION_get0_hostname(s);
    (void)SSL_SESSION_get0_id_context(s, &len);
    (void)SSL_SESSION_get_id(s, &len);
    (void)SSL_SESSION_get_master_key(s, key, sizeof(key));
    SSL_SESSION_get0_alpn_selected(s, &p, &n);
    SSL_SESSION_get0_ticket(s, &p, &n);
    SSL_SESSION_get0_ticket_appdata(s, (void **)&p, &n);
    SSL_SESSION_free(SSL_SESSION_dup(s));
    OPENSSL_cleanse(key, sizeof(key));

    struct mock_side side;
    SSL *c = fuzz_ssl_new_cfg(&side, 0, FUZZ_EARLY);
    if (SSL_set_session(c, s)) {
        int r = SSL_do_handshake(c); /* writes the ClientHello, computing the binder */
        int e = SSL_get_error(c, r);
        if (r == 1 || (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_SSL)) {
            fprintf(stderr, "SSL_do_handshake on a stored session: %d, SSL_get_error %d\n", r, e);
            abort();
        }
        (void)SSL_get_early_data_status(c);
    }
    fuzz_side_free(&side);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const unsigned char *p = data;
    SSL_SESSION *s;
    if (size >= 10 && memcmp(data, "-----BEGIN", 10) == 0) {
        BIO *b = BIO_new_mem_buf(data, (int)size);
        s = b != NULL ? PEM_read_bio_SSL_SESSION(b, NULL, NULL, NULL) : NULL;
        BIO_free(b);
        p = data + size;
    } else {
        s = d2i_SSL_SESSION(NULL, &p, (long)size);
    }
    if (s == NULL) {
        ERR_clear_error();
        return 0;
    }
    if (p <= data || p > data + size) {
        fprintf(stderr, "d2i_SSL_SESSION: end pointer outside the input\n");
        abort();
    }
    int len1;
    unsigned char *der1 = encode(s, &len1);
    if (der1 == NULL) {
        fprintf(stderr, "i2d_SSL_SESSION failed on a session d2i accepted\n");
        abort();
    }
    const unsigned char *q = der1;
    SSL_SESSION *s2 = d2i_SSL_SESSION(NULL, &q, len1);
    if (s2 == NULL || q != der1 + len1) {
        fprintf(stderr, "i2d output of a decoded session does not decode (%d bytes)\n", len1);
        abort();
    }
    int len2;
    unsigned char *der2 = encode(s2, &len2);
    if (der2 == NULL || len2 != len1 || memcmp(der1, der2, (size_t)len1) != 0) {
        fprintf(stderr, "i2d(d2i(i2d(s))) != i2d(s)\n");
        abort();
    }
    OPENSSL_free(der1);
    OPENSSL_free(der2);
    SSL_SESSION_free(s2);
    use_as_client(s);
    SSL_SESSION_free(s);
    ERR_clear_error();
    return 0;
}
