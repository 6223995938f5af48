# Shared rules for every lab. A lab's Makefile is the single line `include ../lab.mk`.
#
#   make            build the driver and the tests from your kernels.cu
#   make check      run the tests against your kernels.cu, then a summary
#   make run        run the lab's standard dataset (time, md5, speedup, PNG)
#   make bench      performance report (GPU)
#   VARIANT=solution builds against solutions/<lab>/kernels.cu (instructors)
#   V=1             show the full compiler command lines

LAB := $(notdir $(CURDIR))
LAB_ID := $(firstword $(subst -, ,$(LAB)))
include $(CURDIR)/../../common/common.mk

VARIANT ?= student
ifeq ($(VARIANT),solution)
  KERNELS ?= $(LK_TOP)/solutions/$(LAB)/kernels.cu
else
  KERNELS ?= $(CURDIR)/kernels.cu
endif
B ?= $(CURDIR)/build/$(VARIANT)
REPORTS ?= $(B)/reports
PROG := $(B)/lab$(LAB_ID)

LAB_HEADERS := $(wildcard $(CURDIR)/*.h) $(wildcard $(LK_TOP)/common/include/labkit/*.h)
# Every C and CUDA file of the lab but main.c is linked into the driver and the tests; the
# harness's own CUDA files (e.g. a given reference kernel) sit beside the student's kernels.cu.
LAB_OBJS := $(patsubst $(CURDIR)/%.c,$(B)/%.o,$(filter-out $(CURDIR)/main.c,$(wildcard $(CURDIR)/*.c))) \
            $(patsubst $(CURDIR)/%.cu,$(B)/%.o,$(filter-out $(CURDIR)/kernels.cu,$(wildcard $(CURDIR)/*.cu))) \
            $(B)/kernels.o
TESTS := $(patsubst $(CURDIR)/tests/%.c,$(B)/tests/%,$(wildcard $(CURDIR)/tests/test_*.c))
LAB_CPPFLAGS := $(CPPFLAGS) -I$(CURDIR) -DLK_LAB='"$(LAB)"'
# The harness poisons every device allocation of the student's code (common/src/cuda_poison.c).
LAB_LDFLAGS := $(LDFLAGS) -Wl,--wrap=cudaMalloc

.PHONY: build check check-suites run bench clean
.DELETE_ON_ERROR:

build: $(PROG) $(TESTS)

$(LK_LIB): FORCE
	@$(MAKE) --no-print-directory $(LK_SUBMAKE_QUIET) -C $(LK_TOP) lib
FORCE:

$(B)/kernels.o: $(KERNELS) $(LAB_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) NVCC $(call lk_rel,$<)
	$(Q)$(NVCC) $(LAB_CPPFLAGS) $(NVCCFLAGS) -c $< -o $@

$(B)/%.o: $(CURDIR)/%.cu $(LAB_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) NVCC $(call lk_rel,$<)
	$(Q)$(NVCC) $(LAB_CPPFLAGS) $(NVCCFLAGS) -c $< -o $@

$(B)/%.o: $(CURDIR)/%.c $(LAB_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) CC $(call lk_rel,$<)
	$(Q)$(CC) $(LAB_CPPFLAGS) $(CFLAGS) -c $< -o $@

$(PROG): $(B)/main.o $(LAB_OBJS) $(LK_LIB)
	$(lk_say) LD $(call lk_rel,$@)
	$(Q)$(CC) $(CFLAGS) $(B)/main.o $(LAB_OBJS) -o $@ $(LAB_LDFLAGS) $(LK_LIB) $(LK_LIBS)

# The tests run the lab's real main.c, renamed lk_lab_main (labkit/testing.h).
$(B)/main_in_tests.o: $(CURDIR)/main.c $(LAB_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) CC $(call lk_rel,$<)
	$(Q)$(CC) $(LAB_CPPFLAGS) $(CFLAGS) -Dmain=lk_lab_main -c $< -o $@

$(B)/tests/%: $(CURDIR)/tests/%.c $(LAB_OBJS) $(B)/main_in_tests.o $(LK_LIB) $(LAB_HEADERS)
	@mkdir -p $(@D)
	$(lk_say) CC $(call lk_rel,$<)
	$(Q)$(CC) $(LAB_CPPFLAGS) $(CFLAGS) $< $(LAB_OBJS) $(B)/main_in_tests.o -o $@ $(LAB_LDFLAGS) $(LK_LIB) $(LK_TEST_LIBS) $(LK_LIBS)

# Suites report into $(REPORTS); the top-level `make check` collects every lab's reports.
check-suites: build
	@for t in $(TESTS); do $(LK_TOP)/tools/run-suite.sh $(REPORTS) lab$(LAB_ID)-$(VARIANT)-$${t##*/test_} $$t; done

check:
	@rm -rf $(REPORTS)
	@$(MAKE) --no-print-directory check-suites
	@$(LK_TOP)/tools/summary.sh $(REPORTS)

run: $(PROG)
	$(PROG) --standard --png $(B)/run.png

# A lab that times more than its bench dataset has a bench.sh: PROG [CSV] runs them all.
bench: $(PROG)
	$(if $(wildcard $(CURDIR)/bench.sh),$(CURDIR)/bench.sh $(PROG) $(BENCH_CSV),$(PROG) --bench $(if $(BENCH_CSV),--csv $(BENCH_CSV)))

clean:
	$(lk_say) CLEAN $(call lk_rel,$(CURDIR)/build)
	$(Q)rm -rf $(CURDIR)/build
