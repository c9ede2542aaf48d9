#!/bin/bash
# lint.sh OBJDIR: the structural rules of src/, checked from the sources and the compiled objects.
# Prints one cmocka-style summary per rule, so that make check counts each rule as a test
# (scripts/run-tests.sh), and exits non-zero if a rule is broken.
#
# src/ has one folder per layer; a file's layer is its folder's place in FOLDERS below (bottom
# first), so a new file needs no edit here. src/ngtcp2/ is a library of its own and not checked.
#
#  1. writer fields: no file but base/bytes.c and base/bytes.h writes a field of struct wr (buf,
#     len, cap, failed, fixed); they go through wr_* (wr_fail, wr_rewind, wr_truncate, wr_at ...).
#  2. layers: no file calls a function defined in a folder above its own. Calls are read from the
#     objects with nm: an undefined symbol of one object that another object defines.
#  3. no cycles: no two files call each other, directly or around a loop, even within a folder.
#  4. includes: no file includes the header of a folder above its own (src/internal.h, the shared
#     objects, is below every folder).
#  5. EVP: libcrypto's EVP operations (hashes, MACs, ciphers, key exchange, signatures) are
#     called from crypto/crypto.c and crypto/suites.c alone, and from crypto/quic_crypto.c, the
#     public QUIC packet protection module, which keeps its own. Elsewhere only the EVP_PKEY
#     object calls below (lifetimes and questions about a key) appear.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OBJ=${1:-build/obj}

# The folders of src/, bottom first. Calls and includes go down this list, never up.
FOLDERS='base crypto session policy transport handshake api'

rank() { # rank FOLDER: its place in FOLDERS (1 = bottom), 0 if it is not there
    local i=1 f
    for f in $FOLDERS; do
        [ "$f" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    echo 0
}

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

# The library's sources and headers, and its objects as FOLDER/NAME (src/ngtcp2/ left out).
SOURCES=$(ls src/*.h src/*/*.c src/*/*.h | grep -v '^src/ngtcp2/')
objects() { ls "$OBJ"/*/*.o 2> /dev/null | grep -v "^$OBJ/ngtcp2/"; }

# ---- 1. writer fields ----
# The names declared struct wr anywhere in src/ (variables, parameters, struct members) ...
names=$(grep -ho 'struct wr[ *]*[A-Za-z_][A-Za-z0-9_]*\( *\[[^]]*\]\)\?\( *= *[^,;)]*\)\?\(, *\**[A-Za-z_][A-Za-z0-9_]*\)*' \
            $SOURCES |
        sed -e 's/^struct wr//' -e 's/=[^,]*//g' -e 's/\[[^]]*\]//g' -e 's/[ *]//g' | tr ',' '\n' |
        grep -v '^$' | sort -u | paste -sd'|' -)
# ... and any assignment to a writer field through one of them, outside bytes.c/bytes.h.
hits=$(grep -nE "(^|[^A-Za-z0-9_])($names)(\[[^]]*\])? *(\.|->) *(buf|len|cap|failed|fixed) *([-+*/|&^]?=[^=]|\+\+|--)" \
           $(echo "$SOURCES" | grep -v '^src/base/bytes\.[ch]$') || true)
n1=0
if [ -n "$hits" ]; then
    echo "lint: writer fields written outside base/bytes.c (use the wr_* helpers):"
    echo "$hits" | sed 's/^/  /'
    n1=$(echo "$hits" | wc -l)
fi
report writer_fields_only_in_bytes_c "$n1"

# ---- 2. and 3. calls: down the folders, and no loop between files ----
# One line per call from one file to another: "FROM_FOLDER/FILE TO_FOLDER/FILE SYMBOL".
calls=''
if [ -z "$(objects)" ]; then
    echo "lint: no objects in $OBJ (build first)"
else
    calls=$(for o in $(objects); do
                f=${o#"$OBJ"/}; f=${f%.o}
                nm --defined-only -g "$o" | awk -v f="$f" 'NF == 3 { print "D", f, $3 }'
                nm -u "$o" | awk -v f="$f" '{ print "U", f, $NF }'
            done |
            awk '$1 == "D" { def[$3] = $2; next }
                 { use[++u] = $2 " " $3 }
                 END { for (i = 1; i <= u; i++) { split(use[i], x, " ")
                           if ((x[2] in def) && def[x[2]] != x[1]) print x[1], def[x[2]], x[2] } }' |
            sort)
fi
n2=0
[ -z "$(objects)" ] && n2=1
out=$(echo "$calls" | while read -r from to sym; do
          [ -z "$from" ] && continue
          rf=$(rank "${from%%/*}"); rt=$(rank "${to%%/*}")
          if [ "$rf" -eq 0 ] || [ "$rt" -eq 0 ]; then
              echo "src/${from%%/*}/ or src/${to%%/*}/ is not in FOLDERS in scripts/lint.sh"
          elif [ "$rt" -gt "$rf" ]; then
              echo "calls up a layer: $from.c -> $to.c: $sym"
          fi
      done | sort -u)
if [ -n "$out" ]; then
    echo "lint: layer order broken:"
    echo "$out" | sed 's/^/  /'
    n2=$(echo "$out" | wc -l)
fi
report calls_go_down_the_layers "$n2"

# A loop is a pair of files that reach each other; tsort names the files of any loop it finds.
n3=0
[ -z "$(objects)" ] && n3=1
loops=$(echo "$calls" | awk 'NF == 3 { print $1, $2 }' | sort -u | tsort 2>&1 > /dev/null |
        grep -v 'input contains a loop' | sed 's/^tsort: //' | sort -u)
if [ -n "$loops" ]; then
    echo "lint: files that call each other (around a loop):"
    echo "$loops" | sed 's/^/  /'
    n3=$(echo "$loops" | wc -l)
fi
report no_call_loops "$n3"

# ---- 4. includes go down the folders too ----
out=$(for f in $SOURCES; do
          rel=${f#src/}
          case $rel in */*) ;; *) continue ;; esac
          rf=$(rank "${rel%%/*}")
          grep -o '^#include "[a-z_]*/[a-z_0-9]*\.h"' "$f" | sed 's/^#include "//; s/"$//' |
              while read -r h; do
                  rh=$(rank "${h%%/*}")
                  [ "$rh" -gt "$rf" ] && echo "$f includes $h (a folder above its own)"
              done
      done | sort -u)
n4=0
if [ -n "$out" ]; then
    echo "lint: includes go up a layer:"
    echo "$out" | sed 's/^/  /'
    n4=$(echo "$out" | wc -l)
fi
report includes_go_down_the_layers "$n4"

# ---- 5. EVP behind crypto/crypto.c ----
EVP_FILES='crypto/crypto crypto/suites crypto/quic_crypto crypto/kex crypto/mlkem'
EVP_KEY_OBJECT='EVP_PKEY_(free|up_ref|is_a|new|get_size|get_security_bits|set1_DH)'
n5=0
out=$(for o in $(objects); do
          f=${o#"$OBJ"/}; f=${f%.o}
          case " $EVP_FILES " in *" $f "*) continue ;; esac
          nm -u "$o" | awk -v f="$f" '$NF ~ /^EVP_/ { print "src/" f ".c calls " $NF }'
      done | grep -vE " calls $EVP_KEY_OBJECT\$" | sort)
if [ -n "$out" ]; then
    echo "lint: EVP called outside crypto/crypto.c (add a crypto_* function there):"
    echo "$out" | sed 's/^/  /'
    n5=$(echo "$out" | wc -l)
fi
report evp_only_in_crypto_c "$n5"

exit $failed
