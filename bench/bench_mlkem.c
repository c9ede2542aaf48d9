/*
 * ML-KEM per operation: qtls's own (src/crypto/mlkem.c, for libcrypto 3.0-3.4) against
 * libcrypto's where the libcrypto it runs on has one (OpenSSL 3.5: bench/pq.sh runs this
 * program with LD_LIBRARY_PATH at a 3.5 build), in one process, rounds interleaved.
 *
 *   bench_mlkem [-n N] [-r ROUNDS]
 * prints per round and parameter set "MLKEM <impl> <param> keygen_us=.. encaps_us=..
 * decaps_us=.." (CPU microseconds per operation), where impl is own or libcrypto; and
 * "MLKEM libcrypto none" when libcrypto has no ML-KEM. Every decapsulation is checked
 * against its encapsulation's secret; across implementations too (own encapsulates to
 * libcrypto's key and the other way round), so the two are known to agree before timing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "crypto/mlkem.h"

static const char *const names[2] = {"ML-KEM-768", "ML-KEM-1024"};

static double cpu_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_mlkem: %s failed\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

/* ---- libcrypto's (OpenSSL 3.5 and later) ---- */

static int lc_have(void)
{
    ERR_set_mark();
    EVP_KEM *k = EVP_KEM_fetch(NULL, names[0], NULL);
    ERR_pop_to_mark();
    EVP_KEM_free(k);
    return k != NULL;
}

static EVP_PKEY *lc_keygen(int p, uint8_t *ek)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, names[p], NULL);
    EVP_PKEY *key = NULL;
    size_t got = 0;
    if (ctx == NULL || EVP_PKEY_keygen_init(ctx) <= 0 || EVP_PKEY_keygen(ctx, &key) <= 0 ||
        !EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, ek,
                                         mlkem_ek_len(p), &got))
        die("libcrypto keygen");
    EVP_PKEY_CTX_free(ctx);
    return key;
}

static void lc_encaps(int p, const uint8_t *ek, uint8_t *ct, uint8_t *ss)
{
    EVP_PKEY *pk = EVP_PKEY_new_raw_public_key_ex(NULL, names[p], NULL, ek, mlkem_ek_len(p));
    EVP_PKEY_CTX *ctx = pk == NULL ? NULL : EVP_PKEY_CTX_new_from_pkey(NULL, pk, NULL);
    size_t ct_len = mlkem_ct_len(p), ss_len = 32;
    if (ctx == NULL || EVP_PKEY_encapsulate_init(ctx, NULL) <= 0 ||
        EVP_PKEY_encapsulate(ctx, ct, &ct_len, ss, &ss_len) <= 0)
        die("libcrypto encaps");
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(pk);
}

static void lc_decaps(int p, EVP_PKEY *key, const uint8_t *ct, uint8_t *ss)
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    size_t ss_len = 32;
    if (ctx == NULL || EVP_PKEY_decapsulate_init(ctx, NULL) <= 0 ||
        EVP_PKEY_decapsulate(ctx, ss, &ss_len, ct, mlkem_ct_len(p)) <= 0)
        die("libcrypto decaps");
    EVP_PKEY_CTX_free(ctx);
}

/* ---- timing ---- */

struct times {
    double keygen, encaps, decaps;
};

/* N key pairs, N encapsulations to the last key, N decapsulations of the last ciphertext. */
static struct times run(int lc, int p, int n)
{
    static uint8_t ek[MLKEM_MAX_EK_LEN], dk[MLKEM_MAX_DK_LEN], ct[MLKEM_MAX_CT_LEN];
    uint8_t ss[32], ss2[32];
    EVP_PKEY *key = NULL;
    struct times t;
    double t0 = cpu_us();
    for (int i = 0; i < n; i++) {
        if (lc) {
            EVP_PKEY_free(key);
            key = lc_keygen(p, ek);
        } else if (!mlkem_keygen(p, ek, dk)) {
            die("mlkem_keygen");
        }
    }
    double t1 = cpu_us();
    for (int i = 0; i < n; i++) {
        if (lc)
            lc_encaps(p, ek, ct, ss);
        else if (!mlkem_encaps(p, ek, ct, ss))
            die("mlkem_encaps");
    }
    double t2 = cpu_us();
    for (int i = 0; i < n; i++) {
        if (lc)
            lc_decaps(p, key, ct, ss2);
        else if (!mlkem_decaps(p, dk, ct, ss2))
            die("mlkem_decaps");
    }
    double t3 = cpu_us();
    if (memcmp(ss, ss2, 32) != 0)
        die("the decapsulated secret check");
    EVP_PKEY_free(key);
    t.keygen = (t1 - t0) / n;
    t.encaps = (t2 - t1) / n;
    t.decaps = (t3 - t2) / n;
    return t;
}

/* Own encapsulates to libcrypto's key and libcrypto to own's: the secrets must agree. */
static void cross_check(int p)
{
    uint8_t ek[MLKEM_MAX_EK_LEN], dk[MLKEM_MAX_DK_LEN], ct[MLKEM_MAX_CT_LEN];
    uint8_t ss[32], ss2[32];
    EVP_PKEY *key = lc_keygen(p, ek);
    if (!mlkem_encaps(p, ek, ct, ss))
        die("mlkem_encaps to libcrypto's key");
    lc_decaps(p, key, ct, ss2);
    if (memcmp(ss, ss2, 32) != 0)
        die("own -> libcrypto agreement");
    EVP_PKEY_free(key);
    if (!mlkem_keygen(p, ek, dk))
        die("mlkem_keygen");
    lc_encaps(p, ek, ct, ss);
    if (!mlkem_decaps(p, dk, ct, ss2) || memcmp(ss, ss2, 32) != 0)
        die("libcrypto -> own agreement");
}

static void print(const char *impl, int p, struct times t)
{
    printf("MLKEM %s %s keygen_us=%.2f encaps_us=%.2f decaps_us=%.2f\n", impl, names[p], t.keygen,
           t.encaps, t.decaps);
}

int main(int argc, char **argv)
{
    int n = 2000, rounds = 5, opt;
    while ((opt = getopt(argc, argv, "n:r:")) != -1) {
        if (opt == 'n')
            n = atoi(optarg);
        else if (opt == 'r')
            rounds = atoi(optarg);
        else
            return 2;
    }
    int lc = lc_have();
    if (!lc)
        printf("MLKEM libcrypto none (%s)\n", OpenSSL_version(OPENSSL_VERSION));
    for (int p = 0; lc && p < 2; p++)
        cross_check(p);
    for (int r = 0; r < rounds; r++) {
        for (int p = 0; p < 2; p++) {
            /* the order alternates between rounds */
            for (int k = 0; k < 1 + lc; k++) {
                int use_lc = lc && ((r + k) % 2 == 1);
                print(use_lc ? "libcrypto" : "own", p, run(use_lc, p, n));
            }
        }
    }
    return 0;
}
