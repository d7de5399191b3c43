/* gpuenv elf (placeholder until the module lands) */
#ifndef GPUENV_ELF_H
#define GPUENV_ELF_H
#include "gpuenv/core.h"
#endif
