# check.py DBG.bin [n [seed]]: the ranks instrument.py's kernel dumped against the host's (a tile's
# stable order by digit: keys of smaller digits, then the same digit earlier in the tile), and
# the first item's peer masks of warp 0 of tile 0 against the lanes holding the same digit.
import ctypes, struct, sys
d = open(sys.argv[1], 'rb').read()
n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
libc = ctypes.CDLL('libc.so.6')
libc.srand(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
keys = []
for i in range(n):
    a = libc.rand(); b = libc.rand(); keys.append(((a << 16) ^ b) & 0xffffffff)
v = struct.unpack('<%dI' % (len(d) // 4), d)
tile = 6528
def key(tb, w, i, l):
    j = tb * tile + w * 544 + i * 32 + l
    return keys[j] if j < n else 0xffffffff
bad = total = 0
for tb in range((n + tile - 1) // tile):
    dig = [key(tb, j // 544, (j % 544) // 32, j % 32) & 255 for j in range(tile)]
    cnt = [0] * 256
    for x in dig: cnt[x] += 1
    pre, s = [0] * 256, 0
    for b in range(256): pre[b] = s; s += cnt[b]
    seen, rank = [0] * 256, [0] * tile
    for j in range(tile): rank[j] = pre[dig[j]] + seen[dig[j]]; seen[dig[j]] += 1
    for t in range(384):
        base = (tb * 384 + t) * 32
        if base + 32 > len(v): continue
        for i in range(17):
            total += 1
            bad += v[base + i] != rank[(t // 32) * 544 + i * 32 + t % 32]
print('%d of %d ranks wrong' % (bad, total))
for l in range(32):
    row = v[l * 32:l * 32 + 32]
    dg = key(0, 0, 0, l) & 255
    want = sum(1 << m for m in range(32) if key(0, 0, 0, m) & 255 == dg)
    print('tile 0 lane %2d digit %02x peers %08x want %08x' % (l, dg, row[29], want))
