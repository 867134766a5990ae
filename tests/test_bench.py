"""``gomoku bench`` reports the shipped network's search speed (simulations/s, evaluations/s) by
default, and a deterministic search signature for each evaluator."""
from __future__ import annotations

import json

from tools.cli import main as cli_main


def test_bench_search_includes_the_shipped_network(capsys) -> None:
    assert cli_main(["bench", "--only", "search", "--visits", "30"]) == 0
    out = json.loads(capsys.readouterr().out)
    by = {r["evaluator"]: r for r in out["search"]}
    net = by["network"]
    assert net["network"] == "freestyle15-5x48-ft"
    assert net["simulations"] >= 30 * net["positions"]
    assert net["simulations_per_s"] > 0 and net["bare_network_evals_per_s"] > 0
    assert net["evaluations_per_s_inside_search"] > 0
    # the signature depends only on the search, not on the clock: a second run gives the same
    assert cli_main(["bench", "--only", "search", "--visits", "30"]) == 0
    again = {r["evaluator"]: r for r in json.loads(capsys.readouterr().out)["search"]}
    assert all(again[k]["signature"] == by[k]["signature"] for k in by)


def test_bench_model_none_skips_the_network(capsys) -> None:
    assert cli_main(["bench", "--only", "search", "--visits", "10", "--model", "none"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "network" not in {r["evaluator"] for r in out["search"]}


def test_bench_honours_search_overrides(capsys, monkeypatch) -> None:
    """``PYGOMOKU_MCTS`` changes the searches (the leaf VCF off gives other signatures) and
    is named in the JSON; a bad field is refused before any search."""
    import pytest
    from gomoku_ai.checks import ConfigError
    args = ["bench", "--only", "search", "--visits", "300", "--model", "none"]
    assert cli_main(args) == 0
    on = {r["evaluator"]: r for r in json.loads(capsys.readouterr().out)["search"]}
    monkeypatch.setenv("PYGOMOKU_MCTS", "leaf_vcf_nodes=0")
    assert cli_main(args) == 0
    off = {r["evaluator"]: r for r in json.loads(capsys.readouterr().out)["search"]}
    assert all(r["mcts_overrides"] == "leaf_vcf_nodes=0" for r in off.values())
    assert all("mcts_overrides" not in r for r in on.values())
    assert any(off[k]["signature"] != on[k]["signature"] for k in on)
    monkeypatch.setenv("PYGOMOKU_MCTS", "no_such_field=1")
    with pytest.raises(ConfigError):
        cli_main(args)


def test_bench_names_the_cpu_features_that_choose_the_int8_kernels(tmp_path, capsys) -> None:
    """The network signature can differ between CPUs (onnxruntime's int8 kernels sum in 16 bits,
    saturating, without VNNI): the JSON says which CPU and features produced it."""
    from tools.bench import cpu_description
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu sse2 avx2 fma\n\n"
                    "processor\t: 1\nmodel name\t: Other CPU\nflags\t\t: avx2 avx512_vnni\n")
    assert cpu_description(str(info)) == {"model": "Test CPU", "int8_features": ["avx2"]}
    assert cpu_description(str(tmp_path / "missing"))["int8_features"] is None
    assert cli_main(["bench", "--only", "search", "--visits", "10", "--model", "none"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["cpu"]) == {"model", "int8_features"} and out["onnxruntime"]
