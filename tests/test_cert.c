/*
 * Certificate loading (SSL_CTX_use_*), CertificateVerify scheme choice and
 * peer chain verification. The PKI comes from scripts/gen-certs.sh; its
 * directory is in QTLS_CERTS (make check sets it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/pem.h>

#include "internal.h"
#include "policy/policy.h"

static const char *certs_dir;

/* DIR/name; a few results may be alive at once. */
static const char *cert_path(const char *name)
{
    static char buf[4][1024];
    static int next;
    char *p = buf[next];
    next = (next + 1) % 4;
    snprintf(p, sizeof(buf[0]), "%s/%s", certs_dir, name);
    return p;
}

/* Drains the error queue; 1 if (lib, reason) was on it. */
static int queue_has(int lib, int reason)
{
    unsigned long e;
    int found = 0;
    while ((e = ERR_get_error()) != 0)
        if (ERR_GET_LIB(e) == lib && ERR_GET_REASON(e) == reason)
            found = 1;
    return found;
}

static EVP_PKEY *read_key(const char *name)
{
    BIO *in = BIO_new_file(cert_path(name), "r");
    assert_non_null(in);
    EVP_PKEY *k = PEM_read_bio_PrivateKey(in, NULL, NULL, NULL);
    BIO_free(in);
    assert_non_null(k);
    return k;
}

/* Every certificate of a PEM file, in file order. */
static STACK_OF(X509) *read_certs(const char *name)
{
    BIO *in = BIO_new_file(cert_path(name), "r");
    assert_non_null(in);
    STACK_OF(X509) *sk = sk_X509_new_null();
    X509 *x;
    while ((x = PEM_read_bio_X509(in, NULL, NULL, NULL)) != NULL)
        assert_true(sk_X509_push(sk, x) > 0);
    ERR_clear_error(); /* the PEM end-of-file "no start line" */
    BIO_free(in);
    assert_true(sk_X509_num(sk) > 0);
    return sk;
}

static int clear_errors(void **state)
{
    ERR_clear_error();
    return 0;
}

static int group_setup(void **state)
{
    certs_dir = getenv("QTLS_CERTS");
    if (certs_dir == NULL || *certs_dir == '\0') {
        fprintf(stderr, "QTLS_CERTS is not set (scripts/gen-certs.sh DIR makes one)\n");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Loading                                                             */
/* ------------------------------------------------------------------ */

static const char *const leaf_names[] = {"ecdsa256", "ecdsa384", "rsa", "ed25519"};
#define N_LEAVES (sizeof(leaf_names) / sizeof(leaf_names[0]))

static void load_pair(SSL_CTX *ctx, const char *name, const char *cert_suffix)
{
    char cert[64], key[64];
    snprintf(cert, sizeof(cert), "%s%s", name, cert_suffix);
    snprintf(key, sizeof(key), "%s.key", name);
    if (strcmp(cert_suffix, "-chain.pem") == 0)
        assert_int_equal(SSL_CTX_use_certificate_chain_file(ctx, cert_path(cert)), 1);
    else
        assert_int_equal(SSL_CTX_use_certificate_file(ctx, cert_path(cert), SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, cert_path(key), SSL_FILETYPE_PEM), 1);
}

static void each_key_type_loads_and_matches(void **state)
{
    for (size_t i = 0; i < N_LEAVES; i++) {
        SSL_CTX *ctx = SSL_CTX_new(TLS_method());
        assert_non_null(ctx);
        load_pair(ctx, leaf_names[i], ".pem");
        assert_int_equal(SSL_CTX_check_private_key(ctx), 1);
        assert_non_null(SSL_CTX_get0_certificate(ctx));
        assert_non_null(SSL_CTX_get0_privatekey(ctx));
        assert_int_equal(ERR_peek_error(), 0);
        SSL_CTX_free(ctx);
    }
}

static void each_chain_file_loads_leaf_without_intermediates(void **state)
{
    for (size_t i = 0; i < N_LEAVES; i++) {
        SSL_CTX *ctx = SSL_CTX_new(TLS_method());
        load_pair(ctx, leaf_names[i], "-chain.pem");
        assert_int_equal(SSL_CTX_check_private_key(ctx), 1);
        assert_true(sk_X509_num(ctx->certs.slot[ctx->certs.current].chain) <= 0);
        assert_int_equal(ERR_peek_error(), 0);
        SSL_CTX_free(ctx);
    }
}

/* Writes the DER forms of a certificate and key to temporary files. */
static void write_der(const char *name, char *cert_tmp, char *key_tmp)
{
    char pem[64];
    snprintf(pem, sizeof(pem), "%s.pem", name);
    STACK_OF(X509) *sk = read_certs(pem);
    snprintf(pem, sizeof(pem), "%s.key", name);
    EVP_PKEY *k = read_key(pem);
    int fd = mkstemp(cert_tmp);
    assert_true(fd >= 0);
    close(fd);
    fd = mkstemp(key_tmp);
    assert_true(fd >= 0);
    close(fd);
    BIO *out = BIO_new_file(cert_tmp, "wb");
    assert_int_equal(i2d_X509_bio(out, sk_X509_value(sk, 0)), 1);
    BIO_free(out);
    out = BIO_new_file(key_tmp, "wb");
    assert_int_equal(i2d_PrivateKey_bio(out, k), 1);
    BIO_free(out);
    sk_X509_pop_free(sk, X509_free);
    EVP_PKEY_free(k);
}

static void der_files_load(void **state)
{
    char cert_tmp[] = "/tmp/qtls-cert-XXXXXX", key_tmp[] = "/tmp/qtls-key-XXXXXX";
    write_der("rsa", cert_tmp, key_tmp);
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    assert_int_equal(SSL_CTX_use_certificate_file(ctx, cert_tmp, SSL_FILETYPE_ASN1), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, key_tmp, SSL_FILETYPE_ASN1), 1);
    assert_int_equal(SSL_CTX_check_private_key(ctx), 1);
    /* DER read as PEM is not a certificate. */
    assert_int_equal(SSL_CTX_use_certificate_file(ctx, cert_tmp, SSL_FILETYPE_PEM), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PEM_LIB));
    unlink(cert_tmp);
    unlink(key_tmp);
    SSL_CTX_free(ctx);
}

