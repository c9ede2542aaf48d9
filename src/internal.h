/*
 * qtls internals: the structures behind SSL_CTX / SSL and the prototypes
 * shared between files. Layers (DESIGN.md): API (ctx.c, ssl.c, ctrl.c) ->
 * QUIC glue (quic.c) -> handshake (handshake.c, client.c, server.c,
 * extensions.c, msg.c) -> key schedule (keysched.c) -> crypto adapter
 * (crypto.c, the only EVP caller besides cert.c's X.509 handling).
 */
#ifndef QTLS_INTERNAL_H
#define QTLS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "bytes.h"
#include "qtls/quic.h"
#include "qtls/quic_tls35.h"

/* ------------------------------------------------------------------ */
/* Errors (err.c)                                                      */
/* ------------------------------------------------------------------ */

/* qtls's own reason codes for ERR_LIB_SSL, beside the system sslerr.h ones. */
#define QTLS_R_DUPLICATE_EXTENSION 900
#define QTLS_R_UNEXPECTED_EXTENSION 901
#define QTLS_R_KEY_UPDATE_NOT_ALLOWED 902
#define QTLS_R_EXCESS_HANDSHAKE_DATA 903
#define QTLS_R_UNEXPECTED_COMPATIBILITY_MODE 904
#define QTLS_R_NOT_QUIC 905
#define QTLS_R_DECODE_ERROR 906
#define QTLS_R_QUIC_CALLBACK_FAILED 907
#define QTLS_R_INCONSISTENT_CLIENT_HELLO 908
#define QTLS_R_MISSING_EXTENSION 909
#define QTLS_R_INVALID_ALPN_PROTOCOL 910
#define QTLS_R_NO_QUIC_METHOD 911
#define QTLS_R_CHANGE_CIPHER_SPEC_NOT_ALLOWED 912
#define QTLS_R_UNSUPPORTED_GROUP 913
#define QTLS_R_HANDSHAKE_FAILED_BEFORE 914
#define QTLS_R_BAD_SESSION 920 /* d2i_SSL_SESSION / ticket plaintext that does not decode */
#define QTLS_R_TLS_OVER_TCP_UNSUPPORTED 921 /* record-layer I/O: qtls is TLS for QUIC only */
#define QTLS_R_NOT_IMPLEMENTED 922          /* a setting qtls does not implement (data names it) */
#define QTLS_R_POST_HANDSHAKE_AUTH_IN_QUIC 923 /* RFC 9001 §4.4 */
#define QTLS_R_INVALID_SCT_LIST 924 /* sct.c: not an RFC 6962 §3.3 list (BoringSSL's reason) */
#define QTLS_R_OCSP_CB_ERROR 925    /* ocsp.c: a status callback said no, after OpenSSL's reason */
#define QTLS_R_CUSTOM_EXT_HANDLED_INTERNALLY 940 /* custom_ext.c: qtls handles that extension */
#define QTLS_R_CUSTOM_EXT_DUPLICATE 941          /* custom_ext.c: the type is already added */
#define QTLS_R_QUIC_API_MIXED 950 /* quic_tls35.c: quictls and OpenSSL 3.5 QUIC APIs on one SSL */

/* Registers the reason strings once (called from OPENSSL_init_ssl). */
void err_load_strings(void);

/*
 * The one failure path: pushes `reason` on the error queue and records
 * `alert` unless an alert is already pending (the first alert wins; the
 * handshake driver sends it once). Always evaluates to 0.
 */
void qtls_set_alert(SSL *c, uint8_t alert);
/* Raises `reason` (after ERR_new/ERR_set_debug recorded the caller), records the alert; returns 0. */
int qtls_fail_raise(SSL *c, int alert, int reason);
#define qtls_fail(c, alert, reason)                                                                \
    (ERR_new(), ERR_set_debug(OPENSSL_FILE, OPENSSL_LINE, OPENSSL_FUNC),                           \
     qtls_fail_raise((c), (alert), (reason)))
/* Raises QTLS_R_NOT_IMPLEMENTED naming the setting (for any layer, err.c); returns 0. */
int qtls_not_implemented(const char *setting);

/* clock.c: the wall clock every session and ticket time comes from (µs / s since the epoch). */
uint64_t clock_now_us(void);
uint64_t clock_now_seconds(void);
/* Test hook: the clock every time above comes from, in µs (NULL restores the wall clock). */
void clock_set_test_clock(uint64_t (*now_us)(void));

/* ------------------------------------------------------------------ */
/* Suites, groups and signature schemes (suites.c)                     */
/* ------------------------------------------------------------------ */

enum qtls_hash { QTLS_SHA256 = 0, QTLS_SHA384, QTLS_HASH_COUNT };
#define QTLS_MAX_HASH_LEN 48 /* SHA-384's, the longest of TLS 1.3's suites */

struct ssl_cipher_st {
    uint32_t id;      /* OpenSSL id: 0x03001301 ... */
    uint16_t tls_id;  /* wire value: 0x1301 ... */
    const char *name; /* IANA name, which OpenSSL also uses for TLS 1.3 */
    enum qtls_hash hash;
    int prf_nid;    /* NID_sha256 / NID_sha384 */
    int cipher_nid; /* the AEAD */
    int bits;
};

#define QTLS_NUM_SUITES 4
extern const SSL_CIPHER qtls_suites[QTLS_NUM_SUITES];
/* The suites enabled when nothing is configured (CCM only on request, CCM_8 never). */
#define QTLS_DEFAULT_SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
/* A configured preference list, most preferred first: indexes into qtls_suites, 5 bytes. */
struct suite_list {
    uint8_t idx[QTLS_NUM_SUITES];
    uint8_t n;
};
static inline const SSL_CIPHER *suite_at(const struct suite_list *l, size_t i)
{
    return &qtls_suites[l->idx[i]];
}
const SSL_CIPHER *suite_by_tls_id(uint16_t tls_id);
const SSL_CIPHER *suite_by_name(const char *name, size_t len);

enum kex_kind { KEX_X25519, KEX_X448, KEX_EC };

struct group {
    uint16_t id;      /* NamedGroup */
    const char *name; /* OpenSSL's name for the group list */
    enum kex_kind kind;
    int nid;          /* curve NID (EC) or key type (X25519/X448) */
    size_t share_len; /* length of a valid key_exchange */
};
const struct group *group_by_id(uint16_t id);
const struct group *group_by_name(const char *name, size_t len);
#define QTLS_MAX_GROUPS 8

struct sigscheme {
    uint16_t id;
    const char *name;
    int pkey_type;  /* EVP_PKEY_EC, EVP_PKEY_RSA, EVP_PKEY_ED25519, EVP_PKEY_ED448 */
    int curve_nid;  /* ECDSA: the curve the scheme binds (RFC 8446 §4.2.3); else 0 */
    int md_nid;     /* digest NID, NID_undef for EdDSA */
    int tls13_ok;   /* usable in a TLS 1.3 CertificateVerify (not PKCS#1 v1.5, not SHA-1) */
};
const struct sigscheme *sigscheme_by_id(uint16_t id);
/* The schemes a client offers, in preference order. */
extern const uint16_t qtls_offered_sigschemes[];
extern const size_t qtls_num_offered_sigschemes;

/* sigalgs.c: a configured signature-algorithm list (SSL_CTX_set1_sigalgs_list); n == 0: default. */
#define QTLS_MAX_SIGALGS 16
struct sigalg_list {
    uint16_t ids[QTLS_MAX_SIGALGS];
    size_t n;
};
/*
 * A context's or connection's two configured lists, shared copy-on-write: SSL_new takes a
 * reference to its context's, and a setter on either side makes a new one for itself, so a later
 * change to the context does not reach the connection (as OpenSSL's copy at SSL_new) while most
 * connections, which set none, hold no copy. NULL: both lists empty (the defaults).
 */
struct sigalg_conf {
    int references;
    struct sigalg_list sigalgs, client_sigalgs;
};
#define QTLS_MAX_PEER_GROUPS 32

/* ------------------------------------------------------------------ */
/* Crypto adapter (crypto.c): the only code that calls EVP for TLS.    */
/* ------------------------------------------------------------------ */

/* Fetches algorithms once per process. Returns 1 on success. */
QTLS_MUST_CHECK int crypto_init(void);
const EVP_MD *crypto_md(enum qtls_hash h);
/* A running hash (the transcript): new, feed, restart, read without ending, free. */
struct crypto_hash;
struct crypto_hash *crypto_hash_new(enum qtls_hash h);
QTLS_MUST_CHECK int crypto_hash_update(struct crypto_hash *c, const uint8_t *p, size_t n);
QTLS_MUST_CHECK int crypto_hash_restart(struct crypto_hash *c);
/* Hash of what c has seen, then `extra`; c keeps running as it was. */
QTLS_MUST_CHECK int crypto_hash_peek(struct crypto_hash *c, const uint8_t *extra,
                                     size_t extra_len, uint8_t *out);
void crypto_hash_free(struct crypto_hash *c);
/* Test hook: 1 hashes through EVP even where the direct SHA-2 path is allowed (crypto.c). */
void crypto_set_test_evp_hashes(int on);
/* qtls's ticket AEAD (AES-256-GCM, aad = key name): 1, 0 bad tag on opening, -1 error. */
int crypto_ticket_gcm(int enc, const uint8_t key[32], const uint8_t *aad, size_t aad_len,
                      const uint8_t nonce[12], const uint8_t *in, size_t len, uint8_t *out,
                      uint8_t tag[16]);
