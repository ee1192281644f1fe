"""tools.bench_engine runs end to end on tiny sizes and reports every kernel and the memory ratio."""

import pytest

from tools import bench_engine as bench


def test_bench_prints_a_table_for_small_sizes(capsys):
    assert bench.main(["--sizes", "64", "96", "--repeats", "1", "--heads", "2", "--dim", "8"]) == 0
    out = capsys.readouterr().out
    assert "B=1 H=2 d=8 float32, medians of 1 interleaved runs" in out
    lines = [line.split() for line in out.splitlines()]
    rows = [cells for cells in lines if cells and cells[0] in {"64", "96"}]
    assert len(rows) == 2
    assert "tiled GFLOP/s" in out and out.count("%") >= 2


def test_peak_bytes_sees_numpy_allocations():
    import numpy as np

    assert bench.peak_bytes(lambda: np.ones(1_000_000)) >= 8_000_000


def test_bench_rejects_bad_arguments():
    with pytest.raises(SystemExit):
        bench.main(["--repeats", "0"])
