/* gpuenv fatbin (placeholder until the module lands) */
#ifndef GPUENV_FATBIN_H
#define GPUENV_FATBIN_H
#include "gpuenv/core.h"
#endif
