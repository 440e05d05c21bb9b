"""Native mlu op benchmark (torch_mlu over cnnl): the numbers of the native-kernels issue, each beside its host
reference measured in the same run.

- native share: the aten calls of one ResNet-18 training step and of one GPT-style block's training step (every op
  that touches an mlu tensor, forward and backward, counted by torch_mlu.op_tools.fallback_report), and how many of
  them ran natively, with no CPU fallback (target: 100%).
- per op family, large shapes (elementwise and most families: 3072 x 2048 float32, 24 MiB operands: together
  beyond the host's caches, yet under glibc's 32 MiB mmap threshold, so torch's CPU outputs are not fresh
  page-faulted memory at every call; reductions: 4096 x 4096, 64 MiB, so that neither side reads from cache): host
  time of the mlu op (with torch.mlu.synchronize()) vs the same torch op on the CPU, the best of calls taken in
  alternating bursts, the first call of each burst not counted (a call right after the other side's pays for the
  hand-over: torch's OpenMP threads spin on the cores for a while after its op returned). Targets, per family:
  <= 1.5x for elementwise, reductions and matmul, <= 2x for convolution, met by the family's row, the geometric
  mean of its ops (each op's row gives its own ratio, and the family's row names those above the target: on this
  host single rows of ~0.5 ms torch ops swing from 1.1x to 1.7x between runs, as torch's ops do from 0.45 to
  0.9 ms); the other families are printed without a target.
- the conformance table's totals (`mlusim conformance torch`): read from the CSV that `mlusim conformance torch
  --csv F` wrote, given as `--conformance-csv F` or in MLUSIM_BENCH_CONFORMANCE_CSV, or else measured on a fast
  subset of OpInfos run here (the output says which).

Run: mlusim bench ops-torch, or python benchmarks/bench_ops_torch.py [--quick] [--conformance-csv F]
"""
from __future__ import annotations

import argparse
import csv
import os
import sys
import time

from mlutools.bench import torch_spin  # before torch: libgomp reads its setting when torch loads it

import torch
import torch.nn.functional as F

import torch_mlu  # noqa: F401  (registers the device when torch did not autoload it)
from mlutools.bench.common import geometric_mean_row, paired_best_ms, reported, row
from mlutools.bench.torch_models import GPTBlock, ResNet18
from torch_mlu import fallback, op_tools

CONFORMANCE_ENVIRONMENT = "MLUSIM_BENCH_CONFORMANCE_CSV"
#: OpInfos of the fast conformance subset (one or two per family of the issue's op list)
FAST_CONFORMANCE_OPS = ["add", "mul", "where", "clamp", "pow", "exp", "tanh", "nn.functional.gelu", "sum", "amax",
                        "var", "cumsum", "sort", "topk", "mm", "addmm", "nn.functional.conv2d",
                        "nn.functional.max_pool2d", "nn.functional.layer_norm", "softmax", "gather",
                        "index_select", "cat", "nn.functional.cross_entropy", "nn.functional.mse_loss"]
#: calls of one side per round of the alternation, the first of them not counted (`common.paired_best_ms`): each
#: side is timed in steady state, as in a loop of its own ops
BURST = 3
TARGETS = {"elementwise": 1.5, "reduction": 1.5, "matmul": 1.5, "conv": 2.0}


def _sync() -> None:
    torch.mlu.synchronize()


# ---- native share ---------------------------------------------------------------------------------------------------
def _training_step(model: torch.nn.Module, optimizer, batch):
    inputs, targets = batch

    def step() -> None:
        optimizer.zero_grad()
        logits = model(inputs)
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)).backward()
        optimizer.step()

    return step


def _resnet_step(quick: bool):
    torch.manual_seed(0)
    model = ResNet18(width=16 if quick else 64).to("mlu")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    size = 32 if quick else 64
    batch = torch.randn(4, 3, size, size).to("mlu"), torch.randint(0, 10, (4,)).to("mlu")
    return _training_step(model, optimizer, batch)


def _gpt_step(quick: bool):
    torch.manual_seed(0)
    model = GPTBlock(dim=64 if quick else 128).to("mlu")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 256, (4, 65))
    batch = tokens[:, :-1].to("mlu"), tokens[:, 1:].to("mlu")
    return _training_step(model, optimizer, batch)


