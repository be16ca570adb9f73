// Inline PTX: nested scopes with their own registers, predicates, vector operands, special
// registers, immediates in every spelling.
__device__ unsigned laneid() { unsigned r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }
__global__ void asm_kernel(unsigned *out, const unsigned *in, float *fo)
{
	unsigned a = in[threadIdx.x], b = in[threadIdx.x + 32], r, q;
	asm("{\n\t.reg .pred p, q;\n\tsetp.gt.u32 p|q, %1, %2;\n\tselp.u32 %0, %1, %2, p;\n\t}"
	    : "=r"(r) : "r"(a), "r"(b));
	asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(q) : "r"(a), "r"(b), "r"(r));
	asm("prmt.b32 %0, %1, %2, 0x3210;" : "+r"(q) : "r"(a), "r"(b));
	unsigned long long clk;
	asm volatile("mov.u64 %0, %%clock64;" : "=l"(clk));
	unsigned sm, warp;
	asm("mov.u32 %0, %%smid;" : "=r"(sm));
	asm("mov.u32 %0, %%warpid;" : "=r"(warp));
	float f;
	asm("{ .reg .f32 t; mov.f32 t, 0f3F800000; add.rn.f32 %0, t, 0f40000000; }" : "=f"(f));
	asm volatile("/* a comment inside asm */ membar.gl;" ::: "memory");
	unsigned v0, v1, v2, v3;
	asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3) : "l"(in));
	asm volatile("st.global.v2.u32 [%0+8], {%1, %2};" :: "l"(out), "r"(v0), "r"(v1) : "memory");
	unsigned bf;
	asm("bfe.u32 %0, %1, 4, 8;" : "=r"(bf) : "r"(a));
	asm("{\n .reg .b64 %%tmp64;\n mov.b64 %%tmp64, {%1, %2};\n mov.b64 {%0, _}, %%tmp64;\n}" : "=r"(v2) : "r"(a), "r"(b));
	out[threadIdx.x] = r + q + (unsigned)clk + sm + warp + laneid() + v2 + v3 + bf;
	fo[threadIdx.x] = f;
}
