# LabKit top level. `make help` lists the targets.
include common/common.mk

REPORTS := $(LK_BUILD)/reports
LABS := $(sort $(patsubst labs/%/,%,$(dir $(wildcard labs/[0-9][0-9]-*/lab.h))))
# With the private headers of common/src (the harness files share harness_state.h).
LK_HEADERS := $(wildcard common/include/labkit/*.h common/src/*.h common/models/*/*.h)
# One archive: the kit (common/src) and the models (common/models/<model>/, all but the
# serial references, which labs and the generator compile themselves).
MODEL_SRCS := $(filter-out %/serial.c,$(wildcard common/models/*/*.c))
LK_OBJS := $(patsubst common/src/%.c,$(LK_BUILD)/common/%.o,$(wildcard common/src/*.c)) \
           $(patsubst common/src/%.cu,$(LK_BUILD)/common/%.o,$(wildcard common/src/*.cu)) \
           $(patsubst common/%.c,$(LK_BUILD)/common/%.o,$(MODEL_SRCS))
COMMON_TESTS := $(patsubst common/tests/%.c,$(LK_BUILD)/common/tests/%,$(wildcard common/tests/test_*.c)) \
                $(patsubst common/models/%.c,$(LK_BUILD)/common/models/%,$(wildcard common/models/*/tests/test_*.c))
GEN := $(LK_BUILD)/bin/labkit-gen
# The serial references, one per model in its folder (labs compile theirs the same way); the
# generator and the manifest test hash datasets with them.
SERIAL_REFS := $(wildcard common/models/*/serial.c)
# Every slides/NN-name.md is a deck; a new lab's deck needs nothing but its file.
DECKS := $(wildcard slides/[0-9][0-9]-*.md)
DECK_PDFS := $(patsubst slides/%.md,$(LK_BUILD)/slides/%.pdf,$(DECKS))
DECK_DEPS := slides/preamble.tex $(wildcard slides/plots/* labs/*/figures/*) tools/build-deck.sh
BENCH_CSV ?= $(LK_BUILD)/bench/bench.csv
# make bench-profile: the labs whose solutions it profiles (default: all).
PROFILE_LABS ?= $(LABS)

.PHONY: all help lib tools check check-suites check-common check-datasets check-labs \
        grade similarity doctor bench bench-profile docs slides slides-plots handout clean
.DELETE_ON_ERROR:

all: lib tools
	@for lab in $(LABS); do $(MAKE) --no-print-directory -C labs/$$lab build || exit 1; done

help:
	@echo "make            build the common library, tools and every lab (student files)"
	@echo "make check      the kit's self-test: common, datasets, every lab against its solution"
	@echo "make grade      grade submissions (see README); a student distribution self-grades"
	@echo "make similarity SUBMISSIONS=dir  which students' files look alike, per lab (REFERENCES=\"earlier"
	@echo "                years' class folders\"): OUT/similarity/report.md, a reason to look, not a verdict"
	@echo "make doctor     what this machine has and lacks for the kit, one line per problem"
	@echo "make bench      run every solution on its performance dataset; CSV in build/bench"
	@echo "make bench-profile  DRAM bytes per step of every solution, measured with ncu (Nsight"
	@echo "                Compute) on the bench datasets; PROFILE_LABS=\"01-...\" picks labs"
	@echo "make docs       Doxygen API documentation (warnings are errors)"
	@echo "make slides     every deck slides/NN-name.md to build/slides/NN-name.pdf (V=1: commands)"
	@echo "make slides-plots  redraw slides/plots/ from a bench CSV (BENCH_CSV=, default build/bench/bench.csv)"
	@echo "make handout    the student distribution (no solutions, checked for answers) in build/handout"
	@echo "make clean      remove every build folder"
	@echo "V=1             show the full command lines (builds print one line per step)"

lib: $(LK_LIB)

$(LK_LIB): $(LK_OBJS)
	@mkdir -p $(@D)
	$(lk_say) AR $(call lk_rel,$@)
	$(Q)ar rcs $@ $^

$(LK_BUILD)/common/models/%.o: common/models/%.c $(LK_HEADERS) common/common.mk
	@mkdir -p $(@D)
	$(lk_say) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LK_BUILD)/common/%.o: common/src/%.c $(LK_HEADERS) common/common.mk
	@mkdir -p $(@D)
	$(lk_say) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LK_BUILD)/common/%.o: common/src/%.cu $(LK_HEADERS) common/common.mk
	@mkdir -p $(@D)
	$(lk_say) NVCC $<
	$(Q)$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) -c $< -o $@

$(LK_BUILD)/common/tests/%: common/tests/%.c $(LK_LIB) $(LK_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LDFLAGS) $(LK_HARNESS_LDFLAGS) $(LK_LIB) \
	  $(LK_TEST_LIBS) $(LK_LIBS)

$(LK_BUILD)/common/models/%: common/models/%.c $(LK_LIB) $(LK_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $< -o $@ $(LDFLAGS) $(LK_HARNESS_LDFLAGS) $(LK_LIB) \
	  $(LK_TEST_LIBS) $(LK_LIBS)

tools: $(GEN)

$(GEN): datasets/labkit-gen.c $(SERIAL_REFS) $(LK_LIB) $(LK_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $< $(SERIAL_REFS) -o $@ $(LDFLAGS) $(LK_LIB) $(LK_LIBS)

# The self-test: every suite runs (a failing suite does not stop the others), then one
# summary decides the exit status. A lab that does not build is a failed suite of its own (lab.mk);
# the kit's other test programs are built under -k, and a failure there is one more.
# Without -j on the command line, the suites run CHECK_JOBS at a time (the cores, at most 4:
# more GPU test processes than that run a GPU out of memory).
CHECK_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ "$$n" -gt 4 ] && n=4; echo $$n)
check:
	@rm -rf $(REPORTS)
	@$(MAKE) --no-print-directory -k $(if $(findstring -j,$(MAKEFLAGS)),,-j$(CHECK_JOBS)) check-suites || \
	  tools/record-failure.sh $(REPORTS) kit-build \
	    "some of the kit's test programs did not build or run: fix the first error above (make doctor)"
	@tools/summary.sh $(REPORTS)

# The grader's suites time GPU code (the examples' performance stage), so under make -j they
# start when the other suites are done, never beside a lab's GPU tests on the same GPU. A
# student distribution (no solutions/) leaves them out: they test the grader, not the
# student's labs (make check-grader runs them there too).
ifeq ($(wildcard solutions),)
check-suites: check-common check-datasets check-labs
else
check-suites: check-common check-datasets check-labs grader-tests
	@$(MAKE) --no-print-directory check-grader
endif

check-common: $(COMMON_TESTS)
	@for t in $(COMMON_TESTS); do tools/run-suite.sh $(REPORTS) common-$${t##*/test_} $$t; done

