# qtls: a TLS 1.3 library for QUIC on OpenSSL 3 libcrypto.
# make | make check | make check SANITIZE=1 | make lint | make demo | make install PREFIX=...

BUILD   ?= build
PREFIX  ?= /usr/local
CC      ?= cc
SANITIZE ?=
BUILD_BASE := $(BUILD)

OPT      = -O2 -g
WARN     = -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
CPPFLAGS = -Iinclude -Isrc -D_GNU_SOURCE -DOPENSSL_SUPPRESS_DEPRECATED
ifeq ($(SANITIZE),1)
  OPT   = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  override BUILD := $(BUILD)-san
endif
# make check SANITIZE=thread: ThreadSanitizer over every suite (tests/test_threads.c is the
# stress test that shares contexts between threads); a build directory of its own.
# A report stops the process at once with status 66 (halt_on_error; by default TSan goes on and
# only sets the status at exit): the test binary then ends without a cmocka summary and
# scripts/run-tests.sh counts a failed test; the HTTP/3 server, stopped at the end of each
# case, fails its connection at once, and tests/h3/e2e.sh fails a case whose server exited
# non-zero or logged any sanitizer report (ASan, LSan, UBSan, TSan) before or at exit.
# Options already in TSAN_OPTIONS come after these, so they win.
ifeq ($(SANITIZE),thread)
  OPT   = -O1 -g -fsanitize=thread -fno-omit-frame-pointer
  override BUILD := $(BUILD)-tsan
  TEST_ENV = TSAN_OPTIONS="halt_on_error=1:exitcode=66$${TSAN_OPTIONS:+:$$TSAN_OPTIONS}"
endif
CFLAGS_ALL = -std=c11 $(OPT) $(WARN) -fPIC $(CFLAGS)
LIBCRYPTO  = $(shell pkg-config --libs libcrypto 2>/dev/null || echo -lcrypto)

# Certificate compression (RFC 8879, src/crypto/compress.c): zlib, brotli and zstd, each used when
# pkg-config finds it. make says which are missing; make check installs all three
# (scripts/deps.sh) and its tests need them. QTLS_LIBS is what a program linking libqtls.a
# needs beside it. A stamp records the choice, so that compress.o is rebuilt when it changes.
COMP_PKGS_zlib   = zlib
COMP_PKGS_brotli = libbrotlienc libbrotlidec
COMP_PKGS_zstd   = libzstd
COMP_DEBS_zlib   = zlib1g-dev
COMP_DEBS_brotli = libbrotli-dev
COMP_DEBS_zstd   = libzstd-dev
COMP_ALGS       := zlib brotli zstd
COMP_FOUND      := $(foreach a,$(COMP_ALGS),$(if $(shell pkg-config --exists $(COMP_PKGS_$(a)) \
    2>/dev/null && echo 1),$(a)))
COMP_MISSING    := $(filter-out $(COMP_FOUND),$(COMP_ALGS))
COMP_DEFS       := $(foreach a,$(COMP_FOUND),-DQTLS_HAVE_$(shell echo $(a) | tr a-z A-Z))
COMP_LIBS       := $(if $(COMP_FOUND),$(shell pkg-config --libs $(foreach a,$(COMP_FOUND),\
    $(COMP_PKGS_$(a)))))
QTLS_LIBS        = $(LIBCRYPTO) $(COMP_LIBS)
COMP_CPPFLAGS   := $(COMP_DEFS) $(if $(COMP_FOUND),$(shell pkg-config --cflags-only-I \
    $(foreach a,$(COMP_FOUND),$(COMP_PKGS_$(a)))))
COMP_REQUIRES   := $(foreach a,$(COMP_FOUND),$(COMP_PKGS_$(a)))
COMP_STAMP       = $(BUILD)/obj/compress.flags
# Run on every make, rewritten only when the choice changed (nothing is written while the
# Makefile is read: a make that stops for missing packages leaves no build directory).
$(COMP_STAMP): FORCE | $(BUILD)/obj
	@echo '$(COMP_DEFS)' | cmp -s - $@ || echo '$(COMP_DEFS)' > $@
.PHONY: FORCE
FORCE:
.DEFAULT_GOAL := all
$(BUILD)/obj/crypto/compress.o: CPPFLAGS += $(COMP_CPPFLAGS)
$(BUILD)/obj/crypto/compress.o: $(COMP_STAMP)

