"""The worked examples of docs/internals.md (adding a report section, an advice rule) compile
against the headers as they are: a C block of that page is a file of its own in the folder it
names, built with the project's warnings as errors. An example that drifts from the code fails
here, not in a contributor's first build."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from harness import main

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DOC = os.path.join(ROOT, "docs", "internals.md")


def examples():
    """Each ```c block of the page with the file name its first comment gives."""
    with open(DOC) as f:
        text = f.read()
    out = []
    for block in re.findall(r"```c\n(.*?)```", text, re.S):
        m = re.match(r"/\* (\w+\.c):", block)
        if m:
            out.append((m.group(1), block))
    return out


class InternalsExamples(unittest.TestCase):
    def test_every_example_compiles(self):
        cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        if not cc:
            self.skipTest("no C compiler")
        found = examples()
        self.assertEqual(sorted(name for name, _ in found), ["advice_example.c", "sec_example.c"])
        cuda = os.environ.get("INFPROF_CUDA_INCLUDE", "/usr/local/cuda/include")
        with tempfile.TemporaryDirectory() as tmp:
            for name, code in found:
                # Where the file would live: the report's sections.
                path = os.path.join(ROOT, "report", "sections", name)
                src = os.path.join(tmp, name)
                with open(src, "w") as f:
                    f.write(code)
                r = subprocess.run([cc, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror",
                                    "-Wno-unused-function", "-fsyntax-only",
                                    "-iquote", os.path.dirname(path), "-I", ROOT, "-I", cuda, src],
                                   capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, f"{name}:\n{r.stderr}")


if __name__ == "__main__":
    main()
