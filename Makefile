# SPDX-License-Identifier: GPL-2.0-or-later
# prefetch — boot-time prefetch and on-disk reordering.
# Sources are picked up by wildcard so that adding a file needs no Makefile edit.  One archive per stage, each
# compiled with only lib/ and its own folder on the include path, so a stage cannot include another's headers:
#   lib/*.c                -> libprefetch.a        what both programs share (format, config, fs identity, ...)
#   daemon/STAGE/*.c       -> daemon/STAGE.a       trace, aggregate, replay, boot, report
#   daemon/cli/*.c         -> prefetchd            the command line: the only code that combines the stages
#   reorder/*.c            -> reorder.a            plan, relocate, verify (reorder/main.c: prefetch-reorder)
#   tests/unit/DIR/test_*.c -> one cmocka binary each (tests mirror the source folders).

# The version and its date: NEWS's first line ("prefetch VERSION (YYYY-MM-DD)") is their one home.
VERSION     := $(shell sed -n '1s/^prefetch \([^ ]*\) .*/\1/p' NEWS)
DATE        := $(shell sed -n '1s/^prefetch [^ ]* (\([0-9-]*\)).*/\1/p' NEWS)
PREFIX      ?= /usr
SBINDIR     ?= $(PREFIX)/sbin
SYSCONFDIR  ?= /etc
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
# prefetch-image's qemu driver (image/qemu-guest.sh), a shell library
PKGDATADIR  ?= $(PREFIX)/share/prefetch
PKG_CONFIG  ?= pkg-config
SYSTEMDUNITDIR     ?= $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
SYSTEMDSHUTDOWNDIR ?= $(shell $(PKG_CONFIG) --variable=systemdshutdowndir systemd 2>/dev/null || echo /lib/systemd/system-shutdown)
INITDIR     ?= $(SYSCONFDIR)/init.d
INITRAMFSDIR ?= /usr/share/initramfs-tools
# dracut's modules (Fedora, RHEL, Arch, ...): prefetch's is 90prefetch/ there.
DRACUTDIR   ?= /usr/lib/dracut/modules.d

PKGS        := ext2fs com_err blkid libsystemd libcap
PKG_CFLAGS  := $(shell $(PKG_CONFIG) --cflags $(PKGS))
PKG_LIBS    := $(shell $(PKG_CONFIG) --libs $(PKGS))
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null || echo -lcmocka)

CC          ?= cc
# The distribution's CPPFLAGS, CFLAGS and LDFLAGS (given on the command line or in the environment) come after
# ours and never replace them.  -Werror in development and CI (a git checkout); not in a release tarball's
# or a package's build, where a newer compiler's new warning must not stop it (WERROR=0|1 decides).
OPTFLAGS    ?= -O2 -g
WERROR      ?= $(if $(wildcard .git),1,0)
WARN        := -Wall -Wextra -Wshadow -Wformat=2 -Wno-format-nonliteral $(if $(filter 1,$(WERROR)),-Werror)
PF_CPPFLAGS := -D_GNU_SOURCE -DPREFETCH_VERSION='"$(VERSION)"' -DSYSCONFDIR='"$(SYSCONFDIR)"' -DSBINDIR='"$(SBINDIR)"'
ALL_CPPFLAGS = $(PF_CPPFLAGS) $(CPPFLAGS)
ALL_CFLAGS  := -std=gnu11 $(OPTFLAGS) $(WARN) $(PKG_CFLAGS) $(CFLAGS) -MMD -MP
ALL_LDFLAGS := $(LDFLAGS)
LIBS        := $(PKG_LIBS) -lpthread -lm

# make check SANITIZE=1: AddressSanitizer + UndefinedBehaviorSanitizer, built into a separate tree.
ifeq ($(SANITIZE),1)
  BUILD       := build/asan
  ALL_CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  ALL_LDFLAGS += -fsanitize=address,undefined
else
  BUILD       := build/default
endif

