"""The user's documents hold together: README.md stays short, every relative link in README.md
and docs/ points at a file that exists (and a heading that exists, for #anchors), and every
generated section's markers are in exactly one page, where its writer finds them."""
import os
import re
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import doc_section  # noqa: E402

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading):
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    with open(path) as f:
        return {slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", f.read(), re.M)}


def pages():
    return doc_section.pages(ROOT)


def without_code(text):
    return re.sub(r"```.*?```", "", text, flags=re.S)


class Docs(unittest.TestCase):
    def test_readme_is_about_15_kb(self):
        size = os.path.getsize(os.path.join(ROOT, "README.md"))
        self.assertLessEqual(size, 16_000, "README.md grew past about 15 KB: move detail to docs/")

    def test_relative_links_resolve(self):
        broken = []
        for page in pages():
            with open(page) as f:
                text = without_code(f.read())
            for target in LINK.findall(text):
                if re.match(r"^[a-z]+://", target) or target.startswith("mailto:"):
                    continue
                path, _, frag = target.partition("#")
                file = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                where = f"{os.path.relpath(page, ROOT)}: {target}"
                if not os.path.exists(file):
                    broken.append(where + " (no such file)")
                elif frag and file.endswith(".md") and frag not in anchors(file):
                    broken.append(where + " (no such heading)")
        self.assertEqual(broken, [])

    def test_every_generated_section_is_in_one_page(self):
        tags = {}
        for page in pages():
            with open(page) as f:
                for tag in re.findall(r"<!-- ([\w-]+):begin -->", f.read()):
                    tags.setdefault(tag, []).append(os.path.relpath(page, ROOT))
        self.assertIn("bench", tags)
        for tag, where in tags.items():
            self.assertEqual(len(where), 1, f"{tag} in {where}")
            self.assertTrue(doc_section.find_page(tag, ROOT).endswith(where[0]))


if __name__ == "__main__":
    unittest.main()
