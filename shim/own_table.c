/* The own driver's slots: each export it implements, by name (own_list.h). */
#include "shim/own.h"

#define OWN(name, impl) shim_fnty_##name own_##impl;
#include "shim/own_list.h"
#undef OWN

const struct own_fn own_fns[] = {
#define OWN(name, impl) {#name, (void *)(shim_fnty_##name *)own_##impl},
#include "shim/own_list.h"
#undef OWN
};
const size_t own_nfns = sizeof(own_fns) / sizeof(own_fns[0]);