# make fuzz FUZZ_ENGINE=libfuzzer|driver: the fuzz targets under ASan+UBSan, each engine in its own tree.
# libfuzzer: clang's libFuzzer drives them; driver: gcc, with tests/fuzz/driver.c feeding mutations.
ifneq ($(filter libfuzzer driver,$(FUZZ_ENGINE)),)
  BUILD       := build/fuzz-$(FUZZ_ENGINE)
  ALL_CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  ALL_LDFLAGS += -fsanitize=address,undefined
  ifeq ($(FUZZ_ENGINE),libfuzzer)
    CC          := clang
    ALL_CFLAGS  += -fsanitize=fuzzer-no-link
    FUZZ_LINK   := -fsanitize=fuzzer
  else
    FUZZ_DRIVER := $(BUILD)/tests/fuzz/driver.o
  endif
endif

STAGES      := trace aggregate replay boot report
LIB_SRC     := $(sort $(wildcard lib/*.c))
CLI_MAIN    := daemon/cli/main.c
REORDER_SRC := $(filter-out reorder/main.c,$(sort $(wildcard reorder/*.c)))
UNIT_SRC    := $(sort $(wildcard tests/unit/*/test_*.c))
TESTSUPPORT_SRC := $(sort $(wildcard tests/unit/support_*.c))

