#!/usr/bin/env python3
"""Prints a hash of each code and constant section of a CUDA cubin (an ELF file): two kernels
with the same lines here have the same machine code whatever their symbol names."""
import hashlib, struct, sys

def sections(path):
    data = open(path, 'rb').read()
    assert data[:4] == b'\x7fELF' and data[4] == 2, 'not a 64-bit ELF'
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3A)
    hdrs = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize) for i in range(shnum)]
    strtab = hdrs[shstrndx]
    def name(off):
        s = data[strtab[4] + off:]
        return s[:s.index(b'\0')].decode()
    for h in hdrs:
        n, typ, off, size = name(h[0]), h[1], h[4], h[5]
        if typ == 8:  # NOBITS
            yield n, size, 'nobits'
        else:
            yield n, size, hashlib.sha256(data[off:off + size]).hexdigest()[:16]

for path in sys.argv[1:]:
    for n, size, h in sections(path):
        if n.startswith(('.text', '.nv.constant', '.nv.shared', '.nv.info.')):
            print(f'{n} {size} {h}')
