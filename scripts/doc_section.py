#!/usr/bin/python3
"""The one writer of generated documentation sections: puts a Markdown body (and optional images)
between <!-- TAG:begin --> and <!-- TAG:end --> in whichever page holds those markers: README.md
p4/README.md or a page under docs/. Images are copied to docs/img/ (as TAG-NAME unless NAME already starts
with TAG) and linked relative to that page. Exits with an error naming the tag when no page, or
more than one, holds its markers.

usage: doc_section.py [--setup DIR] TAG BODY.md [IMAGE.png...]   (BODY.md "-": stdin)
--setup DIR appends the setup quoted from the effective configurations the runs wrote under DIR
(scripts/effective_setup.py), so the page states what ran.
As a module: write_section(tag, body, images=(), setup=None) returns the page it wrote.
"""
import argparse
import glob
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import effective_setup  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def read(path):
    with open(path) as f:
        return f.read()


def pages(root=ROOT):
    return [os.path.join(root, "README.md"), os.path.join(root, "p4", "README.md")] + sorted(
        glob.glob(os.path.join(root, "docs", "**", "*.md"), recursive=True))


def find_page(tag, root=ROOT):
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    found = [p for p in pages(root) if os.path.exists(p) and begin in read(p)]
    if len(found) != 1:
        where = ", ".join(os.path.relpath(p, root) for p in found) or "no page"
        raise SystemExit(f"doc_section.py: the markers {begin} / {end} must be in exactly one of "
                         f"README.md and docs/**/*.md; found in {where}")
    if end not in read(found[0]):
        raise SystemExit(f"doc_section.py: {os.path.relpath(found[0], root)} has {begin} "
                         f"but no {end}")
    return found[0]


def replace_between(text, tag, body):
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return head + begin + "\n" + body.strip() + "\n" + end + tail


def write_section(tag, body, images=(), root=ROOT, setup=None):
    page = find_page(tag, root)
    if setup is not None:
        table = effective_setup.setup_table(setup)
        if not table:
            raise SystemExit(f"doc_section.py: no effective*.toml under {setup}: the page could not "
                             f"say what ran")
        body = body.strip() + "\n\n" + table
    img_dir = os.path.join(root, "docs", "img")
    links = []
    for img in images:
        base = os.path.basename(img)
        name = base if base.startswith(f"{tag}-") else f"{tag}-{base}"
        os.makedirs(img_dir, exist_ok=True)
        shutil.copy(img, os.path.join(img_dir, name))
        rel = os.path.relpath(os.path.join(img_dir, name), os.path.dirname(page))
        links.append(f"![{tag} {base}]({rel})")
    full = body.strip() + ("\n\n" + "\n".join(links) if links else "")
    text = read(page)
    with open(page, "w") as f:
        f.write(replace_between(text, tag, full))
    return page


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--setup", metavar="DIR",
                    help="append the setup quoted from the runs' effective*.toml under DIR")
    ap.add_argument("tag")
    ap.add_argument("body", help='the section\'s Markdown ("-": stdin)')
    ap.add_argument("images", nargs="*", metavar="IMAGE")
    a = ap.parse_args(argv)
    tag, src, images = a.tag, a.body, a.images
    body = sys.stdin.read() if src == "-" else read(src)
    page = write_section(tag, body, images, setup=a.setup)
    print(f"{os.path.relpath(page, ROOT)}: section {tag} updated")


if __name__ == "__main__":
    main()
