"""Training (needs torch, the ``train`` extra): model, data, trainer, self-play, gating, export.

Nothing under here is imported when playing; the engine runs exported networks with
:mod:`gomoku_ai.net` (onnxruntime or numpy).
"""
