/* gpuenv pep508 (placeholder until the module lands) */
#ifndef GPUENV_PEP508_H
#define GPUENV_PEP508_H
#include "gpuenv/core.h"
#endif
