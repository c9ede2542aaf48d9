/*
 * Signature algorithms (RFC 8446 §4.2.3) as OpenSSL's SSL_CTX_set1_sigalgs(3) configures them,
 * the group getters, and the CertificateVerify scheme for a key (§4.4.3). Two lists per context
 * and connection, empty meaning the defaults of suites.c:
 *
 *   sigalgs         what a client offers in ClientHello, and what a server signs with;
 *   client_sigalgs  (if set) what a server offers in CertificateRequest, and what a client signs
 *                   its certificate with; otherwise sigalgs.
 *
 * The list a side sent is also the one the peer's CertificateVerify must use (OpenSSL's
 * tls12_check_peer_sigalg). Only schemes TLS 1.3 may use in CertificateVerify are kept from a
 * configured list (PKCS#1 v1.5 only signs certificates); a list left empty is an error naming it.
 */
#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"
#include "policy/policy.h"

#include <string.h>

/* "ECDSA+SHA256", "RSA-PSS+SHA256" / "PSS+SHA256", "RSA+SHA256": OpenSSL's SIG+HASH form. */
static const struct {
    const char *name;
    uint16_t id;
} plus_names[] = {
    {"ECDSA+SHA256", 0x0403},   {"ECDSA+SHA384", 0x0503},   {"RSA-PSS+SHA256", 0x0804},
    {"RSA-PSS+SHA384", 0x0805}, {"RSA-PSS+SHA512", 0x0806}, {"PSS+SHA256", 0x0804},
    {"PSS+SHA384", 0x0805},     {"PSS+SHA512", 0x0806},     {"RSA+SHA256", 0x0401},
    {"RSA+SHA384", 0x0501},     {"RSA+SHA512", 0x0601},
};

/* A scheme by its TLS 1.3 name ("ecdsa_secp256r1_sha256", "ed25519") or SIG+HASH; 0 if unknown. */
static uint16_t scheme_by_name(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(plus_names) / sizeof(plus_names[0]); i++)
        if (strlen(plus_names[i].name) == len && OPENSSL_strncasecmp(plus_names[i].name, name, len) == 0)
            return plus_names[i].id;
    for (size_t i = 0; i < qtls_num_offered_sigschemes; i++) {
        const struct sigscheme *s = sigscheme_by_id(qtls_offered_sigschemes[i]);
        if (strlen(s->name) == len && strncmp(s->name, name, len) == 0)
            return s->id;
    }
    return 0;
}

/* OpenSSL's signature type: EVP_PKEY_RSA_PSS for every PSS scheme, else the key type. */
static int sig_type(const struct sigscheme *s)
{
    return s->pkey_type == EVP_PKEY_RSA && s->tls13_ok ? EVP_PKEY_RSA_PSS : s->pkey_type;
}

/*
 * OpenSSL's (hash NID, signature type) pairs of SSL_CTX_set1_sigalgs: the first scheme in
 * table order, so RSA-PSS is rsa_pss_rsae, as in OpenSSL; EdDSA has NID_undef for the hash.
 */
static uint16_t scheme_by_nids(int md, int pkey)
{
    for (size_t i = 0; i < qtls_num_offered_sigschemes; i++) {
        const struct sigscheme *s = sigscheme_by_id(qtls_offered_sigschemes[i]);
        if (sig_type(s) == pkey && (s->md_nid == md || s->md_nid == NID_undef))
            return s->id;
    }
    return 0;
}

/* Appends id unless present (OpenSSL refuses duplicates); 0 with an error if it cannot. */
static int list_add(struct sigalg_list *l, uint16_t id, const char *what)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->ids[i] == id) {
            ERR_raise_data(ERR_LIB_SSL, SSL_R_BAD_VALUE, "duplicate signature algorithm in %s", what);
            return 0;
        }
    if (l->n == QTLS_MAX_SIGALGS) {
        ERR_raise_data(ERR_LIB_SSL, SSL_R_BAD_VALUE, "too many signature algorithms in %s", what);
        return 0;
    }
    l->ids[l->n++] = id;
    return 1;
}

