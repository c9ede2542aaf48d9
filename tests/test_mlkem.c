/*
 * qtls's own ML-KEM (src/crypto/mlkem.c, FIPS 203) against known answers from three sources,
 * each of which can fail:
 *   - NIST ACVP: ML-KEM-encapDecap-FIPS203, internalProjection.json, test group 2 (ML-KEM-768,
 *     encapsulation), tcId 26, from github.com/usnistgov/ACVP-Server, gen-val/json-files:
 *     ek and m in, c (as its SHA3-256) and k out. The ek below was checked against the
 *     vector's own H(ek), the 32 bytes before z at the end of its dk.
 *   - Go 1.24's crypto/mlkem (Debian trixie's golang-1.24-src): the ML-KEM-768 self-test
 *     of src/crypto/internal/fips140/mlkem/cast.go, and TestAccumulated of
 *     src/crypto/mlkem/mlkem_test.go, 10,000 keygen/encaps/decaps runs from a SHAKE128
 *     stream hashed into one SHAKE128 output, so that every compress/sample edge reachable
 *     at random is covered without 150 MB of vectors.
 *   - OpenSSL 3.5.9's ML-KEM (Debian trixie's libssl3t64, run on its own loader, not part
 *     of this build): ML-KEM-1024's accumulated hash and both sets' keygen/encaps/decaps
 *     from fixed seeds (d = 00..1f, z = 20..3f, m = 40..5f), as SHA3-256 of ek, dk and ct
 *     and the full shared secrets.
 * Implicit rejection is also checked against its definition, K = J(z || c) (FIPS 203
 * Algorithm 18, step 7), computed here with SHAKE256.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "crypto/mlkem.h"

static const enum mlkem_param BOTH[2] = {MLKEM_768, MLKEM_1024};

static void unhex(const char *hex, uint8_t *out, size_t len)
{
    assert_int_equal(strlen(hex), 2 * len);
    for (size_t i = 0; i < len; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
}

static void assert_hex_equal(const uint8_t *got, size_t len, const char *want_hex)
{
    uint8_t want[64];
    assert_true(len <= sizeof(want));
    unhex(want_hex, want, len);
    assert_memory_equal(got, want, len);
}

/* SHAKE128/256 or SHA3-256 of a || b, out_len bytes. */
static void hash(const char *name, const uint8_t *a, size_t a_len, const uint8_t *b,
                 size_t b_len, uint8_t *out, size_t out_len)
{
    EVP_MD *md = EVP_MD_fetch(NULL, name, NULL);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    assert_non_null(md);
    assert_non_null(ctx);
    assert_true(EVP_DigestInit_ex2(ctx, md, NULL));
    assert_true(EVP_DigestUpdate(ctx, a, a_len));
    assert_true(EVP_DigestUpdate(ctx, b, b_len));
    if (strcmp(name, "SHA3-256") == 0) {
        assert_int_equal(out_len, 32);
        assert_true(EVP_DigestFinal_ex(ctx, out, NULL));
    } else {
        assert_true(EVP_DigestFinalXOF(ctx, out, out_len));
    }
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md);
}

static void assert_sha3_256(const uint8_t *in, size_t len, const char *want_hex)
{
    uint8_t h[32];
    hash("SHA3-256", in, len, NULL, 0, h, sizeof(h));
    assert_hex_equal(h, sizeof(h), want_hex);
}

/* ---- NIST ACVP ---- */