static void use_certificate_takes_a_reference(void **state)
{
    STACK_OF(X509) *sk = read_certs("ecdsa256.pem");
    EVP_PKEY *k = read_key("ecdsa256.key");
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    assert_int_equal(SSL_CTX_use_certificate(ctx, sk_X509_value(sk, 0)), 1);
    assert_int_equal(SSL_CTX_use_PrivateKey(ctx, k), 1);
    assert_ptr_equal(SSL_CTX_get0_certificate(ctx), sk_X509_value(sk, 0));
    assert_ptr_equal(SSL_CTX_get0_privatekey(ctx), k);
    sk_X509_pop_free(sk, X509_free);
    EVP_PKEY_free(k);
    assert_int_equal(SSL_CTX_check_private_key(ctx), 1);
    assert_int_equal(SSL_CTX_use_certificate(ctx, NULL), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PASSED_NULL_PARAMETER));
    SSL_CTX_free(ctx);
}

static void mismatched_key_of_same_type_is_refused(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    assert_int_equal(SSL_CTX_use_certificate_file(ctx, cert_path("ecdsa256.pem"), SSL_FILETYPE_PEM),
                     1);
    assert_int_equal(
        SSL_CTX_use_PrivateKey_file(ctx, cert_path("ecdsa256-inter.key"), SSL_FILETYPE_PEM), 0);
    /* The reason is libcrypto's, as with OpenSSL. */
    assert_true(queue_has(ERR_LIB_X509, X509_R_KEY_VALUES_MISMATCH));
    assert_null(SSL_CTX_get0_privatekey(ctx));
    assert_int_equal(SSL_CTX_check_private_key(ctx), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_NO_PRIVATE_KEY_ASSIGNED));
    SSL_CTX_free(ctx);
}

/* OpenSSL keeps a pair per key type: a key of another type makes an empty pair current. */
static void key_of_other_type_starts_a_new_pair(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    assert_int_equal(SSL_CTX_use_certificate_file(ctx, cert_path("ecdsa256.pem"), SSL_FILETYPE_PEM),
                     1);
    assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, cert_path("rsa.key"), SSL_FILETYPE_PEM), 1);
    assert_null(SSL_CTX_get0_certificate(ctx));
    assert_int_equal(SSL_CTX_check_private_key(ctx), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_NO_CERTIFICATE_ASSIGNED));
    assert_int_equal(SSL_CTX_use_certificate_file(ctx, cert_path("rsa.pem"), SSL_FILETYPE_PEM), 1);
    assert_int_equal(SSL_CTX_check_private_key(ctx), 1);
    SSL_CTX_free(ctx);
}

