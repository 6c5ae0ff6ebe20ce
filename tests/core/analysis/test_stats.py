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


def _histograms_by_numpy(series, max_bins=60, percentiles=(1, 99)):
    """The definition `histograms` keeps: np.percentile over every value, np.histogram a series."""
    import numpy as np

    series = {k: np.asarray(v, dtype=float) for k, v in series.items()}
    series = {k: v for k, v in series.items() if v.size}
    every = np.concatenate(list(series.values()))
    low, high = (float(v) for v in np.percentile(every, percentiles))
    if high <= low:
        high = low + max(low * 0.01, 1e-3)
    outside = int(np.count_nonzero((every < low) | (every > high)))
    edges = np.linspace(low, high, min(max_bins, max(10, int(np.sqrt(every.size)))) + 1)
    counts = {k: np.histogram(v[(v >= low) & (v <= high)], bins=edges)[0] for k, v in series.items()}
    return edges, counts, outside


def test_histograms_are_numpys_percentiles_and_histograms_exactly():
    """Read from sorted series (no merge, no sort of everything), the edges, counts and outside
    count are bit for bit those of np.percentile and np.histogram: sizes from 1 value to tens of
    thousands, ties, values rounded to a few steps (many on the edges), one value repeated,
    percentiles near either end and in the middle."""
    import numpy as np

    from core.analysis.stats import histograms

    rng = np.random.default_rng(7)
    cases = 0
    for trial in range(300):
        parts = int(rng.integers(1, 9))
        series = {}
        for i in range(parts):
            n = int(rng.choice([0, 1, 2, 3, 7, 50, 499, 3000, 20000]))
            values = rng.lognormal(mean=rng.uniform(0, 3), sigma=rng.uniform(0.01, 1), size=n)
            if trial % 3 == 1:
                values = np.round(values, 1)  # ties, and values exactly on the edges
            if trial % 7 == 2:
                values = np.full(n, 4.25)  # a series of one value
            series[("job", i)] = values
        if not any(len(v) for v in series.values()):
            assert histograms(series) is None
            continue
        q = [(1, 99), (0, 100), (50, 50.5), (2.5, 97.5), (30, 99.9)][trial % 5]
        h = histograms(series, percentiles=q)
        edges, counts, outside = _histograms_by_numpy(series, percentiles=q)
        assert np.array_equal(h.edges, edges) and h.outside == outside
        assert list(h.counts) == list(counts)
        for key in counts:
            assert np.array_equal(h.counts[key], counts[key]) and h.counts[key].dtype == counts[key].dtype
        cases += 1
    assert cases > 250


def test_sorted_series_sorts_a_series_again_only_when_it_changed():
    import numpy as np

    from core.analysis.stats import SortedSeries, histograms

    kept = SortedSeries()
    done, running = np.array([3.0, 1.0, 2.0]), [5.0, 4.0]
    first = kept.get("done", done)
    assert list(first) == [1.0, 2.0, 3.0] and kept.get("done", done.copy()) is first  # unchanged: kept
    assert list(kept.get("running", running)) == [4.0, 5.0]
    assert list(kept.get("running", running + [0.5])) == [0.5, 4.0, 5.0]  # grew: sorted again
    assert list(kept.get("done", [3.0, 1.0, 9.0])) == [1.0, 3.0, 9.0]  # same size, other values
    h1 = histograms({"done": done, "running": running + [0.5]}, kept=kept)
    h2 = histograms({"done": done, "running": running + [0.5]})
    assert np.array_equal(h1.edges, h2.edges) and all(np.array_equal(h1.counts[k], h2.counts[k]) for k in h2.counts)
    kept.keep_only({"running"})
    assert kept.get("running", running + [0.5]) is kept.get("running", running + [0.5])
    assert list(kept.get("done", done)) == [1.0, 2.0, 3.0]  # forgotten, so sorted anew
    calls = []

    def read():
        calls.append(1)
        return [2.0, 1.0]

    assert list(kept.get("store", read, version=2)) == [1.0, 2.0]
    assert list(kept.get("store", read, version=2)) == [1.0, 2.0] and len(calls) == 1  # its version: not read
    kept.get("store", read, version=3)
    assert len(calls) == 2


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