static const char *const ACVP_26_EK[] = {
    "07B9B9FBE34B236538586B9A539A0C77364FB029AB77716AADC85B85784A07A903EA107C39BAC60C1666F7F8",
    "1D2CB962B1D93E59C4A86DD725FE57CE81E1043EF90C1AB7682D998D035694D591B02BAA9C1E2B2727F42F25",
    "6BA8B05B5FC767947330566765ADF90C3FFE624EB373055AAA5947C28EB93302691804E7F54ECC69964EB59F",
    "1FDA5978CB73296216E20BA8AD8B985DB18C0041C487D88FC0FC4AF91709FEE28E818A3C7FA03663782EAC4C",
    "820308AE0934B5B96239E0C978917C41E8B1045B3CAB5D99139B764D22C2CACA84586C1342F1C70EAD9BC07C",
    "10865EEC84AAF4312CF3BFDC304F960BCFD9528DA95A6006F230C1C938B88A0DC9A711BD801A3711932B1A83",
    "173B5095352A21A9232E6767FA751B28AC2102548DC7877E251718E927135D217134B2A782E14F7038616341",
    "23489044E8E63A5FD700E734CA9BD68127D5B382D01028728FA3488D9099A63B0534ECEB10B5B38AD1997CEC",
    "0360986C2ED46C9EFFA475C5A59C63167C6DB9C0FEC992B64AC8E4E07C45491838B4712BD24EF9561BDAD10E",
    "61E914E3995EAC290F9B0B52E357ADE0F63DCA80C180A0216C003C15D6AA3C5A86D6E103C8F49098E3B69714",
    "9EC8F53CCF09CECA3B44EF05B9F3938312709FD45BBBBF99546D91ABD410062A680E9DD34475417D75098C68",
    "753EC7739357051F12C7C2F52960540474B498AF76B4CF262996F9A7C4848523680806EA297B957C738863B6",
    "B24B8D228C7073252655615473250777C11D05DCBEA1473A4AEBBD65C5799021385847CC44BBAD97504CF8F7",
    "AFA7D0AB4876580DC6156EB3657E73584014ACAFA68FF2D8C5B5CAA7A680865C80496666A4FBA45C2D4B85FB",
    "5ACB0D20348A77C0109A0274AA97E477386A9110362482EA8A02BE89BD2E4B80A60BC38B2A2E58356FE6424E",
    "5D6C622625726897B19974456EE8660708C7FBE10B5737013CFA1D33A524E1D879E9F54875094612769359D5",
    "38DDD400B136021F288D4890531967508E5053745CB815D00CC314A027BB4F4C1C33AFAB2D6FA4C6173A2A67",
    "2219367A56D2557FD0C7BB376562C94BC5CBF1322A33B2C1AB6742D2C003DC6D3A5B687DF8055A8A925AE5B4",
    "FC2B20450ACF99D966FED2CE8809C3AD401AED69622B073B41E7460E082AAA97A5F1B365DD7586BA3BA7961C",
    "B6468A6CBCD9CE85D3BFC405425624802042CA4C7A4458235BB9D531FA80C4985B93B6D56263F77773C50637",
    "26AB48FB1EE7D7180669225BD82F7D797B47D7598896405948B6036180AA169CB37B11E3DA92CB690348456F",
    "8FBB626E49108592C57D5041ED244AC7C420498A86ABD8458F54205D873441830E143877BFA13710811E8369",
    "6F8458CC5791338BD720FA189A2F69996B7B314EB4C7BB627B017A72076B47FCD1148E74CD990AA141C996C1",
    "303BC0A1BA12B9A75498B28A6438F3E8A5CD590F7B8BA640C84B10A6236DB646A84488212258D8F54BFAD5BE",
    "5AB2B2FE75A40675B84B4866E1295080BA5FBBD7740BFB2E07D274811BC5AD73AB43E566756A70856988DBDC",
    "3F191B259A57B721E01155E97EEF819CCCD062FC570DB05511B6537A3951281C1167617C5274B92956427B65",
    "AB0C5CF309FB99C8F605B11775DAC363EF89B7FCBDD0EABB9E641A05C656CD605ABFE56B31FE3330",
};

static void acvp_768_encapsulation_tcid_26_gives_its_c_and_k(void **state)
{
    uint8_t ek[MLKEM768_EK_LEN], m[32], ct[MLKEM768_CT_LEN], ss[32];
    char hex[2 * MLKEM768_EK_LEN + 1] = "";
    for (size_t i = 0; i < sizeof(ACVP_26_EK) / sizeof(ACVP_26_EK[0]); i++)
        strcat(hex, ACVP_26_EK[i]);
    unhex(hex, ek, sizeof(ek));
    unhex("C042B047E79F05994CB6ACFFC239AF122B893FA0329D197B1EC6BF10F4639EE7", m, 32);
    assert_true(mlkem_ek_check(MLKEM_768, ek));
    assert_true(mlkem_encaps_derand(MLKEM_768, ek, m, ct, ss));
    assert_hex_equal(ss, 32, "DA7742781F6F49930E9CC2CA44CF6813F2559B895FCFE203B7857982EDFF95DF");
    assert_sha3_256(ct, sizeof(ct),
                    "dacbbe0980ed15d158507ea0dbafe4c91009b3a7ef041527a79d61d19e0e91d2");
}

/* ---- Go's self-test and fixed seeds ---- */

static void seq(uint8_t *out, size_t len, uint8_t first)
{
    for (size_t i = 0; i < len; i++)
        out[i] = (uint8_t)(first + i);
}

