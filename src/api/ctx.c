/*
 * SSL_CTX: the methods, the context's lifetime and
 * configuration, and SSL_CTX_ctrl for the <openssl/ssl.h> macros QUIC stacks
 * use (research/quic-api-surface.md §1.D). Defaults are those of a fresh
 * OpenSSL 3.0 context, so applications observe the same values.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "session/session.h"
#include "policy/policy.h"
#include "handshake/handshake.h"
#include "api/api.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Methods: only the version-flexible ones, the three QUIC accepts     */
/* ------------------------------------------------------------------ */

static const struct ssl_method_st method_any = {TLS_ANY_VERSION, ROLE_ANY};
static const struct ssl_method_st method_client = {TLS_ANY_VERSION, ROLE_CLIENT};
static const struct ssl_method_st method_server = {TLS_ANY_VERSION, ROLE_SERVER};

const SSL_METHOD *TLS_method(void) { return &method_any; }
const SSL_METHOD *TLS_client_method(void) { return &method_client; }
const SSL_METHOD *TLS_server_method(void) { return &method_server; }

/* ------------------------------------------------------------------ */
/* Lifetime                                                            */
/* ------------------------------------------------------------------ */

/*
 * The groups of a fresh context, as OpenSSL 3.5 and the browsers: X25519MLKEM768 first, whose
 * share goes with one of X25519 (client.c), then the classical groups.
 */
static const char default_groups[] = "X25519MLKEM768:X25519:P-256:P-384:X448";

