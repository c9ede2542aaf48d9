/*
 * Known-answer tests of the TLS 1.3 key schedule and transcript
 * (src/keysched.c, on the HKDF of src/crypto.c):
 *   - RFC 8448 §3 (simple 1-RTT, X25519, TLS_AES_128_GCM_SHA256): every
 *     secret from the early secret to the ticket PSK, and both Finished;
 *   - RFC 8448 §4: the early secret and binder key from the §3 ticket PSK;
 *   - RFC 8448 §5 (HelloRetryRequest): the message_hash transcript restart
 *     and the handshake secrets after it;
 *   - RFC 9001 Appendix A: QUIC Initial secrets and packet keys, which use
 *     the same HKDF-Expand-Label with "tls13 " labels;
 *   - RFC 5869 A.1 for the HKDF itself, and SHA-384 (no published trace)
 *     against OpenSSL's own TLS13-KDF as an independent oracle.
 * The message bytes below are RFC 8448's (machine-readable copy:
 * shared/vectors/rfc8448-transcripts.vec); expected values are the RFCs'.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/core_names.h>
#include <openssl/kdf.h>

#include "internal.h"
#include "base/base.h"
#include "crypto/crypto.h"

/* ---- RFC 8448 §3 (Simple 1-RTT Handshake) ---- */

/* ClientHello (the trace's record without its 5-byte header) */
static const char S3_CLIENT_HELLO[] =
    "010000c00303cb34ecb1e78163ba1c38c6dacb196a6dffa21a8d9912ec18a2ef6283024dece70000"
    "06130113031302010000910000000b0009000006736572766572ff01000100000a00140012001d00"
    "17001800190100010101020103010400230000003300260024001d002099381de560e4bd43d23d8e"
    "435a7dbafeb3c06e51c13cae4d5413691e529aaf2c002b0003020304000d0020001e040305030603"
    "020308040805080604010501060102010402050206020202002d00020101001c00024001";

/* ServerHello */
static const char S3_SERVER_HELLO[] =
    "020000560303a6af06a4121860dc5e6e60249cd34c95930c8ac5cb1434dac155772ed3e269280013"
    "0100002e00330024001d0020c9828876112095fe66762bdbf7c672e156d6cc253b833df1dd69b1b0"
    "4e751f0f002b00020304";

/* EncryptedExtensions */
static const char S3_ENCRYPTED_EXTENSIONS[] =
    "080000240022000a00140012001d00170018001901000101010201030104001c0002400100000000";

/* Certificate */
static const char S3_CERTIFICATE[] =
    "0b0001b9000001b50001b0308201ac30820115a003020102020102300d06092a864886f70d01010b"
    "0500300e310c300a06035504031303727361301e170d3136303733303031323335395a170d323630"
    "3733303031323335395a300e310c300a0603550403130372736130819f300d06092a864886f70d01"
    "0101050003818d0030818902818100b4bb498f8279303d980836399b36c6988c0c68de55e1bdb826"
    "d3901a2461eafd2de49a91d015abbc9a95137ace6c1af19eaa6af98c7ced43120998e187a80ee0cc"
    "b0524b1b018c3e0b63264d449a6d38e22a5fda430846748030530ef0461c8ca9d9efbfae8ea6d1d0"
    "3e2bd193eff0ab9a8002c47428a6d35a8d88d79f7f1e3f0203010001a31a301830090603551d1304"
    "023000300b0603551d0f0404030205a0300d06092a864886f70d01010b05000381810085aad2a0e5"
    "b9276b908c65f73a7267170618a54c5f8a7b337d2df7a594365417f2eae8f8a58c8f8172f9319cf3"
    "6b7fd6c55b80f21a03015156726096fd335e5e67f2dbf102702e608ccae6bec1fc63a42a99be5c3e"
    "b7107c3c54e9b9eb2bd5203b1c3b84e0a8b2f759409ba3eac9d91d402dcc0cc8f8961229ac9187b4"
    "2b4de10000";

/* CertificateVerify */
static const char S3_CERTIFICATE_VERIFY[] =
    "0f000084080400805a747c5d88fa9bd2e55ab085a61015b7211f824cd484145ab3ff52f1fda8477b"
    "0b7abc90db78e2d33a5c141a078653fa6bef780c5ea248eeaaa785c4f394cab6d30bbe8d4859ee51"
    "1f602957b15411ac027671459e46445c9ea58c181e818e95b8c3fb0bf3278409d3be152a3da5043e"
    "063dda65cdf5aea20d53dfacd42f74f3";

/* server Finished */
static const char S3_SERVER_FINISHED[] =
    "140000209b9b141d906337fbd2cbdce71df4deda4ab42c309572cb7fffee5454b78f0718";

/* ---- RFC 8448 §5 (HelloRetryRequest) ---- */

/* ClientHello1 (record header stripped) */
static const char S5_CLIENT_HELLO_1[] =
    "010000b00303b0b1c5a5aa37c5919f2ed1d5c6fff7fcb7849716945a2b8cee9258a346677b6f0000"
    "06130113031302010000810000000b0009000006736572766572ff01000100000a00080006001d00"
    "170018003300260024001d0020e8e8e3f3b93a25ed97a14a7dcacb8a272c6288e585c6484d05262f"
    "cad062ad1f002b0003020304000d0020001e04030503060302030804080508060401050106010201"
    "0402050206020202002d00020101001c00024001";

/* HelloRetryRequest (record header stripped) */
static const char S5_HELLO_RETRY_REQUEST[] =
    "020000ac0303cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c0013"
    "01000084003300020017002c0074007271dcd04bb88bc3189119398a00000000eefafc76c146b823"
    "b096f8aacad365dd0030953f4edf625636e5f21bb2e23fcc654b1b5b40318d10d137abcbb87574e3"
    "6e8a1f025f7dfa5d6e50781b5eda4aa15b0c8be778257d16aa3030e9e7841dd9e4c0342267e8ca0c"
    "af571fb2b7cff0f934b0002b00020304";

