#!/usr/bin/python3
"""Extracts the code of a docs page: every ```cpp block whose first line is `// file: PATH` is
written to OUT_DIR/PATH, so the build compiles the page's code and runs its tests
(tests/CMakeLists.txt, guide_tests). Exits 1 when a file the build expects is not on the page.

usage: guide_code.py PAGE.md OUT_DIR [EXPECTED_PATH ...]
"""
import argparse
import os
import re
import sys


def blocks(text):
    """{path: code} of the page's `// file:` blocks, in order."""
    out = {}
    for m in re.finditer(r"^```cpp\n(// file: (\S+)\n.*?)^```$", text, re.M | re.S):
        out[m.group(2)] = m.group(1)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("page")
    ap.add_argument("out_dir")
    ap.add_argument("expected", nargs="*")
    a = ap.parse_args(argv)
    code = blocks(open(a.page).read())
    missing = [p for p in a.expected if p not in code]
    if missing:
        print(f"{a.page}: no `// file:` block for {', '.join(missing)}", file=sys.stderr)
        return 1
    for path, text in code.items():
        dest = os.path.join(a.out_dir, path)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        # Rewrite only what changed: the build then recompiles only that.
        if not os.path.exists(dest) or open(dest).read() != text:
            with open(dest, "w") as f:
                f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
