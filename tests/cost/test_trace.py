"""Trace recording: the context manager, the Chrome trace / Perfetto JSON structure, the environment switch."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import cnrt
from mlusim import trace
from mlusim import device as devices

ROOT = Path(__file__).resolve().parents[2]


def _some_work():
    queues = [cnrt.queueCreate(), cnrt.queueCreate()]
    values = np.arange(1 << 16, dtype=np.float32)
    copied, filled = cnrt.malloc(values.nbytes), cnrt.malloc(values.nbytes)  # one each: the queues run concurrently
    cnrt.memcpyAsync(copied, values, values.nbytes, queues[0], cnrt.cnrtMemcpyHostToDev)
    cnrt.memsetAsync(filled, 0, values.nbytes, queues[1])
    cnrt.syncDevice()
    return queues, values.nbytes


def test_records_name_queue_kind_bytes_and_both_intervals(tmp_path):
    with trace.recording(tmp_path / "trace.json") as recorder:
        queues, nbytes = _some_work()
    # the two queues run concurrently: records come in the order the commands finished
    copy, fill = sorted(recorder.records, key=lambda record: record.kind)
    assert (copy.kind, copy.name, copy.queue, copy.nbytes) == ("memcpy", "cnrtMemcpyAsync", queues[0].ident, nbytes)
    assert (fill.kind, fill.queue, fill.nbytes) == ("memset", queues[1].ident, nbytes)
    for record in (copy, fill):
        assert record.host_end >= record.host_start > 0
        assert record.model_end > record.model_start >= 0
        assert record.device == 0 and record.board == devices.get(0).spec.name
    assert (tmp_path / "trace.json").exists()


def test_nothing_is_recorded_outside_the_block():
    with trace.recording() as recorder:
        pass
    _some_work()
    assert recorder.records == []


def test_chrome_trace_has_host_and_modelled_tracks_per_device_and_queue(tmp_path):
    path = tmp_path / "trace.json"
    with trace.recording(path):
        queues, _ = _some_work()
    document = json.loads(path.read_text())
    assert set(document) >= {"traceEvents", "displayTimeUnit", "otherData"}
    events = document["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert len(processes) == 2
    host_pid = next(pid for pid, name in processes.items() if "host" in name)
    model_pid = next(pid for pid, name in processes.items() if "modelled" in name)
    assert all(name.startswith("device 0") for name in processes.values())
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert set(threads) == {(pid, q.ident) for pid in (host_pid, model_pid) for q in queues}
    complete = [e for e in events if e["ph"] == "X"]
    assert len(complete) == 4  # two commands, each on the host and the modelled timeline
    for event in complete:
        assert {"name", "cat", "ts", "dur", "pid", "tid", "args"} <= set(event)
        assert event["dur"] >= 0 and event["ts"] >= 0
        assert event["args"]["bytes"] == 1 << 18
    modelled = sorted((e for e in complete if e["pid"] == model_pid), key=lambda e: e["tid"])
    assert [e["cat"] for e in modelled] == ["memcpy", "memset"]
    assert modelled[0]["dur"] == modelled[0]["args"]["modelled_us"]
    assert "estimate" in document["otherData"]["note"]


def test_every_device_gets_its_own_tracks():
    devices.configure(memory=64 << 20, device_count=2)
    with trace.recording() as recorder:
        for index in (0, 1):
            cnrt.setDevice(index)
            pointer = cnrt.malloc(4096)
            cnrt.memset(pointer, 0, 4096)
    cnrt.setDevice(0)
    names = [e["args"]["name"] for e in recorder.chrome_trace()["traceEvents"] if e["name"] == "process_name"]
    assert sorted(n.split(":")[0] for n in names) == ["device 0 MLU370-X4"] * 2 + ["device 1 MLU370-X4"] * 2


def test_the_environment_switch_writes_the_trace_at_exit(tmp_path):
    path = tmp_path / "env-trace.json"
    script = ("import cnrt\n"
              "p = cnrt.malloc(1024)\n"
              "cnrt.memset(p, 0, 1024)\n")
    environment = dict(os.environ, MLUSIM_TRACE=str(path), MLUSIM_ARCH="MLU370-X4", MLUSIM_MEMORY="64MiB")
    subprocess.run([sys.executable, "-c", script], env=environment, check=True, cwd=ROOT, timeout=120)
    events = json.loads(path.read_text())["traceEvents"]
    assert [e["cat"] for e in events if e["ph"] == "X"] == ["memset", "memset"]


def test_the_switch_values():
    assert trace.trace_path_from_environment({}) is None
    assert trace.trace_path_from_environment({"MLUSIM_TRACE": "0"}) is None
    assert trace.trace_path_from_environment({"MLUSIM_TRACE": "1"}) == Path(trace.DEFAULT_TRACE_FILE)
    assert trace.trace_path_from_environment({"MLUSIM_TRACE": "out/t.json"}) == Path("out/t.json")
