/*
 * SSL: the connection's lifetime, its copy of the context's configuration,
 * SSL_ctrl for the <openssl/ssl.h> macros, and the getters applications use
 * after (or during) the handshake. No protocol logic lives here.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "session/session.h"
#include "policy/policy.h"
#include "transport/transport.h"
#include "handshake/handshake.h"
#include "api/api.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Lifetime                                                            */
/* ------------------------------------------------------------------ */

/*
 * A client usually names its server twice, SSL_set_tlsext_host_name and SSL_set1_host, with the
 * same string: then verify_host is the hostname's pointer, held once. These two replace either
 * one (NULL frees it) keeping that sharing right: a string is freed only when neither holds it.
 */
static void set_verify_host(SSL *s, char *name)
{
    if (s->verify_host != s->hostname)
        OPENSSL_free(s->verify_host);
    s->verify_host = name;
}

static void set_hostname_string(SSL *s, char *name)
{
    if (s->hostname != s->verify_host)
        OPENSSL_free(s->hostname);
    s->hostname = name;
}

/* The string to hold for `name` when `other` already holds an equal one: that one, else a copy. */
static char *shared_copy(const char *name, char *other)
{
    if (other != NULL && strcmp(other, name) == 0)
        return other;
    char *copy = OPENSSL_strdup(name);
    if (copy == NULL)
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
    return copy;
}

/* What SSL_new inherits: later changes to the context do not reach the connection. */
static int copy_ctx_config(SSL *c, SSL_CTX *ctx)
{
    c->method = ctx->method;
    c->options = ctx->options;
    c->mode = ctx->mode;
    c->read_ahead = (uint8_t)ctx->read_ahead;
    if (ctx->read_buffer_len != 0) /* curl sets it; its connections have BIOs, a cold part */
        SSL_set_default_read_buffer_len(c, ctx->read_buffer_len);
    c->min_version = ctx->min_version;
    c->max_version = ctx->max_version;
    c->quic_method = ctx->quic_method;
    c->suites = ctx->suites;
    memcpy(c->groups, ctx->groups, sizeof(c->groups));
    c->n_groups = ctx->n_groups;
    c->group_tuples = ctx->group_tuples;
    c->verify_mode = ctx->verify_mode;
    c->verify_cb = ctx->verify_cb;
    c->num_tickets = ctx->num_tickets;
    c->max_early_data = ctx->max_early_data;
    c->recv_max_early_data = ctx->recv_max_early_data;
    c->allow_early_data_cb = ctx->allow_early_data_cb;
    c->allow_early_data_arg = ctx->allow_early_data_arg;
    memcpy(c->sid_ctx, ctx->sid_ctx, sizeof(c->sid_ctx));
    c->sid_ctx_len = (uint8_t)ctx->sid_ctx_len; /* both at most SSL_MAX_SID_CTX_LENGTH */
    c->status_type = ctx->status_type;
    c->passwd_cb = ctx->passwd_cb;
    c->passwd_arg = ctx->passwd_arg;
    if (ctx->async_cb != NULL || ctx->async_cb_arg != NULL || ctx->msg_callback != NULL ||
        ctx->msg_callback_arg != NULL || ctx->post_handshake_auth) {
        struct ssl_cold *k = cold_get(c); /* internal.h: made only for these settings */
        if (k == NULL)
            return 0;
        k->async_cb = ctx->async_cb;
        k->async_cb_arg = ctx->async_cb_arg;
        k->msg_callback = ctx->msg_callback;
        k->msg_callback_arg = ctx->msg_callback_arg;
        k->post_handshake_auth = ctx->post_handshake_auth;
    }
    c->sigalg_conf = sigalg_conf_ref(ctx->sigalg_conf);
    c->sec = ctx->sec;
    /* c->param is made on first use (own_param): most connections only ever name a host. */
    return alpn_replace(&c->alpn, &c->alpn_len, ctx->alpn, ctx->alpn_len) == 0;
}