/* Switching pairs certificate-first: the old key is dropped without an error. */
static void new_certificate_drops_mismatched_key_quietly(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, cert_path("ecdsa256.key"), SSL_FILETYPE_PEM),
                     1);
    assert_int_equal(
        SSL_CTX_use_certificate_file(ctx, cert_path("ecdsa256-inter.pem"), SSL_FILETYPE_PEM), 1);
    assert_int_equal(ERR_peek_error(), 0);
    assert_null(SSL_CTX_get0_privatekey(ctx));
    assert_int_equal(SSL_CTX_check_private_key(ctx), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_NO_PRIVATE_KEY_ASSIGNED));
    SSL_CTX_free(ctx);
}

static void check_without_certificate_fails(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    assert_int_equal(SSL_CTX_check_private_key(ctx), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_NO_CERTIFICATE_ASSIGNED));
    SSL_CTX_free(ctx);
}

static void missing_files_fail_with_an_error(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    const char *missing = cert_path("does-not-exist.pem");
    assert_int_equal(SSL_CTX_use_certificate_file(ctx, missing, SSL_FILETYPE_PEM), 0);
    assert_int_not_equal(ERR_peek_error(), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_SYS_LIB));
    assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, missing, SSL_FILETYPE_PEM), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_SYS_LIB));
    assert_int_equal(SSL_CTX_use_certificate_chain_file(ctx, missing), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_SYS_LIB));
    assert_null(SSL_CTX_get0_certificate(ctx));
    SSL_CTX_free(ctx);
}

static void wrong_contents_and_filetype_fail(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    assert_int_equal(SSL_CTX_use_certificate_file(ctx, cert_path("rsa.key"), SSL_FILETYPE_PEM), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PEM_LIB));
    assert_int_equal(SSL_CTX_use_PrivateKey_file(ctx, cert_path("rsa.pem"), SSL_FILETYPE_PEM), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PEM_LIB));
    assert_int_equal(SSL_CTX_use_certificate_chain_file(ctx, cert_path("rsa.key")), 0);
    assert_true(queue_has(ERR_LIB_SSL, ERR_R_PEM_LIB));
    assert_int_equal(SSL_CTX_use_certificate_file(ctx, cert_path("rsa.pem"), 42), 0);
    assert_true(queue_has(ERR_LIB_SSL, SSL_R_BAD_SSL_FILETYPE));
    SSL_CTX_free(ctx);
}

static void chain_file_loads_the_intermediate(void **state)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    load_pair(ctx, "ecdsa256-inter", "-chain.pem");
    assert_int_equal(SSL_CTX_check_private_key(ctx), 1);
    /* The expected end-of-file PEM error is not left behind. */
    assert_int_equal(ERR_peek_error(), 0);
    assert_int_equal(sk_X509_num(ctx->certs.slot[ctx->certs.current].chain), 1);
    STACK_OF(X509) *inter = read_certs("inter.pem");
    STACK_OF(X509) *chain = ctx->certs.slot[ctx->certs.current].chain;
    assert_int_equal(X509_cmp(sk_X509_value(chain, 0), sk_X509_value(inter, 0)), 0);
    sk_X509_pop_free(inter, X509_free);

    /* A later chain file replaces the chain, here with none. */
    assert_int_equal(SSL_CTX_use_certificate_chain_file(ctx, cert_path("ecdsa256-chain.pem")), 1);
    assert_true(sk_X509_num(ctx->certs.slot[ctx->certs.current].chain) <= 0);
    SSL_CTX_free(ctx);
}

/* ------------------------------------------------------------------ */
/* CertificateVerify scheme                                            */
/* ------------------------------------------------------------------ */

static uint16_t choose(const char *key_name, const uint16_t *peer, size_t n)
{
    EVP_PKEY *k = read_key(key_name);
    uint16_t out = 0;
    int ok = sigalgs_choose_scheme(k, peer, n, &out);
    EVP_PKEY_free(k);
    return ok ? out : 0;
}

