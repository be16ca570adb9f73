// Bad input to gpuprobe's own driver, through the driver API as an application would make it:
// each gives an error code (the one NVIDIA's driver gives for it) and, where the application
// could not tell why, one line of the shim's (bad_input.err); the application goes on, and a
// good module loaded and launched after all of them computes the right result.
//   - images that are not modules (text, a truncated ELF header), a cubin without PTX (made by
//     bad_input.inputs.sh: machine code cannot run here), a fatbin whose PTX entry is damaged,
//     PTX that does not parse (an instruction PTX does not have; in PTX newer than the ISA the
//     frontend knows whole only the kernel using it is refused);
//   - a kernel the backend cannot build (a warpgroup tensor-core instruction): refused at its
//     launch, its neighbour in the module runs;
//   - allocations: more memory than any device has, a size that wraps when padded;
//   - an API the own driver does not implement (mipmapped arrays): CUDA_ERROR_NOT_SUPPORTED;
//   - a missing kernel name, a block of 2048 threads;
//   - dynamic shared memory past 48 KiB: opting in past the device's limit (227 KiB, as an sm_90
//     device) fails, 100 KiB opted in runs.
#include <cuda.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static const char *name_of(CUresult rc)
{
	const char *s = nullptr;
	cuGetErrorName(rc, &s);
	return s ? s : "?";
}

#define SAY(what, call) printf("%s: %s\n", what, name_of(call))

static std::vector<char> slurp(const char *path)
{
	std::vector<char> v;
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("cannot open %s\n", path);
		exit(2);
	}
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		v.insert(v.end(), buf, buf + n);
	fclose(f);
	v.resize(v.size() + 4096, 0);   // zeros after the image: a reader that runs on finds no more
	return v;
}

static const char good_ptx[] = R"(
.version 7.8
.target sm_70
.address_size 64
.visible .entry triple(.param .u64 out)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mul.lo.u32 %r2, %r1, 3;
	mul.wide.u32 %rd2, %r1, 4;
	add.u64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r2;
	ret;
}
// Each thread writes its index at the top of 100 KiB of dynamic shared memory; out gets the
// neighbour's, read back after the barrier.
.extern .shared .align 4 .b8 dyn[];
.visible .entry top(.param .u64 out)
{
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, dyn;
	shl.b32 %r3, %r1, 2;
	add.u32 %r4, %r2, %r3;
	st.shared.u32 [%r4+102272], %r1;
	bar.sync 0;
	add.u32 %r5, %r1, 1;
	and.b32 %r5, %r5, 31;
	shl.b32 %r6, %r5, 2;
	add.u32 %r6, %r2, %r6;
	ld.shared.u32 %r7, [%r6+102272];
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	mul.wide.u32 %rd2, %r1, 4;
	add.u64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r7;
	ret;
}
)";

// A warpgroup tensor-core instruction (no SPIR-V equivalent, not emulated) in one kernel; the
// module's other kernel runs.
static const char mma_ptx[] = R"(
.version 8.0
.target sm_90a
.address_size 64
.visible .entry uses_wgmma(.param .u64 out)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<2>;
	wgmma.fence.sync.aligned;
	ld.param.u64 %rd1, [out];
	mov.b32 %r1, 1;
	st.global.u32 [%rd1], %r1;
	ret;
}
.visible .entry plain(.param .u64 out)
{
	.reg .b64 %rd<2>;
	.reg .b32 %r<2>;
	ld.param.u64 %rd1, [out];
	mov.b32 %r1, 7;
	st.global.u32 [%rd1], %r1;
	ret;
}
)";

// The same unknown instruction in PTX newer than the ISA the frontend knows whole: it may be a
// new instruction, so only its kernel is refused (at its launch); the module loads.
static const char newer_ptx[] = ".version 9.9\n.target sm_90\n.address_size 64\n"
				".visible .entry uses_new(.param .u64 out)\n{\n\t.reg .b32 %r<2>;\n\tfrobnicate.u32 %r1;\n\tret;\n}\n"
				".visible .entry nine(.param .u64 out)\n{\n\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<2>;\n"
				"\tld.param.u64 %rd1, [out];\n\tmov.b32 %r1, 9;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

static const char broken_ptx[] = ".version 7.8\n.target sm_70\n.address_size 64\n"
				 ".visible .entry k()\n{\n\tfrobnicate.u32 %r1;\n\tret;\n}\n";

