"""NVTX's wide entry points (issue 50 item 5): a wide range pushed inside an iteration's range
once ended the iteration at its pop (nvtxRangePushW was not wrapped, nvtxRangePop was: a 3 ms
iteration read 131 us), and a unicode message outside ASCII became an empty name (wcsrtombs in
the C locale). Every W entry point (push, start, mark, domain, registered string, thread name)
is recorded, in UTF-8, whatever the locale (tests/progs/nvtx_wide.c)."""
from harness import Case, main, prog

N = 12


class NvtxWide(Case):
    def test_wide_names_and_ranges(self):
        r = self.run_prog([prog("nvtx_wide"), str(N)], INFPROF_OUTPUT="w.db", LC_ALL="C")
        self.assertEqual(r.rc, 0, r.err)
        own = int(r.out.decode().split("mean ")[1])
        db = r.db("w.db")
        texts = {v for (v,) in self.query(db, "SELECT s.value FROM nvtx_ranges n JOIN strings s"
                                              " ON s.id = n.text_id")}
        for name in ("iteration step", "prä", "größe \U0001F600", "bereit \u2713", "ganz"):
            self.assertIn(name, texts)
        strings = {v for (v,) in self.query(db, "SELECT value FROM strings")}
        for name in ("appé", "registriert ü", "wörker"):
            self.assertIn(name, strings)
        # The wide range closes itself, never the iteration around it: N iterations of 3.1 ms.
        (count, mean), = self.query(db, "SELECT count(*), avg(dur) FROM iterations")
        self.assertEqual(count, N)
        self.assertLess(abs(mean / own - 1), 0.1, (mean, own))
        (depth,), = self.query(db, "SELECT count(*) FROM nvtx_ranges n JOIN strings s"
                                   " ON s.id = n.text_id WHERE s.value = 'prä'"
                                   " AND n.end IS NOT NULL")
        self.assertEqual(depth, N)


if __name__ == "__main__":
    main()
