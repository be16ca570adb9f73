#!/usr/bin/env python3
"""Textures and surfaces, spirv/ against amdgpu/'s LLVM lowering (nvptx64, through LLVM's PTX, our
frontend and spirv/ on PoCL): for each seed, a kernel of 64 threads samples 8 random descriptors
(spirv/texture.h: every CUarray_format, 1/2/4 channels, point/linear, the four address modes per
dimension, normalized or not, read as integers or not, border colors, sizes 1..5) with random
coordinates through tex 1d/2d/3d/a1d/a2d/cube/acube (float and integer coordinates, float and
integer results), tld4 r/g/b/a, txq and suld.b (b8, b16, b32, v2, v4, b64; 1d/2d/3d/a1d/a2d),
hashing every result bit into one word. spirv/lower_tex.c is the reference: its hash becomes the
expected value of the case run through the LLVM lowering, which must give the same.
usage: tex_differential.py SPIRV_CONFORMANCE AMDGPU_LLVM_CONFORMANCE [SEED...]"""
import os, random, re, struct, subprocess, sys, tempfile

OPS = "1d,2d,2di,3d,a1d,a2d,a2df,cube,acube,fetch1,fetch2,fetch3,tld4,txq,suld".split(",")


def gen(seed, ops):
    R = random.Random(seed)
    descs=[]
    for k in range(8):
        fmt = R.choice([1,2,3,8,9,10,0x10,0x20])
        ch = R.choice([1,2,4])
        filt = R.choice([0,1])
        addr = [R.choice([0,1,2,3]) for _ in range(3)]
        flags = R.choice([0,1,2,3])
        border = [R.choice([0.0,1.0,0.25,-2.0,3.5]) for _ in range(4)]
        w = R.choice([1,2,3,4,5]); h = R.choice([1,2,3]); d = R.choice([1,2])
        words=[0,0,80,0,240,0,w,h,d,6,fmt,ch,filt]+addr+[flags,0]+[struct.unpack('<I',struct.pack('<f',b))[0] for b in border]
        descs.append(words)
    tex=bytearray(4000)
    for i in range(len(tex)):
        b=R.randrange(256)
        if i%2==1: b&=~0x40
        tex[i]=b
    texw=struct.unpack('<%dI'%(len(tex)//4), tex)
    T=64
    co=[R.uniform(-2.0,8.0) if R.random()<0.5 else R.uniform(-1.5,1.5) for _ in range(T*8)]
    ints=[R.randrange(-3,9) for _ in range(T*8)]
    for t in range(T):
        ints[t*8+2]=R.randrange(0,2)  # layer
    L=[]
    L.append('# texture fuzz %d (differential: spirv/ vs the LLVM lowering)'%seed)
    L.append('backend opencl'); L.append('kernel k'); L.append('block 64 1 1')
    dw=[]
    for words in descs: dw+=words
    L.append('buf desc u32 = '+' '.join(str(x) for x in dw))
    L.append('buf texels u32 = '+' '.join('0x%08x'%x for x in texw))
    for k in range(len(descs)):
        L.append('ptr desc %d texels'%(k*88))
    L.append('buf co f32 = '+' '.join('%.6f'%x for x in co))
    L.append('buf iv s32 = '+' '.join(str(x) for x in ints))
    L.append('buf o u32[1]')
    L.append('expect o = 0')
    L.append('ptx:')
    P=[]
    P.append('.version 7.0\n.target sm_70\n.address_size 64')
    P.append('.visible .entry k(.param .u64 pdesc, .param .u64 ptex, .param .u64 pco, .param .u64 piv, .param .u64 po)\n{')
    P.append('\t.reg .pred %p<4>;\n\t.reg .b32 %r<64>;\n\t.reg .f32 %f<64>;\n\t.reg .b64 %rd<16>;')
    P.append('''	ld.param.u64 %rd1, [pdesc];
	ld.param.u64 %rd2, [pco];
	ld.param.u64 %rd3, [piv];
	ld.param.u64 %rd4, [po];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd5, %r1, 32;
	add.s64 %rd2, %rd2, %rd5;
	add.s64 %rd3, %rd3, %rd5;
	ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd2];
	ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd2+16];
	ld.global.v4.s32 {%r2, %r3, %r4, %r5}, [%rd3];
	ld.global.v4.s32 {%r6, %r7, %r8, %r9}, [%rd3+16];
	mul.lo.u32 %r20, %r1, -1640531535;
	mov.u32 %r10, 0;
LOOP:
	mul.wide.u32 %rd6, %r10, 88;
	add.s64 %rd7, %rd1, %rd6;''')
    def mixr(regs):
        s=''
        for r in regs:
            s+='\txor.b32 %%r20, %%r20, %s;\n\tmul.lo.u32 %%r20, %%r20, 16777619;\n'%r
        return s
    def mixf(fregs):
        s=''
        for i,f in enumerate(fregs):
            s+='\tmov.b32 %%r%d, %s;\n'%(40+i,f)
        return s+mixr(['%%r%d'%(40+i) for i in range(len(fregs))])
    V4F='{%f20, %f21, %f22, %f23}'; V4R='{%r30, %r31, %r32, %r33}'
    F4=['%f20','%f21','%f22','%f23']; R4=['%r30','%r31','%r32','%r33']
    body={
     '1d':  '\ttex.1d.v4.f32.f32 %s, [%%rd7, {%%f1}];\n'%V4F+mixf(F4),
     '2d':  '\ttex.2d.v4.f32.f32 %s, [%%rd7, {%%f1, %%f2}];\n'%V4F+mixf(F4),
     '2di': '\ttex.2d.v4.s32.f32 %s, [%%rd7, {%%f5, %%f6}];\n'%V4R+mixr(R4),
     '3d':  '\ttex.3d.v4.f32.f32 %s, [%%rd7, {%%f1, %%f2, %%f3, %%f3}];\n'%V4F+mixf(F4),
     'a1d': '\ttex.a1d.v4.f32.f32 %s, [%%rd7, {%%r4, %%f7}];\n'%V4F+mixf(F4),
     'a2d': '\ttex.a2d.v4.u32.f32 %s, [%%rd7, {%%r4, %%f5, %%f8, %%f8}];\n'%V4R+mixr(R4),
     'a2df':'\ttex.a2d.v4.f32.f32 %s, [%%rd7, {%%r4, %%f2, %%f8, %%f8}];\n'%V4F+mixf(F4),
     'cube':'\ttex.cube.v4.f32.f32 %s, [%%rd7, {%%f4, %%f5, %%f6, %%f6}];\n'%V4F+mixf(F4),
     'acube':'\ttex.acube.v4.f32.f32 %s, [%%rd7, {%%r4, %%f6, %%f4, %%f8}];\n'%V4F+mixf(F4),
     'fetch1':'\ttex.1d.v4.u32.s32 %s, [%%rd7, {%%r2}];\n'%V4R+mixr(R4),
     'fetch2':'\ttex.2d.v4.f32.s32 %s, [%%rd7, {%%r2, %%r3}];\n'%V4F+mixf(F4),
     'fetch3':'\ttex.3d.v4.s32.s32 %s, [%%rd7, {%%r6, %%r3, %%r4, %%r4}];\n'%V4R+mixr(R4),
     'tld4':''.join('\ttld4.%s.2d.v4.f32.f32 %s, [%%rd7, {%%f1, %%f2}];\n'%(c,V4F)+mixf(F4) for c in 'rgba')+
            '\ttld4.g.2d.v4.u32.f32 %s, [%%rd7, {%%f5, %%f3}];\n'%V4R+mixr(R4),
     'txq':''.join('\ttxq.%s.b32 %%r30, [%%rd7];\n'%q+mixr(['%r30']) for q in ['width','height','depth','array_size','channel_order','channel_data_type','normalized_coords','filter_mode','addr_mode_0']),
     'suld':'\tshl.b32 %r50, %r7, 2;\n\tadd.s32 %r50, %r50, %r8;\n'+
            '\tsuld.b.2d.b32.trap %r30, [%rd7, {%r50, %r3}];\n'+mixr(['%r30'])+
            '\tsuld.b.1d.b8.trap %rs1, [%rd7, {%r50}];\n\tcvt.u32.u16 %r31, %rs1;\n'+mixr(['%r31'])+
            '\tsuld.b.2d.b16.trap %rs2, [%rd7, {%r50, %r4}];\n\tcvt.u32.u16 %r32, %rs2;\n'+mixr(['%r32'])+
            '\tsuld.b.3d.v2.b32.trap {%r33, %r34}, [%rd7, {%r50, %r3, %r4, %r4}];\n'+mixr(['%r33','%r34'])+
            '\tsuld.b.a1d.v4.b32.trap {%r35, %r36, %r37, %r38}, [%rd7, {%r4, %r50}];\n'+mixr(['%r35','%r36','%r37','%r38'])+
            '\tsuld.b.a2d.b64.trap %rd10, [%rd7, {%r4, %r50, %r3, %r3}];\n\tcvt.u32.u64 %r39, %rd10;\n\tshr.u64 %rd10, %rd10, 32;\n\tcvt.u32.u64 %r41, %rd10;\n'+mixr(['%r39','%r41']),
    }
    for op in ops: P.append(body[op].rstrip('\n'))
    P.append('''	add.u32 %r10, %r10, 1;
	setp.lt.u32 %p1, %r10, 8;
	@%p1 bra LOOP;
	atom.global.xor.b32 %r60, [%rd4], %r20;
	ret;
}''')
    ptx='\n'.join(P).replace('.reg .b64 %rd<16>;','.reg .b64 %rd<16>;\n\t.reg .b16 %rs<4>;')
    return '\n'.join(L)+'\n'+ptx+'\n'


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    sp, lv = sys.argv[1], sys.argv[2]
    seeds = [int(s) for s in sys.argv[3:]] or [1, 2, 3]
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for seed in seeds:
            path = os.path.join(d, "tex_differential_%d.case" % seed)
            text = gen(seed, OPS)
            open(path, "w").write(text)
            r = subprocess.run([sp, path], capture_output=True, text=True)
            if r.returncode == 77:
                print("SKIP: " + (r.stdout + r.stderr).strip()[:200])
                return 77
            m = re.search(r"o\[0\] = (0x[0-9a-f]+), expected", r.stdout + r.stderr)
            if not m:
                print("FAIL seed %d: spirv/ gave no hash: %s" % (seed, (r.stdout + r.stderr).strip()[-300:]))
                bad += 1
                continue
            open(path, "w").write(text.replace("expect o = 0\n", "expect o = %s\n" % m.group(1)))
            r = subprocess.run([lv, path], capture_output=True, text=True)
            ok = r.returncode == 0 and re.search(r"^PASS ", r.stdout, re.M)
            print("%s seed %d: spirv/ %s, LLVM %s" % ("ok" if ok else "FAIL", seed, m.group(1),
                  "the same" if ok else (r.stdout + r.stderr).strip()[-300:]))
            bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
