// Passes every frame on to the stack. Attaching any XDP program to a veth end makes it receive
// through NAPI: one ring per receive queue, drained in the order the frames were sent
// (scripts/testbed.sh, TB_LINK_ORDER=napi). The "xdp.frags" section declares that it
// handles frames in several buffers, so the link keeps veth's full MTU range (jumbo frames).
// Built with `clang -O2 -target bpf -c`; no headers needed.
#define SEC(name) __attribute__((section(name), used))
struct xdp_md;
SEC("xdp.frags") int pass(struct xdp_md* ctx) {
  (void)ctx;
  return 2;  // XDP_PASS
}
char _license[] SEC("license") = "GPL";
