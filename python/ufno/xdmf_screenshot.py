"""A picture of a prediction as ParaView shows it: the XDMF description ufno_predict writes beside
every prediction (docs/paraview.md) drawn by ParaView's renderer (VTK's, off screen) at one report
time, coloured by one field. A nested site's GLOBAL level is drawn translucent so that its refined
levels show inside it, where they lie.

Usage (no display needed):
  xvfb-run -a /usr/bin/python3 -m ufno.xdmf_screenshot PRED.xmf OUT.png [--field dP] [--time DAYS]
"""

import argparse
import os
import sys


def cut_origin(xmf):
    """The centre of the prediction's first refined level (a nested site), else of its grid."""
    import h5py
    import numpy as np

    h5 = os.path.splitext(xmf)[0] + ".h5"
    with h5py.File(h5, "r") as f:
        wells = [k for k in f if k != "GLOBAL" and isinstance(f[k], h5py.Group)
                 and "LGR1" in f[k]]
        if wells:
            g = f[wells[0]]["LGR1"]
            return [float(np.mean(g["cell_x"][()])), float(np.mean(g["cell_y"][()])), 0.0]
    return [0.0, 0.0, 0.0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("xmf", help="the .xmf beside a prediction file")
    ap.add_argument("png", help="the picture to write")
    ap.add_argument("--field", default="dP", help="the field to colour by (dP or SG)")
    ap.add_argument("--time", type=float, help="report time in days (default: the last)")
    ap.add_argument("--z-scale", type=float, default=20.0,
                    help="vertical exaggeration (reservoirs are thin beside their extent)")
    ap.add_argument("--size", type=int, nargs=2, default=[1200, 800])
    a = ap.parse_args(argv)
    import math
    from ufno.data.output_path import check_output
    if not os.path.isfile(a.xmf):
        sys.exit("xdmf_screenshot: %s: no such file" % a.xmf)
    if not all(16 <= v <= 8192 for v in a.size):
        sys.exit("xdmf_screenshot: --size: each side must be 16 to 8192 pixels")
    if not (math.isfinite(a.z_scale) and 0 < a.z_scale <= 1e4):
        sys.exit("xdmf_screenshot: --z-scale: must be a finite number in (0, 10000]")
    if a.time is not None and not math.isfinite(a.time):
        sys.exit("xdmf_screenshot: --time: must be a finite number of days")
    if a.field not in ("dP", "SG"):
        sys.exit("xdmf_screenshot: --field: must be dP or SG")
    try:
        # The picture replaces neither the description nor the prediction it describes.
        check_output(a.png, [a.xmf, os.path.splitext(a.xmf)[0] + ".h5"], "png")
    except ValueError as e:
        sys.exit("xdmf_screenshot: %s" % e)
    from paraview import simple as pv

    reader = pv.XDMFReader(FileNames=[os.path.abspath(a.xmf)])
    times = list(reader.TimestepValues)
    t = times[-1] if a.time is None else a.time
    view = pv.CreateView("RenderView")
    view.ViewSize = a.size
    view.ViewTime = t
    view.OrientationAxesVisibility = 1
    # Cut through the first refined level's centre (or the radial wedge's middle), so that the
    # refined levels show inside GLOBAL, where they lie.
    clip = pv.Clip(Input=reader)
    clip.ClipType = "Plane"
    clip.ClipType.Origin = cut_origin(a.xmf)
    clip.ClipType.Normal = [0, 1, 0]
    clip.Crinkleclip = 1
    d = pv.Show(clip, view)
    d.Representation = "Surface With Edges"
    centre = "POINTS" if a.field in reader.PointData.keys() else "CELLS"
    pv.ColorBy(d, (centre, a.field))
    d.Scale = [1, 1, a.z_scale]
    lut = pv.GetColorTransferFunction(a.field)
    d.RescaleTransferFunctionToDataRange(False, True)
    d.SetScalarBarVisibility(view, True)
    bar = pv.GetScalarBar(lut, view)
    bar.Title = "%s at %.0f days" % (a.field, t)
    bar.ComponentTitle = ""
    view.CameraPosition = [1, -1.6, 0.9]
    view.CameraFocalPoint = [0, 0, 0]
    view.CameraViewUp = [0, 0, 1]
    pv.Render(view)
    view.ResetCamera()
    pv.Render(view)
    tmp = a.png + ".tmp.%d.png" % os.getpid()  # renamed into place: no half-written picture
    try:
        pv.SaveScreenshot(tmp, view, ImageResolution=a.size)
        os.replace(tmp, a.png)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    print("xdmf_screenshot: %s at %g days -> %s" % (a.xmf, t, a.png))


if __name__ == "__main__":
    main()