static int ctx_set_defaults(SSL_CTX *ctx)
{
    /* What SSL_CTX_get_options/get_mode report for a fresh OpenSSL 3.0 context. */
    ctx->options = SSL_OP_ENABLE_MIDDLEBOX_COMPAT | SSL_OP_NO_COMPRESSION;
    ctx->mode = SSL_MODE_AUTO_RETRY;
    ctx->session_cache_mode = SSL_SESS_CACHE_SERVER;
    ctx->max_cert_list = SSL_MAX_CERT_LIST_DEFAULT;
    ctx->verify_mode = SSL_VERIFY_NONE;
    /* tls1_default_timeout's 2 hours and 3.0's two tickets per handshake (session.c, ticket.c) */
    ctx->session_timeout = 7200;
    ctx->num_tickets = 2;
    ctx->status_type = -1; /* no OCSP request unless asked */
    ctx->session_cache_size = SSL_SESSION_CACHE_MAX_SIZE_DEFAULT;
    ctx->recv_max_early_data = SSL3_RT_MAX_PLAIN_LENGTH;
    ctx->sec.level = 1; /* OpenSSL 3.0's default security level (seclevel.c) */
    ctx->store = X509_STORE_new();
    ctx->param = X509_VERIFY_PARAM_new();
    if (ctx->store == NULL || ctx->param == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    return suites_parse_list(QTLS_DEFAULT_SUITES, &ctx->suites) &&
           groups_parse_list(default_groups, ctx->groups, &ctx->n_groups, &ctx->group_tuples);
}

SSL_CTX *SSL_CTX_new(const SSL_METHOD *meth)
{
    if (meth == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_NULL_SSL_METHOD_PASSED);
        return NULL;
    }
    if (!OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS, NULL))
        return NULL;
    SSL_CTX *ctx = OPENSSL_zalloc(sizeof(*ctx));
    if (ctx == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    ctx->references = 1;
    ctx->method = meth;
    if (!CRYPTO_new_ex_data(CRYPTO_EX_INDEX_SSL_CTX, ctx, &ctx->ex_data)) {
        OPENSSL_free(ctx);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    /* The ticket keys now, as OpenSSL: a server's workers forked later share them. */
    if (!ctx_set_defaults(ctx) || !ticket_keys_make(ctx)) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

/*
 * Algorithms come from the default library context (crypto.c fetches them
 * once per process), so only that context and no property query are accepted.
 */
SSL_CTX *SSL_CTX_new_ex(OSSL_LIB_CTX *libctx, const char *propq, const SSL_METHOD *meth)
{
    if ((libctx != NULL && libctx != OSSL_LIB_CTX_get0_global_default()) ||
        (propq != NULL && *propq != '\0')) {
        ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT,
                       "qtls uses the default library context only");
        return NULL;
    }
    return SSL_CTX_new(meth);
}

int SSL_CTX_up_ref(SSL_CTX *ctx)
{
    __atomic_add_fetch(&ctx->references, 1, __ATOMIC_RELAXED);
    return 1;
}

void SSL_CTX_free(SSL_CTX *ctx)
{
    if (ctx == NULL || __atomic_sub_fetch(&ctx->references, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    /* ex_data first: free callbacks may still look at the context. */
    CRYPTO_free_ex_data(CRYPTO_EX_INDEX_SSL_CTX, ctx, &ctx->ex_data);
    X509_STORE_free(ctx->store);
    X509_VERIFY_PARAM_free(ctx->param);
    OPENSSL_free(ctx->alpn);
    certset_free(&ctx->certs);
    ca_list_free(ctx, NULL);
    ticket_keys_free(ctx->ticket_keys);
    replay_filter_free(ctx->replay);
    slot_cache_free(ctx->cert_cache);
    slot_cache_free(ctx->cert_comp_cache);
    dh_params_free(&ctx->dh);
    custom_exts_free(ctx->custom_exts);
    sct_free(ctx, NULL);
    sk_SSL_CIPHER_free(ctx->cipher_stack);
    sigalg_conf_free(ctx->sigalg_conf);
    OPENSSL_free(ctx);
}

const SSL_METHOD *SSL_CTX_get_ssl_method(const SSL_CTX *ctx) { return ctx->method; }

/* ------------------------------------------------------------------ */
/* Helpers shared with ssl.c                                           */
/* ------------------------------------------------------------------ */

/*
 * TLS_method accepts any (D)TLS-less version from SSL 3.0 to TLS 1.3 as a
 * bound. Storing a bound below TLS 1.3 is allowed, as in OpenSSL; the
 * handshake then fails with no_protocols_available (hs_start).
 */
int proto_version_valid(long v)
{
    if (v == 0 || (v >= SSL3_VERSION && v <= TLS1_3_VERSION))
        return 1;
    ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT, "protocol version %#lx", v);
    return 0;
}

int alpn_replace(uint8_t **dst, size_t *dst_len, const uint8_t *p, size_t n)
{
    uint8_t *copy = NULL;
    if (p != NULL && n > 0) {
        if (!alpn_list_valid(p, n)) {
            ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT, "malformed ALPN list");
            return 1;
        }
        copy = OPENSSL_memdup(p, n);
        if (copy == NULL) {
            ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
            return 1;
        }
    }
    OPENSSL_free(*dst);
    *dst = copy;
    *dst_len = copy == NULL ? 0 : n;
    return 0;
}

/* ------------------------------------------------------------------ */
/* SSL_CTX_ctrl                                                        */
/* ------------------------------------------------------------------ */

static long set_proto_bound(int *bound, long v)
{
    if (!proto_version_valid(v))
        return 0;
    *bound = (int)v;
    return 1;
}

/* Certificates and chains (certset.c), then the commands qtls does not implement. */
static long ctx_ctrl_cert(SSL_CTX *ctx, int cmd, long larg, void *parg)
{
    int handled;
    long r = certset_ctrl(ctx, NULL, cmd, larg, parg, &handled);
    if (handled)
        return r;
    r = dh_ctrl(ctx, NULL, cmd, larg, parg, &handled); /* dh.c: stored only */
    if (handled)
        return r;
    ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT, "unsupported ctrl %d", cmd);
    return 0;
}

