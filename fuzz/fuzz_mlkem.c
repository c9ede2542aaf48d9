/*
 * qtls's own ML-KEM (src/crypto/mlkem.c) on arbitrary keys and ciphertexts, as a peer sends
 * them: an encapsulation key in a client's key share, a ciphertext in a server's.
 * Input: bit 0 of the first byte picks ML-KEM-768 or ML-KEM-1024; then ek, m and ct, each
 * zero-padded to its length when the input runs out.
 *   - mlkem_encaps_derand(ek, m) succeeds exactly when mlkem_ek_check(ek) does, and gives
 *     the same ciphertext and key twice;
 *   - mlkem_decaps(ct) with a fixed dk always succeeds (implicit rejection, never an error);
 *   - encapsulating m to the fixed key decapsulates to the same key.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto/mlkem.h"

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_mlkem: %s\n", what);
        abort();
    }
}

/* Takes len bytes from *in (zero-padded once the input is exhausted). */
static void take(const uint8_t **in, size_t *left, uint8_t *out, size_t len)
{
    size_t n = *left < len ? *left : len;
    memcpy(out, *in, n);
    memset(out + n, 0, len - n);
    *in += n;
    *left -= n;
}

/* The fixed key pair of each parameter set, made once from fixed seeds. */
static const uint8_t *fixed_key(enum mlkem_param p, const uint8_t **ek)
{
    static uint8_t eks[2][MLKEM_MAX_EK_LEN], dks[2][MLKEM_MAX_DK_LEN];
    static int made[2];
    if (!made[p]) {
        uint8_t d[32], z[32];
        memset(d, 0x42 + p, sizeof(d));
        memset(z, 0x24 + p, sizeof(z));
        check(mlkem_keygen_derand(p, d, z, eks[p], dks[p]), "keygen");
        made[p] = 1;
    }
    *ek = eks[p];
    return dks[p];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    enum mlkem_param p = (data[0] & 1) ? MLKEM_1024 : MLKEM_768;
    const uint8_t *in = data + 1, *fixed_ek;
    size_t left = size - 1, ct_len = mlkem_ct_len(p);
    uint8_t ek[MLKEM_MAX_EK_LEN], m[MLKEM_SEED_LEN], ct[MLKEM_MAX_CT_LEN];
    uint8_t out[MLKEM_MAX_CT_LEN], out2[MLKEM_MAX_CT_LEN], k[32], k2[32];
    take(&in, &left, ek, mlkem_ek_len(p));
    take(&in, &left, m, sizeof(m));
    take(&in, &left, ct, ct_len);
    const uint8_t *dk = fixed_key(p, &fixed_ek);

    int valid = mlkem_ek_check(p, ek);
    check(mlkem_encaps_derand(p, ek, m, out, k) == valid, "encaps disagrees with ek_check");
    if (valid) {
        check(mlkem_encaps_derand(p, ek, m, out2, k2), "encaps failed the second time");
        check(memcmp(out, out2, ct_len) == 0 && memcmp(k, k2, 32) == 0, "encaps not repeatable");
    }
    check(mlkem_decaps(p, dk, ct, k), "decaps of an arbitrary ciphertext failed");
    check(mlkem_encaps_derand(p, fixed_ek, m, out, k), "encaps to the fixed key failed");
    check(mlkem_decaps(p, dk, out, k2) && memcmp(k, k2, 32) == 0, "round trip disagrees");
    return 0;
}
