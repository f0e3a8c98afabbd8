// Sends every frame out of another interface, in the kernel's XDP path: no switch between two
// veth ends (bench/lib/switches.sh, xdp-redirect: the fastest a frame crosses this testbed). The
// target is compiled in: `clang -O2 -target bpf -DTARGET_IFINDEX=N -c`; no headers needed.
// bpf_redirect() queues the frame for the target's ndo_xdp_xmit, flushed once per NAPI poll
// (the same bulk queue a devmap uses); a veth target takes it only if its peer has NAPI (an
// XDP program of its own).
#define SEC(name) __attribute__((section(name), used))
struct xdp_md;
static long (*bpf_redirect)(unsigned int ifindex, unsigned long long flags) = (void*)23;
SEC("xdp") int redirect(struct xdp_md* ctx) {
  (void)ctx;
  return (int)bpf_redirect(TARGET_IFINDEX, 0);  // XDP_REDIRECT, or XDP_ABORTED on a bad index
}
char _license[] SEC("license") = "GPL";
