"""The C core against the Python code inside one process, alternating (run from the repository root:
.venv/bin/python benchmarks/results/s20/same_process_c_vs_py.py): find_vcf on game positions of each rule
and three_moves, with gomoku_ai.native.ENABLED False then True, twice. Session 20's output:
same-process-c-vs-py.txt."""
import sys, time, importlib.util
sys.path.insert(0,'.')
from gomoku_ai import tactics as T, native
from gomoku_ai.rules import Rule
spec = importlib.util.spec_from_file_location("tt", "tests/test_tactics.py"); mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
import random
for rule in (Rule.CARO, Rule.RENJU, Rule.FREESTYLE):
    rng = random.Random(5)
    bs = [b for b in (mod.game_position(rng, rule) for _ in range(60)) if b is not None]
    for en in (False, True, False, True):
        native.ENABLED = en
        t=time.perf_counter()
        for r in range(5):
            for b in bs: T.find_vcf(b)
        print(rule.name, en, round((time.perf_counter()-t)/(5*len(bs))*1e3,3), 'ms')
    b=bs[0]
    for en in (False, True, False, True):
        native.ENABLED = en
        t=time.perf_counter()
        for r in range(2000): T.three_moves(b)
        print(' three_moves', en, round((time.perf_counter()-t)/2000*1e6,1),'us')
