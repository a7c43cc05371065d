#!/usr/bin/env python3
"""A corpus of real model architectures exported to ONNX, with reference outputs.

Builds models from the model classes of torchvision and Hugging Face
transformers (ResNet, MobileNet, EfficientNet, RegNet, DenseNet, ConvNeXt,
ViT, SSDLite; BERT, DistilBERT, RoBERTa, GPT-2, Llama, Mistral, Qwen2,
Mixtral, T5, ViT, Whisper, CLIP) at reduced width and depth, with seeded
random weights (nothing is downloaded: every model is made from a config
object), exports each with PyTorch's exporters and writes, per model:

  OUT/<name>/model.onnx                  weights inside, at most 2 MB
  OUT/<name>/test_data_set_0/input_N.pb  seeded inputs (TensorProtos named
  OUT/<name>/test_data_set_0/output_N.pb after the graph's inputs/outputs)
  OUT/<name>/test_data_set_1/...         for models with symbolic dims only:
                                         the same model at another shape
and OUT/manifest.json, which describes every model (exporter, opset, dynamic
axes, shapes, node count, size, the difference between onnxruntime and
PyTorch) and lists the variants that could not be made, with the reason.

Variants per architecture:
  <arch>              TorchScript exporter (dynamo=False), opset 17, static
  <arch>_dyn          TorchScript exporter, its newest opset, symbolic batch
                      (and sequence, for transformers) dims
  <arch>_dynamo       dynamo exporter (dynamo=True), its default opset, static
  <arch>_dynamo_dyn   dynamo exporter, symbolic dims (transformers only)
  <arch>_op23         dynamo exporter at opset 23 (ONNX's Attention,
  <arch>_op23_dyn     RMSNormalization, RotaryEmbedding), static and
                      symbolic, for the architectures that ask for it
and int8 QDQ models made from the static exports by onnxruntime's
post-training quantizer (resnet50_int8, bert_int8).

Reference outputs come from onnxruntime (CPUExecutionProvider, default
session options), never from Loom. PyTorch's own outputs are only used to
check the export: their largest difference from onnxruntime's is recorded,
and a difference above 1e-3 is reported as a warning. The one exception:
an opset-23 export that onnxruntime refuses to run (its RotaryEmbedding
kernel wants cos/sin caches with the input's batch, where the exporter
writes a batch of 1 that ONNX broadcasts) takes PyTorch's outputs as its
reference, and its manifest entry says so ("reference").

Run with an interpreter that has the exporters and runtime from PyPI:
    python3 -m venv /opt/corpus-venv
    /opt/corpus-venv/bin/pip install torch torchvision transformers \\
        onnx onnxruntime onnxscript
    /opt/corpus-venv/bin/python scripts/make_model_corpus.py test/models [NAME ...]
NAMEs (an architecture such as "llama", or one variant such as "llama_dyn")
regenerate only those models and update their entries in the manifest.
"""

import collections
import contextlib
import functools
import io
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
import traceback
import warnings
import zlib

import numpy as np
import onnx
import onnxruntime as ort
import onnxscript
import torch
import torchvision
import transformers
from onnx import numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                      QuantType, quantize_static)
from onnxruntime.quantization.shape_inference import quant_pre_process
from torch import nn
from torch.onnx import _constants as torch_onnx_constants

MAX_MODEL_BYTES = 2 * 1024 * 1024
WARN_DIFF = 1e-3
STATIC_OPSET = 17
# The newest opset of the TorchScript exporter and the dynamo exporter's
# default, as torch states them (20 and 20 in torch 2.15; the TorchScript
# exporter rejects anything newer). The _op23 variants ask the dynamo
# exporter for opset 23, where it writes ONNX's own transformer ops.
TORCHSCRIPT_MAX_OPSET = getattr(torch_onnx_constants, "ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET", 20)
DYNAMO_DEFAULT_OPSET = getattr(torch_onnx_constants, "ONNX_DEFAULT_OPSET", 18)
TRANSFORMER_OPS_OPSET = 23

# ---------------------------------------------------------------------------
# Seeds and inputs


def stable_seed(name):
    """A seed from the architecture's name, so that a model's weights and
    inputs do not depend on which other models are generated in the run."""
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def perturb_normalization(model, generator):
    """Fresh normalization layers scale by 1 and shift by 0, which would hide
    a compiler that drops or misplaces their scale and shift. Give them
    seeded values around those defaults."""
    with torch.no_grad():
        for module in model.modules():
            if "norm" not in type(module).__name__.lower():
                continue
            weight = getattr(module, "weight", None)
            bias = getattr(module, "bias", None)
            if isinstance(weight, nn.Parameter):
                weight.uniform_(0.5, 1.5, generator=generator)
            if isinstance(bias, nn.Parameter):
                bias.normal_(0.0, 0.1, generator=generator)


CALIBRATION_BATCHES = 4


