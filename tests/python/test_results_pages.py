"""Results pages against the runs they were made from: every figure recorded under docs/runs/
(the runs' own output files, kept by the report that wrote the page) is made again by the same
report code, and the page's section must be exactly that. A table edited by hand, or a page left
behind when the report or its runs changed, fails here with the command that writes it again.

Recorded so far: E8's figures (experiments/lib/e8_report.py, docs/runs/e8/<figure>/) and E7's
paper-scale trimming (experiments/lib/trim_scale.py, docs/runs/e7/trim-scale/). Sections without
a record are listed, not checked (their runs predate the records)."""
import os
import re
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "experiments", "lib"))
import doc_section  # noqa: E402
import e8_report  # noqa: E402
import trim_scale  # noqa: E402

IMAGE = re.compile(r"^!\[[^\]]*\]\([^)]*\)$")


def section_text(tag):
    """The text between the tag's markers on its page, without the image links doc_section adds."""
    page = doc_section.find_page(tag, ROOT)
    text = doc_section.read(page)
    body = text.split(f"<!-- {tag}:begin -->", 1)[1].split(f"<!-- {tag}:end -->", 1)[0]
    return "\n".join(line for line in body.strip().splitlines() if not IMAGE.match(line)).strip()


def recorded_e8_figures():
    base = os.path.join(ROOT, "docs", "runs", "e8")
    if not os.path.isdir(base):
        return []
    return sorted(f for f in os.listdir(base) if os.path.exists(os.path.join(base, f, "index.json")))


class E8PagesFromTheirRuns(unittest.TestCase):
    def test_each_recorded_figure_is_what_its_runs_give(self):
        figures = recorded_e8_figures()
        self.assertTrue(figures, "no E8 figure recorded under docs/runs/e8")
        for figure in figures:
            with self.subTest(figure=figure):
                out = e8_report.record_dir(figure)
                body, _ = e8_report.render(out, figure, e8_report.load_index(out))
                self.assertEqual(
                    section_text(f"e8-{figure}"), body.strip(),
                    f"docs/experiments/e8-fabric.md, section e8-{figure}, is not what its runs in "
                    f"docs/runs/e8/{figure} give; write it again with experiments/e8_fabric.sh "
                    f"--figures {figure} --readme (its runs are kept under --out)")

    def test_unrecorded_sections_are_named(self):
        import e8_runs
        missing = [f for f in e8_runs.FIGURES if f not in recorded_e8_figures()]
        if missing:
            self.skipTest("E8 sections without recorded runs (written before docs/runs/ existed): "
                          + ", ".join(missing))


class E7TrimScaleFromItsRuns(unittest.TestCase):
    def test_the_section_is_what_its_runs_give(self):
        import json
        dest = trim_scale.RECORD_DIR
        self.assertTrue(os.path.exists(os.path.join(dest, "results.json")),
                        "docs/runs/e7/trim-scale not recorded")
        with open(os.path.join(dest, "meta.json")) as f:
            packets = json.load(f)["packets"]
        self.assertEqual(
            section_text("trim-scale"), trim_scale.render(dest, packets).strip(),
            "docs/experiments/e7-paper-scale.md, section trim-scale, is not what its runs in "
            "docs/runs/e7/trim-scale give; write it again with "
            "/usr/bin/python3 experiments/lib/trim_scale.py OUT --readme")


class TheCheckCanFail(unittest.TestCase):
    """A changed cell in a recorded run's summary must change the section made from it."""

    def test_a_changed_summary_changes_the_section(self):
        import json
        import shutil
        import tempfile
        figures = recorded_e8_figures()
        if not figures:
            self.skipTest("no E8 figure recorded")
        figure = figures[0]
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, figure)
            shutil.copytree(e8_report.record_dir(figure), copy)
            index = e8_report.load_index(copy)
            before, _ = e8_report.render(copy, figure, index)
            run = index["figures"][figure][0][3]
            path = os.path.join(copy, run, "summary.json")
            with open(path) as f:
                summary = json.load(f)
            for sw in summary["switches"]:
                sw["dropped"]["threshold"] = sw["dropped"].get("threshold", 0) + 123457
            with open(path, "w") as f:
                json.dump(summary, f)
            after, _ = e8_report.render(copy, figure, index)
            self.assertNotEqual(before, after)


if __name__ == "__main__":
    unittest.main()
