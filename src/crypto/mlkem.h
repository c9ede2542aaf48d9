/*
 * crypto/mlkem.h: ML-KEM-768 and ML-KEM-1024 (FIPS 203), qtls's own, for libcrypto versions
 * without one (OpenSSL 3.0-3.4). libcrypto is used only for SHA3-256/512, SHAKE128/256 and
 * randomness. Every function is constant time in its secret inputs (d, z, m, dk and the
 * secrets derived from them); public inputs (ek, ct) may be branched on.
 *
 * Every function returns 1 on success and 0 on failure (a hash failure, or a rejected
 * input where said), with the outputs then wiped.
 */
#ifndef QTLS_MLKEM_H
#define QTLS_MLKEM_H

#include <stddef.h>
#include <stdint.h>

enum mlkem_param { MLKEM_768 = 0, MLKEM_1024 = 1 };

#define MLKEM_SS_LEN 32      /* shared secret K */
#define MLKEM_SEED_LEN 32    /* d, z and m each */
#define MLKEM768_EK_LEN 1184 /* encapsulation key */
#define MLKEM768_DK_LEN 2400 /* decapsulation key dk_PKE || ek || H(ek) || z */
#define MLKEM768_CT_LEN 1088
#define MLKEM1024_EK_LEN 1568
#define MLKEM1024_DK_LEN 3168
#define MLKEM1024_CT_LEN 1568
#define MLKEM_MAX_EK_LEN MLKEM1024_EK_LEN
#define MLKEM_MAX_DK_LEN MLKEM1024_DK_LEN
#define MLKEM_MAX_CT_LEN MLKEM1024_CT_LEN

size_t mlkem_ek_len(enum mlkem_param p);
size_t mlkem_dk_len(enum mlkem_param p);
size_t mlkem_ct_len(enum mlkem_param p);

/* ML-KEM.KeyGen_internal(d, z) (FIPS 203 Algorithm 16): ek and dk from the two seeds. */
int mlkem_keygen_derand(enum mlkem_param p, const uint8_t d[MLKEM_SEED_LEN],
                        const uint8_t z[MLKEM_SEED_LEN], uint8_t *ek, uint8_t *dk);
/* ML-KEM.KeyGen (Algorithm 19): seeds from crypto_random (crypto.h: its test and fuzz hooks). */
int mlkem_keygen(enum mlkem_param p, uint8_t *ek, uint8_t *dk);

/*
 * The encapsulation key check of FIPS 203 §7.2 (the modulus check: every coefficient of
 * ByteDecode_12(ek) below q re-encodes to the same bytes). ek is mlkem_ek_len(p) bytes.
 * 1 if it passes, 0 if not (no error is queued: the caller names the alert).
 */
int mlkem_ek_check(enum mlkem_param p, const uint8_t *ek);

/* ML-KEM.Encaps_internal(ek, m) (Algorithm 17); runs mlkem_ek_check first, 0 if it fails. */
int mlkem_encaps_derand(enum mlkem_param p, const uint8_t *ek, const uint8_t m[MLKEM_SEED_LEN],
                        uint8_t *ct, uint8_t ss[MLKEM_SS_LEN]);
/* ML-KEM.Encaps (Algorithm 20): m from crypto_random. */
int mlkem_encaps(enum mlkem_param p, const uint8_t *ek, uint8_t *ct, uint8_t ss[MLKEM_SS_LEN]);

/*
 * ML-KEM.Decaps_internal(dk, c) (Algorithm 18) with implicit rejection: a ciphertext that
 * does not re-encrypt to itself yields J(z || c), chosen without a secret-dependent branch.
 * ct is mlkem_ct_len(p) bytes (the caller checks the length). dk's hash check (§7.3) is the
 * caller's to skip: dk here is always one mlkem_keygen made.
 */
int mlkem_decaps(enum mlkem_param p, const uint8_t *dk, const uint8_t *ct,
                 uint8_t ss[MLKEM_SS_LEN]);

#endif
