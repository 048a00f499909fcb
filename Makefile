# threadlab -- build, test, bench, install.
#
#   make              build build/threadlab
#   make demo         the five models side by side under load (DEMO_ARGS=...)
#   make check        unit, integration and CLI tests (the CI command)
#   make check-stress N=10  make check N times beside two CPU hogs it starts itself
#   make docs-check   the docs' figures rerun, their terms, zh/en twins (in check)
#   make check-asan   the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make check-tsan   the same under ThreadSanitizer
#   make check-valgrind  leaks and memory errors under valgrind
#   make check-faults  the echo suite's load cases under EINTR and 1-7 byte I/O shims
#   make check-sim-props N=2000  the simulator's laws on N random configurations
#                     (make check draws 100)
#   make bench        the switch costs, every model vs the best peer of its kind
#                     (vthread vs Go's goroutines and the multireactor), the
#                     board's cost, idle connections' memory (docs/performance.md;
#                     not part of check)
#   make bench-sim    real models against their simulations, about 15 minutes (calibrates first
#                     into build/bench-sim.profile; PROFILE=file to skip that)
#   make sched-probe  this machine's scheduler, as docs/simulator.md quotes it
#   make soak         ten minutes of faults against every model (not in check)
#   make handout LAB=NN DEST=dir   a lab's handout (no answers in it)
#   make lab-check LAB=NN          points per step and a total (LAB_JSON=1: JSON;
#                                  LANG=zh: in Chinese)
#   make lab-grade LAB=NN DIR=path grade a student's tree (only its lab files)
#   make answers LAB=NN DEST=dir   for teachers: answers, reference code, mutants
#   make lab-mutants LAB=NN        the lab's check fails on every wrong answer
#   make lab-races LAB=NN          its forced races: 10 of 10 runs, beside CPU hogs
#   make check-mutants             the labs test with every lab's mutants (CI)
#   make install      PREFIX=/usr/local DESTDIR=
#   make VTHREAD_SWITCH=ucontext   vthread with swapcontext (into build/ucontext/)
#   make clean

PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
SAN      ?=

ifeq ($(SAN),asan)
  BUILD    := build/asan
  SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifeq ($(SAN),tsan)
  BUILD    := build/tsan
  SANFLAGS := -fsanitize=thread
else ifeq ($(SAN),)
  BUILD    := build
  SANFLAGS :=
else
  $(error SAN must be asan, tsan or empty, not '$(SAN)')
endif

# vthread's context switch: asm (x86-64 and aarch64, models/vthread/switch.c)
# or ucontext (glibc's swapcontext, any CPU), built apart from the other.
VTHREAD_SWITCH ?= asm
SWITCHFLAGS :=
ifeq ($(VTHREAD_SWITCH),ucontext)
  BUILD    := $(BUILD)/ucontext
  SWITCHFLAGS := -DVTHREAD_UCONTEXT
else ifneq ($(VTHREAD_SWITCH),asm)
  $(error VTHREAD_SWITCH must be asm or ucontext, not '$(VTHREAD_SWITCH)')
endif

OPT      ?= -O2
WARN     := -Wall -Wextra -Werror -pedantic -Wno-overlength-strings
CFLAGS   += -std=c11 $(WARN) $(OPT) -g -D_GNU_SOURCE -pthread -MMD -MP $(SANFLAGS) $(SWITCHFLAGS)
CPPFLAGS += -Imodels -I.
# -rdynamic: the blocked checker's stack traces name our functions.
LDFLAGS  += -pthread -rdynamic $(SANFLAGS)

# pkg-config is asked only when building, so that `make clean` works anywhere.
# Check is needed only by the goals that build tests.
NEEDS_DEPS := $(filter-out clean,$(or $(MAKECMDGOALS),all))
NEEDS_CHECK := $(filter check% tests lab-check lab-grade lab-mutants $(BUILD)/tests/%,$(NEEDS_DEPS))
ifneq ($(NEEDS_DEPS),)
  DEPS_OK := $(shell scripts/need-deps $(if $(NEEDS_CHECK),tests) >&2 && echo ok)
  ifneq ($(DEPS_OK),ok)
    $(error missing dependencies (see above))
  endif
  NCURSES_CFLAGS := $(shell pkg-config --cflags ncursesw)
  NCURSES_LIBS   := $(shell pkg-config --libs ncursesw)
  ifneq ($(NEEDS_CHECK),)
    CHECK_CFLAGS := $(shell pkg-config --cflags check)
    CHECK_LIBS   := $(shell pkg-config --libs check)
  endif
  ZLIB_LIBS      := $(shell pkg-config --libs zlib)
