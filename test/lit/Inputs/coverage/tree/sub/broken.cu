// Does not parse: the report lists it with its first error.
#include "missing_header.h"
__global__ void k(int *p) { p[0] = 1; }
