/*
 * Signed certificate timestamps (RFC 6962 §3.3) in TLS 1.3 (RFC 8446 §4.4.2.1), with BoringSSL's
 * API: a client asks with an empty signed_certificate_timestamp extension in its ClientHello
 * (SSL_enable_signed_cert_timestamps); a server that was asked and has a list
 * (SSL_set_signed_cert_timestamp_list) puts it, as given, in the leaf's CertificateEntry; the
 * client checks its shape and keeps it (SSL_get0_signed_cert_timestamp_list), in the session too,
 * so that a resumption, which has no Certificate, still answers it. Judging the timestamps
 * against CT logs is the application's business (OpenSSL's CT validation: the end of this file).
 * The extension is one row of extensions.c's table; its functions are here.
 */
#include "internal.h"
#include "base/base.h"
#include "policy/policy.h"

#include <string.h>

#include <openssl/ct.h>

/*
 * RFC 6962 §3.3: SignedCertificateTimestampList { SerializedSCT sct_list <1..2^16-1>; } with
 * SerializedSCT opaque<1..2^16-1>: neither the list nor any SCT may be empty.
 */
static int list_well_formed(struct rd body)
{
    struct rd list, sct;
    if (!rd_vec16(&body, &list) || !rd_empty(&body) || rd_empty(&list))
        return 0;
    while (!rd_empty(&list))
        if (!rd_vec16(&list, &sct) || rd_empty(&sct))
            return 0;
    return 1;
}

