/*
 * Sessions: the SSL_SESSION object and its accessors; the one session
 * encoding, used both for the plaintext the server seals into tickets and for
 * i2d/d2i_SSL_SESSION and the PEM forms (clients that keep sessions on disk);
 * and the SSL/SSL_CTX calls that configure and report resumption.
 *
 * qtls keeps no session cache. TLS 1.3 tickets are stateless on the server
 * (ticket.c), and a client gets each session through SSL_CTX_sess_set_new_cb
 * and offers it again with SSL_set_session. The cache calls of OpenSSL's API
 * are accepted, report an empty cache, and say so where they are defined.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "session/session.h"

#include <limits.h>
#include <string.h>

#include <openssl/pem.h>

/* OpenSSL's defaults: SSL_SESSION_new's 5 minutes (+4 s) and tls1_default_timeout's 2 hours. */
#define SESSION_NEW_TIMEOUT 304
#define DEFAULT_TIMEOUT 7200
/* RFC 8446 §4.6.1: servers MUST NOT use any value greater than 604800 seconds (7 days). */
#define MAX_TICKET_LIFETIME 604800

/* ------------------------------------------------------------------ */
/* Lifetime                                                            */
/* ------------------------------------------------------------------ */

SSL_SESSION *SSL_SESSION_new(void)
{
    /* As libssl: a session may be the first object a program makes (d2i at start-up). */
    if (!OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS, NULL))
        return NULL;
    SSL_SESSION *s = OPENSSL_zalloc(sizeof(*s));
    if (s == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    s->references = 1;
    s->time = clock_now_seconds();
    s->timeout = SESSION_NEW_TIMEOUT;
    /* OpenSSL's choice: not X509_V_OK, so that an unfilled session never reads as verified. */
    s->verify_result = 1;
    if (!CRYPTO_new_ex_data(CRYPTO_EX_INDEX_SSL_SESSION, s, &s->ex_data)) {
        OPENSSL_free(s);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    return s;
}

/* Frees everything the session owns except its ex_data. */
static void session_clear(SSL_SESSION *s)
{
    secret_wipe(&s->psk);
    OPENSSL_free(s->ticket);
    OPENSSL_free(s->hostname);
    OPENSSL_free(s->appdata);
    OPENSSL_free(s->early_context);
    OPENSSL_free(s->peer_der);
    X509_free(s->peer);
    OPENSSL_free(s->sct_list);
}

void SSL_SESSION_free(SSL_SESSION *s)
{
    if (s == NULL || __atomic_sub_fetch(&s->references, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    /* ex_data first: free callbacks may still look at the session. */
    CRYPTO_free_ex_data(CRYPTO_EX_INDEX_SSL_SESSION, s, &s->ex_data);
    session_clear(s);
    OPENSSL_clear_free(s, sizeof(*s));
}

int SSL_SESSION_up_ref(SSL_SESSION *s)
{
    __atomic_add_fetch(&s->references, 1, __ATOMIC_RELAXED);
    return 1;
}

/* Replaces *dst with a copy of n bytes (n == 0 clears). 1 on success, 0 (error queued) else. */
static int replace_bytes(uint8_t **dst, size_t *dst_len, const void *p, size_t n)
{
    uint8_t *copy = NULL;
    if (p != NULL && n > 0 && (copy = OPENSSL_memdup(p, n)) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    OPENSSL_free(*dst);
    *dst = copy;
    *dst_len = copy != NULL ? n : 0;
    return 1;
}

static int replace_string(char **dst, const char *p, size_t n)
{
    char *copy = NULL;
    if (p != NULL && (copy = OPENSSL_strndup(p, n)) == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    OPENSSL_free(*dst);
    *dst = copy;
    return 1;
}

/*
 * dst (fresh) names src's peer leaf: its DER copied, its decode shared. src's
 * decode is read once, atomically: another thread may be setting it (session_peer).
 */
static int copy_peer(SSL_SESSION *dst, const SSL_SESSION *src)
{
    X509 *x = __atomic_load_n(&src->peer, __ATOMIC_ACQUIRE);
    if (!replace_bytes(&dst->peer_der, &dst->peer_der_len, src->peer_der, src->peer_der_len) ||
        (x != NULL && !X509_up_ref(x)))
        return 0;
    dst->peer = x;
    return 1;
}

/* A deep copy with fresh references; ex_data is duplicated through the registered dup callbacks. */
SSL_SESSION *SSL_SESSION_dup(const SSL_SESSION *src)
{
    SSL_SESSION *d = SSL_SESSION_new();
    if (d == NULL)
        return NULL;
    d->cipher = src->cipher;
    d->psk = src->psk;
    d->time = src->time;
    d->timeout = src->timeout;
    d->age_add = src->age_add;
    d->max_early_data = src->max_early_data;
    memcpy(d->alpn, src->alpn, sizeof(d->alpn));
    d->alpn_len = src->alpn_len;
    memcpy(d->sid_ctx, src->sid_ctx, sizeof(d->sid_ctx));
    d->sid_ctx_len = src->sid_ctx_len;
    memcpy(d->id, src->id, sizeof(d->id));
    d->id_len = src->id_len;
    d->verify_result = src->verify_result;
    d->not_resumable = src->not_resumable;
    if (!copy_peer(d, src) ||
        !replace_bytes(&d->ticket, &d->ticket_len, src->ticket, src->ticket_len) ||
        !replace_bytes(&d->appdata, &d->appdata_len, src->appdata, src->appdata_len) ||
        !replace_bytes(&d->early_context, &d->early_context_len, src->early_context,
                       src->early_context_len) ||
        !replace_bytes(&d->sct_list, &d->sct_list_len, src->sct_list, src->sct_list_len) ||
        (src->hostname != NULL &&
         !replace_string(&d->hostname, src->hostname, strlen(src->hostname))) ||
        !CRYPTO_dup_ex_data(CRYPTO_EX_INDEX_SSL_SESSION, &d->ex_data, &src->ex_data)) {
        SSL_SESSION_free(d);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    return d;
}

/* ------------------------------------------------------------------ */
/* Accessors (OpenSSL 3.0 prototypes)                                  */
/* ------------------------------------------------------------------ */

static long clamp_long(uint64_t v) { return v > LONG_MAX ? LONG_MAX : (long)v; }

long SSL_SESSION_get_time(const SSL_SESSION *s) { return s == NULL ? 0 : clamp_long(s->time); }

/* OpenSSL returns t; a time before the epoch is refused here, since times are unsigned. */
long SSL_SESSION_set_time(SSL_SESSION *s, long t)
{
    if (s == NULL || t < 0)
        return 0;
    s->time = (uint64_t)t;
    return t;
}

long SSL_SESSION_get_timeout(const SSL_SESSION *s)
{
    return s == NULL ? 0 : clamp_long(s->timeout);
}

long SSL_SESSION_set_timeout(SSL_SESSION *s, long t)
{
    if (s == NULL || t < 0)
        return 0;
    s->timeout = (uint64_t)t;
    return 1;
}

/* Every qtls session is a TLS 1.3 one. */
int SSL_SESSION_get_protocol_version(const SSL_SESSION *s) { return TLS1_3_VERSION; }

int SSL_SESSION_set_protocol_version(SSL_SESSION *s, int version)
{
    if (version != TLS1_3_VERSION) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNSUPPORTED_SSL_VERSION);
        return 0;
    }
    return 1;
}

const SSL_CIPHER *SSL_SESSION_get0_cipher(const SSL_SESSION *s) { return s->cipher; }

static int known_suite(const SSL_CIPHER *cipher)
{
    for (size_t i = 0; i < QTLS_NUM_SUITES; i++)
        if (cipher == &qtls_suites[i])
            return 1;
    return 0;
}

int SSL_SESSION_set_cipher(SSL_SESSION *s, const SSL_CIPHER *cipher)
{
    /* Only qtls's own suite objects: the handshake reads the hash from it. */
    if (cipher != NULL && !known_suite(cipher)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_UNKNOWN_CIPHER_TYPE);
        return 0;
    }
    s->cipher = cipher;
    return 1;
}

/* A TLS 1.3 session can be offered only with its ticket, and only with its suite's hash. */
int SSL_SESSION_is_resumable(const SSL_SESSION *s)
{
    return s->ticket_len > 0 && s->not_resumable == 0 && s->cipher != NULL;
}

uint32_t SSL_SESSION_get_max_early_data(const SSL_SESSION *s) { return s->max_early_data; }

int SSL_SESSION_set_max_early_data(SSL_SESSION *s, uint32_t max_early_data)
{
    s->max_early_data = max_early_data;
    return 1;
}

/* The encoding carries appdata in a 24-bit vector; OpenSSL's 3.0 semantics otherwise. */
int SSL_SESSION_set1_ticket_appdata(SSL_SESSION *ss, const void *data, size_t len)
{
    if (data != NULL && len > 0xffffff) {
        ERR_raise(ERR_LIB_SSL, SSL_R_LENGTH_TOO_LONG);
        return 0;
    }
    return replace_bytes(&ss->appdata, &ss->appdata_len, data, data != NULL ? len : 0);
}

int SSL_SESSION_get0_ticket_appdata(SSL_SESSION *ss, void **data, size_t *len)
{
    *data = ss->appdata;
    *len = ss->appdata_len;
    return 1;
}

const char *SSL_SESSION_get0_hostname(const SSL_SESSION *s) { return s->hostname; }

/* NULL clears. RFC 6066 HostName<1..2^16-1>: an empty name cannot have been sent. */
int SSL_SESSION_set1_hostname(SSL_SESSION *s, const char *hostname)
{
    size_t n = hostname != NULL ? strlen(hostname) : 0;
    if (hostname != NULL && (n == 0 || n > 0xffff)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_SSL3_EXT_INVALID_SERVERNAME);
        return 0;
    }
    return replace_string(&s->hostname, hostname, n);
}

void SSL_SESSION_get0_alpn_selected(const SSL_SESSION *s, const unsigned char **alpn, size_t *len)
{
    *alpn = s->alpn_len > 0 ? s->alpn : NULL;
    *len = s->alpn_len;
}

/* One protocol name (not a list): ProtocolName<1..2^8-1>. NULL or 0 clears. */
int SSL_SESSION_set1_alpn_selected(SSL_SESSION *s, const unsigned char *alpn, size_t len)
{
    if (alpn == NULL)
        len = 0;
    if (len > 255) {
        ERR_raise(ERR_LIB_SSL, SSL_R_LENGTH_TOO_LONG);
        return 0;
    }
    if (len > 0)
        memmove(s->alpn, alpn, len);
    s->alpn_len = len;
    return 1;
}

X509 *SSL_SESSION_get0_peer(SSL_SESSION *s) { return session_peer(s); }

int session_has_peer(const SSL_SESSION *s) { return s->peer_der_len > 0 || s->peer != NULL; }

/*
 * Decoding a certificate is about a third of a resumed handshake (OpenSSL 3's
 * public-key decoder set-up), and a resumption rarely looks at the peer: so a
 * stored session keeps the DER and decodes it here, once. Sessions are shared
 * between threads, so the first decode is published with a compare-and-swap
 * and a loser frees its copy. The DER never changes after the session is made,
 * so the cached decode is always that of these exact bytes.
 */
X509 *session_peer(const SSL_SESSION *s)
{
    SSL_SESSION *w = (SSL_SESSION *)s; /* a cache: what the session says does not change */
    X509 *x = __atomic_load_n(&w->peer, __ATOMIC_ACQUIRE);
    if (x != NULL || s->peer_der_len == 0)
        return x;
    const unsigned char *p = s->peer_der;
    ERR_set_mark(); /* libcrypto's ASN.1 errors are replaced by the session error */
    x = d2i_X509(NULL, &p, (long)s->peer_der_len);
    ERR_pop_to_mark();
    if (x == NULL || (size_t)(p - s->peer_der) != s->peer_der_len) {
        X509_free(x);
        ERR_raise_data(ERR_LIB_SSL, QTLS_R_BAD_SESSION, "bad peer certificate");
        return NULL;
    }
    X509 *none = NULL;
    if (!__atomic_compare_exchange_n(&w->peer, &none, x, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        X509_free(x);
        x = none; /* another thread's decode of the same bytes */
    }
    return x;
}

int SSL_SESSION_set1_id_context(SSL_SESSION *s, const unsigned char *sid_ctx,
                                unsigned int sid_ctx_len)
{
    if (sid_ctx_len > SSL_MAX_SID_CTX_LENGTH) {
        ERR_raise(ERR_LIB_SSL, SSL_R_SSL_SESSION_ID_CONTEXT_TOO_LONG);
        return 0;
    }
    if (sid_ctx_len > 0)
        memmove(s->sid_ctx, sid_ctx, sid_ctx_len);
    s->sid_ctx_len = sid_ctx_len;
    return 1;
}

const unsigned char *SSL_SESSION_get0_id_context(const SSL_SESSION *s, unsigned int *len)
{
    if (len != NULL)
        *len = (unsigned int)s->sid_ctx_len;
    return s->sid_ctx;
}

/*
 * TLS 1.3 resumption needs no session ID (the ticket is the identity), so a
 * session's ID is empty unless the application sets one; it is kept and
 * serialised so that applications using it as a cache key keep working.
 */
const unsigned char *SSL_SESSION_get_id(const SSL_SESSION *s, unsigned int *len)
{
    if (len != NULL)
        *len = (unsigned int)s->id_len;
    return s->id;
}

int SSL_SESSION_set1_id(SSL_SESSION *s, const unsigned char *sid, unsigned int sid_len)
{
    if (sid_len > SSL_MAX_SSL_SESSION_ID_LENGTH) {
        ERR_raise(ERR_LIB_SSL, SSL_R_SSL_SESSION_ID_TOO_LONG);
        return 0;
    }
    if (sid_len > 0)
        memmove(s->id, sid, sid_len);
    s->id_len = sid_len;
    return 1;
}

unsigned int SSL_SESSION_get_compress_id(const SSL_SESSION *s) { return 0; }

uint8_t SSL_SESSION_get_max_fragment_length(const SSL_SESSION *s)
{
    return TLSEXT_max_fragment_length_DISABLED; /* QUIC frames its own packets */
}

/*
 * The NewSessionTicket lifetime: the client stores it as the session's timeout
 * (resumption.c), which OpenSSL also does; it reads back changed if the
 * application later calls SSL_SESSION_set_timeout.
 */
unsigned long SSL_SESSION_get_ticket_lifetime_hint(const SSL_SESSION *s)
{
    if (s->ticket_len == 0)
        return 0;
    return s->timeout > UINT32_MAX ? UINT32_MAX : (unsigned long)s->timeout;
}

int SSL_SESSION_has_ticket(const SSL_SESSION *s) { return s->ticket_len > 0; }

void SSL_SESSION_get0_ticket(const SSL_SESSION *s, const unsigned char **tick, size_t *len)
{
    *len = s->ticket_len;
    if (tick != NULL)
        *tick = s->ticket;
}

int SSL_SESSION_set_ex_data(SSL_SESSION *ss, int idx, void *data)
{
    return CRYPTO_set_ex_data(&ss->ex_data, idx, data);
}

void *SSL_SESSION_get_ex_data(const SSL_SESSION *ss, int idx)
{
    return CRYPTO_get_ex_data(&ss->ex_data, idx);
}

/* For a TLS 1.3 session OpenSSL's "master key" is the resumption PSK; so is qtls's. */
size_t SSL_SESSION_get_master_key(const SSL_SESSION *sess, unsigned char *out, size_t outlen)
{
    if (outlen == 0)
        return sess->psk.len;
    if (outlen > sess->psk.len)
        outlen = sess->psk.len;
    memcpy(out, sess->psk.b, outlen);
    return outlen;
}

int SSL_SESSION_set1_master_key(SSL_SESSION *sess, const unsigned char *in, size_t len)
{
    if (len > sizeof(sess->psk.b))
        return 0;
    secret_set(&sess->psk, in, len);
    return 1;
}

/* ------------------------------------------------------------------ */
/* The session encoding                                                */
/* ------------------------------------------------------------------ */

/*
 * Version 1, every field always present and in this order (a fixed layout
 * leaves a parser nothing to choose, so nothing to get wrong):
 *
 *   uint16 magic = 0x7153 ("qS");  uint8 version = 1;  uint8 flags (bit 0: not resumable)
 *   uint16 cipher_suite;           opaque psk<0..255>  (exactly the suite's hash length)
 *   uint64 time;  uint64 timeout;  uint32 ticket_age_add;  uint32 max_early_data
 *   int64  verify_result
 *   opaque session_id<0..32>;      opaque sid_ctx<0..32>
 *   opaque hostname<0..2^16-1>     (empty: none; no NUL bytes)
 *   opaque alpn<0..255>            (the selected protocol; empty: none)
 *   opaque appdata<0..2^24-1>;     opaque early_context<0..2^24-1>
 *   opaque peer_certificate<0..2^24-1>  (DER; empty: none)
 *   opaque sct_list<0..2^16-1>     (the server's SCT list, sct.c; empty: none)
 *   opaque ticket<0..2^16-1>       (empty: none, and always empty inside a ticket)
 *
 * A change of layout is a new version; old versions are then refused, which
 * costs a client one full handshake.
 */
#define SESSION_MAGIC 0x7153
#define SESSION_VERSION 2 /* 2: sct_list */
#define FLAG_NOT_RESUMABLE 0x01

static void wr_u64(struct wr *w, uint64_t v)
{
    wr_u32(w, (uint32_t)(v >> 32));
    wr_u32(w, (uint32_t)v);
}

static int rd_u64(struct rd *r, uint64_t *v)
{
    uint32_t hi, lo;
    struct rd save = *r;
    if (!rd_u32(r, &hi) || !rd_u32(r, &lo)) {
        *r = save;
        return 0;
    }
    *v = (uint64_t)hi << 32 | lo;
    return 1;
}

static void wr_vec(struct wr *w, unsigned len_bytes, const void *p, size_t n)
{
    size_t at = wr_open_vec(w, len_bytes);
    if (n > 0)
        wr_bytes(w, p, n);
    wr_close_vec(w, at, len_bytes);
}

static void wr_peer(struct wr *w, const SSL_SESSION *s)
{
    size_t at = wr_open_vec(w, 3);
    X509 *peer = s->peer_der_len > 0 ? NULL : s->peer; /* without DER, peer never changes */
    if (s->peer_der_len > 0) {
        wr_bytes(w, s->peer_der, s->peer_der_len); /* the bytes kept, never re-encoded */
    } else if (peer != NULL) {
        int n = i2d_X509(peer, NULL);
        uint8_t *p = n > 0 ? wr_reserve(w, (size_t)n) : NULL;
        if (p == NULL || i2d_X509(peer, &p) != n)
            wr_fail(w);
    }
    wr_close_vec(w, at, 3);
}

/* What the encoding can represent; raises the reason for anything else. */
static int session_encodable(const SSL_SESSION *s)
{
    const char *why = NULL;
    if (s->cipher == NULL || !known_suite(s->cipher))
        why = "no cipher suite";
    else if (s->psk.len != crypto_hash_len(s->cipher->hash))
        why = "no resumption PSK of the suite's hash length";
    else if (s->hostname != NULL && (s->hostname[0] == '\0' || strlen(s->hostname) > 0xffff))
        why = "host name length";
    else if (s->alpn_len > 255 || s->id_len > SSL_MAX_SSL_SESSION_ID_LENGTH ||
             s->sid_ctx_len > SSL_MAX_SID_CTX_LENGTH)
        why = "field length";
    else if (s->appdata_len > 0xffffff || s->early_context_len > 0xffffff ||
             s->ticket_len > 0xffff || s->sct_list_len > 0xffff)
        why = "field too long";
    if (why == NULL)
        return 1;
    ERR_raise_data(ERR_LIB_SSL, QTLS_R_BAD_SESSION, "cannot encode: %s", why);
    return 0;
}

void session_encode(const SSL_SESSION *s, int with_ticket, struct wr *w)
{
    if (!session_encodable(s)) {
        wr_fail(w);
        return;
    }
    wr_u16(w, SESSION_MAGIC);
    wr_u8(w, SESSION_VERSION);
    wr_u8(w, s->not_resumable ? FLAG_NOT_RESUMABLE : 0);
    wr_u16(w, s->cipher->tls_id);
    wr_vec(w, 1, s->psk.b, s->psk.len);
    wr_u64(w, s->time);
    wr_u64(w, s->timeout);
    wr_u32(w, s->age_add);
    wr_u32(w, s->max_early_data);
    wr_u64(w, (uint64_t)(int64_t)s->verify_result);
    wr_vec(w, 1, s->id, s->id_len);
    wr_vec(w, 1, s->sid_ctx, s->sid_ctx_len);
    wr_vec(w, 2, s->hostname, s->hostname != NULL ? strlen(s->hostname) : 0);
    wr_vec(w, 1, s->alpn, s->alpn_len);
    wr_vec(w, 3, s->appdata, s->appdata_len);
    wr_vec(w, 3, s->early_context, s->early_context_len);
    wr_peer(w, s);
    wr_vec(w, 2, s->sct_list, s->sct_list_len);
    wr_vec(w, 2, with_ticket ? s->ticket : NULL, with_ticket ? s->ticket_len : 0);
}

/* The variable-length fields, split out before anything is copied. */
struct session_views {
    struct rd psk, id, sid_ctx, hostname, alpn, appdata, early_context, peer, sct_list, ticket;
};

/* Parses the layout; *why names the first defect. Nothing is allocated. */
static int parse_fields(struct rd r, SSL_SESSION *s, struct session_views *v, const char **why)
{
    uint16_t magic, suite;
    uint8_t version, flags;
    uint64_t verify_result;
    *why = "truncated";
    if (!rd_u16(&r, &magic) || !rd_u8(&r, &version))
        return 0;
    if (magic != SESSION_MAGIC) {
        *why = "not a qtls session";
        return 0;
    }
    if (version != SESSION_VERSION) {
        *why = "unsupported session format version";
        return 0;
    }
    if (!rd_u8(&r, &flags) || !rd_u16(&r, &suite) || !rd_vec8(&r, &v->psk) ||
        !rd_u64(&r, &s->time) || !rd_u64(&r, &s->timeout) || !rd_u32(&r, &s->age_add) ||
        !rd_u32(&r, &s->max_early_data) || !rd_u64(&r, &verify_result) || !rd_vec8(&r, &v->id) ||
        !rd_vec8(&r, &v->sid_ctx) || !rd_vec16(&r, &v->hostname) || !rd_vec8(&r, &v->alpn) ||
        !rd_vec24(&r, &v->appdata) || !rd_vec24(&r, &v->early_context) || !rd_vec24(&r, &v->peer) ||
        !rd_vec16(&r, &v->sct_list) || !rd_vec16(&r, &v->ticket))
        return 0;
    if (!rd_empty(&r))
        *why = "trailing bytes";
    else if ((flags & ~FLAG_NOT_RESUMABLE) != 0)
        *why = "unknown flags";
    else if ((s->cipher = suite_by_tls_id(suite)) == NULL)
        *why = "unknown cipher suite";
    else if (v->psk.n != crypto_hash_len(s->cipher->hash))
        *why = "PSK length does not match the suite's hash";
    else if (v->id.n > SSL_MAX_SSL_SESSION_ID_LENGTH)
        *why = "session ID too long";
    else if (v->sid_ctx.n > SSL_MAX_SID_CTX_LENGTH)
        *why = "session ID context too long";
    else if (v->hostname.n > 0 && memchr(v->hostname.p, 0, v->hostname.n) != NULL)
        *why = "NUL byte in the host name";
    else
        *why = NULL;
    s->not_resumable = (flags & FLAG_NOT_RESUMABLE) != 0;
    s->verify_result = (long)(int64_t)verify_result;
    return *why == NULL;
}

/*
 * The peer certificate must be one whole DER SEQUENCE. It is kept as bytes and
 * decoded only when asked for (session_peer), so its inside is checked then.
 */
static int take_peer(SSL_SESSION *s, struct rd der, const char **why)
{
    if (rd_empty(&der))
        return 1;
    const unsigned char *p = der.p;
    long len = 0;
    int tag = 0, xclass = 0;
    ERR_set_mark(); /* libcrypto's ASN.1 errors are replaced by the session error */
    int got = der.n > LONG_MAX ? 0x80 : ASN1_get_object(&p, &len, &tag, &xclass, (long)der.n);
    ERR_pop_to_mark();
    if (got != V_ASN1_CONSTRUCTED || tag != V_ASN1_SEQUENCE || xclass != V_ASN1_UNIVERSAL ||
        (size_t)(p - der.p) > der.n || (size_t)len != der.n - (size_t)(p - der.p)) {
        *why = "bad peer certificate";
        return 0;
    }
    if (!replace_bytes(&s->peer_der, &s->peer_der_len, der.p, der.n)) {
        *why = "out of memory";
        return 0;
    }
    return 1;
}

SSL_SESSION *session_decode(struct rd r)
{
    struct session_views v;
    const char *why = NULL;
    SSL_SESSION *s = SSL_SESSION_new();
    if (s == NULL)
        return NULL;
    if (!parse_fields(r, s, &v, &why) || !take_peer(s, v.peer, &why)) {
        ERR_raise_data(ERR_LIB_SSL, QTLS_R_BAD_SESSION, "%s", why);
        SSL_SESSION_free(s);
        return NULL;
    }
    secret_set(&s->psk, v.psk.p, v.psk.n);
    s->id_len = v.id.n;
    s->sid_ctx_len = v.sid_ctx.n;
    s->alpn_len = v.alpn.n;
    /* The lengths were checked against the arrays in parse_fields. */
    if (!rd_copy(&v.id, s->id, s->id_len) || !rd_copy(&v.sid_ctx, s->sid_ctx, s->sid_ctx_len) ||
        !rd_copy(&v.alpn, s->alpn, s->alpn_len) ||
        (v.hostname.n > 0 &&
         !replace_string(&s->hostname, (const char *)v.hostname.p, v.hostname.n)) ||
        !replace_bytes(&s->appdata, &s->appdata_len, v.appdata.p, v.appdata.n) ||
        !replace_bytes(&s->early_context, &s->early_context_len, v.early_context.p,
                       v.early_context.n) ||
        !replace_bytes(&s->sct_list, &s->sct_list_len, v.sct_list.p, v.sct_list.n) ||
        !replace_bytes(&s->ticket, &s->ticket_len, v.ticket.p, v.ticket.n)) {
        SSL_SESSION_free(s);
        return NULL;
    }
    return s;
}

/* ------------------------------------------------------------------ */
/* i2d / d2i and PEM                                                   */
/* ------------------------------------------------------------------ */

/*
 * The serialised form is one DER OCTET STRING holding the encoding above.
 * The DER frame makes it self-delimiting, as d2i callers expect (they may
 * pass a longer buffer), and lets ASN1_d2i_bio (d2i_SSL_SESSION_bio) find
 * its end. An OpenSSL session (a SEQUENCE) is refused with a clear reason.
 */
#define DER_OCTET_STRING 0x04

static void wr_der_header(struct wr *w, size_t len)
{
    wr_u8(w, DER_OCTET_STRING);
    if (len < 0x80) {
        wr_u8(w, (uint8_t)len);
        return;
    }
    unsigned n = len > 0xffffff ? 4 : len > 0xffff ? 3 : len > 0xff ? 2 : 1;
    wr_u8(w, (uint8_t)(0x80 | n));
    for (unsigned i = n; i-- > 0;)
        wr_u8(w, (uint8_t)(len >> (8 * i)));
}

/* A DER header in minimal form (X.690 §10.1), with at most four length bytes. */
static int rd_der_octet_string(struct rd *r, struct rd *content, const char **why)
{
    uint8_t tag, first, b;
    size_t len = 0;
    *why = "truncated";
    if (!rd_u8(r, &tag) || !rd_u8(r, &first))
        return 0;
    if (tag != DER_OCTET_STRING) {
        *why = "not a qtls session (an OpenSSL session is not readable by qtls)";
        return 0;
    }
    if (first < 0x80) {
        len = first;
    } else {
        unsigned n = first & 0x7f;
        if (n == 0 || n > 4) {
            *why = "bad DER length";
            return 0;
        }
        for (unsigned i = 0; i < n; i++) {
            if (!rd_u8(r, &b))
                return 0;
            if (i == 0 && b == 0) {
                *why = "bad DER length";
                return 0;
            }
            len = len << 8 | b;
        }
        if (len < 0x80) {
            *why = "bad DER length";
            return 0;
        }
    }
    return rd_bytes(r, len, content);
}

/*
 * OpenSSL's i2d conventions: pp NULL returns the length; *pp NULL gets a new
 * buffer (OPENSSL_malloc); otherwise the bytes go to *pp, which advances.
 */
int i2d_SSL_SESSION(const SSL_SESSION *in, unsigned char **pp)
{
    struct wr body, out;
    if (in == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    wr_init(&body);
    wr_init(&out);
    if (!session_encodable(in))
        return 0;
    session_encode(in, 1, &body);
    if (wr_ok(&body)) {
        wr_der_header(&out, body.len);
        wr_bytes(&out, body.buf, body.len);
    }
    wr_free(&body); /* it holds the PSK */
    if (!wr_ok(&out) || out.len > INT_MAX) {
        wr_free(&out);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    int len = (int)out.len;
    if (pp != NULL) {
        unsigned char *dst = *pp;
        if (dst == NULL && (dst = OPENSSL_malloc(out.len)) == NULL) {
            wr_free(&out);
            ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
            return 0;
        }
        memcpy(dst, out.buf, out.len);
        if (*pp == NULL)
            *pp = dst;
        else
            *pp += out.len;
    }
    wr_free(&out);
    return len;
}

/*
 * Moves the contents of src into dst, which keeps its references and
 * ex_data (d2i with *a fills the caller's object, as OpenSSL does); src is
 * freed.
 */
static void session_move(SSL_SESSION *dst, SSL_SESSION *src)
{
    int references = dst->references;
    CRYPTO_EX_DATA ex_data = dst->ex_data;
    session_clear(dst);
    *dst = *src;
    dst->references = references;
    dst->ex_data = ex_data;
    CRYPTO_free_ex_data(CRYPTO_EX_INDEX_SSL_SESSION, src, &src->ex_data);
    OPENSSL_clear_free(src, sizeof(*src));
}

/* OpenSSL's d2i conventions: *pp advances past the object only on success. */
SSL_SESSION *d2i_SSL_SESSION(SSL_SESSION **a, const unsigned char **pp, long length)
{
    struct rd r, content;
    const char *why = "no input";
    if (pp == NULL || *pp == NULL || length <= 0) {
        ERR_raise_data(ERR_LIB_SSL, QTLS_R_BAD_SESSION, "%s", why);
        return NULL;
    }
    rd_init(&r, *pp, (size_t)length);
    if (!rd_der_octet_string(&r, &content, &why)) {
        ERR_raise_data(ERR_LIB_SSL, QTLS_R_BAD_SESSION, "%s", why);
        return NULL;
    }
    SSL_SESSION *s = session_decode(content);
    if (s == NULL)
        return NULL;
    *pp += (size_t)length - r.n;
    if (a != NULL && *a != NULL) {
        session_move(*a, s);
        return *a;
    }
    if (a != NULL)
        *a = s;
    return s;
}

/* PEM_ASN1_* call through these exact types, so no function pointer is cast. */
static void *d2i_session_void(void **a, const unsigned char **pp, long length)
{
    return d2i_SSL_SESSION((SSL_SESSION **)a, pp, length);
}

static int i2d_session_void(const void *s, unsigned char **pp) { return i2d_SSL_SESSION(s, pp); }

/* libssl's functions of DECLARE_PEM_rw(SSL_SESSION, SSL_SESSION), "SSL SESSION PARAMETERS". */
SSL_SESSION *PEM_read_bio_SSL_SESSION(BIO *out, SSL_SESSION **x, pem_password_cb *cb, void *u)
{
    return PEM_ASN1_read_bio(d2i_session_void, PEM_STRING_SSL_SESSION, out, (void **)x, cb, u);
}

SSL_SESSION *PEM_read_SSL_SESSION(FILE *out, SSL_SESSION **x, pem_password_cb *cb, void *u)
{
    return PEM_ASN1_read(d2i_session_void, PEM_STRING_SSL_SESSION, out, (void **)x, cb, u);
}

int PEM_write_bio_SSL_SESSION(BIO *out, const SSL_SESSION *x)
{
    return PEM_ASN1_write_bio(i2d_session_void, PEM_STRING_SSL_SESSION, out, x, NULL, NULL, 0, NULL,
                              NULL);
}

int PEM_write_SSL_SESSION(FILE *out, const SSL_SESSION *x)
{
    return PEM_ASN1_write(i2d_session_void, PEM_STRING_SSL_SESSION, out, x, NULL, NULL, 0, NULL,
                          NULL);
}

/* ------------------------------------------------------------------ */
/* Sessions made by the handshake                                      */
/* ------------------------------------------------------------------ */

/*
 * The connection's outcome as a new session; the caller adds what belongs
 * to one ticket (PSK, ticket_age_add, the ticket, early-data context).
 * A timeout of 0 means the default, as in OpenSSL's ssl_get_new_session.
 */
SSL_SESSION *session_new_from_conn(SSL *c)
{
    SSL_SESSION *s = SSL_SESSION_new();
    if (s == NULL)
        return NULL;
    long timeout = c->ctx->session_timeout;
    s->cipher = c->cipher;
    s->time = clock_now_seconds();
    s->timeout = timeout <= 0 ? DEFAULT_TIMEOUT : (uint64_t)timeout;
    if (s->timeout > MAX_TICKET_LIFETIME)
        s->timeout = MAX_TICKET_LIFETIME;
    s->max_early_data = c->max_early_data;
    s->verify_result = c->verify_result;
    memcpy(s->alpn, sbuf_data(&c->alpn_selected), sbuf_len(&c->alpn_selected));
    s->alpn_len = sbuf_len(&c->alpn_selected);
    memcpy(s->sid_ctx, c->sid_ctx, sizeof(s->sid_ctx));
    s->sid_ctx_len = c->sid_ctx_len;
    if ((c->hostname != NULL && !replace_string(&s->hostname, c->hostname, strlen(c->hostname))) ||
        !replace_bytes(&s->sct_list, &s->sct_list_len, cold_peek(c)->peer_sct_list,
                       cold_peek(c)->peer_sct_list_len) ||
        (c->peer_cert != NULL && !X509_up_ref(c->peer_cert)) ||
        (c->peer_cert == NULL && c->peer_session != NULL && !copy_peer(s, c->peer_session))) {
        SSL_SESSION_free(s);
        return NULL;
    }
    if (c->peer_cert != NULL)
        s->peer = c->peer_cert;
    return s;
}

int session_conn_defer_peer(SSL *c, SSL_SESSION *s)
{
    X509_free(c->peer_cert);
    sk_X509_pop_free(c->peer_chain, X509_free);
    SSL_SESSION_free(c->peer_session);
    c->peer_cert = NULL;
    c->peer_chain = NULL;
    c->peer_session = NULL;
    if (!session_has_peer(s))
        return 1;
    SSL_SESSION_up_ref(s);
    c->peer_session = s;
    return 1;
}

/* Sessions keep the leaf only, so a resumed connection's chain is that leaf. */
int session_conn_peer(SSL *c)
{
    if (c->peer_session == NULL)
        return 1;
    X509 *leaf = session_peer(c->peer_session);
    STACK_OF(X509) *chain = leaf != NULL ? sk_X509_new_reserve(NULL, 1) : NULL;
    if (chain == NULL || !X509_up_ref(leaf)) {
        sk_X509_free(chain);
        return 0;
    }
    sk_X509_push(chain, leaf); /* cannot fail: reserved */
    if (!X509_up_ref(leaf)) {
        sk_X509_pop_free(chain, X509_free);
        return 0;
    }
    c->peer_chain = chain;
    c->peer_cert = leaf;
    SSL_SESSION_free(c->peer_session);
    c->peer_session = NULL;
    return 1;
}

/* ------------------------------------------------------------------ */
/* Connections                                                         */
/* ------------------------------------------------------------------ */

/*
 * Client: the session to offer. NULL clears. Refused while a handshake runs,
 * since the handshake reads the session it offered (OpenSSL does not guard
 * this; replacing it there would change the PSK under the binder).
 */
int SSL_set_session(SSL *to, SSL_SESSION *session)
{
    if (to->phase == PHASE_HANDSHAKE) {
        ERR_raise_data(ERR_LIB_SSL, ERR_R_SHOULD_NOT_HAVE_BEEN_CALLED, "handshake in progress");
        return 0;
    }
    if (session != NULL) {
        SSL_SESSION_up_ref(session);
        to->verify_result = session->verify_result; /* as OpenSSL */
    }
    SSL_SESSION_free(to->session);
    to->session = session;
    return 1;
}

SSL_SESSION *SSL_get_session(const SSL *ssl) { return ssl->session; }

SSL_SESSION *SSL_get1_session(SSL *ssl)
{
    if (ssl->session != NULL)
        SSL_SESSION_up_ref(ssl->session);
    return ssl->session;
}

int SSL_session_reused(const SSL *s) { return s->session_reused; }

int SSL_get_early_data_status(const SSL *s) { return s->early_data_status; }

int SSL_set_num_tickets(SSL *s, size_t num_tickets)
{
    s->num_tickets = num_tickets;
    s->set_on_ssl |= OWN_NUM_TICKETS;
    return 1;
}

size_t SSL_get_num_tickets(const SSL *s) { return s->num_tickets; }

int SSL_set_session_id_context(SSL *ssl, const unsigned char *sid_ctx, unsigned int sid_ctx_len)
{
    if (sid_ctx_len > SSL_MAX_SID_CTX_LENGTH) {
        ERR_raise(ERR_LIB_SSL, SSL_R_SSL_SESSION_ID_CONTEXT_TOO_LONG);
        return 0;
    }
    if (sid_ctx_len > 0)
        memcpy(ssl->sid_ctx, sid_ctx, sid_ctx_len);
    ssl->sid_ctx_len = (uint8_t)sid_ctx_len;
    return 1;
}

/* Any non-zero value enables 0-RTT; QUIC tickets then say 0xffffffff (RFC 9001 §4.6.1). */
int SSL_set_max_early_data(SSL *s, uint32_t max_early_data)
{
    s->max_early_data = max_early_data;
    s->set_on_ssl |= OWN_MAX_EARLY_DATA;
    return 1;
}

uint32_t SSL_get_max_early_data(const SSL *s) { return s->max_early_data; }

/* Stored and reported: in QUIC, 0-RTT volume is bounded by flow control, not by TLS. */
int SSL_set_recv_max_early_data(SSL *s, uint32_t recv_max_early_data)
{
    s->recv_max_early_data = recv_max_early_data;
    s->set_on_ssl |= OWN_RECV_MAX_EARLY_DATA;
    return 1;
}

uint32_t SSL_get_recv_max_early_data(const SSL *s) { return s->recv_max_early_data; }

void SSL_set_allow_early_data_cb(SSL *s, SSL_allow_early_data_cb_fn cb, void *arg)
{
    s->allow_early_data_cb = cb;
    s->allow_early_data_arg = arg;
    s->set_on_ssl |= OWN_ALLOW_EARLY_DATA_CB;
}

long SSL_get_default_timeout(const SSL *s) { return DEFAULT_TIMEOUT; }

/* ------------------------------------------------------------------ */
/* Contexts                                                            */
/* ------------------------------------------------------------------ */

void SSL_CTX_sess_set_new_cb(SSL_CTX *ctx, int (*new_session_cb)(SSL *, SSL_SESSION *))
{
    ctx->new_session_cb = new_session_cb;
}

int (*SSL_CTX_sess_get_new_cb(SSL_CTX *ctx))(SSL *, SSL_SESSION *) { return ctx->new_session_cb; }

/* Stored and returned, never called: there is no internal cache to remove sessions from. */
void SSL_CTX_sess_set_remove_cb(SSL_CTX *ctx, void (*remove_session_cb)(SSL_CTX *, SSL_SESSION *))
{
    ctx->remove_session_cb = remove_session_cb;
}

void (*SSL_CTX_sess_get_remove_cb(SSL_CTX *ctx))(SSL_CTX *, SSL_SESSION *)
{
    return ctx->remove_session_cb;
}

/*
 * Stored and returned, never called: TLS 1.3 servers resume from the
 * ticket itself, never by looking a session ID up in an external cache.
 */
void SSL_CTX_sess_set_get_cb(SSL_CTX *ctx,
                             SSL_SESSION *(*get_session_cb)(SSL *, const unsigned char *, int,
                                                            int *))
{
    ctx->get_session_cb = get_session_cb;
}

SSL_SESSION *(*SSL_CTX_sess_get_get_cb(SSL_CTX *ctx))(SSL *, const unsigned char *, int, int *)
{
    return ctx->get_session_cb;
}

/* No internal cache: nothing to flush. */
void SSL_CTX_flush_sessions(SSL_CTX *ctx, long tm) {}

/* No internal cache: OpenSSL's "not added" / "not found" answers (0), with nothing queued. */
int SSL_CTX_add_session(SSL_CTX *ctx, SSL_SESSION *session) { return 0; }

int SSL_CTX_remove_session(SSL_CTX *ctx, SSL_SESSION *session) { return 0; }

LHASH_OF(SSL_SESSION) *SSL_CTX_sessions(SSL_CTX *ctx) { return NULL; }

/* Returns the previous value, as OpenSSL. It is the ticket lifetime a server announces. */
long SSL_CTX_set_timeout(SSL_CTX *ctx, long t)
{
    long old = ctx->session_timeout;
    ctx->session_timeout = t;
    return old;
}

long SSL_CTX_get_timeout(const SSL_CTX *ctx) { return ctx->session_timeout; }

int SSL_CTX_set_num_tickets(SSL_CTX *ctx, size_t num_tickets)
{
    ctx->num_tickets = num_tickets;
    return 1;
}

size_t SSL_CTX_get_num_tickets(const SSL_CTX *ctx) { return ctx->num_tickets; }

int SSL_CTX_set_session_id_context(SSL_CTX *ctx, const unsigned char *sid_ctx,
                                   unsigned int sid_ctx_len)
{
    if (sid_ctx_len > SSL_MAX_SID_CTX_LENGTH) {
        ERR_raise(ERR_LIB_SSL, SSL_R_SSL_SESSION_ID_CONTEXT_TOO_LONG);
        return 0;
    }
    if (sid_ctx_len > 0)
        memcpy(ctx->sid_ctx, sid_ctx, sid_ctx_len);
    ctx->sid_ctx_len = sid_ctx_len;
    return 1;
}

int SSL_CTX_set_max_early_data(SSL_CTX *ctx, uint32_t max_early_data)
{
    ctx->max_early_data = max_early_data;
    ctx->early_set_on_ctx |= OWN_MAX_EARLY_DATA;
    return 1;
}

uint32_t SSL_CTX_get_max_early_data(const SSL_CTX *ctx) { return ctx->max_early_data; }

int SSL_CTX_set_recv_max_early_data(SSL_CTX *ctx, uint32_t recv_max_early_data)
{
    ctx->recv_max_early_data = recv_max_early_data;
    ctx->early_set_on_ctx |= OWN_RECV_MAX_EARLY_DATA;
    return 1;
}

uint32_t SSL_CTX_get_recv_max_early_data(const SSL_CTX *ctx) { return ctx->recv_max_early_data; }

int SSL_CTX_set_session_ticket_cb(SSL_CTX *ctx, SSL_CTX_generate_session_ticket_fn gen_cb,
                                  SSL_CTX_decrypt_session_ticket_fn dec_cb, void *arg)
{
    ctx->ticket_gen_cb = gen_cb;
    ctx->ticket_dec_cb = dec_cb;
    ctx->ticket_cb_arg = arg;
    return 1;
}

/* Connections made afterwards inherit it; SSL_set_allow_early_data_cb overrides one. */
void SSL_CTX_set_allow_early_data_cb(SSL_CTX *ctx, SSL_allow_early_data_cb_fn cb, void *arg)
{
    ctx->allow_early_data_cb = cb;
    ctx->allow_early_data_arg = arg;
    ctx->early_set_on_ctx |= OWN_ALLOW_EARLY_DATA_CB;
}

void SSL_CTX_set_client_cert_cb(SSL_CTX *ctx, int (*client_cert_cb)(SSL *, X509 **, EVP_PKEY **))
{
    ctx->client_cert_cb = client_cert_cb;
}

int (*SSL_CTX_get_client_cert_cb(SSL_CTX *ctx))(SSL *, X509 **, EVP_PKEY **)
{
    return ctx->client_cert_cb;
}

/* The application's ticket keys (OpenSSL 3.0's EVP form); ticket.c calls it. */
int SSL_CTX_set_tlsext_ticket_key_evp_cb(SSL_CTX *ctx,
                                         int (*fp)(SSL *, unsigned char *, unsigned char *,
                                                   EVP_CIPHER_CTX *, EVP_MAC_CTX *, int))
{
    ctx->ticket_key_evp_cb = fp;
    return 1;
}
