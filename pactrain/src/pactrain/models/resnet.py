"""ResNet-18 (He et al. 2016) at 32x32 input, on the real digits upsampled to 32x32.

Why this layout: it is the ImageNet ResNet-18 (7x7 stride-2 stem, max-pool, four stages of
two basic blocks, 1000-way head), so the gradient has the 11,689,512 entries (46.76 MB in
fp32) that make it the usual communication-heavy benchmark. At 32x32 input its compute is
small next to that gradient, which is the regime where the network, not the CPU, limits
data-parallel training. The task is scikit-learn's digits as 32x32 colour images (the
shared digits task), so a race to a test accuracy means something; the 1000-way head is
kept (labels use the first 10 classes) so the gradient stays the textbook size.
"""

from __future__ import annotations

import torch
from torch import nn

from pactrain.data.digits import random_shifts, to_rgb32
from pactrain.models import register_model
from pactrain.models.digits_task import digits_spec


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm and an identity (or 1x1 projection) shortcut."""

    def __init__(self, in_ch: int, out_ch: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or in_ch != out_ch:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 1, stride, bias=False), nn.BatchNorm2d(out_ch)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + self.shortcut(x))


class ResNet18(nn.Module):
    """ImageNet ResNet-18; ``num_classes=1000`` gives the textbook 11,689,512 parameters."""

    def __init__(self, num_classes: int = 1000, in_channels: int = 3) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, 64, 7, 2, 3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, 1),
        )
        layers: list[nn.Module] = []
        in_ch = 64
        for out_ch, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [BasicBlock(in_ch, out_ch, stride), BasicBlock(out_ch, out_ch, 1)]
            in_ch = out_ch
        self.stages = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


NUM_CLASSES = 1000

#: Why these defaults: with SGD momentum 0.9, dense, 4 workers, batch 32 per worker and lr
#: 0.02 passed 95% test accuracy by step 30-50 in a sweep over lr {0.02, 0.05, 0.1} x batch
#: {16, 32}; lr 0.05 and 0.1 were slower and noisier, batch 16 needed more steps (and steps
#: are what a slow link charges for). 1-pixel shifts kept the accuracy above 95% once there.
SPEC = register_model(digits_spec(
    "resnet18", lambda: ResNet18(NUM_CLASSES), view=to_rgb32, augment=random_shifts(1),
    default_lr=0.02, default_batch_size=32,
    description="ImageNet ResNet-18 (11.69 M parameters) on the real digits at 32x32",
    extra={"parameters": 11_689_512},
))
