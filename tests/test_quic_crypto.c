/*
 * quic_crypto.c: QUIC packet protection (include/qtls/quic_crypto.h) against
 * the published samples, byte for byte:
 *   - RFC 9001 Appendix A (QUIC v1): A.1 Initial keys, A.2 the protected
 *     client Initial, A.3 the server Initial, A.4 the Retry integrity tag,
 *     A.5 the ChaCha20-Poly1305 short-header packet and its "quic ku" secret;
 *   - RFC 9369 Appendix A (QUIC v2): the same five samples with the v2 salt,
 *     "quicv2" labels and Retry key.
 * Every sealed packet is opened again, a flipped bit must fail to open, and
 * the suites without published samples (AES-256-GCM, AES-128-CCM) are checked
 * against a one-shot libcrypto computation. Expected values are the RFCs'
 * (the v1 ones as recomputed in shared/vectors/rfc9001-appendix-a.md; the v2
 * ones from the RFC 9369 text).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>

#include "qtls/quic_crypto.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = strlen(hex) / 2;
    assert_true(strlen(hex) % 2 == 0 && n <= cap);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
    return n;
}

#define assert_hex(got, got_len, hex)                                                              \
    do {                                                                                           \
        uint8_t want_[1500];                                                                       \
        size_t want_len_ = unhex((hex), want_, sizeof(want_));                                     \
        assert_int_equal((got_len), want_len_);                                                    \
        assert_memory_equal((got), want_, want_len_);                                              \
    } while (0)

/* The error on top of the queue is ERR_LIB_SSL with `reason`; clears the queue. */
static void assert_ssl_error(int reason)
{
    unsigned long e = ERR_peek_last_error();
    assert_int_equal(ERR_GET_LIB(e), ERR_LIB_SSL);
    assert_int_equal(ERR_GET_REASON(e), reason);
    ERR_clear_error();
}

static const char DCID[] = "8394c8f03e515708"; /* both appendices' client-chosen DCID */

/* ------------------------------------------------------------------ */
/* The samples                                                         */
/* ------------------------------------------------------------------ */

/* RFC 9001 A.2 / RFC 9369 A.2: the client's CRYPTO frame (ClientHello), padded with zeros to a
 * 1162-byte payload; the same in both versions. */
static const char V1_CLIENT_CRYPTO[] =
    "060040f1010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e868"
    "04fe3a47f06a2b69484c00000413011302010000c000000010000e00000b6578"
    "616d706c652e636f6dff01000100000a00080006001d00170018001000070005"
    "04616c706e000500050100000000003300260024001d00209370b2c9caa47fba"
    "baf4559fedba753de171fa71f50f1ce15d43e994ec74d748002b000302030400"
    "0d0010000e0403050306030203080408050806002d00020101001c0002400100"
    "3900320408ffffffffffffffff05048000ffff07048000ffff08011001048000"
    "75300901100f088394c8f03e51570806048000ffff";

/* RFC 9001 A.2: the protected client Initial, all 1200 bytes. */
static const char V1_CLIENT_PACKET[] =
    "c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11"
    "d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399"
    "1c260ec4c60d17b31f8429157bb35a1282a643a8d2262cad67500cadb8e7378c"
    "8eb7539ec4d4905fed1bee1fc8aafba17c750e2c7ace01e6005f80fcb7df6212"
    "30c83711b39343fa028cea7f7fb5ff89eac2308249a02252155e2347b63d58c5"
    "457afd84d05dfffdb20392844ae812154682e9cf012f9021a6f0be17ddd0c208"
    "4dce25ff9b06cde535d0f920a2db1bf362c23e596d11a4f5a6cf3948838a3aec"
    "4e15daf8500a6ef69ec4e3feb6b1d98e610ac8b7ec3faf6ad760b7bad1db4ba3"
    "485e8a94dc250ae3fdb41ed15fb6a8e5eba0fc3dd60bc8e30c5c4287e53805db"
    "059ae0648db2f64264ed5e39be2e20d82df566da8dd5998ccabdae053060ae6c"
    "7b4378e846d29f37ed7b4ea9ec5d82e7961b7f25a9323851f681d582363aa5f8"
    "9937f5a67258bf63ad6f1a0b1d96dbd4faddfcefc5266ba6611722395c906556"
    "be52afe3f565636ad1b17d508b73d8743eeb524be22b3dcbc2c7468d54119c74"
    "68449a13d8e3b95811a198f3491de3e7fe942b330407abf82a4ed7c1b311663a"
    "c69890f4157015853d91e923037c227a33cdd5ec281ca3f79c44546b9d90ca00"
    "f064c99e3dd97911d39fe9c5d0b23a229a234cb36186c4819e8b9c5927726632"
    "291d6a418211cc2962e20fe47feb3edf330f2c603a9d48c0fcb5699dbfe58964"
    "25c5bac4aee82e57a85aaf4e2513e4f05796b07ba2ee47d80506f8d2c25e50fd"
    "14de71e6c418559302f939b0e1abd576f279c4b2e0feb85c1f28ff18f58891ff"
    "ef132eef2fa09346aee33c28eb130ff28f5b766953334113211996d20011a198"
    "e3fc433f9f2541010ae17c1bf202580f6047472fb36857fe843b19f5984009dd"
    "c324044e847a4f4a0ab34f719595de37252d6235365e9b84392b061085349d73"
    "203a4a13e96f5432ec0fd4a1ee65accdd5e3904df54c1da510b0ff20dcc0c77f"
    "cb2c0e0eb605cb0504db87632cf3d8b4dae6e705769d1de354270123cb11450e"
    "fc60ac47683d7b8d0f811365565fd98c4c8eb936bcab8d069fc33bd801b03ade"
    "a2e1fbc5aa463d08ca19896d2bf59a071b851e6c239052172f296bfb5e724047"
    "90a2181014f3b94a4e97d117b438130368cc39dbb2d198065ae3986547926cd2"
    "162f40a29f0c3c8745c0f50fba3852e566d44575c29d39a03f0cda721984b6f4"
    "40591f355e12d439ff150aab7613499dbd49adabc8676eef023b15b65bfc5ca0"
    "6948109f23f350db82123535eb8a7433bdabcb909271a6ecbcb58b936a88cd4e"
    "8f2e6ff5800175f113253d8fa9ca8885c2f552e657dc603f252e1a8e308f76f0"
    "be79e2fb8f5d5fbbe2e30ecadd220723c8c0aea8078cdfcb3868263ff8f09400"
    "54da48781893a7e49ad5aff4af300cd804a6b6279ab3ff3afb64491c85194aab"
    "760d58a606654f9f4400e8b38591356fbf6425aca26dc85244259ff2b19c41b9"
    "f96f3ca9ec1dde434da7d2d392b905ddf3d1f9af93d1af5950bd493f5aa731b4"
    "056df31bd267b6b90a079831aaf579be0a39013137aac6d404f518cfd4684064"
    "7e78bfe706ca4cf5e9c5453e9f7cfd2b8b4c8d169a44e55c88d4a9a7f9474241"
    "e221af44860018ab0856972e194cd934";

