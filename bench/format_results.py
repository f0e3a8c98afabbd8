"""Turns Google Benchmark JSON (with repetitions) into the Markdown table of README.md."""
import json
import platform
import sys

WHAT = {
    "BM_Decide": "admission decision only (virtual call, exact view)",
    "BM_DecideReserveRelease": "decision + reserve + release of 1 cell (same 4 queues)",
    "BM_AcceptPath": "full accept path: DT decide + reserve + copy in + enqueue + dequeue + gather + free",
    "BM_CellCacheAllocFree": "8 cells alloc + free through the per-thread cache",
    "BM_MutexFreeListAllocFree": "baseline: 8 cells alloc + free, global std::mutex per cell",
    "BM_WriteFreeFrame": "write a frame into a cell chain + free it",
    "BM_QueuePushPop<PacketQueue>": "16 push + 16 pop, SpinLock intrusive queue (sharebuf)",
    "BM_QueuePushPop<BasicPacketQueue<std::mutex>>": "baseline: same queue under std::mutex",
    "BM_QueuePushPop<MutexDeque>": "baseline: std::deque under std::mutex",
}
POLICY = {"0": "cs", "1": "static", "2": "dt", "3": "edt", "4": "protean", "5": "fb",
          "6": "abm", "7": "lqd", "8": "credence"}


def describe(name):
    parts = name.split("/")
    base = parts[0]
    args = [p for p in parts[1:] if p not in ("real_time",) and not p.startswith("threads:")]
    threads = next((p.split(":")[1] for p in parts if p.startswith("threads:")), "1")
    what = WHAT.get(base, base)
    if base in ("BM_Decide", "BM_DecideReserveRelease") and args:
        what = f"{POLICY.get(args[0], args[0])}: {what}"
    elif args:
        what = f"{what}, {args[0]} B"
    return what, threads


def main():
    data = json.load(open(sys.argv[1]))
    cmd = sys.argv[2]
    ctx = data["context"]
    rows = []
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"]
        what, threads = describe(name)
        unit = b.get("time_unit", "ns")
        items = b.get("items_per_second")
        rate = f"{items / 1e6:.1f} M/s" if items else ""
        rows.append(f"| `{name}` | {what} | {threads} | {b['real_time']:.1f} {unit} | {rate} |")
    print(f"Machine: {ctx.get('num_cpus')} x {ctx.get('mhz_per_cpu')} MHz, "
          f"{platform.system()} {platform.release()}, {ctx.get('date', '')[:10]}; "
          f"median of 5 repetitions.  ")
    print(f"Command: `{cmd}` (via `bench/run_benchmarks.sh`).")
    print()
    print("Time is Google Benchmark's wall time per iteration; an iteration handles the items "
          "named in *what*; items/s adds up all threads.")
    print()
    print("| benchmark | what | threads | median time / iteration | items/s |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    med = {b["run_name"]: b["real_time"] for b in data["benchmarks"]
           if b.get("aggregate_name") == "median"}
    print()
    targets = [("BM_Decide/2/real_time/threads:1", "DT decision", 5.0),
               ("BM_AcceptPath/64", "full accept path, 64 B", 100.0)]
    for index, policy in POLICY.items():
        if index not in ("0", "1", "2"):
            targets.append((f"BM_Decide/{index}/real_time/threads:1", f"{policy} decision", 25.0))
    for name, label, target in targets:
        if name in med:
            verdict = "meets" if med[name] <= target else "MISSES"
            print(f"- {label}: {med[name]:.1f} ns median, {verdict} the target of {target:.0f} ns.")


if __name__ == "__main__":
    main()