static void scheme_follows_key_and_peer_order(void **state)
{
    const uint16_t pss_first[] = {0x0804, 0x0403};
    assert_int_equal(choose("ecdsa256.key", pss_first, 2), 0x0403);
    assert_int_equal(choose("rsa.key", pss_first, 2), 0x0804);

    const uint16_t ed_last[] = {0x0403, 0x0804, 0x0807};
    assert_int_equal(choose("ed25519.key", ed_last, 3), 0x0807);

    /* The peer's order wins among schemes that fit. */
    const uint16_t sha512_first[] = {0x0806, 0x0804};
    assert_int_equal(choose("rsa.key", sha512_first, 2), 0x0806);
}

static void scheme_skips_unknown_legacy_and_wrong_curve(void **state)
{
    /* ECDSA schemes bind the curve in TLS 1.3 (RFC 8446 §4.2.3). */
    const uint16_t p256_only[] = {0x0403};
    assert_int_equal(choose("ecdsa384.key", p256_only, 1), 0);
    const uint16_t both[] = {0x0403, 0x0503};
    assert_int_equal(choose("ecdsa384.key", both, 2), 0x0503);

    /* Unknown code points and PKCS#1 v1.5 are passed over. */
    const uint16_t junk_first[] = {0x1234, 0x0401, 0x0201, 0x0804};
    assert_int_equal(choose("rsa.key", junk_first, 4), 0x0804);
    assert_int_equal(choose("rsa.key", junk_first, 3), 0);
    assert_int_equal(choose("rsa.key", NULL, 0), 0);
}

/* RSA-PSS with SHA-512 needs a modulus of at least 130 bytes. */
static void scheme_skips_pss_too_big_for_small_rsa(void **state)
{
    EVP_PKEY *k = EVP_RSA_gen(1024);
    assert_non_null(k);
    const uint16_t peer[] = {0x0806, 0x0805, 0x0804};
    uint16_t out = 0;
    assert_int_equal(sigalgs_choose_scheme(k, peer, 3, &out), 1);
    assert_int_equal(out, 0x0805);
    EVP_PKEY_free(k);
}

/* ------------------------------------------------------------------ */
/* Peer chain verification                                             */
/* ------------------------------------------------------------------ */

/* A context trusting ca.pem. */
static SSL_CTX *trusting_ctx(const char *ca)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_method());
    assert_non_null(ctx);
    STACK_OF(X509) *sk = read_certs(ca);
    assert_int_equal(X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), sk_X509_value(sk, 0)), 1);
    sk_X509_pop_free(sk, X509_free);
    return ctx;
}

static SSL *client(SSL_CTX *ctx, int mode, const char *host)
{
    SSL *c = SSL_new(ctx);
    assert_non_null(c);
    SSL_set_connect_state(c);
    SSL_set_verify(c, mode, NULL);
    if (host != NULL)
        assert_int_equal(SSL_set1_host(c, host), 1);
    return c;
}

struct outcome {
    int ret;
    long result;
    uint8_t alert;
    int verify_failed_raised;
};

/* Verifies the chain in `chain_file` as a client expecting `host`. */
static struct outcome verify_as_client(const char *ca, const char *chain_file, int mode,
                                       const char *host, SSL_verify_cb cb)
{
    SSL_CTX *ctx = trusting_ctx(ca);
    SSL *c = client(ctx, mode, host);
    if (cb != NULL)
        SSL_set_verify(c, mode, cb);
    STACK_OF(X509) *chain = read_certs(chain_file);
    struct outcome o;
    o.ret = cert_verify_peer_chain(c, chain);
    o.result = SSL_get_verify_result(c);
    o.alert = c->alert;
    o.verify_failed_raised = queue_has(ERR_LIB_SSL, SSL_R_CERTIFICATE_VERIFY_FAILED);
    sk_X509_pop_free(chain, X509_free);
    SSL_free(c);
    SSL_CTX_free(ctx);
    return o;
}

static void good_chain_verifies(void **state)
{
    struct outcome o =
        verify_as_client("ca.pem", "ecdsa256-chain.pem", SSL_VERIFY_PEER, "localhost", NULL);
    assert_int_equal(o.ret, 1);
    assert_int_equal(o.result, X509_V_OK);
    assert_int_equal(o.alert, 0);
    assert_int_equal(ERR_peek_error(), 0);

    o = verify_as_client("ca.pem", "ecdsa256-inter-chain.pem", SSL_VERIFY_PEER, "server.example",
                         NULL);
    assert_int_equal(o.ret, 1);
    assert_int_equal(o.result, X509_V_OK);
}