/* RFC 9369 A.2: the protected v2 client Initial, all 1200 bytes. */
static const char V2_CLIENT_PACKET[] =
    "d76b3343cf088394c8f03e5157080000449ea0c95e82ffe67b6abcdb4298b485"
    "dd04de806071bf03dceebfa162e75d6c96058bdbfb127cdfcbf903388e99ad04"
    "9f9a3dd4425ae4d0992cfff18ecf0fdb5a842d09747052f17ac2053d21f57c5d"
    "250f2c4f0e0202b70785b7946e992e58a59ac52dea6774d4f03b55545243cf1a"
    "12834e3f249a78d395e0d18f4d766004f1a2674802a747eaa901c3f10cda5500"
    "cb9122faa9f1df66c392079a1b40f0de1c6054196a11cbea40afb6ef5253cd68"
    "18f6625efce3b6def6ba7e4b37a40f7732e093daa7d52190935b8da58976ff33"
    "12ae50b187c1433c0f028edcc4c2838b6a9bfc226ca4b4530e7a4ccee1bfa2a3"
    "d396ae5a3fb512384b2fdd851f784a65e03f2c4fbe11a53c7777c023462239dd"
    "6f7521a3f6c7d5dd3ec9b3f233773d4b46d23cc375eb198c63301c21801f6520"
    "bcfb7966fc49b393f0061d974a2706df8c4a9449f11d7f3d2dcbb90c6b877045"
    "636e7c0c0fe4eb0f697545460c806910d2c355f1d253bc9d2452aaa549e27a1f"
    "ac7cf4ed77f322e8fa894b6a83810a34b361901751a6f5eb65a0326e07de7c12"
    "16ccce2d0193f958bb3850a833f7ae432b65bc5a53975c155aa4bcb4f7b2c4e5"
    "4df16efaf6ddea94e2c50b4cd1dfe06017e0e9d02900cffe1935e0491d77ffb4"
    "fdf85290fdd893d577b1131a610ef6a5c32b2ee0293617a37cbb08b847741c3b"
    "8017c25ca9052ca1079d8b78aebd47876d330a30f6a8c6d61dd1ab5589329de7"
    "14d19d61370f8149748c72f132f0fc99f34d766c6938597040d8f9e2bb522ff9"
    "9c63a344d6a2ae8aa8e51b7b90a4a806105fcbca31506c446151adfeceb51b91"
    "abfe43960977c87471cf9ad4074d30e10d6a7f03c63bd5d4317f68ff325ba3bd"
    "80bf4dc8b52a0ba031758022eb025cdd770b44d6d6cf0670f4e990b22347a7db"
    "848265e3e5eb72dfe8299ad7481a408322cac55786e52f633b2fb6b614eaed18"
    "d703dd84045a274ae8bfa73379661388d6991fe39b0d93debb41700b41f90a15"
    "c4d526250235ddcd6776fc77bc97e7a417ebcb31600d01e57f32162a8560cacc"
    "7e27a096d37a1a86952ec71bd89a3e9a30a2a26162984d7740f81193e8238e61"
    "f6b5b984d4d3dfa033c1bb7e4f0037febf406d91c0dccf32acf423cfa1e70710"
    "10d3f270121b493ce85054ef58bada42310138fe081adb04e2bd901f2f13458b"
    "3d6758158197107c14ebb193230cd1157380aa79cae1374a7c1e5bbcb80ee23e"
    "06ebfde206bfb0fcbc0edc4ebec309661bdd908d532eb0c6adc38b7ca7331dce"
    "8dfce39ab71e7c32d318d136b6100671a1ae6a6600e3899f31f0eed19e3417d1"
    "34b90c9058f8632c798d4490da4987307cba922d61c39805d072b589bd52fdf1"
    "e86215c2d54e6670e07383a27bbffb5addf47d66aa85a0c6f9f32e59d85a44dd"
    "5d3b22dc2be80919b490437ae4f36a0ae55edf1d0b5cb4e9a3ecabee93dfc6e3"
    "8d209d0fa6536d27a5d6fbb17641cde27525d61093f1b28072d111b2b4ae5f89"
    "d5974ee12e5cf7d5da4d6a31123041f33e61407e76cffcdcfd7e19ba58cf4b53"
    "6f4c4938ae79324dc402894b44faf8afbab35282ab659d13c93f70412e85cb19"
    "9a37ddec600545473cfb5a05e08d0b209973b2172b4d21fb69745a262ccde96b"
    "a18b2faa745b6fe189cf772a9f84cbfc";

/* RFC 9369 A.3: the protected v2 server Initial. */
static const char V2_SERVER_PACKET[] =
    "dc6b3343cf0008f067a5502a4262b5004075d92faaf16f05d8a4398c47089698"
    "baeea26b91eb761d9b89237bbf87263017915358230035f7fd3945d88965cf17"
    "f9af6e16886c61bfc703106fbaf3cb4cfa52382dd16a393e42757507698075b2"
    "c984c707f0a0812d8cd5a6881eaf21ceda98f4bd23f6fe1a3e2c43edd9ce7ca8"
    "4bed8521e2e140";

/* RFC 9369 A.4: a v2 Retry for the A.2 client Initial, token "token", with its tag. */
static const char V2_RETRY[] = "cf6b3343cf0008f067a5502a4262b5746f6b656ec8646ce8bfe33952d9555436"
                               "65dcc7b6";

/* RFC 9001 A.3 / RFC 9369 A.3: the server's ACK and CRYPTO(ServerHello) frames, no padding. */
static const char SERVER_PAYLOAD[] =
    "02000000000600405a020000560303eefce7f7b37ba1d1632e96677825ddf739"
    "88cfc79825df566dc5430b9a045a1200130100002e00330024001d00209d3c94"
    "0d89690b84d08a60993c144eca684d1081287c834d5311bcf32bb9da1a002b00"
    "020304";

/* RFC 9001 A.3: the protected server Initial (135 bytes). */
static const char V1_SERVER_PACKET[] =
    "cf000000010008f067a5502a4262b5004075c0d95a482cd0991cd25b0aac406a"
    "5816b6394100f37a1c69797554780bb38cc5a99f5ede4cf73c3ec2493a1839b3"
    "dbcba3f6ea46c5b7684df3548e7ddeb9c3bf9c73cc3f3bded74b562bfb19fb84"
    "022f8ef4cdd93795d77d06edbb7aaf2f58891850abbdca3d20398c276456cbc4"
    "2158407dd074ee";

/* RFC 9001 A.4: the v1 Retry, token "token", with its tag. */
static const char V1_RETRY[] =
    "ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba";

/* A.5 in both RFCs: a server's 1-RTT secret (the same value in both). */
static const char CHACHA_SECRET[] =
    "9ac312a7f877468ebe69422748ad00a15443f18203a07d6060f688f30f21632b";

/* ------------------------------------------------------------------ */
/* A.1: Initial secrets and keys                                       */
/* ------------------------------------------------------------------ */

