"""Results pages against the runs they were made from: every section recorded under docs/runs/
(the runs' own output files, kept by the report that wrote the page) is made again by the same
report code, and the page's section must be exactly that. A table edited by hand, or a page left
behind when the report or its runs changed, fails here with the command that writes it again.

Recorded so far, each by its report's render() and record():
- E8's figures: experiments/lib/e8_report.py, docs/runs/e8/<figure>/;
- E7's paper-scale trimming: experiments/lib/trim_scale.py, docs/runs/e7/trim-scale/;
- E7's live sections: experiments/lib/e7_report.py, e7_agreement.py and e7_tcp_trimmed.py,
  docs/runs/e7/<section>/;
- E3's sections: experiments/lib/e3_report.py, docs/runs/e3/<section>/;
- E4: experiments/lib/e4_report.py, docs/runs/e4/; E5: e5_report.py, docs/runs/e5/;
- E6: experiments/lib/e6_checks.py, docs/runs/e6/;
- E1's and E2's FCT sections: experiments/lib/fct_report.py, docs/runs/<section>/;
- the fidelity page: experiments/lib/agreement.py, docs/runs/agreement/;
- the live fabric beside ns-3: experiments/lib/fabric_report.py, docs/runs/fabric/.
Sections without a record are named in a skip, not checked (their runs predate the records)."""
import os
import re
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "experiments", "lib"))
import doc_section  # noqa: E402
import agreement  # noqa: E402
import e3_report  # noqa: E402
import e4_report  # noqa: E402
import e5_report  # noqa: E402
import e6_checks  # noqa: E402
import fct_report  # noqa: E402
import e7_agreement  # noqa: E402
import e7_report  # noqa: E402
import e7_tcp_trimmed  # noqa: E402
import e8_report  # noqa: E402
import fabric_report  # noqa: E402
import trim_scale  # noqa: E402
import probe_path_report  # noqa: E402

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


# E7's live sections: (tag, report module, the command that writes the section again).
E7_LIVE = (("e7", e7_report, "experiments/e7_trimming.sh --readme"),
           ("e7-agreement", e7_agreement, "experiments/e7_agreement.sh --readme"),
           ("e7tcp", e7_tcp_trimmed, "experiments/e7_tcp_trimmed.sh --readme"))


class E7LiveSectionsFromTheirRuns(unittest.TestCase):
    def test_each_recorded_section_is_what_its_runs_give(self):
        recorded = [t for t in E7_LIVE if os.path.exists(os.path.join(t[1].RECORD_DIR, "meta.json"))]
        if not recorded:
            self.skipTest("no live E7 section recorded yet")
        for tag, report, command in recorded:
            with self.subTest(section=tag):
                self.assertEqual(
                    section_text(tag), report.render(report.RECORD_DIR)[0].strip(),
                    f"docs/experiments/e7-trimming.md, section {tag}, is not what its runs in "
                    f"{os.path.relpath(report.RECORD_DIR, ROOT)} give; write it again with "
                    f"{command}")

    def test_unrecorded_sections_are_named(self):
        missing = [t for t, report, _ in E7_LIVE
                   if not os.path.exists(os.path.join(report.RECORD_DIR, "meta.json"))]
        if missing:
            self.skipTest("live E7 sections without recorded runs (written before docs/runs/ "
                          "existed): " + ", ".join(missing))


def recorded_e3_sections():
    base = os.path.join(ROOT, "docs", "runs", "e3")
    if not os.path.isdir(base):
        return []
    return sorted(t for t in os.listdir(base) if os.path.exists(os.path.join(base, t, "meta.json")))


class E3PagesFromTheirRuns(unittest.TestCase):
    def test_each_recorded_section_is_what_its_runs_give(self):
        sections = recorded_e3_sections()
        self.assertTrue(sections, "no E3 section recorded under docs/runs/e3")
        for tag in sections:
            with self.subTest(section=tag):
                body, _ = e3_report.render(e3_report.record_dir(tag))
                self.assertEqual(
                    section_text(tag), body.strip(),
                    f"docs/experiments/e3-incast.md, section {tag}, is not what its runs in "
                    f"docs/runs/e3/{tag} give; write it again with experiments/e3_incast.sh "
                    f"--tag {tag} --readme and the options its stamp names")

    def test_unrecorded_sections_are_named(self):
        page = doc_section.read(os.path.join(ROOT, "docs", "experiments", "e3-incast.md"))
        tags = re.findall(r"<!-- (e3[\w-]*):begin -->", page)
        missing = [t for t in tags if t not in recorded_e3_sections()]
        if missing:
            self.skipTest("E3 sections without recorded runs (written before docs/runs/ existed): "
                          + ", ".join(missing))


class E4FromItsRun(unittest.TestCase):
    def test_the_section_is_what_its_run_gives(self):
        self.assertTrue(os.path.exists(os.path.join(e4_report.RECORD_DIR, "meta.json")),
                        "docs/runs/e4 not recorded")
        self.assertEqual(
            section_text("e4"), e4_report.render(e4_report.RECORD_DIR)[0].strip(),
            "docs/experiments/e4-credence.md, section e4, is not what its run in docs/runs/e4 "
            "gives; write it again with experiments/e4_credence.sh --readme")


FCT_SECTIONS = ("e1", "e1-rto10", "e1-txb1", "e2")