/* The cipher and MAC contexts of the application's ticket key callback (OpenSSL 3.0 format). */
struct crypto_ticket_cb {
    EVP_CIPHER_CTX *cc;
    EVP_MAC_CTX *hc;
};
QTLS_MUST_CHECK int crypto_ticket_cb_new(struct crypto_ticket_cb *t);
void crypto_ticket_cb_free(struct crypto_ticket_cb *t);
/* The IV and MAC lengths the callback configured; 0 if it left a context unusable. */
QTLS_MUST_CHECK int crypto_ticket_cb_lengths(const struct crypto_ticket_cb *t, int enc,
                                             size_t *iv_len, size_t *mac_len);
/* Runs the callback's cipher over in: 1, 0 if the final block fails (padding), -1 error. */
int crypto_ticket_cb_cipher(struct crypto_ticket_cb *t, const uint8_t *in, size_t len,
                            uint8_t *out, size_t *out_len);
/* The callback's MAC over in, exactly mac_len bytes: 1, or 0 (raised). */
QTLS_MUST_CHECK int crypto_ticket_cb_mac(struct crypto_ticket_cb *t, const uint8_t *in,
                                         size_t len, uint8_t *out, size_t mac_len);
/* Hash(""), computed once by crypto_init: Derive-Secret's context for an empty transcript. */
const uint8_t *crypto_empty_hash(enum qtls_hash h);
size_t crypto_hash_len(enum qtls_hash h);
QTLS_MUST_CHECK int crypto_random(uint8_t *out, size_t len);
/* Test hook: replaces the randomness source (NULL restores RAND_bytes). */
void crypto_set_test_random(int (*fn)(uint8_t *out, size_t len, void *arg), void *arg);

QTLS_MUST_CHECK int crypto_hmac(enum qtls_hash h, const uint8_t *key, size_t key_len,
                                const uint8_t *data, size_t data_len, uint8_t *out);
QTLS_MUST_CHECK int crypto_hkdf_extract(enum qtls_hash h, const uint8_t *salt, size_t salt_len,
                                        const uint8_t *ikm, size_t ikm_len, uint8_t *out);
QTLS_MUST_CHECK int crypto_hkdf_expand(enum qtls_hash h, const uint8_t *prk, size_t prk_len,
                                       const uint8_t *info, size_t info_len, uint8_t *out,
                                       size_t out_len);
QTLS_MUST_CHECK int crypto_digest(enum qtls_hash h, const uint8_t *data, size_t len,
                                  uint8_t *out);

/*
 * Key exchange. kex_generate makes a key pair and appends its public share;
 * kex_derive computes the shared secret with the peer's share, rejecting
 * malformed points. Returns the secret length, 0 on failure.
 */
EVP_PKEY *crypto_kex_generate(const struct group *g, struct wr *share_out);
QTLS_MUST_CHECK size_t crypto_kex_derive(const struct group *g, EVP_PKEY *priv,
                                         const uint8_t *peer, size_t peer_len, uint8_t *out,
                                         size_t out_cap);
/* Test hook: the private key kex_generate should use next (consumed once). */
void crypto_set_test_kex_key(EVP_PKEY *key);

/* Signatures for CertificateVerify. */
QTLS_MUST_CHECK int crypto_key_matches_scheme(EVP_PKEY *key, const struct sigscheme *s);
QTLS_MUST_CHECK int crypto_sign(EVP_PKEY *key, const struct sigscheme *s, const uint8_t *tbs,
                                size_t tbs_len, struct wr *sig_out);
/* Finished and PSK binder checks, in constant time (the fuzzing build accepts any value). */
QTLS_MUST_CHECK int crypto_mac_equal(const uint8_t *want, const uint8_t *got, size_t len);
QTLS_MUST_CHECK int crypto_verify(EVP_PKEY *key, const struct sigscheme *s, const uint8_t *tbs,
                                  size_t tbs_len, const uint8_t *sig, size_t sig_len);

/*
 * compress.c: the certificate compression algorithms (RFC 8879 §3), each present when it was
 * found at build time. compress_run appends alg's compression of in to out; decompress_exact
 * succeeds only if in decodes to exactly len bytes (no more, no less, nothing left over).
 */
enum { CC_NONE = 0, CC_ZLIB = 1, CC_BROTLI = 2, CC_ZSTD = 3, CC_LIMIT = 4 };
int compress_available(int alg);
const char *compress_name(int alg); /* "zlib", "brotli", "zstd"; NULL out of range */
QTLS_MUST_CHECK int compress_run(int alg, const uint8_t *in, size_t n, struct wr *out);
QTLS_MUST_CHECK int decompress_exact(int alg, const uint8_t *in, size_t n, uint8_t *out,
                                     size_t len);

/* ------------------------------------------------------------------ */
/* Key schedule and transcript (keysched.c), RFC 8446 §7.1             */
/* ------------------------------------------------------------------ */

/* A secret in a fixed array, set and wiped through the helpers. */
struct secret {
    uint8_t b[EVP_MAX_MD_SIZE];
    size_t len;
};
void secret_set(struct secret *s, const uint8_t *p, size_t n);
void secret_wipe(struct secret *s);
/* A secret a connection keeps after the handshake (exporter, resumption): Hash.length bytes. */
struct kept_secret {
    uint8_t b[QTLS_MAX_HASH_LEN];
    uint8_t len;
};
void secret_keep(struct kept_secret *k, const struct secret *s);
/* Back into a struct secret for the key schedule (the caller wipes it after use). */
void secret_unkeep(struct secret *s, const struct kept_secret *k);
void kept_secret_wipe(struct kept_secret *k);

/* HKDF-Expand-Label(secret, "tls13 " + label, context, out_len). */
QTLS_MUST_CHECK int ks_expand_label(enum qtls_hash h, const struct secret *secret,
                                    const char *label, const uint8_t *context, size_t context_len,
                                    uint8_t *out, size_t out_len);
/* The same with a label of explicit length (exporters take arbitrary labels). */
QTLS_MUST_CHECK int ks_expand_label_n(enum qtls_hash h, const struct secret *secret,
                                      const uint8_t *label, size_t label_len,
                                      const uint8_t *context, size_t context_len, uint8_t *out,
                                      size_t out_len);
/* Derive-Secret(secret, label, transcript_hash): the hash is passed in. */
QTLS_MUST_CHECK int ks_derive_secret(enum qtls_hash h, const struct secret *secret,
                                     const char *label, const uint8_t *thash, struct secret *out);
/* Early Secret = HKDF-Extract(0, psk or zeros). */
QTLS_MUST_CHECK int ks_early_secret(enum qtls_hash h, const uint8_t *psk, size_t psk_len,
                                    struct secret *out);
/* Next stage: HKDF-Extract(Derive-Secret(prev, "derived", ""), ikm or zeros). */
QTLS_MUST_CHECK int ks_next_stage(enum qtls_hash h, const struct secret *prev,
                                  const uint8_t *ikm, size_t ikm_len, struct secret *out);
/* A full handshake's Handshake Secret: ks_next_stage from the zero-PSK Early Secret. */
QTLS_MUST_CHECK int ks_handshake_secret_without_psk(enum qtls_hash h, const uint8_t *ecdhe,
                                                    size_t ecdhe_len, struct secret *out);
/* Finished verify_data = HMAC(finished_key(base), transcript_hash) (RFC 8446 §4.4.4). */
QTLS_MUST_CHECK int ks_finished(enum qtls_hash h, const struct secret *base, const uint8_t *thash,
                                uint8_t *out);

/* A PSK binder over the hash of the partial ClientHello (RFC 8446 §4.2.11.2). */
QTLS_MUST_CHECK int ks_psk_binder(enum qtls_hash h, const struct secret *early,
                                  const uint8_t *thash, uint8_t *out);

/*
 * The running transcript. Until the hash is known (client before
 * ServerHello) the messages are buffered; transcript_set_hash hashes them.
 */
struct transcript {
    enum qtls_hash hash;
    struct crypto_hash *md; /* NULL until the hash is set */
    struct wr pending;
};
void transcript_init(struct transcript *t);
QTLS_MUST_CHECK int transcript_add(struct transcript *t, const uint8_t *p, size_t n);
QTLS_MUST_CHECK int transcript_set_hash(struct transcript *t, enum qtls_hash h);
/* The hash of everything so far (the transcript keeps running). */
QTLS_MUST_CHECK int transcript_hash(struct transcript *t, uint8_t *out);
/* The hash of the transcript followed by `extra` (a partial message), with hash h. */
QTLS_MUST_CHECK int transcript_hash_with(struct transcript *t, enum qtls_hash h,
                                         const uint8_t *extra, size_t extra_len, uint8_t *out);
/* After HelloRetryRequest: replaces ClientHello1 with message_hash (RFC 8446 §4.4.1). */
QTLS_MUST_CHECK int transcript_hrr_restart(struct transcript *t);
void transcript_free(struct transcript *t);

/* ------------------------------------------------------------------ */
/* Objects                                                             */
/* ------------------------------------------------------------------ */

enum method_role { ROLE_ANY, ROLE_CLIENT, ROLE_SERVER };
struct ssl_method_st {
    int version; /* TLS_ANY_VERSION for the three methods QUIC accepts */
    enum method_role role;
};

/* A certificate and its key, with the chain to send. */
struct cert_cfg {
    X509 *cert;
    EVP_PKEY *pkey;
    STACK_OF(X509) *chain; /* intermediates, leaf excluded */
};
void cert_cfg_free(struct cert_cfg *cc); /* certset.c */

