# instrument.py MODE OUT.ptx ONESWEEP.ptx: ONESWEEP.ptx (radixSortThrust's u32/u32 onesweep kernel, nvcc
# 13 for sm_90) with a 13th parameter dbgp; right after the last item's shfl.sync.idx each thread
# stores 32 words at dbgp + 128*(tile*384 + tid): the 16 ranks %r182..%r257 and the 17th item's
# rank, then its peer mask, leader, shuffled count, popc, digit, own atomic result, the 16th
# item's peer mask, leader, shuffled count, popc and atomic result, %laneid, the first item's
# peer mask, shuffled count and popc. MODE ret: the kernel returns there (PoCL builds it in a
# third of the time; the keys are then not scattered), cont: it goes on.
import re,sys
src=open(sys.argv[3]).read()
name=re.search(r'\.entry (\S+)\(',src).group(1)
# extra param
p11=name+'_param_11[1]'
assert p11 in src
src=src.replace(p11, p11+',\n\t.param .u64 dbgp',1)
regs=['%r182','%r187','%r192','%r197','%r202','%r207','%r212','%r217','%r222','%r227','%r232','%r237','%r242','%r247','%r252','%r257',
      '%rk17','%r1805','%r258','%r1821','%r259','%r1788','%r2668','%r1752','%r253','%r1794','%r254','%r2667','%r447','%r956','%r999','%r179']
code=['\t{','\t.reg .b32 %rk17, %ix;','\t.reg .b64 %dq<4>;','\tadd.s32 %rk17, %r1821, %r259;','\tadd.s32 %rk17, %rk17, -1;',
      '\tld.param.u64 %dq0, [dbgp];','\tcvta.to.global.u64 %dq0, %dq0;',
      '\tmad.lo.s32 %ix, %r3, 384, %r1;','\tmul.wide.s32 %dq1, %ix, 128;','\tadd.s64 %dq0, %dq0, %dq1;']
for i,r in enumerate(regs):
    code.append('\tst.global.u32 [%%dq0+%d], %s;'%(4*i,r))
code.append('\t}')
mode=sys.argv[1] if len(sys.argv)>1 else 'cont'
if mode=='ret': code.append('\tret;')
anchor='\tshfl.sync.idx.b32 \t%r1821|%p134, %r2668, %r258, %r1792, %r1793;\n'
assert anchor in src, 'anchor'
src=src.replace(anchor, anchor+'\n'.join(code)+'\n',1)
open(sys.argv[2],'w').write(src)
