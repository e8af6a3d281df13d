"""The suite's order: the measured slowest tests first, every other test in its place."""

from __future__ import annotations

import pytest

from tests.support.paths import ROOT
from tests.support.slow_first import listed, measured, rank

RUN = """\
============================= slowest 150 durations ============================
150.74s call     tests/project/test_benchmarks.py::test_quick[bench_worker]
20.50s setup    tests/cli/test_doctor.py::test_each_failure[bad
2.00s teardown tests/cli/test_doctor.py::test_each_failure[bad
9.99s call     tests/web/test_fast.py::test_short
0.01s call     tests/web/test_fast.py::test_shorter
"""


def test_durations_are_summed_per_test_and_short_ones_left_out() -> None:
    assert measured(RUN.splitlines()) == [
        (150.74, "tests/project/test_benchmarks.py::test_quick[bench_worker]"),
        (22.5, "tests/cli/test_doctor.py::test_each_failure[bad"),
    ]


def test_a_cut_parametrised_id_matches_as_a_prefix_and_the_rest_go_last() -> None:
    slowest = [test for _, test in measured(RUN.splitlines())]
    assert rank("tests/cli/test_doctor.py::test_each_failure[bad webhook secret]", slowest) == 1
    assert rank("tests/web/test_fast.py::test_short", slowest) == 2


def test_the_committed_list_names_tests_that_exist(request: pytest.FixtureRequest) -> None:
    slowest = listed()
    assert len(slowest) >= 50
    assert [test for test in slowest if not (ROOT / test.split("::")[0]).is_file()] == []
    # Within the files this run collected, a renamed or removed test leaves a line that
    # orders nothing: refresh the list. A run that deselects by mark (the fast lane
    # deselects every listed test) cannot tell; the full run checks it.
    if request.config.getoption("markexpr"):
        return
    collected = [item.nodeid for item in request.session.items]
    files = {test.split("::")[0] for test in collected}
    stale = [
        test
        for test in slowest
        if test.split("::")[0] in files and not any(t.startswith(test) for t in collected)
    ]
    assert stale == []


def test_every_listed_test_is_marked_slow_and_so_leaves_the_fast_lane(
    request: pytest.FixtureRequest,
) -> None:
    slowest = listed()
    listed_here = [
        item for item in request.session.items if rank(item.nodeid, slowest) < len(slowest)
    ]
    assert [item.nodeid for item in listed_here if item.get_closest_marker("slow") is None] == []
    # And the mark is what `-m "not slow"` reads: this very test is not listed, so not slow.
    assert request.node.get_closest_marker("slow") is None


def test_a_merge_keeps_the_committed_lines_and_adds_the_fast_lanes_slowest() -> None:
    from tests.support.slow_first import merged

    current = {"tests/a.py::test_kept": 40.0, "tests/b.py::test_both": 12.0}
    found = [*measured(RUN.splitlines(), 20.0), (30.0, "tests/b.py::test_both")]
    assert merged(current, found) == [
        (150.74, "tests/project/test_benchmarks.py::test_quick[bench_worker]"),
        (40.0, "tests/a.py::test_kept"),
        (30.0, "tests/b.py::test_both"),
        (22.5, "tests/cli/test_doctor.py::test_each_failure[bad"),
    ]