/* ClientHello2 (record header stripped) */
static const char S5_CLIENT_HELLO_2[] =
    "010001fc0303b0b1c5a5aa37c5919f2ed1d5c6fff7fcb7849716945a2b8cee9258a346677b6f0000"
    "06130113031302010001cd0000000b0009000006736572766572ff01000100000a00080006001d00"
    "1700180033004700450017004104a6da7392ec591e17abfd535964b99894d13befb221b3def2ebe3"
    "830eac8f0151812677c4d6d2237e85cf01d6910cfb83954e76ba7352830534159897e8065780002b"
    "0003020304000d0020001e0403050306030203080408050806040105010601020104020502060202"
    "02002c0074007271dcd04bb88bc3189119398a00000000eefafc76c146b823b096f8aacad365dd00"
    "30953f4edf625636e5f21bb2e23fcc654b1b5b40318d10d137abcbb87574e36e8a1f025f7dfa5d6e"
    "50781b5eda4aa15b0c8be778257d16aa3030e9e7841dd9e4c0342267e8ca0caf571fb2b7cff0f934"
    "b0002d00020101001c00024001001500af0000000000000000000000000000000000000000000000"
    "00000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "00000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "00000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000";

/* ServerHello */
static const char S5_SERVER_HELLO[] =
    "020000770303bb341d847fd789c47c387172dc0c9bf147fccacb5043d86ca4c598d3ff571b980013"
    "0100004f003300450017004104583e054b7a66672ae020ad9d2686fcc85b5ad41a134a0f03ee72b8"
    "93052bd85b4c8de6776f5b04ac07d83540eab3e3d9c547bc6528c4317d294686093a6cad7d002b00"
    "020304";

/* EncryptedExtensions */
static const char S5_ENCRYPTED_EXTENSIONS[] =
    "080000180016000a0008000600170018001d001c0002400100000000";

/* Certificate */
static const char S5_CERTIFICATE[] =
    "0b0001b9000001b50001b0308201ac30820115a003020102020102300d06092a864886f70d01010b"
    "0500300e310c300a06035504031303727361301e170d3136303733303031323335395a170d323630"
    "3733303031323335395a300e310c300a0603550403130372736130819f300d06092a864886f70d01"
    "0101050003818d0030818902818100b4bb498f8279303d980836399b36c6988c0c68de55e1bdb826"
    "d3901a2461eafd2de49a91d015abbc9a95137ace6c1af19eaa6af98c7ced43120998e187a80ee0cc"
    "b0524b1b018c3e0b63264d449a6d38e22a5fda430846748030530ef0461c8ca9d9efbfae8ea6d1d0"
    "3e2bd193eff0ab9a8002c47428a6d35a8d88d79f7f1e3f0203010001a31a301830090603551d1304"
    "023000300b0603551d0f0404030205a0300d06092a864886f70d01010b05000381810085aad2a0e5"
    "b9276b908c65f73a7267170618a54c5f8a7b337d2df7a594365417f2eae8f8a58c8f8172f9319cf3"
    "6b7fd6c55b80f21a03015156726096fd335e5e67f2dbf102702e608ccae6bec1fc63a42a99be5c3e"
    "b7107c3c54e9b9eb2bd5203b1c3b84e0a8b2f759409ba3eac9d91d402dcc0cc8f8961229ac9187b4"
    "2b4de10000";

/* CertificateVerify */
static const char S5_CERTIFICATE_VERIFY[] =
    "0f0000840804008033ab13d4462707231b5dcae6c8190b63d1dabc74f28c395370da0b07e5b83066"
    "d0246a31acd95df475bfd799a4a70d33ad93d3a317a9b2c0d237a5685b219e774112e391a247607d"
    "1aeff1bbd0a39f382ee1a5fe88ae99ec59228e6497e45d48ce275a6d5ef40d169fb6f9d33b052ed3"
    "dcdd6b5a48baafffbcb290128415bd38";

/* server Finished */
static const char S5_SERVER_FINISHED[] =
    "140000208863e6bfb0420a927fa27f34336a70ae426e968e3eb884945b96856dba3976d1";

/* ---- helpers ---- */

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = strlen(hex);
    assert_int_equal(n % 2, 0);
    assert_true(n / 2 <= cap);
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
    return n / 2;
}

static void tohex(const uint8_t *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
    out[2 * n] = '\0';
}

/* Compares got with the expected hex and names the value on a mismatch. */
static void check_hex(const char *what, const uint8_t *got, size_t got_len, const char *hex)
{
    uint8_t want[1024];
    char got_hex[2 * sizeof(want) + 1];
    size_t want_len = unhex(hex, want, sizeof(want));
    assert_true(got_len <= sizeof(want));
    if (got_len != want_len || memcmp(got, want, want_len) != 0) {
        tohex(got, got_len, got_hex);
        fail_msg("%s mismatch:\n  got      %s\n  expected %s", what, got_hex, hex);
    }
}

static void check_secret(const char *what, const struct secret *s, const char *hex)
{
    check_hex(what, s->b, s->len, hex);
}

/* Adds a hex-encoded message to the transcript. */
static void add_msg(struct transcript *t, const char *hex)
{
    uint8_t buf[1024];
    size_t n = unhex(hex, buf, sizeof(buf));
    assert_true(transcript_add(t, buf, n));
}

/*
 * Transcript-Hash(msgs[0..n)) with SHA-256. The hash is chosen after the
 * first message, as a client does once ServerHello names the suite, so the
 * buffered path is exercised on every use.
 */
static void thash_sha256(const char *const *msgs, size_t n, uint8_t *out)
{
    struct transcript t;
    transcript_init(&t);
    for (size_t i = 0; i < n; i++) {
        add_msg(&t, msgs[i]);
        if (i == 0)
            assert_true(transcript_set_hash(&t, QTLS_SHA256));
    }
    assert_true(transcript_hash(&t, out));
    transcript_free(&t);
}

static void sha256(const uint8_t *p, size_t n, uint8_t *out)
{
    assert_true(crypto_digest(QTLS_SHA256, p, n, out));
}

static void secret_from_hex(struct secret *s, const char *hex)
{
    uint8_t buf[EVP_MAX_MD_SIZE];
    size_t n = unhex(hex, buf, sizeof(buf));
    secret_set(s, buf, n);
}

/* ---- RFC 8448 §3 ---- */

