"""The scripts' --help: one convention. Every shell script with a -h/--help option prints its
header (the comment block after the shebang, scripts/usage.sh) and exits 0; none cuts
its header by line numbers (`sed -n '2,Np' "$0"`), which drifted from the headers it printed.
Every Python program reads its arguments with argparse, its module docstring as the help: --help
prints it and exits 0. No shell script carries Python of its own (a heredoc or `python3 -c`): it
calls a module, where the code is linted and testable (JSON fields are read with jq)."""
import ast
import os
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def shell_scripts():
    out = subprocess.run(["git", "ls-files", "*.sh"], cwd=ROOT, capture_output=True, text=True)
    return [f for f in out.stdout.split() if os.path.isfile(os.path.join(ROOT, f))]


def header(path):
    lines = open(path).read().split("\n")
    out = []
    for i, line in enumerate(lines):
        if i == 0 and line.startswith("#!"):
            continue
        if not line.startswith("#"):
            break
        out.append(line[2:] if line.startswith("# ") else line[1:])
    return "\n".join(out) + "\n"


def python_programs():
    out = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True)
    programs = []
    for f in out.stdout.split():
        text = open(os.path.join(ROOT, f)).read()
        if '__name__ == "__main__"' in text and "unittest.main()" not in text:
            programs.append(f)
    return programs


class ScriptHelp(unittest.TestCase):
    def test_no_help_by_line_numbers(self):
        for f in shell_scripts():
            with self.subTest(script=f):
                self.assertNotIn("sed -n '2,", open(os.path.join(ROOT, f)).read())

    def test_help_is_the_header(self):
        scripts = [f for f in shell_scripts()
                   if 'sb_usage "$0"' in open(os.path.join(ROOT, f)).read()]
        self.assertGreater(len(scripts), 20)
        for f in scripts:
            with self.subTest(script=f):
                r = subprocess.run(["bash", os.path.join(ROOT, f), "--help"], cwd=ROOT,
                                   capture_output=True, text=True, timeout=30)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout, header(os.path.join(ROOT, f)))
                self.assertGreater(len(r.stdout.split("\n")), 3)

    def test_no_python_inside_shell_scripts(self):
        for f in shell_scripts():
            with self.subTest(script=f):
                for line in open(os.path.join(ROOT, f)):
                    self.assertNotRegex(line, r"python3 -( |$)", "a Python heredoc")
                    if "python3 -c" in line:
                        self.assertRegex(line, r'python3 -c "import \w+"', "inline Python")

    def test_python_programs_take_argparse_help(self):
        programs = python_programs()
        self.assertGreater(len(programs), 30)
        for f in programs:
            with self.subTest(program=f):
                path = os.path.join(ROOT, f)
                doc = ast.get_docstring(ast.parse(open(path).read()))
                self.assertTrue(doc, "no module docstring to serve as its help")
                self.assertIn("argparse.ArgumentParser(description=__doc__", open(path).read())
                r = subprocess.run(["/usr/bin/python3", path, "--help"], cwd=ROOT,
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn(" ".join(doc.split()), " ".join(r.stdout.split()))


if __name__ == "__main__":
    unittest.main()
