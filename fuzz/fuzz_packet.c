/*
 * qtls/quic_crypto.h on a packet from the network, as a QUIC stack calls it:
 * header protection removal, packet-number decoding and AEAD open
 * (qtls_quic_packet_unprotect), or the Retry integrity tag check. The format
 * and keys are in fuzz_packet.h. Whatever opens must have a plaintext inside
 * the packet.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>

#include "fuzz_packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint8_t mode = data[0];
    if (mode & PACKET_RETRY) {
        (void)qtls_quic_retry_verify(packet_version(mode), PACKET_ODCID, sizeof(PACKET_ODCID),
                                     data + 1, size - 1);
        ERR_clear_error();
        return 0;
    }
    struct qtls_quic_aead *aead;
    struct qtls_quic_hp *hp;
    packet_keys(mode, &aead, &hp);
    size_t pn_offset = data[1], len = size - 2, hdr_len = 0, payload_len = 0;
    uint8_t *pkt = malloc(len ? len : 1); /* exactly the packet: ASan sees any overread */
    if (pkt == NULL)
        abort();
    memcpy(pkt, data + 2, len);
    uint64_t pn = 0;
    if (qtls_quic_packet_unprotect(aead, hp, mode & PACKET_SEEN_1000 ? 1000 : -1, pkt, len,
                                   pn_offset, &pn, &hdr_len, &payload_len) &&
        (hdr_len > len || payload_len + QTLS_QUIC_TAG_LEN > len - hdr_len)) {
        fprintf(stderr, "unprotect: header %zu + payload %zu outside a %zu-byte packet\n",
                hdr_len, payload_len, len);
        abort();
    }
    free(pkt);
    ERR_clear_error();
    return 0;
}