#define S3_ECDHE "8bd4054fb55b9d63fdfbacf9f04b9f0d35e6d63f537563efd46272900f89492d"
#define S3_EARLY "33ad0a1c607ec03b09e6cd9893680ce210adf300aa1f2660e1b22e10f170f92a"
#define S3_DERIVED_HS "6f2615a108c702c5678f54fc9dbab69716c076189c48250cebeac3576c3611ba"
#define S3_HS "1dc826e93606aa6fdc0aadc12f741b01046aa6b99f691ed221a9f0ca043fbeac"
#define S3_C_HS "b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21"
#define S3_S_HS "b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38"
#define S3_DERIVED_MS "43de77e0c77713859a944db9db2590b53190a65b3ee2e4f12dd7a0bb7ce254b4"
#define S3_MS "18df06843d13a08bf2a449844c5f8a478001bc4d4c627984d5a41da8d0402919"
#define S3_C_AP "9e40646ce79a7f9dc05af8889bce6552875afa0b06df0087f792ebb7c17504a5"
#define S3_S_AP "a11af9f05531f856ad47116b45a950328204b4f44bfb6b3a4b4f1f3fcb631643"
#define S3_EXPORTER "fe22f881176eda18eb8f44529e6792c50c9a3f89452f68d8ae311b4309d3cf50"
#define S3_S_FINISHED "9b9b141d906337fbd2cbdce71df4deda4ab42c309572cb7fffee5454b78f0718"
#define S3_C_FINISHED "a8ec436d677634ae525ac1fcebe11a039ec17694fac6e98527b642f2edd5ce61"
#define S3_RES_MASTER "7df235f2031d2a051287d02b0241b0bfdaf86cc856231f2d5aba46c434ec196c"
#define S3_TICKET_PSK "4ecd0eb6ec3b4d87f5d6028f922ca4c5851a277fd41311c9e62d2c9492e1c4f3"

static const char *const s3_through_sh[] = {S3_CLIENT_HELLO, S3_SERVER_HELLO};
static const char *const s3_through_cv[] = {S3_CLIENT_HELLO, S3_SERVER_HELLO,
                                            S3_ENCRYPTED_EXTENSIONS, S3_CERTIFICATE,
                                            S3_CERTIFICATE_VERIFY};
static const char *const s3_through_sfin[] = {S3_CLIENT_HELLO,         S3_SERVER_HELLO,
                                              S3_ENCRYPTED_EXTENSIONS, S3_CERTIFICATE,
                                              S3_CERTIFICATE_VERIFY,   S3_SERVER_FINISHED};
/* The client Finished message: type 20, length 32, the RFC's verify_data. */
static const char *const s3_through_cfin[] = {
    S3_CLIENT_HELLO,       S3_SERVER_HELLO,    S3_ENCRYPTED_EXTENSIONS, S3_CERTIFICATE,
    S3_CERTIFICATE_VERIFY, S3_SERVER_FINISHED, "14000020" S3_C_FINISHED};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void s3_handshake_secret(struct secret *hs)
{
    struct secret early;
    uint8_t ecdhe[32];
    unhex(S3_ECDHE, ecdhe, sizeof(ecdhe));
    assert_true(ks_early_secret(QTLS_SHA256, NULL, 0, &early));
    assert_true(ks_next_stage(QTLS_SHA256, &early, ecdhe, sizeof(ecdhe), hs));
    secret_wipe(&early);
}

static void s3_master_secret(struct secret *ms)
{
    struct secret hs;
    s3_handshake_secret(&hs);
    assert_true(ks_next_stage(QTLS_SHA256, &hs, NULL, 0, ms));
}

/* The once-computed zero-PSK stage gives RFC 8448's handshake secret, and SHA-384 agrees too. */
static void test_handshake_secret_without_psk_matches_the_two_step_schedule(void **state)
{
    (void)state;
    struct secret hs, early, want;
    uint8_t ecdhe[48];
    unhex(S3_ECDHE, ecdhe, 32);
    for (int i = 0; i < 2; i++) { /* the second call uses the stored constant */
        assert_true(ks_handshake_secret_without_psk(QTLS_SHA256, ecdhe, 32, &hs));
        check_secret("handshake secret", &hs, S3_HS);
    }
    for (size_t i = 0; i < sizeof(ecdhe); i++)
        ecdhe[i] = (uint8_t)(0x5a ^ i);
    assert_true(ks_early_secret(QTLS_SHA384, NULL, 0, &early));
    assert_true(ks_next_stage(QTLS_SHA384, &early, ecdhe, sizeof(ecdhe), &want));
    assert_true(ks_handshake_secret_without_psk(QTLS_SHA384, ecdhe, sizeof(ecdhe), &hs));
    assert_int_equal(hs.len, 48);
    assert_memory_equal(hs.b, want.b, 48);
}

static void test_rfc8448_s3_early_secret_without_psk(void **state)
{
    (void)state;
    struct secret early;
    assert_true(ks_early_secret(QTLS_SHA256, NULL, 0, &early));
    check_secret("early secret", &early, S3_EARLY);
}

static void test_rfc8448_s3_derived_secret_before_handshake_stage(void **state)
{
    (void)state;
    struct secret early, derived;
    uint8_t empty[32];
    sha256(NULL, 0, empty);
    secret_from_hex(&early, S3_EARLY);
    assert_true(ks_derive_secret(QTLS_SHA256, &early, "derived", empty, &derived));
    check_secret("derived (early -> handshake)", &derived, S3_DERIVED_HS);
}

static void test_rfc8448_s3_handshake_secret_from_x25519_shared_secret(void **state)
{
    (void)state;
    struct secret hs;
    s3_handshake_secret(&hs);
    check_secret("handshake secret", &hs, S3_HS);
}

static void test_rfc8448_s3_handshake_traffic_secrets_cover_ch_sh(void **state)
{
    (void)state;
    struct secret hs, c, s;
    uint8_t th[32];
    s3_handshake_secret(&hs);
    thash_sha256(s3_through_sh, COUNT(s3_through_sh), th);
    assert_true(ks_derive_secret(QTLS_SHA256, &hs, "c hs traffic", th, &c));
    assert_true(ks_derive_secret(QTLS_SHA256, &hs, "s hs traffic", th, &s));
    check_secret("client_handshake_traffic_secret", &c, S3_C_HS);
    check_secret("server_handshake_traffic_secret", &s, S3_S_HS);
}