struct side_keys {
    const char *secret, *key, *iv, *hp;
};

static void check_initial_keys(uint32_t version, const struct side_keys *client,
                               const struct side_keys *server)
{
    uint8_t dcid[8], cs[32], ss[32], key[32], iv[12], hp[32];
    unhex(DCID, dcid, sizeof(dcid));
    assert_int_equal(qtls_quic_initial_secrets(version, dcid, sizeof(dcid), cs, ss), 1);
    assert_hex(cs, sizeof(cs), client->secret);
    assert_hex(ss, sizeof(ss), server->secret);
    const struct side_keys *sides[2] = {client, server};
    const uint8_t *secrets[2] = {cs, ss};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(qtls_quic_derive_packet_keys(version, QTLS_QUIC_SUITE_AES_128_GCM_SHA256,
                                                      secrets[i], 32, key, iv, hp),
                         1);
        assert_hex(key, 16, sides[i]->key);
        assert_hex(iv, 12, sides[i]->iv);
        assert_hex(hp, 16, sides[i]->hp);
    }
}

/* RFC 9001 A.1 */
static void test_v1_initial_keys(void **state)
{
    (void)state;
    static const struct side_keys client = {
        "c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea",
        "1f369613dd76d5467730efcbe3b1a22d", "fa044b2f42a3fd3b46fb255c",
        "9f50449e04a0e810283a1e9933adedd2"};
    static const struct side_keys server = {
        "3c199828fd139efd216c155ad844cc81fb82fa8d7446fa7d78be803acdda951b",
        "cf3a5331653c364c88f0f379b6067e37", "0ac1493ca1905853b0bba03e",
        "c206b8d9b9f0f37644430b490eeaa314"};
    check_initial_keys(QTLS_QUIC_VERSION_1, &client, &server);
}

/* RFC 9369 A.1 */
static void test_v2_initial_keys(void **state)
{
    (void)state;
    static const struct side_keys client = {
        "14ec9d6eb9fd7af83bf5a668bc17a7e283766aade7ecd0891f70f9ff7f4bf47b",
        "8b1a0bc121284290a29e0971b5cd045d", "91f73e2351d8fa91660e909f",
        "45b95e15235d6f45a6b19cbcb0294ba9"};
    static const struct side_keys server = {
        "0263db1782731bf4588e7e4d93b7463907cb8cd8200b5da55a8bd488eafc37c1",
        "82db637861d55e1d011f19ea71d5d2a7", "dd13c276499c0249d3310652",
        "edf6d05c83121201b436e16877593c3a"};
    check_initial_keys(QTLS_QUIC_VERSION_2, &client, &server);
}

/* ------------------------------------------------------------------ */
/* A.2, A.3: protected Initial packets                                 */
/* ------------------------------------------------------------------ */

struct packet_case {
    uint32_t version;
    uint32_t suite;
    int from_server;    /* Initial: which Initial secret protects it */
    const char *secret; /* else: the traffic secret */
    const char *header; /* unprotected, ending with the packet number */
    uint64_t pn;
    const char *payload; /* hex, zero-padded to payload_len */
    size_t payload_len;
    const char *sample, *mask; /* RFC's header-protection intermediate values */
    const char *packet;        /* the protected packet */
};

static void case_secret(const struct packet_case *c, uint8_t *secret, size_t *len)
{
    if (c->secret != NULL) {
        *len = unhex(c->secret, secret, QTLS_QUIC_MAX_SECRET_LEN);
        return;
    }
    uint8_t dcid[8], cs[32], ss[32];
    unhex(DCID, dcid, sizeof(dcid));
    assert_int_equal(qtls_quic_initial_secrets(c->version, dcid, sizeof(dcid), cs, ss), 1);
    memcpy(secret, c->from_server ? ss : cs, 32);
    *len = 32;
}

/*
 * Protects the case's packet and compares every byte; checks the sample's mask;
 * seals out of place too; opens the packet with a fresh receiver's objects;
 * and checks that a flipped bit in the payload, in the tag or in the header
 * makes it fail.
 */
static void run_packet_case(const struct packet_case *c)
{
    uint8_t secret[QTLS_QUIC_MAX_SECRET_LEN], hdr[64], payload[1500], pkt[1500], copy[1500];
    uint8_t sample[16], mask[5], want_mask[5], sealed[1500];
    size_t secret_len;
    case_secret(c, secret, &secret_len);
    size_t hdr_len = unhex(c->header, hdr, sizeof(hdr));
    memset(payload, 0, sizeof(payload));
    unhex(c->payload, payload, sizeof(payload));
    size_t pn_len = (size_t)(hdr[0] & 3) + 1, pn_offset = hdr_len - pn_len;
    size_t total = hdr_len + c->payload_len + QTLS_QUIC_TAG_LEN;

    /* Sender */
    struct qtls_quic_aead *aead =
        qtls_quic_aead_new_from_secret(c->version, c->suite, secret, secret_len);
    struct qtls_quic_hp *hp =
        qtls_quic_hp_new_from_secret(c->version, c->suite, secret, secret_len);
    assert_non_null(aead);
    assert_non_null(hp);
    memcpy(pkt, hdr, hdr_len);
    memcpy(pkt + hdr_len, payload, c->payload_len);
    assert_int_equal(qtls_quic_packet_protect(aead, hp, c->pn, pkt, hdr_len, c->payload_len), 1);
    assert_hex(pkt, total, c->packet);

    /* The header-protection intermediate values (§5.4.2: sample at pn_offset + 4). */
    unhex(c->sample, sample, sizeof(sample));
    assert_memory_equal(pkt + pn_offset + 4, sample, 16);
    assert_int_equal(qtls_quic_hp_mask(hp, sample, mask), 1);
    unhex(c->mask, want_mask, sizeof(want_mask));
    assert_memory_equal(mask, want_mask, 5);

    /* Out of place: the same ciphertext and tag, the input untouched. */
    assert_int_equal(
        qtls_quic_aead_seal(aead, c->pn, hdr, hdr_len, payload, c->payload_len, sealed), 1);
    assert_memory_equal(sealed, pkt + hdr_len, c->payload_len + QTLS_QUIC_TAG_LEN);
    qtls_quic_aead_free(aead);
    qtls_quic_hp_free(hp);

    /* Receiver: separate objects from the same secret. */
    aead = qtls_quic_aead_new_from_secret(c->version, c->suite, secret, secret_len);
    hp = qtls_quic_hp_new_from_secret(c->version, c->suite, secret, secret_len);
    assert_non_null(aead);
    assert_non_null(hp);
    uint64_t pn;
    size_t got_hdr_len, got_payload_len;
    memcpy(copy, pkt, total);
    assert_int_equal(qtls_quic_packet_unprotect(aead, hp, (int64_t)c->pn - 1, copy, total,
                                                pn_offset, &pn, &got_hdr_len, &got_payload_len),
                     1);
    assert_int_equal(pn, c->pn);
    assert_int_equal(got_hdr_len, hdr_len);
    assert_int_equal(got_payload_len, c->payload_len);
    assert_memory_equal(copy, hdr, hdr_len);
    assert_memory_equal(copy + hdr_len, payload, c->payload_len);

    /* Out-of-place open of the sealed payload. */
    uint8_t opened[1500];
    assert_int_equal(qtls_quic_aead_open(aead, c->pn, hdr, hdr_len, sealed,
                                         c->payload_len + QTLS_QUIC_TAG_LEN, opened),
                     1);
    assert_memory_equal(opened, payload, c->payload_len);

    /* One flipped bit anywhere (payload, tag, a header byte outside the masked ones) fails. */
    const size_t flips[] = {hdr_len, total - 1, 1};
    for (size_t i = 0; i < sizeof(flips) / sizeof(flips[0]); i++) {
        memcpy(copy, pkt, total);
        copy[flips[i]] ^= 0x01;
        ERR_clear_error();
        assert_int_equal(qtls_quic_packet_unprotect(aead, hp, (int64_t)c->pn - 1, copy, total,
                                                    pn_offset, &pn, &got_hdr_len, &got_payload_len),
                         0);
        assert_ssl_error(SSL_R_DECRYPTION_FAILED);
    }
    /* Wrong packet number: a different nonce. */
    assert_int_equal(qtls_quic_aead_open(aead, c->pn + 1, hdr, hdr_len, sealed,
                                         c->payload_len + QTLS_QUIC_TAG_LEN, opened),
                     0);
    assert_ssl_error(SSL_R_DECRYPTION_FAILED);
    /* And the object still works after failures. */
    assert_int_equal(qtls_quic_aead_open(aead, c->pn, hdr, hdr_len, sealed,
                                         c->payload_len + QTLS_QUIC_TAG_LEN, opened),
                     1);
    qtls_quic_aead_free(aead);
    qtls_quic_hp_free(hp);
}