static void go_cast_768_keygen_encaps_decaps_agree_on_k(void **state)
{
    uint8_t d[32], z[32], m[32], ek[MLKEM768_EK_LEN], dk[MLKEM768_DK_LEN];
    uint8_t ct[MLKEM768_CT_LEN], ke[32], kd[32];
    static const char K[] = "5501fc523b745f41762a188de44a59b920f430146204ee4e793732396df7aa48";
    seq(d, 32, 0x01);
    seq(z, 32, 0x21);
    seq(m, 32, 0x41);
    assert_true(mlkem_keygen_derand(MLKEM_768, d, z, ek, dk));
    assert_true(mlkem_encaps_derand(MLKEM_768, ek, m, ct, ke));
    assert_true(mlkem_decaps(MLKEM_768, dk, ct, kd));
    assert_hex_equal(ke, 32, K);
    assert_hex_equal(kd, 32, K);
}

struct fixed_kat {
    enum mlkem_param p;
    const char *ek_sha3, *dk_sha3, *ct_sha3, *ss, *ss_ct0_flipped;
};

/* OpenSSL 3.5.9 on d = 00..1f, z = 20..3f, m = 40..5f; the last: decaps of ct with bit 0 of
 * byte 0 flipped. */
static const struct fixed_kat FIXED[2] = {
    {MLKEM_768, "a24e16d8f8f9383a95b77050f4d9fd2f5733eec1d63ef3c23ebf9918173669a7",
     "1149f17c3c4ac6ab1e3e2d9d8bd0171355ac0fa31bb8855c48ceade874c0864b",
     "b4cfbd24cef67afd3764276c6980e0f88f8e9ca57f59b7f12fe1a9c1e72f4710",
     "9cddd089ffe70e3996e76f7c8d06746df34d07e8657bc0fcf2bb0e1c3084aea1",
     "dcfc80c6db46ff7028e3a4398651c063ae7a42c107a6dc8cb07141861698ab92"},
    {MLKEM_1024, "61349e5c131a7e116a0463861d7d18663c5627c38c7147ddaadfd48acd7a4535",
     "f0db5d938027fcd9bad87847d52c14cf0c4abcf0703b749793f212111ffb303b",
     "c1579fa02c614f3762b2a799b51e41cebb8f820f34fa736af02c56de2460ce3c",
     "0ad8d1ea1b8dd788979b4379581218df9321bdce5567eca42ae6be7d395f1a54",
     "8f2c880890996c587aa500cf8b6da03372de706a9f96075744bb0956ea6fbaac"},
};

static void run_fixed_kat(const struct fixed_kat *t)
{
    uint8_t seeds[96], ek[MLKEM_MAX_EK_LEN], dk[MLKEM_MAX_DK_LEN], ct[MLKEM_MAX_CT_LEN];
    uint8_t ss[32], ss2[32], j[32];
    size_t ek_len = mlkem_ek_len(t->p), dk_len = mlkem_dk_len(t->p), ct_len = mlkem_ct_len(t->p);
    seq(seeds, sizeof(seeds), 0);
    assert_true(mlkem_keygen_derand(t->p, seeds, seeds + 32, ek, dk));
    assert_sha3_256(ek, ek_len, t->ek_sha3);
    assert_sha3_256(dk, dk_len, t->dk_sha3);
    assert_true(mlkem_encaps_derand(t->p, ek, seeds + 64, ct, ss));
    assert_sha3_256(ct, ct_len, t->ct_sha3);
    assert_hex_equal(ss, 32, t->ss);
    assert_true(mlkem_decaps(t->p, dk, ct, ss2));
    assert_memory_equal(ss, ss2, 32);
    ct[0] ^= 1; /* implicit rejection: K-bar = J(z || c), z the last 32 bytes of dk */
    assert_true(mlkem_decaps(t->p, dk, ct, ss2));
    assert_hex_equal(ss2, 32, t->ss_ct0_flipped);
    hash("SHAKE256", dk + dk_len - 32, 32, ct, ct_len, j, sizeof(j));
    assert_memory_equal(ss2, j, 32);
}

static void fixed_seeds_768_keygen_encaps_decaps_and_rejection(void **state)
{
    run_fixed_kat(&FIXED[0]);
}

static void fixed_seeds_1024_keygen_encaps_decaps_and_rejection(void **state)
{
    run_fixed_kat(&FIXED[1]);
}

/* ---- accumulated vectors ---- */

/*
 * Go's TestAccumulated: per run, d || z, m and a random ciphertext from one SHAKE128("")
 * stream; ek, ct, K and the rejection K of the random ciphertext into another SHAKE128.
 */