/*
 * certset.c: OpenSSL's certificate slots, one pair per key type (its SSL_PKEY_* indexes: all EC
 * curves share one), the slot last set being the "current" one the chain ctrls act on; plus the
 * certificate callback, which travels with the certificates as in OpenSSL's CERT.
 */
enum {
    CERT_SLOT_RSA,
    CERT_SLOT_RSA_PSS,
    CERT_SLOT_EC,
    CERT_SLOT_ED25519,
    CERT_SLOT_ED448,
    CERT_SLOTS
};
struct cert_set {
    struct cert_cfg slot[CERT_SLOTS];
    int current;
    STACK_OF(X509) *extra; /* SSL_CTX_add_extra_chain_cert: sent when the slot has no chain */
    int (*cert_cb)(SSL *, void *);
    void *cert_cb_arg;
};
void certset_free(struct cert_set *s);
/* The set a connection uses: its own once an SSL_use_*-style call made one, else its context's. */
struct cert_set *certset_of(const SSL *c);
/* The connection's own set, copied from its context on first use; NULL (error queued) if not. */
struct cert_set *certset_own(SSL *c);
/* SSL_CTX_ctrl / SSL_ctrl commands on certificates and chains; *handled = 0 for other commands. */
long certset_ctrl(SSL_CTX *ctx, SSL *s, int cmd, long larg, void *parg, int *handled);
QTLS_MUST_CHECK int certset_use_cert(struct cert_set *s, X509 *x);
QTLS_MUST_CHECK int certset_use_key(struct cert_set *s, EVP_PKEY *k);
/* Replaces the current slot's chain (takes `chain`, NULL clears). */
void certset_set_chain(struct cert_set *s, STACK_OF(X509) *chain);
/*
 * Picks the pair to authenticate with among the slots the peer's signature_algorithms can be
 * used with (ECDSA, then EdDSA, then RSA-PSS), with its scheme; fills *out with references
 * (chain: the slot's, else the context's extra certificates). 0 if no slot fits.
 */
QTLS_MUST_CHECK int certset_choose(SSL *c, const struct cert_set *s, const uint16_t *peer,
                                   size_t n, struct cert_cfg *out, uint16_t *scheme);
/* Runs the certificate callback (SSL_CTX_set_cert_cb): 1 go on, 0 failed (alert set), -1 retry. */
int certset_run_cb(SSL *c);

/* seclevel.c: the security level and callback (SSL_CTX_set_security_level(3)). */
typedef int (*qtls_sec_cb)(const SSL *, const SSL_CTX *, int, int, int, void *, void *);
struct seclevel {
    int level;
    qtls_sec_cb cb; /* NULL: OpenSSL's default rules */
    void *ex;
};
/* Asks the callback (or the default rules) whether `bits` of security is enough for `op`. */
int seclevel_allow(const SSL *s, const SSL_CTX *ctx, int op, int bits, int nid, void *other);
/*
 * OpenSSL's ssl_security_cert: a certificate we load (vfy = 0) or chain, its key size and the
 * digest it is signed with against the level. 1 if fine, else the SSL_R_ reason (not raised).
 */
int seclevel_cert(const SSL *s, const SSL_CTX *ctx, X509 *x, int is_ee);
/* The same, raising the reason (seclevel_check_chain: every certificate, as CAs). 1 or 0. */
QTLS_MUST_CHECK int seclevel_check_cert(const SSL *s, const SSL_CTX *ctx, X509 *x, int is_ee);
QTLS_MUST_CHECK int seclevel_check_chain(const SSL *s, const SSL_CTX *ctx, STACK_OF(X509) *chain);
/* May this connection offer or accept group `id` at its level (tls_group_allowed)? */
int seclevel_group_ok(const SSL *c, uint16_t id);
/* The level in force for a connection or context (clamped to 0..5). */
int seclevel_of(const SSL *s, const SSL_CTX *ctx);

/* dh.c: the TLS 1.2 DHE settings, accepted and stored (TLS 1.3 has no DHE suites). */
struct dh_params {
    EVP_PKEY *tmp; /* SSL_CTX_set0_tmp_dh_pkey (owned) */
    int tmp_auto;  /* SSL_CTX_set_dh_auto */
};
void dh_params_free(struct dh_params *d);
/* SSL_CTRL_SET_TMP_DH, SSL_CTRL_SET_TMP_DH_CB and SSL_CTRL_SET_DH_AUTO; *handled = 0 else. */
long dh_ctrl(SSL_CTX *ctx, SSL *s, int cmd, long larg, void *parg, int *handled);

/*
 * slot_cache.c: a few values found again by the exact bytes they were made from (a context's
 * decoded peer certificates, its compressed chains), under one lock, made on first use.
 */
struct slot_cache;
/* *where's cache, made (with the function that frees its values) if none; NULL if that failed. */
struct slot_cache *slot_cache_of(struct slot_cache **where, void (*free_value)(void *));
/* Calls take(value, arg) under the lock for the value stored under (tag, key) and returns its
   result; 0 if there is none (or cache is NULL). */
int slot_cache_find(struct slot_cache *cache, uint8_t tag, const uint8_t *key, size_t len,
                    int (*take)(void *value, void *arg), void *arg);
/* Stores value under a copy of (tag, key), replacing the oldest; the cache owns value from now
   on (freed at once if it cannot be stored). */
void slot_cache_put(struct slot_cache *cache, uint8_t tag, const uint8_t *key, size_t len,
                    void *value);
void slot_cache_free(struct slot_cache *cache);

/* cert_comp.c: the algorithms we compress with and accept, in preference order (RFC 8879). */
struct cert_comp_pref {
    uint8_t alg[CC_LIMIT - 1];
    uint8_t n; /* 0: certificate compression off */
};
/* Test hook: how many times a chain was compressed (not taken from the cache) so far. */
size_t cert_comp_test_compressions(void);

/* custom_ext.c (the rest of its prototypes follow the extension section) */
struct custom_exts;
void custom_exts_free(struct custom_exts *e);

struct ssl_ctx_st {
    int references;
    const SSL_METHOD *method;
    CRYPTO_EX_DATA ex_data;
    uint64_t options;
    uint32_t mode;
    int min_version, max_version;
    const SSL_QUIC_METHOD *quic_method;
    struct suite_list suites;
    uint16_t groups[QTLS_MAX_GROUPS];
    uint8_t n_groups;
    struct cert_set certs; /* certset.c */
    pem_password_cb *passwd_cb; /* SSL_CTX_set_default_passwd_cb */
    void *passwd_arg;
    STACK_OF(X509_NAME) *client_ca, *ca_names; /* ca_list.c */
    X509_STORE *store;
    X509_VERIFY_PARAM *param;
    int verify_mode;
    SSL_verify_cb verify_cb;
    uint8_t *alpn; /* client offer, wire format */
    size_t alpn_len;
    SSL_CTX_alpn_select_cb_func alpn_select_cb;
    void *alpn_select_arg;
    SSL_CTX_keylog_cb_func keylog_cb;
    long session_cache_mode;
    size_t max_cert_list;
    int (*servername_cb)(SSL *, int *, void *);
    void *servername_arg;
    SSL_client_hello_cb_fn client_hello_cb; /* client_hello.c */
    void *client_hello_arg;
    int (*status_cb)(SSL *, void *); /* OCSP stapling (ocsp.c), both roles */
    void *status_arg;
    int status_type; /* copied by SSL_new: -1 or TLSEXT_STATUSTYPE_ocsp */

    /* Sessions and tickets (session.c, ticket.c) */
    long session_timeout;   /* seconds; ticket lifetime (default 7200, as OpenSSL) */
    size_t num_tickets;     /* NewSessionTickets per handshake (default 2) */
    uint32_t max_early_data; /* != 0 enables 0-RTT tickets (sent as 0xffffffff in QUIC) */
    uint8_t sid_ctx[SSL_MAX_SID_CTX_LENGTH];
    size_t sid_ctx_len;
    int (*new_session_cb)(SSL *, SSL_SESSION *);
    SSL_CTX_generate_session_ticket_fn ticket_gen_cb;
    SSL_CTX_decrypt_session_ticket_fn ticket_dec_cb;
    void *ticket_cb_arg;
    SSL_allow_early_data_cb_fn allow_early_data_cb;
    void *allow_early_data_arg;
    unsigned early_set_on_ctx; /* OWN_*_EARLY_DATA* bits: 0-RTT settings this context made */
    int (*ticket_key_evp_cb)(SSL *, unsigned char *, unsigned char *, EVP_CIPHER_CTX *,
                             EVP_MAC_CTX *, int);
    int (*client_cert_cb)(SSL *, X509 **, EVP_PKEY **);
    struct ticket_keys *ticket_keys; /* built-in rotating keys, made on first use */
    struct slot_cache *cert_cache;   /* decoded peer certificates, reused (cert.c) */
    struct replay_filter *replay;    /* single-use 0-RTT tickets unless SSL_OP_NO_ANTI_REPLAY */
    /* Stored and reported back only: stateless tickets need no internal cache (session.c). */
    void (*remove_session_cb)(SSL_CTX *, SSL_SESSION *);
    SSL_SESSION *(*get_session_cb)(SSL *, const unsigned char *, int, int *);
    long session_cache_size;
    uint32_t recv_max_early_data; /* QUIC bounds 0-RTT by flow control, not by this */
    SSL_async_callback_fn async_cb; /* compat_tcp.c: stored, never called (no async jobs) */
    void *async_cb_arg;
    /* callbacks.c: info and message callbacks, inherited by SSL_new */
    void (*info_callback)(const SSL *, int, int);
    void (*msg_callback)(int, int, int, const void *, size_t, SSL *, void *);
    void *msg_callback_arg;
    int post_handshake_auth; /* stored, no effect: RFC 9001 §4.4 */
    struct sigalg_conf *sigalg_conf; /* sigalgs.c, shared with SSL_new's connections */
    STACK_OF(SSL_CIPHER) *cipher_stack; /* cipher_lists.c: SSL_CTX_get_ciphers' view, owned */
    /* cert.c: SSL_CTX_set_cert_verify_callback, run instead of X509_verify_cert */
    int (*app_verify_cb)(X509_STORE_CTX *, void *);
    int reverify_on_resume; /* SSL_CTX_set_reverify_on_resume */
    int grease_enabled;     /* SSL_CTX_set_grease_enabled (RFC 8701), copied by SSL_new */
    int sct_requested;      /* sct.c: SSL_CTX_enable_signed_cert_timestamps, copied by SSL_new */
    uint8_t *sct_list;      /* sct.c: the server's SCT list, unless the connection has one */
    size_t sct_list_len;
    void *app_verify_arg;
    struct seclevel sec; /* seclevel.c, copied by SSL_new */
    struct dh_params dh; /* dh.c: stored only (TLS 1.2 DHE) */
    struct custom_exts *custom_exts; /* custom_ext.c: SSL_CTX_add_custom_ext and friends */
    struct cert_comp_pref cert_comp;          /* cert_comp.c: copied by SSL_new */
    struct slot_cache *cert_comp_cache; /* cert_comp.c: compressed chains, made on use */
};

