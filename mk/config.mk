# Build configuration shared by every component (included first by ./Makefile).
#
# SAN=asan|ubsan|tsan builds everything with that sanitizer into build-$(SAN)/,
# so sanitizer and normal objects never mix.

SAN      ?=
BUILD    ?= build$(if $(SAN),-$(SAN))
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

CC       = $(call quiet_as,$(quiet_label)) gcc
MPICC    = $(call quiet_as,$(quiet_label)) mpicc
MPIFC    = $(call quiet_as,FC) mpifort
PY       := /usr/bin/python3

OPT      ?= -O2 -g
CSTD     := -std=c11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror
SANFLAGS_asan  := -fsanitize=address,undefined -fno-omit-frame-pointer
SANFLAGS_ubsan := -fsanitize=undefined -fno-sanitize-recover=undefined
SANFLAGS_tsan  := -fsanitize=thread
SANFLAGS := $(SANFLAGS_$(SAN))

CFLAGS   := $(CSTD) $(WARN) $(OPT) -fPIC -pthread $(SANFLAGS) -MMD -MP -Icore
LDFLAGS  := -pthread $(SANFLAGS)

# The mpicc wrapper passes through our flags; export OMPI_CC so it uses gcc.
export OMPI_CC := gcc

# $(call objs,DIR,SOURCES): object paths under $(BUILD) for SOURCES.
objs = $(patsubst %.c,$(BUILD)/%.o,$(2))
