/*
 * tests/pq/mlkem_xcheck.c: qtls's own ML-KEM (src/crypto/mlkem.c, through libqtls.a) against
 * OpenSSL 3.5's, byte for byte, in one process that uses 3.5's libcrypto only: built with
 * build/ossl35's headers, linked with libqtls.a then -L build/ossl35/lib -lcrypto and an rpath
 * (libqtls.a was compiled against OpenSSL 3.0's headers; 3.5's libcrypto is ABI compatible).
 *
 * For each of N deterministic cases (seeds d, z, m from SHA-256 of a label and a counter) and
 * each of ML-KEM-768 and ML-KEM-1024:
 *   keygen    mlkem_keygen_derand(d, z) against OpenSSL's key generated from the seed d || z
 *             (EVP_PKEY_keygen with OSSL_PKEY_PARAM_ML_KEM_SEED): ek and dk equal
 *             (OSSL_PKEY_PARAM_PUB_KEY, OSSL_PKEY_PARAM_PRIV_KEY)
 *   encaps    mlkem_encaps_derand(ek, m) against EVP_PKEY_encapsulate with OSSL_KEM_PARAM_IKME
 *             = m on a key imported from qtls's ek: ct and shared secret equal
 *   decaps    qtls decapsulates OpenSSL's ct and OpenSSL (on a key imported from qtls's dk)
 *             decapsulates qtls's: the shared secret each time
 *   reject    a ciphertext with one bit flipped (a different bit each case): both give the same
 *             implicit-rejection secret J(z || c'), and not the real one
 *   ek_range  an ek with one coefficient set to q = 3329 (a different one each case): qtls's
 *             mlkem_ek_check and mlkem_encaps_derand refuse it, and so does OpenSSL's import
 *
 * Usage: mlkem_xcheck [N]   (default 64). One line per failure, then the summary line
 *   mlkem_xcheck: N cases x 2 parameter sets: P checks passed, F failed (OpenSSL 3.5.x)
 * Exit status 0 when every check passed, 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>
#include <openssl/params.h>

#include "mlkem.h"

#if OPENSSL_VERSION_NUMBER < 0x30500000L
#error "mlkem_xcheck needs OpenSSL 3.5's headers (build/ossl35/include: tests/pq/ossl35.sh)"
#endif

static long npass, nfail;

static void check(int ok, const char *alg, int i, const char *what)
{
    if (ok) {
        npass++;
        return;
    }
    nfail++;
    printf("FAIL %s case %d: %s\n", alg, i, what);
    ERR_print_errors_fp(stdout);
}

/* SHA-256(label || i), 32 bytes. */
static void derive(const char *label, int i, uint8_t out[32])
{
    unsigned char in[64];
    size_t n = strlen(label);
    memcpy(in, label, n);
    in[n] = (unsigned char)(i >> 24);
    in[n + 1] = (unsigned char)(i >> 16);
    in[n + 2] = (unsigned char)(i >> 8);
    in[n + 3] = (unsigned char)i;
    if (EVP_Digest(in, n + 4, out, NULL, EVP_sha256(), NULL) != 1) {
        fprintf(stderr, "mlkem_xcheck: SHA-256 failed\n");
        exit(1);
    }
}

static EVP_PKEY *ossl_keygen(const char *alg, const uint8_t seed[64])
{
    EVP_PKEY_CTX *kc = EVP_PKEY_CTX_new_from_name(NULL, alg, NULL);
    EVP_PKEY *pk = NULL;
    OSSL_PARAM params[] = {
        OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_ML_KEM_SEED, (void *)seed, 64),
        OSSL_PARAM_END,
    };
    if (kc == NULL || EVP_PKEY_keygen_init(kc) != 1 || EVP_PKEY_CTX_set_params(kc, params) != 1 ||
        EVP_PKEY_keygen(kc, &pk) != 1)
        pk = NULL;
    EVP_PKEY_CTX_free(kc);
    return pk;
}

/* A key from raw bytes: OSSL_PKEY_PARAM_PUB_KEY (ek) or OSSL_PKEY_PARAM_PRIV_KEY (dk). */
static EVP_PKEY *ossl_import(const char *alg, const char *param, const uint8_t *b, size_t n)
{
    EVP_PKEY_CTX *fc = EVP_PKEY_CTX_new_from_name(NULL, alg, NULL);
    EVP_PKEY *pk = NULL;
    int sel = strcmp(param, OSSL_PKEY_PARAM_PUB_KEY) == 0 ? EVP_PKEY_PUBLIC_KEY : EVP_PKEY_KEYPAIR;
    OSSL_PARAM params[] = {
        OSSL_PARAM_octet_string(param, (void *)b, n),
        OSSL_PARAM_END,
    };
    if (fc == NULL || EVP_PKEY_fromdata_init(fc) != 1 ||
        EVP_PKEY_fromdata(fc, &pk, sel, params) != 1)
        pk = NULL;
    EVP_PKEY_CTX_free(fc);
    return pk;
}

