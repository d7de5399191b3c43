/* gpuenv toml (placeholder until the module lands) */
#ifndef GPUENV_TOML_H
#define GPUENV_TOML_H
#include "gpuenv/core.h"
#endif
