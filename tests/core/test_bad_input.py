"""Bad input gets one clear line: bad INFPROF_* values warn once and use the default, an
unwritable output warns and the program still runs, and `infprof report` refuses files that
are not readable infprof databases with exit status 2."""
import os
import re
import shutil
import sqlite3
import subprocess
from harness import Case, main, prog


class BadSettings(Case):
    def test_bad_values_warn_once_and_use_default(self):
        plain = self.run_prog([prog("host"), "threads"], preload=False)
        for var, value in (("INFPROF_BUFFER_MB", "abc"), ("INFPROF_BUFFER_MB", "1"),
                           ("INFPROF_FORK", "sometimes"), ("INFPROF_CUPTI", "maybe")):
            with self.subTest(var=var, value=value):
                self.tearDown(), self.setUp()
                r = self.run_prog([prog("host"), "threads"], **{var: value})
                self.assertEqual((r.rc, r.out), (plain.rc, plain.out))
                lines = r.err.decode().splitlines()
                ours = [l for l in lines if l.startswith("infprof:")]
                self.assertEqual(len(ours), 1, lines)
                self.assertIn(var, ours[0])
                self.assertIn("default", ours[0])
                self.assertEqual([l for l in lines if not l.startswith("infprof:")],
                                 plain.err.decode().splitlines())
                self.assertEqual(self.meta(r.db(), "config." + var + ".rejected"), value)
                self.assertNotEqual(self.meta(r.db(), "config." + var), value)

    def test_a_decimal_setting(self):
        # INFPROF_OPERATORS_BUDGET is a percent with up to 3 decimals (profiler/config.c's
        # IP_CFG_MILLI): what a user writes is taken; anything else warns once and is left out.
        for value, ok in (("0.5", 1), (".5", 1), ("2", 1), ("100", 1), ("0.125", 1),
                          ("0.2500", 1), (" 0.5", 1), ("1.2345", 0), ("-1", 0), ("1e2", 0),
                          ("0.25.1", 0), ("101", 0), ("", 0), (".", 0), ("0,5", 0),
                          ("0.5 ", 0), ("0.0001", 0)):
            with self.subTest(value=value):
                self.tearDown(), self.setUp()
                r = self.run_prog(["/bin/true"], INFPROF_OPERATORS_BUDGET=value)
                ours = [l for l in r.err.decode().splitlines() if l.startswith("infprof:")]
                self.assertEqual(r.rc, 0)
                if ok:
                    self.assertEqual(ours, [])
                    self.assertEqual(self.meta(r.db(), "config.INFPROF_OPERATORS_BUDGET"), value)
                else:
                    self.assertEqual(len(ours), 1, ours)
                    self.assertIn("not a number in 0..100 with at most 3 decimals", ours[0])
                    self.assertEqual(self.meta(r.db(), "config.INFPROF_OPERATORS_BUDGET"), "0.25")

    def test_log_zero_silences(self):
        r = self.run_prog(["/bin/true"], INFPROF_BUFFER_MB="abc", INFPROF_LOG=0)
        self.assertEqual(r.err, b"")

    def test_unwritable_output(self):
        plain = self.run_prog([prog("host"), "threads"], preload=False)
        r = self.run_prog([prog("host"), "threads"], INFPROF_OUTPUT="/nonexistent/dir/x.db")
        self.assertEqual((r.rc, r.out), (plain.rc, plain.out))
        ours = [l for l in r.err.decode().splitlines() if l.startswith("infprof:")]
        self.assertEqual(len(ours), 1, ours)
        self.assertIn("/nonexistent/dir/x.db", ours[0])
        self.assertIn("INFPROF_OUTPUT", ours[0])