static void run_accumulated(enum mlkem_param p, unsigned n, const char *want_hex)
{
    size_t ct_len = mlkem_ct_len(p), per_run = 64 + 32 + ct_len, total = per_run * n;
    uint8_t *stream = malloc(total), ek[MLKEM_MAX_EK_LEN], dk[MLKEM_MAX_DK_LEN];
    uint8_t ct[MLKEM_MAX_CT_LEN], k[32], k2[32], out[32];
    EVP_MD *shake = EVP_MD_fetch(NULL, "SHAKE128", NULL);
    EVP_MD_CTX *acc = EVP_MD_CTX_new();
    assert_non_null(stream);
    hash("SHAKE128", NULL, 0, NULL, 0, stream, total);
    assert_true(EVP_DigestInit_ex2(acc, shake, NULL));
    for (unsigned i = 0; i < n; i++) {
        const uint8_t *in = stream + per_run * i;
        assert_true(mlkem_keygen_derand(p, in, in + 32, ek, dk));
        assert_true(mlkem_encaps_derand(p, ek, in + 64, ct, k));
        assert_true(mlkem_decaps(p, dk, ct, k2));
        assert_memory_equal(k, k2, 32);
        assert_true(EVP_DigestUpdate(acc, ek, mlkem_ek_len(p)));
        assert_true(EVP_DigestUpdate(acc, ct, ct_len));
        assert_true(EVP_DigestUpdate(acc, k, 32));
        assert_true(mlkem_decaps(p, dk, in + 96, k2));
        assert_true(EVP_DigestUpdate(acc, k2, 32));
    }
    assert_true(EVP_DigestFinalXOF(acc, out, sizeof(out)));
    assert_hex_equal(out, sizeof(out), want_hex);
    EVP_MD_CTX_free(acc);
    EVP_MD_free(shake);
    free(stream);
}

static void accumulated_768_10000_runs_match_go(void **state)
{
    run_accumulated(MLKEM_768, 10000,
                    "8a518cc63da366322a8e7a818c7a0d63483cb3528d34a4cf42f35d5ad73f22fc");
}

static void accumulated_1024_10000_runs_match_openssl_3_5(void **state)
{
    run_accumulated(MLKEM_1024, 10000,
                    "f1a3925c9cf8538bb104c56efb2f5ecb74cc3df25087460b73f6c873e96bcb6a");
}

/* ---- properties ---- */

/* Writes v as the 12-bit coefficient i of ek's t-hat (ByteEncode_12, little-endian bits). */
static void set_coefficient(uint8_t *ek, size_t i, uint16_t v)
{
    uint8_t *b = ek + 3 * (i / 2);
    if (i % 2 == 0) {
        b[0] = (uint8_t)v;
        b[1] = (uint8_t)((b[1] & 0xf0) | (v >> 8));
    } else {
        b[1] = (uint8_t)((b[1] & 0x0f) | ((v & 0x0f) << 4));
        b[2] = (uint8_t)(v >> 4);
    }
}

static void ek_check_rejects_a_coefficient_of_q_or_more(void **state)
{
    for (int s = 0; s < 2; s++) {
        enum mlkem_param p = BOTH[s];
        uint8_t seeds[96], ek[MLKEM_MAX_EK_LEN], dk[MLKEM_MAX_DK_LEN], bad[MLKEM_MAX_EK_LEN];
        uint8_t ct[MLKEM_MAX_CT_LEN], ss[32], zero[MLKEM_MAX_CT_LEN] = {0};
        size_t n = 256 * (mlkem_ek_len(p) - 32) / 384; /* coefficients in t-hat */
        const size_t where[] = {0, 1, 255, 256, n - 2, n - 1};
        const uint16_t values[] = {3329, 3330, 4095};
        seq(seeds, sizeof(seeds), 7);
        assert_true(mlkem_keygen_derand(p, seeds, seeds + 32, ek, dk));
        assert_true(mlkem_ek_check(p, ek));
        for (size_t w = 0; w < sizeof(where) / sizeof(where[0]); w++) {
            memcpy(bad, ek, mlkem_ek_len(p));
            set_coefficient(bad, where[w], 3328); /* q - 1 still passes */
            assert_true(mlkem_ek_check(p, bad));
            for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
                set_coefficient(bad, where[w], values[v]);
                assert_false(mlkem_ek_check(p, bad));
                memset(ss, 0xaa, sizeof(ss));
                memset(ct, 0xaa, sizeof(ct));
                assert_false(mlkem_encaps_derand(p, bad, seeds + 64, ct, ss));
                assert_memory_equal(ss, zero, 32); /* outputs wiped */
                assert_memory_equal(ct, zero, mlkem_ct_len(p));
                assert_false(mlkem_encaps(p, bad, ct, ss));
            }
        }
    }
}

