"""Evaluates assertions over sharebufd's stats JSON for the netns tests.

usage: check_stats.py STATS_JSON EXPR [EXPR ...]
Each EXPR is a Python expression over `s` (the JSON), `port(name)`, `queue(name, k)`,
`accounted(q)` and `drops(q)`; all must be true. Prints each with its verdict.
"""
import argparse
import ast
import json
import sys


def operands(expr, env):
    """For a failing comparison, the value of each side (what a reader needs to see why)."""
    try:
        node = ast.parse(expr, mode="eval").body
        if not isinstance(node, ast.Compare):
            return ""
        sides = [node.left] + list(node.comparators)
        return " [" + ", ".join(
            f"{ast.unparse(n)} = {eval(compile(ast.Expression(n), '<expr>', 'eval'), env)}"
            for n in sides) + "]"
    except Exception:  # noqa: BLE001 - the verdict is already reported; this is only detail
        return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stats", help="sharebufctl --json stats output")
    ap.add_argument("exprs", nargs="+", metavar="EXPR")
    a = ap.parse_args()
    with open(a.stats) as f:
        s = json.load(f)

    def port(name):
        for p in s["ports"]:
            if p["interface"] == name:
                return p
        raise KeyError(f"no port {name}")

    def queue(name, k=0):
        return port(name)["queues"][k]

    def drops(q):
        return sum(q["dropped"][r] for r in q["dropped"] if r not in ("pushed_out", "reclaimed"))

    def accounted(q):
        """received = admitted + dropped before admission; admitted = transmitted + pushed out +
        reclaimed + queued."""
        return (q["received"] == q["admitted"] + drops(q) and
                q["admitted"] == q["transmitted"] + q["dropped"]["pushed_out"]
                + q["dropped"]["reclaimed"] + q["queued"])

    env = {"s": s, "port": port, "queue": queue, "drops": drops, "accounted": accounted,
           "all": all, "sum": sum, "len": len, "abs": abs, "max": max, "min": min}
    ok = True
    for expr in a.exprs:
        try:
            value = eval(expr, env)  # the expressions come from our own test scripts
        except Exception as e:  # noqa: BLE001 - report any failure of the expression
            value = f"error: {e}"
        good = value is True
        ok = ok and good
        print(f"  {'ok  ' if good else 'FAIL'} {expr}" +
              ("" if good else f"  -> {value}{operands(expr, env)}"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
