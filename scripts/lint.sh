#!/bin/bash
# lint.sh OBJDIR: the three structural rules of src/ (issue 10), checked from the sources and the
# compiled objects. Prints one cmocka-style summary per rule, so that make check counts each
# rule as a test (scripts/run-tests.sh), and exits non-zero if a rule is broken.
#
#  1. writer fields: no file but bytes.c/bytes.h writes a field of struct wr (buf, len, cap,
#     failed, fixed); they go through wr_* (wr_fail, wr_rewind, wr_truncate, wr_at ...).
#  2. layers: no file calls a function defined in a file of a higher layer (the list below,
#     bottom first; calls within a layer are free). Calls are read from the objects with nm:
#     an undefined symbol of one object that another object defines.
#  3. EVP: libcrypto's EVP operations (hashes, MACs, ciphers, key exchange, signatures) are
#     called from crypto.c alone (issue 10), and from quic_crypto.c, the public QUIC packet
#     protection module, which keeps its own. Elsewhere only the EVP_PKEY object calls below
#     (lifetimes and questions about a key) appear.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OBJ=${1:-build/obj}

# Layer, then the files (src/NAME.c) in it. Calls go down this list, never up.
LAYERS='
1  base        bytes err clock slot_cache
2  crypto      crypto suites init compress
3  keysched    keysched quic_crypto
4  glue        callbacks quic
5  secrets     secrets session ticket
6  policy      certset sigalgs ca_list ocsp sct client_hello seclevel dh cipher_lists cert_comp
7  certs       cert
8  resumption  resumption
9  extensions  extensions custom_ext
10 messages    msg nst
11 states      client server
12 driver      handshake
13 api         ssl ctx compat_tcp conf quic_tls35
'
# A new src/*.c must be placed here (lint names it otherwise).
# Known upward calls, each to be removed by the work named (none left; do not add one):
ALLOWED_UP=''

failed=0
report() { # report RULE N_PROBLEMS
    echo "[ RUN      ] lint_$1"
    if [ "$2" -eq 0 ]; then
        echo "[       OK ] lint_$1"
        echo "[  PASSED  ] 1 test(s)."
    else
        echo "[  FAILED  ] lint_$1"
        echo "[  FAILED  ] 1 test(s), listed below:"
        echo "[  FAILED  ] lint_$1"
        failed=1
    fi
}

# ---- 1. writer fields ----
# The names declared struct wr anywhere in src/ (variables, parameters, struct members) ...
names=$(grep -ho 'struct wr[ *]*[A-Za-z_][A-Za-z0-9_]*\( *\[[^]]*\]\)\?\( *= *[^,;)]*\)\?\(, *\**[A-Za-z_][A-Za-z0-9_]*\)*' \
            src/*.c src/*.h |
        sed -e 's/^struct wr//' -e 's/=[^,]*//g' -e 's/\[[^]]*\]//g' -e 's/[ *]//g' | tr ',' '\n' |
        grep -v '^$' | sort -u | paste -sd'|' -)
# ... and any assignment to a writer field through one of them, outside bytes.c/bytes.h.
hits=$(grep -nE "(^|[^A-Za-z0-9_])($names)(\[[^]]*\])? *(\.|->) *(buf|len|cap|failed|fixed) *([-+*/|&^]?=[^=]|\+\+|--)" \
           $(ls src/*.c src/*.h | grep -v '^src/bytes\.[ch]$') || true)
n1=0
if [ -n "$hits" ]; then
    echo "lint: writer fields written outside bytes.c (use the wr_* helpers):"
    echo "$hits" | sed 's/^/  /'
    n1=$(echo "$hits" | wc -l)
fi
report writer_fields_only_in_bytes_c "$n1"

# ---- 2. layers ----
n2=0
if ! ls "$OBJ"/*.o > /dev/null 2>&1; then
    echo "lint: no objects in $OBJ (build first)"
    n2=1
else
    out=$(for o in "$OBJ"/*.o; do
              f=$(basename "$o" .o)
              nm --defined-only -g "$o" | awk -v f="$f" 'NF == 3 { print "D", f, $3 }'
              nm -u "$o" | awk -v f="$f" '{ print "U", f, $NF }'
          done |
          awk -v layers="$LAYERS" -v allowed="$ALLOWED_UP" '
            BEGIN {
                n = split(layers, lines, "\n")
                for (i = 1; i <= n; i++) {
                    k = split(lines[i], w, " ")
                    for (j = 3; j <= k; j++) { layer[w[j]] = w[1]; lname[w[j]] = w[2] }
                }
                m = split(allowed, a, " ")
                for (i = 1; i <= m; i++) ok[a[i]] = 1
            }
            $1 == "D" { def[$3] = $2; next }
            { use[++u] = $2 " " $3 }
            END {
                for (i = 1; i <= u; i++) {
                    split(use[i], x, " "); from = x[1]; sym = x[2]
                    if (!(sym in def) || def[sym] == from) continue
                    to = def[sym]
                    if (!(from in layer)) { missing[from] = 1; continue }
                    if (!(to in layer)) { missing[to] = 1; continue }
                    if (layer[to] + 0 > layer[from] + 0 && !((from ">" to) in ok))
                        bad[from " (" lname[from] ") -> " to " (" lname[to] "): " sym] = 1
                }
                for (f in missing) print "src/" f ".c is in no layer: add it to LAYERS in scripts/lint.sh"
                for (b in bad) print "calls up a layer: " b
            }' | sort)
    if [ -n "$out" ]; then
        echo "lint: layer order broken:"
        echo "$out" | sed 's/^/  /'
        n2=$(echo "$out" | wc -l)
    fi
fi
report calls_go_down_the_layers "$n2"

# ---- 3. EVP behind crypto.c ----
EVP_FILES='crypto suites quic_crypto'
EVP_KEY_OBJECT='EVP_PKEY_(free|up_ref|is_a|new|get_size|get_security_bits|set1_DH)'
n3=0
out=$(for o in "$OBJ"/*.o; do
          f=$(basename "$o" .o)
          case " $EVP_FILES " in *" $f "*) continue ;; esac
          nm -u "$o" | awk -v f="$f" '$NF ~ /^EVP_/ { print "src/" f ".c calls " $NF }'
      done | grep -vE " calls $EVP_KEY_OBJECT\$" | sort)
if [ -n "$out" ]; then
    echo "lint: EVP called outside crypto.c (add a crypto_* function there):"
    echo "$out" | sed 's/^/  /'
    n3=$(echo "$out" | wc -l)
fi
report evp_only_in_crypto_c "$n3"

exit $failed
