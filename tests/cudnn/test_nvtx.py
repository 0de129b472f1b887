"""Each traced cuDNN call is an NVTX range in domain "infprof" named after its operation: a
chained NVTX tool (a stand-in for Nsight Systems) receives it, nested in the program's own range,
while our capture of the program's ranges (nvtx_ranges) never records it. They come with
INFPROF_MODE=full (or INFPROF_CUDNN_NVTX=1); the default leaves them off, not the recording."""
import os
from harness import Case, main, prog
from cudnn_common import calls

FAKE = os.path.join(os.path.dirname(prog("cudnn_fake")), "fakecudnn")
TOOL = prog("nvtx_tool.so")


def simplify(lines):
    """The tool's pushes and pops ("push DOMAIN TID TEXT", "pop DOMAIN TID"), without thread
    ids; "default" for the default domain."""
    out = []
    for line in lines:
        kind, domain, *rest = line.split(" ")
        domain = "default" if domain == "-" else domain
        if kind == "push":
            out.append("push %s %s" % (domain, " ".join(rest[1:])))
        elif kind == "pop":
            out.append("pop %s" % domain)
    return out


class Nvtx(Case):
    def run_nvtx(self, preload=True, **env):
        log = os.path.join(self.dir, "tool.log")
        if os.path.exists(log):
            os.unlink(log)
        r = self.run_prog([prog("cudnn_fake"), "nvtx"], preload=preload, LD_LIBRARY_PATH=FAKE,
                          NVTX_INJECTION64_PATH=TOOL, NVTX_TOOL_LOG=log, **env)
        lines = open(log).read().splitlines() if os.path.exists(log) else []
        return r, simplify(lines)

    def test_ranges_reach_the_tool_not_the_capture(self):
        plain, plain_lines = self.run_nvtx(preload=False)
        r, lines = self.run_nvtx(INFPROF_MODE="full")
        self.assertUnnoticed(plain, r)
        self.assertEqual(plain_lines, ["push default iteration", "pop default"])
        self.assertEqual(lines, ["push default iteration",
                                 "push infprof cudnn convolution forward", "pop infprof",
                                 "push infprof cudnn batch-norm inference", "pop infprof",
                                 "pop default"])
        db = r.db()
        self.assertEqual(self.query(db, "SELECT s.value, r.domain FROM nvtx_ranges r JOIN strings"
                                        " s ON s.id = r.text_id"), [("iteration", 0)])
        self.assertEqual(self.query(db, "SELECT count(*) FROM nvtx_domains")[0][0], 0)
        self.assertIn("chained to", self.meta(db, "collector.nvtx"))

    def test_ranges_off(self):
        for env in ({}, {"INFPROF_MODE": "full", "INFPROF_CUDNN_NVTX": 0}):
            with self.subTest(env=env):
                r, lines = self.run_nvtx(**env)
                self.assertEqual(lines, ["push default iteration", "pop default"])
                self.assertEqual(len(calls(self, r.db(), "cudnnConvolutionForward")), 1)


if __name__ == "__main__":
    main()