/* RFC 9001 A.2 */
static void test_v1_client_initial(void **state)
{
    (void)state;
    const struct packet_case c = {
        .version = QTLS_QUIC_VERSION_1,
        .suite = QTLS_QUIC_SUITE_AES_128_GCM_SHA256,
        .header = "c300000001088394c8f03e5157080000449e00000002",
        .pn = 2,
        .payload = V1_CLIENT_CRYPTO,
        .payload_len = 1162,
        .sample = "d1b1c98dd7689fb8ec11d242b123dc9b",
        .mask = "437b9aec36",
        .packet = V1_CLIENT_PACKET,
    };
    run_packet_case(&c);
}

/* RFC 9001 A.3 */
static void test_v1_server_initial(void **state)
{
    (void)state;
    const struct packet_case c = {
        .version = QTLS_QUIC_VERSION_1,
        .suite = QTLS_QUIC_SUITE_AES_128_GCM_SHA256,
        .from_server = 1,
        .header = "c1000000010008f067a5502a4262b50040750001",
        .pn = 1,
        .payload = SERVER_PAYLOAD,
        .payload_len = 99,
        .sample = "2cd0991cd25b0aac406a5816b6394100",
        .mask = "2ec0d8356a",
        .packet = V1_SERVER_PACKET,
    };
    run_packet_case(&c);
}

/* RFC 9369 A.2 */
static void test_v2_client_initial(void **state)
{
    (void)state;
    const struct packet_case c = {
        .version = QTLS_QUIC_VERSION_2,
        .suite = QTLS_QUIC_SUITE_AES_128_GCM_SHA256,
        .header = "d36b3343cf088394c8f03e5157080000449e00000002",
        .pn = 2,
        .payload = V1_CLIENT_CRYPTO,
        .payload_len = 1162,
        .sample = "ffe67b6abcdb4298b485dd04de806071",
        .mask = "94a0c95e80",
        .packet = V2_CLIENT_PACKET,
    };
    run_packet_case(&c);
}

/* RFC 9369 A.3 */
static void test_v2_server_initial(void **state)
{
    (void)state;
    const struct packet_case c = {
        .version = QTLS_QUIC_VERSION_2,
        .suite = QTLS_QUIC_SUITE_AES_128_GCM_SHA256,
        .from_server = 1,
        .header = "d16b3343cf0008f067a5502a4262b50040750001",
        .pn = 1,
        .payload = SERVER_PAYLOAD,
        .payload_len = 99,
        .sample = "6f05d8a4398c47089698baeea26b91eb",
        .mask = "4dd92e91ea",
        .packet = V2_SERVER_PACKET,
    };
    run_packet_case(&c);
}

/* ------------------------------------------------------------------ */
/* A.4: Retry                                                          */
/* ------------------------------------------------------------------ */

static void check_retry(uint32_t version, const char *retry_hex)
{
    uint8_t dcid[8], pkt[64], tag[16];
    unhex(DCID, dcid, sizeof(dcid));
    size_t len = unhex(retry_hex, pkt, sizeof(pkt));
    assert_int_equal(qtls_quic_retry_tag(version, dcid, sizeof(dcid), pkt, len - 16, tag), 1);
    assert_memory_equal(tag, pkt + len - 16, 16);
    assert_int_equal(qtls_quic_retry_verify(version, dcid, sizeof(dcid), pkt, len), 1);

    /* A flipped bit in the packet or tag, another ODCID, or the other version's key: rejected. */
    pkt[len - 20] ^= 0x80;
    assert_int_equal(qtls_quic_retry_verify(version, dcid, sizeof(dcid), pkt, len), 0);
    assert_ssl_error(SSL_R_DECRYPTION_FAILED);
    pkt[len - 20] ^= 0x80;
    pkt[len - 1] ^= 0x01;
    assert_int_equal(qtls_quic_retry_verify(version, dcid, sizeof(dcid), pkt, len), 0);
    assert_ssl_error(SSL_R_DECRYPTION_FAILED);
    pkt[len - 1] ^= 0x01;
    assert_int_equal(qtls_quic_retry_verify(version, dcid, sizeof(dcid) - 1, pkt, len), 0);
    assert_ssl_error(SSL_R_DECRYPTION_FAILED);
    uint32_t other = version == QTLS_QUIC_VERSION_1 ? QTLS_QUIC_VERSION_2 : QTLS_QUIC_VERSION_1;
    assert_int_equal(qtls_quic_retry_verify(other, dcid, sizeof(dcid), pkt, len), 0);
    assert_ssl_error(SSL_R_DECRYPTION_FAILED);
    assert_int_equal(qtls_quic_retry_verify(version, dcid, sizeof(dcid), pkt, len), 1);
}

/* RFC 9001 A.4 */
static void test_v1_retry(void **state)
{
    (void)state;
    check_retry(QTLS_QUIC_VERSION_1, V1_RETRY);
}

/* RFC 9369 A.4 */
static void test_v2_retry(void **state)
{
    (void)state;
    check_retry(QTLS_QUIC_VERSION_2, V2_RETRY);
}

/* ------------------------------------------------------------------ */
/* A.5: ChaCha20-Poly1305 short header, and key update                 */
/* ------------------------------------------------------------------ */