long SSL_CTX_ctrl(SSL_CTX *ctx, int cmd, long larg, void *parg)
{
    long old;
    switch (cmd) {
    case SSL_CTRL_SET_MIN_PROTO_VERSION:
        return set_proto_bound(&ctx->min_version, larg);
    case SSL_CTRL_SET_MAX_PROTO_VERSION:
        return set_proto_bound(&ctx->max_version, larg);
    case SSL_CTRL_GET_MIN_PROTO_VERSION:
        return ctx->min_version;
    case SSL_CTRL_GET_MAX_PROTO_VERSION:
        return ctx->max_version;
    case SSL_CTRL_SET_GROUPS_LIST:
        return groups_parse_list(parg, ctx->groups, &ctx->n_groups, &ctx->group_tuples);
    case SSL_CTRL_SET_GROUPS:
        return groups_from_nids(parg, larg > 0 ? (size_t)larg : 0, ctx->groups, &ctx->n_groups,
                                &ctx->group_tuples);
    case SSL_CTRL_MODE:
        return ctx->mode |= (uint32_t)larg;
    case SSL_CTRL_CLEAR_MODE:
        return ctx->mode &= ~(uint32_t)larg;
    case SSL_CTRL_SET_SESS_CACHE_MODE:
        old = ctx->session_cache_mode;
        ctx->session_cache_mode = larg;
        return old;
    case SSL_CTRL_GET_SESS_CACHE_MODE:
        return ctx->session_cache_mode;
    case SSL_CTRL_SET_SESS_CACHE_SIZE:
        /* Recorded and reported only: qtls keeps no session cache (session.c). */
        if (larg < 0)
            return 0;
        old = ctx->session_cache_size;
        ctx->session_cache_size = larg;
        return old;
    case SSL_CTRL_GET_SESS_CACHE_SIZE:
        return ctx->session_cache_size;
    case SSL_CTRL_SESS_NUMBER:
    case SSL_CTRL_SESS_CONNECT:
    case SSL_CTRL_SESS_CONNECT_GOOD:
    case SSL_CTRL_SESS_CONNECT_RENEGOTIATE:
    case SSL_CTRL_SESS_ACCEPT:
    case SSL_CTRL_SESS_ACCEPT_GOOD:
    case SSL_CTRL_SESS_ACCEPT_RENEGOTIATE:
    case SSL_CTRL_SESS_HIT:
    case SSL_CTRL_SESS_CB_HIT:
    case SSL_CTRL_SESS_MISSES:
    case SSL_CTRL_SESS_TIMEOUTS:
    case SSL_CTRL_SESS_CACHE_FULL:
        /* The cache statistics of an empty cache: qtls keeps none. */
        return 0;
    case SSL_CTRL_SET_MAX_CERT_LIST:
        if (larg < 0)
            return 0;
        old = (long)ctx->max_cert_list;
        ctx->max_cert_list = (size_t)larg;
        return old;
    case SSL_CTRL_GET_MAX_CERT_LIST:
        return (long)ctx->max_cert_list;
    case SSL_CTRL_SET_READ_AHEAD: /* over TCP: records read in bulk (record.c) */
        old = ctx->read_ahead;
        ctx->read_ahead = larg != 0;
        return old;
    case SSL_CTRL_GET_READ_AHEAD:
        return ctx->read_ahead;
    case SSL_CTRL_SET_MSG_CALLBACK_ARG:
        ctx->msg_callback_arg = parg; /* callbacks.c */
        return 1;
    case SSL_CTRL_SET_TLSEXT_SERVERNAME_ARG:
        ctx->servername_arg = parg;
        return 1;
    case SSL_CTRL_SET_TLSEXT_STATUS_REQ_TYPE:
        return ocsp_set_status_type(&ctx->status_type, larg);
    case SSL_CTRL_GET_TLSEXT_STATUS_REQ_TYPE:
        return ctx->status_type;
    case SSL_CTRL_SET_TLSEXT_STATUS_REQ_CB_ARG:
        ctx->status_arg = parg;
        return 1;
    case SSL_CTRL_GET_TLSEXT_STATUS_REQ_CB_ARG:
        *(void **)parg = ctx->status_arg;
        return 1;
    case SSL_CTRL_GET_TLSEXT_STATUS_REQ_CB:
        *(int (**)(SSL *, void *))parg = ctx->status_cb;
        return 1;
    case SSL_CTRL_SET_SIGALGS_LIST:
    case SSL_CTRL_SET_CLIENT_SIGALGS_LIST:
    case SSL_CTRL_SET_SIGALGS:
    case SSL_CTRL_SET_CLIENT_SIGALGS:
        return sigalgs_ctrl(&ctx->sigalg_conf, cmd, larg, parg);
    default:
        return ctx_ctrl_cert(ctx, cmd, larg, parg);
    }
}

