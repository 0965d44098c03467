#!/usr/bin/env python3
"""Export models of the common zoos (and regression models of patterns they use), each with one
test case in the ONNX test-data layout, for the GPU check (issue 18).

    export_zoo.py OUTDIR [--only NAME[,NAME...]] [--tiny | --full] [--jobs N] [--census FILE]

Runs where PyTorch, torchvision and transformers are (the GPU machine's image). Weights are
random with a fixed seed: no download. The zoo of issue 18 at full size (default exporter, weights
as external data) and, for each, a tiny model of the same op mix (both exporters) that comes
back as test data. Each model lands in OUTDIR/NAME-EXPORTER/model.onnx with
test_data_set_0/{input_N.pb, output_N.pb}: inputs and PyTorch's float32 outputs on the CPU. A
model whose export fails is reported and skipped. The tiny ones are checked in as test data
(tests/data/models/), so that CI runs them through the CPU reference and NVRTC.
"""
import argparse, os, shutil, sys, warnings
warnings.filterwarnings("ignore")
import torch, torch.nn as nn, onnx
from onnx import numpy_helper


class LayerNorm2d(nn.Module):
    """LayerNorm over the channels of an NCHW tensor, as ConvNeXt writes it: permute to NHWC,
    LayerNormalization over the last axis, permute back."""
    def __init__(self, c, eps=1e-6):
        super().__init__(); self.ln = nn.LayerNorm(c, eps=eps)
    def forward(self, x):
        return self.ln(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    """Depthwise 7x7 (padding 3, groups = channels), NHWC LayerNorm, Linear 4x, GELU, Linear,
    per-channel layer scale, back to NCHW, residual add."""
    def __init__(self, c):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.ln = nn.LayerNorm(c, eps=1e-6)
        self.fc1, self.fc2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
        self.gamma = nn.Parameter(torch.rand(c) + 0.5)
    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(nn.functional.gelu(self.fc1(self.ln(y)))) * self.gamma
        return x + y.permute(0, 3, 1, 2)


class TinyConvNeXt(nn.Module):
    """ConvNeXt's op mix at toy size: a 4x4 stride-4 stem with a channels-last LayerNorm, two
    blocks, a downsampling LayerNorm + 2x2 stride-2 convolution, one block, global average
    pool, LayerNorm and Linear."""
    def __init__(self, c=16, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 4, 4), LayerNorm2d(c))
        self.s1 = nn.Sequential(ConvNeXtBlock(c), ConvNeXtBlock(c))
        self.down = nn.Sequential(LayerNorm2d(c), nn.Conv2d(c, 2 * c, 2, 2))
        self.s2 = ConvNeXtBlock(2 * c)
        self.norm, self.head = nn.LayerNorm(2 * c, eps=1e-6), nn.Linear(2 * c, classes)
    def forward(self, x):
        x = self.s2(self.down(self.s1(self.stem(x))))
        return self.head(self.norm(x.mean(dim=(2, 3))))


def img(size): return lambda: (torch.randn(1, 3, size, size),)
def ids(seq, vocab): return lambda: (torch.randint(0, vocab, (1, seq)),)
def mel(bins, frames): return lambda: (torch.randn(1, bins, frames),)


class Hidden(nn.Module):
    """A Hugging Face model called with its one input, returning last_hidden_state."""
    def __init__(self, m, arg="input_ids"):
        super().__init__(); self.m, self.arg = m, arg
    def forward(self, x):
        return self.m(**{self.arg: x}).last_hidden_state


def tv(name, **kw):
    import torchvision
    return lambda: getattr(torchvision.models, name)(weights=None, **kw)


def tiny_efficientnet():
    from torchvision.models import efficientnet as e
    setting, last = e._efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.25)
    return e.EfficientNet(setting, 0.2, last_channel=last, num_classes=10)


def tiny_regnet():
    from torchvision.models import regnet as r
    return r.RegNet(r.BlockParams.from_init_params(depth=4, w_0=8, w_a=8.0, w_m=2.0, group_width=8, se_ratio=0.25),
                    num_classes=10)


def tiny_densenet():
    from torchvision.models import DenseNet
    return DenseNet(growth_rate=8, block_config=(2, 2), num_init_features=16, num_classes=10)