static int ossl_encaps(EVP_PKEY *pk, const uint8_t m[32], uint8_t *ct, size_t ctlen,
                       uint8_t ss[32])
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
    size_t cl = ctlen, sl = 32;
    OSSL_PARAM params[] = {
        OSSL_PARAM_octet_string(OSSL_KEM_PARAM_IKME, (void *)m, 32),
        OSSL_PARAM_END,
    };
    int ok = c != NULL && EVP_PKEY_encapsulate_init(c, params) == 1 &&
             EVP_PKEY_encapsulate(c, ct, &cl, ss, &sl) == 1 && cl == ctlen && sl == 32;
    EVP_PKEY_CTX_free(c);
    return ok;
}

static int ossl_decaps(EVP_PKEY *pk, const uint8_t *ct, size_t ctlen, uint8_t ss[32])
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
    size_t sl = 32;
    int ok = c != NULL && EVP_PKEY_decapsulate_init(c, NULL) == 1 &&
             EVP_PKEY_decapsulate(c, ss, &sl, ct, ctlen) == 1 && sl == 32;
    EVP_PKEY_CTX_free(c);
    return ok;
}

static int octets(EVP_PKEY *pk, const char *param, uint8_t *b, size_t n)
{
    size_t got = 0;
    return EVP_PKEY_get_octet_string_param(pk, param, b, n, &got) == 1 && got == n;
}

/* Sets coefficient j of ek's polynomial vector to v (ByteEncode_12: 2 per 3 bytes). */
static void set_coeff(uint8_t *ek, size_t j, unsigned v)
{
    uint8_t *b = ek + 3 * (j / 2);
    if (j % 2 == 0) {
        b[0] = (uint8_t)v;
        b[1] = (uint8_t)((b[1] & 0xf0) | (v >> 8));
    } else {
        b[1] = (uint8_t)((b[1] & 0x0f) | ((v & 0x0f) << 4));
        b[2] = (uint8_t)(v >> 4);
    }
}

