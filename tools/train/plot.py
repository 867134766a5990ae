"""``gomoku train plot --run DIR --out FILE.png``: the losses and the strength of a training run.

Reads what the training commands write (any that exist):

* ``DIR/loop.jsonl`` (``gomoku train loop``): per iteration the training losses at its end
  (``train.policy_loss``/``value_loss``, validation ``val_*``), the gate result (Elo with its
  95 % interval, promoted or not) and the self-play totals;
* ``DIR/train/log.jsonl`` (the loop's trainer) or ``DIR/log.jsonl`` (``gomoku train
  supervised``): training losses every ``log_every`` steps and validation losses where measured;
* ``DIR/curve.jsonl`` (``gomoku train curve``): the candidates' score / Elo against a fixed
  opponent, the learning curve.

and draws one PNG (matplotlib, Agg backend: no display needed) with up to four panels: policy loss
(train and validation) and value loss against the training step; strength against the iteration
(curve Elo with 95 % intervals per opponent, gate Elo with intervals); self-play (games and
positions per iteration, draw rate). A panel without data says so instead of being left out, so
the layout is always the same.

matplotlib is in the ``train`` extra (``pip install -e '.[train]'``).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

from gomoku_ai.fileio import read_jsonl


def _num(x: Any) -> Optional[float]:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def collect(run_dir: Union[str, Path]) -> Dict[str, Any]:
    """The series to plot, from the files of ``run_dir`` (see the module docstring)."""
    run = Path(run_dir)
    loop = read_jsonl(run / "loop.jsonl")
    trainlog = read_jsonl(run / "train" / "log.jsonl") or read_jsonl(run / "log.jsonl")
    curve = read_jsonl(run / "curve.jsonl")
    s: Dict[str, Any] = {"train": {"step": [], "policy": [], "value": []},
                         "val": {"step": [], "policy": [], "value": []},
                         "gate": {"iteration": [], "elo": [], "lo": [], "hi": [], "promoted": []},
                         "curve": {}, "selfplay": {"iteration": [], "games": [], "positions": [],
                                                   "draw_rate": []},
                         "sources": []}
    for rec in trainlog:
        step = _num(rec.get("step"))
        if step is not None:
            _add_losses(s, step, rec)
    for rec in loop:
        _add_iteration(s, rec, losses=not trainlog)
    for rec in curve:
        _add_curve_point(s["curve"], rec)
    for c in s["curve"].values():        # several processes may append out of order
        order = sorted(range(len(c["iteration"])), key=lambda k: c["iteration"][k])
        for key in list(c):
            c[key] = [c[key][k] for k in order]
    for name, rows in (("loop.jsonl", loop), ("trainer log", trainlog), ("curve.jsonl", curve)):
        if rows:
            s["sources"].append(f"{name}: {len(rows)} lines")
    return s


def _add_losses(s: Dict[str, Any], step: float, rec: Dict[str, Any]) -> None:
    """The training and validation losses of ``rec`` (those it has) at ``step``."""
    lp, lv = _num(rec.get("policy_loss")), _num(rec.get("value_loss"))
    if lp is not None and lv is not None:
        s["train"]["step"].append(step)
        s["train"]["policy"].append(lp)
        s["train"]["value"].append(lv)
    vp, vv = _num(rec.get("val_policy_loss")), _num(rec.get("val_value_loss"))
    if vp is not None and vv is not None:
        s["val"]["step"].append(step)
        s["val"]["policy"].append(vp)
        s["val"]["value"].append(vv)


def _add_iteration(s: Dict[str, Any], rec: Dict[str, Any], losses: bool) -> None:
    """One ``loop.jsonl`` line: the gate result and the self-play totals (and, with ``losses``, when there is
    no trainer log, the losses at the iteration's end)."""
    it = _num(rec.get("iteration"))
    if it is None:
        return
    tr = rec.get("train") or {}
    step = _num(tr.get("step"))
    if losses and step is not None:
        _add_losses(s, step, tr)
    g = rec.get("gate") or {}
    elo = _num(g.get("elo"))
    ci = g.get("ci95") or [None, None]
    if elo is not None:
        s["gate"]["iteration"].append(it)
        s["gate"]["elo"].append(elo)
        s["gate"]["lo"].append(_num(ci[0]) if _num(ci[0]) is not None else elo)
        s["gate"]["hi"].append(_num(ci[1]) if _num(ci[1]) is not None else elo)
        s["gate"]["promoted"].append(bool(rec.get("promoted")))
    sp = rec.get("selfplay") or {}
    games = _num(sp.get("games"))
    if games:
        s["selfplay"]["iteration"].append(it)
        s["selfplay"]["games"].append(games)
        s["selfplay"]["positions"].append(_num(sp.get("positions")) or 0.0)
        s["selfplay"]["draw_rate"].append((_num(sp.get("draws")) or 0.0) / games)


def _add_curve_point(curves: Dict[str, Dict[str, List[float]]], rec: Dict[str, Any]) -> None:
    """One ``curve.jsonl`` line, in the series of its opponent and visits."""
    it, sc = _num(rec.get("iteration")), _num(rec.get("score"))
    if it is None or sc is None:
        return
    label = f"vs {rec.get('opponent', '?')}"
    if rec.get("opponent_visits") not in (None, rec.get("visits")):
        label += f" ({rec.get('visits')} v {rec.get('opponent_visits')} visits)"
    else:
        label += f" ({rec.get('visits')} visits)"
    c = curves.setdefault(label, {"iteration": [], "score": [], "elo": [], "lo": [], "hi": [], "games": []})
    elo = _num(rec.get("elo")) or 0.0
    ci = rec.get("ci95") or [elo, elo]
    c["iteration"].append(it)
    c["score"].append(sc)
    c["elo"].append(elo)
    lo, hi = _num(ci[0]), _num(ci[1])
    c["lo"].append(elo if lo is None else lo)
    c["hi"].append(elo if hi is None else hi)
    c["games"].append(_num(rec.get("games")) or 0.0)


def _empty(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="grey")
    ax.set_xticks([])
    ax.set_yticks([])


def plot_run(run_dir: Union[str, Path], out: Union[str, Path], title: Optional[str] = None,
             dpi: int = 100) -> Dict[str, Any]:
    """Write the PNG ``out`` for ``run_dir``; returns what was drawn (counts per series).
    Raises FileNotFoundError when the folder has none of the files."""
    import matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    s = collect(run_dir)
    if not s["sources"]:
        raise FileNotFoundError(f"{run_dir}: no loop.jsonl, log.jsonl, train/log.jsonl or "
                                "curve.jsonl to plot")
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    (ax_p, ax_v), (ax_s, ax_sp) = axes
    _plot_losses(ax_p, ax_v, s)
    _plot_strength(ax_s, s)
    _plot_selfplay(ax_sp, s)
    fig.suptitle(title or f"training run {Path(run_dir).resolve().name}")
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name("." + out.name + ".tmp.png")
    fig.savefig(tmp, dpi=dpi, format="png")
    plt.close(fig)
    tmp.replace(out)
    tr, va, g, sp = s["train"], s["val"], s["gate"], s["selfplay"]
    return {"out": str(out), "train_points": len(tr["step"]), "val_points": len(va["step"]),
            "gate_points": len(g["iteration"]),
            "curve_points": {k: len(v["iteration"]) for k, v in s["curve"].items()},
            "selfplay_iterations": len(sp["iteration"]), "sources": s["sources"]}


def _plot_losses(ax_p: Any, ax_v: Any, s: Dict[str, Any]) -> None:
    """Policy and value losses (train and validation) against the training step."""
    tr, va = s["train"], s["val"]
    for ax, key, what in ((ax_p, "policy", "policy loss (cross-entropy)"),
                          (ax_v, "value", "value loss (MSE)")):
        if tr["step"] or va["step"]:
            if tr["step"]:
                ax.plot(tr["step"], tr[key], lw=1.0, label="train")
            if va["step"]:
                ax.plot(va["step"], va[key], "o-", ms=3, lw=1.0, label="validation")
            ax.set_xlabel("training step")
            ax.set_ylabel(what)
            ax.grid(alpha=0.3)
            ax.legend(loc="upper right")
        else:
            _empty(ax, f"no {key} losses logged")
        ax.set_title(what)


def _plot_strength(ax_s: Any, s: Dict[str, Any]) -> None:
    """The learning curve as the candidates' score (%) against each fixed opponent, with the 95 % interval of
    the Elo estimate mapped back to a score; the gate Elo (and promotions) on a second axis."""
    def pct(elo: float) -> float:
        return 100.0 / (1.0 + 10.0 ** (-elo / 400.0))

    handles: List[Any] = []
    for label, c in s["curve"].items():
        y = [100.0 * v for v in c["score"]]
        yerr = [[max(0.0, v - pct(lo)) for v, lo in zip(y, c["lo"])],
                [max(0.0, pct(hi) - v) for v, hi in zip(y, c["hi"])]]
        handles.append(ax_s.errorbar(c["iteration"], y, yerr=yerr, fmt="o-", ms=4, capsize=3,
                                     label=f"score {label}"))
    g = s["gate"]
    if g["iteration"]:
        ax_g = ax_s.twinx() if handles else ax_s
        yerr = [[max(0.0, e - lo) for e, lo in zip(g["elo"], g["lo"])],
                [max(0.0, hi - e) for e, hi in zip(g["elo"], g["hi"])]]
        handles.append(ax_g.errorbar(g["iteration"], g["elo"], yerr=yerr, fmt="s", ms=4,
                                     capsize=3, alpha=0.6, color="tab:purple",
                                     label="gate Elo: candidate vs best"))
        prom = [(x, y) for x, y, p in zip(g["iteration"], g["elo"], g["promoted"]) if p]
        if prom:
            handles.append(ax_g.scatter(*zip(*prom), marker="*", s=80, zorder=3,
                                        color="tab:olive", label="promoted"))
        ax_g.axhline(0.0, color="tab:purple", lw=0.6, ls=":")
        ax_g.set_ylabel("gate Elo (95 % interval)")
    if handles:
        if s["curve"]:
            ax_s.set_ylim(-2, 102)
            ax_s.axhline(50.0, color="grey", lw=0.8)
            ax_s.set_ylabel("score vs fixed opponent, % (95 % interval)")
        ax_s.set_xlabel("iteration")
        ax_s.grid(alpha=0.3)
        ax_s.legend(handles=handles, loc="lower right", fontsize=8)
    else:
        _empty(ax_s, "no gate results or curve.jsonl\n(gomoku train curve --run DIR)")
    ax_s.set_title("strength")


def _plot_selfplay(ax_sp: Any, s: Dict[str, Any]) -> None:
    """Training positions per iteration (bars) and the draw rate (second axis)."""
    sp = s["selfplay"]
    if sp["iteration"]:
        ax_sp.bar(sp["iteration"], sp["positions"], color="tab:blue", alpha=0.6,
                  label="positions")
        ax_sp.set_xlabel("iteration")
        ax_sp.set_ylabel("training positions per iteration")
        ax2 = ax_sp.twinx()
        ax2.plot(sp["iteration"], sp["draw_rate"], "o-", color="tab:red", ms=3,
                 label="draw rate")
        ax2.set_ylim(0, 1)
        ax2.set_ylabel("draw rate")
        h1, l1 = ax_sp.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax_sp.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=8)
        ax_sp.grid(alpha=0.3)
    else:
        _empty(ax_sp, "no self-play (loop.jsonl)")
    ax_sp.set_title("self-play")