def calibrate_batch_norm(model, make_batch):
    """Fresh BatchNorm layers have running mean 0 and variance 1, unlike the
    activations of a randomly initialized network: in eval mode the
    activations then grow from block to block (ResNet-50's logits reach
    1e3). A trained network's statistics match its activations, so measure
    them: run a few seeded batches with the BatchNorm layers (only) in
    training mode, averaging over all batches (momentum None)."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    model.eval()
    for norm in norms:
        norm.reset_running_stats()
        norm.saved_momentum, norm.momentum = norm.momentum, None
        norm.train()
    with torch.no_grad():
        for _ in range(CALIBRATION_BATCHES):
            model(*make_batch().values())
    for norm in norms:
        norm.momentum = norm.saved_momentum
        del norm.saved_momentum
    model.eval()


def token_ids(rng, batch, seq, vocab):
    return torch.from_numpy(rng.integers(0, vocab, size=(batch, seq), dtype=np.int64))


def all_ones_mask(batch, seq):
    return torch.ones(batch, seq, dtype=torch.int64)


def normal(rng, *shape):
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


# ---------------------------------------------------------------------------
# torchvision models


def narrow_resnet50(width_divisor, num_classes):
    """torchvision's ResNet with Bottleneck blocks [3, 4, 6, 3], every width
    divided by width_divisor. ResNet hardcodes the widths 64..512 in its
    constructor, so _make_layer scales the planes it is asked for, and the
    stem and the classifier (made before and after the stages) are replaced."""
    from torchvision.models.resnet import Bottleneck, ResNet

    class NarrowResNet(ResNet):
        def _make_layer(self, block, planes, blocks, stride=1, dilate=False):
            if planes == 64:  # the first stage: its input is the narrow stem
                self.inplanes = 64 // width_divisor
            return super()._make_layer(block, planes // width_divisor, blocks,
                                       stride, dilate)

    model = NarrowResNet(Bottleneck, [3, 4, 6, 3], num_classes=num_classes)
    stem = 64 // width_divisor
    model.conv1 = nn.Conv2d(3, stem, kernel_size=7, stride=2, padding=3, bias=False)
    nn.init.kaiming_normal_(model.conv1.weight, mode="fan_out", nonlinearity="relu")
    model.bn1 = nn.BatchNorm2d(stem)
    model.fc = nn.Linear(512 // width_divisor * Bottleneck.expansion, num_classes)
    return model


def mobilenet_v2():
    return torchvision.models.MobileNetV2(num_classes=10, width_mult=0.25)


def mobilenet_v3_large():
    from torchvision.models.mobilenetv3 import MobileNetV3, _mobilenet_v3_conf
    setting, last_channel = _mobilenet_v3_conf("mobilenet_v3_large", width_mult=0.25)
    return MobileNetV3(setting, last_channel, num_classes=10)


def efficientnet_b0():
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
    setting, last_channel = _efficientnet_conf("efficientnet_b0", width_mult=0.25,
                                               depth_mult=1.0)
    return EfficientNet(setting, dropout=0.2, last_channel=last_channel, num_classes=10)


def regnet_y_400mf():
    from torchvision.models.regnet import BlockParams, RegNet
    # regnet_y_400mf is depth=16, w_0=48, w_a=27.89, w_m=2.09, group_width=8,
    # se_ratio=0.25 (stage widths 48/104/208/440, depths 1/3/6/6). The same
    # depth, w_m, group width and SE ratio with w_0 and w_a / 3 give widths
    # 16/32/72/144; w_a 8.5 (not 9.3) moves one block from the last stage to
    # the third (depths 1/3/7/5), which keeps the dynamo export under 2 MB.
    params = BlockParams.from_init_params(depth=16, w_0=16, w_a=8.5, w_m=2.09,
                                          group_width=8, se_ratio=0.25)
    return RegNet(params, num_classes=10, stem_width=16,
                  norm_layer=functools.partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))


def densenet121():
    # bn_size 3 (of 4): with 4 the dynamo export is just over 2 MB.
    return torchvision.models.DenseNet(growth_rate=8, block_config=(6, 12, 24, 16),
                                       num_init_features=16, bn_size=3, num_classes=10)


def convnext_tiny():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    widths = [96 // 8, 192 // 8, 384 // 8, 768 // 8]
    depths = [3, 3, 9, 3]
    setting = [CNBlockConfig(widths[i], widths[i + 1] if i + 1 < 4 else None, depths[i])
               for i in range(4)]
    return ConvNeXt(setting, stochastic_depth_prob=0.0, num_classes=10)


def vit_b_16():
    model = torchvision.models.VisionTransformer(
        image_size=64, patch_size=16, num_layers=2, num_heads=4, hidden_dim=64,
        mlp_dim=128, num_classes=10)
    # torchvision zeroes the classifier's weight (fine for training from
    # scratch), which would make every logit equal to its bias whatever the
    # image: a test that cannot fail. Give it random weights.
    nn.init.normal_(model.heads.head.weight, std=64 ** -0.5)
    nn.init.normal_(model.heads.head.bias, std=0.1)
    return model


class FirstImageDetections(nn.Module):
    """torchvision's detectors take a list of images and return a list of
    dicts; ONNX wants tensors, so this feeds the batch and returns the boxes,
    scores and labels found in the first image."""

    def __init__(self, detector):
        super().__init__()
        self.detector = detector

    def forward(self, images):
        detections = self.detector(list(images.unbind(0)))[0]
        return detections["boxes"], detections["scores"], detections["labels"]


def ssdlite320_mobilenet_v3_large():
    """torchvision's ssdlite320_mobilenet_v3_large, put together from the same
    pieces as the builder (which fixes the width and the 320x320 size) with
    the MobileNetV3 backbone and the extra blocks at width 0.25, a 128x128
    input, 3 classes and fewer candidates and detections per image."""
    from torchvision.models.detection import _utils as det_utils
    from torchvision.models.detection.anchor_utils import DefaultBoxGenerator
    from torchvision.models.detection.ssd import SSD
    from torchvision.models.detection.ssdlite import (
        SSDLiteFeatureExtractorMobileNet, SSDLiteHead, _normal_init)
    from torchvision.models.mobilenetv3 import mobilenet_v3_large

    width_mult = 0.25
    size = (128, 128)
    num_classes = 3
    norm_layer = functools.partial(nn.BatchNorm2d, eps=0.001, momentum=0.03)
    backbone = mobilenet_v3_large(weights=None, norm_layer=norm_layer,
                                  reduced_tail=True, width_mult=width_mult)
    _normal_init(backbone)
    features = backbone.features
    # The C4 stage starts at the last strided block (as _mobilenet_extractor).
    stage_indices = ([0] + [i for i, b in enumerate(features) if getattr(b, "_is_cn", False)]
                     + [len(features) - 1])
    extractor = SSDLiteFeatureExtractorMobileNet(features, stage_indices[-2], norm_layer,
                                                 width_mult=width_mult)
    anchors = DefaultBoxGenerator([[2, 3] for _ in range(6)], min_ratio=0.2, max_ratio=0.95)
    out_channels = det_utils.retrieve_out_channels(extractor, size)
    model = SSD(extractor, anchors, size, num_classes,
                head=SSDLiteHead(out_channels, anchors.num_anchors_per_location(),
                                 num_classes, norm_layer),
                score_thresh=0.2, nms_thresh=0.55, detections_per_img=20,
                topk_candidates=50, image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])
    # torchvision initializes the heads with std 0.03, which makes every class
    # score about 1/3 and every box about an anchor: which candidates survive
    # top-k, the threshold and NMS would then hinge on rounding. Spread the
    # class logits and box offsets so that the selection is well defined.
    for block in model.head.classification_head.module_list:
        nn.init.normal_(block[-1].weight, std=1.0 / block[-1].in_channels ** 0.5 * 4)
    for block in model.head.regression_head.module_list:
        nn.init.normal_(block[-1].weight, std=1.0 / block[-1].in_channels ** 0.5)
    return FirstImageDetections(model)


# ---------------------------------------------------------------------------
# Hugging Face transformers models (tiny configs, eager attention: the
# TorchScript exporter does not trace the sdpa path cleanly)

# 256 tokens: the embedding and the LM head are most of these models' bytes,
# and the corpus should stay small.
VOCAB = 256
TEXT = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=128, vocab_size=VOCAB, max_position_embeddings=128)


class TextModel(nn.Module):
    """input_ids, attention_mask -> one output of the Hugging Face model as a
    plain tensor (the exporters want tensors, not ModelOutput objects)."""

    def __init__(self, model, output_field):
        super().__init__()
        self.model = model
        self.output_field = output_field

    def forward(self, input_ids, attention_mask):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
        return getattr(out, self.output_field)


class Seq2SeqModel(nn.Module):
    """Encoder-decoder: input_ids, attention_mask, decoder_input_ids -> logits."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         decoder_input_ids=decoder_input_ids, use_cache=False,
                         return_dict=True)
        return out.logits


class PixelModel(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, pixel_values):
        return self.model(pixel_values=pixel_values, return_dict=True).last_hidden_state


class AudioEncoder(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_features):
        return self.encoder(input_features=input_features, return_dict=True).last_hidden_state


