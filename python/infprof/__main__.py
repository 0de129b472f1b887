"""`python -m infprof ARGS` and the `infprof` console command: the native command line, with the
same arguments, exit status and signals (it replaces this process)."""
import os
import sys

from . import cli_path


def main():
    exe = cli_path()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"infprof: the command line is missing from this package ({exe}; an"
                         " editable install has none): install from the checkout with"
                         " pip install --no-build-isolation /path/to/infprof\n")
        return 2
    os.execv(exe, ["infprof"] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
