// XDP_PASS: every frame goes on to the stack. Attaching any XDP program to a veth end makes it
// receive through NAPI: one ring per receive queue, drained in order.
#define SEC(name) __attribute__((section(name), used))
struct xdp_md;
SEC("xdp") int pass(struct xdp_md *ctx) { (void)ctx; return 2; /* XDP_PASS */ }
char _license[] SEC("license") = "GPL";
