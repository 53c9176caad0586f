"""Summary and hover text of a Result."""
from tfperf_lsp.bench import report
from tfperf_lsp.bench.protocol import Comparison, Device, Result, VariantStats, error_result


def comp(verdict, speedup, lo, hi, **kw):
    return Comparison(baseline="original", candidate="rewritten", verdict=verdict, timing_verdict=verdict,
                      speedup=speedup, ci_low=lo, ci_high=hi, pairs=20, **kw)


def test_faster_line_has_speedup_interval_and_output_status():
    line = report.comparison_line(comp("faster", 1.84, 1.71, 1.97, outputs_match=True, max_rel_err=3e-7))
    assert line == "1.84x faster (95% CI 1.71-1.97x) - outputs match (max rel err 3e-07)"


def test_slower_line_states_the_slowdown():
    line = report.comparison_line(comp("slower", 0.5, 0.45, 0.55, outputs_match=True))
    assert line.startswith("2.00x slower (95% CI 1.82-2.22x)")


def test_equivalent_inconclusive_and_single_shot_lines():
    assert report.comparison_line(comp("equivalent", 1.01, 0.99, 1.02)).startswith("same speed within 3%")
    assert report.comparison_line(comp("inconclusive", 1.1, 0.9, 1.3)).startswith("inconclusive: 1.10x")
    c = comp("inconclusive", 1.5, None, None, single_shot=True)
    assert "single shot" in report.comparison_line(c)


def test_outputs_differ_and_unverified_are_visible():
    c = comp("faster", 2.0, 1.9, 2.1, outputs_match=False, mismatch="the output shape differs")
    c.verdict = "outputs-differ"
    assert "OUTPUTS DIFFER: the output shape differs" in report.comparison_line(c)
    c = comp("faster", 2.0, 1.9, 2.1, outputs_match=None, mismatch="cannot verify: the original is not deterministic")
    assert "outputs not verified (cannot verify" in report.comparison_line(c)


def test_hover_lines_for_a_result_and_an_error():
    r = Result(verdict="faster", summary="", tf_version="2.21.0", python="3.11.7",
               device=Device(kind="cpu", name="AMD EPYC"), timing={"pairs": 20},
               variants=[VariantStats(name="original", median_s=0.00241, first_call_s=0.412,
                                      samples_s=[1.0], calls_per_sample=8, traces_during_timing=0),
                         VariantStats(name="rewritten", median_s=0.00131, first_call_s=0.095,
                                      samples_s=[1.0], calls_per_sample=15, traces_during_timing=0)],
               comparisons=[comp("faster", 1.84, 1.71, 1.97, outputs_match=True)], warnings=["noisy"])
    r.summary = report.summarize(r)
    lines = report.hover_lines(r)
    assert lines[0].startswith("1.84x faster")
    assert lines[1] == "original   2.41 ms  (median, 20 pairs x 8 calls)"
    assert "first call (tracing/compile included): original 412 ms, rewritten 95 ms" in lines
    assert "traces during timing: original 0, rewritten 0" in lines
    assert "CPU: AMD EPYC - TF 2.21.0 - Python 3.11.7" in lines
    assert lines[-1] == "warning: noisy"
    e = error_result("exception", "ValueError: boom", variant="rewritten",
                     traceback="Traceback...\n  rewritten, line 2: boom()\nValueError: boom")
    e.summary = report.summarize(e)
    assert e.summary == "benchmark failed in rewritten: ValueError: boom"
    assert report.hover_lines(e)[-1] == "ValueError: boom"


def test_fmt_time_units():
    assert report.fmt_time(1.5) == "1.50 s"
    assert report.fmt_time(0.00241) == "2.41 ms"
    assert report.fmt_time(2.5e-6) == "2.5 us"
    assert report.fmt_time(None) == "?"


