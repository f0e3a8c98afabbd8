"""A copy of a P4 program whose ingress ends with N tables, each matching on what the previous
one wrote: N dependent steps, one stage each, so that N above the stages a pipeline holds cannot
compile (tests/p4/tofino_check.sh shows that its check fails then).

usage: long_chain.py PROGRAM.p4 N > OUT.p4
"""
import argparse
import re
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("program", metavar="PROGRAM.p4")
    ap.add_argument("n", type=int, help="dependent tables to add")
    a = ap.parse_args()
    path, n = a.program, a.n
    text = open(path).read()
    m = re.search(r"control (\w+Ingress)\(", text)
    if not m:
        sys.exit("%s: no ingress control" % path)
    start = m.end()
    decl = ["    bit<32> chain_0 = 0;"]
    for i in range(1, n + 1):
        decl.append("    bit<32> chain_%d = 0;" % i)
        decl.append("    action step_%d(bit<32> v) { chain_%d = chain_%d + v; }" % (i, i, i - 1))
        decl.append("    table chain_t%d {\n        key = { chain_%d : exact; }\n"
                    "        actions = { step_%d; }\n        default_action = step_%d(1);\n"
                    "        size = 16;\n    }" % (i, i - 1, i, i))
    # The control's parameter list ends at the first ") {" after its name.
    body = text.index(") {", start) + 3
    text = text[:body] + "\n" + "\n".join(decl) + "\n" + text[body:]
    # The chain runs first in the ingress apply block; its result decides a drop, so it stays.
    apply = text.index("    apply {", body) + len("    apply {")
    calls = ["        chain_0 = (bit<32>)md.cells;"]
    calls += ["        chain_t%d.apply();" % i for i in range(1, n + 1)]
    calls.append("        if (chain_%d == 0) { ig_dprsr_md.drop_ctl = 1; }" % n)
    text = text[:apply] + "\n" + "\n".join(calls) + text[apply:]
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
