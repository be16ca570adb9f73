// Texture and surface objects: fetches, filtered reads, layered, surface reads and writes.
__global__ void tex_read(cudaTextureObject_t t1, cudaTextureObject_t t2, cudaTextureObject_t t3,
			 float *out, int w)
{
	int x = threadIdx.x, y = blockIdx.x;
	float a = tex1Dfetch<float>(t1, x);
	float4 b = tex2D<float4>(t2, x + 0.5f, y + 0.5f);
	float c = tex2DLayered<float>(t3, x, y, 1);
	float d = tex3D<float>(t3, x, y, 0.5f);
	float4 g = tex2Dgather<float4>(t2, x, y, 1);
	float l = tex2DLod<float>(t3, x, y, 1.0f);
	out[y * w + x] = a + b.x + b.w + c + d + g.y + l;
}
__global__ void surf_rw(cudaSurfaceObject_t s, cudaSurfaceObject_t s3, int w)
{
	int x = threadIdx.x, y = blockIdx.x;
	float v = surf2Dread<float>(s, x * 4, y);
	surf2Dwrite(v * 2.f, s, x * 4, y);
	uchar4 c = surf3Dread<uchar4>(s3, x * 4, y, 1, cudaBoundaryModeClamp);
	surf3Dwrite(c, s3, x * 4, y, 2);
	int i = surf1Dread<int>(s, x * 4, cudaBoundaryModeZero);
	surf1Dwrite(i + 1, s, x * 4);
}