SSL *SSL_new(SSL_CTX *ctx)
{
    if (ctx == NULL) {
        ERR_raise(ERR_LIB_SSL, SSL_R_NULL_SSL_CTX);
        return NULL;
    }
    SSL *c = OPENSSL_zalloc(sizeof(*c));
    if (c == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    c->references = 1;
    SSL_CTX_up_ref(ctx);
    c->ctx = ctx;
    /* As OpenSSL: TLS_method makes a server until SSL_set_connect_state says otherwise. */
    c->server = ctx->method->role != ROLE_CLIENT;
    c->phase = PHASE_BEFORE;
    c->verify_result = X509_V_OK;
    c->early_data_status = SSL_EARLY_DATA_NOT_SENT;
    c->cert_slot = -1;
    c->peer_tp_version = -1;
    c->quic_tp_version = 0;
    c->grease_enabled = ctx->grease_enabled;
    c->sct_requested = ctx->sct_requested;
    c->cert_comp = ctx->cert_comp;
    c->read_level = c->write_level = c->last_provided_level = ssl_encryption_initial;
    if (!copy_ctx_config(c, ctx)) {
        SSL_free(c);
        return NULL;
    }
    /* Last, so that ex_data new-callbacks see a complete connection. */
    if (!CRYPTO_new_ex_data(CRYPTO_EX_INDEX_SSL, c, &c->ex_data)) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        SSL_free(c);
        return NULL;
    }
    return c;
}

int SSL_up_ref(SSL *s)
{
    __atomic_add_fetch(&s->references, 1, __ATOMIC_RELAXED);
    return 1;
}

