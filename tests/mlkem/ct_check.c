/*
 * ct_check: runs qtls's ML-KEM (src/crypto/mlkem.c, compiled in) with its secret inputs marked
 * undefined for valgrind's memcheck, so that a branch or a memory index that depends on them is
 * reported as a use of an uninitialised value (tests/mlkem/ct.sh runs it under
 * valgrind --error-exitcode=1).
 *
 *   ct_check 768 | 1024   keygen, encaps, decaps of the encapsulated ciphertext and of a
 *                         modified one (implicit rejection), each twice from fresh seeds
 *   ct_check control      branches on a secret byte on purpose: memcheck must report it, or
 *                         the check above proves nothing
 *
 * The secrets: d and z (keygen), m (encaps), dk_PKE and z inside dk (decaps). ek, H(ek) and
 * the ciphertexts are public. So is rho, the first half of G(d || k) in keygen, which ek
 * publishes and SampleNTT branches on (rejection sampling of the public matrix): the
 * EVP_DigestFinal_ex below wraps libcrypto's and marks those 32 bytes defined during keygen.
 * Outputs are marked defined before they are compared. libcrypto's Keccak needs no
 * suppression: it does not branch on its input.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <valgrind/memcheck.h>

#include "crypto/mlkem.h"

/* mlkem_keygen and mlkem_encaps draw from crypto_random (crypto.c, not linked here). */
int crypto_random(uint8_t *out, size_t len);
int crypto_random(uint8_t *out, size_t len)
{
    memset(out, 0x5a, len);
    return 1;
}

static int in_keygen;

/* libcrypto's EVP_DigestFinal_ex; in keygen, the 32 bytes of rho from G = SHA3-512 are public. */
int EVP_DigestFinal_ex(EVP_MD_CTX *ctx, unsigned char *md, unsigned int *len)
{
    static int (*real)(EVP_MD_CTX *, unsigned char *, unsigned int *);
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "EVP_DigestFinal_ex");
    if (real == NULL)
        abort();
    int is_g = EVP_MD_get_size(EVP_MD_CTX_get0_md(ctx)) == 64;
    int ok = real(ctx, md, len);
    if (ok && in_keygen && is_g)
        VALGRIND_MAKE_MEM_DEFINED(md, 32);
    return ok;
}

static void secret(const void *p, size_t len) { VALGRIND_MAKE_MEM_UNDEFINED(p, len); }
static void public(const void *p, size_t len) { VALGRIND_MAKE_MEM_DEFINED(p, len); }

static int fail(const char *what)
{
    fprintf(stderr, "ct_check: %s\n", what);
    return 1;
}

static int one_round(enum mlkem_param p, uint8_t first)
{
    uint8_t d[32], z[32], m[32], ek[MLKEM_MAX_EK_LEN], dk[MLKEM_MAX_DK_LEN];
    uint8_t ct[MLKEM_MAX_CT_LEN], k_enc[32], k_dec[32], k_rej[32];
    size_t ek_len = mlkem_ek_len(p), dk_len = mlkem_dk_len(p), ct_len = mlkem_ct_len(p);
    size_t pke_len = dk_len - ek_len - 64;
    for (size_t i = 0; i < 32; i++) {
        d[i] = (uint8_t)(first + 3 * i);
        z[i] = (uint8_t)(first ^ (5 * i));
        m[i] = (uint8_t)(first + 7 * i + 1);
    }

    secret(d, 32);
    secret(z, 32);
    in_keygen = 1;
    int ok = mlkem_keygen_derand(p, d, z, ek, dk);
    in_keygen = 0;
    public(ek, ek_len);
    public(dk, dk_len);
    if (!ok)
        return fail("keygen");

    secret(m, 32);
    ok = mlkem_encaps_derand(p, ek, m, ct, k_enc);
    public(ct, ct_len);
    public(k_enc, 32);
    if (!ok)
        return fail("encaps");

    secret(dk, pke_len);       /* dk_PKE */
    secret(dk + dk_len - 32, 32); /* z */
    ok = mlkem_decaps(p, dk, ct, k_dec);
    ct[first % ct_len] ^= 0x10;
    ok = ok && mlkem_decaps(p, dk, ct, k_rej);
    public(k_dec, 32);
    public(k_rej, 32);
    if (!ok)
        return fail("decaps");
    if (memcmp(k_enc, k_dec, 32) != 0 || memcmp(k_enc, k_rej, 32) == 0)
        return fail("wrong shared secret");
    return 0;
}

/* The experiment's control: a branch on secret data, which memcheck must report. */
static int control(void)
{
    uint8_t d[32] = {1};
    volatile int taken = 0;
    secret(d, sizeof(d));
    if (d[0] & 1)
        taken = 1;
    return taken & 0;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return fail("usage: ct_check 768 | 1024 | control");
    if (strcmp(argv[1], "control") == 0)
        return control();
    enum mlkem_param p = strcmp(argv[1], "1024") == 0 ? MLKEM_1024 : MLKEM_768;
    int failed = 0;
    for (uint8_t round = 0; round < 2; round++)
        failed |= one_round(p, (uint8_t)(0x31 * round + 1));
    if (!failed)
        printf("ct_check %s: keygen, encaps, decaps ran\n", argv[1]);
    return failed;
}