struct chacha_case {
    uint32_t version;
    const char *key, *iv, *hp, *ku, *packet, *sample, *mask;
};

static void check_chacha(const struct chacha_case *k)
{
    const uint32_t suite = QTLS_QUIC_SUITE_CHACHA20_POLY1305_SHA256;
    uint8_t secret[32], key[32], iv[12], hp[32], ku[32];
    unhex(CHACHA_SECRET, secret, sizeof(secret));
    assert_int_equal(qtls_quic_derive_packet_keys(k->version, suite, secret, 32, key, iv, hp), 1);
    assert_hex(key, 32, k->key);
    assert_hex(iv, 12, k->iv);
    assert_hex(hp, 32, k->hp);
    assert_int_equal(qtls_quic_key_update_secret(k->version, suite, secret, 32, ku), 1);
    assert_hex(ku, 32, k->ku);

    /* 654360564 encoded in 3 bytes (49140 = 0x00bff4); the payload is one PING frame. */
    const struct packet_case c = {
        .version = k->version,
        .suite = suite,
        .secret = CHACHA_SECRET,
        .header = "4200bff4",
        .pn = 654360564,
        .payload = "01",
        .payload_len = 1,
        .sample = k->sample,
        .mask = k->mask,
        .packet = k->packet,
    };
    run_packet_case(&c);

    /* The same packet from key and IV given directly (qtls_quic_aead_new / hp_new). */
    struct qtls_quic_aead *a = qtls_quic_aead_new(suite, key, 32, iv, 12);
    struct qtls_quic_hp *h = qtls_quic_hp_new(suite, hp, 32);
    uint8_t pkt[32] = {0x42, 0x00, 0xbf, 0xf4, 0x01};
    assert_non_null(a);
    assert_non_null(h);
    assert_int_equal(qtls_quic_packet_protect(a, h, 654360564, pkt, 4, 1), 1);
    assert_hex(pkt, 21, k->packet);
    qtls_quic_aead_free(a);
    qtls_quic_hp_free(h);
}

/* RFC 9001 A.5 ("ku" as recomputed in shared/vectors/rfc9001-appendix-a.md) */
static void test_v1_chacha20_short_header(void **state)
{
    (void)state;
    const struct chacha_case k = {
        .version = QTLS_QUIC_VERSION_1,
        .key = "c6d98ff3441c3fe1b2182094f69caa2ed4b716b65488960a7a984979fb23e1c8",
        .iv = "e0459b3474bdd0e44a41c144",
        .hp = "25a282b9e82f06f21f488917a4fc8f1b73573685608597d0efcb076b0ab7a7a4",
        .ku = "1223504755036d556342ee9361d253421a826c9ecdf3c7148684b36b714881f9",
        .sample = "5e5cd55c41f69080575d7999c25a5bfb",
        .mask = "aefefe7d03",
        .packet = "4cfe4189655e5cd55c41f69080575d7999c25a5bfb",
    };
    check_chacha(&k);
}

/* RFC 9369 A.5 */
static void test_v2_chacha20_short_header(void **state)
{
    (void)state;
    const struct chacha_case k = {
        .version = QTLS_QUIC_VERSION_2,
        .key = "3bfcddd72bcf02541d7fa0dd1f5f9eeea817e09a6963a0e6c7df0f9a1bab90f2",
        .iv = "a6b5bc6ab7dafce30ffff5dd",
        .hp = "d659760d2ba434a226fd37b35c69e2da8211d10c4f12538787d65645d5d1b8e2",
        .ku = "c69374c49e3d2a9466fa689e49d476db5d0dfbc87d32ceeaa6343fd0ae4c7d88",
        .sample = "e7b6b932bc27d786f4bc2bb20f2162ba",
        .mask = "97580e32bf",
        .packet = "5558b1c60ae7b6b932bc27d786f4bc2bb20f2162ba",
    };
    check_chacha(&k);
}

/*
 * Key update with SHA-384 (no published sample): against OpenSSL's own
 * HKDF in expand-only mode over the RFC 8446 §7.1 HkdfLabel, built by hand.
 * Also checks that updating in place (out == secret) gives the same value.
 */
static void expand_label_oracle(const char *md, const uint8_t *secret, size_t len,
                                const char *label, uint8_t *out, size_t out_len)
{
    uint8_t info[64];
    size_t n = 0, ll = strlen(label);
    info[n++] = (uint8_t)(out_len >> 8);
    info[n++] = (uint8_t)out_len;
    info[n++] = (uint8_t)(6 + ll);
    memcpy(info + n, "tls13 ", 6);
    n += 6;
    memcpy(info + n, label, ll);
    n += ll;
    info[n++] = 0;
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *kctx = EVP_KDF_CTX_new(kdf);
    int mode = EVP_KDF_HKDF_MODE_EXPAND_ONLY;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)md, 0),
        OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)secret, len),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info, n),
        OSSL_PARAM_construct_end(),
    };
    assert_int_equal(EVP_KDF_derive(kctx, out, out_len, params), 1);
    EVP_KDF_CTX_free(kctx);
    EVP_KDF_free(kdf);
}

static void test_key_update_sha384(void **state)
{
    (void)state;
    const uint32_t suite = QTLS_QUIC_SUITE_AES_256_GCM_SHA384;
    uint8_t secret[48], got[48], want[48];
    for (size_t i = 0; i < sizeof(secret); i++)
        secret[i] = (uint8_t)(0xa0 + i);
    assert_int_equal(qtls_quic_suite_secret_len(suite), 48);
    const struct {
        uint32_t version;
        const char *label;
    } v[] = {{QTLS_QUIC_VERSION_1, "quic ku"}, {QTLS_QUIC_VERSION_2, "quicv2 ku"}};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(qtls_quic_key_update_secret(v[i].version, suite, secret, 48, got), 1);
        expand_label_oracle("SHA2-384", secret, 48, v[i].label, want, 48);
        assert_memory_equal(got, want, 48);
        uint8_t inplace[48];
        memcpy(inplace, secret, 48);
        assert_int_equal(qtls_quic_key_update_secret(v[i].version, suite, inplace, 48, inplace), 1);
        assert_memory_equal(inplace, want, 48);
    }
    /* The RFC 9001 A.5 "quic ku" value, from the oracle too. */
    uint8_t cs[32];
    unhex(CHACHA_SECRET, cs, sizeof(cs));
    expand_label_oracle("SHA2-256", cs, 32, "quic ku", want, 32);
    assert_hex(want, 32, "1223504755036d556342ee9361d253421a826c9ecdf3c7148684b36b714881f9");
}

/* ------------------------------------------------------------------ */
/* Suites without published samples: AES-256-GCM and AES-128-CCM       */
/* ------------------------------------------------------------------ */