/*
 * The verified chain of the peer's own chain plus one anchor is kept as a count and the anchor;
 * SSL_get0_verified_chain makes the stack of the very same certificates, once, and it stands
 * alone once peer_chain goes. A chain that is not the peer's is kept as built.
 */
static void verified_chain_is_made_from_the_peer_chain(void **state)
{
    SSL_CTX *ctx = trusting_ctx("ca.pem");
    SSL *c = client(ctx, SSL_VERIFY_PEER, "server.example");
    c->peer_chain = read_certs("ecdsa256-inter-chain.pem"); /* leaf, intermediate */
    assert_int_equal(cert_verify_peer_chain(c, c->peer_chain), 1);
    assert_null(c->verified_chain);
    assert_int_equal(c->verified_prefix, 2);
    assert_non_null(c->verified_anchor);
    STACK_OF(X509) *v = SSL_get0_verified_chain(c);
    assert_non_null(v);
    assert_int_equal(sk_X509_num(v), 3);
    assert_ptr_equal(sk_X509_value(v, 0), sk_X509_value(c->peer_chain, 0));
    assert_ptr_equal(sk_X509_value(v, 1), sk_X509_value(c->peer_chain, 1));
    STACK_OF(X509) *ca = read_certs("ca.pem");
    assert_int_equal(X509_cmp(sk_X509_value(v, 2), sk_X509_value(ca, 0)), 0);
    sk_X509_pop_free(ca, X509_free);
    assert_ptr_equal(SSL_get0_verified_chain(c), v);
    assert_null(c->verified_anchor);

    /* Compact again, then the peer chain is replaced: the verified one stays whole. */
    assert_int_equal(cert_verify_peer_chain(c, c->peer_chain), 1);
    assert_null(c->verified_chain);
    X509 *leaf = sk_X509_value(c->peer_chain, 0);
    X509_up_ref(leaf);
    cert_verified_detach(c);
    sk_X509_pop_free(c->peer_chain, X509_free);
    c->peer_chain = NULL;
    v = SSL_get0_verified_chain(c);
    assert_int_equal(sk_X509_num(v), 3);
    assert_ptr_equal(sk_X509_value(v, 0), leaf);
    X509_free(leaf);

    /* Not the peer's chain (a re-verification's): kept as X509_verify_cert built it. */
    STACK_OF(X509) *chain = read_certs("ecdsa256-inter-chain.pem");
    assert_int_equal(cert_verify_peer_chain(c, chain), 1);
    assert_non_null(c->verified_chain);
    assert_int_equal(sk_X509_num(SSL_get0_verified_chain(c)), 3);
    sk_X509_pop_free(chain, X509_free);
    SSL_free(c);
    SSL_CTX_free(ctx);
}

static void wrong_host_fails_under_verify_peer(void **state)
{
    struct outcome o =
        verify_as_client("ca.pem", "rsa-chain.pem", SSL_VERIFY_PEER, "wrong.example", NULL);
    assert_int_equal(o.ret, 0);
    assert_int_equal(o.result, X509_V_ERR_HOSTNAME_MISMATCH);
    assert_int_equal(o.alert, SSL_AD_BAD_CERTIFICATE);
    assert_true(o.verify_failed_raised);
}

/* curl and others read SSL_get_verify_result themselves under SSL_VERIFY_NONE. */
static void wrong_host_is_recorded_under_verify_none(void **state)
{
    struct outcome o =
        verify_as_client("ca.pem", "rsa-chain.pem", SSL_VERIFY_NONE, "wrong.example", NULL);
    assert_int_equal(o.ret, 1);
    assert_int_equal(o.result, X509_V_ERR_HOSTNAME_MISMATCH);
    assert_int_equal(o.alert, 0);
    assert_false(o.verify_failed_raised);
}