/* Commits a parsed list if TLS 1.3 can use something in it for CertificateVerify. */
static int list_commit(struct sigalg_list *dst, const struct sigalg_list *l, const char *what)
{
    size_t usable = 0;
    for (size_t i = 0; i < l->n; i++)
        usable += sigscheme_by_id(l->ids[i])->tls13_ok;
    if (usable == 0) {
        ERR_raise_data(ERR_LIB_SSL, SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM,
                       "%s: no signature algorithm TLS 1.3 can use", what);
        return 0;
    }
    *dst = *l;
    return 1;
}

int sigalgs_parse_list(struct sigalg_list *dst, const char *str)
{
    struct sigalg_list l = {{0}, 0};
    if (str == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER);
        return 0;
    }
    const char *p = str;
    while (*p != '\0') {
        size_t len = strcspn(p, ":");
        uint16_t id = len > 0 ? scheme_by_name(p, len) : 0;
        if (id == 0) {
            ERR_raise_data(ERR_LIB_SSL, SSL_R_BAD_VALUE, "unknown signature algorithm \"%.*s\"",
                           (int)len, p);
            return 0;
        }
        if (!list_add(&l, id, str))
            return 0;
        p += len + (p[len] == ':');
    }
    return list_commit(dst, &l, str);
}

int sigalgs_from_nids(struct sigalg_list *dst, const int *nids, long count)
{
    struct sigalg_list l = {{0}, 0};
    if (nids == NULL || count <= 0 || count % 2 != 0) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT);
        return 0;
    }
    for (long i = 0; i < count; i += 2) {
        uint16_t id = scheme_by_nids(nids[i], nids[i + 1]);
        if (id == 0) {
            ERR_raise_data(ERR_LIB_SSL, SSL_R_BAD_VALUE, "unsupported signature algorithm %s+%s",
                           OBJ_nid2sn(nids[i + 1]), OBJ_nid2sn(nids[i]));
            return 0;
        }
        if (!list_add(&l, id, "SSL_set1_sigalgs"))
            return 0;
    }
    return list_commit(dst, &l, "SSL_set1_sigalgs");
}

struct sigalg_conf *sigalg_conf_ref(struct sigalg_conf *conf)
{
    if (conf != NULL)
        __atomic_add_fetch(&conf->references, 1, __ATOMIC_RELAXED);
    return conf;
}

void sigalg_conf_free(struct sigalg_conf *conf)
{
    if (conf != NULL && __atomic_sub_fetch(&conf->references, 1, __ATOMIC_ACQ_REL) == 0)
        OPENSSL_free(conf);
}

/* The ctrls of <openssl/ssl.h>: SSL_CTX_set1_sigalgs_list and its seven siblings. */
long sigalgs_ctrl(struct sigalg_conf **conf, int cmd, long larg, void *parg)
{
    struct sigalg_list l;
    int client = cmd == SSL_CTRL_SET_CLIENT_SIGALGS_LIST || cmd == SSL_CTRL_SET_CLIENT_SIGALGS;
    int ok = cmd == SSL_CTRL_SET_SIGALGS_LIST || cmd == SSL_CTRL_SET_CLIENT_SIGALGS_LIST
                 ? sigalgs_parse_list(&l, parg)
                 : sigalgs_from_nids(&l, parg, larg);
    if (!ok)
        return 0;
    /* A new copy, never a change in place: others may hold the old one (copy-on-write). */
    struct sigalg_conf *n = OPENSSL_zalloc(sizeof(*n));
    if (n == NULL) {
        ERR_raise(ERR_LIB_SSL, ERR_R_MALLOC_FAILURE);
        return 0;
    }
    if (*conf != NULL)
        *n = **conf;
    n->references = 1;
    *(client ? &n->client_sigalgs : &n->sigalgs) = l;
    sigalg_conf_free(*conf);
    *conf = n;
    return 1;
}

static const struct sigalg_list no_list;