/* One-shot libcrypto AEAD seal (the oracle), 12-byte nonce and 16-byte tag. */
static void oracle_seal(const char *name, const uint8_t *key, const uint8_t *nonce,
                        const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t in_len,
                        uint8_t *out)
{
    EVP_CIPHER *ciph = EVP_CIPHER_fetch(NULL, name, NULL);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int ccm = strstr(name, "CCM") != NULL, len;
    assert_non_null(ciph);
    assert_int_equal(EVP_EncryptInit_ex(c, ciph, NULL, NULL, NULL), 1);
    assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) > 0);
    if (ccm)
        assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 16, NULL) > 0);
    assert_int_equal(EVP_EncryptInit_ex(c, NULL, NULL, key, nonce), 1);
    if (ccm)
        assert_int_equal(EVP_EncryptUpdate(c, NULL, &len, NULL, (int)in_len), 1);
    assert_int_equal(EVP_EncryptUpdate(c, NULL, &len, aad, (int)aad_len), 1);
    assert_int_equal(EVP_EncryptUpdate(c, out, &len, in, (int)in_len), 1);
    assert_int_equal(EVP_EncryptFinal_ex(c, out + len, &len), 1);
    assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, out + in_len) > 0);
    EVP_CIPHER_CTX_free(c);
    EVP_CIPHER_free(ciph);
}

static void check_suite_against_oracle(uint32_t suite, const char *aead_name, const char *hp_name)
{
    uint8_t secret[48], key[32], iv[12], hpk[32], nonce[12];
    size_t slen = qtls_quic_suite_secret_len(suite), klen = qtls_quic_suite_key_len(suite);
    for (size_t i = 0; i < slen; i++)
        secret[i] = (uint8_t)(i * 7 + 1);
    assert_int_equal(
        qtls_quic_derive_packet_keys(QTLS_QUIC_VERSION_1, suite, secret, slen, key, iv, hpk), 1);
    /* RFC 9001 §5.1 by hand: the labels over the secret with OpenSSL's HKDF. */
    const char *md = slen == 48 ? "SHA2-384" : "SHA2-256";
    uint8_t want_key[32], want_iv[12], want_hp[32];
    expand_label_oracle(md, secret, slen, "quic key", want_key, klen);
    expand_label_oracle(md, secret, slen, "quic iv", want_iv, 12);
    expand_label_oracle(md, secret, slen, "quic hp", want_hp, klen);
    assert_memory_equal(key, want_key, klen);
    assert_memory_equal(iv, want_iv, 12);
    assert_memory_equal(hpk, want_hp, klen);

    struct qtls_quic_aead *a =
        qtls_quic_aead_new_from_secret(QTLS_QUIC_VERSION_1, suite, secret, slen);
    assert_non_null(a);
    uint8_t hdr[20], payload[300], got[400], want[400], opened[300];
    for (size_t i = 0; i < sizeof(hdr); i++)
        hdr[i] = (uint8_t)(0x40 + i);
    for (size_t i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)(i ^ 0x5a);
    const uint64_t pns[] = {0, 1, 0x1234567, ((uint64_t)1 << 62) - 1};
    for (size_t p = 0; p < sizeof(pns) / sizeof(pns[0]); p++) {
        /* §5.3 nonce by hand: IV XOR the 62-bit pn, big-endian in the last 8 bytes. */
        memcpy(nonce, iv, 12);
        for (int i = 0; i < 8; i++)
            nonce[11 - i] ^= (uint8_t)(pns[p] >> (8 * i));
        oracle_seal(aead_name, key, nonce, hdr, sizeof(hdr), payload, sizeof(payload), want);
        assert_int_equal(
            qtls_quic_aead_seal(a, pns[p], hdr, sizeof(hdr), payload, sizeof(payload), got), 1);
        assert_memory_equal(got, want, sizeof(payload) + 16);
        /* The nonce form gives the same. */
        assert_int_equal(
            qtls_quic_aead_seal_nonce(a, nonce, hdr, sizeof(hdr), payload, sizeof(payload), got),
            1);
        assert_memory_equal(got, want, sizeof(payload) + 16);
        /* In place. */
        memcpy(got, payload, sizeof(payload));
        assert_int_equal(
            qtls_quic_aead_seal(a, pns[p], hdr, sizeof(hdr), got, sizeof(payload), got), 1);
        assert_memory_equal(got, want, sizeof(payload) + 16);
        assert_int_equal(
            qtls_quic_aead_open(a, pns[p], hdr, sizeof(hdr), got, sizeof(payload) + 16, got), 1);
        assert_memory_equal(got, payload, sizeof(payload));
        /* Tampered AAD. */
        hdr[0] ^= 1;
        assert_int_equal(
            qtls_quic_aead_open(a, pns[p], hdr, sizeof(hdr), want, sizeof(payload) + 16, opened),
            0);
        assert_ssl_error(SSL_R_DECRYPTION_FAILED);
        hdr[0] ^= 1;
    }
    qtls_quic_aead_free(a);

    /* Header protection: AES-ECB of the sample. */
    uint8_t sample[16], mask[5], block[32];
    int len;
    for (size_t i = 0; i < 16; i++)
        sample[i] = (uint8_t)(0xf0 - i);
    struct qtls_quic_hp *hp = qtls_quic_hp_new(suite, hpk, klen);
    assert_non_null(hp);
    assert_int_equal(qtls_quic_hp_mask(hp, sample, mask), 1);
    EVP_CIPHER *ecb = EVP_CIPHER_fetch(NULL, hp_name, NULL);
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    assert_int_equal(EVP_EncryptInit_ex(c, ecb, NULL, hpk, NULL), 1);
    EVP_CIPHER_CTX_set_padding(c, 0);
    assert_int_equal(EVP_EncryptUpdate(c, block, &len, sample, 16), 1);
    assert_memory_equal(mask, block, 5);
    EVP_CIPHER_CTX_free(c);
    EVP_CIPHER_free(ecb);
    qtls_quic_hp_free(hp);
}

static void test_aes_256_gcm(void **state)
{
    (void)state;
    check_suite_against_oracle(QTLS_QUIC_SUITE_AES_256_GCM_SHA384, "AES-256-GCM", "AES-256-ECB");
}

static void test_aes_128_ccm(void **state)
{
    (void)state;
    check_suite_against_oracle(QTLS_QUIC_SUITE_AES_128_CCM_SHA256, "AES-128-CCM", "AES-128-ECB");
}

/* ------------------------------------------------------------------ */
/* Header protection rules, packet numbers, errors                     */
/* ------------------------------------------------------------------ */

