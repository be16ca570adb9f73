/* C++ (Itanium ABI) symbol demangling for kernel names. */
#ifndef GPUPROBE_DEMANGLE_H
#define GPUPROBE_DEMANGLE_H

/* The demangled form of name, malloc'd; NULL when name is not a mangled C++ name (an extern "C"
 * kernel) or cannot be demangled. */
char *demangle(const char *name);

#endif