static void test_rfc8448_s3_server_finished_matches_trace(void **state)
{
    (void)state;
    struct secret s;
    uint8_t th[32], verify[32], msg[36];
    secret_from_hex(&s, S3_S_HS);
    thash_sha256(s3_through_cv, COUNT(s3_through_cv), th);
    assert_true(ks_finished(QTLS_SHA256, &s, th, verify));
    check_hex("server Finished verify_data", verify, 32, S3_S_FINISHED);
    /* ... and the trace's Finished message carries exactly it. */
    assert_int_equal(unhex(S3_SERVER_FINISHED, msg, sizeof(msg)), 36);
    assert_memory_equal(msg + 4, verify, 32);
}

static void test_rfc8448_s3_client_finished_verify_data(void **state)
{
    (void)state;
    struct secret c;
    uint8_t th[32], verify[32];
    secret_from_hex(&c, S3_C_HS);
    thash_sha256(s3_through_sfin, COUNT(s3_through_sfin), th);
    assert_true(ks_finished(QTLS_SHA256, &c, th, verify));
    check_hex("client Finished verify_data", verify, 32, S3_C_FINISHED);
}

static void test_rfc8448_s3_derived_secret_before_master_stage(void **state)
{
    (void)state;
    struct secret hs, derived;
    uint8_t empty[32];
    sha256(NULL, 0, empty);
    secret_from_hex(&hs, S3_HS);
    assert_true(ks_derive_secret(QTLS_SHA256, &hs, "derived", empty, &derived));
    check_secret("derived (handshake -> master)", &derived, S3_DERIVED_MS);
}

static void test_rfc8448_s3_master_secret(void **state)
{
    (void)state;
    struct secret ms;
    s3_master_secret(&ms);
    check_secret("master secret", &ms, S3_MS);
}

static void
test_rfc8448_s3_application_and_exporter_secrets_cover_through_server_finished(void **state)
{
    (void)state;
    struct secret ms, c, s, exp;
    uint8_t th[32];
    secret_from_hex(&ms, S3_MS);
    thash_sha256(s3_through_sfin, COUNT(s3_through_sfin), th);
    assert_true(ks_derive_secret(QTLS_SHA256, &ms, "c ap traffic", th, &c));
    assert_true(ks_derive_secret(QTLS_SHA256, &ms, "s ap traffic", th, &s));
    assert_true(ks_derive_secret(QTLS_SHA256, &ms, "exp master", th, &exp));
    check_secret("client_application_traffic_secret_0", &c, S3_C_AP);
    check_secret("server_application_traffic_secret_0", &s, S3_S_AP);
    check_secret("exporter_master_secret", &exp, S3_EXPORTER);
}

static void test_rfc8448_s3_resumption_master_secret_covers_client_finished(void **state)
{
    (void)state;
    struct secret ms, res;
    uint8_t th[32];
    secret_from_hex(&ms, S3_MS);
    thash_sha256(s3_through_cfin, COUNT(s3_through_cfin), th);
    assert_true(ks_derive_secret(QTLS_SHA256, &ms, "res master", th, &res));
    check_secret("resumption_master_secret", &res, S3_RES_MASTER);
}

static void test_rfc8448_s3_ticket_psk_from_nonce_0000(void **state)
{
    (void)state;
    static const uint8_t nonce[2] = {0x00, 0x00};
    struct secret res;
    uint8_t psk[32];
    secret_from_hex(&res, S3_RES_MASTER);
    assert_true(ks_expand_label(QTLS_SHA256, &res, "resumption", nonce, sizeof(nonce), psk, 32));
    check_hex("ticket PSK", psk, 32, S3_TICKET_PSK);
}

/* The whole chain in one go, as the handshake runs it: one transcript, hashed as it grows. */
static void test_rfc8448_s3_whole_schedule_on_one_running_transcript(void **state)
{
    (void)state;
    struct transcript t;
    struct secret early, hs, c_hs, s_hs, ms, c_ap, s_ap, res;
    uint8_t th[32], ecdhe[32], fin[32];
    unhex(S3_ECDHE, ecdhe, sizeof(ecdhe));

    transcript_init(&t);
    add_msg(&t, S3_CLIENT_HELLO);
    add_msg(&t, S3_SERVER_HELLO);
    assert_true(transcript_set_hash(&t, QTLS_SHA256));
    assert_true(transcript_set_hash(&t, QTLS_SHA256)); /* setting it again is harmless */
    assert_true(ks_early_secret(QTLS_SHA256, NULL, 0, &early));
    assert_true(ks_next_stage(QTLS_SHA256, &early, ecdhe, 32, &hs));
    assert_true(transcript_hash(&t, th));
    assert_true(ks_derive_secret(QTLS_SHA256, &hs, "c hs traffic", th, &c_hs));
    assert_true(ks_derive_secret(QTLS_SHA256, &hs, "s hs traffic", th, &s_hs));
    check_secret("client_handshake_traffic_secret", &c_hs, S3_C_HS);
    check_secret("server_handshake_traffic_secret", &s_hs, S3_S_HS);

    add_msg(&t, S3_ENCRYPTED_EXTENSIONS);
    add_msg(&t, S3_CERTIFICATE);
    add_msg(&t, S3_CERTIFICATE_VERIFY);
    assert_true(transcript_hash(&t, th));
    assert_true(ks_finished(QTLS_SHA256, &s_hs, th, fin));
    check_hex("server Finished verify_data", fin, 32, S3_S_FINISHED);

    add_msg(&t, S3_SERVER_FINISHED);
    assert_true(transcript_hash(&t, th));
    assert_true(ks_next_stage(QTLS_SHA256, &hs, NULL, 0, &ms));
    assert_true(ks_derive_secret(QTLS_SHA256, &ms, "c ap traffic", th, &c_ap));
    assert_true(ks_derive_secret(QTLS_SHA256, &ms, "s ap traffic", th, &s_ap));
    assert_true(ks_finished(QTLS_SHA256, &c_hs, th, fin));
    check_secret("client_application_traffic_secret_0", &c_ap, S3_C_AP);
    check_secret("server_application_traffic_secret_0", &s_ap, S3_S_AP);
    check_hex("client Finished verify_data", fin, 32, S3_C_FINISHED);

    static const uint8_t fin_hdr[4] = {HT_FINISHED, 0, 0, 32};
    assert_true(transcript_add(&t, fin_hdr, 4));
    assert_true(transcript_add(&t, fin, 32));
    assert_true(transcript_hash(&t, th));
    assert_true(ks_derive_secret(QTLS_SHA256, &ms, "res master", th, &res));
    check_secret("resumption_master_secret", &res, S3_RES_MASTER);
    transcript_free(&t);
}

