/* reduce.cu's sum in OpenCL C: the shared-memory tree all the way down (no sub-groups), u64
 * addresses cast to global pointers as our lowering does with PTX pointers. */
__kernel void reduce(ulong inp, ulong outp, int n)
{
	__global const float *in = (__global const float *)inp;
	__global float *out = (__global float *)outp;
	__local float s[256];
	uint t = get_local_id(0), i = get_group_id(0) * 512 + t;
	float v = (i < n ? in[i] : 0.0f) + (i + 256 < n ? in[i + 256] : 0.0f);
	s[t] = v;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint k = 128; k > 0; k >>= 1) {
		if (t < k)
			s[t] = v = v + s[t + k];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (t == 0)
		out[get_group_id(0)] = v;
}