class ClipModel(nn.Module):
    """Text and images -> the image-text similarity logits and both embeddings."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, pixel_values):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         pixel_values=pixel_values, return_dict=True)
        return out.logits_per_image, out.text_embeds, out.image_embeds


def bert():
    cfg = transformers.BertConfig(**TEXT, attn_implementation="eager")
    return TextModel(transformers.BertModel(cfg, add_pooling_layer=False), "last_hidden_state")


def distilbert():
    cfg = transformers.DistilBertConfig(vocab_size=VOCAB, dim=64, n_layers=2, n_heads=4,
                                        hidden_dim=128, max_position_embeddings=128,
                                        attn_implementation="eager")
    return TextModel(transformers.DistilBertModel(cfg), "last_hidden_state")


def roberta():
    # RoBERTa's positions start after padding_idx (1), so 2 more positions
    # than the longest sequence.
    cfg = transformers.RobertaConfig(**dict(TEXT, max_position_embeddings=130),
                                     pad_token_id=1, attn_implementation="eager")
    return TextModel(transformers.RobertaModel(cfg, add_pooling_layer=False),
                     "last_hidden_state")


def gpt2():
    # GPT-2's special tokens (50256) are past this vocabulary; use 0.
    cfg = transformers.GPT2Config(vocab_size=VOCAB, n_positions=128, n_embd=64, n_layer=2,
                                  n_head=4, n_inner=128, bos_token_id=0, eos_token_id=0,
                                  use_cache=False,
                                  attn_implementation="eager")
    return TextModel(transformers.GPT2LMHeadModel(cfg), "logits")


def decoder_config(config_class, **extra):
    return config_class(**TEXT, num_key_value_heads=2, use_cache=False,
                        attn_implementation="eager", **extra)


def llama():
    return TextModel(transformers.LlamaForCausalLM(decoder_config(transformers.LlamaConfig)),
                     "logits")


def mistral():
    # A window shorter than the test sequences (16 and 24 tokens), so that
    # the sliding-window mask differs from the causal one.
    cfg = decoder_config(transformers.MistralConfig, sliding_window=8)
    return TextModel(transformers.MistralForCausalLM(cfg), "logits")


def qwen2():
    return TextModel(transformers.Qwen2ForCausalLM(decoder_config(transformers.Qwen2Config)),
                     "logits")


def mixtral():
    # experts_implementation "eager": the classic per-expert loop (one_hot,
    # nonzero, index_add). The default, grouped_mm, calls kernels (histc,
    # transformers' grouped_mm fallback) that neither exporter converts.
    cfg = decoder_config(transformers.MixtralConfig, num_local_experts=4,
                         num_experts_per_tok=2, experts_implementation="eager")
    return TextModel(transformers.MixtralForCausalLM(cfg), "logits")


def mixtral_for_dynamo(module):
    """torch.export cannot export the eager expert loop (it branches on how
    many tokens an expert got), so the dynamo variants use transformers'
    batched_mm experts: the same weights and result, each token's two experts'
    weights gathered and applied with batched matmuls."""
    module.model.set_experts_implementation("batched_mm")
    return ("dynamo variant: experts_implementation batched_mm (per-token gathered expert "
            "weights, batched matmuls) because torch.export cannot export the eager loop")


def t5_config():
    return transformers.T5Config(vocab_size=VOCAB, d_model=64, d_kv=16, d_ff=128,
                                 num_layers=2, num_decoder_layers=2, num_heads=4,
                                 relative_attention_num_buckets=32, decoder_start_token_id=0,
                                 use_cache=False, attn_implementation="eager")


def t5_encoder():
    return TextModel(transformers.T5EncoderModel(t5_config()), "last_hidden_state")


def t5():
    return Seq2SeqModel(transformers.T5ForConditionalGeneration(t5_config()))


def hf_vit():
    cfg = transformers.ViTConfig(image_size=32, patch_size=8, hidden_size=64,
                                 num_hidden_layers=2, num_attention_heads=4,
                                 intermediate_size=128, attn_implementation="eager")
    return PixelModel(transformers.ViTModel(cfg, add_pooling_layer=False))


WHISPER_FRAMES = 64  # 2 * max_source_positions: the encoder insists on it


def whisper_encoder():
    cfg = transformers.WhisperConfig(
        vocab_size=VOCAB, num_mel_bins=80, encoder_layers=2, encoder_attention_heads=4,
        decoder_layers=2, decoder_attention_heads=4, d_model=64, encoder_ffn_dim=128,
        decoder_ffn_dim=128, max_source_positions=WHISPER_FRAMES // 2,
        max_target_positions=64, pad_token_id=0, bos_token_id=1, eos_token_id=0,
        decoder_start_token_id=2, use_cache=False, attn_implementation="eager")
    return AudioEncoder(transformers.WhisperModel(cfg).get_encoder())


CLIP_EOS = VOCAB - 1


def clip():
    # eos_token_id other than 2: CLIP pools the text at the first eos token
    # (the inputs end with one), not at the largest id (the legacy rule).
    cfg = transformers.CLIPConfig(
        text_config=dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4,
                         max_position_embeddings=64, bos_token_id=0, pad_token_id=1,
                         eos_token_id=CLIP_EOS),
        vision_config=dict(image_size=32, patch_size=8, hidden_size=64,
                           intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4),
        projection_dim=32, attn_implementation="eager")
    return ClipModel(transformers.CLIPModel(cfg))


# ---------------------------------------------------------------------------
# Inputs per data set. Data set 0 is the shape the model is exported at;
# data set 1 (dynamic models only) is another batch and sequence length.

TEXT_SHAPES = [(2, 16), (1, 24)]
IMAGE_BATCHES = [1, 2]


def image_inputs(size, batches=IMAGE_BATCHES):
    def make(rng, index):
        return {"input": normal(rng, batches[index], 3, size, size)}
    return make


def text_inputs(rng, index):
    batch, seq = TEXT_SHAPES[index]
    return {"input_ids": token_ids(rng, batch, seq, VOCAB),
            "attention_mask": all_ones_mask(batch, seq)}


def seq2seq_inputs(rng, index):
    batch, seq = TEXT_SHAPES[index]
    return {"input_ids": token_ids(rng, batch, seq, VOCAB),
            "attention_mask": all_ones_mask(batch, seq),
            "decoder_input_ids": token_ids(rng, batch, seq // 2, VOCAB)}


def pixel_inputs(rng, index):
    return {"pixel_values": normal(rng, [2, 1][index], 3, 32, 32)}


def audio_inputs(rng, index):
    return {"input_features": normal(rng, [2, 1][index], 80, WHISPER_FRAMES)}


def clip_inputs(rng, index):
    text_batch, seq = [(2, 16), (3, 24)][index]
    ids = token_ids(rng, text_batch, seq, CLIP_EOS)
    ids[:, -1] = CLIP_EOS
    return {"input_ids": ids, "attention_mask": all_ones_mask(text_batch, seq),
            "pixel_values": normal(rng, [2, 1][index], 3, 32, 32)}


BATCH = {0: "batch"}
TEXT_AXES = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}

# ---------------------------------------------------------------------------
# The architectures


class Arch:
    def __init__(self, name, family, architecture, build, inputs, outputs, dynamic_axes,
                 transformer=False, dynamo_dynamic=False, dim_max=None, skip=None,
                 dynamo_setup=None, opset23=False):
        self.name = name
        self.family = family
        self.architecture = architecture
        self.build = build
        self.make_inputs = inputs  # (rng, data set index) -> {name: tensor}
        self.outputs = outputs
        # TorchScript-style dynamic_axes for the _dyn variant (inputs and
        # outputs); None: no _dyn variant.
        self.dynamic_axes = dynamic_axes
        self.transformer = transformer
        self.dynamo_dynamic = dynamo_dynamic
        self.dim_max = dim_max or {}  # upper bounds for torch.export.Dim
        self.skip = skip or {}  # variant suffix -> reason it is not made
        # Called with the model before the dynamo variants; returns a note
        # for their "architecture" field.
        self.dynamo_setup = dynamo_setup
        # Whether to make the _op23 variants (ONNX's transformer ops).
        self.opset23 = opset23


def cnn(name, architecture, build, image=64, **kw):
    return Arch(name, "torchvision", architecture, build, image_inputs(image), ["logits"],
                {"input": BATCH, "logits": BATCH}, **kw)


def text(name, architecture, build, output, **kw):
    axes = dict(TEXT_AXES, **{output: {0: "batch", 1: "seq"}})
    return Arch(name, "transformers", architecture, build, text_inputs, [output], axes,
                transformer=True, dynamo_dynamic=True, **kw)


ARCHS = [
    cnn("resnet50", "torchvision ResNet-50 (Bottleneck blocks [3,4,6,3]) at 1/8 width "
        "(stem 8, stages 8/16/32/64 planes, 256 output features), 10 classes, 1x3x64x64",
        lambda: narrow_resnet50(8, 10)),
    cnn("mobilenet_v2", "torchvision MobileNetV2, width_mult 0.25, 10 classes, 1x3x64x64",
        mobilenet_v2),
    cnn("mobilenet_v3_large", "torchvision MobileNetV3-Large (hardswish, SE), width_mult "
        "0.25, 10 classes, 1x3x64x64", mobilenet_v3_large),
    cnn("efficientnet_b0", "torchvision EfficientNet-B0 (MBConv + SE, SiLU), width_mult "
        "0.25, depth_mult 1.0, 10 classes, 1x3x64x64", efficientnet_b0),
    cnn("regnet_y_400mf", "torchvision RegNet with Y blocks shaped like RegNetY-400MF (depth "
        "16, SE 0.25, group width 8, w_m 2.09) at about 1/3 width (w_0 16, w_a 8.5, stem 16: "
        "stage widths 16/32/72/144, depths 1/3/7/5 instead of 1/3/6/6), 10 classes, 1x3x64x64",
        regnet_y_400mf),
    cnn("densenet121", "torchvision DenseNet-121 block structure (6,12,24,16) with growth "
        "rate 8 (of 32), 16 initial features (of 64) and bn_size 3 (of 4), 10 classes, "
        "1x3x64x64", densenet121),
    cnn("convnext_tiny", "torchvision ConvNeXt-Tiny block structure (depths 3,3,9,3) at 1/8 "
        "width (12/24/48/96 channels), 10 classes, 1x3x64x64", convnext_tiny),
    cnn("vit_b_16", "torchvision VisionTransformer shaped like ViT-B/16 but small: image 64, "
        "patch 16, 2 layers, 4 heads, hidden 64, MLP 128, 10 classes", vit_b_16,
        transformer=True),
    Arch("ssdlite320_mobilenet_v3_large", "torchvision",
         "torchvision SSDLite (SSD + SSDLiteHead) on MobileNetV3-Large at width 0.25 "
         "(reduced tail), 128x128 input instead of 320, 3 classes, score threshold 0.2, "
         "top 50 candidates per class, NMS 0.55, at most 20 detections; outputs the boxes, "
         "scores and labels of the first image (count decided by the data)",
         ssdlite320_mobilenet_v3_large, image_inputs(128), ["boxes", "scores", "labels"],
         None, skip={"_dyn": "torchvision's SSD transform and postprocess loop over the "
                     "images in Python, which tracing unrolls for the example batch, so the "
                     "batch cannot be symbolic"}),
    text("bert", "transformers BertModel: 2 layers, hidden 64, 4 heads, intermediate 128, "
         "vocab 256, 128 positions, eager attention; last_hidden_state", bert,
         "last_hidden_state", opset23=True),
    text("distilbert", "transformers DistilBertModel: 2 layers, dim 64, 4 heads, hidden 128, "
         "vocab 256, eager attention; last_hidden_state", distilbert, "last_hidden_state"),
    text("roberta", "transformers RobertaModel: 2 layers, hidden 64, 4 heads, intermediate "
         "128, vocab 256, 130 positions (padding offset), eager attention; last_hidden_state",
         roberta, "last_hidden_state"),
    text("gpt2", "transformers GPT2LMHeadModel: 2 layers, n_embd 64, 4 heads, n_inner 128, "
         "vocab 256, 128 positions, eager attention, no cache; logits", gpt2, "logits"),
    text("llama", "transformers LlamaForCausalLM: 2 layers, hidden 64, 4 query heads and 2 "
         "key/value heads (GQA), intermediate 128, vocab 256, RoPE, RMSNorm, eager "
         "attention, no cache; logits", llama, "logits", opset23=True),
    text("mistral", "transformers MistralForCausalLM: 2 layers, hidden 64, 4 query / 2 kv "
         "heads, intermediate 128, vocab 256, sliding window 8 (shorter than the 16- and "
         "24-token inputs), eager attention, no cache; logits", mistral, "logits"),
    text("qwen2", "transformers Qwen2ForCausalLM: 2 layers, hidden 64, 4 query / 2 kv heads "
         "(q/k/v biases), intermediate 128, vocab 256, eager attention, no cache; logits",
         qwen2, "logits"),
    text("mixtral", "transformers MixtralForCausalLM: 2 layers, hidden 64, 4 query / 2 kv "
         "heads, sparse MoE with 4 experts and top-2 routing (intermediate 128), vocab 256, "
         "eager attention, no cache; logits", mixtral, "logits",
         dynamo_setup=mixtral_for_dynamo),
    text("t5_encoder", "transformers T5EncoderModel: 2 layers, d_model 64, 4 heads of 16, "
         "d_ff 128, 32 relative-position buckets, vocab 256, eager attention; "
         "last_hidden_state", t5_encoder, "last_hidden_state"),
    Arch("t5", "transformers",
         "transformers T5ForConditionalGeneration (encoder and decoder, 2 layers each, "
         "d_model 64, 4 heads of 16, d_ff 128, vocab 256, eager attention, no cache); "
         "decoder_input_ids half as long as input_ids; logits",
         t5, seq2seq_inputs, ["logits"],
         {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
          "decoder_input_ids": {0: "batch", 1: "decoder_seq"},
          "logits": {0: "batch", 1: "decoder_seq"}},
         transformer=True, dynamo_dynamic=True),
    Arch("vit", "transformers",
         "transformers ViTModel: image 32, patch 8, 2 layers, hidden 64, 4 heads, "
         "intermediate 128, no pooler, eager attention; last_hidden_state",
         hf_vit, pixel_inputs, ["last_hidden_state"],
         {"pixel_values": BATCH, "last_hidden_state": BATCH},
         transformer=True, dynamo_dynamic=True),
    Arch("whisper_encoder", "transformers",
         "transformers WhisperModel's encoder: 80 mel bins x 64 frames (max_source_positions "
         "32), 2 layers, d_model 64, 4 heads, ffn 128, eager attention; last_hidden_state "
         "(the frame count is fixed by the model, so only the batch is symbolic)",
         whisper_encoder, audio_inputs, ["last_hidden_state"],
         {"input_features": BATCH, "last_hidden_state": BATCH},
         transformer=True, dynamo_dynamic=True),
    Arch("clip", "transformers",
         "transformers CLIPModel: text (2 layers, hidden 64, 4 heads, vocab 256, 64 "
         "positions, eos-token pooling) and vision (image 32, patch 8, 2 layers, hidden 64, "
         "4 heads) towers, projection 32; logits_per_image, text_embeds, image_embeds",
         clip, clip_inputs, ["logits_per_image", "text_embeds", "image_embeds"],
         {"input_ids": {0: "text_batch", 1: "seq"}, "attention_mask": {0: "text_batch", 1: "seq"},
          "pixel_values": {0: "image_batch"},
          "logits_per_image": {0: "image_batch", 1: "text_batch"},
          "text_embeds": {0: "text_batch"}, "image_embeds": {0: "image_batch"}},
         transformer=True, dynamo_dynamic=True, dim_max={"seq": 64}),
]


class Quantized:
    def __init__(self, name, base, architecture, per_channel, transformer):
        self.name = name
        self.base = base  # the static TorchScript export it quantizes
        self.architecture = architecture
        self.per_channel = per_channel
        self.transformer = transformer


QUANTIZED = [
    Quantized("resnet50_int8", "resnet50",
              "resnet50 (see there) quantized by onnxruntime quantize_static: QDQ, uint8 "
              "activations, int8 per-channel weights, min-max calibration on 8 seeded inputs",
              per_channel=True, transformer=False),
    Quantized("bert_int8", "bert",
              "bert (see there) quantized by onnxruntime quantize_static: QDQ, uint8 "
              "activations, int8 per-tensor weights, min-max calibration on 8 seeded inputs",
              per_channel=False, transformer=True),
]
CALIBRATION_SAMPLES = 8

# ---------------------------------------------------------------------------
# Export


def variants(arch):
    """(suffix, exporter, opset or None for the exporter's default, dynamic)."""
    out = [("", "torchscript", STATIC_OPSET, False)]
    if arch.dynamic_axes is not None or "_dyn" in arch.skip:
        out.append(("_dyn", "torchscript", TORCHSCRIPT_MAX_OPSET, True))
    out.append(("_dynamo", "dynamo", None, False))
    if arch.dynamo_dynamic:
        out.append(("_dynamo_dyn", "dynamo", None, True))
    if arch.opset23:
        out.append(("_op23", "dynamo", TRANSFORMER_OPS_OPSET, False))
        out.append(("_op23_dyn", "dynamo", TRANSFORMER_OPS_OPSET, True))
    return out


@contextlib.contextmanager
def captured_output(log):
    """Sends what is printed meanwhile, by Python or by C++ (the exporters'
    progress lines, the graphs they dump when they fail), to log instead of
    the terminal, by pointing file descriptors 1 and 2 at a temporary file."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile(mode="w+") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            sink.seek(0)
            log.write(sink.read())


# The dynamo exporter annotates every node (metadata_props: Python stack,
# FX node text, module scopes, class hierarchy, rewrite rules). They are most
# of the bytes of a small model's file and hold paths of the machine that
# exported it, so they are dropped; the graph-level and value_info
# annotations stay, so the corpus still has metadata_props in it.
def all_nodes(graph):
    """The graph's nodes and those of the subgraphs (If, Loop, Scan) in them."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for subgraph in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from all_nodes(subgraph)


def strip_node_metadata(model):
    for graph in [model.graph] + list(model.functions):
        for node in all_nodes(graph):
            del node.metadata_props[:]


def export_torchscript(module, inputs, path, arch, opset, dynamic):
    torch.onnx.export(module, tuple(inputs.values()), path, dynamo=False, opset_version=opset,
                      input_names=list(inputs), output_names=arch.outputs,
                      dynamic_axes=arch.dynamic_axes if dynamic else None)
    return onnx.load(path)


def export_dynamo(module, inputs, path, arch, dynamic, opset=None):
    dynamic_shapes = None
    if dynamic:
        # One torch.export.Dim per symbolic name, shared by the inputs that
        # have it, named like the TorchScript variant's dims.
        dims = {}
        dynamic_shapes = {}
        for name in inputs:
            axes = arch.dynamic_axes.get(name)
            spec = {}
            for index, symbol in (axes or {}).items():
                if symbol not in dims:
                    dims[symbol] = torch.export.Dim(symbol, max=arch.dim_max.get(symbol, 128))
                spec[index] = dims[symbol]
            dynamic_shapes[name] = spec or None
    program = torch.onnx.export(module, tuple(inputs.values()), dynamo=True,
                                opset_version=opset, input_names=list(inputs),
                                output_names=arch.outputs, dynamic_shapes=dynamic_shapes,
                                external_data=False, optimize=True, verify=False)
    model = program.model_proto
    strip_node_metadata(model)
    onnx.save(model, path)
    return onnx.load(path)


def symbolic_axes(model):
    """{input name: {dim index: symbolic name}} as the exported graph says."""
    axes = {}
    for vi in model.graph.input:
        dims = {i: d.dim_param for i, d in enumerate(vi.type.tensor_type.shape.dim)
                if d.dim_param or not d.HasField("dim_value")}
        if dims:
            axes[vi.name] = {str(i): name or "?" for i, name in dims.items()}
    return axes or None


def onnx_runtime_outputs(path, feeds, as_written=False):
    """onnxruntime's outputs with its default session options, or with
    `as_written` at its basic optimization level: no fusion of
    QuantizeLinear/DequantizeLinear pairs into integer kernels, so a QDQ
    model computes what ONNX defines (its fused kernels round differently,
    a step or two apart on some elements)."""
    options = ort.SessionOptions()
    if as_written:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return names, session.run(names, feeds)


def torch_outputs(module, inputs):
    with torch.no_grad():
        out = module(*inputs.values())
    if isinstance(out, torch.Tensor):
        out = (out,)
    return [o.numpy() for o in out]


def max_abs_diff(a_list, b_list):
    worst = 0.0
    for a, b in zip(a_list, b_list):
        if a.shape != b.shape:
            return float("inf")
        if a.size:
            worst = max(worst, float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
    return worst


def write_data_set(folder, model, feeds, outputs):
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    for i, vi in enumerate(model.graph.input):
        onnx.save_tensor(numpy_helper.from_array(feeds[vi.name], vi.name),
                         os.path.join(folder, "input_%d.pb" % i))
    for i, (vi, value) in enumerate(zip(model.graph.output, outputs)):
        onnx.save_tensor(numpy_helper.from_array(value, vi.name),
                         os.path.join(folder, "output_%d.pb" % i))


def shapes(arrays):
    return {name: list(a.shape) for name, a in arrays.items()}


def finish_model(out_dir, name, path, model, data_sets, torch_refs, as_written=False,
                 torch_reference_if_refused=False):
    """Checks the exported model, runs it with onnxruntime on every data set
    and writes model.onnx and the test sets. Returns the manifest fields the
    model and its data decide. With `torch_reference_if_refused`, a model
    onnxruntime fails to run gets PyTorch's outputs as its reference."""
    onnx.checker.check_model(model)
    size = os.path.getsize(path)
    assert size <= MAX_MODEL_BYTES, "%d bytes, over the 2 MB limit" % size
    for init in model.graph.initializer:
        assert init.data_location != onnx.TensorProto.EXTERNAL, "external data"
    graph_inputs = [vi.name for vi in model.graph.input]
    folder = os.path.join(out_dir, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    shutil.move(path, os.path.join(folder, "model.onnx"))
    model_path = os.path.join(folder, "model.onnx")
    record = {"input_shapes": [], "output_shapes": [], "warnings": [],
              "reference": "onnxruntime " + ort.__version__}
    diffs, scale = [], 0.0
    torch_is_reference = False
    for index, feeds in enumerate(data_sets):
        feeds = {k: v for k, v in feeds.items() if k in graph_inputs}
        try:
            out_names, outputs = onnx_runtime_outputs(model_path, feeds, as_written)
        except Exception as error:
            if not torch_reference_if_refused:
                raise
            refusal = str(error).splitlines()[0]
            record["reference"] = ("PyTorch %s (onnxruntime %s refuses the model: %s)"
                                   % (torch.__version__, ort.__version__, refusal))
            out_names = [vi.name for vi in model.graph.output]
            outputs = torch_refs[index]
            torch_is_reference = True
        write_data_set(os.path.join(folder, "test_data_set_%d" % index), model, feeds, outputs)
        record["input_shapes"].append(shapes(feeds))
        record["output_shapes"].append(shapes(dict(zip(out_names, outputs))))
        if torch_refs is not None:
            diffs.append(max_abs_diff(outputs, torch_refs[index]))
            scale = max([scale] + [float(np.max(np.abs(r))) for r in torch_refs[index]
                                   if r.size and r.dtype.kind == "f"])
    record.update(
        opset=next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
        ir_version=model.ir_version,
        dynamic_axes=symbolic_axes(model),
        inputs={vi.name: onnx.TensorProto.DataType.Name(vi.type.tensor_type.elem_type).lower()
                for vi in model.graph.input},
        outputs=[vi.name for vi in model.graph.output],
        nodes=len(model.graph.node),
        op_types=sorted({n.op_type for n in model.graph.node}),
        local_functions=len(model.functions),
        file_bytes=os.path.getsize(model_path),
        data_sets=len(data_sets))
    for output_name, value in zip(record["outputs"], outputs):
        # An output that does not depend on the input makes a test that
        # cannot fail (a zeroed classifier, a saturated activation).
        if value.dtype.kind == "f" and value.size > 1 and np.ptp(value) == 0:
            record["warnings"].append("output %s is constant (%g)" % (output_name,
                                                                     value.flat[0]))
    if torch_is_reference:
        # Nothing to check the export against: no difference to record.
        record["max_abs_diff_vs_torch"] = None
        record["max_abs_torch_output"] = scale
    elif torch_refs is not None:
        record["max_abs_diff_vs_torch"] = max(diffs)
        record["max_abs_torch_output"] = scale
        if max(diffs) > WARN_DIFF:
            record["warnings"].append("onnxruntime differs from PyTorch by %.3g (outputs up to "
                                      "%.3g in magnitude)" % (max(diffs), scale))
    return record


def failure_reason(error):
    """One line that says why an export failed. The dynamo exporter wraps the
    cause in an error whose message is generic advice, so name the innermost
    cause too."""
    def first_line(e):
        for line in str(e).splitlines():
            line = line.replace("\x1b[96m", "").replace("\x1b[0m", "").strip()
            if line:
                return line[:400]
        return ""
    root = error
    while root.__cause__ is not None:
        root = root.__cause__
    reason = "%s: %s" % (type(error).__name__, first_line(error))
    if root is not error:
        reason += " <- %s: %s" % (type(root).__name__, first_line(root))
    return reason


def make_arch(arch, out_dir, selected):
    """All variants of one architecture; returns (records, skipped)."""
    records, skipped = [], []
    todo = [(arch.name + suffix, suffix, exporter, opset, dynamic)
            for suffix, exporter, opset, dynamic in variants(arch)]
    todo = [t for t in todo if selected is None or t[0] in selected or arch.name in selected]
    if not todo:
        return records, skipped

    seed = stable_seed(arch.name)
    torch.manual_seed(seed)
    module = arch.build()
    perturb_normalization(module, torch.Generator().manual_seed(seed))
    # Calibration batches from their own seed: data set 1's shape (batch 2,
    # more than one value per channel even where the maps are 1x1).
    calibration_rng = np.random.default_rng(seed + 1)
    calibrate_batch_norm(module, lambda: arch.make_inputs(calibration_rng, 1))
    module.eval()
    rng = np.random.default_rng(seed)
    data = [arch.make_inputs(rng, 0), arch.make_inputs(rng, 1)]
    refs = [torch_outputs(module, d) for d in data]

    architecture = {"torchscript": arch.architecture, "dynamo": arch.architecture}
    dynamo_ready = arch.dynamo_setup is None
    sdpa_ready = False
    for name, suffix, exporter, opset, dynamic in todo:
        if exporter == "dynamo" and not dynamo_ready:
            # The variants come TorchScript first, so this changes the model
            # only after those are done.
            architecture["dynamo"] += "; " + arch.dynamo_setup(module)
            refs = [torch_outputs(module, d) for d in data]
            dynamo_ready = True
        if opset == TRANSFORMER_OPS_OPSET and not sdpa_ready:
            # The _op23 variants come last: attention through PyTorch's
            # scaled_dot_product_attention, which opset 23 writes as ONNX
            # Attention (eager attention stays MatMul/Softmax).
            module.model.set_attn_implementation("sdpa")
            refs = [torch_outputs(module, d) for d in data]
            sdpa_ready = True
        if suffix in arch.skip:
            print("  %-34s skipped: %s" % (name, arch.skip[suffix]))
            skipped.append({"name": name, "exporter": exporter, "reason": arch.skip[suffix]})
            continue
        start = time.time()
        tmp = tempfile.NamedTemporaryFile(suffix=".onnx", dir=out_dir, delete=False).name
        chatter = io.StringIO()  # the exporters' progress lines and graph dumps
        try:
            with warnings.catch_warnings(), captured_output(chatter):
                warnings.simplefilter("ignore")
                if exporter == "torchscript":
                    model = export_torchscript(module, data[0], tmp, arch, opset, dynamic)
                else:
                    model = export_dynamo(module, data[0], tmp, arch, dynamic, opset)
            sets = data if dynamic else data[:1]
            feeds = [{k: v.numpy() for k, v in d.items()} for d in sets]
            record = finish_model(out_dir, name, tmp, model, feeds, refs[:len(sets)],
                                  torch_reference_if_refused=opset == TRANSFORMER_OPS_OPSET)
            if dynamic and not record["dynamic_axes"]:
                raise RuntimeError("the exported model has no symbolic input dims")
        except Exception as error:  # one failure must not stop the corpus
            reason = failure_reason(error)
            print("  %-34s FAILED (%s): %s" % (name, exporter, reason))
            if os.environ.get("CORPUS_TRACEBACK"):
                print(chatter.getvalue())
                traceback.print_exc()
            skipped.append({"name": name, "exporter": exporter, "reason": reason})
            if os.path.isdir(os.path.join(out_dir, name)):
                shutil.rmtree(os.path.join(out_dir, name))
            continue
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        missing = [n for n in data[0] if n not in record["inputs"]]
        if missing:
            record["warnings"].append("the exporter dropped unused inputs %s" % missing)
        described = architecture[exporter]
        if opset == TRANSFORMER_OPS_OPSET:
            described = (described.replace("eager attention", "sdpa attention")
                         + "; opset 23, where the exporter writes ONNX's transformer ops")
        entry = {"name": name, "family": arch.family, "architecture": described,
                 "exporter": exporter, "is_transformer": arch.transformer, "seed": seed}
        entry.update(record)
        entry["export_seconds"] = round(time.time() - start, 1)
        records.append(entry)
        diff = entry["max_abs_diff_vs_torch"]
        print("  %-34s %-11s opset %-2d %5d nodes %8d bytes  %s  %.1fs%s" % (
            name, exporter, entry["opset"], entry["nodes"], entry["file_bytes"],
            "diff %.2g" % diff if diff is not None else "reference: PyTorch",
            entry["export_seconds"],
            "  WARNING: " + "; ".join(entry["warnings"]) if entry["warnings"] else ""))
    return records, skipped


# ---------------------------------------------------------------------------
# Quantization


class CalibrationSamples(CalibrationDataReader):
    def __init__(self, feeds):
        self.feeds = iter(feeds)

    def get_next(self):
        return next(self.feeds, None)


def load_data_set(folder, count, kind):
    return [numpy_helper.to_array(onnx.load_tensor(os.path.join(folder, "%s_%d.pb" % (kind, i))))
            for i in range(count)]


def output_quantization_step(model):
    """The largest scale of the DequantizeLinear nodes that make the graph's
    outputs (one step of the int8 output), or None if an output is not made
    by one."""
    producers = {o: node for node in model.graph.node for o in node.output}
    scales = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    steps = []
    for output in model.graph.output:
        node = producers.get(output.name)
        if node is None or node.op_type != "DequantizeLinear" or node.input[1] not in scales:
            return None
        steps.append(float(np.max(scales[node.input[1]])))
    return max(steps) if steps else None


def make_quantized(spec, out_dir):
    """Quantizes the static TorchScript export of spec.base (already in
    out_dir) and writes it with onnxruntime's outputs on the base model's
    test inputs."""
    arch = next(a for a in ARCHS if a.name == spec.base)
    base_path = os.path.join(out_dir, spec.base, "model.onnx")
    if not os.path.exists(base_path):
        raise RuntimeError("%s has not been exported" % spec.base)
    base = onnx.load(base_path)
    base_inputs = [vi.name for vi in base.graph.input]

    # Calibration inputs from their own seed, disjoint from the test inputs.
    rng = np.random.default_rng(stable_seed(spec.name))
    calibration = [{k: v.numpy() for k, v in arch.make_inputs(rng, 0).items() if k in base_inputs}
                   for _ in range(CALIBRATION_SAMPLES)]
    base_set = os.path.join(out_dir, spec.base, "test_data_set_0")
    feeds = dict(zip(base_inputs, load_data_set(base_set, len(base_inputs), "input")))
    float_outputs = load_data_set(base_set, len(base.graph.output), "output")

    chatter = io.StringIO()
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        prepared = os.path.join(tmp, "prepared.onnx")
        quantized = os.path.join(tmp, "model.onnx")
        with captured_output(chatter):
            # Shape inference and graph cleanup that onnxruntime recommends
            # before static quantization.
            quant_pre_process(base_path, prepared)
            quantize_static(prepared, quantized, CalibrationSamples(calibration),
                            quant_format=QuantFormat.QDQ, per_channel=spec.per_channel,
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                            calibrate_method=CalibrationMethod.MinMax)
        model = onnx.load(quantized)
        # The expected outputs: the QDQ graph as written (bit-exact is the
        # rule for int8); how far onnxruntime's fused integer kernels land
        # from them is recorded below.
        record = finish_model(out_dir, spec.name, quantized, model, [feeds], None,
                              as_written=True)
    model_path = os.path.join(out_dir, spec.name, "model.onnx")
    _, outputs = onnx_runtime_outputs(model_path, feeds, as_written=True)
    _, fused = onnx_runtime_outputs(model_path, feeds)
    dequantized = {n.output[0] for n in model.graph.node if n.op_type == "DequantizeLinear"}
    step = output_quantization_step(model)
    entry = {
        "name": spec.name, "family": "quantized", "architecture": spec.architecture,
        "exporter": "torchscript", "is_transformer": spec.transformer,
        "quantization": {
            "base_model": spec.base, "tool": "onnxruntime.quantization.quantize_static",
            "format": "QDQ", "activations": "uint8", "weights": "int8",
            "per_channel": spec.per_channel, "calibration": "MinMax",
            "calibration_samples": CALIBRATION_SAMPLES,
            "quantized_op_types": sorted({n.op_type for n in model.graph.node
                                          if n.op_type not in ("QuantizeLinear", "DequantizeLinear")
                                          and any(i in dequantized for i in n.input)}),
        },
        # Not an export check: how far int8 is from the float model
        # (onnxruntime on both, the float model's test inputs).
        "max_abs_diff_vs_float": max_abs_diff(outputs, float_outputs),
        "max_abs_float_output": float(max(np.max(np.abs(o)) for o in float_outputs)),
    }
    entry["max_abs_diff_fused_int8_kernels"] = max_abs_diff(fused, outputs)
    if step is not None:
        entry["output_quantization_step"] = step
    entry.update(record)
    return entry


# ---------------------------------------------------------------------------
# Decoders with a key/value cache


class Decoder:
    def __init__(self, name, architecture, build, kv_heads, head_dim):
        self.name = name
        self.architecture = architecture
        self.build = build  # () -> (transformers model with use_cache, layers)
        self.kv_heads = kv_heads
        self.head_dim = head_dim


def gpt2_with_cache():
    # initializer_range 0.2 (GPT-2's is 0.02): with the default the random
    # model's next-token logits are nearly tied, and greedy decoding repeats
    # one token, which would make the generation test weak.
    cfg = transformers.GPT2Config(vocab_size=VOCAB, n_positions=128, n_embd=64, n_layer=2,
                                  n_head=4, n_inner=128, bos_token_id=0, eos_token_id=0,
                                  initializer_range=0.2, use_cache=True,
                                  attn_implementation="eager")
    return transformers.GPT2LMHeadModel(cfg), cfg


def llama_with_cache():
    cfg = transformers.LlamaConfig(**TEXT, num_key_value_heads=2, use_cache=True,
                                   attn_implementation="eager")
    return transformers.LlamaForCausalLM(cfg), cfg


class DecoderWithCache(nn.Module):
    """The decoder with its cache as plain tensors: inputs input_ids,
    attention_mask and past_key_values.N.key/value, outputs logits and
    present.N.key/value (the layout of Hugging Face's ONNX exports)."""

    def __init__(self, model, cfg, layers):
        super().__init__()
        self.model = model
        self.cfg = cfg
        self.layers = layers

    def forward(self, input_ids, attention_mask, *past):
        cache = transformers.DynamicCache(config=self.cfg)
        for layer in range(self.layers):
            cache.update(past[2 * layer], past[2 * layer + 1], layer)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, cache=cache,
                         use_cache=True)
        present = []
        for layer in range(self.layers):
            present += [cache.layers[layer].keys, cache.layers[layer].values]
        return (out.logits, *present)


DECODERS = [
    Decoder("gpt2_kv", "transformers GPT2LMHeadModel as gpt2 (2 layers, n_embd 64, 4 heads, "
            "vocab 256) but initializer_range 0.2, exported with its key/value cache: "
            "past_key_values.N.key/value in, present.N.key/value out, symbolic batch, "
            "sequence and cached length", gpt2_with_cache, 4, 16),
    Decoder("llama_kv", "transformers LlamaForCausalLM as llama (2 layers, hidden 64, 4 query "
            "/ 2 kv heads, RoPE, RMSNorm, vocab 256) exported with its key/value cache: "
            "past_key_values.N.key/value in, present.N.key/value out, symbolic batch, "
            "sequence and cached length", llama_with_cache, 2, 16),
]
GENERATE_TOKENS = 32
PROMPT_TOKENS = 8


def greedy_generate(path, prompt, tokens):
    """onnxruntime's greedy continuation of `prompt` (batch 1), and the
    smallest gap between the best and second-best logit on the way (how
    close greedy decoding came to a tie)."""
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    past_inputs = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    outputs = [o.name for o in session.get_outputs()]
    feeds = {i.name: np.zeros([1, i.shape[1], 0, i.shape[3]], np.float32) for i in past_inputs}
    ids, past, generated, gap = np.array([prompt], np.int64), 0, [], float("inf")
    for _ in range(tokens):
        feeds["input_ids"] = ids
        feeds["attention_mask"] = np.ones((1, past + ids.shape[1]), np.int64)
        results = dict(zip(outputs, session.run(None, feeds)))
        logits = results["logits"][0, -1]
        best, second = np.sort(logits)[-2:][::-1]
        gap = min(gap, float(best - second))
        generated.append(int(np.argmax(logits)))
        for i in past_inputs:
            feeds[i.name] = results["present." + i.name[len("past_key_values."):]]
        past += ids.shape[1]
        ids = np.array([[generated[-1]]], np.int64)
    return generated, gap


def make_decoder(spec, out_dir):
    """One TorchScript export (opset 17) of the decoder with its cache. Data
    set 0 is a step with 3 cached positions (batch 2, 4 new tokens), data
    set 1 a prefill (batch 1, 6 tokens, empty cache); generate.json holds a
    prompt and onnxruntime's greedy continuation of it."""
    seed = stable_seed(spec.name)
    torch.manual_seed(seed)
    model, cfg = spec.build()
    layers = cfg.num_hidden_layers
    module = DecoderWithCache(model, cfg, layers).eval()
    perturb_normalization(module, torch.Generator().manual_seed(seed))
    rng = np.random.default_rng(seed)
    past_names = ["past_key_values.%d.%s" % (i, k) for i in range(layers)
                  for k in ("key", "value")]
    present_names = ["present." + n[len("past_key_values."):] for n in past_names]

    def data(batch, seq, past):
        feeds = {"input_ids": token_ids(rng, batch, seq, VOCAB),
                 "attention_mask": all_ones_mask(batch, past + seq)}
        feeds.update((n, normal(rng, batch, spec.kv_heads, past, spec.head_dim))
                     for n in past_names)
        return feeds

    sets = [data(2, 4, 3), data(1, 6, 0)]
    refs = [torch_outputs(module, d) for d in sets]
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
            "logits": {0: "batch", 1: "seq"}}
    axes.update((n, {0: "batch", 2: "past"}) for n in past_names)
    axes.update((n, {0: "batch", 2: "total"}) for n in present_names)
    start = time.time()
    tmp = tempfile.NamedTemporaryFile(suffix=".onnx", dir=out_dir, delete=False).name
    try:
        with warnings.catch_warnings(), captured_output(io.StringIO()):
            warnings.simplefilter("ignore")
            torch.onnx.export(module, tuple(sets[0].values()), tmp, dynamo=False,
                              opset_version=STATIC_OPSET, input_names=list(sets[0]),
                              output_names=["logits"] + present_names, dynamic_axes=axes)
        model_proto = onnx.load(tmp)
        feeds = [{k: v.numpy() for k, v in d.items()} for d in sets]
        record = finish_model(out_dir, spec.name, tmp, model_proto, feeds, refs)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    prompt = [int(t) for t in rng.integers(0, VOCAB, PROMPT_TOKENS)]
    tokens, gap = greedy_generate(os.path.join(out_dir, spec.name, "model.onnx"), prompt,
                                  GENERATE_TOKENS)
    with open(os.path.join(out_dir, spec.name, "generate.json"), "w") as f:
        json.dump({"prompt_ids": prompt, "tokens": tokens, "min_top2_logit_gap": gap,
                   "note": "onnxruntime's greedy continuation (batch 1, the cache fed back "
                           "step by step)"}, f, indent=1)
        f.write("\n")
    entry = {"name": spec.name, "family": "transformers", "architecture": spec.architecture,
             "exporter": "torchscript", "is_transformer": True, "seed": seed,
             "generate": {"prompt_tokens": PROMPT_TOKENS, "tokens": GENERATE_TOKENS,
                          "min_top2_logit_gap": gap}}
    entry.update(record)
    entry["export_seconds"] = round(time.time() - start, 1)
    return entry


# ---------------------------------------------------------------------------


def compact_json(value):
    """Indented JSON, but with lists of numbers or strings (shapes, op
    types) on one line."""
    text = json.dumps(value, indent=1)
    return re.sub(r"\[\n\s*([^\[\]{}]*?)\n\s*\]",
                  lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",\n")) + "]",
                  text)


