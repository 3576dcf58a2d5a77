// Buffers that large file reads go into. glibc serves an allocation of 128 KiB or more from pages of its own, after
// its 16-byte header, so such a buffer begins 16 bytes past a page boundary; and the kernel copies a read out of
// the page cache (page-aligned) with REP MOVSB, which on AMD CPUs with fast short REP MOVSB (FSRM) is known to be
// several times slower for some small offsets between source and destination (glibc bug 30994 is the same effect in
// user space). Measured on this project's 2-core AMD EPYC machines (Linux 6.18), 1 GiB read from the page cache 1 MiB
// at a time: 0.39-0.45 s of system time into Buffer.allocUnsafeSlow(1 MiB), 0.08 s into the same allocation 16, 32
// or 64 bytes further on; and a 1 GiB `build push`, which reads its file twice (the hash and the parts), 1.05-1.60 s
// of system time with its buffers where glibc put them, 0.33-0.63 s 48 bytes on. Elsewhere the offset costs nothing.
const OFFSET = 48;

/** A buffer of `size` bytes for reading a file into: 64 bytes past a page boundary where glibc puts it. */
export function readBuffer(size: number): Buffer<ArrayBuffer> {
  return Buffer.allocUnsafeSlow(size + OFFSET).subarray(OFFSET);
}
