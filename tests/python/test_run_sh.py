"""run.sh answers --help as a user expects: the usage on stdout and exit 0, without installing or
building anything; an unknown command is an error naming it."""
import os
import subprocess
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def run_sh(*args):
    return subprocess.run([os.path.join(ROOT, "run.sh"), *args], capture_output=True, text=True,
                          timeout=30)


class RunSh(unittest.TestCase):
    def test_help_prints_the_usage_and_succeeds(self):
        for flag in ("--help", "-h", "help", None):
            with self.subTest(flag=flag):
                r = run_sh(*([flag] if flag else []))
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("./run.sh test", r.stdout)
                self.assertIn("./run.sh demo", r.stdout)
                self.assertEqual(r.stderr, "")

    def test_an_unknown_command_is_an_error_naming_it(self):
        r = run_sh("tset")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown command 'tset'", r.stderr)
        self.assertIn("./run.sh test", r.stdout)


if __name__ == "__main__":
    unittest.main()
