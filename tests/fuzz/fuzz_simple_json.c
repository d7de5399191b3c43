/* Fuzz target: the PEP 691 JSON simple index page parser (fuzz_simple_page.h). */
#include "gpuenv/index.h"

#define SIMPLE_PARSE gpuenv_simple_json_parse
#include "fuzz_simple_page.h"
