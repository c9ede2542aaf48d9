/*
 * fuzz_packet's input format and keys, shared with gen_seeds. Input:
 *   mode (bits 0-1: suite, bit 2: QUIC v2, bit 3: a Retry packet, bit 4: a
 *   packet number space that has seen packet 1000, else none), then for a
 *   protected packet the packet-number offset (one byte) and the packet, for
 *   a Retry the whole Retry packet (tag last) for PACKET_ODCID.
 * The keys come from a fixed traffic secret, so that gen_seeds' packets open.
 */
#ifndef QTLS_FUZZ_PACKET_H
#define QTLS_FUZZ_PACKET_H

#include <stdint.h>
#include <stdlib.h>

#include "qtls/quic_crypto.h"

enum { PACKET_V2 = 4, PACKET_RETRY = 8, PACKET_SEEN_1000 = 16 };
static const uint8_t PACKET_ODCID[8] = {0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08};

static inline uint32_t packet_suite(uint8_t mode)
{
    static const uint32_t suites[4] = {
        QTLS_QUIC_SUITE_AES_128_GCM_SHA256, QTLS_QUIC_SUITE_AES_256_GCM_SHA384,
        QTLS_QUIC_SUITE_CHACHA20_POLY1305_SHA256, QTLS_QUIC_SUITE_AES_128_CCM_SHA256};
    return suites[mode & 3];
}

static inline uint32_t packet_version(uint8_t mode)
{
    return mode & PACKET_V2 ? QTLS_QUIC_VERSION_2 : QTLS_QUIC_VERSION_1;
}

/* The AEAD and header-protection keys of the mode's suite and version, made once each. */
static inline void packet_keys(uint8_t mode, struct qtls_quic_aead **aead, struct qtls_quic_hp **hp)
{
    static struct qtls_quic_aead *aeads[8];
    static struct qtls_quic_hp *hps[8];
    static const uint8_t secret[QTLS_QUIC_MAX_SECRET_LEN] = {0x33, 0x44, 0x55};
    size_t i = mode & 7;
    if (aeads[i] == NULL) {
        size_t len = qtls_quic_suite_secret_len(packet_suite(mode));
        aeads[i] = qtls_quic_aead_new_from_secret(packet_version(mode), packet_suite(mode),
                                                  secret, len);
        hps[i] = qtls_quic_hp_new_from_secret(packet_version(mode), packet_suite(mode), secret,
                                              len);
        if (aeads[i] == NULL || hps[i] == NULL)
            abort();
    }
    *aead = aeads[i];
    *hp = hps[i];
}

#ifdef QTLS_FUZZ_SEEDS
void seed_put(const char *target, const char *name, const uint8_t *a, size_t alen);

/* A short-header packet and a long-header one per suite and version, and a Retry of each version. */
static inline void packet_seeds(void)
{
    for (uint8_t mode = 0; mode < 8; mode++) {
        struct qtls_quic_aead *aead;
        struct qtls_quic_hp *hp;
        packet_keys(mode, &aead, &hp);
        for (int longhdr = 0; longhdr < 2; longhdr++) {
            /* mode, pn_offset, then: first byte (pn length 2), 8-byte DCID, pn 0x0002, payload */
            uint8_t in[2 + 64 + QTLS_QUIC_TAG_LEN] = {(uint8_t)(mode | PACKET_SEEN_1000)};
            uint8_t *pkt = in + 2;
            size_t pn_offset = longhdr ? 1 + 4 + 1 + 8 + 1 + 1 : 1 + 8;
            in[1] = (uint8_t)pn_offset;
            pkt[0] = longhdr ? 0xc1 : 0x41;
            for (size_t k = 1; k < pn_offset; k++)
                pkt[k] = (uint8_t)k;
            pkt[pn_offset] = 0x03;
            pkt[pn_offset + 1] = 0xe9; /* 1001 */
            size_t hdr = pn_offset + 2, payload = 64 - hdr;
            memset(pkt + hdr, 0x01, payload); /* PING frames */
            if (!qtls_quic_packet_protect(aead, hp, 1001, pkt, hdr, payload))
                abort();
            char name[32];
            snprintf(name, sizeof(name), "%s-%u", longhdr ? "long" : "short", mode);
            seed_put("fuzz_packet", name, in, sizeof(in));
        }
    }
    for (uint8_t v = 0; v < 2; v++) {
        uint8_t mode = (uint8_t)(PACKET_RETRY | (v ? PACKET_V2 : 0));
        uint8_t in[1 + 32 + QTLS_QUIC_RETRY_TAG_LEN] = {mode}, *pkt = in + 1;
        pkt[0] = 0xf0;
        uint32_t version = packet_version(mode);
        pkt[1] = (uint8_t)(version >> 24);
        pkt[2] = (uint8_t)(version >> 16);
        pkt[3] = (uint8_t)(version >> 8);
        pkt[4] = (uint8_t)version;
        pkt[5] = 0; /* empty DCID, then SCID of 8, then a token */
        pkt[6] = 8;
        for (int k = 7; k < 32; k++)
            pkt[k] = (uint8_t)k;
        if (!qtls_quic_retry_tag(version, PACKET_ODCID, sizeof(PACKET_ODCID), pkt, 32, pkt + 32))
            abort();
        seed_put("fuzz_packet", v ? "retry-v2" : "retry-v1", in, sizeof(in));
    }
}
#endif

#endif