/* §5.4.1: a long header masks 4 bits of the first byte, a short header 5; apply/remove invert. */
static void test_header_protection_first_byte(void **state)
{
    (void)state;
    uint8_t key[16] = {1, 2, 3}, pkt[40], orig[40];
    struct qtls_quic_hp *hp = qtls_quic_hp_new(QTLS_QUIC_SUITE_AES_128_GCM_SHA256, key, 16);
    assert_non_null(hp);
    for (size_t i = 0; i < sizeof(pkt); i++)
        orig[i] = (uint8_t)(i * 13);
    const uint8_t firsts[] = {0xc0, 0xc3, 0x40, 0x43, 0x41};
    for (size_t f = 0; f < sizeof(firsts); f++) {
        memcpy(pkt, orig, sizeof(pkt));
        pkt[0] = firsts[f];
        uint8_t mask[5];
        size_t pn_offset = 10, pn_len;
        assert_int_equal(qtls_quic_hp_mask(hp, pkt + pn_offset + 4, mask), 1);
        assert_int_equal(qtls_quic_hp_apply(hp, pkt, sizeof(pkt), pn_offset), 1);
        uint8_t bits = (firsts[f] & 0x80) ? 0x0f : 0x1f;
        assert_int_equal(pkt[0], firsts[f] ^ (mask[0] & bits));
        size_t n = (size_t)(firsts[f] & 3) + 1;
        for (size_t i = 0; i < 4; i++)
            assert_int_equal(pkt[pn_offset + i], orig[pn_offset + i] ^ (i < n ? mask[1 + i] : 0));
        assert_int_equal(qtls_quic_hp_remove(hp, pkt, sizeof(pkt), pn_offset, &pn_len), 1);
        assert_int_equal(pn_len, n);
        assert_int_equal(pkt[0], firsts[f]);
        assert_memory_equal(pkt + 1, orig + 1, sizeof(pkt) - 1);
    }
    /* Too short for the sample (§5.4.2 needs pn_offset + 4 + 16 bytes). */
    assert_int_equal(qtls_quic_hp_apply(hp, pkt, 29, 10), 0);
    assert_ssl_error(SSL_R_BAD_PACKET);
    assert_int_equal(qtls_quic_hp_apply(hp, pkt, 30, 10), 1);
    qtls_quic_hp_free(hp);
}

/* RFC 9000 §A.3's example, and the window edges. */
static void test_decode_pn(void **state)
{
    (void)state;
    assert_int_equal(qtls_quic_decode_pn(0xa82f30ea, 0x9b32, 2), 0xa82f9b32);
    assert_int_equal(qtls_quic_decode_pn(-1, 0, 1), 0);
    assert_int_equal(qtls_quic_decode_pn(-1, 2, 4), 2);
    assert_int_equal(qtls_quic_decode_pn(654360563, 0xbff4, 3), 654360564);
    assert_int_equal(qtls_quic_decode_pn(0xff, 0x00, 1), 0x100);  /* wraps forward */
    assert_int_equal(qtls_quic_decode_pn(0x100, 0xff, 1), 0xff);  /* a bit late */
    assert_int_equal(qtls_quic_decode_pn(0x17f, 0x00, 1), 0x200); /* forward again */
    assert_int_equal(qtls_quic_decode_pn(0x180, 0x81, 1), 0x181);
}

static void test_errors(void **state)
{
    (void)state;
    uint8_t s32[32] = {0}, s48[48] = {0}, out[48], key[32] = {0}, iv[12] = {0};
    ERR_clear_error();

    assert_int_equal(qtls_quic_version_supported(QTLS_QUIC_VERSION_1), 1);
    assert_int_equal(qtls_quic_version_supported(QTLS_QUIC_VERSION_2), 1);
    assert_int_equal(qtls_quic_version_supported(0xff00001d), 0);

    /* Unknown version (draft-29) */
    assert_int_equal(qtls_quic_initial_secrets(0xff00001d, s32, 8, out, out), 0);
    assert_ssl_error(SSL_R_UNSUPPORTED_PROTOCOL);
    assert_int_equal(qtls_quic_derive_packet_keys(0xff00001d, QTLS_QUIC_SUITE_AES_128_GCM_SHA256,
                                                  s32, 32, out, out, out),
                     0);
    assert_ssl_error(SSL_R_UNSUPPORTED_PROTOCOL);
    uint8_t tag[16];
    assert_int_equal(qtls_quic_retry_tag(0, s32, 8, s32, 20, tag), 0);
    assert_ssl_error(SSL_R_UNSUPPORTED_PROTOCOL);

    /* TLS_AES_128_CCM_8_SHA256 (0x03001305) is never usable with QUIC, nor an unknown id. */
    assert_int_equal(qtls_quic_suite_key_len(0x03001305), 0);
    assert_int_equal(qtls_quic_suite_secret_len(0x03001305), 0);
    assert_int_equal(
        qtls_quic_derive_packet_keys(QTLS_QUIC_VERSION_1, 0x03001305, s32, 32, out, out, out), 0);
    assert_ssl_error(SSL_R_BAD_CIPHER);
    assert_null(qtls_quic_aead_new(0x0300c02f, key, 16, iv, 12));
    assert_ssl_error(SSL_R_BAD_CIPHER);
    assert_null(qtls_quic_hp_new(0x03001305, key, 16));
    assert_ssl_error(SSL_R_BAD_CIPHER);

    /* A secret that is not the suite's hash length. */
    assert_int_equal(qtls_quic_key_update_secret(QTLS_QUIC_VERSION_1,
                                                 QTLS_QUIC_SUITE_AES_256_GCM_SHA384, s32, 32, out),
                     0);
    assert_ssl_error(SSL_R_BAD_LENGTH);
    assert_null(qtls_quic_aead_new_from_secret(QTLS_QUIC_VERSION_1,
                                               QTLS_QUIC_SUITE_AES_128_GCM_SHA256, s48, 48));
    assert_ssl_error(SSL_R_BAD_LENGTH);
    /* Wrong key / IV lengths. */
    assert_null(qtls_quic_aead_new(QTLS_QUIC_SUITE_AES_128_GCM_SHA256, key, 32, iv, 12));
    assert_ssl_error(SSL_R_BAD_LENGTH);
    assert_null(qtls_quic_aead_new(QTLS_QUIC_SUITE_AES_128_GCM_SHA256, key, 16, iv, 8));
    assert_ssl_error(SSL_R_BAD_LENGTH);
    assert_null(qtls_quic_hp_new(QTLS_QUIC_SUITE_CHACHA20_POLY1305_SHA256, key, 16));
    assert_ssl_error(SSL_R_BAD_LENGTH);
    /* A connection ID longer than 20 bytes (RFC 9000 §17.2). */
    uint8_t cid[21] = {0};
    assert_int_equal(qtls_quic_initial_secrets(QTLS_QUIC_VERSION_1, cid, 21, out, out), 0);
    assert_ssl_error(SSL_R_BAD_LENGTH);
    assert_int_equal(qtls_quic_initial_secrets(QTLS_QUIC_VERSION_1, cid, 20, out, out), 1);
    assert_int_equal(qtls_quic_initial_secrets(QTLS_QUIC_VERSION_1, NULL, 0, out, out), 1);

    /* Open: shorter than a tag. */
    struct qtls_quic_aead *a =
        qtls_quic_aead_new(QTLS_QUIC_SUITE_AES_128_GCM_SHA256, key, 16, iv, 12);
    assert_non_null(a);
    assert_int_equal(qtls_quic_aead_open(a, 0, NULL, 0, s32, 15, out), 0);
    assert_ssl_error(SSL_R_DECRYPTION_FAILED);
    /* A failed open leaves no plaintext behind. */
    uint8_t ct[40];
    memset(ct, 0x77, sizeof(ct));
    assert_int_equal(qtls_quic_aead_open(a, 0, NULL, 0, ct, sizeof(ct), out), 0);
    assert_ssl_error(SSL_R_DECRYPTION_FAILED);
    for (size_t i = 0; i < sizeof(ct) - 16; i++)
        assert_int_equal(out[i], 0);

    /* packet_protect: the header's packet number must be the low bytes of pn. */
    struct qtls_quic_hp *hp = qtls_quic_hp_new(QTLS_QUIC_SUITE_AES_128_GCM_SHA256, key, 16);
    uint8_t pkt[64] = {0x41, 0xaa, 0xbb, 0x00, 0x05}; /* short header, DCID aa bb, 2-byte pn 5 */
    assert_int_equal(qtls_quic_packet_protect(a, hp, 6, pkt, 5, 20), 0);
    assert_ssl_error(SSL_R_BAD_VALUE);
    assert_int_equal(qtls_quic_packet_protect(a, hp, 0x10005, pkt, 5, 20), 1);
    /* Too short to sample: pn at 3, so 3 + 4 + 16 = 23 bytes are needed; 5 + 1 + 16 = 22. */
    pkt[0] = 0x41, pkt[3] = 0, pkt[4] = 5;
    assert_int_equal(qtls_quic_packet_protect(a, hp, 5, pkt, 5, 1), 0);
    assert_ssl_error(SSL_R_BAD_PACKET);
    assert_int_equal(qtls_quic_packet_protect(a, hp, 5, pkt, 5, 2), 1);
    qtls_quic_hp_free(hp);
    qtls_quic_aead_free(a);

    /* Freeing NULL is fine. */
    qtls_quic_aead_free(NULL);
    qtls_quic_hp_free(NULL);
    /* The reason has a string (registered by the library's error table). */
    OPENSSL_init_ssl(0, NULL);
    assert_string_equal(ERR_reason_error_string(ERR_PACK(ERR_LIB_SSL, 0, SSL_R_DECRYPTION_FAILED)),
                        "decryption failed");
}

