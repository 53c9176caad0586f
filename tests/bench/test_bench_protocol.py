"""Job/Result JSON shapes: round trips, validation messages, strict JSON."""
import json

import pytest

from tfperf_lsp.bench import protocol
from tfperf_lsp.bench.protocol import (Comparison, Device, ErrorInfo, Frame, GpuInfo, Job, JobError,
                                       ProtocolError, Result, Variant, VariantStats)

RUN = "def __tfperf_run__():\n    return 1\n"


def job(**kw):
    base = dict(prelude="import math\n", variants=[Variant("original", RUN), Variant("rewritten", RUN)])
    base.update(kw)
    return Job(**base)


def full_result():
    dev = Device(kind="gpu", name="NVIDIA RTX", compute_capability="8.6", cpu_features=["avx512f"],
                 gpus=[GpuInfo(0, "NVIDIA RTX", "8.6")], cpu_name="Xeon", cpu_count=8, platform="Linux")
    return Result(
        verdict="faster", summary="2.00x faster",
        variants=[VariantStats(name="original", first_call_s=0.4, median_s=0.002, samples_s=[0.002] * 10,
                               calls_per_sample=25, traces_first_call=1, traces_during_timing=0,
                               output_devices=["GPU:0"], warnings=["w"]),
                  VariantStats(name="rewritten", median_s=0.001, peak_memory_bytes=1024)],
        comparisons=[Comparison(baseline="original", candidate="rewritten", verdict="faster",
                                timing_verdict="faster", speedup=2.0, ci_low=1.9, ci_high=2.1,
                                ci_coverage=0.979, pairs=10, outputs_match=True, max_abs_err=0.0,
                                max_rel_err=1e-7)],
        outputs_match=True, warnings=["x"], device=dev, placement="gpu:0", tf_version="2.21.0",
        python="3.11.7", timing={"pairs": 10, "single_shot": False})


def test_job_round_trips_through_json():
    j = job(budget_s=1.5, device="gpu:1", seed=7, inputs="x: float32[100,100]", meta={"uri": "file:///a.py"})
    again = Job.from_dict(json.loads(json.dumps(protocol.job_msg(j)))["job"])
    assert again == j
    assert again.validate() is again


def test_job_defaults_match_the_contract():
    j = Job.from_dict({"prelude": "", "variants": [{"name": "a", "source": RUN}, {"name": "b", "source": RUN}]})
    assert (j.budget_s, j.min_sample_s, j.max_pairs, j.device, j.seed, j.compare) == \
        (3.0, 0.05, 30, "auto", 0, True)


@pytest.mark.parametrize("change,message", [
    (dict(variants=[Variant("a", RUN)]), "2 to 4 variants"),
    (dict(variants=[Variant("a", RUN), Variant("a", RUN)]), "unique"),
    (dict(variants=[Variant("a", RUN), Variant("b", "x = 1\n")]), "must define `def __tfperf_run__"),
    (dict(variants=[Variant("a", RUN), Variant("b", "def __tfperf_run__(:\n")]), "variant 'b' has a syntax error at line 1"),
    (dict(prelude="import (\n"), "prelude has a syntax error"),
    (dict(budget_s=11), "budget_s must be in"),
    (dict(budget_s=0), "budget_s must be in"),
    (dict(device="tpu"), "device must be"),
    (dict(max_pairs=3), "max_pairs"),
    (dict(seed=-1), "seed"),
    (dict(compare="yes"), "compare"),
    (dict(variants=[Variant("a", RUN), Variant(" ", RUN)]), "non-empty name"),
])
def test_invalid_jobs_are_rejected_with_the_field_named(change, message):
    with pytest.raises(JobError, match=message.replace("(", r"\(").replace("`", "`")):
        job(**change).validate()


