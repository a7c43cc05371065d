#!/usr/bin/env python3
"""Greedy decoding with a key/value-cache decoder export: Loom against onnxruntime.

Runs the same export (inputs input_ids, attention_mask, position_ids when
present, past_key_values.N.key/value; outputs logits, present.N.key/value)
with onnxruntime's CPU provider and, through `loom-run ENGINE --generate`,
with a Loom engine compiled from it, greedily, from the same prompt; prints
the prefill latency, per-token latency (p50/p99) and tokens/s of both, side
by side, and whether the generated token ids agree. Exit status 1 when
they do not.

    loomc model.onnx -o model.engine         # no --input-shape: symbolic
    python3 bench/decode_onnxruntime.py model.onnx --engine model.engine \\
        --loom-run build/bin/loom-run --tokens 32 --threads 1

Without --engine the model is compiled with --loomc. --kv-cache N also
compiles it with `loomc --kv-cache=N` (the cache kept in place by the
caller, appended to by the code) and runs that engine as a third line.

--make-llama DIR first writes a Llama-style decoder (transformers'
LlamaForCausalLM from a config, seeded random weights, about 100M
parameters by default) exported with its cache to DIR/model.onnx (weights
in DIR/model.onnx.data), and uses it. Needs torch and transformers.
"""

import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np
import onnxruntime as ort


def percentile(values, p):
    values = sorted(values)
    return values[min(int(p / 100.0 * (len(values) - 1) + 0.5), len(values) - 1)]


def cache_layout(session):
    """(name, shape with batch 1 and length 0) of each past input, and the
    present output it comes back in."""
    slots = []
    for i in session.get_inputs():
        if not i.name.startswith("past_key_values."):
            continue
        shape = [1 if k == 0 else (0 if isinstance(d, str) or d is None else d)
                 for k, d in enumerate(i.shape)]
        slots.append((i.name, shape, "present." + i.name[len("past_key_values."):]))
    return slots


def ort_generate(session, prompt, tokens):
    inputs = {i.name for i in session.get_inputs()}
    outputs = [o.name for o in session.get_outputs()]
    slots = cache_layout(session)
    feeds = {name: np.zeros(shape, np.float32) for name, shape, _ in slots}
    ids = np.array([prompt], np.int64)
    past = 0
    generated, times = [], []
    for _ in range(tokens):
        length = ids.shape[1]
        feeds["input_ids"] = ids
        if "attention_mask" in inputs:
            feeds["attention_mask"] = np.ones((1, past + length), np.int64)
        if "position_ids" in inputs:
            feeds["position_ids"] = np.arange(past, past + length, dtype=np.int64)[None]
        start = time.perf_counter()
        results = dict(zip(outputs, session.run(None, feeds)))
        times.append((time.perf_counter() - start) * 1000.0)
        token = int(np.argmax(results["logits"][0, -1]))
        generated.append(token)
        for name, _, present in slots:
            feeds[name] = results[present]
        past += length
        ids = np.array([[token]], np.int64)
    return generated, times


def summary(label, prompt_len, times):
    decode = times[1:]
    line = f"{label:13s} prefill {times[0]:8.3f} ms ({prompt_len} tokens)"
    if decode:
        line += (f"   per token p50 {percentile(decode, 50):7.3f} ms, p99 "
                 f"{percentile(decode, 99):7.3f} ms, {1000.0 * len(decode) / sum(decode):8.1f} "
                 "tokens/s")
    return line


def loom_generate(loom_run, engine, prompt, tokens, threads):
    command = [loom_run, engine, "--generate", str(tokens), "--benchmark",
               "--prompt-ids", ",".join(map(str, prompt)), "--num-threads", str(threads)]
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"loom-run failed ({' '.join(command)}):\n{out.stderr}")
    text = out.stdout
    generated = [int(t) for t in re.search(r"^tokens:(.*)$", text, re.M).group(1).split()]
    prefill = float(re.search(r"^prefill: ([0-9.]+) ms", text, re.M).group(1))
    decode = re.search(r"per token p50 ([0-9.]+) ms, p99 ([0-9.]+) ms; ([0-9.]+) tokens/s", text)
    return generated, prefill, decode, text