check-datasets: $(LK_BUILD)/datasets/test_manifest
	@tools/run-suite.sh $(REPORTS) datasets-manifest $<

$(LK_BUILD)/datasets/test_manifest: datasets/tests/test_manifest.c $(SERIAL_REFS) $(LK_LIB) $(LK_HEADERS) $(GEN)
	@mkdir -p $(@D)
	$(lk_say) CC $<
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -DLK_GEN='"$(GEN)"' $< $(SERIAL_REFS) -o $@ $(LDFLAGS) $(LK_LIB) $(LK_TEST_LIBS) $(LK_LIBS)

# Each lab's suites run against the solution and the skeleton must still build; in a student
# handout (no solutions/) the suites run against the student's own kernels.cu. The labs are
# independent: under make -j they run side by side. Each runs the grader's static rules
# (labs/lab.mk), so the grader is built once before them.
LAB_CHECKS := $(addprefix check-lab-,$(LABS))
.PHONY: $(LAB_CHECKS)
check-labs: $(LAB_CHECKS)

$(LAB_CHECKS): check-lab-%: lib tools grader
	@lab=$*; \
	if [ -d solutions/$$lab ]; then \
	  $(MAKE) --no-print-directory -C labs/$$lab check-suites VARIANT=solution REPORTS=$(REPORTS) || exit 1; \
	  $(MAKE) --no-print-directory -C labs/$$lab build VARIANT=student || \
	    tools/record-failure.sh $(REPORTS) lab$${lab%%-*}-skeleton-build \
	      "the skeleton of labs/$$lab does not build: students would start from a broken file"; \
	else \
	  $(MAKE) --no-print-directory -C labs/$$lab check-suites VARIANT=student REPORTS=$(REPORTS) || exit 1; \
	fi

