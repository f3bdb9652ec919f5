/**
 * The sandbox's seccomp program (decision 076), in the compiled classic-BPF form bwrap's
 * `--seccomp FD` loads. It refuses the calls that reserve disk space without writing it:
 * `fallocate` (with FALLOC_FL_KEEP_SIZE it escapes RLIMIT_FSIZE, so one call could fill the
 * disk while the workspace is over quota and writes are "disabled"), and io_uring, through which
 * the same operation needs no system call a filter could see. glibc's posix_fallocate falls back
 * to writing, which the file-size limit holds. A call of any other architecture (x32, i386 by
 * `int 0x80`) is refused whole: its numbers would not be these.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EOPNOTSUPP = 95;
const ENOSYS = 38;

/** Offsets in `struct seccomp_data`. */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;

/** x86_64's x32 ABI numbers its calls from here, under the same audit architecture. */
const X32_SYSCALL_BIT = 0x40000000;

type Architecture = {
  audit: number;
  fallocate: number;
  /** io_uring_setup, io_uring_enter, io_uring_register: one number apart on every architecture. */
  ioUringSetup: number;
  hasX32: boolean;
};

const ARCHITECTURES: Readonly<Record<string, Architecture>> = {
  x64: { audit: 0xc000003e, fallocate: 285, ioUringSetup: 425, hasX32: true },
  arm64: { audit: 0xc00000b7, fallocate: 47, ioUringSetup: 425, hasX32: false },
};

type Instruction = { code: number; jt: number; jf: number; k: number };

function encode(program: readonly Instruction[]): Buffer {
  const buffer = Buffer.alloc(program.length * 8);
  program.forEach(({ code, jt, jf, k }, index) => {
    buffer.writeUInt16LE(code, index * 8);
    buffer.writeUInt8(jt, index * 8 + 2);
    buffer.writeUInt8(jf, index * 8 + 3);
    buffer.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return buffer;
}

/** The program for Node's `process.arch`, or null for an architecture it does not know. */
export function diskReservationFilter(arch: string = process.arch): Buffer | null {
  const known = ARCHITECTURES[arch];
  if (!known) return null;
  const refuse = (errno: number): Instruction => ({
    code: BPF_RET_K,
    jt: 0,
    jf: 0,
    k: SECCOMP_RET_ERRNO | errno,
  });
  // Jump offsets count the instructions skipped; the three returns close the program.
  const checks: Instruction[] = [
    ...(known.hasX32 ? [{ code: BPF_JGE_K, jt: 0, jf: 0, k: X32_SYSCALL_BIT }] : []),
    { code: BPF_JEQ_K, jt: 0, jf: 0, k: known.fallocate },
    { code: BPF_JEQ_K, jt: 0, jf: 0, k: known.ioUringSetup },
    { code: BPF_JEQ_K, jt: 0, jf: 0, k: known.ioUringSetup + 1 },
    { code: BPF_JEQ_K, jt: 0, jf: 0, k: known.ioUringSetup + 2 },
  ];
  // After the checks: [0] allow, [1] refuse EOPNOTSUPP, [2] refuse ENOSYS.
  const toReturn = (checkIndex: number, returnIndex: number) =>
    checks.length - checkIndex - 1 + returnIndex;
  const resolved = checks.map((check, index) => ({
    ...check,
    jt: toReturn(index, check.k === known.fallocate ? 1 : 2),
  }));
  return encode([
    { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: ARCH_OFFSET },
    // Another architecture: skip the load and the checks, to the last return (ENOSYS).
    { code: BPF_JEQ_K, jt: 0, jf: resolved.length + 1 + 2, k: known.audit },
    { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: NR_OFFSET },
    ...resolved,
    { code: BPF_RET_K, jt: 0, jf: 0, k: SECCOMP_RET_ALLOW },
    refuse(EOPNOTSUPP),
    refuse(ENOSYS),
  ]);
}