endif

# A lab's handout ships the other labs' files compiled, without their
# source (scripts/handout.sh): labs/prebuilt/PATH.o stands for PATH.c.
PREBUILT_SRCS := $(patsubst labs/prebuilt/%.o,%.c,$(shell find labs/prebuilt -name '*.o' 2>/dev/null))
LIB_SRCS  := $(sort $(wildcard models/*.c models/*/*.c) \
             $(wildcard sim/*.c viz/*.c load/*.c) \
             $(filter models/% sim/% viz/% load/%,$(PREBUILT_SRCS)))
CLI_SRCS  := $(wildcard cli/*.c)
# A test binary build/tests/check_X is tests/check_X.c alone, or the files
# of the folder tests/check_X/ (a suite too long for one file, by subject).
TEST_NAMES := $(sort $(patsubst tests/%.c,%,$(wildcard tests/check_*.c)) \
                     $(patsubst tests/%/,%,$(wildcard tests/check_*/)))
test_srcs = $(wildcard tests/$(1).c tests/$(1)/*.c)
TEST_SRCS := $(foreach t,$(TEST_NAMES),$(call test_srcs,$(t)))
SUPPORT_SRCS := $(sort $(wildcard tests/support/*.c tests/support/*/*.c) \
                $(filter tests/support/%,$(PREBUILT_SRCS)))

LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
SUPPORT_OBJS := $(SUPPORT_SRCS:%.c=$(BUILD)/obj/%.o)
TEST_BINS := $(TEST_NAMES:%=$(BUILD)/tests/%)
LIB       := $(BUILD)/libthreadlab.a
BIN       := $(BUILD)/threadlab

.PHONY: all demo docs-check recordings recording-pin handout lab-check lab-grade lab-mutants lab-races check-mutants answers tests check check-stress check-asan check-tsan check-valgrind check-faults check-sim-props bench bench-sim sched-probe peers fuzz soak install clean
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BIN)

# The five models side by side under load, in this terminal (q ends it).
DEMO_ARGS ?=
demo: $(BIN)
	$(BIN) demo $(DEMO_ARGS)