long SSL_CTX_callback_ctrl(SSL_CTX *ctx, int cmd, void (*fp)(void))
{
    switch (cmd) {
    case SSL_CTRL_SET_TLSEXT_SERVERNAME_CB:
        ctx->servername_cb = (int (*)(SSL *, int *, void *))fp;
        return 1;
    case SSL_CTRL_SET_TLSEXT_STATUS_REQ_CB:
        ctx->status_cb = (int (*)(SSL *, void *))fp;
        return 1;
    case SSL_CTRL_SET_TLSEXT_TICKET_KEY_CB:
        /* The HMAC_CTX form, deprecated in 3.0: only the EVP_MAC_CTX form is implemented. */
        ERR_raise_data(ERR_LIB_SSL, ERR_R_UNSUPPORTED,
                       "use SSL_CTX_set_tlsext_ticket_key_evp_cb instead");
        return 0;
    default:
        ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT, "unsupported ctrl %d", cmd);
        return 0;
    }
}

/* ------------------------------------------------------------------ */
/* Options, suites                                                     */
/* ------------------------------------------------------------------ */

uint64_t SSL_CTX_set_options(SSL_CTX *ctx, uint64_t op) { return ctx->options |= op; }

uint64_t SSL_CTX_clear_options(SSL_CTX *ctx, uint64_t op) { return ctx->options &= ~op; }

uint64_t SSL_CTX_get_options(const SSL_CTX *ctx) { return ctx->options; }

int SSL_CTX_set_ciphersuites(SSL_CTX *ctx, const char *str)
{
    return suites_parse_list(str, &ctx->suites);
}

/*
 * The TLS 1.2-and-below cipher list: QUIC negotiates TLS 1.3 only, so no
 * entry of it can ever be used. The call is accepted and ignored (rather
 * than parsed) so that applications sharing configuration with TCP TLS work.
 */
int SSL_CTX_set_cipher_list(SSL_CTX *ctx, const char *str) { return 1; }

/* ------------------------------------------------------------------ */
/* ex_data                                                             */
/* ------------------------------------------------------------------ */

int SSL_CTX_set_ex_data(SSL_CTX *ctx, int idx, void *data)
{
    return CRYPTO_set_ex_data(&ctx->ex_data, idx, data);
}

void *SSL_CTX_get_ex_data(const SSL_CTX *ctx, int idx)
{
    return CRYPTO_get_ex_data(&ctx->ex_data, idx);
}

/* ------------------------------------------------------------------ */
/* Verification                                                        */
/* ------------------------------------------------------------------ */

void SSL_CTX_set_verify(SSL_CTX *ctx, int mode, SSL_verify_cb callback)
{
    ctx->verify_mode = mode;
    ctx->verify_cb = callback;
}

int SSL_CTX_get_verify_mode(const SSL_CTX *ctx) { return ctx->verify_mode; }

SSL_verify_cb SSL_CTX_get_verify_callback(const SSL_CTX *ctx) { return ctx->verify_cb; }

void SSL_CTX_set_verify_depth(SSL_CTX *ctx, int depth)
{
    X509_VERIFY_PARAM_set_depth(ctx->param, depth);
}

int SSL_CTX_get_verify_depth(const SSL_CTX *ctx) { return X509_VERIFY_PARAM_get_depth(ctx->param); }

X509_VERIFY_PARAM *SSL_CTX_get0_param(SSL_CTX *ctx) { return ctx->param; }

int SSL_CTX_set1_param(SSL_CTX *ctx, X509_VERIFY_PARAM *vpm)
{
    return X509_VERIFY_PARAM_set1(ctx->param, vpm);
}

X509_STORE *SSL_CTX_get_cert_store(const SSL_CTX *ctx) { return ctx->store; }

void SSL_CTX_set_cert_store(SSL_CTX *ctx, X509_STORE *store)
{
    X509_STORE_free(ctx->store);
    ctx->store = store;
}

void SSL_CTX_set1_cert_store(SSL_CTX *ctx, X509_STORE *store)
{
    if (store != NULL && !X509_STORE_up_ref(store))
        return;
    SSL_CTX_set_cert_store(ctx, store);
}

/* Each stored certificate's extension cache filled while one thread owns the context
   (cert_fill_extension_cache says why). */
