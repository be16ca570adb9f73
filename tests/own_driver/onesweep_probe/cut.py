# cut.py 'ANCHOR LINE' OUT.ptx REG,REG,...: the onesweep kernel (/tmp/rdx/k20.ptx here; edit the path)
# with a 13th parameter dbgp; right after the line ANCHOR (tabs as \t) each thread stores the
# registers at dbgp + 128*(tile*384 + tid), then returns. For bisecting with harness.c.
import re,sys
src=open('/tmp/rdx/k20.ptx').read()
name=re.search(r'\.entry (\S+)\(',src).group(1)
p11=name+'_param_11[1]'
src=src.replace(p11, p11+',\n\t.param .u64 dbgp',1)
anchor=sys.argv[1].replace('\\t','\t')+'\n'
regs=sys.argv[3].split(',')
code=['\t{','\t.reg .b32 %ix;','\t.reg .b64 %dq<4>;','\tld.param.u64 %dq0, [dbgp];','\tcvta.to.global.u64 %dq0, %dq0;',
      '\tmad.lo.s32 %ix, %r3, 384, %r1;','\tmul.wide.s32 %dq1, %ix, 128;','\tadd.s64 %dq0, %dq0, %dq1;']
for i,r in enumerate(regs): code.append('\tst.global.u32 [%%dq0+%d], %s;'%(4*i,r))
code += ['\t}','\tret;']
assert src.count(anchor)==1, anchor
src=src.replace(anchor, anchor+'\n'.join(code)+'\n',1)
open(sys.argv[2],'w').write(src)
