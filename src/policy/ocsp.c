/*
 * OCSP stapling in TLS 1.3 (RFC 8446 §4.4.2.1, RFC 6066 §8), both roles,
 * with OpenSSL's API: SSL_set_tlsext_status_type makes a client send
 * status_request; the server's status callback (SSL_CTX_set_tlsext_status_cb)
 * hands over a DER OCSPResponse with SSL_set_tlsext_status_ocsp_resp, which
 * travels in the leaf's CertificateEntry; the client's status callback sees
 * it through SSL_get_tlsext_status_ocsp_resp and may fail the handshake.
 */
#include "internal.h"
#include "base/base.h"
#include "policy/policy.h"

#include <string.h>

#define OCSP_RESPONSE_MAX 0xffffff /* opaque OCSPResponse<1..2^24-1> */

/* ---- API helpers (ctx.c, ssl.c ctrl) ---- */

/* Only "nothing" (-1) and OCSP exist in TLS 1.3; anything else would be silently not sent. */
int ocsp_set_status_type(int *type, long v)
{
    if (v != TLSEXT_STATUSTYPE_ocsp && v != -1) {
        ERR_raise_data(ERR_LIB_SSL, SSL_R_UNSUPPORTED_STATUS_TYPE, "status type %ld", v);
        return 0;
    }
    *type = (int)v;
    return 1;
}

/* Takes ownership of resp (OPENSSL_malloc'ed), as OpenSSL does, also on failure. */
long ocsp_set_response(SSL *s, unsigned char *resp, long len)
{
    if ((resp == NULL) != (len == 0) || len < 0 || len > OCSP_RESPONSE_MAX) {
        OPENSSL_free(resp);
        ERR_raise_data(ERR_LIB_SSL, SSL_R_BAD_LENGTH, "OCSP response of %ld bytes", len);
        return 0;
    }
    struct ssl_cold *k = cold_for(s, resp != NULL);
    if (k == NULL) {
        OPENSSL_free(resp);
        return resp == NULL;
    }
    OPENSSL_free(k->ocsp_resp);
    k->ocsp_resp = resp;
    k->ocsp_resp_len = (size_t)len;
    return 1;
}

/* The response's length and bytes; -1 (and NULL) when there is none. */
long ocsp_get_response(const SSL *s, const unsigned char **out)
{
    const struct ssl_cold *k = cold_peek(s);
    *out = k->ocsp_resp;
    return k->ocsp_resp != NULL ? (long)k->ocsp_resp_len : -1;
}

/* ---- client ---- */

/*
 * The status_request row, ClientHello (RFC 6066 §8): CertificateStatusRequest { ocsp,
 * OCSPStatusRequest with empty lists }.
 */
int ocsp_client_write_request(SSL *c, struct wr *w)
{
    if (c->status_type != TLSEXT_STATUSTYPE_ocsp)
        return EXT_NOT_SENT;
    wr_u8(w, TLSEXT_STATUSTYPE_ocsp);
    wr_u16(w, 0); /* responder_id_list: the responders the server knows */
    wr_u16(w, 0); /* request_extensions */
    return 1;
}

/*
 * The status_request row, CertificateEntry (RFC 8446 §4.4.2.1): struct { CertificateStatusType
 * status_type; opaque OCSPResponse<1..2^24-1>; }. Only the leaf's is kept, as OpenSSL does.
 */
int ocsp_client_take_response(SSL *c, const struct rd *b)
{
    struct rd body, resp;
    uint8_t type;
    if (b == NULL)
        return 1;
    body = *b;
    if (!rd_u8(&body, &type) || !rd_vec24(&body, &resp) || !rd_empty(&body) || rd_empty(&resp))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, SSL_R_LENGTH_MISMATCH);
    if (type != TLSEXT_STATUSTYPE_ocsp)
        return qtls_fail(c, SSL_AD_DECODE_ERROR, SSL_R_UNSUPPORTED_STATUS_TYPE);
    if (!c->hs->cert_entry_is_leaf)
        return 1;
    unsigned char *copy = OPENSSL_memdup(resp.p, resp.n);
    if (copy == NULL)
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    return ocsp_set_response(c, copy, (long)resp.n) ||
           qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_INTERNAL_ERROR);
}

