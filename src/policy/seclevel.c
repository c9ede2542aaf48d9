/*
 * Security levels (SSL_CTX_set_security_level(3)) with OpenSSL 3.0's rules where they matter in
 * TLS 1.3 for QUIC:
 *
 *   - certificates we load (SSL_CTX_use_certificate and every loader, chain certificates too):
 *     the key's security bits (EVP_PKEY_get_security_bits) and, unless self-signed, the bits of
 *     the signature's digest, against the level's minimum (level 1: 80, 2: 112, 3: 128, 4: 192,
 *     5: 256), failing with SSL_R_EE_KEY_TOO_SMALL, SSL_R_CA_KEY_TOO_SMALL or
 *     SSL_R_CA_MD_TOO_WEAK as OpenSSL's ssl_security_cert does (RSA-1024 passes level 1 and
 *     fails level 2, as upstream);
 *   - the peer's chain: the level is the X509_VERIFY_PARAM auth level of the verification
 *     (cert.c), so libcrypto rejects small keys and weak digests with X509_V_ERR_EE_KEY_TOO_SMALL
 *     and friends, exactly as OpenSSL's ssl_verify_cert_chain arranges;
 *   - SSL_CTX_set0_tmp_dh_pkey (dh.c): SSL_R_DH_KEY_TOO_SMALL;
 *   - key-exchange groups (OpenSSL's tls_group_allowed): a group below the level is neither
 *     offered nor accepted, so level 4 (192 bits) leaves P-384 and X448, and level 5 none.
 *
 * The default level is 1, as upstream OpenSSL 3.0 built without a configured default. A security
 * callback replaces the default rules for every check above, as in OpenSSL.
 */
#include "internal.h"
#include "crypto/crypto.h"
#include "policy/policy.h"

/* OpenSSL's minbits_table: the bits of security each level requires. */
static const int min_bits[] = {0, 80, 112, 128, 192, 256};

static const struct seclevel *sec_of(const SSL *s, const SSL_CTX *ctx)
{
    return s != NULL ? &s->sec : &ctx->sec;
}

int seclevel_of(const SSL *s, const SSL_CTX *ctx)
{
    int level = sec_of(s, ctx)->level;
    return level < 0 ? 0 : level > 5 ? 5 : level;
}

/* OpenSSL's ssl_security_default_callback, for the operations TLS 1.3 in qtls asks about. */
static int default_allow(const SSL *s, const SSL_CTX *ctx, int op, int bits)
{
    int level = seclevel_of(s, ctx);
    if (level == 0)
        return 1;
    if (op == SSL_SECOP_TICKET)
        return level < 3;
    return bits >= min_bits[level];
}

int seclevel_allow(const SSL *s, const SSL_CTX *ctx, int op, int bits, int nid, void *other)
{
    const struct seclevel *sec = sec_of(s, ctx);
    if (sec->cb != NULL)
        return sec->cb(s, s != NULL ? s->ctx : ctx, op, bits, nid, other, sec->ex);
    return default_allow(s, ctx, op, bits);
}

int seclevel_cert(const SSL *s, const SSL_CTX *ctx, X509 *x, int is_ee)
{
    EVP_PKEY *pkey = X509_get0_pubkey(x);
    int bits = pkey != NULL ? EVP_PKEY_get_security_bits(pkey) : -1;
    if (!seclevel_allow(s, ctx, is_ee ? SSL_SECOP_EE_KEY : SSL_SECOP_CA_KEY, bits, 0, x))
        return is_ee ? SSL_R_EE_KEY_TOO_SMALL : SSL_R_CA_KEY_TOO_SMALL;
    /* A self-signed certificate's own signature is not checked (ssl_security_cert_sig). */
    if ((X509_get_extension_flags(x) & EXFLAG_SS) != 0)
        return 1;
    int nid = NID_undef, pknid = NID_undef, sig_bits = -1;
    if (!X509_get_signature_info(x, &nid, &pknid, &sig_bits, NULL))
        sig_bits = -1;
    if (!seclevel_allow(s, ctx, SSL_SECOP_CA_MD, sig_bits, nid != NID_undef ? nid : pknid, x))
        return SSL_R_CA_MD_TOO_WEAK;
    return 1;
}

int seclevel_check_cert(const SSL *s, const SSL_CTX *ctx, X509 *x, int is_ee)
{
    if (x == NULL)
        return 1; /* the caller reports the missing certificate */
    int r = seclevel_cert(s, ctx, x, is_ee);
    if (r == 1)
        return 1;
    ERR_raise_data(ERR_LIB_SSL, r, "security level %d", seclevel_of(s, ctx));
    return 0;
}

int seclevel_check_chain(const SSL *s, const SSL_CTX *ctx, STACK_OF(X509) *chain)
{
    for (int i = 0; i < sk_X509_num(chain); i++)
        if (!seclevel_check_cert(s, ctx, sk_X509_value(chain, i), 0))
            return 0;
    return 1;
}

/* The group's security bits are OpenSSL's (its TLS_GROUP_INFO secbits), in the table. */
int seclevel_group_ok(const SSL *c, uint16_t id)
{
    const struct group *g = group_by_id(id);
    uint16_t gid = id;
    return g != NULL && seclevel_allow(c, NULL, SSL_SECOP_CURVE_SUPPORTED, g->secbits, g->nid,
                                       &gid);
}

/* ------------------------------------------------------------------ */
/* The public functions                                                */
/* ------------------------------------------------------------------ */

void SSL_CTX_set_security_level(SSL_CTX *ctx, int level) { ctx->sec.level = level; }

int SSL_CTX_get_security_level(const SSL_CTX *ctx) { return ctx->sec.level; }

void SSL_set_security_level(SSL *s, int level) { s->sec.level = level; }

int SSL_get_security_level(const SSL *s) { return s->sec.level; }

void SSL_CTX_set_security_callback(SSL_CTX *ctx, qtls_sec_cb cb) { ctx->sec.cb = cb; }

qtls_sec_cb SSL_CTX_get_security_callback(const SSL_CTX *ctx) { return ctx->sec.cb; }

void SSL_set_security_callback(SSL *s, qtls_sec_cb cb) { s->sec.cb = cb; }

qtls_sec_cb SSL_get_security_callback(const SSL *s) { return s->sec.cb; }

void SSL_CTX_set0_security_ex_data(SSL_CTX *ctx, void *ex) { ctx->sec.ex = ex; }

void *SSL_CTX_get0_security_ex_data(const SSL_CTX *ctx) { return ctx->sec.ex; }

void SSL_set0_security_ex_data(SSL *s, void *ex) { s->sec.ex = ex; }

void *SSL_get0_security_ex_data(const SSL *s) { return s->sec.ex; }
