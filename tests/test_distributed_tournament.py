"""Tournaments on the worker pools (tools/tournament/ with gomoku_ai.workers): the same short round robin
(a network, two MCTS players, fixed visits and seed, 8x8) played inline, on local worker processes and on Ray
actors gives the same results, records and standings, apart from the ``worker`` and timing fields; a Ray
worker killed mid-game from outside loses only that attempt (every game once, none abandoned, same results);
external engines die with a local worker that is killed. Ray runs as one private instance on this machine
(loopback only), started once for the module and shut down at its end."""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

from gomoku_ai.records import read_psq, read_sgf
from tools.tournament import cli as T
from tools.tournament.results import ResultsFile

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "models" / "gomoku8-4x32"

#: a round robin of three deterministic in-process players, six games
PLAYERS = [f"model:{MODEL}:48", "tactics:120", "pure:120"]
OPTIONS = ["--size", "8", "--games", "2", "--seed", "21", "--draw-after", "40", "--records", "sgf,psq",
           "--move-timeout", "30", "--quiet"]
#: fields that depend on the clock or on which worker played, not on the play
VOLATILE = ("times_ms", "started_at", "duration_s", "comments", "clock_ms", "worker")
RUN_LIMIT_S = 120.0


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    monkeypatch.delenv("PYGOMOKU_PLAYER", raising=False)


@pytest.fixture(scope="module")
def ray_instance() -> Iterator[Any]:
    """A private Ray instance (loopback, no dashboard) shared by the module's Ray runs."""
    from gomoku_ai.workers.ray_backend import init_ray
    t0 = time.monotonic()
    try:
        ray = init_ray(None, num_cpus=4)
    except Exception as e:  # noqa: BLE001
        pytest.fail(f"Ray did not start (it is in the distributed extra: pip install -e '.[distributed]'): {e}")
    assert time.monotonic() - t0 < 60, "Ray took over a minute to start"
    yield ray
    ray.shutdown()


def make_runner(out: Path, *extra: str, players: Optional[List[str]] = None) -> T.Runner:
    p = argparse.ArgumentParser()
    T.configure_parser(p)
    a = p.parse_args([*(players or PLAYERS), *OPTIONS, "--out", str(out), *extra])
    lines: List[str] = []
    r = T.Runner(T.build_config(a), a.out, echo=lines.append)
    r.lines = lines  # type: ignore[attr-defined]
    r.prepare()
    return r


def play(out: Path, *extra: str, players: Optional[List[str]] = None) -> T.Runner:
    r = make_runner(out, *extra, players=players)
    t0 = time.monotonic()
    code = r.run()
    assert code == 0, "\n".join(r.lines)  # type: ignore[attr-defined]
    assert time.monotonic() - t0 < RUN_LIMIT_S
    return r


def raw_records(out: Path) -> List[Dict[str, Any]]:
    return [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines() if x.strip()]


def play_only(out: Path) -> List[Dict[str, Any]]:
    recs, warns = ResultsFile(str(out / "results.jsonl")).load()
    assert not warns
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in sorted(recs, key=lambda r: r["game"])]


def game_files(out: Path) -> Dict[str, Any]:
    """Every SGF/PSQ record by file name: players, result, size, moves (their move-time comments vary)."""
    files: Dict[str, Any] = {}
    for f in sorted((out / "games").iterdir()):
        rec = read_sgf(f) if f.suffix == ".sgf" else read_psq(f)
        files[f.name] = (rec.width, rec.height, [tuple(m) for m in rec.moves],
                         rec.black if f.suffix == ".sgf" else None,
                         rec.white if f.suffix == ".sgf" else None,
                         rec.result.score() if rec.result is not None and f.suffix == ".sgf" else None)
    return files


