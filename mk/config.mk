# Build configuration shared by every component (included first by ./Makefile).
#
# SAN=asan|ubsan|tsan builds everything with that sanitizer into build-$(SAN)/,
# so sanitizer and normal objects never mix.

SAN      ?=
BUILD    ?= build$(if $(SAN),-$(SAN))
CC       := gcc
MPICC    := mpicc
MPIFC    := mpifort
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
export OMPI_CC := $(CC)

# $(call objs,DIR,SOURCES): object paths under $(BUILD) for SOURCES.
objs = $(patsubst %.c,$(BUILD)/%.o,$(2))
