/* gpuenv hw (placeholder until the module lands) */
#ifndef GPUENV_HW_H
#define GPUENV_HW_H
#include "gpuenv/core.h"
#endif