/*
 * A session: what a client needs to resume (ticket + PSK) and what a server
 * seals into a ticket. Immutable once handed to the application, except
 * ticket appdata (set from the ticket-generation callback).
 */
struct ssl_session_st {
    int references;
    CRYPTO_EX_DATA ex_data;
    const SSL_CIPHER *cipher;
    struct secret psk;       /* the resumption PSK (RFC 8446 §4.6.1) */
    uint64_t time;           /* issue time, seconds since the epoch */
    uint64_t arrival_us;     /* client: the ticket's arrival in µs (kept in memory only) */
    uint64_t timeout;        /* lifetime in seconds */
    uint32_t age_add;        /* ticket_age_add */
    uint32_t max_early_data; /* 0 or 0xffffffff in QUIC */
    uint8_t *ticket;         /* client: the opaque ticket to send */
    size_t ticket_len;
    char *hostname;          /* SNI of the original connection */
    uint8_t alpn[256];
    size_t alpn_len;
    uint8_t *appdata;        /* SSL_SESSION_set1_ticket_appdata */
    size_t appdata_len;
    uint8_t *early_context;  /* SSL_set_quic_early_data_context of the issuing server */
    size_t early_context_len;
    uint8_t sid_ctx[SSL_MAX_SID_CTX_LENGTH];
    size_t sid_ctx_len;
    /* The peer's leaf, if any: the DER kept from d2i_SSL_SESSION or a ticket, decoded on first
     * use (session_peer) into peer, which is set once; or peer alone, from a handshake. */
    uint8_t *peer_der;
    size_t peer_der_len;
    X509 *peer;
    long verify_result;
    int not_resumable;
    uint8_t id[SSL_MAX_SSL_SESSION_ID_LENGTH]; /* SSL_SESSION_set1_id; empty unless set */
    size_t id_len;
    uint8_t *sct_list;       /* client: the server's SCT list (sct.c), for resumptions */
    size_t sct_list_len;
};

/* session.c: the session encoding shared by i2d/d2i_SSL_SESSION and ticket plaintext. */
/* Appends a versioned encoding of `s` (with_ticket: include the client's ticket bytes). */
void session_encode(const SSL_SESSION *s, int with_ticket, struct wr *w);
/* Parses an encoding made by session_encode; NULL (with an error queued) on any defect. */
SSL_SESSION *session_decode(struct rd r);
/* The session a connection resumed or established (c->session), made on demand. */
SSL_SESSION *session_new_from_conn(SSL *c);
/* The session's peer leaf, decoding the kept DER on first use; NULL if none or undecodable. */
X509 *session_peer(const SSL_SESSION *s);
/* Does the session name a peer leaf (decoded or not)? */
int session_has_peer(const SSL_SESSION *s);
/* Resumption: the connection's peer becomes s's leaf, decoded when first asked for. 1 or 0. */
QTLS_MUST_CHECK int session_conn_defer_peer(SSL *c, SSL_SESSION *s);
/* Fills peer_cert and peer_chain from a deferred session peer (accessors); 0 on failure. */
int session_conn_peer(SSL *c);

/* ticket.c: sealing and opening tickets (RFC 8446 §4.6.1: opaque to the client). */
/*
 * Seals the plaintext into an opaque ticket. 0 on failure (error queued), or 0 with
 * nothing queued when the application's ticket key callback declined to issue one
 * (it returned 0): then no ticket is sent, as OpenSSL does (an empty one is illegal).
 */
QTLS_MUST_CHECK int ticket_seal(SSL *c, const uint8_t *plain, size_t plain_len, struct wr *out);
/*
 * Opens a ticket. Returns SSL_TICKET_SUCCESS (or _SUCCESS_RENEW when the key
 * is old and the ticket should be replaced), SSL_TICKET_NO_DECRYPT for an
 * unknown key or a failed check, SSL_TICKET_EMPTY / SSL_TICKET_FATAL_ERR_*.
 * On success `plain` holds the plaintext.
 */
int ticket_open(SSL *c, struct rd ticket, struct wr *plain);
void ticket_keys_free(struct ticket_keys *k);
/* Anti-replay for 0-RTT (RFC 8446 §8.1): 1 the first time a ticket is seen, 0 after. */
int replay_check_and_add(SSL_CTX *ctx, const uint8_t *ticket, size_t len, uint64_t now,
                         uint64_t window);
void replay_filter_free(struct replay_filter *r);
/* Test hooks: the clock ticket keys age by (NULL restores time()), and a forced key rotation. */
void ticket_set_test_clock(uint64_t (*now)(void));
void ticket_keys_test_rotate(SSL_CTX *ctx);

/* Where the connection is in its life. */
enum conn_phase { PHASE_BEFORE, PHASE_HANDSHAKE, PHASE_DONE, PHASE_FAILED };

/* Handshake-only state (struct hs, below) is freed when the handshake ends. */
struct hs;
struct quic_input;
struct ssl_cold;

/*
 * How the glue reaches a front door other than SSL_QUIC_METHOD (quic_tls35.c: OpenSSL 3.5's
 * third-party QUIC API). Function pointers, so that the glue calls no layer above it.
 */
struct quic_hooks {
    /* More CRYPTO data at c->read_level into the input buffer: 1 some, 0 none yet, -1 failed
       (alert recorded). */
    int (*pull)(SSL *c);
    /* The peer's transport parameters were kept (quic_take_peer_tp): 1 go on, 0 failed. */
    int (*peer_tp)(SSL *c, const uint8_t *params, size_t len);
    /* The end of each SSL_do_handshake: hands over what is due (secrets): 1, or 0 failed. */
    int (*settle)(SSL *c);
    /* Output the stack did not take yet, offered again: 1 all taken, 0 some still waits,
       -1 failed (alert recorded). */
    int (*flush)(SSL *c);
    /* Does output wait for the stack (SSL_ERROR_WANT_WRITE until it is taken)? */
    int (*out_waiting)(const SSL *c);
};
struct tls35;

/*
 * The connection. Members are grouped by concern and, within a group, laid out to leave no
 * padding (an established connection is mostly this struct: keep small flags small).
 * Handshake-only state is in struct hs, freed when the handshake ends.
 */
struct ssl_st {
    SSL_CTX *ctx;
    const SSL_METHOD *method;
    CRYPTO_EX_DATA ex_data;
    void *app_data; /* ex_data index 0 (ssl.c) */
    uint64_t options;
    uint32_t mode;
    int references;
    int min_version, max_version;
    const SSL_QUIC_METHOD *quic_method;
    uint16_t groups[QTLS_MAX_GROUPS];
    uint8_t n_groups;
    struct suite_list suites;
    uint8_t server;
    uint8_t phase; /* enum conn_phase */
    X509_VERIFY_PARAM *param; /* own verify parameters, made on first use (ssl.c); NULL: ctx's */
    char *verify_host;        /* SSL_set1_host's DNS name while param is NULL */
    SSL_verify_cb verify_cb;
    int verify_mode;
    int sct_requested; /* client: ask for SCTs (sct.c) */
    char *hostname; /* client: SNI to send; server: SNI received */
    uint8_t *alpn;  /* client offer, wire format; freed when the handshake is done */
    size_t alpn_len;
    struct sbuf alpn_selected; /* the protocol both sides agreed on */

    /* QUIC glue (quic.c) */
    uint8_t *local_tp; /* until the handshake is done */
    size_t local_tp_len;
    uint8_t *peer_tp; /* the parameters kept, see quic.c */
    size_t peer_tp_len;
    struct quic_input *input; /* quic.c: the bytes received per level, while any are unread */
    struct tls35 *tls35;          /* quic_tls35.c: the OpenSSL 3.5 API in use, else NULL */
    const struct quic_hooks *quic_hooks; /* set with tls35 */
    uint8_t *early_data_context;  /* SSL_set_quic_early_data_context */
    size_t early_data_context_len;
    int quic_tp_version;      /* 0, 0x39 or 0xffa5 */
    int peer_tp_version;      /* codepoint the kept parameters came in, -1 none */
    uint8_t read_level, write_level, last_provided_level; /* OSSL_ENCRYPTION_LEVEL */
    uint8_t grease_enabled;     /* SSL_set_grease_enabled: the client GREASEs its ClientHello */
    uint8_t early_data_enabled; /* SSL_set_quic_early_data_enabled */

