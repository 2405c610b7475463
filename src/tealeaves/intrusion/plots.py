"""Plots of intrusion results in the manner of Chang et al. (2009): box plots of model precision
per model (figure 3) and of topic log odds per model (figure 6), histograms of model precision
over topics and of topic log odds over documents (figure 4). Needs the `plot` extra."""

from __future__ import annotations

import os
from typing import Any

from ..errors import MethodError, shorten, shown
from ..files.atomic import atomic_path
from ..util.drawing import literal, pyplot
from .scoring import IntrusionScores


def check_plot_path(path: str | os.PathLike) -> None:
    """Before any work: matplotlib is installed and can write the format `path`'s extension names
    (.png, .svg, .pdf, ...); else a one-line MethodError."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise MethodError('plots need matplotlib: pip install "tealeaves[plot]"') from None
    ext = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    formats = FigureCanvasBase.get_supported_filetypes()
    if ext not in formats:
        what = f"extension .{shorten(ext)}" if ext else "no extension"
        raise MethodError(f"plot {shown(os.fspath(path), 80)} has {what}; matplotlib writes "
                          f"{', '.join('.' + f for f in sorted(formats))}")


def plot_scores(scores: IntrusionScores, path: str | os.PathLike) -> list[str]:
    """Write the figure to `path` (format from its extension: .png, .svg, .pdf); return the titles
    of the panels drawn (panels without data are left out)."""
    check_plot_path(path)
    with pyplot() as plt:
        return _draw(plt, scores, path)


def _draw(plt: Any, scores: IntrusionScores, path: str | os.PathLike) -> list[str]:
    """`plot_scores`'s drawing: every text through `literal` (model names may hold `$`)."""
    panels = []
    if scores.model_precision:
        panels += [
            ("Model precision by model (fig. 3)", "box", scores.model_precision, "model precision"),
            ("Model precision of topics (fig. 4)", "hist", scores.model_precision, "model precision"),
        ]
    if scores.topic_log_odds:
        panels += [
            ("Topic log odds by model (fig. 6)", "box", scores.topic_log_odds, "topic log odds"),
            ("Topic log odds of documents (fig. 4)", "hist", scores.topic_log_odds, "topic log odds"),
        ]
    if not panels:
        raise MethodError("no scored items to plot")
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, (title, kind, data, label) in zip(axes[0], panels, strict=True):
        models = sorted(data)
        values = [list(data[m].values()) for m in models]
        if kind == "box":
            ax.boxplot(values, tick_labels=[literal(m) for m in models])
            ax.set_ylabel(label)
        else:
            ax.hist(values, bins=10, label=[literal(m) for m in models], stacked=False)
            ax.set_xlabel(label)
            ax.set_ylabel("topics" if label == "model precision" else "documents")
            if len(models) > 1:
                ax.legend(fontsize="small")
        ax.set_title(title, fontsize="medium")
    fig.tight_layout()
    with atomic_path(path, suffix=os.path.splitext(os.fspath(path))[1]) as tmp:
        fig.savefig(tmp)
    plt.close(fig)
    return [p[0] for p in panels]
