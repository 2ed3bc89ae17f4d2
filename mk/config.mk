# SPDX-License-Identifier: BSD-3-Clause
# Build configuration shared by every component (included first by ./Makefile).
#
# SAN=asan|ubsan|tsan builds everything with that sanitizer into build-$(SAN)/,
# so sanitizer and normal objects never mix.

SAN      ?=
# MPI=mpich: Debian's MPICH (libmpich-dev) instead of Open MPI, into its own
# build directory (docs/mpich.md says what works).
MPI      ?= openmpi
BUILD    ?= build$(if $(SAN),-$(SAN))$(if $(filter mpich,$(MPI)),-mpich)
MPI_SUFFIX := $(if $(filter mpich,$(MPI)),.mpich)
# Build verbosity, as kbuild: one short line per file ("  CC      build/x.o")
# by default; V=1 shows the full commands; -s (make check's suites) nothing.
# The compilers below print that line through a `sh -c` wrapper that then
# execs the real command, so a recipe needs no change and keeps its meaning
# (env assignments, `cd ... &&`); .SILENT stops make echoing the commands.
V ?= 0
ifeq ($(V),1)
  quiet_as =
else
  .SILENT:
  ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
    quiet_as =
  else
    quiet_as = sh -c 'printf "  %-7s %s\n" "$(1)" "$$0"; exec "$$@"' '$@'
  endif
endif
quiet_label = $(if $(filter %.o,$@),CC,LD)

# Sub-makes that build a whole tree (make check's `all`, the sanitizer and
# MPICH builds its suites need) use every CPU unless the caller chose a -j:
# on a fresh clone of the 2-core test VM, `all` took 88 s serial and 53 s
# with -j2, the ASan library 27 s and 14 s. (Recursive `=`: MAKEFLAGS holds
# the caller's -j only once the recipes run, and nproc runs only for a
# recipe that uses it, not at every make's start.)
SUBMAKE_J = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))

CC       = $(call quiet_as,$(quiet_label)) gcc
MPICC    = $(call quiet_as,$(quiet_label)) mpicc$(MPI_SUFFIX)
MPIFC    = $(call quiet_as,FC) mpifort$(MPI_SUFFIX)
PY       := /usr/bin/python3

OPT      ?= -O2 -g
CSTD     := -std=c11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror
# MPICH's MPI_STATUSES_IGNORE is (MPI_Status *)1: GCC 12 takes it for an
# array of size 0 passed to PMPI_Testsome and warns (a false positive).
WARN     += $(if $(MPI_SUFFIX),-Wno-stringop-overflow)
SANFLAGS_asan  := -fsanitize=address,undefined -fno-omit-frame-pointer
SANFLAGS_ubsan := -fsanitize=undefined -fno-sanitize-recover=undefined
SANFLAGS_tsan  := -fsanitize=thread
SANFLAGS := $(SANFLAGS_$(SAN))

CFLAGS   := $(CSTD) $(WARN) $(OPT) -fPIC -pthread $(SANFLAGS) -MMD -MP -Icore
LDFLAGS  := -pthread $(SANFLAGS)

# The mpicc wrapper passes through our flags; export OMPI_CC so it uses gcc.
export OMPI_CC := gcc
export MPICH_CC := gcc

# $(call objs,DIR,SOURCES): object paths under $(BUILD) for SOURCES.
objs = $(patsubst %.c,$(BUILD)/%.o,$(2))