/* ------------------------------------------------------------------ */
/* No allocation per packet                                            */
/* ------------------------------------------------------------------ */

/* libcrypto's allocator, counted (installed in main before anything allocates). */
static size_t allocations;

static void *count_malloc(size_t n, const char *file, int line)
{
    (void)file, (void)line;
    allocations++;
    return malloc(n);
}

static void *count_realloc(void *p, size_t n, const char *file, int line)
{
    (void)file, (void)line;
    allocations++;
    return realloc(p, n);
}

static void count_free(void *p, const char *file, int line)
{
    (void)file, (void)line;
    free(p);
}

/*
 * Once the key objects exist, sealing, opening, the header-protection mask and
 * whole-packet protection allocate nothing, for every suite; neither does a
 * failed open, except with AES-128-CCM, where libcrypto's own error report on
 * a tag mismatch copies strings onto the heap.
 */
static void test_no_allocation_per_packet(void **state)
{
    (void)state;
    const uint32_t all[] = {QTLS_QUIC_SUITE_AES_128_GCM_SHA256, QTLS_QUIC_SUITE_AES_256_GCM_SHA384,
                            QTLS_QUIC_SUITE_CHACHA20_POLY1305_SHA256,
                            QTLS_QUIC_SUITE_AES_128_CCM_SHA256};
    uint8_t secret[48] = {9}, pkt[1300], buf[1300], mask[5];
    for (size_t s = 0; s < sizeof(all) / sizeof(all[0]); s++) {
        size_t slen = qtls_quic_suite_secret_len(all[s]);
        struct qtls_quic_aead *a =
            qtls_quic_aead_new_from_secret(QTLS_QUIC_VERSION_1, all[s], secret, slen);
        struct qtls_quic_hp *hp =
            qtls_quic_hp_new_from_secret(QTLS_QUIC_VERSION_1, all[s], secret, slen);
        assert_non_null(a);
        assert_non_null(hp);
        /* A failed open first, so the thread's error state exists before counting. */
        memset(buf, 0, sizeof(buf));
        assert_int_equal(qtls_quic_aead_open(a, 0, NULL, 0, buf, 100, buf), 0);
        ERR_clear_error();

        size_t before = allocations, failing = 0;
        for (uint64_t pn = 0; pn < 100; pn++) {
            memset(pkt, 0, sizeof(pkt));
            pkt[0] = 0x43; /* short header, 4-byte pn */
            pkt[9] = (uint8_t)pn;
            assert_int_equal(qtls_quic_packet_protect(a, hp, pn, pkt, 10, 1200), 1);
            uint64_t got;
            size_t hlen, plen;
            assert_int_equal(qtls_quic_packet_unprotect(a, hp, (int64_t)pn - 1, pkt, 1226, 6, &got,
                                                        &hlen, &plen),
                             1);
            assert_int_equal(got, pn);
            assert_int_equal(qtls_quic_aead_seal(a, pn, pkt, 10, pkt + 10, 100, buf), 1);
            assert_int_equal(qtls_quic_hp_mask(hp, pkt + 20, mask), 1);

            /* A rejected packet: SSL_R_DECRYPTION_FAILED, and only that, on the queue. */
            size_t n = allocations;
            buf[0] ^= 1;
            assert_int_equal(qtls_quic_aead_open(a, pn, pkt, 10, buf, 116, buf), 0);
            failing += allocations - n;
            assert_int_equal(ERR_GET_REASON(ERR_peek_error()), SSL_R_DECRYPTION_FAILED);
            assert_int_equal(ERR_GET_REASON(ERR_peek_last_error()), SSL_R_DECRYPTION_FAILED);
            ERR_clear_error();
        }
        assert_int_equal(allocations - before - failing, 0);
        if (all[s] != QTLS_QUIC_SUITE_AES_128_CCM_SHA256)
            assert_int_equal(failing, 0);
        qtls_quic_aead_free(a);
        qtls_quic_hp_free(hp);
    }
}

int main(void)
{
    /* Before any libcrypto call: count its allocations (test_no_allocation_per_packet). */
    if (!CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v1_initial_keys),
        cmocka_unit_test(test_v1_client_initial),
        cmocka_unit_test(test_v1_server_initial),
        cmocka_unit_test(test_v1_retry),
        cmocka_unit_test(test_v1_chacha20_short_header),
        cmocka_unit_test(test_v2_initial_keys),
        cmocka_unit_test(test_v2_client_initial),
        cmocka_unit_test(test_v2_server_initial),
        cmocka_unit_test(test_v2_retry),
        cmocka_unit_test(test_v2_chacha20_short_header),
        cmocka_unit_test(test_key_update_sha384),
        cmocka_unit_test(test_aes_256_gcm),
        cmocka_unit_test(test_aes_128_ccm),
        cmocka_unit_test(test_header_protection_first_byte),
        cmocka_unit_test(test_decode_pn),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_no_allocation_per_packet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
