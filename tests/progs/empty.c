/* empty.c: a shared library with nothing in it, built under another tool's file name
 * (tests/CMakeLists.txt, fake_sanitizer): its presence in a process is what is tested. */
int ip_empty_library_marker;
