"""The worked examples of docs/internals.md (adding a report section, an advice rule, an output
format, a collector) compile against the headers as they are: a block of that page is a file of
its own in the folder it belongs to, built with the project's warnings as errors by GCC and
clang. An example that drifts from the code fails here, not in a contributor's first build. The
collector goes further: registered with the lines the page shows (in a copy of the registry), its
schema embedded as the build embeds it, linked with the core and run, it gets its setting read,
its table created and its status line written."""
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

from harness import BUILD, main

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOC = os.path.join(ROOT, "docs", "internals.md")
CUDA = os.environ.get("INFPROF_CUDA_INCLUDE", "/usr/local/cuda/include")
FOLDER = {"sec_": "report/sections", "advice_": "report/sections", "render_": "report/render",
          "model_": "report/run", "example": "collectors"}
WARN = ["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function"]


def doc_text():
    with open(DOC, encoding="utf-8") as f:
        return f.read()


def examples():
    """Each ```c, ```h and ```sql block of the page with the file name its first comment gives."""
    out = {}
    for block in re.findall(r"```(?:c|h|sql)\n(.*?)```", doc_text(), re.S):
        m = re.match(r"(?:/\*|--) (\w+\.(?:c|h|sql)):", block)
        if m:
            out[m.group(1)] = block
    return out


def folder_of(name):
    return next(d for p, d in FOLDER.items() if name.startswith(p))


def registration():
    """The registration lines the page gives for the collector, by file."""
    lines = re.findall(r"^(.*?)\s+/\* collectors/(registry\.[ch]) \*/$", doc_text(), re.M)
    out = {}
    for line, path in lines:
        out.setdefault(path, []).append(line.rstrip())
    return out


