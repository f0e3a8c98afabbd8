"""doc_section.py, the one writer of generated sections, on a scratch repository tree."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import doc_section  # noqa: E402


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class WriteSection(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        write(f"{self.root}/README.md", "# r\n<!-- a:begin -->\nold\n<!-- a:end -->\ntail\n")
        write(f"{self.root}/docs/experiments/e9.md",
              "# e9\nbefore\n<!-- e9:begin -->\nold\n<!-- e9:end -->\nafter\n")
        write(f"{self.root}/plot.png", "png")

    def tearDown(self):
        self.tmp.cleanup()

    def test_replaces_only_between_the_markers_of_the_page_that_holds_them(self):
        page = doc_section.write_section("e9", "new table\n", [f"{self.root}/plot.png"],
                                         root=self.root)
        self.assertEqual(page, f"{self.root}/docs/experiments/e9.md")
        with open(page) as f:
            text = f.read()
        self.assertEqual(text, "# e9\nbefore\n<!-- e9:begin -->\nnew table\n\n"
                               "![e9 plot.png](../img/e9-plot.png)\n<!-- e9:end -->\nafter\n")
        self.assertTrue(os.path.exists(f"{self.root}/docs/img/e9-plot.png"))
        with open(f"{self.root}/README.md") as f:
            self.assertIn("old", f.read())

    def test_an_image_already_named_for_the_tag_keeps_its_name(self):
        write(f"{self.root}/a-timeline.png", "png")
        doc_section.write_section("a", "x", [f"{self.root}/a-timeline.png"], root=self.root)
        with open(f"{self.root}/README.md") as f:
            self.assertIn("](docs/img/a-timeline.png)", f.read())

    def test_markers_missing_or_twice_are_an_error_naming_the_tag(self):
        with self.assertRaisesRegex(SystemExit, "e7:begin.*no page"):
            doc_section.write_section("e7", "x", root=self.root)
        write(f"{self.root}/docs/other.md", "<!-- a:begin -->\n<!-- a:end -->\n")
        with self.assertRaisesRegex(SystemExit, "README.md, docs/other.md"):
            doc_section.write_section("a", "x", root=self.root)


if __name__ == "__main__":
    unittest.main()