static void store_fill_extension_caches(X509_STORE *store)
{
    if (!X509_STORE_lock(store))
        return;
    STACK_OF(X509_OBJECT) *objs = X509_STORE_get0_objects(store);
    for (int i = 0; i < sk_X509_OBJECT_num(objs); i++) {
        X509 *x = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objs, i));
        if (x != NULL)
            cert_fill_extension_cache(x);
    }
    X509_STORE_unlock(store);
}

int SSL_CTX_load_verify_file(SSL_CTX *ctx, const char *CAfile)
{
    if (!X509_STORE_load_file(ctx->store, CAfile))
        return 0;
    store_fill_extension_caches(ctx->store);
    return 1;
}

/* The store's hashed-directory lookup: qtls's in place of hash_dir's, which
   X509_STORE_load_path and X509_STORE_set_default_paths add (cert_hashed_dir_lookup says
   why). */
static X509_LOOKUP *store_dir_lookup(X509_STORE *store)
{
    X509_LOOKUP_METHOD *m = cert_hashed_dir_lookup();
    return m != NULL ? X509_STORE_add_lookup(store, m) : NULL;
}

/* As X509_STORE_load_path (a NULL or empty path fails there too, in hash_dir's ctrl). */
int SSL_CTX_load_verify_dir(SSL_CTX *ctx, const char *CApath)
{
    X509_LOOKUP *lu = store_dir_lookup(ctx->store);
    return lu != NULL && X509_LOOKUP_add_dir(lu, CApath, X509_FILETYPE_PEM) == 1;
}

int SSL_CTX_load_verify_store(SSL_CTX *ctx, const char *CAstore)
{
    if (!X509_STORE_load_store(ctx->store, CAstore))
        return 0;
    store_fill_extension_caches(ctx->store);
    return 1;
}

int SSL_CTX_load_verify_locations(SSL_CTX *ctx, const char *CAfile, const char *CApath)
{
    if (CAfile == NULL && CApath == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    if (CAfile != NULL && !SSL_CTX_load_verify_file(ctx, CAfile))
        return 0;
    return CApath == NULL || SSL_CTX_load_verify_dir(ctx, CApath);
}

/* As X509_STORE_set_default_paths: the default file, directory (SSL_CERT_DIR or
   X509_get_default_cert_dir) and store URI, the directory through store_dir_lookup. */
int SSL_CTX_set_default_verify_paths(SSL_CTX *ctx)
{
    X509_LOOKUP *lu = X509_STORE_add_lookup(ctx->store, X509_LOOKUP_file());
    if (lu == NULL)
        return 0;
    (void)X509_LOOKUP_load_file(lu, NULL, X509_FILETYPE_DEFAULT);
    if ((lu = store_dir_lookup(ctx->store)) == NULL)
        return 0;
    (void)X509_LOOKUP_add_dir(lu, NULL, X509_FILETYPE_DEFAULT);
    lu = X509_STORE_add_lookup(ctx->store, X509_LOOKUP_store());
    if (lu == NULL)
        return 0;
    (void)X509_LOOKUP_add_store(lu, NULL);
    ERR_clear_error(); /* a default location that is absent is not an error */
    store_fill_extension_caches(ctx->store);
    return 1;
}

/* ------------------------------------------------------------------ */
/* ALPN and key logging                                                */
/* ------------------------------------------------------------------ */

/* Note the inverted convention, as in OpenSSL: 0 on success, 1 on failure. */
int SSL_CTX_set_alpn_protos(SSL_CTX *ctx, const unsigned char *protos, unsigned int protos_len)
{
    return alpn_replace(&ctx->alpn, &ctx->alpn_len, protos, protos_len);
}

void SSL_CTX_set_alpn_select_cb(SSL_CTX *ctx, SSL_CTX_alpn_select_cb_func cb, void *arg)
{
    ctx->alpn_select_cb = cb;
    ctx->alpn_select_arg = arg;
}

void SSL_CTX_set_keylog_callback(SSL_CTX *ctx, SSL_CTX_keylog_cb_func cb) { ctx->keylog_cb = cb; }

SSL_CTX_keylog_cb_func SSL_CTX_get_keylog_callback(const SSL_CTX *ctx) { return ctx->keylog_cb; }
