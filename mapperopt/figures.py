"""Matplotlib figures made without pyplot, for the PNG files that commands write."""

from __future__ import annotations

from typing import Any


def figure(**kwargs: Any):
    """A new matplotlib Figure (`kwargs`: Figure's own, e.g. figsize in inches and dpi) on an Agg canvas, so that it
    draws (`fig.canvas.draw()`) and saves (`fig.savefig`) as a pyplot figure does. pyplot is left out: it keeps every
    figure it makes until `plt.close`, so one that an error or a caller never closes stays for the whole process (and
    past 20 it warns "More than 20 figures have been opened"); this one goes with its last reference. matplotlib's
    first import (about a second) runs inside `interrupts.importing`.

    Raises:
        KeyboardInterrupt: a Ctrl-C during that import.
    """
    from mapperopt import interrupts

    with interrupts.importing():
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

    fig = Figure(**kwargs)
    FigureCanvasAgg(fig)  # the figure's canvas from now on
    return fig
