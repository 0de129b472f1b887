"""What the cuDNN tests share: reading cudnn_calls by function name."""


def calls(case, db, fn=None):
    """cudnn_calls rows as dicts, in time order; only those of function `fn` when given."""
    rows = case.query(db, "SELECT s.value, c.status, c.op_kind, c.dtype, c.plan, c.stream,"
                          " c.shape, c.dur, c.ext_id, c.tid, c.phase, c.handle FROM cudnn_calls c"
                          " JOIN strings s ON s.id = c.fn_id ORDER BY c.start")
    keys = ("fn", "status", "op_kind", "dtype", "plan", "stream", "shape", "dur", "ext_id", "tid",
            "phase", "handle")
    out = [dict(zip(keys, r)) for r in rows]
    return [r for r in out if fn is None or r["fn"] == fn]


def counts(case, db):
    """{function name: number of recorded calls}"""
    return dict(case.query(db, "SELECT s.value, count(*) FROM cudnn_calls c JOIN strings s"
                               " ON s.id = c.fn_id GROUP BY s.value"))