    /* Outcome */
    uint8_t session_reused;    /* SSL_session_reused */
    uint8_t early_data_status; /* SSL_EARLY_DATA_NOT_SENT / _REJECTED / _ACCEPTED */
    uint8_t early_data_reason; /* enum ssl_early_data_reason_t: why (SSL_get_early_data_reason) */
    uint16_t version;
    uint16_t group_id;
    uint16_t peer_sigscheme, own_sigscheme; /* sigalgs.c: CertificateVerify schemes, 0: none */
    const SSL_CIPHER *cipher;
    long verify_result;
    X509 *peer_cert;
    STACK_OF(X509) *peer_chain; /* as received, leaf first */
    /* A resumed connection's peer is this session's leaf, moved into peer_cert and peer_chain
     * only when asked for (session_conn_peer): most resumptions never look at it. */
    SSL_SESSION *peer_session;
    STACK_OF(X509) *peer_chain_noleaf; /* server view of SSL_get_peer_cert_chain (ssl.c) */
    uint8_t client_random[32];
    struct kept_secret exporter_secret;
    struct kept_secret resumption_secret;
    uint8_t tickets_allowed; /* nst.c: server: the client offered psk_dhe_ke (§4.2.9) */
    uint8_t verified_prefix; /* cert.c, with verified_anchor */
    int shutdown;       /* SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN (ssl.c) */
    int quiet_shutdown; /* SSL_set_quiet_shutdown (ssl.c) */
    uint8_t sid_ctx_len; /* of sid_ctx below: at most SSL_MAX_SID_CTX_LENGTH */

    /* Sessions */
    SSL_SESSION *session;   /* client: set by SSL_set_session, then the one in use */
    size_t num_tickets;     /* from the context, SSL_set_num_tickets */
    uint32_t max_early_data;
    uint32_t recv_max_early_data;
    uint8_t sid_ctx[SSL_MAX_SID_CTX_LENGTH];
    /* From the context; SSL_set_allow_early_data_cb replaces them for this connection. */
    SSL_allow_early_data_cb_fn allow_early_data_cb;
    void *allow_early_data_arg;

    /* Error state, certificates */
    uint8_t want_read;            /* the last SSL_do_handshake needs more data */
    uint8_t want_write;           /* ... needs the stack to take output it holds (quic_hooks) */
    uint8_t done_waits;           /* the handshake ended; its last output waits for the stack */
    uint8_t want_client_hello_cb; /* ... or the client hello callback asked to be called again */
    uint8_t want_x509_lookup; /* ... or the certificate callback did (SSL_ERROR_WANT_X509_LOOKUP) */
    uint8_t alert;            /* pending fatal alert, 0 = none */
    uint8_t alert_sent;
    int8_t cert_slot;         /* server: the slot whose certificate was sent, -1 none */
    unsigned set_on_ssl;      /* OWN_* bits: settings made on the connection, not inherited */
    int status_type;          /* client: OCSP to request; server: OCSP requested (ocsp.c) */
    struct cert_set *certs;   /* made by SSL_use_*, SSL_set_cert_cb; NULL: the context's */
    pem_password_cb *passwd_cb; /* from the context, SSL_set_default_passwd_cb */
    void *passwd_arg;
    struct ssl_cold *cold;    /* what few connections have, made on first write (cold_get) */

    /* callbacks.c: the handshake facts the callbacks and the getters report */
    uint8_t hand_state;        /* OSSL_HANDSHAKE_STATE of the last message sent or received */
    uint8_t have_server_random;
    uint8_t server_random[32]; /* of the ServerHello (never of a HelloRetryRequest) */
    /* verify_data is Hash.length (RFC 8446 §4.4.4): 48 bytes at most with TLS 1.3's suites */
    uint8_t finished_len, peer_finished_len;
    uint8_t finished[QTLS_MAX_HASH_LEN], peer_finished[QTLS_MAX_HASH_LEN];
    uint32_t ticket_max_early_data; /* nst.c: client: the early_data of the ticket being read */

    struct hs *hs;

    /* Tickets (nst.c) */
    size_t extra_tickets;      /* server: SSL_new_session_ticket requests not yet sent */
    uint64_t tickets_sent;     /* server: the nonce counter of this connection's tickets */

    struct sigalg_conf *sigalg_conf; /* sigalgs.c: the context's at SSL_new, until set here */
    /* cert.c: the chain X509_verify_cert built, or, when it is the first verified_prefix
     * certificates of peer_chain then at most verified_anchor, those two (made when asked for) */
    STACK_OF(X509) *verified_chain;
    X509 *verified_anchor;
    struct seclevel sec;            /* seclevel.c */
    uint8_t *raw_ciphers;           /* server: the ClientHello's cipher_suites (SSL_get0_raw_cipherlist) */
    uint32_t custom_ext_sent;           /* custom_ext.c: client: the custom extensions offered */
    uint32_t custom_ext_received;       /* custom_ext.c: server: the ones the client sent */
    /* The byte-aligned fields last, in one run with no padding between them. */
    uint16_t raw_ciphers_len;           /* a vector<2..2^16-2> (RFC 8446 §4.1.2) */
    struct cert_comp_pref cert_comp;    /* cert_comp.c: from the context or SSL_set1_... */
    uint8_t cert_comp_client, cert_comp_server; /* the algorithm each side's Certificate used */
    struct sbuf peer_groups; /* sigalgs.c: server: the client's supported_groups (wire form) */
};

/*
 * Settings and state few connections have, behind ssl_st.cold: a QUIC connection seldom has
 * BIOs, callbacks of its own, DH settings, CA lists, OCSP or SCT data or the cipher stack views,
 * and these 150-odd bytes are made only when one is written (cold_get). cold_peek reads them,
 * all zero when none was made. Freed with the connection (each module frees its members).
 */
struct ssl_cold {
    /* compat_tcp.c: BIOs held with OpenSSL's ownership rules, never used (QUIC has no record layer) */
    BIO *rbio, *wbio;
    SSL_async_callback_fn async_cb;
    void *async_cb_arg;
    /* callbacks.c: the info callback falls back to the context's at call time, as OpenSSL */
    void (*info_callback)(const SSL *, int, int);
    void (*msg_callback)(int, int, int, const void *, size_t, SSL *, void *);
    void *msg_callback_arg;
    int post_handshake_auth; /* SSL_set_post_handshake_auth: stored, no effect in QUIC */
    struct dh_params dh;     /* dh.c: stored only */
    STACK_OF(X509_NAME) *client_ca, *ca_names; /* set on the connection; NULL: the context's */
    STACK_OF(X509_NAME) *peer_ca_names;        /* the peer's certificate_authorities (ca_list.c) */
    unsigned char *ocsp_resp; /* ocsp.c: server: to staple; client: stapled by the server */
    size_t ocsp_resp_len;
    uint8_t *sct_list;        /* sct.c: server: SSL_set_signed_cert_timestamp_list; NULL: ctx's */
    size_t sct_list_len;
    uint8_t *peer_sct_list;   /* client: the server's SCT list, or the resumed session's */
    size_t peer_sct_list_len;
    STACK_OF(SSL_CIPHER) *cipher_stack;        /* cipher_lists.c: SSL_get_ciphers' view, owned */
    STACK_OF(SSL_CIPHER) *client_cipher_stack; /* cipher_lists.c: SSL_get_client_ciphers' */
};

static inline const struct ssl_cold *cold_peek(const SSL *s)
{
    static const struct ssl_cold none;
    return s->cold != NULL ? s->cold : &none;
}

/* The connection's cold part, made zeroed on first use; NULL (error raised) if memory ran out. */
static inline struct ssl_cold *cold_get(SSL *s)
{
    if (s->cold == NULL && (s->cold = OPENSSL_zalloc(sizeof(*s->cold))) == NULL)
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
    return s->cold;
}

/* The cold part to store a value in: made if `needed`, else only the existing one (NULL: none). */
static inline struct ssl_cold *cold_for(SSL *s, int needed)
{
    return needed ? cold_get(s) : s->cold;
}

/* Handshake message types (RFC 8446 §4). */
enum {
    HT_CLIENT_HELLO = 1,
    HT_SERVER_HELLO = 2,
    HT_NEW_SESSION_TICKET = 4,
    HT_END_OF_EARLY_DATA = 5,
    HT_ENCRYPTED_EXTENSIONS = 8,
    HT_CERTIFICATE = 11,
    HT_CERTIFICATE_REQUEST = 13,
    HT_CERTIFICATE_VERIFY = 15,
    HT_FINISHED = 20,
    HT_KEY_UPDATE = 24,
    HT_COMPRESSED_CERTIFICATE = 25, /* RFC 8879 §4 */
    HT_MESSAGE_HASH = 254,
};

/* ------------------------------------------------------------------ */
/* Certificates (cert.c)                                               */
/* ------------------------------------------------------------------ */

/*
 * Verifies the peer chain (leaf first) against the context's store with the
 * connection's X509_VERIFY_PARAM (host name), through the verify callback.
 * Records the result in c->verify_result. Returns 1 if the handshake may go
 * on (verified, or SSL_VERIFY_NONE), 0 with an alert and error otherwise.
 */
