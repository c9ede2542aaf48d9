/*
 * The algorithm tables: TLS 1.3 cipher suites with their real OpenSSL ids
 * (QUIC stacks pick their packet protection from SSL_CIPHER_get_id), the
 * key-exchange groups, the signature schemes; the parsers for the
 * colon-separated lists applications configure; and the SSL_CIPHER getters.
 */

#include "base/base.h"
#include "crypto/crypto.h"
#include "crypto/mlkem.h"

#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ */
/* Cipher suites (RFC 8446 §B.4)                                       */
/* ------------------------------------------------------------------ */

/*
 * TLS_AES_128_CCM_8_SHA256 is absent on purpose: RFC 9001 §5.3 forbids it
 * in QUIC (its 8-byte tag is too short for header protection sampling).
 */
const SSL_CIPHER qtls_suites[QTLS_NUM_SUITES] = {
    {.id = TLS1_3_CK_AES_128_GCM_SHA256, .tls_id = 0x1301, .name = "TLS_AES_128_GCM_SHA256",
     .hash = QTLS_SHA256, .prf_nid = NID_sha256, .cipher_nid = NID_aes_128_gcm, .bits = 128},
    {.id = TLS1_3_CK_AES_256_GCM_SHA384, .tls_id = 0x1302, .name = "TLS_AES_256_GCM_SHA384",
     .hash = QTLS_SHA384, .prf_nid = NID_sha384, .cipher_nid = NID_aes_256_gcm, .bits = 256},
    {.id = TLS1_3_CK_CHACHA20_POLY1305_SHA256, .tls_id = 0x1303,
     .name = "TLS_CHACHA20_POLY1305_SHA256", .hash = QTLS_SHA256, .prf_nid = NID_sha256,
     .cipher_nid = NID_chacha20_poly1305, .bits = 256},
    {.id = TLS1_3_CK_AES_128_CCM_SHA256, .tls_id = 0x1304, .name = "TLS_AES_128_CCM_SHA256",
     .hash = QTLS_SHA256, .prf_nid = NID_sha256, .cipher_nid = NID_aes_128_ccm, .bits = 128},
};

const SSL_CIPHER *suite_by_tls_id(uint16_t tls_id)
{
    for (size_t i = 0; i < QTLS_NUM_SUITES; i++)
        if (qtls_suites[i].tls_id == tls_id)
            return &qtls_suites[i];
    return NULL;
}

/* Suite names are case-sensitive, as in OpenSSL's SSL_CTX_set_ciphersuites. */
const SSL_CIPHER *suite_by_name(const char *name, size_t len)
{
    for (size_t i = 0; i < QTLS_NUM_SUITES; i++) {
        const char *n = qtls_suites[i].name;
        if (strlen(n) == len && memcmp(n, name, len) == 0)
            return &qtls_suites[i];
    }
    return NULL;
}

/*
 * OpenSSL skips names it does not know and fails only when nothing valid is
 * left; qtls does the same. A list whose only valid entry is CCM_8 leaves
 * nothing a QUIC handshake could use, so it fails too (OpenSSL would accept
 * it and fail at handshake time). Duplicates are dropped.
 */
int suites_parse_list(const char *str, struct suite_list *out)
{
    struct suite_list l = {{0}, 0};
    for (const char *p = str; p != NULL && *p != '\0';) {
        const char *end = strchr(p, ':');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        const SSL_CIPHER *s = suite_by_name(p, len);
        int seen = 0;
        for (size_t i = 0; i < l.n; i++)
            seen |= suite_at(&l, i) == s;
        if (s != NULL && !seen)
            l.idx[l.n++] = (uint8_t)(s - qtls_suites);
        p = end != NULL ? end + 1 : p + len;
    }
    if (l.n == 0) {
        ERR_raise(ERR_LIB_SSL, SSL_R_NO_CIPHER_MATCH);
        return 0;
    }
    *out = l;
    return 1;
}

/* ------------------------------------------------------------------ */
/* Groups (RFC 8446 §4.2.7)                                            */
/* ------------------------------------------------------------------ */

/* The classical groups; a share is the same length both ways. */
#define CLASSICAL(id, name, kind, nid, len, bits) {id, name, kind, nid, len, len, 0, 0, 0, bits}
/*
 * draft-ietf-tls-ecdhe-mlkem §4: a hybrid share is the two halves' concatenated, the client's
 * ML-KEM half an encapsulation key, the server's a ciphertext; X25519MLKEM768 puts ML-KEM
 * first, the SecP groups the curve. ML-KEM alone is draft-ietf-tls-mlkem. No NID: OpenSSL 3.5
 * reports TLSEXT_nid_unknown | id for them too.
 */