def versions():
    return {"python": platform.python_version(), "torch": torch.__version__,
            "torchvision": torchvision.__version__, "transformers": transformers.__version__,
            "onnx": onnx.__version__, "onnxruntime": ort.__version__,
            "onnxscript": onnxscript.__version__}


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    out_dir = argv[1]
    selected = set(argv[2:]) or None
    known = ({a.name for a in ARCHS} | {q.name for q in QUANTIZED} | {d.name for d in DECODERS}
             | {a.name + v[0] for a in ARCHS for v in variants(a)})
    if selected and selected - known:
        sys.exit("unknown names: %s" % ", ".join(sorted(selected - known)))
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    manifest_path = os.path.join(out_dir, "manifest.json")
    models, skipped = collections.OrderedDict(), collections.OrderedDict()
    if selected and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = json.load(f)
        models.update((m["name"], m) for m in old.get("models", []))
        skipped.update((s["name"], s) for s in old.get("skipped", []))

    start = time.time()
    for arch in ARCHS:
        print(arch.name, flush=True)
        try:
            records, failures = make_arch(arch, out_dir, selected)
        except Exception as error:  # building the model itself failed
            reason = failure_reason(error)
            print("  FAILED to build: %s" % reason)
            records, failures = [], [{"name": arch.name + s[0], "exporter": s[1],
                                      "reason": "building the model failed: " + reason}
                                     for s in variants(arch)]
        for r in records:
            models[r["name"]] = r
            skipped.pop(r["name"], None)
        for s in failures:
            skipped[s["name"]] = s
            models.pop(s["name"], None)
    for spec in QUANTIZED:
        if selected is not None and spec.name not in selected:
            continue
        print(spec.name, flush=True)
        try:
            entry = make_quantized(spec, out_dir)
            models[spec.name] = entry
            skipped.pop(spec.name, None)
            print("  %-34s int8 QDQ    opset %-2d %5d nodes %8d bytes  vs float %.2g" % (
                spec.name, entry["opset"], entry["nodes"], entry["file_bytes"],
                entry["max_abs_diff_vs_float"]))
        except Exception as error:
            reason = failure_reason(error)
            print("  FAILED: %s" % reason)
            skipped[spec.name] = {"name": spec.name, "exporter": "quantize_static",
                                  "reason": reason}
            models.pop(spec.name, None)
    for spec in DECODERS:
        if selected is not None and spec.name not in selected:
            continue
        print(spec.name, flush=True)
        try:
            entry = make_decoder(spec, out_dir)
            models[spec.name] = entry
            skipped.pop(spec.name, None)
            print("  %-34s torchscript opset %-2d %5d nodes %8d bytes  diff %.2g  "
                  "top-2 gap %.3g" % (spec.name, entry["opset"], entry["nodes"],
                                      entry["file_bytes"], entry["max_abs_diff_vs_torch"],
                                      entry["generate"]["min_top2_logit_gap"]))
        except Exception as error:
            reason = failure_reason(error)
            print("  FAILED: %s" % reason)
            skipped[spec.name] = {"name": spec.name, "exporter": "torchscript",
                                  "reason": reason}
            models.pop(spec.name, None)
    elapsed = time.time() - start

    order = ([a.name + v[0] for a in ARCHS for v in variants(a)] + [q.name for q in QUANTIZED]
             + [d.name for d in DECODERS])
    rank = {name: i for i, name in enumerate(order)}
    manifest = {
        "description": "Real model architectures (torchvision, Hugging Face transformers) "
                       "with seeded random weights, exported to ONNX by "
                       "scripts/make_model_corpus.py; reference outputs from onnxruntime.",
        "notes": [
            "test_data_set_N/output_*.pb are onnxruntime's outputs (CPUExecutionProvider, "
            "default session options), never Loom's; max_abs_diff_vs_torch compares them "
            "with PyTorch's on the same inputs (all data sets).",
            "Weights: torch.manual_seed(seed) before building; normalization scales and "
            "shifts perturbed around 1 and 0; BatchNorm running statistics measured on "
            "seeded random batches, as a trained network's would be.",
            "Token ids are uniform in [0, vocab); attention masks are all ones.",
            "Dynamo exports: the per-node metadata_props (stack traces, FX nodes, scopes) "
            "are removed for size; graph-level metadata_props are kept.",
            "max_abs_diff_vs_float (quantized models) is the int8 model's distance from "
            "the float model, not an export error.",
            "Quantized models' outputs come from onnxruntime at its basic optimization "
            "level, which runs the QDQ graph as ONNX defines it; its default level fuses "
            "QuantizeLinear/DequantizeLinear into integer kernels that round a step or two "
            "apart (max_abs_diff_fused_int8_kernels).",
        ],
        "versions": versions(),
        "opsets": {"torchscript_static": STATIC_OPSET,
                   "torchscript_newest": TORCHSCRIPT_MAX_OPSET,
                   "dynamo_default": DYNAMO_DEFAULT_OPSET},
        "generation_seconds": round(elapsed, 1) if selected is None else None,
        "models": sorted(models.values(), key=lambda m: rank.get(m["name"], len(rank))),
        "skipped": sorted(skipped.values(), key=lambda s: rank.get(s["name"], len(rank))),
    }
    if selected is not None and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest["generation_seconds"] = json.load(f).get("generation_seconds")
    with open(manifest_path, "w") as f:
        f.write(compact_json(manifest) + "\n")

    for m in manifest["models"]:
        size = os.path.getsize(os.path.join(out_dir, m["name"], "model.onnx"))
        assert size <= MAX_MODEL_BYTES, "%s is %d bytes" % (m["name"], size)
    print("%d models, %d skipped, %.0f s" % (len(manifest["models"]), len(manifest["skipped"]),
                                             elapsed))


if __name__ == "__main__":
    main(sys.argv)
