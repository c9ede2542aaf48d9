# qtls: a TLS 1.3 library for QUIC on OpenSSL 3 libcrypto.
# make | make check | make check SANITIZE=1 | make demo | make install PREFIX=...

BUILD   ?= build
PREFIX  ?= /usr/local
CC      ?= cc
SANITIZE ?=

OPT      = -O2 -g
WARN     = -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
CPPFLAGS = -Iinclude -Isrc -D_GNU_SOURCE -DOPENSSL_SUPPRESS_DEPRECATED
ifeq ($(SANITIZE),1)
  OPT   = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  override BUILD := $(BUILD)-san
endif
CFLAGS_ALL = -std=c11 $(OPT) $(WARN) -fPIC $(CFLAGS)
LIBCRYPTO  = $(shell pkg-config --libs libcrypto 2>/dev/null || echo -lcrypto)

SRCS = $(sort $(wildcard src/*.c))
OBJS = $(SRCS:src/%.c=$(BUILD)/obj/%.o)
TEST_SRCS = $(sort $(wildcard tests/test_*.c))
TESTS = $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
TEST_HELPERS = $(sort $(wildcard tests/helpers/*.c))

.PHONY: all check demo install clean deps bogo interop
all: $(BUILD)/libqtls.a $(BUILD)/libqtls.so $(BUILD)/qtls.pc

$(BUILD)/obj/%.o: src/%.c $(wildcard src/*.h include/qtls/*.h) | $(BUILD)/obj
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/obj $(BUILD)/tests:
	mkdir -p $@

$(BUILD)/libqtls.a: $(OBJS)
	rm -f $@ && ar rcs $@ $^

# Only the OpenSSL-compatible surface is exported; internals stay local.
$(BUILD)/libqtls.so: $(OBJS) src/libqtls.map
	$(CC) -shared -o $@ $(OBJS) $(OPT) -Wl,-soname,libqtls.so.0 -Wl,-Bsymbolic \
	    -Wl,--version-script=src/libqtls.map $(LIBCRYPTO)

$(BUILD)/qtls.pc: qtls.pc.in | $(BUILD)/obj
	sed -e 's|@PREFIX@|$(PREFIX)|' $< > $@

$(BUILD)/tests/%: tests/%.c $(TEST_HELPERS) $(wildcard tests/helpers/*.h) $(BUILD)/libqtls.a | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Itests/helpers $(CFLAGS_ALL) -o $@ $< $(TEST_HELPERS) \
	    $(BUILD)/libqtls.a $(LIBCRYPTO) -lcmocka $(TEST_LIBS_$*)

TEST_LIBS_test_gnutls = -lgnutls

# ngtcp2 crypto backend (src/ngtcp2/, include/qtls/ngtcp2_crypto_qtls.h): libqtls_ngtcp2, a
# library of its own beside libqtls, built and tested only where libngtcp2-dev (0.12) is
# installed. It implements ngtcp2_crypto.h, as libngtcp2_crypto_gnutls does.
HAVE_NGTCP2 := $(shell pkg-config --exists libngtcp2 2>/dev/null && echo 1)
NG_SRCS = $(sort $(wildcard src/ngtcp2/*.c))
NG_OBJS = $(NG_SRCS:src/ngtcp2/%.c=$(BUILD)/obj/ngtcp2/%.o)
NG_TEST = $(BUILD)/tests/test_ngtcp2_backend
ifeq ($(HAVE_NGTCP2),1)
NGTCP2_CFLAGS := $(shell pkg-config --cflags libngtcp2)
NGTCP2_LIBS := $(shell pkg-config --libs libngtcp2)
all: $(BUILD)/libqtls_ngtcp2.a $(BUILD)/libqtls_ngtcp2.so $(BUILD)/qtls_ngtcp2.pc
TEST_LIBS_test_ngtcp2_backend = $(BUILD)/libqtls_ngtcp2.a $(BUILD)/libqtls.a $(NGTCP2_LIBS) \
    $(LIBCRYPTO) -ldl
$(NG_TEST): $(BUILD)/libqtls_ngtcp2.a
else
TESTS := $(filter-out $(NG_TEST),$(TESTS))
endif

$(BUILD)/obj/ngtcp2/%.o: src/ngtcp2/%.c $(wildcard src/ngtcp2/*.h) $(wildcard include/qtls/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(NGTCP2_CFLAGS) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libqtls_ngtcp2.a: $(NG_OBJS)
	rm -f $@ && ar rcs $@ $^

# Exports ngtcp2_crypto.h and qtls/ngtcp2_crypto_qtls.h only; needs libqtls.so.0 at run time.
$(BUILD)/libqtls_ngtcp2.so: $(NG_OBJS) src/ngtcp2/libqtls_ngtcp2.map $(BUILD)/libqtls.so
	$(CC) -shared -o $@ $(NG_OBJS) $(OPT) -Wl,-soname,libqtls_ngtcp2.so.0 -Wl,-Bsymbolic \
	    -Wl,--version-script=src/ngtcp2/libqtls_ngtcp2.map -L$(BUILD) -lqtls $(NGTCP2_LIBS) \
	    $(LIBCRYPTO)

$(BUILD)/qtls_ngtcp2.pc: qtls_ngtcp2.pc.in | $(BUILD)/obj
	sed -e 's|@PREFIX@|$(PREFIX)|' $< > $@

# HTTP/3 example client and server (examples/h3*.c) on ngtcp2 + nghttp3 + libqtls_ngtcp2,
# built where pkg-config finds libngtcp2 and libnghttp3. make check runs them end to end
# against each other and ngtcp2's GnuTLS examples (tests/h3/e2e.sh, through a launcher
# that names this build); make demo shows them (scripts/demo.sh).
HAVE_H3 := $(shell pkg-config --exists libngtcp2 libnghttp3 2>/dev/null && echo 1)
H3_BINS = $(BUILD)/h3client $(BUILD)/h3server
H3_TEST = $(BUILD)/tests/test_h3_e2e
ifeq ($(HAVE_H3)$(HAVE_NGTCP2),11)
H3_CFLAGS := $(shell pkg-config --cflags libngtcp2 libnghttp3)
H3_LIBS := $(shell pkg-config --libs libngtcp2 libnghttp3)
all: $(H3_BINS)
TESTS += $(H3_TEST)
endif

$(BUILD)/h3%: examples/h3%.c examples/h3common.c examples/h3common.h $(BUILD)/libqtls_ngtcp2.a \
    $(BUILD)/libqtls.a
	$(CC) -Iinclude/compat -Iinclude -D_GNU_SOURCE $(H3_CFLAGS) $(CFLAGS_ALL) -o $@ $< \
	    examples/h3common.c $(BUILD)/libqtls_ngtcp2.a $(BUILD)/libqtls.a $(H3_LIBS) $(LIBCRYPTO)

$(H3_TEST): tests/h3/e2e.sh scripts/h3peers.sh $(H3_BINS) | $(BUILD)/tests
	printf '#!/bin/sh\nexec "%s/tests/h3/e2e.sh" "%s"\n' "$(CURDIR)" "$(CURDIR)/$(BUILD)" > $@
	chmod +x $@

deps:
	@scripts/deps.sh

check: deps all $(TESTS)
ifneq ($(HAVE_NGTCP2),1)
	@echo "skipping tests/test_ngtcp2_backend.c and libqtls_ngtcp2: libngtcp2 not found" \
	    "by pkg-config (apt-get install libngtcp2-dev)"
endif
	@scripts/gen-certs.sh $(BUILD)/certs
	@QTLS_CERTS=$(CURDIR)/$(BUILD)/certs scripts/run-tests.sh $(TESTS)

$(BUILD)/demo: examples/demo.c $(TEST_HELPERS) $(BUILD)/libqtls.a
	$(CC) $(CPPFLAGS) -Itests/helpers $(CFLAGS_ALL) -o $@ $< $(TEST_HELPERS) \
	    $(BUILD)/libqtls.a $(LIBCRYPTO)

# In-memory handshakes (examples/demo.c), then HTTP/3 over UDP loopback with a table.
demo: deps all $(BUILD)/demo
	@scripts/gen-certs.sh $(BUILD)/certs
	@QTLS_CERTS=$(CURDIR)/$(BUILD)/certs scripts/demo.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/qtls/compat/openssl
	install -m 644 $(BUILD)/libqtls.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libqtls.so $(DESTDIR)$(PREFIX)/lib/libqtls.so.0
	ln -sf libqtls.so.0 $(DESTDIR)$(PREFIX)/lib/libqtls.so
	install -m 644 include/qtls/quic.h include/qtls/quic_crypto.h $(DESTDIR)$(PREFIX)/include/qtls/
	install -m 644 include/compat/openssl/ssl.h $(DESTDIR)$(PREFIX)/include/qtls/compat/openssl/
	sed -e 's|@PREFIX@|$(PREFIX)|' qtls.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/qtls.pc
ifeq ($(HAVE_NGTCP2),1)
	install -m 644 $(BUILD)/libqtls_ngtcp2.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libqtls_ngtcp2.so $(DESTDIR)$(PREFIX)/lib/libqtls_ngtcp2.so.0
	ln -sf libqtls_ngtcp2.so.0 $(DESTDIR)$(PREFIX)/lib/libqtls_ngtcp2.so
	install -m 644 include/qtls/ngtcp2_crypto_qtls.h $(DESTDIR)$(PREFIX)/include/qtls/
	sed -e 's|@PREFIX@|$(PREFIX)|' qtls_ngtcp2.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/qtls_ngtcp2.pc
endif

clean:
	rm -rf build build-*

# BoGo: BoringSSL's TLS test runner, built from Debian's packages, in QUIC mode
# against the shim in tests/bogo (see tests/bogo/README.md). Last line:
# "N passed, N failed, N skipped".
.PHONY: bogo
# ngtcp2 0.12.1's own quictls backend and examples, unmodified, on qtls (tests/ngtcp2/run.sh)
interop: deps
	@tests/ngtcp2/run.sh

bogo: deps $(BUILD)/libqtls.a
	@QTLS_BOGO_LIB=$(CURDIR)/$(BUILD)/libqtls.a BOGO_CFLAGS="$(OPT)" tests/bogo/run.sh

# Handshake benchmark (bench/README.md): OpenSSL 3.0 libssl, GnuTLS 3.7 in QUIC mode and
# qtls, same configuration, interleaved rounds, one program per library (libssl and libqtls
# define the same SSL_* symbols). make bench [CALLGRIND=1] [ROUNDS=9] [N=2000]
BENCH_DIR    = $(BUILD)/bench
BENCH_CFLAGS = -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE $(CFLAGS)
BENCH_DEPS   = bench/bench_common.c bench/bench_common.h
.PHONY: bench
bench: deps $(BENCH_DIR)/bench_openssl $(BENCH_DIR)/bench_gnutls $(BENCH_DIR)/bench_qtls \
    $(BENCH_DIR)/libheapcount.so
	@bench/run.sh $(BENCH_DIR)

$(BENCH_DIR)/bench_openssl: bench/bench_openssl.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $< bench/bench_common.c -lssl $(LIBCRYPTO)

$(BENCH_DIR)/bench_gnutls: bench/bench_gnutls.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $< bench/bench_common.c -lgnutls

$(BENCH_DIR)/bench_qtls: bench/bench_qtls.c $(BENCH_DEPS) $(BUILD)/libqtls.a
	@mkdir -p $(@D)
	$(CC) -Iinclude/compat -Iinclude $(BENCH_CFLAGS) -o $@ $< bench/bench_common.c \
	    $(BUILD)/libqtls.a $(LIBCRYPTO)

$(BENCH_DIR)/libheapcount.so: bench/heapcount.c
	@mkdir -p $(@D)
	$(CC) -O2 -g $(WARN) -shared -fPIC -o $@ $<

# libFuzzer targets (fuzz/*.c), a build of their own under build-fuzz with clang, ASan and
# UBSan; not part of make check. make fuzz [FUZZ_SECONDS=30] builds them, writes seed corpora
# from a real handshake (fuzz/gen_seeds.c), runs each target for FUZZ_SECONDS and fails if any
# crashed or leaked (reproducers: build-fuzz/crash/<target>-*).
FUZZ_SECONDS ?= 30
FUZZ_BUILD    = build-fuzz
FUZZ_CC       = clang
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS   = -std=c11 -O1 -g -fno-omit-frame-pointer $(WARN) $(FUZZ_SAN) \
    -DQTLS_FUZZ_CERTS='"$(CURDIR)/$(FUZZ_BUILD)/certs"'
FUZZ_TARGETS  = fuzz_server fuzz_client fuzz_session fuzz_provide
FUZZ_BINS     = $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%)
FUZZ_OBJS     = $(SRCS:src/%.c=$(FUZZ_BUILD)/obj/%.o) $(FUZZ_BUILD)/obj/mock_quic.o

$(FUZZ_BUILD)/obj/%.o: src/%.c $(wildcard src/*.h include/qtls/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/obj/mock_quic.o: tests/helpers/mock_quic.c tests/helpers/mock_quic.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_common.h $(FUZZ_OBJS)
	$(FUZZ_CC) $(CPPFLAGS) -Itests/helpers $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< \
	    $(FUZZ_OBJS) $(LIBCRYPTO)

$(FUZZ_BUILD)/gen_seeds: fuzz/gen_seeds.c fuzz/fuzz_common.h $(FUZZ_OBJS)
	$(FUZZ_CC) $(CPPFLAGS) -Itests/helpers $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -o $@ $< \
	    $(FUZZ_OBJS) $(LIBCRYPTO)

.PHONY: fuzz
fuzz: $(FUZZ_BINS) $(FUZZ_BUILD)/gen_seeds
	@scripts/gen-certs.sh $(FUZZ_BUILD)/certs
	@mkdir -p $(FUZZ_BUILD)/crash $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/corpus/%)
	@QTLS_CERTS=$(CURDIR)/$(FUZZ_BUILD)/certs $(FUZZ_BUILD)/gen_seeds $(FUZZ_BUILD)/corpus
	@failed=; for t in $(FUZZ_TARGETS); do \
	    echo "fuzz: $$t for $(FUZZ_SECONDS)s"; \
	    QTLS_CERTS=$(CURDIR)/$(FUZZ_BUILD)/certs $(FUZZ_BUILD)/$$t \
	        -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	        -artifact_prefix=$(FUZZ_BUILD)/crash/$$t- $(FUZZ_BUILD)/corpus/$$t \
	        > $(FUZZ_BUILD)/$$t.log 2>&1 || failed="$$failed $$t"; \
	    tail -n 3 $(FUZZ_BUILD)/$$t.log; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed (logs: $(FUZZ_BUILD)/*.log)"; exit 1; fi; \
	echo "fuzz: all targets ran $(FUZZ_SECONDS)s without a crash"
