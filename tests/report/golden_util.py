"""Golden files for reports, one per section (`--section KEY`, golden/KEY/SCENARIO.EXT): normalise
what legitimately differs between two runs of the same fixture, and compare the rest exactly,
with a unified diff on failure. A new section adds its own files and changes no other.

What is normalised, and nothing else: the run header's command line (build and scratch paths),
pid, host, start time (text and Unix ns), the run's own duration, what infprof cost it (its own
CPU time), the CPUs the machine has, those the process may use and its container's CPU quota,
the database path and the infprof
version. Every figure the fixtures synthesise (phase spans, kernels, copies, iterations,
memory, cuDNN calls, counters) uses synthetic times and stays as it is.

INFPROF_UPDATE_GOLDEN=1 (or --update on the test's command line) rewrites the files instead.
"""
import difflib
import os
import re

UPDATE = os.environ.get("INFPROF_UPDATE_GOLDEN") == "1"

# JSON/CSV keys of the run section, and the titles text and Markdown give them.
RUN_KEYS = ("command", "pid", "host", "start_time", "start_unix_ns", "duration_ns",
            "output_path", "infprof_version", "observer_cost", "clock", "cpus_online",
            "cpus_allowed", "cpu_quota_milli", "cpu_periods", "cpu_throttled_periods",
            "cpu_throttled_ns")
RUN_TITLES = ("Command", "PID", "Host", "Started", "Duration")
# Present or not by the run (infprof's own CPU time needs two readings 10 ms apart; the clock): the row
# goes in text and Markdown, the value in JSON and CSV, whether it is there or not.
# The clock: the TSC line where the run outlasted its baseline and the kernel times with the
# TSC, else clock_gettime; the distance it was found at moves from run to run.
# The CPUs: the machine's, and a container's CPU quota where the tests run in one.
RUN_ANY = ("observer_cost", "clock", "cpus_online", "cpus_allowed", "cpu_quota_milli",
           "cpu_periods", "cpu_throttled_periods", "cpu_throttled_ns")
RUN_ANY_TITLES = ("Our cost", "Clock")


def _json(text):
    out, in_run = [], False
    for line in text.split("\n"):
        if line == '  "run": {':
            in_run = True
        elif in_run and line.startswith("  }"):
            in_run = False
        elif in_run:
            m = re.match(r'^    "([a-z_]+)": (.*?)(,?)$', line)
            if m and m.group(1) in RUN_KEYS:
                line = f'    "{m.group(1)}": "<{m.group(1)}>"{m.group(3)}'
        out.append(line)
    return "\n".join(out)


def _csv_fields(line):
    """Split one CSV line into its raw fields (quotes kept), so the rest stays byte-exact."""
    fields, cur, quoted = [], "", False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            fields.append(cur)
            cur = ""
        else:
            cur += ch
    fields.append(cur)
    return fields


def _csv(text, tidy=False):
    lines = text.split("\n")
    at = lines.index("# run") if "# run" in lines else -1
    if tidy and lines and lines[0].startswith("command,"):  # --section run: header and row
        lines.insert(0, "# run")
        at = 0
    if at >= 0 and len(lines) > at + 2:
        header = lines[at + 1].split(",")
        row = _csv_fields(lines[at + 2])
        assert len(row) == len(header), "the run row does not match its header"
        for i, key in enumerate(header):
            if key in RUN_KEYS and (row[i] or key in RUN_ANY):
                row[i] = f"<{key}>"
        lines[at + 2] = ",".join(row)
    if tidy and at == 0:
        lines.pop(0)
    return "\n".join(lines)


def _titled(text, fmt):
    out, in_run, wrapped = [], False, False
    for line in text.split("\n"):
        # A normalised value's continuation lines (text wraps a long one under itself) go too.
        if wrapped and fmt == "text" and re.match(r"^ {3,}\S", line):
            continue
        wrapped = False
        if line in ("Run", "## Run"):
            in_run = True
        elif in_run and line == "" and fmt == "text":
            in_run = False
        elif in_run and fmt == "md" and line.startswith("## "):
            in_run = False
        if in_run and any(re.match(rf"^(  |\| ){t}(\s{{2,}}| \| )", line)
                          for t in RUN_ANY_TITLES):
            wrapped = True
            continue
        if in_run:
            for title in RUN_TITLES:
                if fmt == "text" and re.match(rf"^  {title}\s{{2,}}\S", line):
                    line = re.sub(r"^(  \S.*?\s{2,})\S.*$", rf"\g<1><{title}>", line)
                    wrapped = True
                elif fmt == "md" and line.startswith(f"| {title} | "):
                    line = f"| {title} | <{title}> |"
        out.append(line)
    return "\n".join(out)


def _html(text):
    """The page's body (its head is the same style sheet on every page), the run's identity as in
    text."""
    body = text.split("<body>", 1)[1] if "<body>" in text else text
    out = []
    for line in body.split("\n"):
        m = re.match(r"^<dt>([^<]*)</dt><dd>", line)
        if m and m.group(1) in RUN_ANY_TITLES:
            continue
        if m and m.group(1) in RUN_TITLES:
            line = f"<dt>{m.group(1)}</dt><dd>&lt;{m.group(1)}&gt;</dd>"
        out.append(line)
    return "\n".join(out)


def normalise(fmt, text, section=None):
    """section: the output is `--section KEY`'s (CSV: one tidy table, no '# key' line)."""
    if fmt == "json":
        return _json(text)
    if fmt == "html":
        return _html(text)
    if fmt == "csv":
        return _csv(text, tidy=section == "run")
    return _titled(text, fmt)


def check(case, path, got):
    if UPDATE:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(got)
        return
    if not os.path.exists(path):
        case.fail(f"{path} is missing: run with INFPROF_UPDATE_GOLDEN=1 to create it")
    with open(path, encoding="utf-8") as f:
        want = f.read()
    if want != got:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                            path, "this build's report"))
        case.fail(f"report differs from {path} (INFPROF_UPDATE_GOLDEN=1 accepts it):\n{diff}")