#define HYBRID(id, name, ec, ec_len, mlkem, ek_len, ct_len, ec_first, bits)                        \
    {id, name, KEX_HYBRID, TLSEXT_nid_unknown | (id), (ec_len) + (ek_len), (ec_len) + (ct_len), ec, \
     mlkem, ec_first, bits}
#define PURE_MLKEM(id, name, mlkem, ek_len, ct_len, bits)                                          \
    {id, name, KEX_MLKEM, TLSEXT_nid_unknown | (id), ek_len, ct_len, 0, mlkem, 0, bits}

static const struct group groups[] = {
    CLASSICAL(0x001d, "X25519", KEX_X25519, NID_X25519, 32, 128),
    CLASSICAL(0x0017, "P-256", KEX_EC, NID_X9_62_prime256v1, 65, 128), /* 0x04 || x || y */
    CLASSICAL(0x0018, "P-384", KEX_EC, NID_secp384r1, 97, 192),
    CLASSICAL(0x001e, "X448", KEX_X448, NID_X448, 56, 224),
    HYBRID(0x11ec, "X25519MLKEM768", 0x001d, 32, MLKEM_768, MLKEM768_EK_LEN, MLKEM768_CT_LEN, 0,
           192),
    HYBRID(0x11eb, "SecP256r1MLKEM768", 0x0017, 65, MLKEM_768, MLKEM768_EK_LEN,
           MLKEM768_CT_LEN, 1, 192),
    HYBRID(0x11ed, "SecP384r1MLKEM1024", 0x0018, 97, MLKEM_1024, MLKEM1024_EK_LEN,
           MLKEM1024_CT_LEN, 1, 256),
    PURE_MLKEM(0x0201, "MLKEM768", MLKEM_768, MLKEM768_EK_LEN, MLKEM768_CT_LEN, 192),
    PURE_MLKEM(0x0202, "MLKEM1024", MLKEM_1024, MLKEM1024_EK_LEN, MLKEM1024_CT_LEN, 256),
};
#define NUM_GROUPS (sizeof(groups) / sizeof(groups[0]))

/* The spellings OpenSSL's groups lists accept for the groups qtls implements. */
static const struct {
    const char *name;
    uint16_t id;
} group_names[] = {
    {"X25519", 0x001d},    {"P-256", 0x0017},     {"prime256v1", 0x0017},
    {"secp256r1", 0x0017}, {"P-384", 0x0018},     {"secp384r1", 0x0018},
    {"X448", 0x001e},      {"X25519MLKEM768", 0x11ec}, {"SecP256r1MLKEM768", 0x11eb},
    {"SecP384r1MLKEM1024", 0x11ed}, {"MLKEM768", 0x0201},  {"MLKEM1024", 0x0202},
};

/*
 * Groups OpenSSL knows but qtls does not implement. Configurations written
 * for OpenSSL name them (ngtcp2's and curl's defaults end in P-521), so
 * they are skipped rather than failing the whole list.
 */
static const char *const skipped_group_names[] = {
    "P-521",     "secp521r1", "ffdhe2048", "ffdhe3072",
    "ffdhe4096", "ffdhe6144", "ffdhe8192",
};

const struct group *group_by_id(uint16_t id)
{
    for (size_t i = 0; i < NUM_GROUPS; i++)
        if (groups[i].id == id)
            return &groups[i];
    return NULL;
}

const struct group *group_by_nid(int nid)
{
    for (size_t i = 0; i < NUM_GROUPS; i++)
        if (groups[i].nid == nid)
            return &groups[i];
    return NULL;
}

static int name_is(const char *known, const char *name, size_t len)
{
    return strlen(known) == len && strncasecmp(known, name, len) == 0;
}

const struct group *group_by_name(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(group_names) / sizeof(group_names[0]); i++)
        if (name_is(group_names[i].name, name, len))
            return group_by_id(group_names[i].id);
    return NULL;
}

static int group_name_skipped(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(skipped_group_names) / sizeof(skipped_group_names[0]); i++)
        if (name_is(skipped_group_names[i], name, len))
            return 1;
    return 0;
}

/* Appends a group unless the list already has it (OpenSSL rejects duplicates). */
static int group_append(uint16_t *list, size_t *count, uint16_t id)
{
    for (size_t i = 0; i < *count; i++)
        if (list[i] == id) {
            ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT, "duplicate group");
            return 0;
        }
    if (*count == QTLS_MAX_GROUPS) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT);
        return 0;
    }
    list[(*count)++] = id;
    return 1;
}

static int groups_commit(const uint16_t *list, size_t count, uint16_t tuples, uint16_t *out,
                         uint8_t *n, uint16_t *out_tuples)
{
    if (count == 0) {
        ERR_raise(ERR_LIB_SSL, QTLS_R_UNSUPPORTED_GROUP);
        return 0;
    }
    memcpy(out, list, count * sizeof(list[0]));
    *n = (uint8_t)count; /* at most QTLS_MAX_GROUPS */
    *out_tuples = tuples;
    return 1;
}

