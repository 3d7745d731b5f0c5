#include "vfw_ktest.c"
