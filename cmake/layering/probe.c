/* A layering probe: compiled in a library's include context (see
 * layering.cmake), it includes one header and must fail to compile when
 * that header belongs to a layer the library may not use. */
#include LAYER_PROBE_HEADER

int layer_probe(void);
int layer_probe(void) { return 0; }