/* Choosing the hash before, between or after messages gives the same running hash. */
static void test_transcript_hash_is_independent_of_when_the_hash_is_set(void **state)
{
    (void)state;
    uint8_t all[1024], want[32];
    size_t n = 0;
    for (size_t i = 0; i < COUNT(s3_through_cv); i++)
        n += unhex(s3_through_cv[i], all + n, sizeof(all) - n);
    sha256(all, n, want);

    for (size_t set_at = 0; set_at <= COUNT(s3_through_cv); set_at++) {
        struct transcript t;
        uint8_t got[32];
        transcript_init(&t);
        for (size_t i = 0; i < COUNT(s3_through_cv); i++) {
            if (i == set_at)
                assert_true(transcript_set_hash(&t, QTLS_SHA256));
            add_msg(&t, s3_through_cv[i]);
            /* Taking an intermediate hash does not disturb the running one. */
            if (i >= set_at)
                assert_true(transcript_hash(&t, got));
        }
        if (set_at == COUNT(s3_through_cv))
            assert_true(transcript_set_hash(&t, QTLS_SHA256));
        assert_true(transcript_hash(&t, got));
        assert_memory_equal(got, want, 32);
        transcript_free(&t);
    }
}

static void test_transcript_refuses_to_change_its_hash(void **state)
{
    (void)state;
    struct transcript t;
    transcript_init(&t);
    add_msg(&t, S3_CLIENT_HELLO);
    assert_true(transcript_set_hash(&t, QTLS_SHA256));
    assert_false(transcript_set_hash(&t, QTLS_SHA384));
    transcript_free(&t);
    ERR_clear_error();
}

/* ---- RFC 8448 §4: the §3 ticket PSK as the early secret's input ---- */

static void test_rfc8448_s4_early_secret_and_binder_key_from_ticket_psk(void **state)
{
    (void)state;
    struct secret early, binder;
    uint8_t psk[32], empty[32];
    unhex(S3_TICKET_PSK, psk, sizeof(psk));
    sha256(NULL, 0, empty);
    assert_true(ks_early_secret(QTLS_SHA256, psk, sizeof(psk), &early));
    check_secret("early secret (PSK)", &early,
                 "9b2188e9b2fc6d64d71dc329900e20bb41915000f678aa839cbb797cb7d8332c");
    assert_true(ks_derive_secret(QTLS_SHA256, &early, "res binder", empty, &binder));
    check_secret("binder_key", &binder,
                 "69fe131a3bbad5d63c64eebcc30e395b9d8107726a13d074e389dbc8a4e47256");
}

/* ---- RFC 8448 §5: HelloRetryRequest ---- */

#define S5_ECDHE "c142ce13ca11b5c2233652e63ad3d97844f1621fbfb9de69d547dc8fedeabeb4"
#define S5_HS "ce022e5e6e81e50736d773f2d3adfce8220d049bf510f0dbfac927ef4243b148"
#define S5_C_HS "158aa7ab8855073582b41d674b4055cabcc534728f659314861b4e08e2011566"
#define S5_S_HS "3403e781e2af7b6508da28574f6e95a1abf162de83a97927c37672a4a0cef8a1"

/* CH1 → (suite known from HRR) → message_hash(CH1) ‖ HRR ‖ CH2 ‖ SH. */
static void s5_transcript_through_sh(struct transcript *t)
{
    transcript_init(t);
    add_msg(t, S5_CLIENT_HELLO_1);
    assert_true(transcript_set_hash(t, QTLS_SHA256));
    assert_true(transcript_hrr_restart(t));
    add_msg(t, S5_HELLO_RETRY_REQUEST);
    add_msg(t, S5_CLIENT_HELLO_2);
    add_msg(t, S5_SERVER_HELLO);
}

static void test_rfc8448_s5_hrr_restart_replaces_ch1_with_message_hash(void **state)
{
    (void)state;
    struct transcript t;
    uint8_t ch1[512], mh[4 + 32], want[32], got[32];
    size_t n = unhex(S5_CLIENT_HELLO_1, ch1, sizeof(ch1));
    /* RFC 8446 §4.4.1: message_hash (254), 00 00 Hash.length, Hash(ClientHello1). */
    mh[0] = 254;
    mh[1] = 0;
    mh[2] = 0;
    mh[3] = 32;
    sha256(ch1, n, mh + 4);
    sha256(mh, sizeof(mh), want);

    transcript_init(&t);
    assert_true(transcript_add(&t, ch1, n));
    assert_true(transcript_set_hash(&t, QTLS_SHA256));
    assert_true(transcript_hrr_restart(&t));
    assert_true(transcript_hash(&t, got));
    assert_memory_equal(got, want, 32);
    transcript_free(&t);

    /* The same when the hash was chosen before ClientHello1 (server side). */
    transcript_init(&t);
    assert_true(transcript_set_hash(&t, QTLS_SHA256));
    assert_true(transcript_add(&t, ch1, n));
    assert_true(transcript_hrr_restart(&t));
    assert_true(transcript_hash(&t, got));
    assert_memory_equal(got, want, 32);
    transcript_free(&t);
}

static void test_rfc8448_s5_handshake_secrets_after_hrr(void **state)
{
    (void)state;
    struct transcript t;
    struct secret early, hs, c, s;
    uint8_t ecdhe[32], th[32];
    unhex(S5_ECDHE, ecdhe, sizeof(ecdhe));
    assert_true(ks_early_secret(QTLS_SHA256, NULL, 0, &early));
    assert_true(ks_next_stage(QTLS_SHA256, &early, ecdhe, sizeof(ecdhe), &hs));
    check_secret("handshake secret (HRR, P-256)", &hs, S5_HS);

    s5_transcript_through_sh(&t);
    assert_true(transcript_hash(&t, th));
    assert_true(ks_derive_secret(QTLS_SHA256, &hs, "c hs traffic", th, &c));
    assert_true(ks_derive_secret(QTLS_SHA256, &hs, "s hs traffic", th, &s));
    check_secret("client_handshake_traffic_secret (HRR)", &c, S5_C_HS);
    check_secret("server_handshake_traffic_secret (HRR)", &s, S5_S_HS);
    transcript_free(&t);
}