def test_from_dict_names_the_missing_or_mistyped_field():
    with pytest.raises(ProtocolError, match="missing field 'prelude'"):
        Job.from_dict({"variants": []})
    with pytest.raises(ProtocolError, match=r"job.variants\[1\]: missing field 'source'"):
        Job.from_dict({"prelude": "", "variants": [{"name": "a", "source": ""}, {"name": "b"}]})
    with pytest.raises(ProtocolError, match="budget_s"):
        Job.from_dict({"prelude": "", "variants": [], "budget_s": "3"})
    with pytest.raises(ProtocolError, match="budget_s: expected .* got bool"):
        Job.from_dict({"prelude": "", "variants": [], "budget_s": True})


def test_result_round_trips_through_json_including_nested_objects():
    r = full_result()
    again = Result.from_json(r.to_json())
    assert again == r
    err = protocol.error_result("exception", "ValueError: boom", variant="rewritten", phase="timing",
                                frames=[Frame("rewritten", 3, "raise ValueError('boom')")],
                                stderr_tail="tail", tf_version="2.21.0")
    again = Result.from_json(err.to_json())
    assert again == err
    assert again.error.frames[0].line == 3 and again.tf_version == "2.21.0"
    assert again.verdict == "error" and "boom" in again.summary


def test_result_validation_catches_bad_values():
    d = full_result().to_dict()
    d["verdict"] = "fast"
    with pytest.raises(ProtocolError, match="verdict 'fast'"):
        Result.from_dict(d)
    d = full_result().to_dict()
    d["variants"][0]["median_s"] = "2 ms"
    with pytest.raises(ProtocolError, match=r"variant_stats.median_s: expected float \| None"):
        Result.from_dict(d)
    d = full_result().to_dict()
    d["error"] = {"kind": "oops", "message": "x"}
    with pytest.raises(ProtocolError, match="error.kind 'oops'"):
        Result.from_dict(d)
    d = full_result().to_dict()
    d["device"]["kind"] = "tpu"
    with pytest.raises(ProtocolError, match="device.kind"):
        Result.from_dict(d)


def test_unknown_fields_from_a_newer_worker_are_ignored():
    d = full_result().to_dict()
    d["variants"][0]["future_field"] = 1
    assert Result.from_dict(d).variants[0].name == "original"


def test_lines_are_strict_json_and_non_finite_numbers_become_null():
    r = full_result()
    r.comparisons[0].max_rel_err = float("inf")
    r.variants[0].samples_s = [float("nan"), 1.0]
    line = protocol.dumps(protocol.result_msg(r))
    assert "\n" not in line and "NaN" not in line and "Infinity" not in line
    back = json.loads(line)["result"]
    assert back["comparisons"][0]["max_rel_err"] is None
    assert back["variants"][0]["samples_s"] == [None, 1.0]


def test_message_envelopes_are_checked():
    dev = Device(kind="cpu", name="cpu")
    assert protocol.check_message(protocol.ready_msg("2.21.0", "3.11", dev, 1))["type"] == "ready"
    assert protocol.check_message(protocol.progress_msg(1.7, "x"))["fraction"] == 1.0
    with pytest.raises(ProtocolError, match="unknown message type 'hello'"):
        protocol.check_message({"type": "hello"})
    with pytest.raises(ProtocolError, match="progress: missing field 'fraction'"):
        protocol.check_message({"type": "progress", "message": "x"})
    with pytest.raises(ProtocolError, match="not a JSON line"):
        protocol.loads(b"Traceback (most recent call last):")
    with pytest.raises(ProtocolError, match="JSON object"):
        protocol.loads("[1, 2]")


def test_device_identity_and_label():
    cpu = Device(kind="cpu", name="AMD EPYC", cpu_features=["avx2", "avx512f"], cpu_name="AMD EPYC")
    assert cpu.label() == "CPU: AMD EPYC"
    gpu = Device(kind="gpu", name="NVIDIA A100", compute_capability="8.0", cpu_name="AMD EPYC",
                 gpus=[GpuInfo(0, "NVIDIA A100", "8.0")])
    assert gpu.label() == "GPU: NVIDIA A100 (cc 8.0)"
    assert cpu.identity() != gpu.identity()
    assert ErrorInfo.from_dict({"kind": "timeout", "message": "m"}).frames == []