# A student distribution has no solutions/ to time: say so, and where their own code is timed.
ifeq ($(wildcard solutions),)
bench:
	@echo "make bench: this distribution has no solutions/, the instructor's code that make bench times;" >&2
	@echo "  to time your own kernels.cu, run make bench in its lab folder: cd labs/01-straightforward && make bench" >&2
	@exit 1
else
bench: lib tools
	@mkdir -p $(LK_BUILD)/bench && rm -f $(LK_BUILD)/bench/bench.csv
	@for lab in $(LABS); do $(MAKE) --no-print-directory -C labs/$$lab bench VARIANT=solution BENCH_CSV=$(LK_BUILD)/bench/bench.csv || exit 1; done
	@echo; tools/bench-summary.sh $(LK_BUILD)/bench/bench.csv $(wildcard $(LK_BUILD)/bench/profile.csv) | tee $(LK_BUILD)/bench/summary.md
	@echo; echo "CSV: $(LK_BUILD)/bench/bench.csv, table: $(LK_BUILD)/bench/summary.md"

# The bytes the counters see, beside the formula's: every lab's driver under ncu, a few steps
# (tools/bench-profile.sh); make bench's table then shows them (either order works).
bench-profile: lib tools
	@mkdir -p $(LK_BUILD)/bench && rm -f $(LK_BUILD)/bench/profile.csv
	@failed=0; for lab in $(PROFILE_LABS); do $(MAKE) --no-print-directory -C labs/$$lab bench-profile VARIANT=solution PROFILE_CSV=$(LK_BUILD)/bench/profile.csv || failed=1; done; \
	  echo; echo "CSV: $(LK_BUILD)/bench/profile.csv"; \
	  if [ -s $(LK_BUILD)/bench/bench.csv ]; then echo; tools/bench-summary.sh $(LK_BUILD)/bench/bench.csv $(LK_BUILD)/bench/profile.csv | tee $(LK_BUILD)/bench/summary.md; fi; \
	  exit $$failed
endif

# Copying, per lab, with similarity-tester on this machine (tools/similarity.sh); OUT and
# SUBMISSIONS are make grade's (grader/grader.mk).
similarity:
	@tools/similarity.sh $(foreach r,$(REFERENCES),--references $(r)) $(SUBMISSIONS) $(OUT)

doctor:
	@CUDA_ARCH='$(CUDA_ARCH)' NVCC='$(NVCC)' tools/doctor.sh

# Decks: pandoc + beamer; the build fails on LaTeX errors, cut-off text and missing glyphs.
slides: $(DECK_PDFS)

$(LK_BUILD)/slides/%.pdf: slides/%.md $(DECK_DEPS)
	@V='$(V)' tools/build-deck.sh $< $@

# One deck by its path from the kit's top (make build/slides/01-straightforward.pdf): make
# has no rule for that spelling of the file and would call an existing, stale PDF done.
DECK_PDFS_RELATIVE := $(patsubst $(LK_TOP)/%,%,$(filter $(LK_TOP)/%,$(DECK_PDFS)))
.PHONY: $(DECK_PDFS_RELATIVE)
$(DECK_PDFS_RELATIVE): %: $(LK_TOP)/%

slides-plots:
	@V='$(V)' tools/slides-plots.sh $(BENCH_CSV) slides/plots

handout:
	@tools/make-handout.sh $(LK_BUILD)/handout

docs:
	@LK_BUILD='$(LK_BUILD)' tools/docs.sh

clean:
	$(lk_say) CLEAN "$(call lk_rel,$(LK_BUILD)) labs/*/build"
	$(Q)rm -rf $(LK_BUILD) labs/*/build

# The grader's build and `make grade` live in grader/grader.mk. A student distribution has no
# example submissions (tools/instructor-only.txt): there `make grade` self-grades.
SUBMISSIONS ?= $(if $(wildcard grader/examples),grader/examples,self)
-include grader/grader.mk