/* The next name of a groups list: up to ':' or '/', without the blanks around it. */
static size_t next_group_name(const char **p, const char **end)
{
    while (**p == ' ' || **p == '\t')
        (*p)++;
    *end = *p + strcspn(*p, ":/");
    size_t len = (size_t)(*end - *p);
    while (len > 0 && ((*p)[len - 1] == ' ' || (*p)[len - 1] == '\t'))
        len--;
    return len;
}

/*
 * Unlike suite lists, an unknown or empty name fails the whole list, as in OpenSSL, unless it
 * has OpenSSL 3.5's '?' (ignore it if unknown). 3.5's other syntax is taken too: '/' between
 * preference tuples (read as ':': the server takes the first of its groups that has a share,
 * then asks for the first supported one) and '*' marking the groups a client sends shares for
 * (qtls's choice is its own: the first group, and the first classical one after a
 * post-quantum first, which is what 3.5's default marks ask for; docs/limits.md).
 */
int groups_parse_list(const char *str, uint16_t *out, uint8_t *n, uint16_t *out_tuples)
{
    uint16_t list[QTLS_MAX_GROUPS], tuples = 0;
    size_t count = 0;
    int new_tuple = 0;
    if (str == NULL || *str == '\0') {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT);
        return 0;
    }
    for (const char *p = str;;) {
        const char *end;
        size_t len = next_group_name(&p, &end);
        int optional = 0;
        for (; len > 0 && (*p == '?' || *p == '*'); p++, len--)
            optional |= *p == '?';
        const struct group *g = group_by_name(p, len);
        if (g == NULL && !optional && !group_name_skipped(p, len)) {
            ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT,
                           "group '%.*s' cannot be set", (int)len, p);
            return 0;
        }
        if (g != NULL && new_tuple && count > 0)
            tuples |= (uint16_t)(1u << count); /* the group about to be appended begins one */
        if (g != NULL && !group_append(list, &count, g->id))
            return 0;
        new_tuple = (new_tuple && g == NULL) || *end == '/'; /* a tuple of unknowns is none */
        if (*end == '\0')
            break;
        p = end + 1;
    }
    return groups_commit(list, count, tuples, out, n, out_tuples);
}

int groups_from_nids(const int *nids, size_t count, uint16_t *out, uint8_t *n, uint16_t *tuples)
{
    uint16_t list[QTLS_MAX_GROUPS];
    size_t got = 0;
    if (nids == NULL || count == 0) {
        ERR_raise(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT);
        return 0;
    }
    for (size_t i = 0; i < count; i++) {
        const struct group *g = group_by_nid(nids[i]);
        if (g == NULL && nids[i] == NID_secp521r1)
            continue; /* known to OpenSSL, not implemented: skipped as in the name list */
        if (g == NULL) {
            ERR_raise_data(ERR_LIB_SSL, ERR_R_PASSED_INVALID_ARGUMENT, "unsupported group NID %d",
                           nids[i]);
            return 0;
        }
        if (!group_append(list, &got, g->id))
            return 0;
    }
    return groups_commit(list, got, 0, out, n, tuples);
}

/* ------------------------------------------------------------------ */
/* Signature schemes (RFC 8446 §4.2.3)                                 */
/* ------------------------------------------------------------------ */

static const struct sigscheme sigschemes[] = {
    {0x0403, "ecdsa_secp256r1_sha256", EVP_PKEY_EC, NID_X9_62_prime256v1, NID_sha256, 1},
    {0x0503, "ecdsa_secp384r1_sha384", EVP_PKEY_EC, NID_secp384r1, NID_sha384, 1},
    {0x0603, "ecdsa_secp521r1_sha512", EVP_PKEY_EC, NID_secp521r1, NID_sha512, 1},
    {0x0807, "ed25519", EVP_PKEY_ED25519, 0, NID_undef, 1},
    {0x0808, "ed448", EVP_PKEY_ED448, 0, NID_undef, 1},
    {0x0804, "rsa_pss_rsae_sha256", EVP_PKEY_RSA, 0, NID_sha256, 1},
    {0x0805, "rsa_pss_rsae_sha384", EVP_PKEY_RSA, 0, NID_sha384, 1},
    {0x0806, "rsa_pss_rsae_sha512", EVP_PKEY_RSA, 0, NID_sha512, 1},
    {0x0809, "rsa_pss_pss_sha256", EVP_PKEY_RSA_PSS, 0, NID_sha256, 1},
    {0x080a, "rsa_pss_pss_sha384", EVP_PKEY_RSA_PSS, 0, NID_sha384, 1},
    {0x080b, "rsa_pss_pss_sha512", EVP_PKEY_RSA_PSS, 0, NID_sha512, 1},
    /* §4.2.3: PKCS#1 v1.5 only for signatures in certificates, never in CertificateVerify. */
    {0x0401, "rsa_pkcs1_sha256", EVP_PKEY_RSA, 0, NID_sha256, 0},
    {0x0501, "rsa_pkcs1_sha384", EVP_PKEY_RSA, 0, NID_sha384, 0},
    {0x0601, "rsa_pkcs1_sha512", EVP_PKEY_RSA, 0, NID_sha512, 0},
};