QTLS_MUST_CHECK int cert_verify_peer_chain(SSL *c, STACK_OF(X509) *chain);
/* Frees the verified chain; before peer_chain is replaced or freed, makes it stand alone. */
void cert_verified_free(SSL *c);
void cert_verified_detach(SSL *c);
/* The X509_STORE_CTX ex_data index holding the SSL (SSL_get_ex_data_X509_STORE_CTX_idx). */
int cert_store_ctx_ssl_idx(void);
/*
 * Decodes one DER certificate exactly (all bytes used), through a small
 * per-context cache of recent certificates: a client meets the same server
 * chain again and again, and OpenSSL 3's decoder set-up is a quarter of a
 * handshake. Returns a new reference, NULL if the bytes are not a certificate.
 */
X509 *cert_decode(SSL_CTX *ctx, const uint8_t *der, size_t len);
void cert_fill_extension_cache(X509 *x);
/* X509_LOOKUP_hash_dir's directories, with caches filled before the store shares them. */
X509_LOOKUP_METHOD *cert_hashed_dir_lookup(void);

/* ------------------------------------------------------------------ */
/* QUIC glue (quic.c)                                                  */
/* ------------------------------------------------------------------ */

/* Delivers a level's secrets to the QUIC stack (read or write may be NULL for 0-RTT). */
QTLS_MUST_CHECK int quic_set_secrets(SSL *c, OSSL_ENCRYPTION_LEVEL level,
                                     const struct secret *read, const struct secret *write);
/* Hands a level's packed output to add_handshake_data. */
QTLS_MUST_CHECK int quic_add_handshake_data(SSL *c, OSSL_ENCRYPTION_LEVEL level,
                                            const uint8_t *p, size_t n);
QTLS_MUST_CHECK int quic_flush_flight(SSL *c);
/* Sends the pending alert once, at the current write level. */
void quic_send_pending_alert(SSL *c);
/*
 * Returns 1 and the next whole message (header included) at the current
 * read level if one is buffered; 0 if more data is needed; -1 on a level
 * violation (error already raised).
 */
QTLS_MUST_CHECK int quic_peek_message(SSL *c, struct rd *msg);
/* Drops the message returned by quic_peek_message. */
void quic_consume_message(SSL *c, size_t len);
/*
 * The levels a handshake state reads and writes at (client.c, server.c derive them from the
 * state): fails, levels unchanged, if bytes are left at the old read level (RFC 8446 §5.1).
 * The write level is the one SSL_quic_write_level reports and alerts go out at.
 */
QTLS_MUST_CHECK int quic_set_levels(SSL *c, OSSL_ENCRYPTION_LEVEL read,
                                    OSSL_ENCRYPTION_LEVEL write);
/* Frees the input buffers. */
void quic_free_buffers(SSL *c);
/* Drops what the glue needs only until the handshake is done (our transport parameters). */
void quic_handshake_done(SSL *c);
/* Test hook: the bytes buffered at a level, and the buffer's size (0 and 0 when none). */
void quic_test_input(const SSL *c, OSSL_ENCRYPTION_LEVEL level, size_t *len, size_t *cap);
/* Frees the input buffers of levels with nothing left unread (between API calls only). */
void quic_release_consumed(SSL *c);
/* SSL_provide_quic_data without the front-door checks (the 3.5 API's pull uses it). */
QTLS_MUST_CHECK int quic_buffer_input(SSL *ssl, OSSL_ENCRYPTION_LEVEL level, const uint8_t *data,
                                      size_t len);
/* SSL_set_quic_transport_params without the front-door checks: copies; NULL/0 clears. */
QTLS_MUST_CHECK int quic_set_local_tp(SSL *ssl, const uint8_t *params, size_t len);
/* Raises QTLS_R_QUIC_API_MIXED naming the function called; returns 0. */
int quic_api_mixed(const char *function);

/* ------------------------------------------------------------------ */
/* Handshake (handshake.c, msg.c, client.c, server.c, extensions.c)    */
/* ------------------------------------------------------------------ */

/* What a state function asks of the driver. */
enum hs_wait {
    HS_ERROR,
    HS_CONTINUE,
    HS_WANT_MESSAGE,
    HS_FLUSH, /* a flight ends here: hand it to the QUIC stack and flush, then go on */
    HS_DONE,
    HS_WANT_CLIENT_HELLO_CB,
    HS_WANT_X509_LOOKUP
};

/*
 * qtls_fail for a state function: the same error and alert, and HS_ERROR as its result, so that
 * no state function returns an int that happens to equal HS_ERROR.
 */
#define hs_fail(c, alert, reason) (qtls_fail((c), (alert), (reason)), HS_ERROR)

/*
 * Extensions the engine knows, one row each in the table of extensions.c. The order is the
 * ClientHello's (and every message's): early_data and pre_shared_key stay the last rows a
 * ClientHello carries (§4.2.11); a new row goes before them.
 */
enum ext_idx {
    EXT_SERVER_NAME,
    EXT_STATUS_REQUEST,
    EXT_SCT,
    EXT_CERTIFICATE_AUTHORITIES,
    EXT_SUPPORTED_GROUPS,
    EXT_SIGNATURE_ALGORITHMS,
    EXT_ALPN,
    EXT_SUPPORTED_VERSIONS,
    EXT_PSK_KEY_EXCHANGE_MODES,
    EXT_KEY_SHARE,
    EXT_COOKIE,
    EXT_QUIC_TP,
    EXT_QUIC_TP_DRAFT,
    EXT_COMPRESS_CERTIFICATE, /* RFC 8879 (cert_comp.c) */
    EXT_EARLY_DATA,
    EXT_PRE_SHARED_KEY,
    EXT_PADDING,                   /* recognised, never sent */
    EXT_SIGNATURE_ALGORITHMS_CERT, /* recognised, never sent */
    EXT_COUNT
};

/* The messages extensions may appear in (RFC 8446 §4.2 table): a row has a function per one. */
enum ext_msg_idx { MSG_CH, MSG_SH, MSG_HRR, MSG_EE, MSG_CT, MSG_CR, MSG_NST, MSG_COUNT };
enum ext_msg {
    EM_CH = 1 << MSG_CH,
    EM_SH = 1 << MSG_SH,
    EM_HRR = 1 << MSG_HRR,
    EM_EE = 1 << MSG_EE,
    EM_CT = 1 << MSG_CT,
    EM_CR = 1 << MSG_CR,
    EM_NST = 1 << MSG_NST,
};

/* The extensions of one message, split out by the generic loop. */
struct ext_set {
    uint32_t present; /* bit per enum ext_idx */
    struct rd body[EXT_COUNT];
};

static inline int ext_has(const struct ext_set *e, enum ext_idx i)
{
    return (e->present >> i) & 1;
}

/*
 * A row's function for one message. A writer writes the body of its extension (the table loop
 * writes the type and length) and returns 1, EXT_NOT_SENT to send nothing, or 0 on failure
 * (alert set). A parser gets the body, or NULL when the peer did not send the extension (its
 * "missing" rule), and returns 1 or 0 (alert set).
 */
#define EXT_NOT_SENT (-1)
typedef int ext_write_fn(SSL *c, struct wr *w);
typedef int ext_parse_fn(SSL *c, const struct rd *body);
uint16_t ext_codepoint(enum ext_idx i);

struct hs {
    int state;
    struct transcript transcript;
    struct secret early_secret, handshake_secret, master_secret;
    struct secret client_hs, server_hs; /* traffic secrets */
    struct secret client_ap, server_ap;

    /* Output: messages packed per level, handed over when the level changes or at flush. */
    struct wr out;
    OSSL_ENCRYPTION_LEVEL out_level;
    int flight_pending;

    /* Key exchange */
    EVP_PKEY *kex_key;
    const struct group *kex_group;
    int hrr_done;
    uint8_t grease_seed[8]; /* client: RFC 8701 values, one seed for both ClientHellos */
    uint8_t my_share[97];   /* our public key_share */
    size_t my_share_len;

    /* Client */
    uint32_t offered;     /* extensions the client sent, bit per enum ext_idx */
    struct wr cookie;     /* from HelloRetryRequest */
    int cert_requested;
    struct wr cert_request_context;
    EVP_PKEY *peer_key;

    /* Server */
    struct wr peer_share;   /* the client's key_share, until ServerHello */
    uint8_t ch1_digest[32]; /* fingerprint of ClientHello1 for the §4.1.2 check */
    uint16_t sigscheme;
    struct cert_cfg cert; /* the pair chosen to authenticate with (references), certset.c */
    uint16_t peer_sigschemes[64];
    size_t n_peer_sigschemes;
    uint16_t tp_codepoint_reply; /* which codepoint(s) to answer in: bit 0 = 0x39, bit 1 = 0xffa5 */

    /* Resumption and 0-RTT (resumption.c) */
    int resumed;                   /* the PSK was accepted */
    int psk_offered;               /* client: pre_shared_key sent */
    size_t psk_binders_at;         /* client: in out, where the binders list begins ... */
    size_t psk_binder_at;          /* ... and where the one binder goes (§4.2.11.2) */
    int early_data_offered;        /* client: early_data sent */
    int psk_dhe_ke;                /* server: the client allows psk_dhe_ke */
    const SSL_CIPHER *hrr_cipher;  /* client: the suite of the HelloRetryRequest */
    struct secret client_early;    /* client_early_traffic_secret */
    uint16_t psk_identity;         /* server: the identity accepted */

    int staple_ocsp; /* server: the status callback gave a response to send */
    int send_sct;    /* server: the client asked for SCTs (sct.c) */

