/* Fuzz target: the PEP 503 HTML simple index page parser (fuzz_simple_page.h). */
#include "gpuenv/index.h"

#define SIMPLE_PARSE gpuenv_simple_html_parse
#include "fuzz_simple_page.h"