const struct sigscheme *sigscheme_by_id(uint16_t id)
{
    for (size_t i = 0; i < sizeof(sigschemes) / sizeof(sigschemes[0]); i++)
        if (sigschemes[i].id == id)
            return &sigschemes[i];
    return NULL;
}

/*
 * signature_algorithms covers certificate signatures too (§4.2.3), so the
 * PKCS#1 schemes come last: without them a peer whose chain is signed with
 * PKCS#1 (most RSA CAs) could not be accepted.
 */
const uint16_t qtls_offered_sigschemes[] = {
    0x0403, 0x0503, 0x0603, 0x0807, 0x0808, 0x0804, 0x0805,
    0x0806, 0x0809, 0x080a, 0x080b, 0x0401, 0x0501, 0x0601,
};
const size_t qtls_num_offered_sigschemes =
    sizeof(qtls_offered_sigschemes) / sizeof(qtls_offered_sigschemes[0]);

/* ------------------------------------------------------------------ */
/* ALPN (RFC 7301 §3.1)                                                */
/* ------------------------------------------------------------------ */

/* ProtocolName protocol_name_list<2..2^16-1>, each ProtocolName<1..2^8-1>. */
int alpn_list_valid(const uint8_t *p, size_t n)
{
    struct rd r, name;
    if (p == NULL || n == 0 || n > 0xffff)
        return 0;
    rd_init(&r, p, n);
    while (!rd_empty(&r))
        if (!rd_vec8(&r, &name) || rd_empty(&name))
            return 0;
    return 1;
}

/* ------------------------------------------------------------------ */
/* SSL_CIPHER getters                                                  */
/* ------------------------------------------------------------------ */

uint32_t SSL_CIPHER_get_id(const SSL_CIPHER *c) { return c->id; }

/* TLS 1.3 suites have no separate OpenSSL-style name: both are the IANA name. */
const char *SSL_CIPHER_get_name(const SSL_CIPHER *c) { return c != NULL ? c->name : "(NONE)"; }

const char *SSL_CIPHER_standard_name(const SSL_CIPHER *c)
{
    return c != NULL ? c->name : "(NONE)";
}

int SSL_CIPHER_get_prf_nid(const SSL_CIPHER *c) { return c != NULL ? c->prf_nid : NID_undef; }

int SSL_CIPHER_get_bits(const SSL_CIPHER *c, int *alg_bits)
{
    if (c == NULL)
        return 0;
    if (alg_bits != NULL)
        *alg_bits = c->bits;
    return c->bits;
}

const char *SSL_CIPHER_get_version(const SSL_CIPHER *c) { return c != NULL ? "TLSv1.3" : "(NONE)"; }

int SSL_CIPHER_get_cipher_nid(const SSL_CIPHER *c) { return c != NULL ? c->cipher_nid : NID_undef; }

/* AEAD suites have no separate MAC digest (OpenSSL returns NID_undef too). */
int SSL_CIPHER_get_digest_nid(const SSL_CIPHER *c) { return NID_undef; }

/* TLS 1.3 suites leave key exchange and authentication to extensions. */
int SSL_CIPHER_get_kx_nid(const SSL_CIPHER *c) { return c != NULL ? NID_kx_any : NID_undef; }

int SSL_CIPHER_get_auth_nid(const SSL_CIPHER *c) { return c != NULL ? NID_auth_any : NID_undef; }

const EVP_MD *SSL_CIPHER_get_handshake_digest(const SSL_CIPHER *c)
{
    return c != NULL ? EVP_get_digestbynid(c->prf_nid) : NULL;
}

uint16_t SSL_CIPHER_get_protocol_id(const SSL_CIPHER *c) { return c->tls_id; }

int SSL_CIPHER_is_aead(const SSL_CIPHER *c) { return 1; }

/* ptr is the two-byte wire value; only the suites qtls implements are found. */
const SSL_CIPHER *SSL_CIPHER_find(SSL *ssl, const unsigned char *ptr)
{
    return suite_by_tls_id((uint16_t)(ptr[0] << 8 | ptr[1]));
}