def native_share_rows(quick: bool) -> list[dict]:
    rows = []
    for name, make in (("ResNet-18 training step", _resnet_step), ("GPT-style block training step", _gpt_step)):
        with fallback.mode("silent"):
            step = make(quick)
            step()  # the first step makes the optimizer's state
            _sync()
            with op_tools.fallback_report() as report:
                step()
                _sync()
        fell_back = ", ".join(sorted(report.entries)) or "none"
        result = row(f"{name}: aten calls run natively (%)", 100 * report.native_share(), None, None, unit="%",
                     note=f"{report.calls - report.calls_falling_back} of {report.calls} calls; target 100%; "
                          f"fell back: {fell_back}")
        result["pass"] = report.calls_falling_back == 0
        rows.append(result)
    return rows


# ---- per op family ---------------------------------------------------------------------------------------------------
def _cases(quick: bool):
    """(family, name, function of a device -> a callable running the op there) of each timed op."""
    rows, side = (512, 512) if quick else (3072, 2048)
    generator = torch.Generator().manual_seed(0)

    def data(*shape):
        return torch.randn(*shape, generator=generator)

    a, b = data(rows, side), data(rows, side)
    r = data(512, 512) if quick else data(4096, 4096)
    n = 256 if quick else 1024
    m1, m2, bias = data(n, n), data(n, n), data(n)
    batch1, batch2 = data(16, n // 4, n // 4), data(16, n // 4, n // 4)
    images = data(8 if quick else 16, 32 if quick else 64, 28 if quick else 56, 28 if quick else 56)
    kernels = data(images.shape[1], images.shape[1], 3, 3)
    logits, labels = data(rows, 1000), torch.randint(0, 1000, (rows,), generator=generator)
    index = torch.randint(0, rows, (rows // 2,), generator=generator)
    q = data(4, 8, 256 if quick else 1024, 64)
    table, tokens = data(32000, 256), torch.randint(0, 32000, (side * 4,), generator=generator)
    many = [data(256, 256) for _ in range(64)]

    def on(device, *tensors):
        moved = [t.to(device) for t in tensors]
        return moved if len(moved) > 1 else moved[0]

    def conv_step(device):
        x, w = on(device, images, kernels)
        x.requires_grad_()
        w.requires_grad_()

        def run():
            y = F.conv2d(x, w, padding=1)
            y.backward(y)
        return run

    def foreach(device):
        params, grads = [t.to(device) for t in many], [t.to(device) for t in many]
        return lambda: torch._foreach_add_(params, grads, alpha=-0.01)

    cases = [
        ("elementwise", "a + b", lambda d: (lambda x, y: lambda: x + y)(*on(d, a, b))),
        ("elementwise", "a * b", lambda d: (lambda x, y: lambda: x * y)(*on(d, a, b))),
        ("elementwise", "a / b", lambda d: (lambda x, y: lambda: x / y)(*on(d, a, b))),
        ("elementwise", "a + 1.5", lambda d: (lambda x: lambda: x + 1.5)(on(d, a))),
        ("elementwise", "a.add_(b)", lambda d: (lambda x, y: lambda: x.add_(y, alpha=1e-9))(*on(d, a, b))),
        ("elementwise", "exp", lambda d: (lambda x: lambda: torch.exp(x))(on(d, a))),
        ("elementwise", "tanh", lambda d: (lambda x: lambda: torch.tanh(x))(on(d, a))),
        ("elementwise", "sigmoid", lambda d: (lambda x: lambda: torch.sigmoid(x))(on(d, a))),
        ("elementwise", "relu", lambda d: (lambda x: lambda: F.relu(x))(on(d, a))),
        ("elementwise", "gelu", lambda d: (lambda x: lambda: F.gelu(x))(on(d, a))),
        ("elementwise", "gelu backward", lambda d: (lambda x, g: lambda: torch.ops.aten.gelu_backward(g, x))(
            *on(d, a, b))),
        ("elementwise", "relu backward", lambda d: (lambda x, g: lambda: torch.ops.aten.threshold_backward(
            g, x, 0.0))(*on(d, a, b))),
        ("elementwise", "clamp(-1, 1)", lambda d: (lambda x: lambda: x.clamp(-1, 1))(on(d, a))),
        ("elementwise", "a > b", lambda d: (lambda x, y: lambda: x > y)(*on(d, a, b))),
        ("elementwise", "where(a > 0, a, b)", lambda d: (lambda x, y: lambda: torch.where(x > 0, x, y))(*on(d, a, b))),
        ("elementwise", "a ** 2", lambda d: (lambda x: lambda: x ** 2)(on(d, a))),
        ("elementwise", "float -> half", lambda d: (lambda x: lambda: x.half())(on(d, a))),
        ("elementwise", "a.t().contiguous()", lambda d: (lambda x: lambda: x.t().contiguous())(on(d, a))),
        ("reduction", "sum()", lambda d: (lambda x: lambda: x.sum())(on(d, r))),
        ("reduction", "sum(dim=1)", lambda d: (lambda x: lambda: x.sum(1))(on(d, r))),
        ("reduction", "sum(dim=0)", lambda d: (lambda x: lambda: x.sum(0))(on(d, r))),
        ("reduction", "mean(dim=1)", lambda d: (lambda x: lambda: x.mean(1))(on(d, r))),
        ("reduction", "amax(dim=1)", lambda d: (lambda x: lambda: x.amax(1))(on(d, r))),
        ("reduction", "argmax(dim=1)", lambda d: (lambda x: lambda: x.argmax(1))(on(d, r))),
        ("reduction", "var(dim=1)", lambda d: (lambda x: lambda: x.var(1))(on(d, r))),
        ("reduction", "norm()", lambda d: (lambda x: lambda: x.norm())(on(d, r))),
        ("matmul", f"mm {n}^3", lambda d: (lambda x, y: lambda: x @ y)(*on(d, m1, m2))),
        ("matmul", f"addmm {n}^3", lambda d: (lambda c, x, y: lambda: torch.addmm(c, x, y))(*on(d, bias, m1, m2))),
        ("matmul", f"linear {n}x{n}", lambda d: (lambda x, w, c: lambda: F.linear(x, w, c))(*on(d, m1, m2, bias))),
        ("matmul", f"bmm 16x{n // 4}^3", lambda d: (lambda x, y: lambda: torch.bmm(x, y))(*on(d, batch1, batch2))),
        ("conv", f"conv2d 3x3 {tuple(images.shape)}", lambda d: (lambda x, w: lambda: F.conv2d(x, w, padding=1))(
            *on(d, images, kernels))),
        ("conv", "conv2d 3x3 forward + backward", conv_step),
        ("pooling", "max_pool2d 2x2", lambda d: (lambda x: lambda: F.max_pool2d(x, 2))(on(d, images))),
        ("batch norm", "batch_norm (training)", lambda d: (lambda x: lambda: F.batch_norm(
            x, None, None, training=True))(on(d, images))),
        ("norm", "layer_norm(last dim)", lambda d: (lambda x: lambda: F.layer_norm(x, (side,)))(on(d, a))),
        ("softmax", "softmax(dim=1)", lambda d: (lambda x: lambda: torch.softmax(x, 1))(on(d, a))),
        ("softmax", "log_softmax(dim=1)", lambda d: (lambda x: lambda: torch.log_softmax(x, 1))(on(d, a))),
        ("loss", "cross_entropy (x1000 classes)", lambda d: (lambda x, t: lambda: F.cross_entropy(x, t))(
            *on(d, logits, labels))),
        ("scan", "cumsum(dim=1)", lambda d: (lambda x: lambda: x.cumsum(1))(on(d, a))),
        ("sort", "sort(dim=1)", lambda d: (lambda x: lambda: x.sort(1))(on(d, a))),
        ("sort", "topk(10, dim=1)", lambda d: (lambda x: lambda: x.topk(10, 1))(on(d, a))),
        ("indexing", "index_select(0)", lambda d: (lambda x, i: lambda: x.index_select(0, i))(*on(d, a, index))),
        ("indexing", "embedding", lambda d: (lambda w, i: lambda: F.embedding(i, w))(*on(d, table, tokens))),
        ("attention", f"sdpa {tuple(q.shape)} causal", lambda d: (lambda x: lambda: F.scaled_dot_product_attention(
            x, x, x, is_causal=True))(on(d, q))),
        ("foreach", "_foreach_add_ 64 x 256^2", foreach),
    ]
    return cases


def family_rows(quick: bool) -> list[dict]:
    """A row per op (its ratio, for reading; no verdict), then, per family with a target, the row that carries it:
    the geometric mean of the family's ops (ours against torch's)."""
    rows = []
    repeats = 3 if quick else 7
    with fallback.mode("silent"):
        for family, name, make in _cases(quick):
            mlu_op, cpu_op = make("mlu"), make("cpu")

            def on_mlu(op=mlu_op) -> None:
                op()
                _sync()

            before = sum(fallback.counts().values())
            mlu_ms, cpu_ms = paired_best_ms(on_mlu, cpu_op, repeats=repeats, burst=BURST)
            fell_back = sum(fallback.counts().values()) - before
            note = f"best of calls in alternating bursts of {BURST} with torch CPU" + (f"; {fell_back} CPU fallbacks!" if fell_back else "")
            target = TARGETS.get(family)
            if target is None:
                note += "; no target in the issue"
            result = row(f"{family}: {name} (ms)", mlu_ms, cpu_ms, None, unit="ms", note=note)
            if target is not None and result["ratio"] is not None and result["ratio"] > target:
                result["note"] = f"above the family's {target:g}x; " + result["note"]
            result["family"] = family
            if fell_back:
                result["pass"] = False
            rows.append(result)
    for family, target in TARGETS.items():
        members = [r for r in rows if r.get("family") == family]
        rows.append(geometric_mean_row(f"{family}: geometric mean of {len(members)} ops (ms)", members, target,
                                       short=lambda name: name.split(": ", 1)[1].removesuffix(" (ms)")))
    return rows


# ---- conformance totals ---------------------------------------------------------------------------------------------
def _totals_from_csv(path: str) -> dict:
    with open(path, newline="") as handle:
        records = list(csv.DictReader(handle))

    def number(record, column):
        return int(record[column] or 0)

    totals = {"ops": len(records), "native_ops": sum(r["native"] == "True" for r in records),
              "crashed": sum(r["problem"].startswith("crash") for r in records),
              "hung": sum(r["problem"].startswith("hang") for r in records)}
    native = [r for r in records if r["native"] == "True"]
    for phase in ("forward", "gradient"):
        passed = sum(number(r, f"{phase}_passed") for r in native)
        compared = sum(number(r, f"{phase}_samples") - number(r, f"{phase}_skipped") for r in native)
        totals[f"native_{phase}"] = {"passed": passed, "compared": compared,
                                     "pass_rate": passed / compared if compared else None}
    return totals


def _totals_from_run(quick: bool) -> dict:
    from torch_mlu.conformance import report, runner
    names = FAST_CONFORMANCE_OPS[:6] if quick else FAST_CONFORMANCE_OPS
    summary = report.totals(runner.run(names, jobs=2))
    for phase in ("forward", "gradient"):
        data = summary[f"native_{phase}"]
        summary[f"native_{phase}"] = {"passed": data["passed"], "compared": data["compared"],
                                      "pass_rate": data["pass_rate"]}
    return summary


def conformance_rows(quick: bool, csv_path: str | None) -> list[dict]:
    csv_path = csv_path or os.environ.get(CONFORMANCE_ENVIRONMENT)
    if csv_path:
        totals, source = _totals_from_csv(csv_path), f"from {csv_path}"
    else:
        started = time.monotonic()
        totals = _totals_from_run(quick)
        source = (f"fast subset of {totals['ops']} OpInfos run here in {time.monotonic() - started:.0f} s "
                  f"(the whole op_db: mlusim conformance torch --csv F, then --conformance-csv F)")
    rows = [row("conformance: OpInfos run natively", totals["native_ops"], None, None, unit="",
                note=f"of {totals['ops']}; {totals['crashed']} crashed, {totals['hung']} hung; {source}")]
    if not csv_path:
        rows[0]["note"] += "; the target (>= 150) is the whole op_db's"
    else:
        rows[0]["pass"] = totals["native_ops"] >= 150 and totals["crashed"] == totals["hung"] == 0
        rows[0]["note"] += "; target >= 150, no crash or hang"
    for phase, target in (("forward", 98.0), ("gradient", 95.0)):
        data = totals[f"native_{phase}"]
        rate = 100 * data["pass_rate"] if data["pass_rate"] is not None else 0.0
        result = row(f"conformance: native ops' {phase} samples passed (%)", rate, None, None, unit="%",
                     note=f"{data['passed']} of {data['compared']}; target >= {target:g}%")
        result["pass"] = rate >= target
        rows.append(result)
    return rows


def run(report=print, quick: bool = False, conformance_csv: str | None = None) -> list[dict]:
    """Every figure of the suite (`mlusim bench ops-torch`); `quick`: smaller shapes and models (a smoke test)."""
    report(f"torch {torch.__version__}; torch_mlu {torch_mlu.__version__}; board {torch.mlu.get_device_name()}; "
           f"torch CPU threads {torch.get_num_threads()}; {torch_spin.note()}; times are host times on this machine "
           "(its load shows in them; the ratios are what counts)")
    rows = native_share_rows(quick)
    rows += family_rows(quick)
    rows += conformance_rows(quick, conformance_csv)
    return reported(rows, report)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller shapes and models (a smoke test)")
    parser.add_argument("--conformance-csv", help="the CSV of a `mlusim conformance torch --csv F` run (default: "
                                                  f"${CONFORMANCE_ENVIRONMENT}, else a fast subset is run)")
    args = parser.parse_args(argv)
    rows = run(quick=args.quick, conformance_csv=args.conformance_csv)
    return 0 if all(r["pass"] is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
