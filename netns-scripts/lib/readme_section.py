#!/usr/bin/python3
"""Puts a Markdown file (and optional images, copied to docs/img/) between README.md's
<!-- TAG:begin --> and <!-- TAG:end --> markers.
usage: readme_section.py README.md TAG SUMMARY.md [IMAGE.png...]"""
import os
import shutil
import sys

readme, tag, summary, images = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
body = open(summary).read().strip()
root = os.path.dirname(os.path.abspath(readme))
links = []
for img in images:
    name = f"{tag}-{os.path.basename(img)}"
    os.makedirs(os.path.join(root, "docs/img"), exist_ok=True)
    shutil.copy(img, os.path.join(root, "docs/img", name))
    links.append(f"![{tag}](docs/img/{name})")
text = open(readme).read()
begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
if begin not in text or end not in text:
    sys.exit(f"readme_section.py: {readme} has no {begin} / {end} markers")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(readme, "w").write(head + begin + "\n" + body + ("\n\n" + "\n".join(links) if links else "") + "\n" + end + tail)
print(f"{readme}: section {tag} updated")
