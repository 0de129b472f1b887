#!/usr/bin/env python3
"""Tables for tests/gpu/run.sh from a profiled sample: its database and its own stdout (the
reference lines of samples/common.h and samples/py_infer.py). Prints Markdown rows; exits 1 when
the check of the table fails.

    tables.py lossless NAME DB SAMPLE_OUT   nothing lost: events, drops, phases and iterations
    tables.py truth NAME DB SAMPLE_OUT      p50 against the program's own, per phase (2%)
    tables.py graphs NAME DB SAMPLE_OUT     CUDA graph replays: kernels in their phase and iteration
    tables.py advice NAME DB                which advice rules fired
    tables.py iters NAME DB SAMPLE_OUT      iterations by source, p50 against the program's own
                                            (5%), Triton share of kernel time, the Autocast line
    tables.py attribution NAME DB DB2       the same program under INFPROF_ATTRIBUTION=callbacks
                                            (DB) and =records (DB2): kernels, time, iterations
                                            and cuDNN-linked kernels per phase agree (1%)
"""
import json
import os
import sqlite3
import subprocess
import sys

CLI = os.path.join(os.environ.get("BUILD", "build"), "bin", "infprof")


def refs(path):
    with open(path) as f:
        return [json.loads(line[4:]) for line in f if line.startswith("ref ")]