def tiny_swin():
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2], window_size=[4, 4],
                           num_classes=10)


def tiny_vit():
    from torchvision.models import VisionTransformer
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
                             num_classes=10)


def hf(model, config, arg="input_ids", **kw):
    def make():
        import transformers
        return Hidden(getattr(transformers, model)(getattr(transformers, config)(**kw)), arg)
    return make


def whisper_encoder(**kw):
    def make():
        import transformers
        return Hidden(transformers.WhisperModel(transformers.WhisperConfig(**kw)).encoder, "input_features")
    return make


def randomize_norms(model):
    """Normalisation layers start as the identity (gamma 1, beta 0), which hides bugs in how
    gamma and beta are read: give them random values (the seed is fixed). Weights initialised
    to zero (torchvision's ViT head) would make the outputs all zero and test nothing: give
    them random values too."""
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                p.normal_(0.0, 0.02)
    for m in model.modules():
        if isinstance(m, (nn.LayerNorm, nn.GroupNorm, nn.BatchNorm2d, nn.InstanceNorm2d)) and m.weight is not None:
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5); m.running_var.uniform_(0.5, 1.5)
    return model


SMALL_LM = dict(vocab_size=1000, max_position_embeddings=64)
# name: (constructor, inputs, full size?) -- the full-size ones are exported with the default
# exporter only and stay on the GPU machine; the tiny ones (both exporters) come back as test data.
MODELS = {
    "tiny-convnext": (lambda: TinyConvNeXt(), img(32), False),
    # torchvision
    "resnet18": (tv("resnet18"), img(224), True),
    "mobilenet-v2": (tv("mobilenet_v2"), img(224), True),
    "mobilenet-v3-large": (tv("mobilenet_v3_large"), img(224), True),
    "tiny-mobilenet-v3": (tv("mobilenet_v3_large", width_mult=0.25, num_classes=10), img(64), False),
    "efficientnet-b0": (tv("efficientnet_b0"), img(224), True),
    "tiny-efficientnet": (tiny_efficientnet, img(32), False),
    "regnet-y-400mf": (tv("regnet_y_400mf"), img(224), True),
    "tiny-regnet": (tiny_regnet, img(32), False),
    "densenet121": (tv("densenet121"), img(224), True),
    "tiny-densenet": (tiny_densenet, img(32), False),
    "swin-t": (tv("swin_t"), img(224), True),
    "tiny-swin": (tiny_swin, img(32), False),
    "vit-b-16": (tv("vit_b_16"), img(224), True),
    "tiny-tv-vit": (tiny_vit, img(32), False),
    # Hugging Face (random weights from the configs)
    "bert": (hf("BertModel", "BertConfig"), ids(128, 30000), True),
    "albert": (hf("AlbertModel", "AlbertConfig"), ids(128, 30000), True),
    "tiny-albert": (hf("AlbertModel", "AlbertConfig", embedding_size=32, hidden_size=64, num_hidden_layers=2,
                       num_attention_heads=4, intermediate_size=128, **SMALL_LM), ids(16, 1000), False),
    "electra": (hf("ElectraModel", "ElectraConfig"), ids(128, 30000), True),
    "tiny-electra": (hf("ElectraModel", "ElectraConfig", embedding_size=32, hidden_size=64, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=128, **SMALL_LM), ids(16, 1000), False),
    "roberta": (hf("RobertaModel", "RobertaConfig", vocab_size=50265, max_position_embeddings=514, pad_token_id=1),
                ids(128, 50000), True),
    "tiny-roberta": (hf("RobertaModel", "RobertaConfig", hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=128, vocab_size=1000, max_position_embeddings=66, pad_token_id=1),
                     ids(16, 1000), False),
    "t5-encoder": (hf("T5EncoderModel", "T5Config", d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8,
                      vocab_size=32128), ids(128, 32000), True),
    "tiny-t5-encoder": (hf("T5EncoderModel", "T5Config", d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
                           vocab_size=1000), ids(16, 1000), False),
    "gpt2": (hf("GPT2Model", "GPT2Config", use_cache=False), ids(128, 50000), True),
    "llama": (hf("LlamaModel", "LlamaConfig", hidden_size=512, intermediate_size=1376, num_hidden_layers=4,
                 num_attention_heads=8, num_key_value_heads=4, vocab_size=32000, max_position_embeddings=512,
                 use_cache=False), ids(128, 32000), True),
    "tiny-llama": (hf("LlamaModel", "LlamaConfig", hidden_size=64, intermediate_size=176, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, use_cache=False, **SMALL_LM),
                   ids(16, 1000), False),
    "whisper-encoder": (whisper_encoder(d_model=384, encoder_layers=4, encoder_attention_heads=6,
                                        encoder_ffn_dim=1536, num_mel_bins=80, max_source_positions=1500),
                        mel(80, 3000), True),
    # the token ids must lie in the small vocabulary (the defaults are GPT-2's, ~50k)
    "tiny-whisper-encoder": (whisper_encoder(d_model=64, encoder_layers=2, encoder_attention_heads=4,
                                             encoder_ffn_dim=128, num_mel_bins=16, max_source_positions=32,
                                             vocab_size=1000, decoder_layers=1, pad_token_id=0, bos_token_id=1,
                                             eos_token_id=2, decoder_start_token_id=1), mel(16, 64), False),
}