# Ready recordings for a class whose machine cannot run the demo: each demo
# scenario (the five models, RECORDINGS_S seconds), vthread's blocking
# lesson (the monitor's handoff beside --pin: make recording-pin makes it
# alone) and one simulated run to step through, into recordings/ (shipped
# in the repository; replay needs only the binary). Loopback only, one at a
# time.
RECORDINGS_S ?= 10
RECORDING_SCENARIOS = steady burst slow-handler cpu-heavy many-idle mixed
recordings: $(BIN)
	@mkdir -p recordings
	for s in $(RECORDING_SCENARIOS); do \
	  $(BIN) demo --scenario $$s --duration $(RECORDINGS_S) --plain --interval 500 \
	    --record recordings/$$s.tlr >/dev/null || exit 1; \
	done
	$(BIN) sim multireactor --cores 4 --conns 4 --duration 0.0005 --viz --speed 0.01 \
	  --record recordings/sim-multireactor-steps.tlr >/dev/null
	$(MAKE) recording-pin
	@ls -l recordings/*.tlr
recording-pin: $(BIN)
	scripts/record-pinning.sh $(BIN) recordings/vthread-pin.tlr $(RECORDINGS_S)

$(BIN): $(CLI_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(NCURSES_LIBS) $(ZLIB_LIBS) -lm

$(LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(NCURSES_CFLAGS) -c -o $@ $<

# In a handout, another lab's file is there only as its object.
$(BUILD)/obj/%.o: labs/prebuilt/%.o
	@mkdir -p $(@D)
	cp $< $@

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/support $(CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

define test_bin_rule
$(BUILD)/tests/$(1): $(patsubst %.c,$(BUILD)/obj/%.o,$(call test_srcs,$(1))) $(SUPPORT_OBJS) $(LIB)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $$(filter-out $$(SUPPORT_OBJS) $$(LIB),$$^) $$(SUPPORT_OBJS) $$(LIB) $$(CHECK_LIBS) $$(ZLIB_LIBS) -lm
endef
$(foreach t,$(TEST_NAMES),$(eval $(call test_bin_rule,$(t))))

# Every test runs even when one fails; the target fails if any did, and
# the last lines name the failures (tests/run-all.sh). THREADLAB_BIN lets
# the shell tests find the binary of this build flavour. The labs test
# builds the handouts itself, plain only. The docs check reruns the
# simulator's figures, one thread each: ThreadSanitizer has nothing to
# watch there (tests/sim and tests/sweep run its threads), so it skips it.
SHELL_TESTS := build cli tui tui-zh screens arch demo counts sim sweep replay \
	$(if $(filter tsan,$(SAN)),,docs) $(if $(SAN),,labs guide)
# TEST_BOARD_DIR: where the tests' servers put their boards; two checkouts
# tested at once on one machine each need their own.
TEST_BOARD_DIR ?= /tmp/threadlab-tests-$(shell id -u)
# The longest first (tests/run-all.sh runs CHECK_JOBS at once, in this
# order): the labs' handouts, the guide's tmux runs, the model suites.
SLOW_TESTS := $(filter labs guide,$(SHELL_TESTS))
CHECK_ORDER := $(SLOW_TESTS:%=tests/%/run.sh) $(TEST_BINS) \
	$(patsubst %,tests/%/run.sh,$(filter-out $(SLOW_TESTS),$(SHELL_TESTS)))
# Tests at once: three (they mostly wait, and none bounds the scheduler:
# tests/README.md); two under ThreadSanitizer, whose 5-15x slowdown turns
# some of that waiting into computing.
CHECK_JOBS ?= $(if $(filter tsan,$(SAN)),2,3)
# Check's per-case timeouts are hang guards, not bounds (tests/README.md):
# a sanitizer's slowdown on a busy machine (TSan at load 30 took 100 000
# pipelined lines past 30 s) must not reach them, so they are 4 times as
# long under the sanitizers.
CK_TIMEOUT_MULTIPLIER ?= $(if $(SAN),4,1)
CHECK_LOGS ?= $(BUILD)/logs
# What the docs, the guide and the labs quote, against the program: the
# simulator's figures rerun, the screen's words, the glossary's terms, each
# zh page beside its English twin (tests/docs/run.sh; under 30 s).
docs-check: $(BIN)
	THREADLAB_BIN=$(BIN) tests/docs/run.sh

check: $(TEST_BINS) $(BIN)
	@mkdir -p -m 700 $(TEST_BOARD_DIR)
	@CHECK_JOBS=$(CHECK_JOBS) THREADLAB_BOARD_DIR=$(TEST_BOARD_DIR) THREADLAB_BIN=$(BIN) \
	  CK_TIMEOUT_MULTIPLIER=$(CK_TIMEOUT_MULTIPLIER) \
	  tests/run-all.sh $(CHECK_LOGS) $(CHECK_ORDER) \
	  || { echo "make check ($(or $(SAN),plain)): FAILED"; exit 1; }
	@echo "make check ($(or $(SAN),plain)): all passed"

check-asan:
	$(MAKE) SAN=asan check

# make check N times beside two CPU hogs that it starts and stops itself:
# each failure by test name, and a count at the end (not part of CI).
N ?= 10
check-stress: $(TEST_BINS) $(BIN)
	scripts/check-stress.sh $(N)

# TSan needs a fixed memory layout; setarch -R turns off address
# randomisation for the test processes (newer kernels' ASLR breaks TSan).
# atexit_sleep_ms=0: by default TSan sleeps a second in every exit of a
# process with threads, which the stop tests would count as the server's.
check-tsan:
	TSAN_OPTIONS="atexit_sleep_ms=0 $${TSAN_OPTIONS:-}" \
	  setarch $$(uname -m) -R $(MAKE) SAN=tsan check

# Fault shims (tests/shims/): LD_PRELOAD libraries that interrupt every
# thread with a signal at 1 kHz (eintr) or cut every socket read and write
# to 1-7 bytes (tinyio); the five models' load cases run under each. Not
# part of check (about 4 minutes); CI runs it. The sanitizer runtimes wrap
# the same calls and must come first in the process, so the sanitizer
# builds skip it.
SHIMS := $(patsubst tests/shims/%.c,$(BUILD)/shims/%.so,$(wildcard tests/shims/*.c))
FAULT_MODELS := bio pool reactor multireactor vthread

# Every test binary and shim of this build flavour, without running them
# (.ci/run builds the three trees first, with every core).
tests: $(TEST_BINS) $(SHIMS)

$(BUILD)/shims/%.so: tests/shims/%.c
	@mkdir -p $(@D)
	$(CC) -std=c11 $(WARN) $(OPT) -g -D_GNU_SOURCE -pthread -fPIC -shared -o $@ $< -ldl

ifeq ($(SAN),)
check-faults: $(SHIMS) $(FAULT_MODELS:%=$(BUILD)/tests/check_%)
	@THREADLAB_BOARD_DIR=$(TEST_BOARD_DIR) tests/faults/run.sh $(BUILD)
else
check-faults:
	@echo "check-faults: skipped under SAN=$(SAN): an LD_PRELOAD shim and the sanitizer runtime wrap the same calls (run it on the plain build)"
endif

# The simulator's laws (Little's, latency within the run, the lines due
# sent, every line answered or lost for a reason) on N random
# configurations (check_des's "properties"; make check draws 100).
N ?= 2000
check-sim-props: $(BUILD)/tests/check_des
	THREADLAB_SIM_PROPS=$(N) CK_RUN_CASE=properties $(BUILD)/tests/check_des >$(BUILD)/sim-props.log \
	  || { grep -v '^configuration\|^  [0-9]* lines sent' $(BUILD)/sim-props.log; exit 1; }
	@tail -1 $(BUILD)/sim-props.log

# Valgrind: the pure tests in one process (no fork), and a real server
# under load, stopped by SIGINT; any leak or memory error fails.
VALGRIND := valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=9
check-valgrind: $(BIN) $(BUILD)/tests/check_echo $(BUILD)/tests/check_load
	CK_FORK=no $(VALGRIND) $(BUILD)/tests/check_echo
	CK_FORK=no $(VALGRIND) $(BUILD)/tests/check_load
	tests/valgrind_serve.sh "$(VALGRIND)" $(BIN)

# Ten minutes of mixed load and faults against every model (not in check).
SOAK_SECONDS ?= 150
soak: $(BIN)
	tests/soak/soak.sh $(BIN) $(SOAK_SECONDS)

# libFuzzer on the decoder and session (clang); make check replays the corpus.
FUZZ_SECONDS ?= 60
fuzz:
	@command -v clang >/dev/null || { echo "make fuzz needs clang (apt-get install clang libclang-rt-14-dev)"; exit 1; }
	@mkdir -p build/fuzz
	clang -g -O1 -std=c11 -D_GNU_SOURCE -Imodels -Itests/support \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    -o build/fuzz/fuzz_session tests/fuzz/libfuzzer_main.c \
	    tests/support/fuzz_session.c models/echo/decoder.c models/echo/session.c
	mkdir -p build/fuzz/corpus
	build/fuzz/fuzz_session -max_total_time=$(FUZZ_SECONDS) -max_len=4096 \
	    build/fuzz/corpus tests/fuzz/corpus

# Reference echo servers for the bench only: a naive thread-per-connection
# server in plain C (always), and libuv and libevent ones, built when their
# libraries are installed (libuv1-dev, libevent-dev), and Go's goroutine per
# connection (bench/go_echo.go) when go is (golang-go), each skipped with a
# message otherwise.
PEERS_DIR := build/peers
peers:
	@mkdir -p $(PEERS_DIR)
	$(CC) -O2 -Wall -Wextra -o $(PEERS_DIR)/tp_echo tests/bench/peers/tp_echo.c -pthread
	$(CC) -O2 -Wall -Wextra -o $(PEERS_DIR)/syscost tests/bench/syscost.c
	$(CC) -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Imodels -o $(PEERS_DIR)/switch-cost \
	  bench/switch-cost.c $(VT_SWITCH_SRCS) -pthread
	$(CC) -O2 -g -std=c11 -D_GNU_SOURCE -DVTHREAD_UCONTEXT -Wall -Wextra -Imodels \
	  -o $(PEERS_DIR)/switch-cost-ucontext bench/switch-cost.c $(VT_SWITCH_SRCS) -pthread
	$(CC) -O2 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Imodels -o $(PEERS_DIR)/echo_ir \
	  tests/bench/echo_ir.c models/echo/decoder.c models/echo/session.c
	@if pkg-config --exists libuv; then \
	  $(CC) -O2 -o $(PEERS_DIR)/uv_echo tests/bench/peers/uv_echo.c $$(pkg-config --cflags --libs libuv) -pthread; \
	else echo "bench: libuv not installed (apt-get install libuv1-dev): no libuv peer"; fi
	@if pkg-config --exists libevent; then \
	  $(CC) -O2 -o $(PEERS_DIR)/ev_echo tests/bench/peers/ev_echo.c $$(pkg-config --cflags --libs libevent) -pthread; \
	else echo "bench: libevent not installed (apt-get install libevent-dev): no libevent peer"; fi
	@if command -v go >/dev/null; then \
	  GOCACHE=$(CURDIR)/$(BUILD)/go-cache go build -o $(PEERS_DIR)/go_echo bench/go_echo.go; \
	else rm -f $(PEERS_DIR)/go_echo; \
	  echo "bench: go not installed (apt-get install golang-go): no Go peer for vthread"; fi

# The switch costs first: vthread's asm switch, ucontext's, and a wakeup
# between two kernel threads, on this machine in this run; then every model
# against its peers (bench.sh); then idle connections' memory (idle.sh).
VT_SWITCH_SRCS := models/vthread/switch.c models/vthread/stack.c
bench: $(BIN) peers
	$(PEERS_DIR)/switch-cost switch
	$(PEERS_DIR)/switch-cost-ucontext switch
	$(PEERS_DIR)/switch-cost threads
	bench/bench.sh $(BIN) $(PEERS_DIR)
	@[ "$${BENCH_QUICK:-0}" = 1 ] || bench/idle.sh $(BIN)

# Labs: a student's copy of the tree with lab NN's regions as TODO stubs,
# and that lab's checks, step by step.
handout:
	@[ -n "$(LAB)" ] && [ -n "$(DEST)" ] || { echo "usage: make handout LAB=NN DEST=dir"; exit 2; }
	scripts/handout.sh $(LAB) $(DEST)

lab-check: $(BIN)
	@[ -n "$(LAB)" ] || { echo "usage: make lab-check LAB=NN"; exit 2; }
	@BUILD=$(BUILD) LAB_LANG=$(or $(LAB_LANG),$(LANG)) scripts/lab-check.sh $(LAB)

# A student's tree, graded with this tree's tests (DIR is not written to).
lab-grade: $(BIN)
	@[ -n "$(LAB)" ] && [ -n "$(DIR)" ] || { echo "usage: make lab-grade LAB=NN DIR=path"; exit 2; }
	@BUILD=$(BUILD) scripts/lab-grade.sh $(LAB) $(DIR)

# Each of the lab's mutants (labs/NN-*/mutants/) must fail its check.
lab-mutants: $(BIN)
	@[ -n "$(LAB)" ] || { echo "usage: make lab-mutants LAB=NN"; exit 2; }
	@BUILD=$(BUILD) scripts/lab-mutants.sh $(LAB)

