/*
 * fuzz_token's input format, shared with gen_seeds: mode (bit 0: a Retry
 * token, else a regular NEW_TOKEN token; bit 1: the client's address is
 * IPv6), then the token. Secret, address, connection ID and clock are fixed,
 * so that gen_seeds' tokens verify.
 */
#ifndef QTLS_FUZZ_TOKEN_H
#define QTLS_FUZZ_TOKEN_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

enum { TOKEN_RETRY = 1, TOKEN_IPV6 = 2 };
static const uint8_t TOKEN_SECRET[32] = {0x71, 0x72, 0x73};
#define TOKEN_ISSUED ((ngtcp2_tstamp)1700000000 * NGTCP2_SECONDS)
#define TOKEN_NOW (TOKEN_ISSUED + NGTCP2_SECONDS)
#define TOKEN_TIMEOUT (10 * NGTCP2_SECONDS)

static inline ngtcp2_socklen token_addr(uint8_t mode, ngtcp2_sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    if (mode & TOKEN_IPV6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
        in6->sin6_family = AF_INET6;
        in6->sin6_addr.s6_addr[15] = 1;
        in6->sin6_port = htons(4433);
        return sizeof(*in6);
    }
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    in->sin_family = AF_INET;
    in->sin_addr.s_addr = htonl(0x7f000001);
    in->sin_port = htons(4433);
    return sizeof(*in);
}

static inline void token_cid(ngtcp2_cid *cid, uint8_t fill)
{
    uint8_t b[8];
    memset(b, fill, sizeof(b));
    ngtcp2_cid_init(cid, b, sizeof(b));
}

#ifdef QTLS_FUZZ_SEEDS
void seed_put(const char *target, const char *name, const uint8_t *a, size_t alen);

static inline void token_seeds(void)
{
    for (uint8_t mode = 0; mode < 4; mode++) {
        ngtcp2_sockaddr_storage ss;
        ngtcp2_socklen sl = token_addr(mode, &ss);
        ngtcp2_cid scid, odcid;
        token_cid(&scid, 0x5c);
        token_cid(&odcid, 0x0d);
        uint8_t in[1 + 256] = {mode};
        ngtcp2_ssize n =
            mode & TOKEN_RETRY
                ? ngtcp2_crypto_generate_retry_token(in + 1, TOKEN_SECRET, sizeof(TOKEN_SECRET),
                                                     NGTCP2_PROTO_VER_V1, (ngtcp2_sockaddr *)&ss,
                                                     sl, &scid, &odcid, TOKEN_ISSUED)
                : ngtcp2_crypto_generate_regular_token(in + 1, TOKEN_SECRET,
                                                       sizeof(TOKEN_SECRET),
                                                       (ngtcp2_sockaddr *)&ss, sl, TOKEN_ISSUED);
        if (n <= 0 || (size_t)n > sizeof(in) - 1)
            abort();
        char name[32];
        snprintf(name, sizeof(name), "%s-%s", mode & TOKEN_RETRY ? "retry" : "regular",
                 mode & TOKEN_IPV6 ? "ipv6" : "ipv4");
        seed_put("fuzz_token", name, in, 1 + (size_t)n);
    }
}
#endif

#endif