void SSL_free(SSL *s)
{
    if (s == NULL || __atomic_sub_fetch(&s->references, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    /* ex_data first: free callbacks may still look at the connection. */
    CRYPTO_free_ex_data(CRYPTO_EX_INDEX_SSL, s, &s->ex_data);
    hs_free(s);
    pha_free(s);
    tls35_free(s);
    quic_free_buffers(s);
    tcp_free(s);
    SSL_SESSION_free(s->session);
    OPENSSL_clear_free(s->local_tp, s->local_tp_len);
    OPENSSL_clear_free(s->peer_tp, s->peer_tp_len);
    OPENSSL_clear_free(s->early_data_context, s->early_data_context_len);
    kept_secret_wipe(&s->exporter_secret);
    kept_secret_wipe(&s->resumption_secret);
    X509_free(s->peer_cert);
    sk_X509_pop_free(s->peer_chain, X509_free);
    sk_X509_pop_free(s->peer_chain_noleaf, X509_free);
    SSL_SESSION_free(s->peer_session);
    set_verify_host(s, NULL);
    OPENSSL_free(s->hostname);
    OPENSSL_free(s->alpn);
    sbuf_free(&s->alpn_selected);
    sbuf_free(&s->peer_groups);
    sct_free(NULL, s);
    X509_VERIFY_PARAM_free(s->param);
    if (s->certs != NULL)
        certset_free(s->certs);
    OPENSSL_free(s->certs);
    ca_list_free(NULL, s);
    cert_verified_free(s);
    OPENSSL_free(s->raw_ciphers);
    sigalg_conf_free(s->sigalg_conf);
    if (s->cold != NULL) {
        OPENSSL_free(s->cold->ocsp_resp);
        dh_params_free(&s->cold->dh);
        sk_SSL_CIPHER_free(s->cold->cipher_stack);
        sk_SSL_CIPHER_free(s->cold->client_cipher_stack);
        OPENSSL_free(s->cold);
    }
    SSL_CTX_free(s->ctx);
    OPENSSL_free(s);
}

/* ------------------------------------------------------------------ */
/* Role and state                                                      */
/* ------------------------------------------------------------------ */

/* The role can only matter before the handshake starts; the phase is left alone. */
void SSL_set_connect_state(SSL *s) { s->server = 0; }

void SSL_set_accept_state(SSL *s) { s->server = 1; }

int SSL_is_server(const SSL *s) { return s->server; }

/* Post-handshake authentication (TCP) is in init while its flight waits, as in OpenSSL. */
int SSL_in_init(const SSL *s) { return s->phase != PHASE_DONE || pha_in_init(s); }

int SSL_is_init_finished(const SSL *s) { return !SSL_in_init(s); }

int SSL_in_before(const SSL *s) { return s->phase == PHASE_BEFORE; }

/* QUIC reads only through SSL_provide_quic_data: the one thing to wait for is more of it. */
int SSL_want(const SSL *s)
{
    if (s->want_client_hello_cb)
        return SSL_CLIENT_HELLO_CB;
    if (s->want_x509_lookup)
        return SSL_X509_LOOKUP;
    if (s->want_write)
        return SSL_WRITING;
    return s->want_read ? SSL_READING : SSL_NOTHING;
}

int SSL_get_error(const SSL *s, int ret_code)
{
    if (ret_code > 0)
        return SSL_ERROR_NONE;
    unsigned long e = ERR_peek_error();
    if (e != 0)
        return ERR_GET_LIB(e) == ERR_LIB_SYS ? SSL_ERROR_SYSCALL : SSL_ERROR_SSL;
    if (s->want_client_hello_cb)
        return SSL_ERROR_WANT_CLIENT_HELLO_CB;
    if (s->want_x509_lookup)
        return SSL_ERROR_WANT_X509_LOOKUP;
    if (s->want_write)
        return SSL_ERROR_WANT_WRITE;
    if (s->want_read)
        return SSL_ERROR_WANT_READ;
    if (s->syscall_error) /* a BIO failed without a retry flag */
        return SSL_ERROR_SYSCALL;
    if ((s->shutdown & SSL_RECEIVED_SHUTDOWN) && record_close_notify_received(s))
        return SSL_ERROR_ZERO_RETURN;
    if (s->phase == PHASE_FAILED)
        return SSL_ERROR_SSL;
    return SSL_ERROR_SYSCALL;
}

/* OpenSSL's texts where its states have an equivalent. */
const char *SSL_state_string(const SSL *s)
{
    switch (s->phase) {
    case PHASE_BEFORE:
        return "PINIT";
    case PHASE_DONE:
        return "SSLOK";
    case PHASE_FAILED:
        return "SSLERR";
    default:
        return "TLSHS"; /* qtls's handshake states have no OpenSSL names */
    }
}

const char *SSL_state_string_long(const SSL *s)
{
    switch (s->phase) {
    case PHASE_BEFORE:
        return "before SSL initialization";
    case PHASE_DONE:
        return "SSL negotiation finished successfully";
    case PHASE_FAILED:
        return "error";
    default:
        return s->server ? "TLSv1.3 server handshake in progress"
                         : "TLSv1.3 client handshake in progress";
    }
}

/* Before the handshake OpenSSL reports the highest version it would use: TLS 1.3. */
int SSL_version(const SSL *s) { return s->version != 0 ? s->version : TLS1_3_VERSION; }

const char *SSL_get_version(const SSL *s) { return "TLSv1.3"; }

/*
 * OpenSSL reports TLS_ANY_VERSION until the ClientHello exists, then on a
 * client the version it offered (TLS 1.3) and on a server the ClientHello's
 * legacy_version, which is TLS 1.2 in every TLS 1.3 ClientHello (§4.1.2).
 */
int SSL_client_version(const SSL *s)
{
    if (s->phase == PHASE_BEFORE)
        return TLS_ANY_VERSION;
    return s->server ? TLS1_2_VERSION : TLS1_3_VERSION;
}

/* ------------------------------------------------------------------ */
/* Shutdown                                                            */
/* ------------------------------------------------------------------ */

/*
 * QUIC closes a connection with its own CONNECTION_CLOSE frame; TLS has no
 * close_notify to exchange (there is no record layer). So, once the
 * handshake is done, shutting down only records that both directions are
 * closed. During the handshake it fails, as in OpenSSL.
 */
int SSL_shutdown(SSL *s)
{
    if (SSL_in_init(s)) {
        ERR_raise(ERR_LIB_SSL, SSL_R_SHUTDOWN_WHILE_IN_INIT);
        return -1;
    }
    if (s->tcp)
        return tcp_shutdown(s);
    s->shutdown |= SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN;
    return 1;
}

void SSL_set_shutdown(SSL *s, int mode) { s->shutdown = mode; }

int SSL_get_shutdown(const SSL *s) { return s->shutdown; }

/* Recorded for SSL_get_quiet_shutdown; SSL_shutdown sends nothing either way. */
void SSL_set_quiet_shutdown(SSL *s, int mode) { s->quiet_shutdown = mode; }

int SSL_get_quiet_shutdown(const SSL *s) { return s->quiet_shutdown; }

/* ------------------------------------------------------------------ */
/* Context and ex_data                                                 */
/* ------------------------------------------------------------------ */

/*
 * Index 0 is SSL_set_app_data's: libcrypto reserves it with no callbacks (SSL_get_ex_new_index
 * never returns it), so it lives in the connection; the ex_data stack (two allocations, 80 B)
 * is made only for the indexes callbacks may be registered on.
 */
#define APP_DATA_IDX 0

int SSL_set_ex_data(SSL *s, int idx, void *data)
{
    if (idx == APP_DATA_IDX) {
        s->app_data = data;
        return 1;
    }
    return CRYPTO_set_ex_data(&s->ex_data, idx, data);
}

void *SSL_get_ex_data(const SSL *s, int idx)
{
    return idx == APP_DATA_IDX ? s->app_data : CRYPTO_get_ex_data(&s->ex_data, idx);
}

SSL_CTX *SSL_get_SSL_CTX(const SSL *s) { return s->ctx; }

/*
 * The connection's own verification parameters, made from its context's when first needed
 * (SSL_get0_param, a setter other than a plain SSL_set1_host, a context switch). Until then
 * verification uses the context's (cert.c) plus verify_host: the ~200 bytes of a parameter
 * object with a host list are not kept by a connection that only names its server.
 */
static X509_VERIFY_PARAM *own_param(SSL *s)
{
    if (s->param != NULL)
        return s->param;
    X509_VERIFY_PARAM *p = X509_VERIFY_PARAM_new();
    if (p == NULL || !X509_VERIFY_PARAM_inherit(p, s->ctx->param) ||
        (s->verify_host != NULL && !X509_VERIFY_PARAM_set1_host(p, s->verify_host, 0))) {
        X509_VERIFY_PARAM_free(p);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    set_verify_host(s, NULL);
    s->param = p;
    return p;
}

/*
 * The servername or client hello callback's way to pick a virtual host. Settings a connection
 * inherited from its context at SSL_new, and that no SSL_set_* call has changed, follow it to the
 * new context: verify mode and depth, ticket count. A setting made on the connection stays (as
 * OpenSSL keeps a session ID context set on it). The 0-RTT settings follow only when the new
 * context set them itself: OpenSSL never changes them on a switch, and HAProxy relies on that
 * (it enables 0-RTT on the context its connections start from, not on the per-certificate
 * contexts it switches to), while a virtual host that sets its own limit gets it. Certificates
 * follow unless SSL_use_* / SSL_set_cert_cb gave the connection its own (certset_of). The
 * verification store, the client CA list and the ALPN, servername and ticket callbacks are
 * always read from the current context.
 */
static void follow_ctx_settings(SSL *s, const SSL_CTX *to)
{
    unsigned own = s->set_on_ssl;
    if (!(own & OWN_VERIFY)) {
        s->verify_mode = to->verify_mode;
        s->verify_cb = to->verify_cb;
    }
    /* The rest of the parameters stay the old context's: they become the connection's own. */
    X509_VERIFY_PARAM *param = own_param(s);
    if (!(own & OWN_VERIFY_DEPTH) && param != NULL)
        X509_VERIFY_PARAM_set_depth(param, X509_VERIFY_PARAM_get_depth(to->param));
    if (!(own & OWN_NUM_TICKETS))
        s->num_tickets = to->num_tickets;
    unsigned early = to->early_set_on_ctx & ~own;
    if (early & OWN_MAX_EARLY_DATA)
        s->max_early_data = to->max_early_data;
    if (early & OWN_RECV_MAX_EARLY_DATA)
        s->recv_max_early_data = to->recv_max_early_data;
    if (early & OWN_ALLOW_EARLY_DATA_CB) {
        s->allow_early_data_cb = to->allow_early_data_cb;
        s->allow_early_data_arg = to->allow_early_data_arg;
    }
}

/* OpenSSL switches back to the original context on NULL; qtls does not keep it, and NULL leaves
 * the context unchanged. */
SSL_CTX *SSL_set_SSL_CTX(SSL *s, SSL_CTX *ctx)
{
    if (ctx == NULL || ctx == s->ctx)
        return s->ctx;
    follow_ctx_settings(s, ctx);
    /*
     * As OpenSSL: a session ID context inherited from the old context follows the switch
     * (tickets are then bound to the virtual host); one set on the connection stays.
     */
    if (s->sid_ctx_len == s->ctx->sid_ctx_len &&
        memcmp(s->sid_ctx, s->ctx->sid_ctx, s->sid_ctx_len) == 0) {
        memcpy(s->sid_ctx, ctx->sid_ctx, sizeof(s->sid_ctx));
        s->sid_ctx_len = (uint8_t)ctx->sid_ctx_len;
    }
    SSL_CTX_up_ref(ctx);
    SSL_CTX_free(s->ctx);
    s->ctx = ctx;
    return ctx;
}

/* ------------------------------------------------------------------ */
/* Options and suites                                                  */
/* ------------------------------------------------------------------ */

uint64_t SSL_set_options(SSL *s, uint64_t op) { return s->options |= op; }

uint64_t SSL_clear_options(SSL *s, uint64_t op) { return s->options &= ~op; }

uint64_t SSL_get_options(const SSL *s) { return s->options; }

int SSL_set_ciphersuites(SSL *s, const char *str)
{
    return suites_parse_list(str, &s->suites);
}

/* TLS 1.2-and-below list: unused by QUIC, accepted and ignored (see SSL_CTX_set_cipher_list). */
int SSL_set_cipher_list(SSL *s, const char *str) { return 1; }

/* qtls sets the suite once, at ServerHello, where it is both pending and current. */
const SSL_CIPHER *SSL_get_current_cipher(const SSL *s) { return s->cipher; }

const SSL_CIPHER *SSL_get_pending_cipher(const SSL *s) { return s->cipher; }

/* ------------------------------------------------------------------ */
/* Verification                                                        */
/* ------------------------------------------------------------------ */

/* As OpenSSL: a NULL callback keeps the one inherited from the context. */
void SSL_set_verify(SSL *s, int mode, SSL_verify_cb callback)
{
    s->set_on_ssl |= OWN_VERIFY;
    s->verify_mode = mode;
    if (callback != NULL)
        s->verify_cb = callback;
}

int SSL_get_verify_mode(const SSL *s) { return s->verify_mode; }

SSL_verify_cb SSL_get_verify_callback(const SSL *s) { return s->verify_cb; }

void SSL_set_verify_depth(SSL *s, int depth)
{
    s->set_on_ssl |= OWN_VERIFY_DEPTH;
    X509_VERIFY_PARAM *param = own_param(s);
    if (param != NULL)
        X509_VERIFY_PARAM_set_depth(param, depth);
}

int SSL_get_verify_depth(const SSL *s)
{
    return X509_VERIFY_PARAM_get_depth(s->param != NULL ? s->param : s->ctx->param);
}

/* Writable, as OpenSSL's: the connection gets its own parameters here. */
X509_VERIFY_PARAM *SSL_get0_param(SSL *s) { return own_param(s); }

int SSL_set1_param(SSL *s, X509_VERIFY_PARAM *vpm)
{
    X509_VERIFY_PARAM *param = own_param(s);
    return param != NULL && X509_VERIFY_PARAM_set1(param, vpm);
}

/*
 * Can the name not be an IP address literal? Those are made of hex digits, dots and colons
 * only; anything else is a DNS name, which needs no parameter object to be kept.
 */
static int plain_host_name(const char *name)
{
    if (name[0] == '\0') /* "" clears the names: a parameter object's business */
        return 0;
    return name[strspn(name, "0123456789abcdefABCDEF.:")] != '\0';
}

/* As OpenSSL 3.0: a name that parses as an IP address is checked as one. */
int SSL_set1_host(SSL *s, const char *hostname)
{
    if (s->param == NULL && hostname != NULL && plain_host_name(hostname)) {
        char *copy = shared_copy(hostname, s->hostname);
        if (copy == NULL)
            return 0;
        set_verify_host(s, copy);
        return 1;
    }
    X509_VERIFY_PARAM *param = own_param(s);
    if (param == NULL)
        return 0;
    if (hostname != NULL && X509_VERIFY_PARAM_set1_ip_asc(param, hostname) == 1)
        return 1;
    return X509_VERIFY_PARAM_set1_host(param, hostname, 0);
}

int SSL_add1_host(SSL *s, const char *hostname)
{
    X509_VERIFY_PARAM *param = own_param(s);
    if (param == NULL)
        return 0;
    if (hostname != NULL) {
        ASN1_OCTET_STRING *ip = a2i_IPADDRESS(hostname);
        if (ip != NULL) {
            ASN1_OCTET_STRING_free(ip);
            char *old = X509_VERIFY_PARAM_get1_ip_asc(param);
            if (old != NULL) { /* there can be only one IP address */
                OPENSSL_free(old);
                ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT);
                return 0;
            }
            return X509_VERIFY_PARAM_set1_ip_asc(param, hostname);
        }
    }
    return X509_VERIFY_PARAM_add1_host(param, hostname, 0);
}

void SSL_set_hostflags(SSL *s, unsigned int flags)
{
    X509_VERIFY_PARAM *param = own_param(s);
    if (param != NULL)
        X509_VERIFY_PARAM_set_hostflags(param, flags);
}

long SSL_get_verify_result(const SSL *s) { return s->verify_result; }

void SSL_set_verify_result(SSL *s, long v) { s->verify_result = v; }

/* A resumed connection's peer is decoded here, when first asked for (session.c). */
static int peer_ready(const SSL *s)
{
    return session_conn_peer((SSL *)s); /* a cache: the peer it names does not change */
}

X509 *SSL_get1_peer_certificate(const SSL *s)
{
    if (!peer_ready(s))
        return NULL;
    if (s->peer_cert != NULL && !X509_up_ref(s->peer_cert))
        return NULL;
    return s->peer_cert;
}

/* OpenSSL 3.0: the same certificate without a reference; valid while s holds it. */
X509 *SSL_get0_peer_certificate(const SSL *s) { return peer_ready(s) ? s->peer_cert : NULL; }

/* The cached server view is valid while it holds peer_chain[1..] in order. */
static int noleaf_current(const SSL *s)
{
    STACK_OF(X509) *v = s->peer_chain_noleaf;
    int n = sk_X509_num(s->peer_chain);
    if (v == NULL || sk_X509_num(v) != n - 1)
        return 0;
    for (int i = 1; i < n; i++)
        if (sk_X509_value(v, i - 1) != sk_X509_value(s->peer_chain, i))
            return 0;
    return 1;
}

/*
 * OpenSSL's asymmetry, which applications rely on: a client gets the chain
 * with the leaf, a server gets it without (the leaf comes from
 * SSL_get1_peer_certificate). The server view is built once and owned by s.
 */
STACK_OF(X509) *SSL_get_peer_cert_chain(const SSL *s)
{
    if (!peer_ready(s))
        return NULL;
    if (!s->server || s->peer_chain == NULL)
        return s->peer_chain;
    if (noleaf_current(s))
        return s->peer_chain_noleaf;
    STACK_OF(X509) *v = sk_X509_new_null();
    for (int i = 1; v != NULL && i < sk_X509_num(s->peer_chain); i++) {
        X509 *x = sk_X509_value(s->peer_chain, i);
        if (!X509_up_ref(x))
            break;
        if (!sk_X509_push(v, x)) {
            X509_free(x);
            break;
        }
    }
    if (v == NULL || sk_X509_num(v) != sk_X509_num(s->peer_chain) - 1) {
        sk_X509_pop_free(v, X509_free);
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return NULL;
    }
    SSL *w = (SSL *)s; /* a cache: the connection's observable state does not change */
    sk_X509_pop_free(w->peer_chain_noleaf, X509_free);
    w->peer_chain_noleaf = v;
    return v;
}


/* ------------------------------------------------------------------ */
/* SNI and ALPN                                                        */
/* ------------------------------------------------------------------ */

/* Client: the name it sends; server: the name it received. */
const char *SSL_get_servername(const SSL *s, const int type)
{
    return type == TLSEXT_NAMETYPE_host_name ? s->hostname : NULL;
}

int SSL_get_servername_type(const SSL *s)
{
    return s->hostname != NULL ? TLSEXT_NAMETYPE_host_name : -1;
}

/* RFC 6066 §3: HostName<1..2^16-1>; OpenSSL caps it at TLSEXT_MAXLEN_host_name (255). */
static long set_hostname(SSL *s, long type, const char *name)
{
    if (type != TLSEXT_NAMETYPE_host_name) {
        ERR_raise(ERR_LIB_SSL, SSL_R_SSL3_EXT_INVALID_SERVERNAME_TYPE);
        return 0;
    }
    char *copy = NULL;
    if (name != NULL) {
        size_t len = strlen(name);
        if (len == 0 || len > TLSEXT_MAXLEN_host_name) {
            ERR_raise(ERR_LIB_SSL, SSL_R_SSL3_EXT_INVALID_SERVERNAME);
            return 0;
        }
        if ((copy = shared_copy(name, s->verify_host)) == NULL)
            return 0;
    }
    set_hostname_string(s, copy);
    return 1;
}

/* Note the inverted convention, as in OpenSSL: 0 on success, 1 on failure. */
int SSL_set_alpn_protos(SSL *s, const unsigned char *protos, unsigned int protos_len)
{
    return alpn_replace(&s->alpn, &s->alpn_len, protos, protos_len);
}

void SSL_get0_alpn_selected(const SSL *s, const unsigned char **data, unsigned int *len)
{
    *data = sbuf_len(&s->alpn_selected) > 0 ? sbuf_data(&s->alpn_selected) : NULL;
    *len = (unsigned int)sbuf_len(&s->alpn_selected);
}

/* Whether the length-prefixed list holds a name equal to `name`. */
static int proto_list_has(const unsigned char *list, unsigned int list_len, const struct rd *name)
{
    struct rd r, entry;
    rd_init(&r, list, list_len);
    while (rd_vec8(&r, &entry))
        if (entry.n == name->n && memcmp(entry.p, name->p, name->n) == 0)
            return 1;
    return 0; /* trailing bytes that do not parse are ignored, as in OpenSSL */
}

/*
 * OpenSSL 3.0.15's semantics (after CVE-2024-5535): the first protocol of
 * `server` (preference order) that `client` also lists is selected. On no
 * overlap the client's first protocol is returned with NO_OVERLAP, or NULL
 * and length 0 if the client list is empty or malformed. Empty entries of
 * `server` are skipped; both lists are parsed with bounds checks.
 */
int SSL_select_next_proto(unsigned char **out, unsigned char *outlen, const unsigned char *server,
                          unsigned int server_len, const unsigned char *client,
                          unsigned int client_len)
{
    struct rd r, first, name;
    rd_init(&r, client, client_len);
    if (client == NULL || !rd_vec8(&r, &first) || rd_empty(&first)) {
        *out = NULL;
        *outlen = 0;
        return OPENSSL_NPN_NO_OVERLAP;
    }
    *out = (unsigned char *)first.p;
    *outlen = (unsigned char)first.n;
    rd_init(&r, server, server != NULL ? server_len : 0);
    while (rd_vec8(&r, &name)) {
        if (!rd_empty(&name) && proto_list_has(client, client_len, &name)) {
            *out = (unsigned char *)name.p;
            *outlen = (unsigned char)name.n;
            return OPENSSL_NPN_NEGOTIATED;
        }
    }
    return OPENSSL_NPN_NO_OVERLAP;
}


/* ------------------------------------------------------------------ */
/* Groups                                                              */
/* ------------------------------------------------------------------ */

/* OpenSSL 3.0 reports the NID of the negotiated group (0 before the handshake). */
static long negotiated_group_nid(const SSL *s)
{
    const struct group *g = s->group_id != 0 ? group_by_id(s->group_id) : NULL;
    return g != NULL ? g->nid : 0;
}

/*
 * OpenSSL 3.0's TLS names for the groups, from the NID SSL_get_negotiated_group returns; the
 * post-quantum ones have no NID (TLSEXT_nid_unknown | id) and OpenSSL 3.5's names.
 */
const char *SSL_group_to_name(SSL *s, int nid)
{
    const struct group *g = group_by_nid(nid);
    if (g == NULL)
        return NULL;
    if (group_is_pq(g))
        return g->name;
    switch (g->id) {
    case 0x001d:
        return "x25519";
    case 0x0017:
        return "secp256r1";
    case 0x0018:
        return "secp384r1";
    case 0x001e:
        return "x448";
    default:
        return NULL;
    }
}

/* OpenSSL 3.2's SSL_get0_group_name: the negotiated group's name, as SSL_group_to_name gives. */
const char *SSL_get0_group_name(SSL *s)
{
    long nid = negotiated_group_nid(s);
    return nid != 0 ? SSL_group_to_name(s, (int)nid) : NULL;
}

/* ------------------------------------------------------------------ */
/* SSL_ctrl                                                            */
/* ------------------------------------------------------------------ */

static long set_bound(int *bound, long v)
{
    if (!proto_version_valid(v))
        return 0;
    *bound = (int)v;
    return 1;
}

/* Certificates and chains (certset.c), then the commands qtls does not implement. */
static long ssl_ctrl_cert(SSL *s, int cmd, long larg, void *parg)
{
    int handled;
    long r = certset_ctrl(NULL, s, cmd, larg, parg, &handled);
    if (handled)
        return r;
    r = dh_ctrl(NULL, s, cmd, larg, parg, &handled); /* dh.c: stored only */
    if (handled)
        return r;
    ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT, "unsupported ctrl %d", cmd);
    return 0;
}

long SSL_ctrl(SSL *s, int cmd, long larg, void *parg)
{
    switch (cmd) {
    case SSL_CTRL_SET_TLSEXT_HOSTNAME:
        return set_hostname(s, larg, parg);
    case SSL_CTRL_GET_NEGOTIATED_GROUP:
        return negotiated_group_nid(s);
    case SSL_CTRL_SET_MIN_PROTO_VERSION:
        return set_bound(&s->min_version, larg);
    case SSL_CTRL_SET_MAX_PROTO_VERSION:
        return set_bound(&s->max_version, larg);
    case SSL_CTRL_GET_MIN_PROTO_VERSION:
        return s->min_version;
    case SSL_CTRL_GET_MAX_PROTO_VERSION:
        return s->max_version;
    case SSL_CTRL_SET_GROUPS_LIST:
        return groups_parse_list(parg, s->groups, &s->n_groups, &s->group_tuples);
    case SSL_CTRL_SET_GROUPS:
        return groups_from_nids(parg, larg > 0 ? (size_t)larg : 0, s->groups, &s->n_groups,
                                &s->group_tuples);
    case SSL_CTRL_MODE:
        return s->mode |= (uint32_t)larg;
    case SSL_CTRL_CLEAR_MODE:
        return s->mode &= ~(uint32_t)larg;
    case SSL_CTRL_GET_MAX_CERT_LIST:
        /* The limit is the context's (quic.c reads it there); no per-connection value is kept. */
        return (long)s->ctx->max_cert_list;
    case SSL_CTRL_GET_RAW_CIPHERLIST:
        return cipher_lists_get_raw(s, parg);
    case SSL_CTRL_GET_TMP_KEY:
        /* The ephemeral key is freed with the handshake state: qtls does not keep it. */
        return qtls_not_implemented("SSL_get_tmp_key");
    case SSL_CTRL_SET_MSG_CALLBACK_ARG: { /* callbacks.c */
        struct ssl_cold *k = cold_for(s, parg != NULL);
        if (k != NULL)
            k->msg_callback_arg = parg;
        return k != NULL || parg == NULL;
    }
    case SSL_CTRL_SET_TLSEXT_STATUS_REQ_TYPE:
        return ocsp_set_status_type(&s->status_type, larg);
    case SSL_CTRL_GET_TLSEXT_STATUS_REQ_TYPE:
        return s->status_type;
    case SSL_CTRL_SET_TLSEXT_STATUS_REQ_OCSP_RESP:
        return ocsp_set_response(s, parg, larg);
    case SSL_CTRL_GET_TLSEXT_STATUS_REQ_OCSP_RESP:
        return ocsp_get_response(s, (const unsigned char **)parg);
    case SSL_CTRL_SET_SIGALGS_LIST:
    case SSL_CTRL_SET_CLIENT_SIGALGS_LIST:
    case SSL_CTRL_SET_SIGALGS:
    case SSL_CTRL_SET_CLIENT_SIGALGS:
        return sigalgs_ctrl(&s->sigalg_conf, cmd, larg, parg);
    default: {
        int handled;
        long r = sigalgs_get_ctrl(s, cmd, larg, parg, &handled);
        return handled ? r : ssl_ctrl_cert(s, cmd, larg, parg);
    }
    }
}

/* No per-connection callback is settable through ctrl in qtls. */
long SSL_callback_ctrl(SSL *s, int cmd, void (*fp)(void))
{
    ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT, "unsupported ctrl %d", cmd);
    return 0;
}
