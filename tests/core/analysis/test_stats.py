import math

import numpy as np

from core.analysis.stats import break_even_iterations, speedup, summarize


def test_summarize_known_values():
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s.n == 5 and s.median == 3.0 and s.min == 1.0 and s.max == 100.0
    assert s.mean == 22.0
    assert math.isclose(s.p90, np.percentile([1, 2, 3, 4, 100], 90))
    assert math.isclose(s.std, np.std([1, 2, 3, 4, 100], ddof=1))
    assert summarize([]) is None


def test_speedup_interval_brackets_the_ratio_and_is_reproducible():
    rng = np.random.default_rng(1)
    eager = 10 + rng.normal(0, 0.5, 200)
    compiled = 5 + rng.normal(0, 0.25, 200)
    sp = speedup(eager, compiled)
    assert 1.9 < sp.value < 2.1
    assert sp.ci_low < sp.value < sp.ci_high
    assert sp.ci_high - sp.ci_low < 0.3
    assert speedup(eager, compiled) == sp
    assert speedup([], compiled) is None


def test_break_even():
    assert break_even_iterations(2.0, 10.0, 6.0) == 500.0  # 2000 ms / 4 ms saved per call
    assert break_even_iterations(2.0, 5.0, 6.0) is None  # compiled is slower: never pays off
    assert break_even_iterations(None, 5.0, 4.0) is None


def test_speedup_without_interval():
    sp = speedup([2.0, 2.0], [1.0, 1.0], resamples=0)
    assert sp.value == 2.0 and math.isnan(sp.ci_low) and math.isnan(sp.ci_high)


def test_histograms_share_bins_and_count_what_they_leave_out():
    import numpy as np

    from core.analysis.stats import histograms

    eager = np.r_[np.full(200, 10.0) + np.linspace(0, 1, 200), 500.0]  # one slow call
    compiled = np.full(200, 5.0) + np.linspace(0, 1, 200)
    h = histograms({"e": eager, "c": compiled, "empty": []})
    assert set(h.counts) == {"e", "c"} and h.outside >= 1
    assert all(len(c) == len(h.edges) - 1 for c in h.counts.values())
    assert h.edges[-1] < 500  # the outlier does not stretch the bins
    assert sum(h.counts["e"]) + sum(h.counts["c"]) + h.outside == len(eager) + len(compiled)
    assert histograms({"x": []}) is None


def test_the_bootstrap_draws_the_same_resamples_whatever_its_chunk(monkeypatch):
    """Resamples are drawn in chunks of at most BOOTSTRAP_CHUNK_VALUES values (memory stays
    bounded at a million calls); the chunk's size changes how often numpy is called, never
    which resamples are drawn: the same interval at 10 resamples a chunk as at all at once."""
    from core.analysis import stats

    rng = np.random.default_rng(3)
    eager = {p: rng.normal(50, 2, 30) for p in range(3)}
    compiled = {p: rng.normal(45, 2, 30) for p in range(3)}
    whole = stats.speedup_over_processes(eager, compiled)
    one = stats.speedup(eager[0], compiled[0])
    monkeypatch.setattr(stats, "BOOTSTRAP_CHUNK_VALUES", 300)  # 10 resamples of 30 calls a chunk
    assert stats.speedup_over_processes(eager, compiled) == whole
    assert stats.speedup(eager[0], compiled[0]) == one
    assert whole.ci_low < whole.value < whole.ci_high


def test_the_bootstrap_medians_by_sort_are_np_median_exactly(monkeypatch):
    """Short resamples take their medians from a sort of each row (BOOTSTRAP_SORT_MAX_N):
    the very values np.median gives, odd and even sizes, ties and a NaN included, so every
    interval is what it was."""
    from core.analysis import stats

    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 30, 31, 120, 501):
        values = rng.normal(20, 3, n).round(1)  # rounded: ties
        for with_nan in (False, True):
            if with_nan:
                values = values.copy()
                values[0] = np.nan
            fast = stats.bootstrap_medians(values, float(np.median(values)), 300, np.random.default_rng(1))
            monkeypatch.setattr(stats, "BOOTSTRAP_SORT_MAX_N", 0)  # np.median for every size
            slow = stats.bootstrap_medians(values, float(np.median(values)), 300, np.random.default_rng(1))
            monkeypatch.undo()
            assert np.array_equal(fast, slow, equal_nan=True), (n, with_nan)