# src/ is one folder per layer (README "Code layout"); src/ngtcp2/ is a library of its own.
SRCS = $(sort $(filter-out src/ngtcp2/%,$(wildcard src/*/*.c)))
OBJS = $(SRCS:src/%.c=$(BUILD)/obj/%.o)
SRC_HDRS = $(wildcard src/*.h $(addsuffix *.h,$(sort $(dir $(SRCS)))) include/qtls/*.h)
TEST_SRCS = $(sort $(wildcard tests/test_*.c))
TESTS = $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
TEST_HELPERS = $(sort $(wildcard tests/helpers/*.c))

.PHONY: all check demo install install-compat clean deps bogo interop pq
all: $(BUILD)/libqtls.a $(BUILD)/libqtls.so $(BUILD)/qtls.pc

$(BUILD)/obj/%.o: src/%.c $(SRC_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/obj $(BUILD)/tests:
	mkdir -p $@

$(BUILD)/libqtls.a: $(OBJS)
	rm -f $@ && ar rcs $@ $^

# Only the OpenSSL-compatible surface is exported, in symbol version QTLS_1 (the system's
# libssl.so.3 has OPENSSL_3.0.0), and -Bsymbolic binds libqtls's calls to its own functions at
# link time: libqtls and libssl.so.3 can share a process (src/libqtls.map, tests/test_coexist.c).
# libqtls.so.0, the soname, lets programs linked here run from the build directory.
$(BUILD)/libqtls.so: $(OBJS) src/libqtls.map
	$(CC) -shared -o $@ $(OBJS) $(OPT) -Wl,-soname,libqtls.so.0 -Wl,-Bsymbolic \
	    -Wl,--version-script=src/libqtls.map $(QTLS_LIBS)
	ln -sf libqtls.so $(BUILD)/libqtls.so.0

$(BUILD)/qtls.pc: qtls.pc.in $(COMP_STAMP) | $(BUILD)/obj
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@COMP_REQUIRES@|$(COMP_REQUIRES)|' $< > $@

$(BUILD)/tests/%: tests/%.c $(TEST_HELPERS) $(wildcard tests/helpers/*.h) $(BUILD)/libqtls.a | $(BUILD)/tests
	$(CC) $(TEST_CPPFLAGS_$*) $(CPPFLAGS) -Itests/helpers $(CFLAGS_ALL) -o $@ $< $(TEST_HELPERS) \
	    $(BUILD)/libqtls.a $(QTLS_LIBS) -lcmocka $(TEST_LIBS_$*)

# The GnuTLS QUIC-mode peer (tests/helpers/gnutls/), only where GnuTLS is linked.
GNUTLS_PEER = tests/helpers/gnutls/gnutls_quic.c
GNUTLS_PEER_DEPS = $(GNUTLS_PEER) tests/helpers/gnutls/gnutls_quic.h
TEST_CPPFLAGS_test_gnutls = -Itests/helpers/gnutls
TEST_CPPFLAGS_test_quic_tls35_gnutls = -Itests/helpers/gnutls
TEST_LIBS_test_gnutls = $(GNUTLS_PEER) -lgnutls
TEST_LIBS_test_quic_tls35_gnutls = $(GNUTLS_PEER) -lgnutls
$(BUILD)/tests/test_gnutls $(BUILD)/tests/test_quic_tls35_gnutls: $(GNUTLS_PEER_DEPS)

# test_coexist links libqtls.so (libqtls.so.0 through its rpath), not libqtls.a: it tests how
# the dynamic linker binds libqtls's symbols beside the system's libssl.so.3, which it dlopens.
$(BUILD)/tests/test_coexist: tests/test_coexist.c $(TEST_HELPERS) $(wildcard tests/helpers/*.h) \
    $(BUILD)/libqtls.so | $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Itests/helpers $(CFLAGS_ALL) -o $@ $< $(TEST_HELPERS) -L$(BUILD) -lqtls \
	    -Wl,-rpath,$(CURDIR)/$(BUILD) $(LIBCRYPTO) -lcmocka -ldl

# test_macros compiles as a consumer does: the compat directory first on the include path.
TEST_CPPFLAGS_test_macros = -Iinclude/compat
# test_quic_tls35_compat likewise: an OpenSSL 3.5 QUIC API program, OpenSSL headers only.
TEST_CPPFLAGS_test_quic_tls35_compat = -Iinclude/compat

# ngtcp2 crypto backend (src/ngtcp2/, include/qtls/ngtcp2_crypto_qtls.h): libqtls_ngtcp2, a
# library of its own beside libqtls. It implements ngtcp2_crypto.h (shipped by
# libngtcp2-crypto-gnutls-dev), as libngtcp2_crypto_gnutls does. make builds it where ngtcp2
# 0.12 is installed; make check and make demo install ngtcp2 first (scripts/deps.sh).
HAVE_NGTCP2 := $(shell pkg-config --exists libngtcp2 libngtcp2_crypto_gnutls 2>/dev/null && echo 1)
NG_SRCS = $(sort $(wildcard src/ngtcp2/*.c))
NG_OBJS = $(NG_SRCS:src/ngtcp2/%.c=$(BUILD)/obj/ngtcp2/%.o)
NG_TEST = $(BUILD)/tests/test_ngtcp2_backend
ifeq ($(HAVE_NGTCP2),1)
NGTCP2_CFLAGS := $(shell pkg-config --cflags libngtcp2)
NGTCP2_LIBS := $(shell pkg-config --libs libngtcp2)
all: $(BUILD)/libqtls_ngtcp2.a $(BUILD)/libqtls_ngtcp2.so $(BUILD)/qtls_ngtcp2.pc
TEST_LIBS_test_ngtcp2_backend = $(BUILD)/libqtls_ngtcp2.a $(BUILD)/libqtls.a $(NGTCP2_LIBS) \
    $(QTLS_LIBS) -ldl
$(NG_TEST): $(BUILD)/libqtls_ngtcp2.a
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
HAVE_H3 := $(if $(HAVE_NGTCP2),$(shell pkg-config --exists libnghttp3 2>/dev/null && echo 1))
H3_BINS = $(BUILD)/h3client $(BUILD)/h3server
H3_TEST = $(BUILD)/tests/test_h3_e2e
ifeq ($(HAVE_H3),1)
H3_CFLAGS := $(shell pkg-config --cflags libngtcp2 libnghttp3)
H3_LIBS := $(shell pkg-config --libs libngtcp2 libnghttp3)
all: $(H3_BINS)
endif

$(BUILD)/h3%: examples/h3%.c examples/h3common.c examples/h3common.h $(BUILD)/libqtls_ngtcp2.a \
    $(BUILD)/libqtls.a
	$(CC) -Iinclude/compat -Iinclude -D_GNU_SOURCE $(H3_CFLAGS) $(CFLAGS_ALL) -o $@ $< \
	    examples/h3common.c $(BUILD)/libqtls_ngtcp2.a $(BUILD)/libqtls.a $(H3_LIBS) $(QTLS_LIBS)

$(H3_TEST): tests/h3/e2e.sh scripts/h3peers.sh $(H3_BINS) | $(BUILD)/tests
	printf '#!/bin/sh\nexec "%s/tests/h3/e2e.sh" "%s"\n' "$(CURDIR)" "$(CURDIR)/$(BUILD)" > $@
	chmod +x $@

# make lint: the structural rules of src/ (scripts/lint.sh): no writer field written outside
# bytes.c, and calls only down the layers listed there. make check runs it as one more suite
# (each rule counts as a test), through a launcher like the HTTP/3 one.
LINT_TEST = $(BUILD)/tests/test_lint
.PHONY: lint
lint: $(OBJS)
	@scripts/lint.sh $(BUILD)/obj

$(LINT_TEST): scripts/lint.sh $(OBJS) | $(BUILD)/tests
	printf '#!/bin/sh\nexec "%s/scripts/lint.sh" "%s/obj"\n' "$(CURDIR)" "$(CURDIR)/$(BUILD)" > $@
	chmod +x $@

# make install-compat into a temporary prefix, then programs written for quictls and for OpenSSL
# 3.5's QUIC TLS API built against it as unmodified build systems do (tests/compat/run.sh); the
# launcher names this build.
COMPAT_TEST = $(BUILD)/tests/test_install_compat
$(COMPAT_TEST): tests/compat/run.sh tests/compat/quictls_app.c tests/compat/ossl35_app.c \
    scripts/install-compat.sh \
    $(wildcard include/compat/openssl/*.h) | $(BUILD)/tests
	printf '#!/bin/sh\nexec "%s/tests/compat/run.sh" "%s" "%s" "%s" BUILD=%s SANITIZE=%s\n' \
	    "$(CURDIR)" "$(CURDIR)/$(BUILD)/compat" "$(CC)" \
	    "-std=c11 $(OPT) -Wall -Wextra -Wno-unused-parameter -Werror" "$(BUILD_BASE)" \
	    "$(SANITIZE)" > $@
	chmod +x $@

# The fuzzing build mode (-DQTLS_FUZZING, make fuzz only) is absent from libqtls.a and
# libqtls.so (tests/fuzzmode/run.sh, with a control that compiles it in).
FUZZMODE_TEST = $(BUILD)/tests/test_fuzzmode
$(FUZZMODE_TEST): tests/fuzzmode/run.sh $(BUILD)/libqtls.a $(BUILD)/libqtls.so | $(BUILD)/tests
	printf '#!/bin/sh\nexec "%s/tests/fuzzmode/run.sh" "%s" "%s"\n' "$(CURDIR)" \
	    "$(CURDIR)/$(BUILD)" "$(CC)" > $@
	chmod +x $@

# TLS 1.3 over TCP on loopback (tests/tcp/run.sh): qtls_peer, tests/tcp/tls_peer.c on libqtls,
# against three other implementations in both roles: the same source on the system's libssl
# (ossl_peer), GnuTLS 3.7 (gnutls_peer) and Go's crypto/tls (go_peer: the standard library
# only, built offline, its caches here). qtls_peer is built as a consumer builds, qtls's compat
# headers first, and with $(OPT): under SANITIZE a sanitizer report in its log fails its case.
# make check runs the matrix through a launcher like the HTTP/3 one (each case counts as a
# test); with SKIP=gnutls, gnutls_peer is not built and its cases are listed as skipped.
TCP_DIR    = $(BUILD)/tests/tcp
TCP_TEST   = $(BUILD)/tests/test_tcp_interop
TCP_COMMON = tests/tcp/peer_common.c
TCP_DEPS   = $(TCP_COMMON) tests/tcp/peer_common.h
TCP_CFLAGS = -std=c11 -O2 -g $(WARN) -D_GNU_SOURCE $(CFLAGS)
TCP_GO_ENV = GOCACHE=$(CURDIR)/$(TCP_DIR)/go-cache GOPATH=$(CURDIR)/$(TCP_DIR)/go-path GOFLAGS= \
    GOPROXY=off GOENV=off GOTOOLCHAIN=local CGO_ENABLED=0

$(TCP_DIR)/ossl_peer: tests/tcp/tls_peer.c $(TCP_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TCP_CFLAGS) -o $@ $< $(TCP_COMMON) -lssl $(LIBCRYPTO)

$(TCP_DIR)/qtls_peer: tests/tcp/tls_peer.c $(TCP_DEPS) $(BUILD)/libqtls.a
	@mkdir -p $(@D)
	$(CC) -Iinclude/compat -Iinclude -D_GNU_SOURCE $(CFLAGS_ALL) -o $@ $< $(TCP_COMMON) \
	    $(BUILD)/libqtls.a $(QTLS_LIBS)

$(TCP_DIR)/gnutls_peer: tests/tcp/gnutls_peer.c $(TCP_DEPS)
	@mkdir -p $(@D)
	$(CC) $(TCP_CFLAGS) -o $@ $< $(TCP_COMMON) -lgnutls

$(TCP_DIR)/go_peer: tests/tcp/go_peer/main.go tests/tcp/go_peer/go.mod
	@mkdir -p $(@D)
	cd tests/tcp/go_peer && $(TCP_GO_ENV) go build -o $(CURDIR)/$@ .

$(TCP_TEST): tests/tcp/run.sh $(TCP_DIR)/ossl_peer $(TCP_DIR)/qtls_peer $(TCP_DIR)/go_peer \
    | $(BUILD)/tests
	printf '#!/bin/sh\nexec "%s/tests/tcp/run.sh" "%s" "%s"\n' "$(CURDIR)" "$(CURDIR)/$(BUILD)" \
	    "$(CURDIR)/$(BUILD)/certs" > $@
	chmod +x $@

ifeq ($(filter all install install-compat,$(or $(MAKECMDGOALS),all)),)
else ifneq ($(HAVE_H3),1)
$(info make: libqtls_ngtcp2 and the HTTP/3 examples are not built: they need libngtcp2-dev, \
    libngtcp2-crypto-gnutls-dev and libnghttp3-dev (make check and make demo install them))
endif
ifneq ($(filter all install install-compat,$(or $(MAKECMDGOALS),all)),)
ifneq ($(COMP_MISSING),)
$(info make: certificate compression without $(COMP_MISSING): it needs \
    $(foreach a,$(COMP_MISSING),$(COMP_DEBS_$(a))) (make check installs them))
endif
endif

# ---- the Debian packages each command needs, then the command ----------------------------
# check, demo, bench, bogo, interop and fuzz first run scripts/deps.sh with their groups of
# packages (as root it installs what is missing; otherwise it names it and stops), then run
# themselves in a second make, which decides what to build from pkg-config only after the
# packages are there.
#
# make check's suites beyond the unit tests, each skippable only on request, by name:
#   make check SKIP=gnutls,h3    gnutls: tests/test_gnutls.c (GnuTLS 3.7 in-process peer) and
#                                        the GnuTLS cases of tests/tcp/run.sh
#                                ngtcp2: tests/test_ngtcp2_backend.c (libqtls_ngtcp2); implies h3
#                                h3:     tests/h3/e2e.sh (HTTP/3 over UDP loopback)
# The summary line names what was skipped. Without SKIP, a suite whose packages are absent
# fails the run and names them; it never disappears from the count.
comma := ,
OPTIONAL_SUITES = gnutls ngtcp2 h3
SKIPPED := $(sort $(subst $(comma), ,$(SKIP)))
ifneq ($(filter-out $(OPTIONAL_SUITES),$(SKIPPED)),)
  $(error SKIP: unknown suite '$(filter-out $(OPTIONAL_SUITES),$(SKIPPED))'; the suites are: $(OPTIONAL_SUITES))
endif
ifneq ($(filter ngtcp2,$(SKIPPED)),)
  SKIPPED := $(sort $(SKIPPED) h3)
endif
RUN_SUITES = $(filter-out $(SKIPPED),$(OPTIONAL_SUITES))

# The compiler's own package group: cc:gcc, cc:clang, cc:clang-san (clang's ASan/UBSan runtimes).
CC_NAME   = $(firstword $(subst -, ,$(notdir $(firstword $(CC)))))
CC_GROUP  = cc:$(CC_NAME)$(if $(and $(filter clang,$(CC_NAME)),$(filter 1 thread,$(SANITIZE))),-san)
CHECK_DEPS = build $(CC_GROUP) certs unit compress tcp $(RUN_SUITES)
DEMO_DEPS  = build $(CC_GROUP) certs h3
SUBMAKE    = $(MAKE) --no-print-directory

.PHONY: deps check-run demo-run print-deps-check print-deps-demo
deps:
	@scripts/deps.sh $(CHECK_DEPS)

# The packages make check and make demo need, one per line (.ci/fresh-machine.sh uses them).
print-deps-check:
	@scripts/deps.sh --list $(CHECK_DEPS)
print-deps-demo:
	@scripts/deps.sh --list $(DEMO_DEPS)

check:
	@scripts/deps.sh $(CHECK_DEPS)
	@$(SUBMAKE) check-run

demo:
	@scripts/deps.sh $(DEMO_DEPS)
	@$(SUBMAKE) demo-run

# suite_needs SUITE,HAVE,PACKAGES: stop when a suite that was not skipped cannot be built.
suite_needs = $(if $(filter $(1),$(RUN_SUITES)),$(if $(2),,$(error the $(1) suite needs \
    $(3): sudo apt-get install -y $(3) (or make check SKIP=$(1)))))
CHECK_TESTS = $(filter-out $(if $(filter gnutls,$(SKIPPED)),$(BUILD)/tests/test_gnutls) \
    $(if $(filter ngtcp2,$(SKIPPED)),$(NG_TEST)),$(TESTS)) $(COMPAT_TEST) \
    $(if $(filter h3,$(RUN_SUITES)),$(H3_TEST)) $(LINT_TEST) $(FUZZMODE_TEST) $(TCP_TEST)
# The TCP matrix's GnuTLS peer, unless SKIP=gnutls (run.sh reads QTLS_SKIPPED).
$(TCP_TEST): $(if $(filter gnutls,$(RUN_SUITES)),$(TCP_DIR)/gnutls_peer)
ifneq ($(filter check-run,$(MAKECMDGOALS)),)
  ifneq ($(COMP_MISSING),)
    $(error make check needs certificate compression with every algorithm: sudo apt-get install \
        -y $(foreach a,$(COMP_MISSING),$(COMP_DEBS_$(a))))
  endif
  $(call suite_needs,gnutls,$(shell pkg-config --exists gnutls 2>/dev/null && echo 1),libgnutls28-dev)
  $(call suite_needs,ngtcp2,$(HAVE_NGTCP2),libngtcp2-dev libngtcp2-crypto-gnutls-dev)
  $(call suite_needs,h3,$(HAVE_H3),libngtcp2-dev libngtcp2-crypto-gnutls-dev libnghttp3-dev)
endif
ifneq ($(filter demo-run,$(MAKECMDGOALS)),)
  ifneq ($(HAVE_H3),1)
    $(error make demo needs libngtcp2-dev, libngtcp2-crypto-gnutls-dev and libnghttp3-dev)
  endif
endif

# The constant-time check of ML-KEM (tests/mlkem/ct.sh): tests/mlkem/ct_check.c with
# src/crypto/mlkem.c compiled in, always -O2 without sanitizers (valgrind cannot run a
# sanitizer build), under valgrind's memcheck with the secrets marked undefined; a launcher
# like the HTTP/3 one. valgrind is the callgrind group of scripts/deps.sh; -gdwarf-4 because
# Debian 12's valgrind 3.19 cannot read clang's default DWARF 5.
MLKEM_CT_BIN  = $(BUILD)/tests/mlkem/ct_check
MLKEM_CT_TEST = $(BUILD)/tests/test_mlkem_ct
CHECK_DEPS   += callgrind
CHECK_TESTS  += $(MLKEM_CT_TEST)
$(MLKEM_CT_BIN): tests/mlkem/ct_check.c src/crypto/mlkem.c src/crypto/mlkem.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -std=c11 -O2 -gdwarf-4 $(WARN) -o $@ $< src/crypto/mlkem.c $(LIBCRYPTO) -ldl

$(MLKEM_CT_TEST): tests/mlkem/ct.sh $(MLKEM_CT_BIN) | $(BUILD)/tests
	printf '#!/bin/sh\nexec "%s/tests/mlkem/ct.sh" "%s"\n' "$(CURDIR)" "$(CURDIR)/$(MLKEM_CT_BIN)" > $@
	chmod +x $@

check-run: all $(CHECK_TESTS)
	@scripts/gen-certs.sh $(BUILD)/certs
	@$(TEST_ENV) QTLS_CERTS=$(CURDIR)/$(BUILD)/certs QTLS_SKIPPED="$(SKIPPED)" \
	    scripts/run-tests.sh $(CHECK_TESTS)

$(BUILD)/demo: examples/demo.c $(TEST_HELPERS) $(BUILD)/libqtls.a
	$(CC) $(CPPFLAGS) -Itests/helpers $(CFLAGS_ALL) -o $@ $< $(TEST_HELPERS) \
	    $(BUILD)/libqtls.a $(QTLS_LIBS)

# In-memory handshakes (examples/demo.c), then HTTP/3 over UDP loopback with a table.
demo-run: all $(BUILD)/demo
	@scripts/gen-certs.sh $(BUILD)/certs
	@QTLS_CERTS=$(CURDIR)/$(BUILD)/certs scripts/demo.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/qtls/compat/openssl
	install -m 644 $(BUILD)/libqtls.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libqtls.so $(DESTDIR)$(PREFIX)/lib/libqtls.so.0
	ln -sf libqtls.so.0 $(DESTDIR)$(PREFIX)/lib/libqtls.so
	install -m 644 include/qtls/quic.h include/qtls/quic_crypto.h include/qtls/quic_tls35.h \
	    include/qtls/quic_tls35_dispatch.h $(DESTDIR)$(PREFIX)/include/qtls/
	install -m 644 include/compat/openssl/*.h $(DESTDIR)$(PREFIX)/include/qtls/compat/openssl/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@COMP_REQUIRES@|$(COMP_REQUIRES)|' qtls.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/qtls.pc
ifeq ($(HAVE_NGTCP2),1)
	install -m 644 $(BUILD)/libqtls_ngtcp2.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libqtls_ngtcp2.so $(DESTDIR)$(PREFIX)/lib/libqtls_ngtcp2.so.0
	ln -sf libqtls_ngtcp2.so.0 $(DESTDIR)$(PREFIX)/lib/libqtls_ngtcp2.so
	install -m 644 include/qtls/ngtcp2_crypto_qtls.h $(DESTDIR)$(PREFIX)/include/qtls/
	sed -e 's|@PREFIX@|$(PREFIX)|' qtls_ngtcp2.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/qtls_ngtcp2.pc
endif

# make install, then an OpenSSL-style prefix on top of it for unmodified build systems
# (--with-openssl=DIR, PKG_CONFIG_PATH=DIR/lib/pkgconfig): include/openssl/ with qtls's libssl
# headers and the system's libcrypto ones, lib/libssl.so -> libqtls.so.0, lib/libcrypto.so ->
# the system's, openssl.pc / libssl.pc / libcrypto.pc (scripts/install-compat.sh says how).
install-compat: install
	DESTDIR="$(DESTDIR)" scripts/install-compat.sh "$(PREFIX)" "$(BUILD)" "$(CC)"

clean:
	rm -rf build build-*

# BoGo: BoringSSL's TLS test runner, built from Debian's packages, against the shim in
# tests/bogo (see tests/bogo/README.md), in QUIC mode then TCP mode: each mode's summary line,
# then both modes' on the last line, "N passed, N failed, N skipped". make bogo BOGO_MODE=tcp
# (or quic) runs one mode.
# ngtcp2 0.12.1's own quictls backend and examples, unmodified, on qtls (tests/ngtcp2/run.sh);
# curl 7.88.1 with qtls as its only TLS library, HTTPS and HTTP/3 (tests/curl/run.sh); HAProxy
# 2.6 serving HTTP/3 and HTTPS and reaching TLS backends on qtls (tests/haproxy/run.sh); nginx
# 1.26 serving HTTPS and HTTP/3 and proxying over TLS on qtls (tests/nginx/run.sh). Each runs
# even when one before it fails; make interop fails if any did.
interop:
	@scripts/deps.sh build $(CC_GROUP) interop h3 curl
	@rc=0; tests/ngtcp2/run.sh || rc=1; tests/curl/run.sh || rc=1; tests/haproxy/run.sh || rc=1; \
	    tests/nginx/run.sh || rc=1; exit $$rc

# Post-quantum hybrid key exchange (tests/pq/README.md): OpenSSL 3.5 from Debian 13's source
# (tests/pq/ossl35.sh, cached in build/ossl35: about 3 minutes the first time) and Go 1.24 from
# Debian 13's packages (tests/pq/go124.sh, build/go124), neither installed; then tests/pq/run.sh,
# qtls_peer against tls_peer.c on 3.5 (ossl35_peer) and go_peer built with 1.24 (go124_peer),
# both roles; tests/pq/quic/run.sh, the same over QUIC's TLS interface (qtls's quictls API
# against 3.5's SSL_set_quic_tls_cbs and Go's QUICConn); and tests/pq/mlkem_xcheck.c, qtls's
# ML-KEM against 3.5's libcrypto. Each runs even when another fails; make pq fails if any did.
OSSL35   = $(CURDIR)/build/ossl35
GO124    = $(CURDIR)/build/go124
PQ_DIR   = $(BUILD)/tests/pq
PQ_GO_ENV = GOROOT=$(GO124)/usr/lib/go-1.24 GOCACHE=$(CURDIR)/$(PQ_DIR)/go-cache \
    GOPATH=$(CURDIR)/$(PQ_DIR)/go-path GOFLAGS=-mod=mod GOPROXY=off GOENV=off \
    GOTOOLCHAIN=local CGO_ENABLED=0
PQ_QUIC = $(PQ_DIR)/quic
PQ_QUIC_SIDES = $(PQ_QUIC)/qtls_side $(PQ_QUIC)/ossl35_side $(PQ_QUIC)/go_side
PQ_QUIC_DEPS = tests/pq/quic/frame.c tests/pq/quic/frame.h
.PHONY: pq pq-run
pq:
	@scripts/deps.sh build $(CC_GROUP) certs pq
	@tests/pq/ossl35.sh $(OSSL35)
	@tests/pq/go124.sh $(GO124)
	@$(SUBMAKE) pq-run

pq-run: $(PQ_DIR)/ossl35_peer $(PQ_DIR)/go124_peer $(TCP_DIR)/qtls_peer $(BUILD)/tests/test_pq_groups \
    $(PQ_QUIC_SIDES)
	@scripts/gen-certs.sh $(BUILD)/certs
	@rc=0; tests/pq/run.sh $(BUILD) $(BUILD)/certs || rc=1; \
	    tests/pq/quic/run.sh $(BUILD) $(BUILD)/certs || rc=1; \
	    $(SUBMAKE) $(PQ_DIR)/mlkem_xcheck && $(PQ_DIR)/mlkem_xcheck || rc=1; \
	    $(MAKE_PQ_ON_35) || rc=1; exit $$rc

# make check's post-quantum suite again, on 3.5's libcrypto: its ML-KEM paired with qtls's own
MAKE_PQ_ON_35 = echo "== test_pq_groups on OpenSSL 3.5's libcrypto"; \
    LD_LIBRARY_PATH=$(OSSL35)/lib QTLS_CERTS=$(CURDIR)/$(BUILD)/certs \
    $(BUILD)/tests/test_pq_groups > $(PQ_DIR)/test_pq_groups-35.log 2>&1; st=$$?; \
    cat $(PQ_DIR)/test_pq_groups-35.log; [ $$st = 0 ] && \
    grep -q "ML-KEM from libcrypto and qtls's own" $(PQ_DIR)/test_pq_groups-35.log

$(PQ_DIR)/ossl35_peer: tests/tcp/tls_peer.c $(TCP_DEPS) $(OSSL35)/.qtls-stamp
	@mkdir -p $(@D)
	$(CC) $(TCP_CFLAGS) -I$(OSSL35)/include -o $@ $< $(TCP_COMMON) -L$(OSSL35)/lib \
	    -Wl,-rpath,$(OSSL35)/lib -lssl -lcrypto

$(PQ_DIR)/go124_peer: $(wildcard tests/tcp/go_peer/*.go) tests/tcp/go_peer/go.mod \
    $(GO124)/.qtls-stamp
	@mkdir -p $(@D)
	cd tests/tcp/go_peer && $(PQ_GO_ENV) $(GO124)/usr/lib/go-1.24/bin/go build -o $(CURDIR)/$@ .

# Over QUIC's TLS interface (tests/pq/quic/run.sh): one TLS per process, joined by FIFOs
$(PQ_QUIC)/qtls_side: tests/pq/quic/qtls_side.c $(PQ_QUIC_DEPS) $(BUILD)/libqtls.a
	@mkdir -p $(@D)
	$(CC) -Iinclude/compat -Iinclude -D_GNU_SOURCE $(CFLAGS_ALL) -o $@ $< tests/pq/quic/frame.c \
	    $(BUILD)/libqtls.a $(QTLS_LIBS)

$(PQ_QUIC)/ossl35_side: tests/pq/quic/ossl35_side.c $(PQ_QUIC_DEPS) $(OSSL35)/.qtls-stamp
	@mkdir -p $(@D)
	$(CC) $(TCP_CFLAGS) -I$(OSSL35)/include -o $@ $< tests/pq/quic/frame.c -L$(OSSL35)/lib \
	    -Wl,-rpath,$(OSSL35)/lib -lssl -lcrypto

$(PQ_QUIC)/go_side: $(wildcard tests/pq/quic/go_side/*.go) tests/pq/quic/go_side/go.mod \
    $(GO124)/.qtls-stamp
	@mkdir -p $(@D)
	cd tests/pq/quic/go_side && $(PQ_GO_ENV) $(GO124)/usr/lib/go-1.24/bin/go build -o $(CURDIR)/$@ .

# 3.5's headers and libcrypto (rpath), libqtls.a's ML-KEM: the whole process on 3.5
$(PQ_DIR)/mlkem_xcheck: tests/pq/mlkem_xcheck.c src/crypto/mlkem.h $(BUILD)/libqtls.a \
    $(OSSL35)/.qtls-stamp
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_ALL) -D_GNU_SOURCE -I$(OSSL35)/include -Isrc/crypto -o $@ $< \
	    $(BUILD)/libqtls.a -L$(OSSL35)/lib -Wl,-rpath,$(OSSL35)/lib -lcrypto $(COMP_LIBS)

bogo:
	@scripts/deps.sh build $(CC_GROUP) bogo
	@$(SUBMAKE) bogo-run

.PHONY: bogo-run
bogo-run: $(BUILD)/libqtls.a
	@QTLS_BOGO_LIB=$(CURDIR)/$(BUILD)/libqtls.a QTLS_BOGO_LIBS="$(QTLS_LIBS)" BOGO_CFLAGS="$(OPT)" \
	    BOGO_MODE="$(BOGO_MODE)" tests/bogo/run.sh

# Handshake benchmark (bench/README.md): OpenSSL 3.0 libssl, GnuTLS 3.7 in QUIC mode and
# qtls, same configuration, interleaved rounds, one program per library (libssl and libqtls
# define the same SSL_* symbols); and TLS over TCP, bench/bench_tcp.c built once on libssl and
# once on libqtls. make bench [CALLGRIND=1] [ROUNDS=9] [N=2000]; then the post-quantum rows
# (bench/pq.sh: first flights, X25519MLKEM768 handshakes against X25519's, qtls's own ML-KEM
# against OpenSSL 3.5's from tests/pq/ossl35.sh). make bench-pq runs those alone.
BENCH_DIR    = $(BUILD)/bench
BENCH_CFLAGS = -std=c11 -O2 -g -pthread $(WARN) -D_GNU_SOURCE $(CFLAGS)
BENCH_DEPS   = bench/bench_common.c bench/bench_common.h
.PHONY: bench bench-run bench-pq bench-pq-run
bench:
	@scripts/deps.sh build $(CC_GROUP) certs gnutls pq $(if $(CALLGRIND),callgrind)
	@tests/pq/ossl35.sh $(OSSL35)
	@$(SUBMAKE) bench-run

bench-run: $(BENCH_DIR)/bench_openssl $(BENCH_DIR)/bench_gnutls $(BENCH_DIR)/bench_qtls \
    $(BENCH_DIR)/bench_tcp_openssl $(BENCH_DIR)/bench_tcp_qtls $(BENCH_DIR)/libheapcount.so \
    $(BENCH_DIR)/bench_mlkem
	@bench/run.sh $(BENCH_DIR)
	@bench/pq.sh $(BENCH_DIR) $(OSSL35)

bench-pq:
	@scripts/deps.sh build $(CC_GROUP) certs pq
	@tests/pq/ossl35.sh $(OSSL35)
	@$(SUBMAKE) bench-pq-run

bench-pq-run: $(BENCH_DIR)/bench_qtls $(BENCH_DIR)/bench_mlkem
	@bench/pq.sh $(BENCH_DIR) $(OSSL35)

# HAProxy 2.6 and nginx 1.26 on qtls against the same servers on the system OpenSSL 3.0
# (bench/servers.sh, bench/README.md): handshakes per second of server CPU, KB per idle
# connection. About 5 minutes; not part of CI. make bench-servers [ROUNDS=7] [N=5000] [IDLE=10000]
.PHONY: bench-servers bench-servers-run
bench-servers:
	@scripts/deps.sh build $(CC_GROUP) interop certs h3
	@$(SUBMAKE) bench-servers-run

bench-servers-run: $(BENCH_DIR)/tls_conns
	@bench/servers.sh $(BENCH_DIR)/tls_conns

# Its client, on the system libssl whatever the server's library
$(BENCH_DIR)/tls_conns: bench/tls_conns.c
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -lssl $(LIBCRYPTO)

# qtls's own ML-KEM (libqtls.a) and libcrypto's, whichever libcrypto it runs on
$(BENCH_DIR)/bench_mlkem: bench/bench_mlkem.c src/crypto/mlkem.h $(BUILD)/libqtls.a
	@mkdir -p $(@D)
	$(CC) -Isrc $(BENCH_CFLAGS) -o $@ $< $(BUILD)/libqtls.a $(QTLS_LIBS)

$(BENCH_DIR)/bench_openssl: bench/bench_openssl.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $< bench/bench_common.c -lssl $(LIBCRYPTO)

$(BENCH_DIR)/bench_gnutls: bench/bench_gnutls.c $(BENCH_DEPS) $(GNUTLS_PEER_DEPS)
	@mkdir -p $(@D)
	$(CC) -Itests/helpers/gnutls $(BENCH_CFLAGS) -o $@ $< bench/bench_common.c $(GNUTLS_PEER) \
	    -lgnutls

$(BENCH_DIR)/bench_qtls: bench/bench_qtls.c $(BENCH_DEPS) $(BUILD)/libqtls.a
	@mkdir -p $(@D)
	$(CC) -Iinclude/compat -Iinclude $(BENCH_CFLAGS) -o $@ $< bench/bench_common.c \
	    $(BUILD)/libqtls.a $(QTLS_LIBS)

# The same source on each library (-DBENCH_QTLS names the program and its ticket count).
$(BENCH_DIR)/bench_tcp_openssl: bench/bench_tcp.c $(BENCH_DEPS)
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $< bench/bench_common.c -lssl $(LIBCRYPTO)

$(BENCH_DIR)/bench_tcp_qtls: bench/bench_tcp.c $(BENCH_DEPS) $(BUILD)/libqtls.a
	@mkdir -p $(@D)
	$(CC) -DBENCH_QTLS -Iinclude/compat -Iinclude $(BENCH_CFLAGS) -o $@ $< bench/bench_common.c \
	    $(BUILD)/libqtls.a $(QTLS_LIBS)

# Certificate compression (RFC 8879): the server's first flight with each algorithm, in memory
# and over UDP loopback with ngtcp2 (bench/certcomp.sh; figures in bench/README.md).
.PHONY: bench-certcomp bench-certcomp-run
bench-certcomp:
	@scripts/deps.sh build $(CC_GROUP) certs unit compress h3
	@$(SUBMAKE) bench-certcomp-run

bench-certcomp-run: $(BENCH_DIR)/certcomp_flight $(H3_BINS)
	@scripts/gen-certs.sh $(BUILD)/certs
	@bench/certcomp.sh $(BUILD)

$(BENCH_DIR)/certcomp_flight: bench/certcomp_flight.c $(TEST_HELPERS) $(BUILD)/libqtls.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/helpers $(CFLAGS_ALL) -o $@ $< $(TEST_HELPERS) $(BUILD)/libqtls.a \
	    $(QTLS_LIBS)

$(BENCH_DIR)/libheapcount.so: bench/heapcount.c
	@mkdir -p $(@D)
	$(CC) -O2 -g $(WARN) -shared -fPIC -o $@ $<

# libFuzzer targets (fuzz/*.c), a build of their own under build-fuzz with clang, ASan and
# UBSan and the fuzzing mode (-DQTLS_FUZZING, src/crypto/crypto.c: fixed randomness and keys, any
# signature, Finished or binder accepted, TCP record protection transparent), which make check
# proves absent from libqtls; not part of make check. make fuzz [FUZZ_SECONDS=30] builds them,
# writes seed corpora from real handshakes (fuzz/gen_seeds.c), runs each target for
# FUZZ_SECONDS from them and from its committed reproducers (fuzz/regress/<target>/, read
# only) and fails if any crashed or leaked (new reproducers: build-fuzz/crash/<target>-*; each
# becomes a file in fuzz/regress/ and a unit test).
FUZZ_SECONDS ?= 30
FUZZ_BUILD    = build-fuzz
FUZZ_CC       = clang
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS   = -std=c11 -O1 -g -fno-omit-frame-pointer $(WARN) $(FUZZ_SAN) -DQTLS_FUZZING \
    -DQTLS_FUZZ_CERTS='"$(CURDIR)/$(FUZZ_BUILD)/certs"'
FUZZ_TARGETS  = fuzz_server fuzz_client fuzz_session fuzz_provide fuzz_ticket fuzz_packet \
    fuzz_cert_comp fuzz_record fuzz_mlkem $(if $(HAVE_NGTCP2),fuzz_token)
FUZZ_BINS     = $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%)
FUZZ_OBJS     = $(SRCS:src/%.c=$(FUZZ_BUILD)/obj/%.o) $(FUZZ_BUILD)/obj/mock_quic.o
# fuzz_token: the ngtcp2 backend's token verification, with libngtcp2 (make fuzz installs it).
FUZZ_NG_OBJS  = $(NG_SRCS:src/ngtcp2/%.c=$(FUZZ_BUILD)/obj/ngtcp2/%.o)
FUZZ_NG_LINK  = $(if $(HAVE_NGTCP2),$(FUZZ_NG_OBJS)) $(FUZZ_OBJS) \
    $(if $(HAVE_NGTCP2),$(NGTCP2_LIBS)) $(QTLS_LIBS)
FUZZ_HDRS     = $(wildcard fuzz/*.h)

$(FUZZ_BUILD)/obj/%.o: src/%.c $(SRC_HDRS) Makefile
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/obj/crypto/compress.o: CPPFLAGS += $(COMP_CPPFLAGS)
$(FUZZ_BUILD)/obj/crypto/compress.o: $(COMP_STAMP)

$(FUZZ_BUILD)/obj/ngtcp2/%.o: src/ngtcp2/%.c $(wildcard src/ngtcp2/*.h include/qtls/*.h) Makefile
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(NGTCP2_CFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/obj/mock_quic.o: tests/helpers/mock_quic.c tests/helpers/mock_quic.h
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c $(FUZZ_HDRS) $(FUZZ_OBJS) $(if $(HAVE_NGTCP2),$(FUZZ_NG_OBJS))
	$(FUZZ_CC) $(CPPFLAGS) $(NGTCP2_CFLAGS) -Itests/helpers $(FUZZ_CFLAGS) -fsanitize=fuzzer \
	    -o $@ $< $(FUZZ_NG_LINK)

$(FUZZ_BUILD)/gen_seeds: fuzz/gen_seeds.c $(FUZZ_HDRS) $(FUZZ_OBJS) \
    $(if $(HAVE_NGTCP2),$(FUZZ_NG_OBJS))
	$(FUZZ_CC) $(CPPFLAGS) $(NGTCP2_CFLAGS) $(if $(HAVE_NGTCP2),-DQTLS_FUZZ_NGTCP2) \
	    -Itests/helpers $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -o $@ $< $(FUZZ_NG_LINK)

.PHONY: fuzz fuzz-run
fuzz:
	@scripts/deps.sh build cc:clang-san certs compress ngtcp2
	@$(SUBMAKE) fuzz-run

fuzz-run: $(FUZZ_BINS) $(FUZZ_BUILD)/gen_seeds
	@scripts/gen-certs.sh $(FUZZ_BUILD)/certs
	@mkdir -p $(FUZZ_BUILD)/crash $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/corpus/%)
	@QTLS_CERTS=$(CURDIR)/$(FUZZ_BUILD)/certs $(FUZZ_BUILD)/gen_seeds $(FUZZ_BUILD)/corpus
	@failed=; for t in $(FUZZ_TARGETS); do \
	    echo "fuzz: $$t for $(FUZZ_SECONDS)s"; \
	    QTLS_CERTS=$(CURDIR)/$(FUZZ_BUILD)/certs $(FUZZ_BUILD)/$$t \
	        -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	        -artifact_prefix=$(FUZZ_BUILD)/crash/$$t- $(FUZZ_BUILD)/corpus/$$t \
	        $$([ -d fuzz/regress/$$t ] && echo fuzz/regress/$$t) \
	        > $(FUZZ_BUILD)/$$t.log 2>&1 || failed="$$failed $$t"; \
	    tail -n 3 $(FUZZ_BUILD)/$$t.log; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed (logs: $(FUZZ_BUILD)/*.log)"; exit 1; fi; \
	echo "fuzz: all targets ran $(FUZZ_SECONDS)s without a crash"
