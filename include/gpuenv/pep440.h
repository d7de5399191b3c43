/* gpuenv pep440 (placeholder until the module lands) */
#ifndef GPUENV_PEP440_H
#define GPUENV_PEP440_H
#include "gpuenv/core.h"
#endif
