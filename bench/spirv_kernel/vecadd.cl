/* cuda-samples' vectorAdd kernel in OpenCL C, u64 addresses cast to global pointers as our
 * lowering does with PTX pointers. */
__kernel void vec_add(ulong ap, ulong bp, ulong cp, int n)
{
	__global const float *a = (__global const float *)ap;
	__global const float *b = (__global const float *)bp;
	__global float *c = (__global float *)cp;
	int i = get_global_id(0);
	if (i < n)
		c[i] = a[i] + b[i] + 0.0f;
}
