"""The built library exports exactly the cuDNN wrappers, all in version node libcudnn.so.9 (so
that references bound to cudnnX@libcudnn.so.9 reach them), as listed in preload/exports.map and
defined in collectors/cudnn.c; nothing else of ours is in that node, and cuDNN is no
dependency of the library."""
import os
import re
import subprocess
from harness import Case, LIB, main, prog

SRC = os.path.join(os.path.dirname(__file__), "..", "..")


def dynsyms(path):
    """{name: version} of the defined dynamic symbols ('' unversioned), by readelf."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", path], capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].endswith(":") or f[6] == "UND":
            continue
        name, _, version = f[7].partition("@")
        syms[name] = (version.lstrip("@"), f[3])
    return syms


def map_node(path, node):
    text = open(path).read()
    body = re.search(node.replace(".", r"\.") + r"\s*\{(.*?)\};", text, re.S).group(1)
    return set(re.findall(r"^\s*(cudnn\w+);", body, re.M))


class Exports(Case):
    def test_node_holds_exactly_the_wrappers(self):
        syms = dynsyms(LIB)
        in_node = {n for n, (v, t) in syms.items() if v == "libcudnn.so.9" and t == "FUNC"}
        listed = map_node(os.path.join(SRC, "preload", "exports.map"), "libcudnn.so.9")
        src = open(os.path.join(SRC, "collectors", "cudnn.c")).read()
        defined = set(re.findall(r"IP_EXPORT cudnnStatus_t (cudnn\w+)\(", src))
        self.assertEqual(len(defined), 17)
        self.assertEqual(in_node, listed)
        self.assertEqual(in_node, defined)
        # Nothing else in the node, no cuDNN name outside it.
        others = {n for n, (v, t) in syms.items() if v == "libcudnn.so.9" and t != "FUNC"}
        self.assertEqual(others, set())
        stray = {n for n, (v, t) in syms.items() if n.startswith("cudnn") and n not in in_node}
        self.assertEqual(stray, set())
        self.assertFalse([n for n in syms if n.startswith("ip_")], "internal symbols leak")

    def test_version_definition_and_no_dependency(self):
        v = subprocess.run(["readelf", "-V", "-W", LIB], capture_output=True, text=True,
                           check=True).stdout
        self.assertRegex(v, r"Name: libcudnn\.so\.9")
        d = subprocess.run(["readelf", "-d", LIB], capture_output=True, text=True,
                           check=True).stdout
        self.assertNotIn("libcudnn", d)

    def test_the_real_library_has_each_in_the_same_node(self):
        exe = prog("cudnn_real")
        if not os.path.exists(exe):
            self.skipTest("no libcudnn.so.9 found at build time")
        ldd = subprocess.run(["ldd", exe], capture_output=True, text=True).stdout
        real = re.search(r"libcudnn\.so\.9 => (\S+)", ldd).group(1)
        theirs = {n for n, (v, t) in dynsyms(real).items() if v == "libcudnn.so.9"}
        ours = {n for n, (v, t) in dynsyms(LIB).items() if v == "libcudnn.so.9" and t == "FUNC"}
        self.assertEqual(ours - theirs, set())


if __name__ == "__main__":
    main()
