#!/usr/bin/env python3
"""Writes full-size CNNs (mobilenet-v2, efficientnet-b0) as Mono IR text, to plan and read their generated CUDA on a machine
without PyTorch (the full-size ONNX models are exported on the GPU machine only):

    bench/ir_models.py mobilenet-v2 > /tmp/mobilenet-v2.mono
    build/tests/difftest --dtype fp16 --plan /tmp/mobilenet-v2.mono     # or --cuda

The layers are torchvision's (BatchNormalization folded into the Conv, as the exporter does;
ReLU6 as Clip, SiLU as Mul(x, Sigmoid(x))); the weights are elided (`<N elements>`), made up from the `# seed` line by the
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

    def text(self, input_shape, output):
        return "\n".join(["# seed: 1", "graph g (opset 17) {", f"  input %x: f32[{','.join(map(str, input_shape))}]"] +
                         self.consts + self.nodes + [f"  output {output}", "}", ""])


def mobilenet_v2():
    w = Writer()
    lo, hi = w.const([], "[0.0]"), w.const([], "[6.0]")

    def conv(x, cin, cout, k, stride, group=1, relu6=True):
        p = k // 2
        attrs = f"pads=[{p}, {p}, {p}, {p}], strides=[{stride}, {stride}]" + (f", group={group}" if group > 1 else "")
        y = w.node("Conv", [x, w.const([cout, cin // group, k, k]), w.const([cout])], attrs)
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

    def conv(x, cin, cout, k, stride=1, group=1, bias=True):
        p = k // 2
        attrs = f"pads=[{p}, {p}, {p}, {p}], strides=[{stride}, {stride}]" + (f", group={group}" if group > 1 else "")
        args = [x, w.const([cout, cin // group, k, k])] + ([w.const([cout])] if bias else [])
        return w.node("Conv", args, attrs)

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


MODELS = {"mobilenet-v2": mobilenet_v2, "efficientnet-b0": efficientnet_b0}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in MODELS:
        sys.exit(f"usage: ir_models.py {{{'|'.join(MODELS)}}}")
    sys.stdout.write(MODELS[sys.argv[1]]())
