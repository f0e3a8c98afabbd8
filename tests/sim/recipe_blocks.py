#!/usr/bin/python3
"""Writes the files a documentation page's recipe holds, as a reader would copy them.

A recipe block is a fenced code block right after a `<!-- recipe: FILE -->` line; its text
becomes FILE in the output folder. Exit 1 (naming them) when the page's recipe blocks are not
exactly the files given with --expect.

    recipe_blocks.py PAGE.md OUT_DIR --expect CMakeLists.txt --expect my_switch.cc
"""
import argparse
import pathlib
import re
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("page", type=pathlib.Path, help="the Markdown page")
    ap.add_argument("out", type=pathlib.Path, help="the folder the files go into")
    ap.add_argument("--expect", action="append", default=[], metavar="FILE",
                    help="a file the recipe must hold (repeat for each)")
    a = ap.parse_args()
    found = re.findall(r"<!-- recipe: (\S+) -->\n```\w*\n(.*?)```", a.page.read_text(), re.S)
    names = sorted(name for name, _ in found)
    if names != sorted(a.expect):
        print(f"{a.page}: recipe blocks {names}, expected {sorted(a.expect)}", file=sys.stderr)
        return 1
    a.out.mkdir(parents=True, exist_ok=True)
    for name, body in found:
        (a.out / name).write_text(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
