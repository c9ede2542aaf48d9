/*
 * The ngtcp2 backend's token verification (src/ngtcp2/tokens.c) on a token
 * from the network: a Retry token (its original Destination Connection ID
 * must come back in bounds) or a regular NEW_TOKEN token. Format in
 * fuzz_token.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include <openssl/err.h>

#include "fuzz_token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    ngtcp2_sockaddr_storage ss;
    ngtcp2_socklen sl = token_addr(mode, &ss);
    uint8_t *token = malloc(size); /* exactly the token: ASan sees any overread */
    if (token == NULL)
        abort();
    memcpy(token, data + 1, size - 1);
    if (mode & TOKEN_RETRY) {
        ngtcp2_cid scid, odcid;
        token_cid(&scid, 0x5c);
        memset(&odcid, 0, sizeof(odcid));
        if (ngtcp2_crypto_verify_retry_token(&odcid, token, size - 1, TOKEN_SECRET,
                                             sizeof(TOKEN_SECRET), NGTCP2_PROTO_VER_V1,
                                             (ngtcp2_sockaddr *)&ss, sl, &scid, TOKEN_TIMEOUT,
                                             TOKEN_NOW) == 0 &&
            odcid.datalen > NGTCP2_MAX_CIDLEN) {
            fprintf(stderr, "verify_retry_token: a %zu-byte original DCID\n", odcid.datalen);
            abort();
        }
    } else {
        (void)ngtcp2_crypto_verify_regular_token(token, size - 1, TOKEN_SECRET,
                                                 sizeof(TOKEN_SECRET), (ngtcp2_sockaddr *)&ss,
                                                 sl, TOKEN_TIMEOUT, TOKEN_NOW);
    }
    free(token);
    ERR_clear_error();
    return 0;
}
