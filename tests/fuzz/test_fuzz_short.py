"""A short run of the repository's fuzzer (tests/fuzz/fuzzer.py) in the test suite:
each seed in its own subprocess, so a crash fails this test with its seed.  The long
run is `python -m tests.fuzz.run --seeds 0:400 --calls 3000`."""

from .run import fuzz

SEEDS = range(1000, 1006)
CALLS = 250


def test_fuzz_short_run():
    s = fuzz(SEEDS, CALLS, jobs=1)
    assert not s["crashes"], s["crashes"]
    assert not s["findings"], s["findings"]
    assert s["seeds"] == len(SEEDS)
    # formats the draw refuses are not counted as calls: most draws are valid
    assert s["calls"] >= 0.85 * CALLS * len(SEEDS), s
    assert s["compared"] >= 0.8 * s["calls"], s