def export(name, make, inputs, full, outdir, exporter):
    torch.manual_seed(0)
    model = randomize_norms(make()).eval()
    xs = inputs()
    d = os.path.join(outdir, f"{name}-{exporter}")
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    if exporter == "opset20":
        torch.onnx.export(model, xs, path, dynamo=True, external_data=full)
    else:
        torch.onnx.export(model, xs, path, dynamo=False, opset_version=17)
    with torch.no_grad():
        ys = model(*xs)
    ys = ys if isinstance(ys, (tuple, list)) else (ys,)
    graph = onnx.load(path, load_external_data=False).graph
    for kind, tensors, values in (("input", xs, graph.input), ("output", ys, graph.output)):
        for i, (t, v) in enumerate(zip(tensors, values)):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(t.detach().numpy(), v.name).SerializeToString())
    print(f"{name}-{exporter}: {len(graph.node)} nodes, {os.path.getsize(path)} bytes", flush=True)


def export_one(task):
    """Exports one model; a full-size one the default exporter fails on is exported with the
    older (TorchScript) one instead, as a user would. Returns an error line, or None."""
    name, exporter, outdir = task
    torch.set_num_threads(2)
    try:
        export(name, *MODELS[name], outdir, exporter)
        return None
    except Exception as e:
        shutil.rmtree(os.path.join(outdir, f"{name}-{exporter}"), ignore_errors=True)
        error = f"{name}-{exporter}: export failed: {str(e)[:300]}"
    if exporter != "opset20" or not MODELS[name][2]:
        return error
    print(error.splitlines()[0] + " -- retrying with the TorchScript exporter (opset 17)", flush=True)
    return export_one((name, "opset17", outdir))


def census(outdir):
    """The ops of every exported model, with counts: {model: {op: count}}."""
    out = {}
    for d in sorted(os.listdir(outdir)) if os.path.isdir(outdir) else []:
        path = os.path.join(outdir, d, "model.onnx")
        if not os.path.exists(path):
            continue
        ops = {}
        for n in onnx.load(path, load_external_data=False).graph.node:
            key = n.op_type if not n.domain or n.domain == "ai.onnx" else f"{n.domain}.{n.op_type}"
            ops[key] = ops.get(key, 0) + 1
        out[d] = dict(sorted(ops.items()))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir"); ap.add_argument("--only", default="")
    ap.add_argument("--tiny", action="store_true", help="only the tiny models (both exporters)")
    ap.add_argument("--full", action="store_true", help="only the full-size models (default exporter)")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--census", default="", help="write the ops of every exported model to this JSON file")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else [n for n, m in MODELS.items()
                                              if not (a.tiny and m[2]) and not (a.full and not m[2])]
    tasks = [(n, e, a.outdir) for n in names for e in (("opset20",) if MODELS[n][2] else ("opset20", "opset17"))]
    import concurrent.futures, multiprocessing
    with concurrent.futures.ProcessPoolExecutor(a.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        errors = [e for e in pool.map(export_one, tasks) if e]
    for e in errors:
        print(e, file=sys.stderr, flush=True)
    if a.census:
        import json
        json.dump(census(a.outdir), open(a.census, "w"), indent=1)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