/* The connection's configured lists (empty: the default). */
static const struct sigalg_list *own_list(const SSL *c, int client)
{
    const struct sigalg_conf *k = c->sigalg_conf;
    return k == NULL ? &no_list : client ? &k->client_sigalgs : &k->sigalgs;
}

/* ------------------------------------------------------------------ */
/* The lists in use                                                    */
/* ------------------------------------------------------------------ */

static void list_or_default(const struct sigalg_list *l, const uint16_t **ids, size_t *n)
{
    if (l->n > 0) {
        *ids = l->ids;
        *n = l->n;
    } else {
        *ids = qtls_offered_sigschemes;
        *n = qtls_num_offered_sigschemes;
    }
}

void sigalgs_sent(const SSL *c, const uint16_t **ids, size_t *n)
{
    list_or_default(own_list(c, c->server && own_list(c, 1)->n > 0), ids, n);
}

static int in_list(const uint16_t *ids, size_t n, uint16_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

int sigalgs_we_accept(const SSL *c, uint16_t id)
{
    const uint16_t *ids;
    size_t n;
    sigalgs_sent(c, &ids, &n);
    return in_list(ids, n, id);
}

int sigalgs_we_sign_with(const SSL *c, uint16_t id)
{
    const uint16_t *ids;
    size_t n;
    list_or_default(own_list(c, !c->server && own_list(c, 1)->n > 0), &ids, &n);
    return in_list(ids, n, id);
}

void sigalgs_write(const SSL *c, struct wr *w, uint16_t grease)
{
    const uint16_t *ids;
    size_t n;
    sigalgs_sent(c, &ids, &n);
    size_t list = wr_open_vec(w, 2);
    if (grease != 0) /* RFC 8701: a GREASE value first, nonzero only when enabled */
        wr_u16(w, grease);
    for (size_t i = 0; i < n; i++)
        wr_u16(w, ids[i]);
    wr_close_vec(w, list, 2);
}

/* ------------------------------------------------------------------ */
/* Getters                                                             */
/* ------------------------------------------------------------------ */

static int scheme_nid(uint16_t id, int type, int *pnid)
{
    const struct sigscheme *s = id != 0 ? sigscheme_by_id(id) : NULL;
    if (s == NULL)
        return 0;
    *pnid = type ? sig_type(s) : s->md_nid;
    return 1;
}

int SSL_get_peer_signature_type_nid(const SSL *s, int *pnid)
{
    return scheme_nid(s->peer_sigscheme, 1, pnid);
}

int SSL_get_signature_type_nid(const SSL *s, int *pnid)
{
    return scheme_nid(s->own_sigscheme, 1, pnid);
}

/* The NID OpenSSL 3.0 gives a group it does not know: TLSEXT_nid_unknown | id. */
static int group_nid(uint16_t id)
{
    const struct group *g = group_by_id(id);
    return g != NULL ? g->nid : (int)(TLSEXT_nid_unknown | id);
}

/* The client's supported_groups as kept (a server's view), into ids; the count. */
static size_t peer_groups(const SSL *s, uint16_t ids[QTLS_MAX_PEER_GROUPS])
{
    struct rd r;
    size_t n = 0;
    rd_init(&r, sbuf_data(&s->peer_groups), sbuf_len(&s->peer_groups));
    while (n < QTLS_MAX_PEER_GROUPS && rd_u16(&r, &ids[n]))
        n++;
    return n;
}

/* SSL_get1_groups(3): the client's supported_groups as NIDs (a server's view); the count. */
static long get_groups(const SSL *s, int *out)
{
    uint16_t ids[QTLS_MAX_PEER_GROUPS];
    size_t n = peer_groups(s, ids);
    if (out != NULL)
        for (size_t i = 0; i < n; i++)
            out[i] = group_nid(ids[i]);
    return (long)n;
}

/*
 * SSL_get_shared_group(3): on a server, the n-th group both support (in the client's order, or
 * ours with SSL_OP_CIPHER_SERVER_PREFERENCE); n == -1 gives the count. 0 on a client.
 */
static long shared_group(const SSL *s, long n)
{
    if (!s->server)
        return 0;
    uint16_t peer[QTLS_MAX_PEER_GROUPS];
    size_t n_peer = peer_groups(s, peer);
    int ours = (s->options & SSL_OP_CIPHER_SERVER_PREFERENCE) != 0;
    const uint16_t *pref = ours ? s->groups : peer, *other = ours ? peer : s->groups;
    size_t np = ours ? s->n_groups : n_peer, no = ours ? n_peer : s->n_groups;
    long k = 0;
    for (size_t i = 0; i < np; i++) {
        if (!in_list(other, no, pref[i]))
            continue;
        if (k++ == n)
            return group_nid(pref[i]);
    }
    return n == -1 ? k : 0;
}

/* SSL_ctrl's signature and group getters (1 with *parg set, 0 when there is nothing). */
long sigalgs_get_ctrl(SSL *s, int cmd, long larg, void *parg, int *handled)
{
    *handled = 1;
    switch (cmd) {
    case SSL_CTRL_GET_PEER_SIGNATURE_NID:
        return scheme_nid(s->peer_sigscheme, 0, parg);
    case SSL_CTRL_GET_SIGNATURE_NID:
        return scheme_nid(s->own_sigscheme, 0, parg);
    case SSL_CTRL_GET_GROUPS:
        return get_groups(s, parg);
    case SSL_CTRL_GET_SHARED_GROUP:
        return shared_group(s, larg);
    default:
        *handled = 0;
        return 0;
    }
}

/* The supported_groups row, ClientHello: the client's groups, for the getters (§4.2.7). */
int sigalgs_take_peer_groups(SSL *c, const struct rd *b)
{
    struct rd body, list;
    sbuf_free(&c->peer_groups);
    if (b == NULL)
        return 1;
    body = *b;
    if (!rd_vec16(&body, &list))
        return 1;
    /* Kept as sent (whole entries, at most QTLS_MAX_PEER_GROUPS), decoded by the getters. */
    size_t n = list.n / 2 < QTLS_MAX_PEER_GROUPS ? list.n / 2 : QTLS_MAX_PEER_GROUPS;
    if (!sbuf_set(&c->peer_groups, list.p, 2 * n))
        return qtls_fail(c, SSL_AD_INTERNAL_ERROR, ERR_R_MALLOC_FAILURE);
    return 1;
}

/* ------------------------------------------------------------------ */
/* CertificateVerify scheme                                            */
/* ------------------------------------------------------------------ */

static size_t md_len(int md_nid)
{
    switch (md_nid) {
    case NID_sha256:
        return 32;
    case NID_sha384:
        return 48;
    case NID_sha512:
        return 64;
    default:
        return 0;
    }
}

/*
 * RSASSA-PSS with salt = hash length needs a modulus of at least
 * 2 * hLen + 2 bytes (RFC 8017 §9.1.1), so a 1024-bit key cannot do
 * rsa_pss_*_sha512; offering it would fail at signing time.
 */
static int rsa_big_enough(EVP_PKEY *key, const struct sigscheme *s)
{
    if (s->pkey_type != EVP_PKEY_RSA && s->pkey_type != EVP_PKEY_RSA_PSS)
        return 1;
    int size = EVP_PKEY_get_size(key);
    return size > 0 && (size_t)size >= 2 * md_len(s->md_nid) + 2;
}

/*
 * RFC 8446 §4.4.3: the scheme must be one the peer offered in
 * signature_algorithms (§4.2.3) and fit our key; in TLS 1.3 an ECDSA scheme
 * also fixes the curve, and PKCS#1 v1.5 and SHA-1 are not allowed. The peer's
 * order decides among the candidates.
 */
int sigalgs_choose_scheme(EVP_PKEY *key, const uint16_t *peer, size_t n, uint16_t *out)
{
    for (size_t i = 0; i < n; i++) {
        const struct sigscheme *s = sigscheme_by_id(peer[i]);
        if (s == NULL || !s->tls13_ok || !crypto_key_matches_scheme(key, s) ||
            !rsa_big_enough(key, s))
            continue;
        *out = peer[i];
        return 1;
    }
    return 0;
}