# The lab's forced races (labs/NN-*/races): the reference passes every one
# of 10 runs and each race's mutant fails every one, beside two CPU hogs.
lab-races: $(BIN)
	@[ -n "$(LAB)" ] || { echo "usage: make lab-races LAB=NN"; exit 2; }
	@HOGS=2 BUILD=$(BUILD) scripts/lab-races.sh $(LAB)

# Every lab's mutants (.ci/run runs it after make check: too long for make
# check's budget), MUTANT_JOBS labs at once (default 4). Only the mutants:
# make check has already proved each lab's check passes on the reference
# and fails on the handout. At the end it names each mutant that survived
# or no longer applies.
check-mutants: $(BIN)
	@THREADLAB_BOARD_DIR=$(TEST_BOARD_DIR) MAKE="$(MAKE)" scripts/check-mutants.sh

answers:
	@[ -n "$(LAB)" ] && [ -n "$(DEST)" ] || { echo "usage: make answers LAB=NN DEST=dir"; exit 2; }
	@scripts/answers.sh $(LAB) $(DEST)

# Each real model against its simulation, and the simulator's speed.
bench-sim: $(BIN)
	bench/bench-sim.sh $(BIN) $(PROFILE)

# What docs/simulator.md ("Against the real thing") says of this
# machine's scheduler: a woken thread beside a busy one, a wakeup onto a
# busy core, what else takes a core from its one thread, and who switches
# in the real servers, with perf's trace of how long each waited for a
# core (about a minute; it measures, it asserts nothing).
$(BUILD)/sched-probe: bench/sched-probe.c
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS) -o $@ $< -pthread
sched-probe: $(BUILD)/sched-probe $(BIN)
	$(BUILD)/sched-probe beside 200
	$(BUILD)/sched-probe beside 200 100
	$(BUILD)/sched-probe beside 1000 100
	$(BUILD)/sched-probe busy-core
	$(BUILD)/sched-probe gaps
	$(BUILD)/sched-probe writes
	bench/switches.sh $(BIN) bio 16
	bench/switches.sh $(BIN) multireactor 16
	bench/switches.sh $(BIN) multireactor 64

install: $(BIN)
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/threadlab
	install -D -m 0644 docs/threadlab.1 $(DESTDIR)$(PREFIX)/share/man/man1/threadlab.1

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(SUPPORT_OBJS:.o=.d) \
         $(TEST_SRCS:%.c=$(BUILD)/obj/%.d)
