"""Adapters to the trainers people already run (optional extras: ``pactrain[lightning]``).

Hugging Face Accelerate needs no adapter: ``pactrain.attach`` takes the DDP model and the
(wrapped) optimizer that ``accelerator.prepare`` returns (``pactrain/examples/accelerate_loop.py``).
"""
