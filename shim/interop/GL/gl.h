/* The two OpenGL types cudaGL.h's prototypes use, with their ABI (GL's own header is not a
 * build dependency of the shim). Used only to generate and compile the shim's interop exports. */
#ifndef GPUPROBE_SHIM_GL_STUB_H
#define GPUPROBE_SHIM_GL_STUB_H
typedef unsigned int GLenum;
typedef unsigned int GLuint;
#endif
