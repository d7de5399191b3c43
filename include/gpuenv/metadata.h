/* gpuenv metadata (placeholder until the module lands) */
#ifndef GPUENV_METADATA_H
#define GPUENV_METADATA_H
#include "gpuenv/core.h"
#endif