class HostileStrings(Case):
    def test_program_strings_never_reach_the_terminal_raw(self):
        text = b"iteration \xc2\x9b31m red \x1b[0m \xc0 caf\xc3\xa9"
        r = self.run_prog([prog("nvtx_ranges"), "2", text], INFPROF_OUTPUT="h.db")
        self.assertEqual(r.rc, 0)
        for fmt in ("text", "md", "csv"):
            out = self.cli("report", "--format", fmt, "h.db").out
            self.assertNotIn(b"\x1b", out, fmt)
            self.assertNotIn(b"\xc2\x9b", out, fmt)
            unwrapped = re.sub(rb"\n +", b" ", out)  # text wraps long values
            want = b"\\u009b31m red \\x1b[0m \\xc0 caf\xc3\xa9"
            if fmt == "md":  # Markdown's own escapes on top: it renders as the text above
                want = b"\\\\u009b31m red \\\\x1b\\[0m \\\\xc0 caf\xc3\xa9"
            self.assertIn(want, unwrapped, fmt)
        report = self.report_json("h.db")  # strict JSON, valid UTF-8
        names = [n["range"] for n in report["nvtx"]]
        self.assertIn("iteration \x9b31m red \x1b[0m \ufffd caf\xe9", names)


    # Characters a person cannot see (issue 54): the soft hyphen, U+180E, a Hangul filler, a
    # variation selector, the combining grapheme joiner, a tag character, and a combining mark
    # at a name's start. Two names that differ only by them must not look alike.
    HIDDEN = [("\u00ad", "\\u00ad"), ("\u180e", "\\u180e"), ("\u3164", "\\u3164"),
              ("\ufe0f", "\\ufe0f"), ("\u034f", "\\u034f"), ("\U000e0041", "\\U000e0041")]

    def test_hidden_characters_are_shown_wherever_a_person_reads(self):
        for ch, shown in self.HIDDEN + [("\u0301", "\\u0301")]:
            # the combining mark leads the name; the others sit inside it
            text = (ch + "iteration" if ch == "\u0301" else "iteration x" + ch + "y").encode()
            db = f"h{ord(ch):x}.db"
            r = self.run_prog([prog("nvtx_ranges"), "2", text], INFPROF_OUTPUT=db)
            self.assertEqual(r.rc, 0)
            for fmt in ("text", "md", "csv", "html"):
                out = self.cli("report", "--format", fmt, "--section", "nvtx", db).out.decode()
                self.assertNotIn(ch, out, (fmt, shown))
                self.assertIn(shown, out, (fmt, shown))
            # JSON keeps the name as it is (a program reads it), valid UTF-8.
            names = [n["range"] for n in self.report_json(db)["nvtx"]]
            self.assertIn(text.decode(), names)

    # One table of hostile names (issue 54) through every output, by the policy docs/guarantees.md
    # writes: what a person reads (text, Markdown, CSV, HTML and its SVG charts, the Perfetto
    # trace) shows each as an escape, never raw; what a program reads (JSON, the Chrome trace)
    # keeps the name, as valid JSON.
    TABLE = [("\x1b[31m", "\\x1b[31m"), ("\u009b", "\\u009b"), ("\u202e", "\\u202e"),
             ("\u200b", "\\u200b"), ("\u00ad", "\\u00ad"), ("\ufe0f", "\\ufe0f"),
             ("\U000e0041", "\\U000e0041"), ("\x07", "\\x07"), ("\x7f", "\\x7f")]

    def test_one_table_of_hostile_names_through_every_output(self):
        import json
        for raw, shown in self.TABLE:
            name = "iteration a" + raw + "b"
            db = f"t{ord(raw[0]):x}.db"
            r = self.run_prog([prog("nvtx_ranges"), "2", name.encode()], INFPROF_OUTPUT=db)
            self.assertEqual(r.rc, 0, r.err)
            for fmt in ("text", "md", "csv", "html"):
                out = self.cli("report", "--format", fmt, db).out.decode()
                self.assertNotIn(raw, out, (fmt, shown))
                if fmt == "md":  # Markdown's own escapes on top: read as it renders
                    out = re.sub(r"\\([\\\[\]()*_<>!#+.|`~&-])", r"\1", out)
                self.assertIn(shown, out, (fmt, shown))
            self.assertIn(name, [n["range"] for n in self.report_json(db)["nvtx"]], shown)
            trace = self.cli("export", db, "-o", db + ".json")
            self.assertEqual(trace.rc, 0, trace.err)
            with open(os.path.join(self.dir, db + ".json"), "rb") as f:
                events = json.loads(f.read().decode("utf-8"))["traceEvents"]
            self.assertIn(name, [e.get("name") for e in events], shown)
            pf = self.cli("export", db, "-o", db + ".pftrace")
            self.assertEqual(pf.rc, 0, pf.err)
            with open(os.path.join(self.dir, db + ".pftrace"), "rb") as f:
                data = f.read()
            # The name as it came, not the character alone: a protobuf's varints (timestamps)
            # hold any byte (a run of 2026-11-29 had 0x07 in one, and this failed on it).
            self.assertNotIn(name.encode(), data, shown)
            self.assertIn(("iteration a" + shown + "b").encode(), data, shown)
        # The SVG charts: a kernel named with an escape and a newline (fixture_compare's "new").
        run = subprocess.run([prog("fixture_compare"), "run.db"], cwd=self.dir,
                             env=dict(os.environ, FIXTURE_SCENARIO="new"), capture_output=True,
                             timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        page = self.cli("report", "--format", "html", "run.db").out.decode()
        svgs = re.findall(r"<svg.*?</svg>", page, re.S)
        self.assertTrue([s for s in svgs if "evil\\x1b[31m_kernel\\x0a" in s], "no kernel chart")
        self.assertNotIn("\x1b", page)

    def test_the_librarys_own_lines_escape_as_the_cli_does(self):
        # A setting's value is quoted in the warning: C1 CSI, U+202E and a tag character.
        bad = "12\u009b31m\u202e\U000e0041"
        r = self.run_prog(["/bin/true"], INFPROF_BUFFER_MB=bad)
        line = [l for l in r.err.decode().splitlines() if l.startswith("infprof:")]
        self.assertEqual(len(line), 1, r.err)
        for raw in ("\u009b", "\u202e", "\U000e0041"):
            self.assertNotIn(raw, line[0])
        self.assertIn("12\\u009b31m\\u202e\\U000e0041", line[0])


    MARKUP = ["__Foo__", "a*b*c", "x<!-- hidden -->y", "a\\|b|c", "<b>|</b>",
              "[link](http://evil.example/x)", "![img](http://evil.example/i.png)",
              "http://evil.example", "www.evil.example", "`tick`", "<script>unclosed",
              "x &lt; y", "mail x@evil.example", "# heading"]

    def test_markdown_renders_no_name_as_markup(self):
        # GitHub's renderer turned names into bold, italics, live links, remote images and raw
        # HTML (an unclosed <script> swallowed 11 of 12 tables). Every name comes out as itself.
        cmark = shutil.which("cmark-gfm")
        if not cmark:
            self.skipTest("no cmark-gfm (scripts/deps.sh installs Debian's)")
        r = self.run_prog([prog("nvtx_ranges"), "1", "iteration"], INFPROF_OUTPUT="m.db")
        self.assertEqual(r.rc, 0)
        con = sqlite3.connect(r.db("m.db"))
        for name in self.MARKUP:  # the ranges' names as a program would have given them
            con.execute("INSERT INTO strings(value) VALUES (?)", (name,))
            con.execute("INSERT INTO nvtx_ranges(tid, domain, kind, start, end, text_id)"
                        " SELECT tid, domain, kind, start, end, last_insert_rowid() FROM"
                        " nvtx_ranges LIMIT 1")
        con.commit()
        con.close()
        md = self.cli("report", "--format", "md", r.db("m.db"))
        self.assertEqual(md.rc, 0, md.err)
        html = subprocess.run([cmark, "-e", "table", "-e", "autolink", "--unsafe"], input=md.out,
                              capture_output=True, timeout=60).stdout.decode()
        self.assertNotRegex(html, r"<(a|img|em|strong|script|b)[\s>]")
        self.assertNotIn("<!--", html)
        self.assertEqual(html.count("<table>"), md.out.decode().count("\n|---"))
        import html as h
        cells = [h.unescape(c) for c in re.findall(r"<code>(.*?)</code>", html)]
        for name in self.MARKUP:
            self.assertIn(name, cells + [h.unescape(c) for c in
                                         re.findall(r"<td>(.*?)</td>", html)], name)


class BadDatabases(Case):
    def real_db(self):
        r = self.run_prog([prog("nvtx_ranges"), "2"], INFPROF_OUTPUT="real.db")
        self.assertEqual(r.rc, 0)
        return r.db("real.db")

    def test_missing(self):
        self.assertOneErrorLine(self.cli("report", "nope.db"), "nope.db", "No such file")

    def test_directory(self):
        self.assertOneErrorLine(self.cli("report", self.dir), "directory")

    def test_empty(self):
        open(os.path.join(self.dir, "empty.db"), "w").close()
        self.assertOneErrorLine(self.cli("report", "empty.db"), "empty.db", "empty")

    def test_not_sqlite(self):
        with open(os.path.join(self.dir, "notes.txt"), "w") as f:
            f.write("hello, this is text\n" * 20)
        self.assertOneErrorLine(self.cli("report", "notes.txt"), "notes.txt", "not an SQLite")

    def test_foreign_sqlite(self):
        con = sqlite3.connect(os.path.join(self.dir, "other.db"))
        con.execute("CREATE TABLE t(x)")
        con.commit()
        con.close()
        self.assertOneErrorLine(self.cli("report", "other.db"), "other.db", "not an infprof")

    def test_truncated(self):
        db = self.real_db()
        size = os.path.getsize(db)
        with open(db, "r+b") as f:
            f.truncate(size // 2)
        self.assertOneErrorLine(self.cli("report", db), "real.db", "truncated")

    def test_newer_schema(self):
        db = self.real_db()
        con = sqlite3.connect(db)
        con.execute("PRAGMA user_version = 99")
        con.commit()
        con.close()
        self.assertOneErrorLine(self.cli("report", db), "newer infprof", "99")
        self.assertOneErrorLine(self.cli("info", db), "newer infprof")

    def test_garbage_inside(self):
        db = self.real_db()
        size = os.path.getsize(db)
        with open(db, "r+b") as f:
            f.seek(8192)
            f.write(os.urandom(size - 8192))
        r = self.cli("report", db)
        self.assertOneErrorLine(r, "real.db")

    def test_usage_errors(self):
        self.assertOneErrorLine(self.cli("frobnicate"), "unknown command")
        self.assertOneErrorLine(self.cli("report"), "no database")
        self.assertOneErrorLine(self.cli("report", "--bogus", "x.db"), "unknown option")
        self.assertOneErrorLine(self.cli("report", "--format", "xml", "x.db"), "unknown format")
        self.assertOneErrorLine(self.cli("report", "--top", "-3", "x.db"), "--top")
        self.assertOneErrorLine(self.cli("run"), "no program")


if __name__ == "__main__":
    main()
