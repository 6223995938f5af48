# Toolchain settings shared by the top-level Makefile and labs/lab.mk.
# Numerical policy (labs/README.md): no fast-math, no FMA contraction on host or device, so
# serial and GPU results are bit-identical.

LK_TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
LK_BUILD ?= $(LK_TOP)/build

CUDA_HOME ?= $(or $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)),/usr/local/cuda)
NVCC ?= $(CUDA_HOME)/bin/nvcc
CC := gcc

# CUDA_ARCH: the GPU present when there is one, else Turing..Hopper plus PTX for newer GPUs.
# Override with e.g. CUDA_ARCH=sm_90 or CUDA_ARCH="sm_80 sm_90".
ifeq ($(origin CUDA_ARCH),undefined)
  LK_GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | grep -E '^ *[0-9]+\.[0-9]+ *$$' | head -n 1 | tr -d ' .')
  CUDA_ARCH := $(if $(LK_GPU_CC),sm_$(LK_GPU_CC),sm_75 sm_80 sm_86 sm_89 sm_90)
endif
LK_ARCH_NUMS := $(patsubst sm_%,%,$(CUDA_ARCH))
LK_PTX_ARCH := $(lastword $(sort $(LK_ARCH_NUMS)))
NVCC_ARCHFLAGS := $(foreach a,$(LK_ARCH_NUMS),-gencode arch=compute_$(a),code=sm_$(a)) \
                  -gencode arch=compute_$(LK_PTX_ARCH),code=compute_$(LK_PTX_ARCH)

LK_WARN := -Wall -Wextra -Wshadow -Wno-unused-parameter
# common/models: a lab's serial.c compiles its model's reference as "<model>/serial.c".
CPPFLAGS += -I$(LK_TOP)/common/include -I$(LK_TOP)/common/models -I$(CUDA_HOME)/include \
            -I/usr/include/libpng16 -D_POSIX_C_SOURCE=200809L -DLK_CUDA_ARCHS='"$(CUDA_ARCH)"' \
            -DLK_TOP_DIR='"$(LK_TOP)"'
CFLAGS ?= -O3 -g
# OpenMP: the dataset generators spread large grids over the cores (labkit/parallel.h).
CFLAGS += -std=c11 $(LK_WARN) -ffp-contract=off -fno-fast-math -pthread -fopenmp
NVCCFLAGS ?= -O3 -g -lineinfo
NVCCFLAGS += -std=c++17 --fmad=false $(NVCC_ARCHFLAGS) \
             -Xcompiler -ffp-contract=off,-fno-fast-math,-Wall
LDFLAGS += -L$(CUDA_HOME)/lib64 -pthread
# A program that links the harness (labkit/harness.h) links its cudaMalloc wrapper, which
# poisons the student's device allocations (common/src/cuda_poison.c).
LK_HARNESS_LDFLAGS := -Wl,--wrap=cudaMalloc
# The machine-wide GPU lock (flock): the grader's GPU stages and make bench take it, so that
# no two of them time on one GPU at once.
LK_GPU_LOCK := /tmp/labkit-gpu.lock
LK_LIBS := -lpng16 -lz -lcrypto -lcudart_static -lstdc++ -ldl -lrt -lm
LK_TEST_LIBS := -lcriterion

LK_LIB := $(LK_BUILD)/common/liblabkit.a

# Quiet builds: one line per step, `  CC      path` (kernel style); `make V=1` prints the
# full command lines. Compiler errors and warnings always print in full.
#   $(lk_say) NVCC $(call lk_rel,$<)        then the command, prefixed with $(Q)
V ?= 0
ifeq ($(V),1)
  Q :=
  lk_say := @:
else
  Q := @
  lk_say := @printf '  %-7s %s\n'
endif
# A path as the user knows it: relative to the kit's top folder.
lk_rel = $(patsubst $(LK_TOP)/%,%,$(abspath $(1)))
# Sub-makes stay silent about targets that are up to date, unless V=1.
LK_SUBMAKE_QUIET := $(if $(filter 1,$(V)),,-s)