def make_llama(directory, layers, hidden, heads, kv_heads, intermediate, vocab):
    import torch
    import transformers
    from transformers import DynamicCache

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=vocab, hidden_size=hidden, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=kv_heads,
        intermediate_size=intermediate, max_position_embeddings=2048, use_cache=True,
        attn_implementation="eager")
    model = transformers.LlamaForCausalLM(cfg).eval()
    params = sum(p.numel() for p in model.parameters())

    class WithCache(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, *past):
            cache = DynamicCache(config=cfg)
            for layer in range(layers):
                cache.update(past[2 * layer], past[2 * layer + 1], layer)
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask,
                             cache=cache, use_cache=True)
            present = []
            for layer in range(layers):
                present += [cache.layers[layer].keys, cache.layers[layer].values]
            return (out.logits, *present)

    wrapper = WithCache(model).eval()
    head_dim = hidden // heads
    batch, seq, past_len = 1, 4, 3
    past = [torch.randn(batch, kv_heads, past_len, head_dim) for _ in range(2 * layers)]
    names_in = ["input_ids", "attention_mask"] + [
        f"past_key_values.{i}.{k}" for i in range(layers) for k in ("key", "value")]
    names_out = ["logits"] + [f"present.{i}.{k}" for i in range(layers) for k in ("key", "value")]
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "total"},
            "logits": {0: "batch", 1: "seq"}}
    axes.update({n: {0: "batch", 2: "past"} for n in names_in[2:]})
    axes.update({n: {0: "batch", 2: "total"} for n in names_out[1:]})
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "model.onnx")
    ids = torch.randint(0, vocab, (batch, seq))
    mask = torch.ones(batch, past_len + seq, dtype=torch.int64)
    torch.onnx.export(wrapper, (ids, mask, *past), path, input_names=names_in,
                      output_names=names_out, dynamic_axes=axes, opset_version=17,
                      dynamo=False, external_data=params * 4 > 1_500_000_000)
    print(f"made {path}: LlamaForCausalLM, {layers} layers, hidden {hidden}, {heads} heads "
          f"({kv_heads} kv), intermediate {intermediate}, vocab {vocab}: "
          f"{params / 1e6:.1f}M parameters")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", help="the decoder export (.onnx)")
    parser.add_argument("--engine", help="a Loom engine compiled from it (symbolic inputs)")
    parser.add_argument("--loom-run", default="build/bin/loom-run")
    parser.add_argument("--loomc", default="build/bin/loomc",
                        help="compiles the model when --engine is not given")
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--prompt-ids", default="5,17,42,7,99,3,64,12",
                        help="comma-separated prompt token ids")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--kv-cache", type=int, default=0, metavar="N",
                        help="also compile and run the engine with loomc --kv-cache=N")
    parser.add_argument("--make-llama", metavar="DIR",
                        help="first make a Llama-style decoder export there and use it")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--kv-heads", type=int, default=4)
    parser.add_argument("--intermediate", type=int, default=2048)
    parser.add_argument("--vocab", type=int, default=16000)
    args = parser.parse_args()

    model = args.model
    if args.make_llama:
        model = make_llama(args.make_llama, args.layers, args.hidden, args.heads,
                           args.kv_heads, args.intermediate, args.vocab)
    if not model:
        parser.error("give the model, or --make-llama DIR")
    def compile_engine(path, extra):
        start = time.perf_counter()
        subprocess.run([args.loomc, model, "-o", path] + extra, check=True)
        print(f"compiled {path} in {time.perf_counter() - start:.1f} s")
        return path

    engines = [("loom", args.engine or compile_engine(
        os.path.splitext(model)[0] + ".engine", []))]
    if args.kv_cache:
        engines.append(("loom kv-cache", compile_engine(
            os.path.splitext(model)[0] + ".kv.engine", [f"--kv-cache={args.kv_cache}"])))
    prompt = [int(t) for t in args.prompt_ids.split(",")]

    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    ort_generate(session, prompt, min(args.tokens, 4))  # warm-up
    ort_ids, ort_times = ort_generate(session, prompt, args.tokens)
    runs = [(label, *loom_generate(args.loom_run, path, prompt, args.tokens, args.threads))
            for label, path in engines]

    print(f"greedy decoding, {len(prompt)} prompt tokens, {args.tokens} generated, "
          f"{args.threads} thread(s), batch 1")
    print(summary("onnxruntime", len(prompt), ort_times))
    agree = True
    for label, loom_ids, prefill, decode, _ in runs:
        line = f"{label:13s} prefill {prefill:8.3f} ms ({len(prompt)} tokens)"
        if decode:
            line += (f"   per token p50 {float(decode.group(1)):7.3f} ms, p99 "
                     f"{float(decode.group(2)):7.3f} ms, {float(decode.group(3)):8.1f} tokens/s")
            if len(ort_times) > 1:
                line += (f"   (p50 / onnxruntime's "
                         f"{float(decode.group(1)) / percentile(ort_times[1:], 50):.2f})")
        print(line)
    for label, loom_ids, *_ in runs:
        if loom_ids == ort_ids:
            print(f"{label}: token ids: all {len(ort_ids)} agree with onnxruntime's")
            continue
        agree = False
        first = next(i for i, (a, b) in enumerate(zip(loom_ids, ort_ids)) if a != b)
        print(f"{label}: token ids differ from position {first}:\n  loom        {loom_ids}\n"
              f"  onnxruntime {ort_ids}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
