"""Writing the benchmark charts (tune_curve.py, op_chart.py): SVG or PNG chosen by the output's
extension, drawn with matplotlib's Agg backend (no display needed), never over an existing file
unless forced, with the plotted numbers embedded so that a reader or a test can check the picture
against its source.

The numbers go into the file's Description metadata as JSON: in an SVG the `dc:description` of
its `<metadata>`, in a PNG the `Description` text chunk. Each drawn series also carries a gid
(`<g id="...">` in the SVG) named in that JSON, so the drawn coordinates can be found.
"""
import json
import os

FORMATS = {".svg": "svg", ".png": "png"}


def check_output(path, force):
    """Exits with a message naming `path` when it has no .svg/.png extension, or exists and
    `force` is off, or matplotlib is missing; returns the matplotlib format name. Called before
    any measuring, so nothing runs for a chart that cannot be written."""
    fmt = FORMATS.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        raise SystemExit(f"{path}: the chart's file name must end in .svg or .png")
    if os.path.lexists(path) and not force:
        raise SystemExit(f"{path}: exists; pass --force to replace it")
    pyplot()
    return fmt


def pyplot():
    """matplotlib.pyplot on the Agg backend, or an exit naming the missing package."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit("charts need matplotlib (tools/setup-deps.sh installs it)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    # Text stays text (smaller files, searchable); fixed ids and no date keep a chart of the
    # same numbers byte-identical.
    plt.rcParams["svg.fonttype"] = "none"
    plt.rcParams["svg.hashsalt"] = "tessera"
    # Every point drawn where the data puts it: no vertices merged away.
    plt.rcParams["path.simplify"] = False
    return plt


def save(fig, path, fmt, data, force):
    """Writes `fig` to `path` with `data` (a JSON-able dict) as its Description, through a
    temporary file renamed into place, so a failed save leaves no partial chart."""
    metadata = {"Description": json.dumps(data, sort_keys=True)}
    if fmt == "svg":
        metadata["Date"] = None
    else:
        metadata["Software"] = "tessera tools/bench"
    temporary = f"{path}.tmp{os.getpid()}"
    try:
        fig.savefig(temporary, format=fmt, metadata=metadata, bbox_inches="tight")
        if os.path.lexists(path) and not force:
            raise SystemExit(f"{path}: appeared while drawing; pass --force to replace it")
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def embedded_data(path):
    """The JSON a chart of this module carries (for tests and scripts reading a chart back)."""
    if path.lower().endswith(".svg"):
        import xml.etree.ElementTree as ET
        root = ET.parse(path).getroot()
        for el in root.iter("{http://purl.org/dc/elements/1.1/}description"):
            return json.loads(el.text)
        raise ValueError(f"{path}: no dc:description metadata")
    from PIL import Image
    with Image.open(path) as image:
        return json.loads(image.text["Description"])