obj = $(patsubst %.c,$(BUILD)/%.o,$(1))
LIB_A       := $(BUILD)/libprefetch.a
STAGE_A     := $(foreach s,$(STAGES),$(BUILD)/daemon/$(s).a)
CLI_A       := $(BUILD)/daemon/cli.a
REORDER_A   := $(BUILD)/reorder.a
PREFETCHD   := $(BUILD)/prefetchd
REORDER_BIN := $(BUILD)/prefetch-reorder
UNIT_BINS   := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
# Test-only programs (e.g. the crash-injecting reorder driver), linked against the same archives.
TOOL_SRC    := $(sort $(wildcard tests/tools/*.c))
TOOL_BINS   := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRC))
# LD_PRELOAD shims for test runs of the real programs (e.g. the power-cut shim): shared objects, never sanitized
# (a sanitizer runtime must come first in a process, before anything preloaded).
SHIM_SRC    := $(sort $(wildcard tests/tools/shim/*.c))
SHIM_LIBS   := $(patsubst tests/tools/shim/%.c,$(BUILD)/tests/tools/%.so,$(SHIM_SRC))
TOOL_BINS   += $(SHIM_LIBS)

# Include paths per folder: what the build lets each part see.
STAGE_INC   := $(foreach s,$(STAGES),-Idaemon/$(s))
$(BUILD)/lib/%.o: INC := -Ilib
$(foreach s,$(STAGES),$(eval $(BUILD)/daemon/$(s)/%.o: INC := -Ilib -Idaemon/$(s)))
$(BUILD)/daemon/cli/%.o: INC := -Ilib -Idaemon/cli $(STAGE_INC)
$(BUILD)/reorder/%.o: INC := -Ilib -Ireorder
$(BUILD)/tests/%: INC := -Ilib -Idaemon/cli $(STAGE_INC) -Ireorder -Itests/unit
# Archives in link order: the command line's stages before lib/, which they all use.
DAEMON_LINK := $(STAGE_A) $(LIB_A)

# Units, init scripts, the shutdown and initramfs hooks and the man pages are templates (NAME.in): the build
# renders them into $(GEN) with the install paths, the version and its date; make install installs those.
GEN         := $(BUILD)/gen
TEMPLATES   := $(sort $(wildcard systemd/*.in systemd/system-shutdown/*.in initscripts/*.in initramfs/*/*.in dracut/*/*.in \
	       image/*.in man/*.in))
RENDERED    := $(patsubst %.in,$(GEN)/%,$(TEMPLATES))
SUBST_VARS  := VERSION=$(VERSION) DATE=$(DATE) SBINDIR=$(SBINDIR) SYSCONFDIR=$(SYSCONFDIR) PKGDATADIR=$(PKGDATADIR) \
	       SYSTEMDUNITDIR=$(SYSTEMDUNITDIR) SYSTEMDSHUTDOWNDIR=$(SYSTEMDSHUTDOWNDIR) INITDIR=$(INITDIR) \
	       INITRAMFSDIR=$(INITRAMFSDIR) DRACUTDIR=$(DRACUTDIR)

.PHONY: all tools check check-long fuzz unit integration install uninstall clean demo bench bootlab valgrind sanitize \
	dist distcheck FORCE
all: $(PREFETCHD) $(REORDER_BIN) prefetchd prefetch-reorder $(RENDERED)

# Rebuilt when a value changes (make SBINDIR=... after a plain make): the values are kept in a stamp.
$(GEN)/.subst: FORCE
	@mkdir -p $(dir $@); echo '$(SUBST_VARS)' | cmp -s - $@ || echo '$(SUBST_VARS)' >$@
$(BUILD)/.flags: FORCE
	@mkdir -p $(dir $@); echo '$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS)' | cmp -s - $@ || echo '$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS)' >$@
$(GEN)/%: %.in $(GEN)/.subst
	@mkdir -p $(dir $@)
	@[ -n '$(VERSION)' ] && [ -n '$(DATE)' ] || { echo "NEWS: no 'prefetch VERSION (YYYY-MM-DD)' first line"; exit 1; }
	@echo "  GEN $@"; sed $(foreach v,$(SUBST_VARS),-e 's|@$(firstword $(subst =, ,$(v)))@|$(patsubst $(firstword $(subst =, ,$(v)))=%,%,$(v))|g') $< >$@.tmp
	@if grep -n '@[A-Z]*@' $@.tmp; then echo "$<: a placeholder the Makefile does not substitute"; rm -f $@.tmp; exit 1; fi
	@chmod --reference=$< $@.tmp && mv $@.tmp $@

# Convenience links at the top so scripts and users find the binaries of the default build.
prefetchd prefetch-reorder: %: $(BUILD)/%
	ln -sf $< $@

$(BUILD)/%.o: %.c $(BUILD)/.flags
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(INC) $(ALL_CFLAGS) -c -o $@ $<

$(LIB_A): $(call obj,$(LIB_SRC))
	@rm -f $@; $(AR) rcs $@ $^
define stage_archive
$(BUILD)/daemon/$(1).a: $(call obj,$(filter-out $(CLI_MAIN),$(sort $(wildcard daemon/$(1)/*.c)))) $(BUILD)/empty.o
	@rm -f $$@; $$(AR) rcs $$@ $$^
endef
$(foreach s,$(STAGES) cli,$(eval $(call stage_archive,$(s))))
$(REORDER_A): $(call obj,$(REORDER_SRC)) $(BUILD)/empty.o
	@rm -f $@; $(AR) rcs $@ $^
$(BUILD)/empty.o:
	@mkdir -p $(dir $@); echo 'typedef int pf_empty_unit;' | $(CC) -x c -c -o $@ -

$(PREFETCHD): $(call obj,$(CLI_MAIN)) $(CLI_A) $(DAEMON_LINK)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
$(REORDER_BIN): $(BUILD)/reorder/main.o $(REORDER_A) $(LIB_A)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(call obj,$(TESTSUPPORT_SRC)) $(CLI_A) $(REORDER_A) $(DAEMON_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(INC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $(filter %.c %.o %.a,$^) $(CMOCKA_LIBS) $(LIBS)

$(BUILD)/tests/tools/%: tests/tools/%.c $(CLI_A) $(REORDER_A) $(DAEMON_LINK)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(INC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $(filter %.c %.o %.a,$^) $(LIBS)

$(BUILD)/tests/tools/%.so: tests/tools/shim/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) -std=gnu11 $(OPTFLAGS) $(WARN) $(CFLAGS) -MMD -MP -fPIC -shared -o $@ $< -ldl

# The fuzz targets: the parsers of lib/ and the boot end's (daemon/boot) record reader, nothing else.
FUZZ_SRC    := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS   := $(patsubst tests/fuzz/%.c,$(BUILD)/tests/fuzz/%,$(FUZZ_SRC))
FUZZ_SECONDS ?= 60
$(BUILD)/tests/fuzz/%: INC := -Ilib -Idaemon/boot -Itests/fuzz
$(BUILD)/tests/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DRIVER) $(BUILD)/daemon/boot.a $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(INC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $(FUZZ_LINK) -o $@ $(filter %.c %.o %.a,$^) $(LIBS)

# make fuzz [FUZZ_SECONDS=N] [FUZZ_ENGINE=libfuzzer|driver|both]: each target for N seconds from its seed corpus
# (tests/fuzz/run.sh; exit 1 and the input kept on a crash).  Without FUZZ_ENGINE: libFuzzer where clang can
# link it, else the driver.
ifeq ($(filter libfuzzer driver,$(FUZZ_ENGINE)),)
fuzz:
	@engines='$(FUZZ_ENGINE)'; \
	if [ "$$engines" = both ]; then engines='libfuzzer driver'; \
	elif [ -z "$$engines" ]; then \
	  if printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return !d + (int)n; }' | \
	     clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then engines=libfuzzer; \
	  else engines=driver; echo "fuzz: no clang with libFuzzer here: the gcc driver runs the targets"; fi; \
	fi; \
	for e in $$engines; do $(MAKE) --no-print-directory fuzz FUZZ_ENGINE=$$e || exit 1; done
else
fuzz: $(FUZZ_BINS)
	BUILD=$(BUILD) FUZZ_ENGINE=$(FUZZ_ENGINE) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh $(FUZZ_BINS)
endif

tools: $(TOOL_BINS)
# The unit tests' support objects are built through a pattern rule: keep them (make would delete them as
# intermediates and rebuild every test binary next time).
.SECONDARY: $(call obj,$(TESTSUPPORT_SRC)) $(FUZZ_DRIVER)

# Unit tests, then integration tests; tests/run.sh prints the closing "N passed, N failed" line.
check: all $(UNIT_BINS) $(TOOL_BINS)
	BUILD=$(BUILD) tests/run.sh $(UNIT_BINS)

# Before a release: the power-cut test in its long mode (1 GiB images 90 % and 98 % full, every cut mode at every
# write of the small series); its table goes to results/CRASH-LONG.md by hand.  Takes an hour or more.
check-long: all $(TOOL_BINS)
	TOP=$(CURDIR) BUILD=$(CURDIR)/$(BUILD) CRASH_LONG=1 bash tests/integration/60-reorder-crash.sh

unit: all $(UNIT_BINS) $(TOOL_BINS)
	BUILD=$(BUILD) TESTS_UNIT_ONLY=1 tests/run.sh $(UNIT_BINS)

# Unit tests and the CLI error paths under valgrind (memcheck, leak check, errors fail the run).
valgrind: all $(UNIT_BINS)
	BUILD=$(BUILD) tests/valgrind.sh $(UNIT_BINS)

demo: all
	BUILD=$(BUILD) tests/demo.sh

bench: all
	$(MAKE) -C results

bootlab: all
	$(MAKE) -C results/bootlab

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(SYSCONFDIR)/default $(DESTDIR)$(SYSTEMDUNITDIR) \
	  $(DESTDIR)$(SYSTEMDSHUTDOWNDIR) $(DESTDIR)$(INITDIR) $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 \
	  $(DESTDIR)$(INITRAMFSDIR)/scripts/local-bottom $(DESTDIR)$(INITRAMFSDIR)/hooks
	install -m 0755 $(PREFETCHD) $(DESTDIR)$(SBINDIR)/prefetchd
	install -m 0755 $(REORDER_BIN) $(DESTDIR)$(SBINDIR)/prefetch-reorder
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/default/prefetch ]; then echo "keeping existing $(SYSCONFDIR)/default/prefetch"; \
	else install -m 0644 config/prefetch.default $(DESTDIR)$(SYSCONFDIR)/default/prefetch; fi
	install -m 0644 $(wildcard $(GEN)/systemd/*.service $(GEN)/systemd/*.timer) $(DESTDIR)$(SYSTEMDUNITDIR)/
	install -m 0755 $(GEN)/systemd/system-shutdown/* $(DESTDIR)$(SYSTEMDSHUTDOWNDIR)/
	install -m 0755 $(GEN)/initscripts/* $(DESTDIR)$(INITDIR)/
	@if [ -e $(DESTDIR)$(INITDIR)/stop-prefetch ]; then rm -f $(DESTDIR)$(INITDIR)/stop-prefetch; \
	  echo "removed $(INITDIR)/stop-prefetch (now prefetch-stop): run 'update-rc.d stop-prefetch remove; update-rc.d prefetch-stop defaults'"; fi
	install -m 0755 $(GEN)/initramfs/local-bottom/prefetch $(DESTDIR)$(INITRAMFSDIR)/scripts/local-bottom/prefetch
	rm -f $(DESTDIR)$(INITRAMFSDIR)/scripts/init-bottom/prefetch # where earlier versions started it (twice is waste)
	install -m 0755 $(GEN)/initramfs/hooks/prefetch $(DESTDIR)$(INITRAMFSDIR)/hooks/prefetch
	install -d $(DESTDIR)$(DRACUTDIR)/90prefetch
	install -m 0755 $(GEN)/dracut/90prefetch/* $(DESTDIR)$(DRACUTDIR)/90prefetch/
	@echo "run 'update-initramfs -u' to start prefetchd from the initramfs (START_FROM_INITRAMFS)"
	install -m 0644 $(GEN)/man/*.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 $(GEN)/man/*.8 $(DESTDIR)$(MANDIR)/man8/
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGDATADIR) $(DESTDIR)$(MANDIR)/man1
	install -m 0755 $(GEN)/image/prefetch-image $(DESTDIR)$(BINDIR)/prefetch-image
	install -m 0644 image/qemu-guest.sh $(DESTDIR)$(PKGDATADIR)/qemu-guest.sh
	install -m 0644 $(GEN)/man/*.1 $(DESTDIR)$(MANDIR)/man1/

uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/prefetchd $(DESTDIR)$(SBINDIR)/prefetch-reorder $(DESTDIR)$(BINDIR)/prefetch-image
	rm -f $(DESTDIR)$(PKGDATADIR)/qemu-guest.sh $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(basename $(wildcard man/*.1.in))))
	-rmdir $(DESTDIR)$(PKGDATADIR) 2>/dev/null
	rm -f $(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(notdir $(basename $(wildcard systemd/*.in))))
	rm -f $(addprefix $(DESTDIR)$(SYSTEMDSHUTDOWNDIR)/,$(notdir $(basename $(wildcard systemd/system-shutdown/*.in))))
	rm -f $(addprefix $(DESTDIR)$(INITDIR)/,$(notdir $(basename $(wildcard initscripts/*.in)))) \
	  $(DESTDIR)$(INITDIR)/stop-prefetch # prefetch-stop's name before 0.1.0
	rm -f $(DESTDIR)$(INITRAMFSDIR)/scripts/local-bottom/prefetch $(DESTDIR)$(INITRAMFSDIR)/hooks/prefetch \
	  $(DESTDIR)$(INITRAMFSDIR)/scripts/init-bottom/prefetch
	rm -f $(addprefix $(DESTDIR)$(DRACUTDIR)/90prefetch/,$(notdir $(basename $(wildcard dracut/90prefetch/*.in))))
	-rmdir $(DESTDIR)$(DRACUTDIR)/90prefetch 2>/dev/null
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(basename $(wildcard man/*.5.in)))) \
	  $(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(basename $(wildcard man/*.8.in))))
	@echo "left $(SYSCONFDIR)/default/prefetch and the state dir in place"

# make dist: prefetch-VERSION.tar.gz of the committed tree (git archive: what is not committed is not in it).
# make distcheck: that tarball unpacked elsewhere builds without -Werror, runs its unit tests and its demo.
DIST        := prefetch-$(VERSION)
dist:
	@git diff --quiet HEAD || echo "dist: warning: uncommitted changes are not in the tarball"
	git archive --format=tar.gz --prefix=$(DIST)/ -o $(DIST).tar.gz HEAD
	@echo "$(DIST).tar.gz"
distcheck: dist
	rm -rf build/distcheck && mkdir -p build/distcheck && tar -xzf $(DIST).tar.gz -C build/distcheck
	$(MAKE) -C build/distcheck/$(DIST) all unit demo
	$(MAKE) -C build/distcheck/$(DIST) install DESTDIR=$(CURDIR)/build/distcheck/root >/dev/null
	@test -x build/distcheck/root$(SBINDIR)/prefetchd && echo "distcheck: $(DIST).tar.gz builds, tests and installs on its own"

clean:
	rm -rf build prefetchd prefetch-reorder prefetch-*.tar.gz

-include $(shell find build -path build/distcheck -prune -o -name '*.d' -type f -print 2>/dev/null)
