"""Jobs users ask about that are not in the model registry: ResNet-50 and GPT-2 small,
their tensors laid out from the papers' architectures and one GPU's published step time.

Why by formula: neither model ships with the project (torchvision and the GPT-2 weights
are not dependencies), and the estimate needs only shapes, which layers PacTrain prunes,
and FLOPs per layer (for when each bucket is ready).

- ResNet-50 v1.5 (He et al., "Deep Residual Learning for Image Recognition", CVPR 2016,
  Table 1; v1.5 strides the 3x3 convolution of a downsampling block, as NVIDIA's
  DeepLearningExamples ``PyTorch/Classification/ConvNets/resnet50v1.5/README.md``
  describes): 25,557,032 parameters at 224 x 224. Step time: that README's training
  performance table, one A100 80GB (DGX A100), mixed precision, 2,470 images/s at its
  default batch of 256 per GPU: 256 / 2470 = 0.1036 s.
- GPT-2 small (Radford et al., "Language Models are Unsupervised Multitask Learners",
  2019: 12 layers, width 768, 50,257 tokens, context 1,024; the LM head tied to the token
  embedding): 124,439,808 parameters. Step time: nanoGPT (github.com/karpathy/nanoGPT)
  trains it on one node of 8 A100 40GB "in about 4 days" (its README) for 600,000
  iterations of 491,520 tokens (``config/train_gpt2.py``: 12 sequences x 1,024 tokens x
  5 accumulation steps x 8 GPUs): 4 x 86,400 / 600,000 = 0.576 s an iteration, one
  gradient exchange each.
"""

from __future__ import annotations

from pactrain.estimate.job import Job, Tensor

#: Published seconds per step of each reference job (module docstring for the sources).
STEP_S: dict[str, float] = {"resnet50": 256 / 2470, "gpt2-small": 4 * 86_400 / 600_000}


def _conv(name: str, cin: int, cout: int, k: int, out_hw: int) -> list[Tensor]:
    macs = out_hw * out_hw * cout * cin * k * k
    return [Tensor(f"{name}.weight", (cout, cin, k, k), True, 2.0 * macs)]


def _bn(name: str, c: int) -> list[Tensor]:
    return [Tensor(f"{name}.weight", (c,), False), Tensor(f"{name}.bias", (c,), False)]


def resnet50(compute_s: float = STEP_S["resnet50"]) -> Job:
    """ResNet-50 v1.5 at 224 x 224, FLOPs per image."""
    tensors = _conv("conv1", 3, 64, 7, 112) + _bn("bn1", 64)
    inplanes, hw = 64, 56
    for index, (width, blocks) in enumerate(((64, 3), (128, 4), (256, 6), (512, 3))):
        for block in range(blocks):
            name = f"layer{index + 1}.{block}"
            stride = 2 if block == 0 and index > 0 else 1
            out_hw = hw // stride
            tensors += _conv(f"{name}.conv1", inplanes, width, 1, hw) + _bn(f"{name}.bn1",
                                                                            width)
            tensors += _conv(f"{name}.conv2", width, width, 3, out_hw) + _bn(f"{name}.bn2",
                                                                             width)
            tensors += _conv(f"{name}.conv3", width, 4 * width, 1, out_hw)
            tensors += _bn(f"{name}.bn3", 4 * width)
            if block == 0:
                tensors += _conv(f"{name}.downsample.0", inplanes, 4 * width, 1, out_hw)
                tensors += _bn(f"{name}.downsample.1", 4 * width)
            inplanes, hw = 4 * width, out_hw
    tensors += [Tensor("fc.weight", (1000, 2048), True, 2.0 * 2048 * 1000),
                Tensor("fc.bias", (1000,), False)]
    return Job("resnet50", tuple(tensors), compute_s)


def gpt2_small(compute_s: float = STEP_S["gpt2-small"], context: int = 1024) -> Job:
    """GPT-2 small, FLOPs per token. The tied LM head's FLOPs go to the final norm,
    the last tensor registered: backward runs the head first, before any block."""
    width, vocab, layers = 768, 50_257, 12
    tensors = [Tensor("wte.weight", (vocab, width), False),
               Tensor("wpe.weight", (context, width), False)]

    def linear(name: str, fan_in: int, fan_out: int, extra_flops: float = 0.0) -> list[Tensor]:
        return [Tensor(f"{name}.weight", (fan_in, fan_out), True,
                       2.0 * fan_in * fan_out + extra_flops),
                Tensor(f"{name}.bias", (fan_out,), False)]

    for layer in range(layers):
        name = f"h.{layer}"
        tensors += _norm(f"{name}.ln_1", width)
        # Q K^T and A V: 2 x context x width MACs a token, before c_proj's input exists
        tensors += linear(f"{name}.attn.c_attn", width, 3 * width, 4.0 * context * width)
        tensors += linear(f"{name}.attn.c_proj", width, width)
        tensors += _norm(f"{name}.ln_2", width)
        tensors += linear(f"{name}.mlp.c_fc", width, 4 * width)
        tensors += linear(f"{name}.mlp.c_proj", 4 * width, width)
    tensors += [Tensor("ln_f.weight", (width,), False, 2.0 * width * vocab),
                Tensor("ln_f.bias", (width,), False)]
    return Job("gpt2-small", tuple(tensors), compute_s)


def _norm(name: str, width: int) -> list[Tensor]:
    return [Tensor(f"{name}.weight", (width,), False), Tensor(f"{name}.bias", (width,), False)]


#: Reference jobs by name, each at its published step time unless told otherwise.
REFERENCE_JOBS = {"resnet50": resnet50, "gpt2-small": gpt2_small}
