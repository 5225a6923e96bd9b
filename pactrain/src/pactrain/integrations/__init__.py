"""Adapters to the trainers people already run (optional extras: ``pactrain[lightning]``,
``pactrain[hf]``).

Hugging Face Accelerate needs no adapter: ``pactrain.attach`` takes the DDP model and the
(wrapped) optimizer that ``accelerator.prepare`` returns (``pactrain/examples/accelerate_loop.py``).
Hugging Face ``Trainer`` wraps the model inside ``train()``: :mod:`.hf_trainer` attaches at
``on_train_begin`` (``pactrain/examples/hf_trainer.py``).
"""
