/* Fuzz target: the PEP 691 JSON simple index page parser (fuzz_simple_page.h),
 * and, for every input, the same answer as the reader it replaced, over
 * jansson's tree (tests/unit/simple_json_ref.c): the same files field by
 * field, the same warnings, the same first error (issue 22 item 16). */
#include "gpuenv/index.h"

#include "../unit/simple_json_ref.h"

#define SIMPLE_PARSE gpuenv_simple_json_parse
#define SIMPLE_REFERENCE ref_simple_json_compare
#include "fuzz_simple_page.h"
