"""Builds the optional C core (gomoku_ai._native, the VCF prover; see gomoku_ai/native.py).

Everything else is declared in setup.cfg. The extension is optional: where no C compiler is found,
pip installs the package without it and the engine uses the pure-Python prover (same answers,
slower); ``python -c "import gomoku_ai.native as n; print(n.status())"`` says which one runs.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("gomoku_ai._native", ["gomoku_ai/_native.c"], optional=True,
                             extra_compile_args=["-O2", "-std=c99"])])