static void one(enum mlkem_param p, const char *alg, int k, int i)
{
    size_t ekl = mlkem_ek_len(p), dkl = mlkem_dk_len(p), ctl = mlkem_ct_len(p);
    uint8_t d[32], z[32], m[32], seed[64];
    uint8_t ek[MLKEM_MAX_EK_LEN], dk[MLKEM_MAX_DK_LEN], oek[MLKEM_MAX_EK_LEN],
        odk[MLKEM_MAX_DK_LEN], ct[MLKEM_MAX_CT_LEN], oct[MLKEM_MAX_CT_LEN],
        bad[MLKEM_MAX_CT_LEN], badek[MLKEM_MAX_EK_LEN];
    uint8_t ss[32], oss[32], ss2[32], oss2[32], rss[32], orss[32];
    EVP_PKEY *okey, *qpub = NULL, *qpriv = NULL, *badpub;
    char what[96];

    derive("qtls mlkem_xcheck d", i, d);
    derive("qtls mlkem_xcheck z", i, z);
    derive("qtls mlkem_xcheck m", i, m);
    memcpy(seed, d, 32);
    memcpy(seed + 32, z, 32);

    check(ekl == (size_t)(k == 3 ? MLKEM768_EK_LEN : MLKEM1024_EK_LEN) &&
              ctl == (size_t)(k == 3 ? MLKEM768_CT_LEN : MLKEM1024_CT_LEN) &&
              dkl == (size_t)(k == 3 ? MLKEM768_DK_LEN : MLKEM1024_DK_LEN),
          alg, i, "mlkem_ek_len/dk_len/ct_len");

    /* keygen */
    int qk = mlkem_keygen_derand(p, d, z, ek, dk);
    check(qk, alg, i, "qtls mlkem_keygen_derand failed");
    okey = ossl_keygen(alg, seed);
    check(okey != NULL, alg, i, "OpenSSL keygen from the seed d || z failed");
    if (!qk || okey == NULL)
        goto out;
    check(octets(okey, OSSL_PKEY_PARAM_PUB_KEY, oek, ekl) && memcmp(ek, oek, ekl) == 0, alg, i,
          "keygen: ek differs");
    check(octets(okey, OSSL_PKEY_PARAM_PRIV_KEY, odk, dkl) && memcmp(dk, odk, dkl) == 0, alg,
          i, "keygen: dk differs");

    /* encaps: qtls from m; OpenSSL with ikmE = m on qtls's ek */
    qpub = ossl_import(alg, OSSL_PKEY_PARAM_PUB_KEY, ek, ekl);
    check(qpub != NULL, alg, i, "OpenSSL refused to import qtls's ek");
    check(mlkem_encaps_derand(p, ek, m, ct, ss), alg, i, "qtls mlkem_encaps_derand failed");
    if (qpub != NULL && ossl_encaps(qpub, m, oct, ctl, oss)) {
        check(memcmp(ct, oct, ctl) == 0, alg, i, "encaps: ct differs");
        check(memcmp(ss, oss, 32) == 0, alg, i, "encaps: shared secret differs");
    } else {
        check(0, alg, i, "OpenSSL encapsulate with ikme failed");
    }

    /* decaps across: the ct of each side with the other's decapsulation (OpenSSL's on a key
     * imported from qtls's dk, and on its own) */
    qpriv = ossl_import(alg, OSSL_PKEY_PARAM_PRIV_KEY, dk, dkl);
    check(qpriv != NULL, alg, i, "OpenSSL refused to import qtls's dk");
    check(mlkem_decaps(p, dk, oct, ss2) && memcmp(ss2, ss, 32) == 0, alg, i,
          "qtls decaps of OpenSSL's ct: wrong secret");
    check(qpriv != NULL && ossl_decaps(qpriv, ct, ctl, oss2) && memcmp(oss2, ss, 32) == 0, alg,
          i, "OpenSSL decaps (qtls's dk) of qtls's ct: wrong secret");
    check(ossl_decaps(okey, ct, ctl, oss2) && memcmp(oss2, ss, 32) == 0, alg, i,
          "OpenSSL decaps (own key) of qtls's ct: wrong secret");

    /* implicit rejection: one bit flipped, a different one each case */
    memcpy(bad, ct, ctl);
    size_t bit = ((size_t)i * 2654435761u) % (ctl * 8);
    bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    snprintf(what, sizeof(what), "reject (bit %zu flipped): qtls and OpenSSL differ", bit);
    check(mlkem_decaps(p, dk, bad, rss) && ossl_decaps(okey, bad, ctl, orss) &&
              memcmp(rss, orss, 32) == 0,
          alg, i, what);
    check(memcmp(rss, ss, 32) != 0, alg, i, "reject: the tampered ct gave the real secret");

    /* ek with a coefficient equal to q: refused by both */
    memcpy(badek, ek, ekl);
    size_t j = ((size_t)i * 40503u) % (256 * (size_t)k);
    set_coeff(badek, j, 3329);
    snprintf(what, sizeof(what), "ek_range (coefficient %zu = q): qtls accepted it", j);
    check(!mlkem_ek_check(p, badek) && !mlkem_encaps_derand(p, badek, m, oct, oss2), alg, i,
          what);
    badpub = ossl_import(alg, OSSL_PKEY_PARAM_PUB_KEY, badek, ekl);
    snprintf(what, sizeof(what), "ek_range (coefficient %zu = q): OpenSSL accepted it", j);
    check(badpub == NULL, alg, i, what);
    EVP_PKEY_free(badpub);
    ERR_clear_error(); /* the refusal's */
    check(mlkem_ek_check(p, ek), alg, i, "qtls mlkem_ek_check refused a good ek");

out:
    EVP_PKEY_free(okey);
    EVP_PKEY_free(qpub);
    EVP_PKEY_free(qpriv);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 64;
    if (n <= 0) {
        fprintf(stderr, "usage: %s [N]\n", argv[0]);
        return 2;
    }
    if (OpenSSL_version_num() < 0x30500000L) {
        fprintf(stderr, "mlkem_xcheck: runs on %s, not OpenSSL 3.5 (the rpath?)\n",
                OpenSSL_version(OPENSSL_VERSION));
        return 1;
    }
    for (int i = 0; i < n; i++) {
        one(MLKEM_768, "ML-KEM-768", 3, i);
        one(MLKEM_1024, "ML-KEM-1024", 4, i);
    }
    printf("mlkem_xcheck: %d cases x 2 parameter sets: %ld checks passed, %ld failed (%s)\n", n,
           npass, nfail, OpenSSL_version(OPENSSL_VERSION));
    return nfail == 0 && npass > 0 ? 0 : 1;
}