static void untrusted_ca_is_unknown_ca(void **state)
{
    struct outcome o =
        verify_as_client("ca.pem", "other-leaf.pem", SSL_VERIFY_PEER, "localhost", NULL);
    assert_int_equal(o.ret, 0);
    assert_int_equal(o.result, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
    assert_int_equal(o.alert, SSL_AD_UNKNOWN_CA);
    assert_true(o.verify_failed_raised);

    /* Trusting only the other root, our chain is unknown too. */
    o = verify_as_client("other-ca.pem", "ecdsa256-chain.pem", SSL_VERIFY_PEER, NULL, NULL);
    assert_int_equal(o.ret, 0);
    assert_int_equal(o.alert, SSL_AD_UNKNOWN_CA);
}

static void expired_leaf_is_certificate_expired(void **state)
{
    struct outcome o = verify_as_client("ca.pem", "expired.pem", SSL_VERIFY_PEER, NULL, NULL);
    assert_int_equal(o.ret, 0);
    assert_int_equal(o.result, X509_V_ERR_CERT_HAS_EXPIRED);
    assert_int_equal(o.alert, SSL_AD_CERTIFICATE_EXPIRED);
}

/* A client certificate offered by a server has the wrong purpose. */
static void client_certificate_is_not_a_server_certificate(void **state)
{
    struct outcome o = verify_as_client("ca.pem", "client.pem", SSL_VERIFY_PEER, NULL, NULL);
    assert_int_equal(o.ret, 0);
    assert_int_equal(o.result, X509_V_ERR_INVALID_PURPOSE);
    assert_int_equal(o.alert, SSL_AD_UNSUPPORTED_CERTIFICATE);
}

/* Decoding goes through the context's cache: the same bytes give the same object. */
static void certificate_decoding_is_cached_and_exact(void **state)
{
    static const char *names[] = {"ecdsa256.pem", "ecdsa384.pem", "rsa.pem",   "ed25519.pem",
                                  "client.pem",   "inter.pem",    "ca.pem",    "other-ca.pem",
                                  "expired.pem",  "other-leaf.pem"};
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    X509 *first = NULL;
    unsigned char *der0 = NULL;
    int len0 = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        STACK_OF(X509) *sk = read_certs(names[i]);
        unsigned char *der = NULL;
        int len = i2d_X509(sk_X509_value(sk, 0), &der);
        assert_true(len > 0);
        X509 *a = cert_decode(ctx, der, (size_t)len);
        X509 *b = cert_decode(ctx, der, (size_t)len);
        assert_non_null(a);
        assert_ptr_equal(a, b); /* the second decode came from the cache */
        assert_int_equal(X509_cmp(a, sk_X509_value(sk, 0)), 0);
        /* Not exactly one certificate: one byte short fails, and is not cached. */
        assert_null(cert_decode(ctx, der, (size_t)len - 1));
        if (i == 0) {
            first = a;
            der0 = der;
            len0 = len;
        } else {
            X509_free(a);
            OPENSSL_free(der);
        }
        X509_free(b);
        sk_X509_pop_free(sk, X509_free);
    }
    /* Ten certificates through eight slots: the first was replaced, yet decodes equal. */
    X509 *again = cert_decode(ctx, der0, (size_t)len0);
    assert_non_null(again);
    assert_ptr_not_equal(again, first);
    assert_int_equal(X509_cmp(again, first), 0);
    X509_free(again);
    X509_free(first);
    OPENSSL_free(der0);
    SSL_CTX_free(ctx);
    ERR_clear_error();
}