static void test_rfc8448_s5_server_finished_matches_trace_after_hrr(void **state)
{
    (void)state;
    struct transcript t;
    struct secret s;
    uint8_t th[32], verify[32], msg[36];
    secret_from_hex(&s, S5_S_HS);
    s5_transcript_through_sh(&t);
    add_msg(&t, S5_ENCRYPTED_EXTENSIONS);
    add_msg(&t, S5_CERTIFICATE);
    add_msg(&t, S5_CERTIFICATE_VERIFY);
    assert_true(transcript_hash(&t, th));
    assert_true(ks_finished(QTLS_SHA256, &s, th, verify));
    assert_int_equal(unhex(S5_SERVER_FINISHED, msg, sizeof(msg)), 36);
    check_hex("server Finished verify_data (HRR)", verify, 32,
              "8863e6bfb0420a927fa27f34336a70ae426e968e3eb884945b96856dba3976d1");
    assert_memory_equal(msg + 4, verify, 32);
    transcript_free(&t);
}

/* ---- RFC 9001 Appendix A ---- */

#define QUIC_V1_SALT "38762cf7f55934b34d179ae6a4c80cadccbb7f0a"
#define A1_DCID "8394c8f03e515708"
#define A1_INITIAL "7db5df06e7a69e432496adedb00851923595221596ae2ae9fb8115c1e9ed0a44"
#define A1_CLIENT_IN "c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea"
#define A1_SERVER_IN "3c199828fd139efd216c155ad844cc81fb82fa8d7446fa7d78be803acdda951b"

static void test_rfc9001_a1_initial_secrets_from_dcid(void **state)
{
    (void)state;
    uint8_t salt[20], dcid[8], out[32];
    struct secret initial;
    unhex(QUIC_V1_SALT, salt, sizeof(salt));
    unhex(A1_DCID, dcid, sizeof(dcid));
    assert_true(crypto_hkdf_extract(QTLS_SHA256, salt, sizeof(salt), dcid, sizeof(dcid), out));
    check_hex("initial_secret", out, 32, A1_INITIAL);
    secret_set(&initial, out, 32);
    assert_true(ks_expand_label(QTLS_SHA256, &initial, "client in", NULL, 0, out, 32));
    check_hex("client_initial_secret", out, 32, A1_CLIENT_IN);
    assert_true(ks_expand_label(QTLS_SHA256, &initial, "server in", NULL, 0, out, 32));
    check_hex("server_initial_secret", out, 32, A1_SERVER_IN);
}

static void check_packet_keys(const char *side, const char *secret_hex, enum qtls_hash h,
                              size_t key_len, const char *key, const char *iv, const char *hp)
{
    struct secret s;
    uint8_t out[32];
    char what[64];
    secret_from_hex(&s, secret_hex);
    assert_true(ks_expand_label(h, &s, "quic key", NULL, 0, out, key_len));
    snprintf(what, sizeof(what), "%s quic key", side);
    check_hex(what, out, key_len, key);
    assert_true(ks_expand_label(h, &s, "quic iv", NULL, 0, out, 12));
    snprintf(what, sizeof(what), "%s quic iv", side);
    check_hex(what, out, 12, iv);
    assert_true(ks_expand_label(h, &s, "quic hp", NULL, 0, out, key_len));
    snprintf(what, sizeof(what), "%s quic hp", side);
    check_hex(what, out, key_len, hp);
}

static void test_rfc9001_a1_client_and_server_initial_packet_keys(void **state)
{
    (void)state;
    check_packet_keys("client", A1_CLIENT_IN, QTLS_SHA256, 16, "1f369613dd76d5467730efcbe3b1a22d",
                      "fa044b2f42a3fd3b46fb255c", "9f50449e04a0e810283a1e9933adedd2");
    check_packet_keys("server", A1_SERVER_IN, QTLS_SHA256, 16, "cf3a5331653c364c88f0f379b6067e37",
                      "0ac1493ca1905853b0bba03e", "c206b8d9b9f0f37644430b490eeaa314");
}

/* The HkdfLabel bytes RFC 9001 A.1 prints, fed to plain HKDF-Expand, give the same output. */
static void test_rfc9001_a1_hkdf_labels_encode_as_printed(void **state)
{
    (void)state;
    static const struct {
        const char *label, *info;
        size_t len;
    } labels[] = {
        {"client in", "00200f746c73313320636c69656e7420696e00", 32},
        {"server in", "00200f746c7331332073657276657220696e00", 32},
        {"quic key", "00100e746c7331332071756963206b657900", 16},
        {"quic iv", "000c0d746c733133207175696320697600", 12},
        {"quic hp", "00100d746c733133207175696320687000", 16},
    };
    struct secret s;
    secret_from_hex(&s, A1_INITIAL);
    for (size_t i = 0; i < COUNT(labels); i++) {
        uint8_t info[64], want[32], got[32];
        size_t n = unhex(labels[i].info, info, sizeof(info));
        assert_true(crypto_hkdf_expand(QTLS_SHA256, s.b, s.len, info, n, want, labels[i].len));
        assert_true(ks_expand_label(QTLS_SHA256, &s, labels[i].label, NULL, 0, got, labels[i].len));
        if (memcmp(got, want, labels[i].len) != 0)
            fail_msg("HkdfLabel for \"%s\" is not encoded as RFC 9001 A.1 prints it",
                     labels[i].label);
    }
}

/* A.5: a ChaCha20-Poly1305 1-RTT secret: 32-byte key and hp, and the key update ("quic ku"). */
static void test_rfc9001_a5_chacha20_packet_keys_and_key_update(void **state)
{
    (void)state;
    static const char secret[] = "9ac312a7f877468ebe69422748ad00a15443f18203a07d6060f688f30f21632b";
    struct secret s;
    uint8_t ku[32];
    check_packet_keys("chacha20", secret, QTLS_SHA256, 32,
                      "c6d98ff3441c3fe1b2182094f69caa2ed4b716b65488960a7a984979fb23e1c8",
                      "e0459b3474bdd0e44a41c144",
                      "25a282b9e82f06f21f488917a4fc8f1b73573685608597d0efcb076b0ab7a7a4");
    secret_from_hex(&s, secret);
    assert_true(ks_expand_label(QTLS_SHA256, &s, "quic ku", NULL, 0, ku, 32));
    check_hex("quic ku", ku, 32,
              "1223504755036d556342ee9361d253421a826c9ecdf3c7148684b36b714881f9");
}