    /* cert_comp.c (RFC 8879): we sent compress_certificate (so a CompressedCertificate may
       come), and the algorithm our own Certificate is to be compressed with (0: none). */
    int cert_comp_offered;
    uint8_t cert_comp_tx;

    /* Server: the ClientHello being read, while the client hello callback runs (client_hello.c) */
    const struct client_hello *client_hello;

    /*
     * What the rows of the ClientHello (server) or ServerHello / HelloRetryRequest (client)
     * hand the hello logic: views into the message being read, valid while it is read.
     */
    struct {
        uint32_t present;           /* bit per enum ext_idx */
        struct rd versions;         /* CH: ProtocolVersion versions<2..254> */
        struct rd groups, shares;   /* CH: NamedGroupList, KeyShareEntry client_shares<> */
        struct rd psk_modes, psk;   /* CH: bodies, read by resumption.c */
        uint16_t version;           /* SH, HRR: selected_version */
        uint16_t group;             /* SH, HRR: the server's share's group / selected_group */
        struct rd share;            /* SH: its key_exchange */
        uint16_t psk_identity;      /* SH: selected_identity */
        struct rd tp;               /* CH, EE: quic_transport_parameters (0x39) */
    } hello;
    int cert_entry_is_leaf; /* while a CertificateEntry's extensions are read (ocsp.c) */
};

/* A ClientHello's fields as received (RFC 8446 §4.1.2); views into the message. */
struct client_hello {
    uint16_t legacy_version;
    struct rd random, session_id, suites, compression, exts;
    struct ext_set e;
};

/* sct.c: signed certificate timestamp lists (RFC 6962 §3.3 in RFC 8446 §4.4.2.1). */
void sct_free(SSL_CTX *ctx, SSL *ssl);
ext_write_fn sct_client_write_request, sct_server_write_list; /* the extension's row */
ext_parse_fn sct_server_take_request, sct_client_take_list;
QTLS_MUST_CHECK int sct_adopt_session(SSL *c, const SSL_SESSION *s);

/*
 * cert_comp.c: certificate compression (RFC 8879). The compress_certificate extension in a
 * ClientHello or CertificateRequest (write_request marks hs->cert_comp_offered; take_offer picks
 * hs->cert_comp_tx), and the CompressedCertificate message's body both ways.
 */
ext_write_fn cert_comp_write_request;
ext_parse_fn cert_comp_take_offer;
/* Appends algorithm, uncompressed_length and the compressed `body` (from the context's cache). */
QTLS_MUST_CHECK int cert_comp_write_body(SSL *c, int alg, const uint8_t *body, size_t n,
                                         struct wr *w);
/* Decompresses a CompressedCertificate body into out (the Certificate body); alert on failure. */
QTLS_MUST_CHECK int cert_comp_read_body(SSL *c, struct rd body, struct wr *out);

/* ocsp.c: OCSP stapling (RFC 8446 §4.4.2.1). The ctrl helpers follow OpenSSL's semantics. */
int ocsp_set_status_type(int *type, long v);
long ocsp_set_response(SSL *s, unsigned char *resp, long len);
long ocsp_get_response(const SSL *s, const unsigned char **out);
QTLS_MUST_CHECK int ocsp_client_run_cb(SSL *c);
QTLS_MUST_CHECK int ocsp_server_run_cb(SSL *c);
/* The status_request row's functions (extensions.c). */
ext_write_fn ocsp_client_write_request, ocsp_server_write_response;
ext_parse_fn ocsp_server_take_request, ocsp_client_take_response;

/* ca_list.c: certificate_authorities (RFC 8446 §4.2.4) and the CA name lists. */
void ca_list_free(SSL_CTX *ctx, SSL *s);
/* The certificate_authorities row's functions (extensions.c). */
ext_write_fn ca_list_server_write, ca_list_client_write;
ext_parse_fn ca_list_take;

/*
 * client_hello.c: runs the context's client hello callback on `ch` (OpenSSL calls it first, before
 * any other ClientHello processing). 1: go on; 0: failed (alert recorded); -1: the callback asked
 * to be called again (SSL_CLIENT_HELLO_RETRY).
 */
int client_hello_run_cb(SSL *c, const struct client_hello *ch);

/*
 * Settings an SSL_set_* call made on the connection itself (SSL.set_on_ssl); the others follow
 * SSL_set_SSL_CTX to the new context (ssl.c). The 0-RTT ones follow only when the new context
 * set them itself (SSL_CTX.early_set_on_ctx).
 */
enum {
    OWN_VERIFY = 1 << 0, /* mode and callback */
    OWN_VERIFY_DEPTH = 1 << 1,
    OWN_NUM_TICKETS = 1 << 2,
    OWN_MAX_EARLY_DATA = 1 << 3,
    OWN_RECV_MAX_EARLY_DATA = 1 << 4,
    OWN_ALLOW_EARLY_DATA_CB = 1 << 5,
};

/* Starts the handshake state (client or server) on the first SSL_do_handshake. */
QTLS_MUST_CHECK int hs_start(SSL *c);
/* Frees handshake-only state, wiping secrets. */
void hs_free(SSL *c);
/* SSL_process_quic_post_handshake without the front-door checks: 1, or 0 failed (alert sent). */
QTLS_MUST_CHECK int hs_process_post_handshake(SSL *ssl);

/* quic_tls35.c: OpenSSL 3.5's third-party QUIC API over the same engine. */
/* SSL_read and friends on a 3.5-API connection: drives the handshake or reads post-handshake
   messages; always <= 0 (SSL_get_error: SSL_ERROR_WANT_READ when all was processed). */
int tls35_read(SSL *s);
void tls35_free(SSL *s);

/* msg.c: message framing on top of the QUIC glue. */
/* Opens a message of `type` at `level` in hs->out; returns the body start for msg_end. */
size_t msg_begin(SSL *c, OSSL_ENCRYPTION_LEVEL level, uint8_t type);
/* Closes it, adds it to the transcript. */
QTLS_MUST_CHECK int msg_end(SSL *c, size_t at);
/* Sets the length of the message opened at `at` to what is written so far (before msg_end). */
void msg_set_length(SSL *c, size_t at);
/*
 * Hands over packed output at its level (add_handshake_data): at a level change, and before
 * new keys are delivered so that the peer gets the message before what they protect.
 */
QTLS_MUST_CHECK int msg_flush_output(SSL *c);
/* Ends a flight: hands over the output, then flush_flight if anything was handed over. */
QTLS_MUST_CHECK int msg_end_flight(SSL *c);
/*
 * Reads the next message: 1 with type and body, 0 if more data is needed,
 * -1 on error. Rejects KeyUpdate and the types QUIC never carries.
 */
QTLS_MUST_CHECK int msg_read(SSL *c, uint8_t *type, struct rd *body, struct rd *whole);
/* Consumes a message read by msg_read, adding it to the transcript. */
QTLS_MUST_CHECK int msg_consume(SSL *c, const struct rd *whole);
/* Fails with unexpected_message unless type == want. */
QTLS_MUST_CHECK int msg_expect(SSL *c, uint8_t type, uint8_t want);
/* msg_read + msg_expect: 1 with the message, else 0 and *wait says want-message or error. */
QTLS_MUST_CHECK int msg_read_expected(SSL *c, uint8_t want, struct rd *body, struct rd *whole,
                                      enum hs_wait *wait);
/* Reads and checks the peer's CertificateVerify against c->peer_cert: HS_CONTINUE when done. */
QTLS_MUST_CHECK enum hs_wait msg_read_certificate_verify(SSL *c);
/* Reads and checks the peer's Finished (base: its handshake traffic secret): HS_CONTINUE. */
QTLS_MUST_CHECK enum hs_wait msg_read_finished(SSL *c, const struct secret *base);

/* Shared by both sides (msg.c). */
QTLS_MUST_CHECK int msg_write_certificate(SSL *c, const uint8_t *context, size_t context_len,
                                          const struct cert_cfg *cc);
QTLS_MUST_CHECK int msg_write_certificate_verify(SSL *c, EVP_PKEY *key, uint16_t scheme);
QTLS_MUST_CHECK int msg_write_finished(SSL *c, const struct secret *base);
/*
 * Reads the peer's Certificate, or a CompressedCertificate if we offered compression (RFC 8879
 * §4), and parses it (msg_parse_certificate): 1 with the message in *whole, to be consumed;
 * else 0 and *wait says want-message or error.
 */
QTLS_MUST_CHECK int msg_read_certificate(SSL *c, int allow_empty, struct rd *whole,
                                         enum hs_wait *wait);
/* Parses Certificate into c->peer_chain / c->peer_cert; an empty list is allowed only if allow_empty. */
QTLS_MUST_CHECK int msg_parse_certificate(SSL *c, struct rd body, int allow_empty);
QTLS_MUST_CHECK int msg_check_certificate_verify(SSL *c, struct rd body, EVP_PKEY *key,
                                                 const uint8_t *thash);
QTLS_MUST_CHECK int msg_check_finished(SSL *c, struct rd body, const struct secret *base,
                                       const uint8_t *thash);

/*
 * secrets.c: the connection's key schedule (RFC 8446 §7.1) below the state machines: each
 * stage derived from the transcript, key-logged, delivered to the QUIC stack, wiped.
 */
/* Early Secret from the PSK offered (client) or accepted (server). */
QTLS_MUST_CHECK int sec_set_psk(SSL *c, enum qtls_hash h, const struct secret *psk);
/* The binder (into out, hash-length bytes) over the transcript plus a partial ClientHello. */
QTLS_MUST_CHECK int sec_psk_binder(SSL *c, enum qtls_hash h, const uint8_t *partial, size_t len,
                                   uint8_t *out);