def recorded_fct_sections():
    return [t for t in FCT_SECTIONS
            if os.path.exists(os.path.join(fct_report.record_dir(t), "meta.json"))]


class FctSectionsFromTheirRuns(unittest.TestCase):
    def test_each_recorded_section_is_what_its_runs_give(self):
        sections = recorded_fct_sections()
        if not sections:
            self.skipTest("no E1/E2 section recorded yet")
        for tag in sections:
            with self.subTest(section=tag):
                self.assertEqual(
                    section_text(tag), fct_report.render(fct_report.record_dir(tag))[0].strip(),
                    f"section {tag} is not what its runs in docs/runs/{tag} give; write it again "
                    "with the command above it on its page (--readme)")

    def test_unrecorded_sections_are_named(self):
        missing = [t for t in FCT_SECTIONS if t not in recorded_fct_sections()]
        if missing:
            self.skipTest("E1/E2 sections without recorded runs (written before docs/runs/ "
                          "existed): " + ", ".join(missing))


class E5FromItsRun(unittest.TestCase):
    def test_the_section_is_what_its_run_gives(self):
        if not os.path.exists(os.path.join(e5_report.RECORD_DIR, "meta.json")):
            self.skipTest("E5's section has no recorded run yet (written before docs/runs/)")
        self.assertEqual(
            section_text("e5"), e5_report.render(e5_report.RECORD_DIR)[0].strip(),
            "docs/experiments/e5-smartbuf.md, section e5, is not what its run in docs/runs/e5 "
            "gives; write it again with experiments/e5_smartbuf.sh --rounds 5 --readme")


class FidelityFromItsRuns(unittest.TestCase):
    def test_the_section_is_what_its_runs_give(self):
        if not os.path.exists(os.path.join(agreement.RECORD_DIR, "rows.csv")):
            self.skipTest("the fidelity page's section has no recorded runs yet")
        self.assertEqual(
            section_text("agreement"), agreement.render(agreement.RECORD_DIR).strip(),
            "docs/experiments/fidelity.md, section agreement, is not what its runs in "
            "docs/runs/agreement give; write it again with experiments/live_vs_replay.sh --readme")


class E6FromItsRun(unittest.TestCase):
    def test_the_section_is_what_its_run_gives(self):
        self.assertTrue(os.path.exists(os.path.join(e6_checks.RECORD_DIR, "meta.json")),
                        "docs/runs/e6 not recorded")
        self.assertEqual(
            section_text("e6"), e6_checks.render(e6_checks.RECORD_DIR).strip(),
            "docs/experiments/e6-live-reconfig.md, section e6, is not what its run in docs/runs/e6 "
            "gives; write it again with experiments/e6_live_reconfig.sh --readme")


class FabricFromItsRun(unittest.TestCase):
    def test_the_section_is_what_its_run_gives(self):
        self.assertTrue(os.path.isdir(fabric_report.RECORD), "docs/runs/fabric not recorded")
        self.assertEqual(
            section_text("fabric"), fabric_report.render(fabric_report.RECORD).strip(),
            "docs/fabric.md, section fabric, is not what its run in docs/runs/fabric gives; "
            "write it again with experiments/fabric_live_vs_sim.sh --readme")


class ProbePathFromItsRuns(unittest.TestCase):
    def test_the_section_is_what_its_runs_give(self):
        direct = os.path.join(probe_path_report.RECORDS, "direct")
        queue = os.path.join(probe_path_report.RECORDS, "queue")
        self.assertTrue(os.path.exists(os.path.join(queue, "runs.csv")),
                        "docs/runs/e1-probe-path/queue not recorded")
        self.assertEqual(
            section_text("p4-probe-path"), probe_path_report.render(direct, queue).strip(),
            "p4/README.md, section p4-probe-path, is not what its runs in docs/runs/e1-probe-path "
            "give; write it again with experiments/lib/probe_path_report.py --record --readme")


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

    def test_a_changed_query_time_changes_the_e7_section(self):
        import csv
        import shutil
        import tempfile
        if not os.path.exists(os.path.join(e7_report.RECORD_DIR, "meta.json")):
            self.skipTest("E7's section not recorded")
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "e7")
            shutil.copytree(e7_report.RECORD_DIR, copy)
            before, _ = e7_report.render(copy)
            path = os.path.join(copy, "summary.csv")
            with open(path) as f:
                rows = list(csv.DictReader(f))
            rows[0]["qct_mean_ms"] = str(float(rows[0]["qct_mean_ms"]) + 12.345)
            with open(path, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
            after, _ = e7_report.render(copy)
            self.assertNotEqual(before, after)

    def test_a_changed_query_time_changes_an_e3_section(self):
        import shutil
        import tempfile
        sections = recorded_e3_sections()
        if not sections:
            self.skipTest("no E3 section recorded")
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, sections[0])
            shutil.copytree(e3_report.record_dir(sections[0]), copy)
            before, _ = e3_report.render(copy)
            path = os.path.join(copy, "queries.csv")
            with open(path) as f:
                lines = f.read().splitlines()
            first = lines[1].rsplit(",", 1)
            lines[1] = f"{first[0]},{float(first[1]) + 98765.4}"
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            after, _ = e3_report.render(copy)
            self.assertNotEqual(before, after)


if __name__ == "__main__":
    unittest.main()