/* ---- HKDF and SHA-384 ---- */

/* RFC 5869 A.1: HKDF-SHA256 with an output longer than one block. */
static void test_rfc5869_a1_hkdf_sha256(void **state)
{
    (void)state;
    uint8_t ikm[22], salt[13], info[10], prk[32], okm[42];
    memset(ikm, 0x0b, sizeof(ikm));
    for (size_t i = 0; i < sizeof(salt); i++)
        salt[i] = (uint8_t)i;
    for (size_t i = 0; i < sizeof(info); i++)
        info[i] = (uint8_t)(0xf0 + i);
    assert_true(crypto_hkdf_extract(QTLS_SHA256, salt, sizeof(salt), ikm, sizeof(ikm), prk));
    check_hex("HKDF PRK", prk, 32,
              "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5");
    assert_true(crypto_hkdf_expand(QTLS_SHA256, prk, 32, info, sizeof(info), okm, sizeof(okm)));
    check_hex(
        "HKDF OKM", okm, sizeof(okm),
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
}

/* OpenSSL's TLS13-KDF (what libssl uses) as an oracle where no trace exists. */
static void oracle_tls13_kdf(int mode, const char *digest, const uint8_t *key, size_t key_len,
                             const uint8_t *salt, size_t salt_len, const char *label,
                             const uint8_t *data, size_t data_len, uint8_t *out, size_t out_len)
{
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "TLS13-KDF", NULL);
    assert_non_null(kdf);
    EVP_KDF_CTX *kctx = EVP_KDF_CTX_new(kdf);
    assert_non_null(kctx);
    OSSL_PARAM params[8], *p = params;
    *p++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
    *p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)digest, 0);
    if (key != NULL)
        *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, key_len);
    if (salt != NULL)
        *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, salt_len);
    *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PREFIX, "tls13 ", 6);
    if (label != NULL)
        *p++ =
            OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_LABEL, (void *)label, strlen(label));
    if (data != NULL)
        *p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_DATA, (void *)data, data_len);
    *p = OSSL_PARAM_construct_end();
    assert_int_equal(EVP_KDF_derive(kctx, out, out_len, params), 1);
    EVP_KDF_CTX_free(kctx);
    EVP_KDF_free(kdf);
}

static void check_same(const char *what, const uint8_t *got, const uint8_t *want, size_t n)
{
    char want_hex[2 * 256 + 1];
    assert_true(n <= 256);
    tohex(want, n, want_hex);
    check_hex(what, got, n, want_hex);
}

static void test_sha384_schedule_agrees_with_openssl_tls13_kdf(void **state)
{
    (void)state;
    const int extract = EVP_KDF_HKDF_MODE_EXTRACT_ONLY, expand = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
    uint8_t ecdhe[48], th[48], want[48];
    struct secret early, hs, ms, c_hs;
    for (size_t i = 0; i < sizeof(ecdhe); i++)
        ecdhe[i] = (uint8_t)(0xa0 ^ i);
    assert_true(crypto_digest(QTLS_SHA384, (const uint8_t *)"transcript", 10, th));

    assert_true(ks_early_secret(QTLS_SHA384, NULL, 0, &early));
    oracle_tls13_kdf(extract, "SHA384", NULL, 0, NULL, 0, NULL, NULL, 0, want, 48);
    assert_int_equal(early.len, 48);
    check_same("SHA-384 early secret", early.b, want, 48);

    assert_true(ks_next_stage(QTLS_SHA384, &early, ecdhe, sizeof(ecdhe), &hs));
    /* OpenSSL's extract step derives the salt itself from the previous secret and the label. */
    oracle_tls13_kdf(extract, "SHA384", ecdhe, sizeof(ecdhe), early.b, 48, "derived", NULL, 0, want,
                     48);
    assert_int_equal(hs.len, 48);
    check_same("SHA-384 handshake secret", hs.b, want, 48);

    assert_true(ks_next_stage(QTLS_SHA384, &hs, NULL, 0, &ms));
    oracle_tls13_kdf(extract, "SHA384", NULL, 0, hs.b, 48, "derived", NULL, 0, want, 48);
    assert_int_equal(ms.len, 48);
    check_same("SHA-384 master secret", ms.b, want, 48);

    assert_true(ks_derive_secret(QTLS_SHA384, &hs, "c hs traffic", th, &c_hs));
    oracle_tls13_kdf(expand, "SHA384", hs.b, 48, NULL, 0, "c hs traffic", th, 48, want, 48);
    assert_int_equal(c_hs.len, 48);
    check_same("SHA-384 client_handshake_traffic_secret", c_hs.b, want, 48);

    /* Finished: HMAC-SHA384(HKDF-Expand-Label(base, "finished", "", 48), transcript hash). */
    uint8_t fkey[48], verify[48];
    size_t mac_len = 0;
    oracle_tls13_kdf(expand, "SHA384", c_hs.b, 48, NULL, 0, "finished", NULL, 0, fkey, 48);
    assert_non_null(
        EVP_Q_mac(NULL, "HMAC", NULL, "SHA384", NULL, fkey, 48, th, 48, want, 48, &mac_len));
    assert_int_equal(mac_len, 48);
    assert_true(ks_finished(QTLS_SHA384, &c_hs, th, verify));
    check_same("SHA-384 Finished verify_data", verify, want, 48);
}

