"""python -m tessera ARGS: the tessera command (tessera/_cli.py)."""
from ._cli import main

main()