/* client_early_traffic_secret over the transcript plus `ch`; delivered for 0-RTT. */
QTLS_MUST_CHECK int sec_derive_early(SSL *c, const uint8_t *ch, size_t ch_len);
/* Handshake traffic secrets (after ServerHello), delivered at the handshake level. */
QTLS_MUST_CHECK int sec_derive_handshake(SSL *c, const uint8_t *ecdhe, size_t ecdhe_len);
/* Application traffic and exporter secrets (after server Finished), delivered. */
QTLS_MUST_CHECK int sec_derive_application(SSL *c);
/* resumption_master_secret (after client Finished). */
QTLS_MUST_CHECK int sec_derive_resumption(SSL *c);

/* resumption.c: PSK resumption with tickets and 0-RTT (RFC 8446 §4.2.10, §4.2.11, §4.6.1). */
#define QTLS_QUIC_MAX_EARLY_DATA 0xffffffffu /* RFC 9001 §4.6.1 */
/* Client: decides whether to offer c->session, and early data; computes the PSK early secret. */
QTLS_MUST_CHECK int psk_client_prepare(SSL *c);
/*
 * Client: computes the binder over the ClientHello at hs->out[at..] (its header already carrying
 * the full length) and writes it in place.
 */
QTLS_MUST_CHECK int psk_fill_binder(SSL *c, size_t at);
/* Client: after ClientHello, installs the 0-RTT write secret if early data was offered. */
QTLS_MUST_CHECK int psk_client_after_hello(SSL *c);
/* Client: the server's pre_shared_key answer (or its absence), from hs->hello. */
QTLS_MUST_CHECK int psk_client_server_hello(SSL *c);
/* SSL_CTX_set_reverify_on_resume, for a resumed handshake whose 0-RTT was not accepted. */
QTLS_MUST_CHECK int psk_client_reverify_after_encrypted_extensions(SSL *c);
/* Server: picks and checks a PSK from hs->hello (binder over `whole`), decides 0-RTT. */
QTLS_MUST_CHECK int psk_server_select(SSL *c, const struct rd *whole);
/* The early_data and pre_shared_key rows' functions (extensions.c). */
ext_write_fn psk_write_early_data_offer, psk_write_early_data_accepted,
    psk_write_ticket_early_data, psk_write_offer, psk_write_selected;
ext_parse_fn psk_take_early_data_answer, psk_take_ticket_early_data;

/*
 * nst.c: NewSessionTicket (RFC 8446 §4.6.1). Server: the tickets after the client Finished, at
 * the application level; n more (SSL_new_session_ticket after the handshake). Client: one
 * received after the handshake.
 */
QTLS_MUST_CHECK int nst_server_write_tickets(SSL *c);
QTLS_MUST_CHECK int nst_server_write_n_tickets(SSL *c, size_t n);
QTLS_MUST_CHECK int nst_client_process(SSL *c, struct rd body);

/* client.c / server.c: one step of the state machine. */
QTLS_MUST_CHECK enum hs_wait client_step(SSL *c);
QTLS_MUST_CHECK enum hs_wait server_step(SSL *c);

/*
 * custom_ext.c: the application's extensions in the ClientHello and EncryptedExtensions
 * (context: SSL_EXT_CLIENT_HELLO or SSL_EXT_TLS1_3_ENCRYPTED_EXTENSIONS). Writing and parsing
 * fail with the callback's alert recorded.
 */
QTLS_MUST_CHECK int custom_ext_write(SSL *c, unsigned context, struct wr *w);
QTLS_MUST_CHECK int custom_ext_parse(SSL *c, unsigned context, struct rd list);
/*
 * Is `type` an extension the application added for this side? 1 if it was added for the
 * message `context` (an SSL_EXT_* value), -1 if for other messages only, 0 if not at all.
 */
int custom_ext_claims(const SSL *c, uint16_t type, unsigned context);

/*
 * extensions.c: the table of extensions, one row each (RFC 8446 §4.2). The ClientHello's
 * extension list (the rows, GREASE, the application's; pre_shared_key last).
 */
QTLS_MUST_CHECK int ext_write_client_hello(SSL *c, struct wr *w);
/* The extension list of msg (SH, HRR, EE, CT for the leaf, CR, NST); EE ends with custom_ext's. */
QTLS_MUST_CHECK int ext_write(SSL *c, enum ext_msg_idx msg, struct wr *w);
/* Splits and checks a received list, then every row's parser for msg (EE: custom_ext's too). */
QTLS_MUST_CHECK int ext_parse(SSL *c, enum ext_msg_idx msg, struct rd list);
/* Server, every ClientHello: splits it into *e and runs the rows' hello parsers (hs->hello). */
QTLS_MUST_CHECK int ext_read_client_hello(SSL *c, struct rd list, struct ext_set *e);
/* Server: the rows' ClientHello parsers, on the first one only; the application's on each. */
QTLS_MUST_CHECK int ext_parse_client_hello(SSL *c, const struct ext_set *e, struct rd list,
                                           int first);
/* RFC 8701: the client's GREASE values, one per field (indexes into hs->grease_seed). */
enum grease_idx {
    GREASE_CIPHER,
    GREASE_GROUP,
    GREASE_EXT1,
    GREASE_EXT2,
    GREASE_VERSION,
    GREASE_PSK_MODE,
    GREASE_SIGALG,
};
uint16_t grease_value(const SSL *c, enum grease_idx i);
/* Records the peer's transport parameters from either codepoint, NULL if absent (quic.c). */
QTLS_MUST_CHECK int quic_take_peer_tp(SSL *c, const struct rd *v1, const struct rd *draft);

/* ------------------------------------------------------------------ */
/* API helpers (ssl.c, ctx.c)                                          */
/* ------------------------------------------------------------------ */

/*
 * callbacks.c: the info and message callbacks and the handshake facts. cb_handshake_message is
 * called for every whole handshake message sent (at msg_end) or received (when consumed); it
 * records the state, the server random and the Finished bytes, then runs the callbacks.
 */
void cb_info(const SSL *c, int where, int ret);
void cb_handshake_message(SSL *c, int sent, const uint8_t *msg, size_t len);
void cb_alert_sent(SSL *c, uint8_t alert);

/* compat_tcp.c: frees the connection's BIOs (SSL_free). */
void compat_free_bios(SSL *s);

/*
 * sigalgs.c: signature-algorithm lists (RFC 8446 §4.2.3) with OpenSSL's rules. The list we send
 * (ClientHello, or CertificateRequest) is the one the peer's CertificateVerify must use.
 */
QTLS_MUST_CHECK int sigalgs_parse_list(struct sigalg_list *dst, const char *str);
QTLS_MUST_CHECK int sigalgs_from_nids(struct sigalg_list *dst, const int *nids, long count);
long sigalgs_ctrl(struct sigalg_conf **conf, int cmd, long larg, void *parg);
/* Another holder of conf (SSL_new), and the release of one (may be NULL). */
struct sigalg_conf *sigalg_conf_ref(struct sigalg_conf *conf);
void sigalg_conf_free(struct sigalg_conf *conf);
long sigalgs_get_ctrl(SSL *s, int cmd, long larg, void *parg, int *handled);
void sigalgs_sent(const SSL *c, const uint16_t **ids, size_t *n);
/* Writes the list we send as a SignatureSchemeList. */
void sigalgs_write(const SSL *c, struct wr *w, uint16_t grease);
/* Is this scheme acceptable in the peer's CertificateVerify / one we may sign with? */
int sigalgs_we_accept(const SSL *c, uint16_t id);
int sigalgs_we_sign_with(const SSL *c, uint16_t id);
/* Picks the CertificateVerify scheme for our key among the peer's list (peer order). */
QTLS_MUST_CHECK int sigalgs_choose_scheme(EVP_PKEY *key, const uint16_t *peer, size_t n,
                                          uint16_t *out);
/* Server: the client's supported_groups, for the getters (the supported_groups row). */
ext_parse_fn sigalgs_take_peer_groups;

/* cipher_lists.c: server: keeps the ClientHello's cipher_suites bytes (alert on failure). */
QTLS_MUST_CHECK int cipher_lists_keep_raw(SSL *c, struct rd suites);
long cipher_lists_get_raw(const SSL *s, const unsigned char **out);

/* Parses "A:B:C" into a suite list; 0 if nothing valid. */
QTLS_MUST_CHECK int suites_parse_list(const char *str, struct suite_list *out);
/* Parses "X25519:P-256" into a group list; 0 if any name is unknown. */
QTLS_MUST_CHECK int groups_parse_list(const char *str, uint16_t *out, uint8_t *n);
/* Checks ALPN wire format (non-empty, no empty names). */
QTLS_MUST_CHECK int alpn_list_valid(const uint8_t *p, size_t n);
/* The group with this NID (NID_X25519, NID_X9_62_prime256v1, ...), NULL if qtls lacks it. */
const struct group *group_by_nid(int nid);
/* The same as groups_parse_list for NIDs (SSL_CTX_set1_groups). */
QTLS_MUST_CHECK int groups_from_nids(const int *nids, size_t count, uint16_t *out, uint8_t *n);
/* A min/max protocol version bound OpenSSL's TLS_method accepts (0 = no bound). */
int proto_version_valid(long v);
/* Replaces *dst with a copy of the ALPN list (NULL/0 clears): 0 on success, 1 on failure. */
int alpn_replace(uint8_t **dst, size_t *dst_len, const uint8_t *p, size_t n);

#endif