def build_setting(name):
    """A value of the build's CMake cache (the sanitizers it was built with, its compiler)."""
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(name + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""


class InternalsExamples(unittest.TestCase):
    def setUp(self):
        self.cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        if not self.cc:
            self.skipTest("no C compiler")
        self.tmp = tempfile.mkdtemp(prefix="infprof-internals-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def tree(self):
        """The examples in a copy of the folders they belong to; collectors/ has the registry
        with the page's lines added (profiler/ is the real one)."""
        found = examples()
        for folder in set(FOLDER.values()):
            os.makedirs(os.path.join(self.tmp, folder), exist_ok=True)
        os.symlink(os.path.join(ROOT, "profiler"), os.path.join(self.tmp, "profiler"))
        for name, code in found.items():
            with open(os.path.join(self.tmp, folder_of(name), name), "w") as f:
                f.write(code)
        reg = registration()
        self.assertEqual({k: len(v) for k, v in reg.items()}, {"registry.h": 1, "registry.c": 2})
        col = os.path.join(self.tmp, "collectors")
        with open(os.path.join(ROOT, "collectors", "registry.h")) as f:
            h = f.read()
        self.assertIn("    IP_COLLECTOR_COUNT", h)
        h = h.replace("    IP_COLLECTOR_COUNT", reg["registry.h"][0] + "\n    IP_COLLECTOR_COUNT", 1)
        with open(os.path.join(col, "registry.h"), "w") as f:
            f.write(h)
        with open(os.path.join(ROOT, "collectors", "registry.c")) as f:
            c = f.read()
        extern, entry = reg["registry.c"]
        c = c.replace("const struct ip_collector *const ip_collectors", extern + "\n\n"
                      "const struct ip_collector *const ip_collectors", 1)
        c = re.sub(r"\n};", "\n" + entry + "\n};", c, count=1)
        with open(os.path.join(col, "registry.c"), "w") as f:
            f.write(c)
        return found

    def compile_only(self, cc, path):
        where = os.path.dirname(path)
        real = os.path.join(ROOT, os.path.relpath(where, self.tmp))
        return subprocess.run([cc, *WARN, "-fsyntax-only", "-iquote", where, "-iquote", real,
                               "-I", ROOT, "-I", CUDA, path], capture_output=True, text=True)

    def test_every_example_compiles(self):
        found = self.tree()
        self.assertEqual(sorted(found), ["advice_example.c", "example.c", "example.sql",
                                         "example_config.c", "example_config.h",
                                         "model_example.c", "render_example.c", "sec_example.c"])
        # GCC and clang (CI builds with both; clang warns where GCC does not, e.g. on a field
        # left out of a positional initializer).
        compilers = [self.cc] + ([shutil.which("clang")] if shutil.which("clang") else [])
        for name in found:
            if not name.endswith(".c"):
                continue
            for cc in compilers:
                r = self.compile_only(cc, os.path.join(self.tmp, folder_of(name), name))
                self.assertEqual(r.returncode, 0, f"{name} ({cc}):\n{r.stderr}")

    def test_a_lazy_part_is_a_file_and_two_lines(self):
        # The page's lines added to a copy of report/run/lazy.c: it compiles with the example's
        # file beside it, and the example's part is listed, so run_lazy_drop lets it go.
        self.tree()
        lines = re.findall(r"^(.*?)\s+/\* report/run/lazy\.c \*/$", doc_text(), re.M)
        self.assertEqual(len(lines), 2, lines)
        extern, entry = (l.rstrip() for l in lines)
        with open(os.path.join(ROOT, "report", "run", "lazy.c")) as f:
            c = f.read()
        self.assertIn("static const struct run_model *const lazy_models[] = {", c)
        c = c.replace("static const struct run_model *const lazy_models[] = {",
                      extern + "\n\nstatic const struct run_model *const lazy_models[] = {", 1)
        c = re.sub(r"(lazy_models\[\] = \{.*?)\n\};", lambda m: m.group(1) + "\n" + entry + "\n};",
                   c, count=1, flags=re.S)
        self.assertIn(entry, c)
        path = os.path.join(self.tmp, "report", "run", "lazy.c")
        with open(path, "w") as f:
            f.write(c)
        compilers = [self.cc] + ([shutil.which("clang")] if shutil.which("clang") else [])
        for cc in compilers:
            for name in ("lazy.c", "model_example.c"):
                r = self.compile_only(cc, os.path.join(self.tmp, "report", "run", name))
                self.assertEqual(r.returncode, 0, f"{name} ({cc}):\n{r.stderr}")

    def build_collector(self):
        """The example collector with the page's registration, its schema embedded by the
        build's own script, linked with the core the build made (its compiler, its
        sanitizers)."""
        core = os.path.join(BUILD, "libinfprof_core.a")
        base = os.path.join(BUILD, "libinfprof_base.a")
        if not (os.path.exists(core) and os.path.exists(base)):
            self.skipTest(f"no {core}: build first")
        self.tree()
        col = os.path.join(self.tmp, "collectors")
        sql_c = os.path.join(self.tmp, "example_sql.c")
        r = subprocess.run(["cmake", f"-DIN={os.path.join(col, 'example.sql')}",
                            "-DNAME=ip_schema_example", f"-DOUT={sql_c}", "-P",
                            os.path.join(ROOT, "cmake", "embed_schema.cmake")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.tmp, "driver.c"), "w") as f:
            f.write('#include "collectors/registry.h"\n#include "profiler/lifecycle.h"\n'
                    "int main(int argc, char **argv)\n{\n    (void)argc;\n"
                    "    struct ip_start_opts o = {argv[1], 0, ip_collectors, IP_COLLECTOR_COUNT};\n"
                    "    if (ip_lifecycle_start(&o) != 0) return 1;\n"
                    '    ip_lifecycle_finish("exit", 0);\n    return 0;\n}\n')
        exe = os.path.join(self.tmp, "driver")
        sanitize = build_setting("INFPROF_SANITIZE")
        flags = [f"-fsanitize={sanitize}"] if sanitize else []
        cc = build_setting("CMAKE_C_COMPILER") or self.cc
        sources = [os.path.join(self.tmp, "driver.c"), sql_c] + [
            os.path.join(col, n) for n in ("registry.c", "example.c", "example_config.c")]
        r = subprocess.run([cc, *WARN, *flags, "-I", self.tmp, "-I", ROOT, "-I", CUDA, "-o", exe,
                            *sources, core, base, "-lsqlite3", "-ldl", "-lpthread", "-lm"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return exe

    def run_collector(self, exe, db, **env):
        e = dict(os.environ, INFPROF_LOG="0", INFPROF_CUPTI="0", **env)
        r = subprocess.run([exe, db], env=e, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        con = sqlite3.connect(db)
        try:
            rows = con.execute("SELECT count(*), max(value) FROM example_rows").fetchone()
            meta = dict(con.execute("SELECT key, value FROM meta WHERE key LIKE '%xample%'"))
        finally:
            con.close()
        return rows, meta

    def test_collector_example_runs(self):
        exe = self.build_collector()
        rows, meta = self.run_collector(exe, os.path.join(self.tmp, "a.db"))
        self.assertEqual(rows, (3, 42))  # the setting's default
        self.assertEqual(meta.get("collector.example"), "on: 3 rows")
        self.assertNotIn("config.INFPROF_EXAMPLE_ROWS", meta)
        rows, meta = self.run_collector(exe, os.path.join(self.tmp, "b.db"),
                                        INFPROF_EXAMPLE_ROWS="2")
        self.assertEqual(rows, (2, 42))
        self.assertEqual(meta.get("config.INFPROF_EXAMPLE_ROWS"), "2")
        rows, meta = self.run_collector(exe, os.path.join(self.tmp, "c.db"),
                                        INFPROF_EXAMPLE_ROWS="many")
        self.assertEqual(rows, (3, 42))  # rejected, the default used and the value kept
        self.assertEqual(meta.get("config.INFPROF_EXAMPLE_ROWS.rejected"), "many")


if __name__ == "__main__":
    main()