static void dk_is_dk_pke_ek_hash_of_ek_and_z(void **state)
{
    for (int s = 0; s < 2; s++) {
        enum mlkem_param p = BOTH[s];
        uint8_t seeds[64], ek[MLKEM_MAX_EK_LEN], dk[MLKEM_MAX_DK_LEN], h[32];
        size_t ek_len = mlkem_ek_len(p), pke = mlkem_dk_len(p) - ek_len - 64;
        seq(seeds, sizeof(seeds), 99);
        assert_true(mlkem_keygen_derand(p, seeds, seeds + 32, ek, dk));
        assert_int_equal(pke, ek_len - 32);
        assert_memory_equal(dk + pke, ek, ek_len);
        hash("SHA3-256", ek, ek_len, NULL, 0, h, sizeof(h));
        assert_memory_equal(dk + pke + ek_len, h, 32);
        assert_memory_equal(dk + pke + ek_len + 32, seeds + 32, 32);
    }
}

static void random_round_trips_agree_and_modified_ciphertexts_are_rejected(void **state)
{
    for (int s = 0; s < 2; s++) {
        enum mlkem_param p = BOTH[s];
        size_t ct_len = mlkem_ct_len(p), dk_len = mlkem_dk_len(p);
        for (int i = 0; i < 50; i++) {
            uint8_t ek[MLKEM_MAX_EK_LEN], dk[MLKEM_MAX_DK_LEN], ct[MLKEM_MAX_CT_LEN];
            uint8_t k1[32], k2[32], j[32];
            assert_true(mlkem_keygen(p, ek, dk));
            assert_true(mlkem_ek_check(p, ek));
            assert_true(mlkem_encaps(p, ek, ct, k1));
            assert_true(mlkem_decaps(p, dk, ct, k2));
            assert_memory_equal(k1, k2, 32);
            ct[(size_t)i * 37 % ct_len] ^= (uint8_t)(1u << (i % 8)); /* one bit, anywhere */
            assert_true(mlkem_decaps(p, dk, ct, k2));
            hash("SHAKE256", dk + dk_len - 32, 32, ct, ct_len, j, sizeof(j));
            assert_memory_equal(k2, j, 32);
            assert_memory_not_equal(k1, k2, 32);
        }
    }
}

static void lengths_and_an_unknown_parameter_set(void **state)
{
    uint8_t seed[64] = {0}, out[MLKEM_MAX_DK_LEN], ss[32];
    assert_int_equal(mlkem_ek_len(MLKEM_768), 1184);
    assert_int_equal(mlkem_dk_len(MLKEM_768), 2400);
    assert_int_equal(mlkem_ct_len(MLKEM_768), 1088);
    assert_int_equal(mlkem_ek_len(MLKEM_1024), 1568);
    assert_int_equal(mlkem_dk_len(MLKEM_1024), 3168);
    assert_int_equal(mlkem_ct_len(MLKEM_1024), 1568);
    assert_int_equal(mlkem_ek_len((enum mlkem_param)2), 0);
    assert_false(mlkem_keygen_derand((enum mlkem_param)2, seed, seed + 32, out, out));
    assert_false(mlkem_ek_check((enum mlkem_param)2, out));
    assert_false(mlkem_encaps_derand((enum mlkem_param)2, out, seed, out, ss));
    assert_false(mlkem_decaps((enum mlkem_param)-1, out, out, ss));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(acvp_768_encapsulation_tcid_26_gives_its_c_and_k),
        cmocka_unit_test(go_cast_768_keygen_encaps_decaps_agree_on_k),
        cmocka_unit_test(fixed_seeds_768_keygen_encaps_decaps_and_rejection),
        cmocka_unit_test(fixed_seeds_1024_keygen_encaps_decaps_and_rejection),
        cmocka_unit_test(accumulated_768_10000_runs_match_go),
        cmocka_unit_test(accumulated_1024_10000_runs_match_openssl_3_5),
        cmocka_unit_test(ek_check_rejects_a_coefficient_of_q_or_more),
        cmocka_unit_test(dk_is_dk_pke_ek_hash_of_ek_and_z),
        cmocka_unit_test(random_round_trips_agree_and_modified_ciphertexts_are_rejected),
        cmocka_unit_test(lengths_and_an_unknown_parameter_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