def test_peak_device_memory_is_shown_when_the_device_reports_it():
    from tfperf_lsp.bench.protocol import Comparison, Result, VariantStats
    from tfperf_lsp.bench.report import hover_lines

    result = Result(
        verdict="faster", summary="2.00x faster",
        variants=[VariantStats("original", median_s=0.002, peak_memory_bytes=64 * 2**20),
                  VariantStats("rewritten", median_s=0.001, peak_memory_bytes=16 * 2**20)],
        comparisons=[Comparison("original", "rewritten", "faster", "faster", speedup=2.0)],
    )
    assert "peak device memory: original 64.0 MiB, rewritten 16.0 MiB" in hover_lines(result)
    cpu = Result(verdict="faster", summary="x", variants=[VariantStats("a", median_s=1.0), VariantStats("b", median_s=1.0)])
    assert not any("peak device memory" in line for line in hover_lines(cpu))


def test_every_number_is_labelled_and_the_headline_agrees_with_each_comparison():
    def variant(name, first, graphs=None, traces=0):
        return VariantStats(name=name, median_s=0.001, first_call_s=first, samples_s=[0.001],
                            calls_per_sample=5, traces_during_timing=traces, graph_building_s=graphs)

    xla = Comparison("eager", "tf.function+XLA", "faster", "faster", speedup=3.0, ci_low=2.8, ci_high=3.2,
                     pairs=20, outputs_match=True, max_rel_err=1.4e-6, rtol=1e-4, tolerance_note="XLA")
    graph = Comparison("eager", "tf.function", "faster", "faster", speedup=2.0, ci_low=1.9, ci_high=2.1,
                       pairs=20, outputs_match=True, max_rel_err=0.0, rtol=1e-5)
    r = Result(verdict="faster", summary="", timing={"pairs": 20, "control": {
                   "speedup": 1.01, "ci95": [0.99, 1.03], "verdict": "equivalent", "noise_floor": 0.01}},
               variants=[variant("eager", 0.0621), variant("tf.function", 0.279, graphs=0.915),
                         variant("tf.function+XLA", 1.59)],
               comparisons=[graph, xla])
    r.summary = report.summarize(r)
    lines = report.hover_lines(r)
    assert lines[0].startswith("tf.function vs eager: 2.00x faster")
    assert lines[1] == ("tf.function+XLA vs eager: 3.00x faster (95% CI 2.80-3.20x) - outputs match "
                        "(max rel err 1e-06, rtol 0.0001 for XLA)")
    assert not any("DIFFER" in line for line in lines)
    assert "first call (tracing/compile included): eager 62.1 ms, tf.function 279 ms, tf.function+XLA 1.59 s" in lines
    # graphs built during timing that the counters did not see are not shown as a bare 0
    assert ("traces during timing: eager 0, tf.function 0 counted, but graphs built for 915 ms, "
            "tf.function+XLA 0") in lines
    assert "A/A control (the original twice): 1.01x (95% CI 0.99-1.03x), equivalent; intervals widened by 1.0%" in lines


def test_a_noisy_machine_says_so_with_its_noise_floor():
    c = comp("noisy-machine", 1.05, 0.9, 1.2, noise_floor=0.06)
    assert report.comparison_line(c).startswith(
        "noisy machine (identical code differs by 6% here): no verdict at 3%, 1.05x (95% CI 0.90-1.20x)")


def test_a_pipeline_reports_elements_per_second():
    r = Result(verdict="faster", summary="x", timing={"pairs": 10, "elements_per_call": 16},
               variants=[VariantStats(name="original", median_s=0.016, samples_s=[0.016], calls_per_sample=1),
                         VariantStats(name="rewritten", median_s=0.004, samples_s=[0.004], calls_per_sample=1)],
               comparisons=[comp("faster", 4.0, 3.5, 4.5)])
    lines = report.hover_lines(r)
    assert "original   16 ms  1k elements/s  (median, 10 pairs x 1 call)" in lines
    assert "rewritten  4 ms  4k elements/s  (median, 10 pairs x 1 call)" in lines
