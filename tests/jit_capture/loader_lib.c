/* A library that loads a module for the application (as cuBLAS loads its own kernels): the
 * shim names the library its load call returns to. Built as libcublasLt_standin.so (an NVIDIA
 * library's name) and copied under another name by cubin.sh; lazy_app calls it when
 * LAZY_APP_LOADER names it. */
typedef int (*library_load_fn)(void **, const void *, void *, void **, unsigned, void *, void **, unsigned);

int loader_library_load(library_load_fn load, void **lib, const void *image)
{
	volatile int rc = load(lib, image, 0, 0, 0, 0, 0, 0);   /* not a tail call: the return address stays here */
	return rc;
}
