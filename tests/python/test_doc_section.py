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

    def test_setup_is_quoted_from_the_runs_effective_configurations(self):
        # As sharebufd's `config` writes it: sizes in cells, rates in bit/s.
        write(f"{self.root}/out/run-dt/effective.toml",
              "# sharebufd's effective configuration\n[buffer]\ncell_bytes = 80\nsize = 21000\n"
              "view = 'exact'\n[policy]\nname = 'dt'\nalpha = 0.5\n"
              "[[classes]]\nname = 'data'\nqueue = 1\noverflow = 'trim'\n"
              "[trimming]\nmode = 'tofino-approx'\ntrim_size = 64\nheader_reserve = 8\n"
              "[[ports]]\ninterface = 'p1'\nrate = 100000000\nqueues = 2\nscheduler = 'sp'\n"
              "[[ports]]\ninterface = 'p2'\nrate = 100000000\nqueues = 2\nscheduler = 'sp'\n")
        page = doc_section.write_section("e9", "table", root=self.root, setup=f"{self.root}/out")
        with open(page) as f:
            text = f.read()
        self.assertIn("| run-dt/effective.toml | 21000 cells of 80 B | dt (alpha = 0.5) | "
                      "p1,p2: 100 Mbit/s, 2 queues sp | data → q1 (trim) | tofino-approx, "
                      "trim_size 64, header_reserve 8 |", text)

    def test_a_page_without_the_runs_configurations_is_refused(self):
        os.makedirs(f"{self.root}/out")
        with self.assertRaisesRegex(SystemExit, "no effective.*could not say what ran"):
            doc_section.write_section("e9", "table", root=self.root, setup=f"{self.root}/out")
        with open(f"{self.root}/docs/experiments/e9.md") as f:
            self.assertIn("old", f.read())


if __name__ == "__main__":
    unittest.main()
