"""The `tessera` command of a pip-installed package: the console script (pyproject.toml's
[project.scripts]) and `python -m tessera` run the command-line binary the wheel carries in
tessera/bin, which finds its libraries, plugins and packs relative to itself."""
import os
import sys


def main():
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "tessera")
    if not os.access(binary, os.X_OK):
        # A build tree's package (build/python/tessera) has no bin/: its command is
        # build/tools/tessera.
        sys.exit(f"tessera: {binary} is missing: this package was not installed from a wheel "
                 "(pip install .); run the tessera binary of your build instead")
    os.execv(binary, ["tessera"] + sys.argv[1:])