static void server_verifies_client_certificate(void **state)
{
    SSL_CTX *ctx = trusting_ctx("ca.pem");
    SSL *s = SSL_new(ctx);
    SSL_set_accept_state(s);
    SSL_set_verify(s, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    STACK_OF(X509) *chain = read_certs("client.pem");
    assert_int_equal(cert_verify_peer_chain(s, chain), 1);
    assert_int_equal(SSL_get_verify_result(s), X509_V_OK);
    sk_X509_pop_free(chain, X509_free);

    /* A server certificate is not a client certificate. */
    chain = read_certs("ecdsa256.pem");
    assert_int_equal(cert_verify_peer_chain(s, chain), 0);
    assert_int_equal(SSL_get_verify_result(s), X509_V_ERR_INVALID_PURPOSE);
    sk_X509_pop_free(chain, X509_free);
    SSL_free(s);
    SSL_CTX_free(ctx);
}

static int cb_calls;
static int cb_found_ssl;

static int accept_all(int ok, X509_STORE_CTX *sctx)
{
    cb_calls++;
    SSL *c = X509_STORE_CTX_get_ex_data(sctx, SSL_get_ex_data_X509_STORE_CTX_idx());
    if (c != NULL && SSL_get_SSL_CTX(c) != NULL)
        cb_found_ssl = 1;
    return 1;
}

static int reject_all(int ok, X509_STORE_CTX *sctx)
{
    X509_STORE_CTX_set_error(sctx, X509_V_ERR_APPLICATION_VERIFICATION);
    return 0;
}

static void verify_callback_can_override(void **state)
{
    cb_calls = 0;
    cb_found_ssl = 0;
    struct outcome o = verify_as_client("ca.pem", "rsa-chain.pem", SSL_VERIFY_PEER,
                                        "wrong.example", accept_all);
    assert_int_equal(o.ret, 1);
    assert_int_equal(o.result, X509_V_ERR_HOSTNAME_MISMATCH); /* recorded all the same */
    assert_int_equal(o.alert, 0);
    assert_false(o.verify_failed_raised);
    assert_true(cb_calls > 0);
    assert_true(cb_found_ssl);

    o = verify_as_client("ca.pem", "other-leaf.pem", SSL_VERIFY_PEER, NULL, accept_all);
    assert_int_equal(o.ret, 1);

    /* And reject a good chain. */
    o = verify_as_client("ca.pem", "ecdsa256-chain.pem", SSL_VERIFY_PEER, "localhost", reject_all);
    assert_int_equal(o.ret, 0);
    assert_int_equal(o.result, X509_V_ERR_APPLICATION_VERIFICATION);
    assert_int_equal(o.alert, SSL_AD_HANDSHAKE_FAILURE);
}

static void store_ctx_index_is_stable(void **state)
{
    int idx = SSL_get_ex_data_X509_STORE_CTX_idx();
    assert_true(idx >= 0);
    assert_int_equal(SSL_get_ex_data_X509_STORE_CTX_idx(), idx);
    assert_int_equal(cert_store_ctx_ssl_idx(), idx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(each_key_type_loads_and_matches, clear_errors),
        cmocka_unit_test_setup(each_chain_file_loads_leaf_without_intermediates, clear_errors),
        cmocka_unit_test_setup(der_files_load, clear_errors),
        cmocka_unit_test_setup(certificate_decoding_is_cached_and_exact, clear_errors),
        cmocka_unit_test_setup(use_certificate_takes_a_reference, clear_errors),
        cmocka_unit_test_setup(mismatched_key_of_same_type_is_refused, clear_errors),
        cmocka_unit_test_setup(key_of_other_type_starts_a_new_pair, clear_errors),
        cmocka_unit_test_setup(new_certificate_drops_mismatched_key_quietly, clear_errors),
        cmocka_unit_test_setup(check_without_certificate_fails, clear_errors),
        cmocka_unit_test_setup(missing_files_fail_with_an_error, clear_errors),
        cmocka_unit_test_setup(wrong_contents_and_filetype_fail, clear_errors),
        cmocka_unit_test_setup(chain_file_loads_the_intermediate, clear_errors),
        cmocka_unit_test_setup(scheme_follows_key_and_peer_order, clear_errors),
        cmocka_unit_test_setup(scheme_skips_unknown_legacy_and_wrong_curve, clear_errors),
        cmocka_unit_test_setup(scheme_skips_pss_too_big_for_small_rsa, clear_errors),
        cmocka_unit_test_setup(good_chain_verifies, clear_errors),
        cmocka_unit_test_setup(verified_chain_is_made_from_the_peer_chain, clear_errors),
        cmocka_unit_test_setup(wrong_host_fails_under_verify_peer, clear_errors),
        cmocka_unit_test_setup(wrong_host_is_recorded_under_verify_none, clear_errors),
        cmocka_unit_test_setup(untrusted_ca_is_unknown_ca, clear_errors),
        cmocka_unit_test_setup(expired_leaf_is_certificate_expired, clear_errors),
        cmocka_unit_test_setup(client_certificate_is_not_a_server_certificate, clear_errors),
        cmocka_unit_test_setup(server_verifies_client_certificate, clear_errors),
        cmocka_unit_test_setup(verify_callback_can_override, clear_errors),
        cmocka_unit_test_setup(store_ctx_index_is_stable, clear_errors),
    };
    return cmocka_run_group_tests_name("cert", tests, group_setup, NULL);
}