def report(db):
    out = subprocess.run([CLI, "report", "--format", "json", db], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"tables.py: infprof report {db}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def meta(db, key):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    con.close()
    return row[0] if row else None


def lossless(name, db, out):
    r, want = report(db), refs(out)
    got = {p["label"]: p for p in r["phases"]}
    exact = sum(1 for x in want if got.get(x["phase"], {}).get("iterations") == x["iterations"])
    dropped = meta(db, "dropped_events") or 0
    wait_ms = (meta(db, "buffer_wait_ns") or 0) / 1e6
    peak = (meta(db, "buffer_bytes_peak") or 0) / 2 ** 20
    ok = dropped == 0 and exact == len(want) and all(x["phase"] in got for x in want)
    print(f"| {name} | {meta(db, 'events_recorded')} | {dropped} | {wait_ms:.1f} | {peak:.1f} |"
          f" {sum(1 for x in want if x['phase'] in got)} of {len(want)} |"
          f" {exact} of {len(want)} | {'ok' if ok else 'FAILED'} |")
    return ok


def truth(name, db, out, tol=0.02):
    r = report(db)
    got = {p["label"]: p for p in r["phases"]}
    ok = True
    for x in refs(out):
        p = got.get(x["phase"])
        if not p or p.get("latency_all_p50_ns") is None:
            print(f"| {name} | {x['phase']} | {x['p50_ms']:.3f} | - | - | - | - | - | FAILED |")
            ok = False
            continue
        ours = p["latency_all_p50_ns"] / 1e6
        diff = ours / x["p50_ms"] - 1
        good = abs(diff) <= tol
        ok &= good
        print(f"| {name} | {x['phase']} | {x['p50_ms']:.3f} | {ours:.3f} | {100 * diff:+.1f}% |"
              f" {p['latency_p50_ns'] / 1e6:.3f} | {p['host_p50_ns'] / 1e6:.3f} |"
              f" {p['warmup_iterations']} | {'ok' if good else 'FAILED'} |")
    return ok


def graphs(name, db, out):
    r, want = report(db), refs(out)
    got = {p["label"]: p for p in r["phases"]}
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    ok = True
    for x in want:
        p = got.get(x["phase"], {})
        pid = con.execute("SELECT id FROM phases WHERE label = ?", (x["phase"],)).fetchone()
        pid = pid[0] if pid else -1
        graph_k = con.execute("SELECT count(*) FROM kernels k JOIN launch_sigs g ON g.id = k.sig"
                              " WHERE g.graph_id != 0 AND g.phase = ?", (pid,)).fetchone()[0]
        with_work = con.execute("SELECT count(*) FROM iterations WHERE phase = ? AND gpu_items > 0",
                                (pid,)).fetchone()[0]
        good = p.get("iterations") == x["iterations"] and graph_k > 0 and \
            with_work == x["iterations"]
        ok &= good
        print(f"| {name} | {x['phase']} | {p.get('iterations')} of {x['iterations']} | {graph_k} |"
              f" {with_work} | {x['p50_ms']:.3f} | {(p.get('latency_all_p50_ns') or 0) / 1e6:.3f} |"
              f" {'ok' if good else 'FAILED'} |")
    con.close()
    return ok


def iters(name, db, out, tol=0.05):
    """Compiled and scope-marked programs: every run an iteration of its phase (the source says
    which signal), p50 to the program's own, how much kernel time is Triton's."""
    r = report(db)
    got = {p["label"]: p for p in r["phases"]}
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    ok = True
    for x in refs(out):
        pid = con.execute("SELECT id FROM phases WHERE label = ?", (x["phase"],)).fetchone()
        pid = pid[0] if pid else -1
        src = con.execute("SELECT group_concat(source || ':' || n) FROM (SELECT source, count(*)"
                          " n FROM iterations WHERE phase = ? GROUP BY 1)", (pid,)).fetchone()[0]
        tri = con.execute("SELECT coalesce(sum(CASE WHEN s.value LIKE 'triton%' THEN k.total END),"
                          " 0) * 100.0 / max(sum(k.total), 1) FROM kernel_summary k JOIN strings s"
                          " ON s.id = k.name_id WHERE k.phase = ?", (pid,)).fetchone()[0]
        p = got.get(x["phase"], {})
        ours = (p.get("latency_all_p50_ns") or 0) / 1e6
        diff = ours / x["p50_ms"] - 1 if ours else float("nan")
        good = p.get("iterations") == x["iterations"] and abs(diff) <= tol
        ok &= good
        print(f"| {name} | {x['phase']} | {src or '-'} | {p.get('iterations')} of"
              f" {x['iterations']} | {x['p50_ms']:.3f} | {ours:.3f} | {100 * diff:+.1f}% |"
              f" {tri:.0f}% | {'ok' if good else 'FAILED'} |")
    print(f"\nAutocast line: {r.get('summary', {}).get('autocast') or '-'}\n")
    con.close()
    return ok


def attribution_counts(db):
    """phase label -> (kernels, kernel ms, iterations, kernels tied to a cuDNN call)."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT coalesce(p.label, 'none'), count(*), sum(k.dur) / 1e6, count(DISTINCT k.iter),"
        " sum(k.corr IN (SELECT corr FROM external_corr WHERE kind = 4))"
        " FROM kernels k LEFT JOIN phases p ON p.id = k.phase GROUP BY 1").fetchall()
    con.close()
    return {r[0].replace(" | ", ", "): r[1:] for r in rows}


def attribution(name, db, db2):
    a, b = attribution_counts(db), attribution_counts(db2)
    ok = set(a) == set(b)
    for label in sorted(set(a) | set(b)):
        x, y = a.get(label, (0, 0, 0, 0)), b.get(label, (0, 0, 0, 0))
        near = all(abs(p - q) <= 0.01 * max(p, q) + 1 for p, q in zip(x, y))
        ok = ok and near
        print(f"| {name} | {label} | {x[0]} / {y[0]} | {x[1]:.1f} / {y[1]:.1f} | {x[2]} / {y[2]} |"
              f" {x[3]} / {y[3]} | {'ok' if near else 'FAILED'} |")
    unattributed = meta(db2, "cupti_unattributed_records") or 0
    expired = meta(db2, "cupti_records_wait_expired") or 0
    print(f"| {name} | records mode: {meta(db2, 'cupti_attribution')}, unattributed"
          f" {unattributed} (callbacks {meta(db, 'cupti_unattributed_records') or 0}), waited"
          f" {meta(db2, 'cupti_records_waited') or 0}, expired {expired} | | | | |"
          f" {'ok' if meta(db2, 'cupti_attribution') == 'records' else 'FAILED'} |")
    return ok and meta(db2, "cupti_attribution") == "records"


def advice(name, db, out=None):
    r = report(db)
    fired = sorted({a.get("rule") or a.get("id") or "?" for a in r.get("advice", [])})
    print(f"| {name} | {', '.join(fired) or '(none)'} |")
    return True


if __name__ == "__main__":
    what, name, db = sys.argv[1:4]
    out = sys.argv[4] if len(sys.argv) > 4 else None
    fn = {"lossless": lossless, "truth": truth, "graphs": graphs, "advice": advice,
          "iters": iters, "attribution": attribution}[what]
    sys.exit(0 if fn(name, db, out) else 1)
