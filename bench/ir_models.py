#!/usr/bin/env python3
"""Writes full-size CNNs (mobilenet-v2, efficientnet-b0, mobilenet-v3-large, regnet-y-400mf, resnet50) as Mono IR text, to plan and read their generated CUDA on a machine
without PyTorch (the full-size ONNX models are exported on the GPU machine only):

    bench/ir_models.py mobilenet-v2 > /tmp/mobilenet-v2.mono
    build/tests/difftest --dtype fp16 --plan /tmp/mobilenet-v2.mono     # or --cuda

The layers are torchvision's (BatchNormalization folded into the Conv, as the exporter does;
ReLU6 as Clip, SiLU as Mul(x, Sigmoid(x)), Hardsigmoid as HardSigmoid with alpha 1/6); the weights are elided (`<N elements>`), made up from the `# seed` line by the
parser. Planning depends on shapes, not on weight values, except where a constant's values
change code (none here)."""
import sys


class Writer:
    def __init__(self):
        self.consts, self.nodes, self.n = [], [], 0

    def name(self, prefix):
        self.n += 1
        return f"%{prefix}{self.n}"

    def const(self, shape, values=None):
        k = self.name("k")
        count = 1
        for s in shape:
            count *= s
        text = values if values is not None else f"<{count} elements>"
        self.consts.append(f"  const {k}: f32[{','.join(map(str, shape))}] = {text}")
        return k

    def node(self, op, args, attrs=""):
        v = self.name("v")
        self.nodes.append(f"  {v} = {op}({', '.join(args)})" + (f" {{{attrs}}}" if attrs else ""))
        return v

    def conv(self, x, cin, cout, k, stride=1, group=1, bias=True):
        """A square Conv with 'same' padding (k // 2), its weights and (with `bias`) bias elided."""
        p = k // 2
        attrs = f"pads=[{p}, {p}, {p}, {p}], strides=[{stride}, {stride}]" + (f", group={group}" if group > 1 else "")
        args = [x, self.const([cout, cin // group, k, k])] + ([self.const([cout])] if bias else [])
        return self.node("Conv", args, attrs)

    def text(self, input_shape, output):
        return "\n".join(["# seed: 1", "graph g (opset 17) {", f"  input %x: f32[{','.join(map(str, input_shape))}]"] +
                         self.consts + self.nodes + [f"  output {output}", "}", ""])


def mobilenet_v2():
    w = Writer()
    lo, hi = w.const([], "[0.0]"), w.const([], "[6.0]")

    def conv(x, cin, cout, k, stride, group=1, relu6=True):
        y = w.conv(x, cin, cout, k, stride, group)
        return w.node("Clip", [y, lo, hi]) if relu6 else y

    x, cin = conv("%x", 3, 32, 3, 2), 32
    # (expansion t, channels c, repeats n, first stride s), torchvision's inverted_residual_setting
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                       (6, 320, 1, 1)]:
        for i in range(n):
            stride, hidden, y = s if i == 0 else 1, cin * t, x
            if t != 1:
                y = conv(y, cin, hidden, 1, 1)
            y = conv(y, hidden, hidden, 3, stride, group=hidden)
            y = conv(y, hidden, c, 1, 1, relu6=False)
            if stride == 1 and cin == c:
                y = w.node("Add", [x, y])
            x, cin = y, c
    x = conv(x, cin, 1280, 1, 1)
    x = w.node("Flatten", [w.node("GlobalAveragePool", [x])], "axis=1")
    y = w.node("Gemm", [x, w.const([1000, 1280]), w.const([1000])], "transB=1")
    return w.text([1, 3, 224, 224], y)


def efficientnet_b0():
    w = Writer()

    def silu(x):
        return w.node("Mul", [x, w.node("Sigmoid", [x])])

    conv = w.conv

    x, cin = silu(conv("%x", 3, 32, 3, 2)), 32
    # (expand ratio, kernel, first stride, output channels, layers), torchvision's MBConv settings
    for t, k, s, c, n in [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
                          (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]:
        for i in range(n):
            stride, hidden, y = s if i == 0 else 1, cin * t, x
            if t != 1:
                y = silu(conv(y, cin, hidden, 1))
            y = silu(conv(y, hidden, hidden, k, stride, group=hidden))
            squeeze = max(1, cin // 4)  # squeeze-and-excitation: the block's input channels / 4
            g = w.node("Sigmoid", [conv(silu(conv(w.node("GlobalAveragePool", [y]), hidden, squeeze, 1)), squeeze, hidden, 1)])
            y = conv(w.node("Mul", [y, g]), hidden, c, 1)
            if stride == 1 and cin == c:
                y = w.node("Add", [y, x])
            x, cin = y, c
    x = silu(conv(x, cin, 1280, 1))
    x = w.node("Flatten", [w.node("GlobalAveragePool", [x])], "axis=1")
    y = w.node("Gemm", [x, w.const([1000, 1280]), w.const([1000])], "transB=1")
    return w.text([1, 3, 224, 224], y)


def make_divisible(v, divisor=8):
    """torchvision's _make_divisible: the nearest multiple of 8, not below 90 % of v."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


def mobilenet_v3_large():
    w = Writer()

    def conv(x, cin, cout, k, stride=1, group=1, act=None):
        y = w.conv(x, cin, cout, k, stride, group)
        return w.node(act, [y]) if act else y

    x = conv("%x", 3, 16, 3, 2, act="HardSwish")
    # (input, kernel, expanded, output, squeeze-and-excitation, activation, stride), torchvision's bneck settings
    for cin, k, exp, c, se, act, s in [(16, 3, 16, 16, 0, "Relu", 1), (16, 3, 64, 24, 0, "Relu", 2), (24, 3, 72, 24, 0, "Relu", 1),
                                       (24, 5, 72, 40, 1, "Relu", 2), (40, 5, 120, 40, 1, "Relu", 1),
                                       (40, 5, 120, 40, 1, "Relu", 1), (40, 3, 240, 80, 0, "HardSwish", 2),
                                       (80, 3, 200, 80, 0, "HardSwish", 1), (80, 3, 184, 80, 0, "HardSwish", 1),
                                       (80, 3, 184, 80, 0, "HardSwish", 1), (80, 3, 480, 112, 1, "HardSwish", 1),
                                       (112, 3, 672, 112, 1, "HardSwish", 1), (112, 5, 672, 160, 1, "HardSwish", 2),
                                       (160, 5, 960, 160, 1, "HardSwish", 1), (160, 5, 960, 160, 1, "HardSwish", 1)]:
        y = conv(x, cin, exp, 1, act=act) if exp != cin else x
        y = conv(y, exp, exp, k, s, group=exp, act=act)
        if se:
            squeeze = make_divisible(exp // 4)
            g = conv(conv(w.node("GlobalAveragePool", [y]), exp, squeeze, 1, act="Relu"), squeeze, exp, 1)
            y = w.node("Mul", [w.node("HardSigmoid", [g], "alpha=0.16666667"), y])
        y = conv(y, exp, c, 1)
        x = w.node("Add", [y, x]) if s == 1 and cin == c else y
    x = conv(x, 160, 960, 1, act="HardSwish")
    x = w.node("Flatten", [w.node("GlobalAveragePool", [x])], "axis=1")
    x = w.node("HardSwish", [w.node("Gemm", [x, w.const([1280, 960]), w.const([1280])], "transB=1")])
    y = w.node("Gemm", [x, w.const([1000, 1280]), w.const([1000])], "transB=1")
    return w.text([1, 3, 224, 224], y)


def regnet_y_400mf():
    w = Writer()

    def conv(x, cin, cout, k, stride=1, group=1, relu=True):
        y = w.conv(x, cin, cout, k, stride, group)
        return w.node("Relu", [y]) if relu else y

    x, cin = conv("%x", 3, 32, 3, 2), 32
    # (width, depth) of the four stages (w_0 48, w_a 27.89, w_m 2.09, group width 8, SE ratio 0.25)
    for width, depth in [(48, 1), (104, 3), (208, 6), (440, 6)]:
        for i in range(depth):
            stride = 2 if i == 0 else 1
            y = conv(x, cin, width, 1)
            y = conv(y, width, width, 3, stride, group=width // 8)
            squeeze = int(round(0.25 * cin))  # of the block's input width
            g = conv(conv(w.node("GlobalAveragePool", [y]), width, squeeze, 1), squeeze, width, 1, relu=False)
            y = conv(w.node("Mul", [y, w.node("Sigmoid", [g])]), width, width, 1, relu=False)
            shortcut = conv(x, cin, width, 1, stride, relu=False) if stride != 1 or cin != width else x
            x, cin = w.node("Relu", [w.node("Add", [shortcut, y])]), width
    x = w.node("Flatten", [w.node("GlobalAveragePool", [x])], "axis=1")
    y = w.node("Gemm", [x, w.const([1000, 440]), w.const([1000])], "transB=1")
    return w.text([1, 3, 224, 224], y)


def resnet50():
    w = Writer()

    def conv(x, cin, cout, k, stride=1, relu=True):
        y = w.conv(x, cin, cout, k, stride)
        return w.node("Relu", [y]) if relu else y

    x = conv("%x", 3, 64, 7, 2)
    x, cin = w.node("MaxPool", [x], "kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]"), 64
    # (width, blocks, first stride) of torchvision's four stages; bottlenecks of expansion 4, the
    # stride on the 3x3 convolution (v1.5)
    for width, blocks, first in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for i in range(blocks):
            stride = first if i == 0 else 1
            y = conv(conv(x, cin, width, 1), width, width, 3, stride)
            y = conv(y, width, width * 4, 1, relu=False)
            shortcut = conv(x, cin, width * 4, 1, stride, relu=False) if i == 0 else x
            x, cin = w.node("Relu", [w.node("Add", [y, shortcut])]), width * 4
    x = w.node("Flatten", [w.node("GlobalAveragePool", [x])], "axis=1")
    y = w.node("Gemm", [x, w.const([1000, 2048]), w.const([1000])], "transB=1")
    return w.text([1, 3, 224, 224], y)


MODELS = {"mobilenet-v2": mobilenet_v2, "efficientnet-b0": efficientnet_b0, "mobilenet-v3-large": mobilenet_v3_large,
          "regnet-y-400mf": regnet_y_400mf, "resnet50": resnet50}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in MODELS:
        sys.exit(f"usage: ir_models.py {{{'|'.join(MODELS)}}}")
    sys.stdout.write(MODELS[sys.argv[1]]())