def standings(out: Path) -> Dict[str, Any]:
    s = json.loads((out / "summary.json").read_text())
    return {"players": s["players"], "crosstable": s["crosstable"], "elo": s["rating"]["elo"],
            "games": s["games_played"]}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The round robin on two local worker processes."""
    out = tmp_path_factory.mktemp("local") / "t"
    r = play(out, "-j", "2")
    assert r.abandoned == [] and not r.warnings
    return out


def test_local_pool_records_workers_and_network_versions(reference: Path) -> None:
    from gomoku_ai.workers import model_version
    recs = raw_records(reference)
    assert sorted(r["game"] for r in recs) == list(range(6))
    assert {r["worker"] for r in recs} <= {f"local-{i}" for i in range(4)}
    version = model_version(MODEL)
    assert re.fullmatch(r"gomoku8-4x32@[0-9a-f]{12}", version)
    for r in recs:
        for side in ("black", "white"):
            assert r[f"{side}_net"] == (version if r[side] == PLAYERS[0] else None), r
    assert {p.name for p in (reference / "logs").iterdir()} >= {"runner.log", "worker-0.log", "worker-1.log"}
    assert json.loads((reference / "tournament.json").read_text())["backend"] == "local"


def test_inline_run_matches_the_pool(reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "inline"
    play(out, "-j", "1")
    assert {r["worker"] for r in raw_records(out)} == {"inline"}
    assert play_only(out) == play_only(reference)
    assert game_files(out) == game_files(reference)
    assert standings(out) == standings(reference)


def test_ray_backend_matches_the_local_backend(ray_instance: Any, reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "ray"
    r = play(out, "-j", "2", "--backend", "ray")
    assert r.abandoned == [] and not r.warnings
    recs = raw_records(out)
    assert len(recs) == 6
    assert all(re.fullmatch(r"ray-\d+@127\.0\.0\.1:\d+", x["worker"]) for x in recs), [x["worker"] for x in recs]
    assert play_only(out) == play_only(reference)          # games, results, moves, network versions
    assert game_files(out) == game_files(reference)        # the same SGF/PSQ files
    assert standings(out) == standings(reference)
    assert sorted(json.loads((out / "tournament.json").read_text())) == \
        sorted(json.loads((reference / "tournament.json").read_text()))
    assert ray_instance.is_initialized()                   # a pool does not shut down a Ray it did not start


class Killer(threading.Thread):
    """Waits until ``runner`` plays on a pool and has recorded ``after`` games, then SIGKILLs one worker
    process (the first, in pid order, for which ``choose(pid)`` is true)."""

    def __init__(self, runner: T.Runner, after: int = 1, choose: Any = None, limit_s: float = 60.0) -> None:
        super().__init__(daemon=True)
        self.runner, self.after, self.choose, self.limit_s = runner, after, choose, limit_s
        self.pool: Any = None
        self.victim: Optional[int] = None
        self.extra: Any = None

    def run(self) -> None:
        end = time.monotonic() + self.limit_s
        while time.monotonic() < end:
            pool = self.runner.pool
            if pool is not None and len(self.runner.done) >= self.after:
                for pid in sorted(pool.worker_pids().values()):
                    extra = self.choose(pid) if self.choose else True
                    if extra:
                        self.pool, self.victim, self.extra = pool, pid, extra
                        os.kill(pid, signal.SIGKILL)
                        return
            time.sleep(0.005)


def test_a_ray_worker_killed_mid_game(ray_instance: Any, reference: Path, tmp_path: Path) -> None:
    out = tmp_path / "ray-killed"
    runner = make_runner(out, "-j", "2", "--backend", "ray")
    killer = Killer(runner)
    killer.start()
    assert runner.run() == 0, "\n".join(runner.lines)  # type: ignore[attr-defined]
    killer.join(timeout=5)
    assert killer.victim is not None, "no worker was killed"
    assert killer.pool.lost_attempts == 1                  # the kill cost one attempt, nothing more
    assert runner.abandoned == []
    assert any("played again" in w for w in runner.warnings), runner.warnings
    recs = raw_records(out)
    assert sorted(r["game"] for r in recs) == list(range(6))   # every game exactly once
    assert play_only(out) == play_only(reference)
    assert game_files(out) == game_files(reference)


def _children(pid: int) -> List[int]:
    """Live child processes of ``pid`` (from /proc)."""
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            kids.append(int(d))
    return kids


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="engines die with their worker on Linux")
def test_engines_die_with_a_killed_local_worker(tmp_path: Path) -> None:
    """An external engine (a fake that answers every move 150 ms late) in a local pool: the worker playing it
    is SIGKILLed mid-tournament; its engine processes die with it, and the run still records every game once."""
    from tests.test_manager import FAKE
    fake = tmp_path / "fake.py"
    fake.write_text(FAKE)
    out = tmp_path / "engines"
    runner = make_runner(out, "-j", "2", "--size", "15", "--games", "4", "--draw-after", "14", "--records", "none",
                         players=[f"cmd={sys.executable} {fake} late", "name=slow", "env.FAKE_DELAY_MS=150",
                                  "random"])
    killer = Killer(runner, choose=lambda pid: _children(pid))
    killer.start()
    assert runner.run() == 0, "\n".join(runner.lines)  # type: ignore[attr-defined]
    killer.join(timeout=5)
    assert killer.victim is not None and killer.extra, "no worker with an engine was killed"
    end = time.monotonic() + 10
    while time.monotonic() < end and any(_alive(p) for p in killer.extra):
        time.sleep(0.05)
    assert not any(_alive(p) for p in killer.extra), f"engines {killer.extra} outlived their worker"
    assert runner.abandoned == []
    recs = raw_records(out)
    assert sorted(r["game"] for r in recs) == [0, 1, 2, 3] and all(r["offender"] is None for r in recs)


def test_backend_arguments_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code = T.main(["random", "random", "name=b", "--address", "auto", "--out", str(tmp_path / "x")])
    assert code == 2 and "--address is for --backend ray" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        T.main(["random", "random", "name=b", "--backend", "slurm", "--out", str(tmp_path / "y")])


def test_sprt_stops_a_ray_run(ray_instance: Any, tmp_path: Path) -> None:
    """The stop callback: once the SPRT decides, no new game starts and the games in flight are dropped."""
    out = tmp_path / "sprt"
    r = play(out, "-j", "2", "--backend", "ray", "--sprt", "--elo0", "0", "--elo1", "200", "--games", "100",
             players=["tactics:60", "random"])
    s = json.loads((out / "summary.json").read_text())
    assert s["sprt"]["decision"] == "H1" and s["stop_reason"].startswith("SPRT: H1")
    recs = raw_records(out)
    assert len(recs) == s["games_played"] < 40 and len({x["game"] for x in recs}) == len(recs)
    assert r.abandoned == []