/* Expand-Label at every output length up to several hash blocks, both hashes. */
static void test_expand_label_agrees_with_openssl_at_every_length(void **state)
{
    (void)state;
    static const char *const md[QTLS_HASH_COUNT] = {"SHA256", "SHA384"};
    uint8_t ctx[40];
    for (size_t i = 0; i < sizeof(ctx); i++)
        ctx[i] = (uint8_t)(i * 3);
    for (int h = 0; h < QTLS_HASH_COUNT; h++) {
        struct secret s;
        size_t hl = crypto_hash_len((enum qtls_hash)h);
        for (size_t i = 0; i < hl; i++)
            s.b[i] = (uint8_t)(0x55 + i);
        s.len = hl;
        for (size_t len = 1; len <= 200; len++) {
            uint8_t got[200], want[200];
            char what[64];
            size_t ctx_len = len % (sizeof(ctx) + 1);
            assert_true(ks_expand_label((enum qtls_hash)h, &s, "quic key", ctx, ctx_len, got, len));
            oracle_tls13_kdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, md[h], s.b, hl, NULL, 0, "quic key",
                             ctx_len ? ctx : NULL, ctx_len, want, len);
            snprintf(what, sizeof(what), "%s expand_label length %zu", md[h], len);
            check_same(what, got, want, len);
        }
    }
}

/* HkdfLabel's label is <7..255> including "tls13 " and its context <0..255>. */
static void test_expand_label_n_limits_label_and_context(void **state)
{
    (void)state;
    uint8_t label[255], ctx[256], out[32], want[32];
    struct secret s;
    memset(label, 'x', sizeof(label));
    memset(ctx, 0xcc, sizeof(ctx));
    secret_from_hex(&s, S3_MS);

    assert_true(ks_expand_label_n(QTLS_SHA256, &s, label, 249, ctx, 255, out, 32));
    /* The longest label and context go through unchanged. */
    char lbl[250];
    memset(lbl, 'x', 249);
    lbl[249] = '\0';
    oracle_tls13_kdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, "SHA256", s.b, 32, NULL, 0, lbl, ctx, 255, want,
                     32);
    check_same("expand_label with a 249-byte label", out, want, 32);

    assert_false(ks_expand_label_n(QTLS_SHA256, &s, label, 250, NULL, 0, out, 32));
    assert_false(ks_expand_label_n(QTLS_SHA256, &s, label, 1, ctx, 256, out, 32));
    ERR_clear_error();

    /* Exporter labels are arbitrary bytes, NUL included. */
    static const uint8_t odd[] = {'a', 0x00, 'b'};
    assert_true(ks_expand_label_n(QTLS_SHA256, &s, odd, sizeof(odd), NULL, 0, out, 32));
    uint8_t info[2 + 1 + 9 + 1] = {0x00, 0x20, 9,   't',  'l', 's', '1',
                                   '3',  ' ',  'a', 0x00, 'b', 0x00};
    assert_true(crypto_hkdf_expand(QTLS_SHA256, s.b, 32, info, sizeof(info), want, 32));
    check_same("expand_label_n with a label containing NUL", out, want, 32);
}

static void test_secret_wipe_clears_bytes_and_length(void **state)
{
    (void)state;
    static const uint8_t zero[sizeof(((struct secret *)0)->b)];
    struct secret s;
    secret_from_hex(&s, S3_MS);
    assert_int_equal(s.len, 32);
    secret_wipe(&s);
    assert_int_equal(s.len, 0);
    assert_memory_equal(s.b, zero, sizeof(zero));
}

static int setup_crypto(void **state)
{
    (void)state;
    return crypto_init() ? 0 : -1;
}

static int setup_crypto_evp(void **state)
{
    (void)state;
    if (!crypto_init())
        return -1;
    crypto_set_test_evp_hashes(1);
    return 0;
}

static int teardown_crypto_evp(void **state)
{
    (void)state;
    crypto_set_test_evp_hashes(0);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc8448_s3_early_secret_without_psk),
        cmocka_unit_test(test_handshake_secret_without_psk_matches_the_two_step_schedule),
        cmocka_unit_test(test_rfc8448_s3_derived_secret_before_handshake_stage),
        cmocka_unit_test(test_rfc8448_s3_handshake_secret_from_x25519_shared_secret),
        cmocka_unit_test(test_rfc8448_s3_handshake_traffic_secrets_cover_ch_sh),
        cmocka_unit_test(test_rfc8448_s3_server_finished_matches_trace),
        cmocka_unit_test(test_rfc8448_s3_client_finished_verify_data),
        cmocka_unit_test(test_rfc8448_s3_derived_secret_before_master_stage),
        cmocka_unit_test(test_rfc8448_s3_master_secret),
        cmocka_unit_test(
            test_rfc8448_s3_application_and_exporter_secrets_cover_through_server_finished),
        cmocka_unit_test(test_rfc8448_s3_resumption_master_secret_covers_client_finished),
        cmocka_unit_test(test_rfc8448_s3_ticket_psk_from_nonce_0000),
        cmocka_unit_test(test_rfc8448_s3_whole_schedule_on_one_running_transcript),
        cmocka_unit_test(test_transcript_hash_is_independent_of_when_the_hash_is_set),
        cmocka_unit_test(test_transcript_refuses_to_change_its_hash),
        cmocka_unit_test(test_rfc8448_s4_early_secret_and_binder_key_from_ticket_psk),
        cmocka_unit_test(test_rfc8448_s5_hrr_restart_replaces_ch1_with_message_hash),
        cmocka_unit_test(test_rfc8448_s5_handshake_secrets_after_hrr),
        cmocka_unit_test(test_rfc8448_s5_server_finished_matches_trace_after_hrr),
        cmocka_unit_test(test_rfc9001_a1_initial_secrets_from_dcid),
        cmocka_unit_test(test_rfc9001_a1_client_and_server_initial_packet_keys),
        cmocka_unit_test(test_rfc9001_a1_hkdf_labels_encode_as_printed),
        cmocka_unit_test(test_rfc9001_a5_chacha20_packet_keys_and_key_update),
        cmocka_unit_test(test_rfc5869_a1_hkdf_sha256),
        cmocka_unit_test(test_sha384_schedule_agrees_with_openssl_tls13_kdf),
        cmocka_unit_test(test_expand_label_agrees_with_openssl_at_every_length),
        cmocka_unit_test(test_expand_label_n_limits_label_and_context),
        cmocka_unit_test(test_secret_wipe_clears_bytes_and_length),
    };
    /*
     * Twice: with the default provider crypto.c hashes through SHA256_Init &
     * co.; the second run forces the EVP path that any other provider takes.
     */
    int failed = cmocka_run_group_tests_name("direct SHA-2", tests, setup_crypto, NULL);
    return failed + cmocka_run_group_tests_name("EVP digests", tests, setup_crypto_evp,
                                                teardown_crypto_evp);
}
