/**
 * The sandbox's seccomp program (decision 076), in the compiled classic-BPF form bwrap's
 * `--seccomp FD` loads. It refuses the calls that reserve disk space without writing it:
 * `fallocate` (with FALLOC_FL_KEEP_SIZE it escapes RLIMIT_FSIZE, so one call could fill the
 * disk while the workspace is over quota and writes are "disabled"), the ioctls that call it
 * (XFS's space reservations, which ext4 honours, and FS_IOC_ZERO_RANGE), and io_uring, through
 * which the same operation needs no system call a filter could see. glibc's posix_fallocate
 * falls back to writing, which the file-size limit holds. It refuses the kernel's keyrings too
 * (`add_key`, `request_key`, `keyctl`, as Docker's default profile does): bwrap leaves the command
 * in the session keyring of whoever started the server, whose keys (a Kerberos ticket cache, a
 * disk's passphrase) its possessor may read and clear whatever its uid (red team), and
 * `request_key` would have the kernel run `/sbin/request-key` as root in the host's namespaces. A
 * call of any other architecture (x32, i386 by `int 0x80`) is refused whole: its numbers would
 * not be these.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EOPNOTSUPP = 95;
const ENOSYS = 38;

/** Offsets in `struct seccomp_data`: the number, the architecture, the low half of `args[1]`. */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const SECOND_ARGUMENT_OFFSET = 24;

/** x86_64's x32 ABI numbers its calls from here, under the same audit architecture. */
const X32_SYSCALL_BIT = 0x40000000;

/** FS_IOC_RESVSP, FS_IOC_RESVSP64 and FS_IOC_ZERO_RANGE: each is vfs_fallocate with KEEP_SIZE. */
const RESERVING_IOCTLS = [0x40305828, 0x4030582a, 0x40305839];

type Architecture = {
  audit: number;
  fallocate: number;
  ioctl: number;
  /** io_uring_setup, io_uring_enter, io_uring_register: one number apart on every architecture. */
  ioUringSetup: number;
  /** add_key, request_key, keyctl: one number apart on every architecture. */
  addKey: number;
  hasX32: boolean;
};

const ARCHITECTURES: Readonly<Record<string, Architecture>> = {
  x64: {
    audit: 0xc000003e,
    fallocate: 285,
    ioctl: 16,
    ioUringSetup: 425,
    addKey: 248,
    hasX32: true,
  },
  arm64: {
    audit: 0xc00000b7,
    fallocate: 47,
    ioctl: 29,
    ioUringSetup: 425,
    addKey: 217,
    hasX32: false,
  },
};

type Label = "allow" | "unsupported" | "unknown";
/** One instruction; a jump names where it goes, an offset once the program is laid out. */
type Step = { code: number; k: number; jt?: Label; jf?: Label; label?: Label };

function assemble(steps: readonly Step[]): Buffer {
  const at = (label: Label) => steps.findIndex((step) => step.label === label);
  const buffer = Buffer.alloc(steps.length * 8);
  steps.forEach((step, index) => {
    const offset = (label: Label | undefined) => (label ? at(label) - index - 1 : 0);
    buffer.writeUInt16LE(step.code, index * 8);
    buffer.writeUInt8(offset(step.jt), index * 8 + 2);
    buffer.writeUInt8(offset(step.jf), index * 8 + 3);
    buffer.writeUInt32LE(step.k >>> 0, index * 8 + 4);
  });
  return buffer;
}

/** The program for Node's `process.arch`, or null for an architecture it does not know. */
export function sandboxSyscallFilter(arch: string = process.arch): Buffer | null {
  const known = ARCHITECTURES[arch];
  if (!known) return null;
  const refuse = (number: number, label: Label): Step => ({
    code: BPF_JEQ_K,
    k: number,
    jt: label,
  });
  return assemble([
    { code: BPF_LD_W_ABS, k: ARCH_OFFSET },
    // Another architecture's numbers are not these: all of its calls are refused.
    { code: BPF_JEQ_K, k: known.audit, jf: "unknown" },
    { code: BPF_LD_W_ABS, k: NR_OFFSET },
    ...(known.hasX32 ? [{ code: BPF_JGE_K, k: X32_SYSCALL_BIT, jt: "unknown" as const }] : []),
    refuse(known.fallocate, "unsupported"),
    refuse(known.ioUringSetup, "unknown"),
    refuse(known.ioUringSetup + 1, "unknown"),
    refuse(known.ioUringSetup + 2, "unknown"),
    refuse(known.addKey, "unknown"),
    refuse(known.addKey + 1, "unknown"),
    refuse(known.addKey + 2, "unknown"),
    { code: BPF_JEQ_K, k: known.ioctl, jf: "allow" },
    // The kernel reads an ioctl's command as 32 bits: the low half of the argument is all of it.
    { code: BPF_LD_W_ABS, k: SECOND_ARGUMENT_OFFSET },
    ...RESERVING_IOCTLS.map((command) => refuse(command, "unsupported")),
    { code: BPF_RET_K, k: SECCOMP_RET_ALLOW, label: "allow" },
    { code: BPF_RET_K, k: SECCOMP_RET_ERRNO | EOPNOTSUPP, label: "unsupported" },
    { code: BPF_RET_K, k: SECCOMP_RET_ERRNO | ENOSYS, label: "unknown" },
  ]);
}
