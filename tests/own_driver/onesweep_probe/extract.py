# extract.py IN.ptx OUT.ptx NAME_PART: IN's module-level lines (header, global variables) and the
# one .entry whose first line contains NAME_PART; every other function dropped. For onesweep.sh.
import sys
src, dst, part = sys.argv[1], sys.argv[2], sys.argv[3]
out, cur, depth, keep, found = [], [], 0, False, 0
for line in open(src).read().split('\n'):
    s = line.strip()
    if depth == 0 and not cur:
        if s.startswith(('.visible .entry', '.entry', '.weak .entry', '.func', '.visible .func', '.weak .func', '.extern .func')):
            if s.startswith('.extern') or s.endswith(';'):
                continue   # a prototype
            cur, keep = [line], part in line
            depth = line.count('{') - line.count('}')
            continue
        out.append(line)
        continue
    cur.append(line)
    depth += line.count('{') - line.count('}')
    if depth == 0 and any('{' in l for l in cur):
        if keep:
            out.extend(cur)
            found += 1
        cur, keep = [], False
if found != 1:
    sys.exit('extract.py: %d entries match %s' % (found, part))
open(dst, 'w').write('\n'.join(out))