/*
 * A status callback that said no: OpenSSL's reason first (what ERR_get_error returns), then one
 * reason common to both roles naming the callback and its answer (BoringSSL's OCSP_CB_ERROR).
 */
static int status_cb_refused(SSL *c, int alert, int reason, int answer)
{
    qtls_fail(c, alert, reason);
    ERR_raise_data(ERR_LIB_SSL, QTLS_R_OCSP_CB_ERROR, "the status callback returned %d", answer);
    return 0;
}

/* After the server's certificate is proven: the callback judges the (possibly absent) status. */
int ocsp_client_run_cb(SSL *c)
{
    SSL_CTX *ctx = c->ctx;
    if (c->status_type != TLSEXT_STATUSTYPE_ocsp || ctx->status_cb == NULL)
        return 1;
    int r = ctx->status_cb(c, ctx->status_arg);
    if (r == 0)
        return status_cb_refused(c, SSL_AD_BAD_CERTIFICATE_STATUS_RESPONSE,
                                 SSL_R_INVALID_STATUS_RESPONSE, r);
    if (r < 0)
        return status_cb_refused(c, SSL_AD_INTERNAL_ERROR, SSL_R_OCSP_CALLBACK_FAILURE, r);
    return 1;
}

/* ---- server ---- */

/* A list of opaque<1..2^16-1> items inside a <0..2^16-1> vector (RFC 6066 §8). */
static int items_well_formed(struct rd *body)
{
    struct rd list, item;
    if (!rd_vec16(body, &list))
        return 0;
    while (!rd_empty(&list))
        if (!rd_vec16(&list, &item) || rd_empty(&item))
            return 0;
    return 1;
}

/* The status_request row, ClientHello: OCSP noted, other types ignored (RFC 6066 §8). */
int ocsp_server_take_request(SSL *c, const struct rd *b)
{
    struct rd body;
    uint8_t type;
    c->status_type = -1;
    if (b == NULL)
        return 1;
    body = *b;
    if (!rd_u8(&body, &type))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    if (type != TLSEXT_STATUSTYPE_ocsp)
        return 1;
    struct rd exts;
    if (!items_well_formed(&body) || !rd_vec16(&body, &exts) || !rd_empty(&body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    c->status_type = TLSEXT_STATUSTYPE_ocsp;
    return 1;
}

/*
 * With the certificate chosen: asks the status callback for a response. OK staples what it set,
 * NOACK staples nothing, anything else fails the handshake with internal_error (as OpenSSL).
 */
int ocsp_server_run_cb(SSL *c)
{
    SSL_CTX *ctx = c->ctx;
    c->hs->staple_ocsp = 0;
    if (c->status_type != TLSEXT_STATUSTYPE_ocsp || ctx->status_cb == NULL)
        return 1;
    int r = ctx->status_cb(c, ctx->status_arg);
    switch (r) {
    case SSL_TLSEXT_ERR_OK:
        c->hs->staple_ocsp = cold_peek(c)->ocsp_resp != NULL;
        return 1;
    case SSL_TLSEXT_ERR_NOACK:
        return 1;
    default:
        return status_cb_refused(c, SSL_AD_INTERNAL_ERROR, SSL_R_CLIENTHELLO_TLSEXT, r);
    }
}

/* The status_request row, the leaf CertificateEntry (RFC 8446 §4.4.2.1), when stapling. */
int ocsp_server_write_response(SSL *c, struct wr *w)
{
    if (!c->server || c->hs == NULL || !c->hs->staple_ocsp)
        return EXT_NOT_SENT;
    wr_u8(w, TLSEXT_STATUSTYPE_ocsp);
    size_t resp = wr_open_vec(w, 3);
    wr_bytes(w, c->cold->ocsp_resp, c->cold->ocsp_resp_len); /* staple_ocsp: it exists */
    wr_close_vec(w, resp, 3);
    return 1;
}
