#!/usr/bin/env python3
"""Shrinks what a CUDA shared library costs to ship to one GPU architecture WITHOUT relinking it:
the SASS (ELF) entries of other architectures inside its .nv_fatbin section are overwritten with
zeros in place (sizes and offsets unchanged), so they compress to nothing. PTX entries and every
entry of the kept architecture stay. The driver only loads the SASS that matches the GPU (or
JIT-compiles PTX), so a zeroed entry of another architecture is never read on that GPU.
Refuses to touch a file whose fatbin does not parse exactly (every wrapper's entries must add up).
Part of the offline bundle's build (lab/bundle/python-tree.sh, `npm run bundle -- --with-vllm --keep-sass 90`).
Usage: strip-sass.py [--keep 90] [--dry-run] LIB.so..."""
import argparse, struct, sys

MAGIC = 0xBA55ED50

def nv_fatbin(data):
    # ELF64 section headers -> (offset, size) of .nv_fatbin
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def sh(i): return struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
    stroff = sh(shstrndx)[4]
    for i in range(shnum):
        h = sh(i)
        name = data[stroff + h[0]: data.index(b"\0", stroff + h[0])].decode()
        if name == ".nv_fatbin": return h[4], h[5]
    return None

def entries(data, off, size):
    """Yields (entry_offset, kind, arch, header_size, payload_size); raises if the chain is off."""
    pos, end = off, off + size
    while pos < end:
        if pos + 16 > end: break
        magic, ver, hsize, fsize = struct.unpack_from("<IHHQ", data, pos)
        if magic != MAGIC:
            if not any(data[pos:pos + 16]): pos += 8; continue   # alignment padding between wrappers
            raise ValueError(f"bad wrapper magic at {pos:#x}")
        p, wend = pos + hsize, pos + hsize + fsize
        while p < wend:
            kind, _u, ehs, psize = struct.unpack_from("<HHIQ", data, p)
            arch, = struct.unpack_from("<I", data, p + 28)
            if kind not in (1, 2) or ehs < 32 or p + ehs + psize > wend: raise ValueError(f"bad entry at {p:#x}")
            yield p, kind, arch, ehs, psize
            p += ehs + psize
        if p != wend: raise ValueError(f"wrapper at {pos:#x}: entries end at {p:#x}, not {wend:#x}")
        pos = wend

def main():
    ap = argparse.ArgumentParser(); ap.add_argument("--keep", type=int, default=90); ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("libs", nargs="+"); a = ap.parse_args()
    for lib in a.libs:
        data = bytearray(open(lib, "rb").read())
        sec = nv_fatbin(data)
        if not sec: print(f"{lib}: no .nv_fatbin"); continue
        try: ents = list(entries(data, *sec))
        except ValueError as e: print(f"{lib}: not touched ({e})"); continue
        hist, zeroed = {}, 0
        for p, kind, arch, ehs, psize in ents:
            k = ("ptx" if kind == 1 else "sass", arch); hist[k] = hist.get(k, 0) + psize
            if kind == 2 and arch != a.keep:
                data[p + ehs: p + ehs + psize] = bytes(psize); zeroed += psize
        summary = ", ".join(f"{k}{v}:{n >> 20}MiB" for (k, v), n in sorted(hist.items(), key=lambda x: (x[0][0], x[0][1])))
        print(f"{lib}: fatbin {sec[1] >> 20} MiB in {len(ents)} entries [{summary}]; zeroed {zeroed >> 20} MiB{' (dry run)' if a.dry_run else ''}")
        if not a.dry_run and zeroed: open(lib, "wb").write(data)

if __name__ == "__main__": main()
