/*
 * d2i_SSL_SESSION on the input (PEM_read_bio_SSL_SESSION when it starts
 * with "-----BEGIN"); whatever decodes must encode (i2d) to bytes
 * that decode again and re-encode to the same bytes: clients store sessions
 * across processes, so a session that does not survive the round trip is lost
 * resumption at best.
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
    SSL_SESSION_free(s);
    ERR_clear_error();
    return 0;
}