/* Copies a well-formed list into *dst (freeing the old one); NULL/0 clears. */
static int set_list(uint8_t **dst, size_t *dst_len, const uint8_t *list, size_t len)
{
    struct rd body;
    rd_init(&body, list, len);
    if (len > 0 && !list_well_formed(body)) {
        ERR_raise_data(ERR_LIB_SSL, QTLS_R_INVALID_SCT_LIST,
                       "not a SignedCertificateTimestampList (RFC 6962 §3.3)");
        return 0;
    }
    uint8_t *copy = len > 0 ? OPENSSL_memdup(list, len) : NULL;
    if (len > 0 && copy == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    OPENSSL_free(*dst);
    *dst = copy;
    *dst_len = len;
    return 1;
}

/* ---- API (BoringSSL's names) ---- */

void SSL_CTX_enable_signed_cert_timestamps(SSL_CTX *ctx) { ctx->sct_requested = 1; }

void SSL_enable_signed_cert_timestamps(SSL *ssl) { ssl->sct_requested = 1; }

int SSL_CTX_set_signed_cert_timestamp_list(SSL_CTX *ctx, const uint8_t *list, size_t list_len)
{
    return set_list(&ctx->sct_list, &ctx->sct_list_len, list, list_len);
}

int SSL_set_signed_cert_timestamp_list(SSL *ssl, const uint8_t *list, size_t list_len)
{
    struct ssl_cold *k = cold_get(ssl);
    return k != NULL && set_list(&k->sct_list, &k->sct_list_len, list, list_len);
}

/*
 * The server's list as received in this handshake or, on a resumption, as kept in the session
 * (BoringSSL's behaviour). *out_len is 0 when there is none.
 */
void SSL_get0_signed_cert_timestamp_list(const SSL *ssl, const uint8_t **out, size_t *out_len)
{
    const struct ssl_cold *k = cold_peek(ssl);
    *out = k->peer_sct_list;
    *out_len = k->peer_sct_list_len;
}

void sct_free(SSL_CTX *ctx, SSL *ssl)
{
    if (ctx != NULL)
        OPENSSL_free(ctx->sct_list);
    if (ssl != NULL && ssl->cold != NULL) {
        OPENSSL_free(ssl->cold->sct_list);
        OPENSSL_free(ssl->cold->peer_sct_list);
    }
}

/* ---- client ---- */

/* The server's list becomes a copy of `list` (none if len is 0), in the cold part (internal.h). */
static int keep_peer_list(SSL *c, const uint8_t *list, size_t len)
{
    struct ssl_cold *k = cold_for(c, len != 0);
    uint8_t *copy = len != 0 ? OPENSSL_memdup(list, len) : NULL;
    if (len != 0 && (k == NULL || copy == NULL)) {
        OPENSSL_free(copy);
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    }
    if (k == NULL)
        return 1;
    OPENSSL_free(k->peer_sct_list);
    k->peer_sct_list = copy;
    k->peer_sct_list_len = len;
    return 1;
}

/* The signed_certificate_timestamp row, ClientHello: the request is empty (RFC 6962 §3.3.1). */
int sct_client_write_request(SSL *c, struct wr *w)
{
    return c->sct_requested ? 1 : EXT_NOT_SENT;
}

/*
 * The row, CertificateEntry: only there when we asked (the split refuses it otherwise). Every
 * entry's must be well formed; only the leaf's is kept, as BoringSSL does.
 */
int sct_client_take_list(SSL *c, const struct rd *body)
{
    if (body == NULL)
        return 1;
    if (!list_well_formed(*body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    if (!c->hs->cert_entry_is_leaf)
        return 1;
    return keep_peer_list(c, body->p, body->n);
}

/* A resumption: the list is the one of the handshake that made the session (or none). */
int sct_adopt_session(SSL *c, const SSL_SESSION *s)
{
    return keep_peer_list(c, s->sct_list, s->sct_list_len);
}

/* ---- server ---- */

/* The row, ClientHello: the request, whose body must be empty (RFC 6962 §3.3.1). */
int sct_server_take_request(SSL *c, const struct rd *body)
{
    c->hs->send_sct = 0;
    if (body == NULL)
        return 1;
    if (!rd_empty(body))
        return qtls_fail(c, SSL_AD_DECODE_ERROR, QTLS_R_DECODE_ERROR);
    c->hs->send_sct = 1;
    return 1;
}

/* The leaf CertificateEntry's extension: the connection's list, else the context's; if asked. */
int sct_server_write_list(SSL *c, struct wr *w)
{
    const struct ssl_cold *k = cold_peek(c);
    const uint8_t *list = k->sct_list != NULL ? k->sct_list : c->ctx->sct_list;
    size_t len = k->sct_list != NULL ? k->sct_list_len : c->ctx->sct_list_len;
    if (!c->server || c->hs == NULL || !c->hs->send_sct || len == 0)
        return EXT_NOT_SENT;
    wr_bytes(w, list, len);
    return 1;
}

/* ---- OpenSSL's serverinfo, for the SCT list ---- */

/*
 * SSL_CTX_use_serverinfo_ex: a sequence of extension blocks the server sends. Version 2 blocks
 * are { uint32 context; uint16 type; opaque data<0..2^16-1>; }, version 1 blocks lack the
 * context, which OpenSSL then sets to TLS 1.2 only. In TLS 1.3 the one block qtls can send is
 * the SCT list in the certificate (type 18 with SSL_EXT_TLS1_3_CERTIFICATE): it becomes the
 * context's list (one for all its certificates, where OpenSSL keeps one per certificate).
 * Blocks for TLS 1.2 only are accepted and never sent, as OpenSSL does in TLS 1.3; another
 * extension for TLS 1.3 fails naming it. The data is checked whole before anything is kept.
 */
#define TLS13_MESSAGES                                                                             \
    (SSL_EXT_TLS1_3_SERVER_HELLO | SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS |                           \
     SSL_EXT_TLS1_3_HELLO_RETRY_REQUEST | SSL_EXT_TLS1_3_CERTIFICATE |                             \
     SSL_EXT_TLS1_3_NEW_SESSION_TICKET | SSL_EXT_TLS1_3_CERTIFICATE_REQUEST)

int SSL_CTX_use_serverinfo_ex(SSL_CTX *ctx, unsigned int version, const unsigned char *serverinfo,
                              size_t serverinfo_length)
{
    struct rd all, block_data, sct = {NULL, 0};
    uint32_t context = SSL_EXT_TLS1_2_AND_BELOW_ONLY;
    uint16_t type;
    if (ctx == NULL || serverinfo == NULL || serverinfo_length == 0 ||
        (version != SSL_SERVERINFOV1 && version != SSL_SERVERINFOV2)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT);
        return 0;
    }
    rd_init(&all, serverinfo, serverinfo_length);
    while (!rd_empty(&all)) {
        if ((version == SSL_SERVERINFOV2 && !rd_u32(&all, &context)) || !rd_u16(&all, &type) ||
            !rd_vec16(&all, &block_data)) {
            ERR_raise(ERR_LIB_SSL, SSL_R_INVALID_SERVERINFO_DATA);
            return 0;
        }
        if ((context & SSL_EXT_TLS1_2_AND_BELOW_ONLY) || !(context & TLS13_MESSAGES))
            continue; /* never sent in TLS 1.3 */
        if (type != TLSEXT_TYPE_signed_certificate_timestamp ||
            (context & TLS13_MESSAGES) != SSL_EXT_TLS1_3_CERTIFICATE) {
            ERR_raise_data(ERR_LIB_SSL, QTLS_R_NOT_IMPLEMENTED,
                           "serverinfo for extension %u, context 0x%x, is not implemented by qtls "
                           "(only the SCT list in the certificate is)",
                           type, (unsigned)context);
            return 0;
        }
        sct = block_data;
    }
    return sct.p == NULL || set_list(&ctx->sct_list, &ctx->sct_list_len, sct.p, sct.n);
}

int SSL_CTX_use_serverinfo(SSL_CTX *ctx, const unsigned char *serverinfo, size_t serverinfo_length)
{
    return SSL_CTX_use_serverinfo_ex(ctx, SSL_SERVERINFOV1, serverinfo, serverinfo_length);
}

int SSL_CTX_use_serverinfo_file(SSL_CTX *ctx, const char *file)
{
    return qtls_not_implemented("SSL_CTX_use_serverinfo_file (SSL_CTX_use_serverinfo_ex is)");
}

/* ---- OpenSSL's CT API ---- */

/*
 * OpenSSL's Certificate Transparency validation (SCTs from the extension, the stapled OCSP
 * response and the certificate, checked against a CTLOG_STORE, then judged by a policy callback)
 * is not implemented: asking for it fails with an error naming it, rather than connecting
 * unvalidated. Turning it off (a NULL callback) and the queries answer "off". BoringSSL's raw
 * list API above is how a qtls application gets the SCTs.
 */
int SSL_CTX_set_ct_validation_callback(SSL_CTX *ctx, ssl_ct_validation_cb callback, void *arg)
{
    return callback == NULL ||
           qtls_not_implemented("SSL_CTX_set_ct_validation_callback (CT validation)");
}

int SSL_set_ct_validation_callback(SSL *s, ssl_ct_validation_cb callback, void *arg)
{
    return callback == NULL ||
           qtls_not_implemented("SSL_set_ct_validation_callback (CT validation)");
}

int SSL_CTX_enable_ct(SSL_CTX *ctx, int validation_mode)
{
    return qtls_not_implemented("SSL_CTX_enable_ct (CT validation)");
}

int SSL_enable_ct(SSL *s, int validation_mode)
{
    return qtls_not_implemented("SSL_enable_ct (CT validation)");
}

int SSL_CTX_ct_is_enabled(const SSL_CTX *ctx) { return 0; }

int SSL_ct_is_enabled(const SSL *s) { return 0; }

const STACK_OF(SCT) *SSL_get0_peer_scts(SSL *s) { return NULL; }

int SSL_CTX_set_default_ctlog_list_file(SSL_CTX *ctx)
{
    return qtls_not_implemented("SSL_CTX_set_default_ctlog_list_file (CT validation)");
}

int SSL_CTX_set_ctlog_list_file(SSL_CTX *ctx, const char *path)
{
    return qtls_not_implemented("SSL_CTX_set_ctlog_list_file (CT validation)");
}

/* OpenSSL takes ownership of the store; qtls, which has no use for it, frees it. */
void SSL_CTX_set0_ctlog_store(SSL_CTX *ctx, CTLOG_STORE *logs) { CTLOG_STORE_free(logs); }

const CTLOG_STORE *SSL_CTX_get0_ctlog_store(const SSL_CTX *ctx) { return NULL; }