int main(int argc, char **argv)
{
	if (argc != 3) {
		printf("usage: bad_input CUBIN FATBIN\n");
		return 2;
	}
	CUdevice dev;
	CUcontext ctx;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
		printf("no device\n");
		return 1;
	}
	CUmodule m;

	// Images that are not modules.
	static const char text[] = "this is not a module\n";
	SAY("plain text", cuModuleLoadData(&m, text));
	static const unsigned char elf_head[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
	SAY("an ELF header alone", cuModuleLoadData(&m, elf_head));
	std::vector<char> cubin = slurp(argv[1]);
	SAY("a cubin", cuModuleLoadData(&m, cubin.data()));
	// A fatbin whose (uncompressed) PTX entry lost its middle: its text no longer parses.
	std::vector<char> fatbin = slurp(argv[2]);
	const char *body = (const char *)memmem(fatbin.data(), fatbin.size(), ".entry", 6);
	if (!body) {
		printf("the fatbin holds no uncompressed PTX\n");
		return 2;
	}
	memset((char *)body, '@', 12);
	SAY("a damaged fatbin", cuModuleLoadData(&m, fatbin.data()));
	SAY("PTX that does not parse", cuModuleLoadData(&m, broken_ptx));
	SAY("no image", cuModuleLoadData(&m, nullptr));

	// Memory.
	CUdeviceptr big = 0, wrap = 0;
	SAY("64 TiB", cuMemAlloc(&big, (size_t)64 << 40));
	SAY("SIZE_MAX - 64 bytes", cuMemAlloc(&wrap, SIZE_MAX - 64));
	CUdeviceptr d = 0;
	SAY("128 bytes", cuMemAlloc(&d, 128));

	// An API the own driver does not implement.
	CUDA_ARRAY3D_DESCRIPTOR desc = {};
	desc.Width = 16, desc.Height = 16, desc.Format = CU_AD_FORMAT_FLOAT, desc.NumChannels = 1;
	CUmipmappedArray mip;
	SAY("a mipmapped array", cuMipmappedArrayCreate(&mip, &desc, 2));
	SAY("a mipmapped array again", cuMipmappedArrayCreate(&mip, &desc, 2));

	// A kernel the backend cannot build: refused at its launch; its neighbour runs.
	CUmodule mm;
	SAY("module with wgmma", cuModuleLoadData(&mm, mma_ptx));
	CUfunction fmma, fplain;
	void *args[] = {&d};
	SAY("get uses_wgmma", cuModuleGetFunction(&fmma, mm, "uses_wgmma"));
	SAY("launch uses_wgmma", cuLaunchKernel(fmma, 1, 1, 1, 32, 1, 1, 0, 0, args, nullptr));
	SAY("get plain", cuModuleGetFunction(&fplain, mm, "plain"));
	SAY("launch plain", cuLaunchKernel(fplain, 1, 1, 1, 1, 1, 1, 0, 0, args, nullptr));
	unsigned seven = 0;
	SAY("sync", cuCtxSynchronize());
	SAY("copy", cuMemcpyDtoH(&seven, d, 4));
	printf("plain wrote %u\n", seven);
	CUmodule mn;
	CUfunction fnew, fnine;
	SAY("newer module", cuModuleLoadData(&mn, newer_ptx));
	SAY("get uses_new", cuModuleGetFunction(&fnew, mn, "uses_new"));
	SAY("launch uses_new", cuLaunchKernel(fnew, 1, 1, 1, 1, 1, 1, 0, 0, args, nullptr));
	SAY("get nine", cuModuleGetFunction(&fnine, mn, "nine"));
	SAY("launch nine", cuLaunchKernel(fnine, 1, 1, 1, 1, 1, 1, 0, 0, args, nullptr));
	SAY("copy", cuMemcpyDtoH(&seven, d, 4));
	printf("nine wrote %u\n", seven);
	SAY("unload", cuModuleUnload(mn));

	// The good module, after all of that.
	CUmodule good;
	CUfunction f;
	SAY("good module", cuModuleLoadData(&good, good_ptx));
	SAY("missing kernel", cuModuleGetFunction(&f, good, "quadruple"));
	SAY("get triple", cuModuleGetFunction(&f, good, "triple"));
	SAY("2048 threads", cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, 0, args, nullptr));
	SAY("32 threads", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, args, nullptr));
	unsigned h[32] = {0};
	SAY("copy", cuMemcpyDtoH(h, d, sizeof(h)));
	int bad = 0;
	for (unsigned i = 0; i < 32; i++)
		bad += h[i] != 3 * i;
	printf("triple: %s\n", bad ? "WRONG" : "all 32 right");
	// Dynamic shared memory beyond 48 KiB, opted in to as on an sm_90 device (227 KiB at most).
	int optin = 0;
	SAY("opt-in limit", cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));
	printf("opt-in limit: %d bytes\n", optin);
	CUfunction ft;
	SAY("get top", cuModuleGetFunction(&ft, good, "top"));
	SAY("opt in past the limit", cuFuncSetAttribute(ft, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin + 1));
	SAY("opt in to 100 KiB", cuFuncSetAttribute(ft, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 102400));
	SAY("top, 100 KiB", cuLaunchKernel(ft, 1, 1, 1, 32, 1, 1, 102400, 0, args, nullptr));
	SAY("copy", cuMemcpyDtoH(h, d, sizeof(h)));
	bad = 0;
	for (unsigned i = 0; i < 32; i++)
		bad += h[i] != (i + 1) % 32;
	printf("top: %s\n", bad ? "WRONG" : "all 32 right");
	SAY("free", cuMemFree(d));
	SAY("unload", cuModuleUnload(good));
	SAY("unload", cuModuleUnload(mm));
	return bad;
}
