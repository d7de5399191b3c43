/* gpuenv wheel (placeholder until the module lands) */
#ifndef GPUENV_WHEEL_H
#define GPUENV_WHEEL_H
#include "gpuenv/core.h"
#endif
