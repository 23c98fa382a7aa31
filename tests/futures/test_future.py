"""aot.futures against torch.futures' documented contract: the docs' examples (numpy values in
place of tensors), each documented behaviour, and thread stress."""
from __future__ import annotations

import itertools
import logging
import threading
import time

import numpy as np
import pytest

from aot import futures
from aot.futures import Future, collect_all, wait_all


# --- the documentation's examples, as written, with numpy arrays ------------------------------
def test_doc_then_example(capsys):
    def callback(fut):
        print(f"RPC return value is {fut.wait()}.")

    fut = futures.Future()
    cb_fut = fut.then(callback)
    chain_cb_fut = cb_fut.then(lambda x: print(f"Chained cb done. {x.wait()}"))
    fut.set_result(5)
    assert capsys.readouterr().out == "RPC return value is 5.\nChained cb done. None\n"
    assert chain_cb_fut.done() and chain_cb_fut.wait() is None


def test_doc_add_done_callback_example(capsys):
    def callback(fut):
        print("This will run after the future has finished.")
        print(fut.wait())

    fut = futures.Future()
    fut.add_done_callback(callback)
    fut.set_result(5)
    assert capsys.readouterr().out == "This will run after the future has finished.\n5\n"


def test_doc_set_result_example():
    def slow_set_future(fut, value):
        time.sleep(0.5)
        fut.set_result(value)

    fut = futures.Future()
    t = threading.Thread(target=slow_set_future, args=(fut, np.ones(2) * 3))
    t.start()
    np.testing.assert_array_equal(fut.wait(), np.array([3.0, 3.0]))
    t.join()


def test_doc_set_exception_example():
    fut = futures.Future()
    fut.set_exception(ValueError("foo"))
    with pytest.raises(ValueError, match="foo"):
        fut.wait()


def test_doc_collect_all_example(capsys):
    fut0 = futures.Future()
    fut1 = futures.Future()
    fut = futures.collect_all([fut0, fut1])
    fut0.set_result(0)
    fut1.set_result(1)
    fut_list = fut.wait()
    print(f"fut0 result = {fut_list[0].wait()}")
    print(f"fut1 result = {fut_list[1].wait()}")
    assert capsys.readouterr().out == "fut0 result = 0\nfut1 result = 1\n"


def test_doc_wait_all_example():
    futs = [futures.Future() for _ in range(3)]
    for i, f in enumerate(futs):
        f.set_result(np.arange(i))
    out = futures.wait_all(futs)
    assert [len(v) for v in out] == [0, 1, 2]


# --- documented behaviours ---------------------------------------------------------------------
def test_done_and_value():
    f = Future()
    assert not f.done()
    with pytest.raises(RuntimeError, match="not completed"):
        f.value()
    f.set_result(np.float64(2.5))
    assert f.done() and f.value() == 2.5 and f.wait() == 2.5


def test_exception_raised_by_wait_and_value():
    err = ValueError("Intentional Value Error")
    f = Future()
    f.set_exception(err)
    assert f.done()
    for get in (f.wait, f.value):
        with pytest.raises(ValueError, match="Intentional") as info:
            get()
        assert info.value is err


def test_set_exception_wants_an_exception():
    with pytest.raises(TypeError, match="exception instance"):
        Future().set_exception("not an error")


@pytest.mark.parametrize("first, second", [("result", "result"), ("result", "exception"),
                                           ("exception", "result"), ("exception", "exception")])
def test_completed_only_once(first, second):
    f = Future()
    complete = {"result": lambda: f.set_result(1), "exception": lambda: f.set_exception(KeyError(1))}
    complete[first]()
    with pytest.raises(RuntimeError, match="completed once"):
        complete[second]()
    assert f.exception() is None if first == "result" else isinstance(f.exception(), KeyError)


def test_then_holds_the_callback_result():
    f = Future()
    g = f.then(lambda fut: fut.value() * 2)
    assert not g.done()
    f.set_result(np.array([1, 2]))
    np.testing.assert_array_equal(g.wait(), [2, 4])


def test_then_holds_the_callback_exception():
    f = Future()

    def bad(fut):
        raise ZeroDivisionError("in the callback")

    g = f.then(bad)
    f.set_result(1)
    with pytest.raises(ZeroDivisionError, match="in the callback"):
        g.wait()


def test_then_on_failed_future_propagates_through_value():
    f = Future()
    f.set_exception(ValueError("upstream"))
    g = f.then(lambda fut: fut.value() + 1)
    with pytest.raises(ValueError, match="upstream"):
        g.wait()
    h = f.then(lambda fut: "handled")  # a callback that does not read the value recovers
    assert h.wait() == "handled"


def test_callbacks_on_completed_future_run_inline():
    f = Future()
    f.set_result(3)
    seen = []
    f.add_done_callback(lambda fut: seen.append(fut.value()))
    assert seen == [3]  # before add_done_callback returned
    g = f.then(lambda fut: fut.value() + 1)
    assert g.done() and g.value() == 4


def test_callbacks_run_in_order_added():
    f = Future()
    seen = []
    for i in range(5):
        f.add_done_callback(lambda fut, i=i: seen.append(i))
    f.set_result(None)
    assert seen == list(range(5))


def test_callbacks_run_on_the_completing_thread():
    f = Future()
    where = []
    f.add_done_callback(lambda fut: where.append(threading.current_thread().name))
    t = threading.Thread(target=f.set_result, args=(1,), name="completer")
    t.start()
    t.join()
    assert where == ["completer"]


def test_done_callback_errors_are_logged_not_lost(caplog):
    f = Future()
    f.add_done_callback(lambda fut: 1 / 0)
    after = []
    f.add_done_callback(lambda fut: after.append(True))
    with caplog.at_level(logging.ERROR, logger="aot.futures"):
        f.set_result(1)  # does not raise
    assert after == [True]
    assert any("done callback" in r.getMessage() and r.exc_info[0] is ZeroDivisionError for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="aot.futures"):
        f.add_done_callback(lambda fut: 1 / 0)  # inline on a completed future: logged too
    assert any(r.exc_info and r.exc_info[0] is ZeroDivisionError for r in caplog.records)


def test_bad_callbacks_and_arguments_are_named():
    f = Future()
    with pytest.raises(TypeError, match="callback must be callable"):
        f.then(5)
    with pytest.raises(TypeError, match="callback must be callable"):
        f.add_done_callback(None)
    with pytest.raises(TypeError, match=r"futures\[1\]"):
        collect_all([f, 3])
    with pytest.raises(TypeError, match="futures must be a list"):
        wait_all(7)


def test_devices():
    assert Future().devices == []
    assert Future(devices=["cpu", "cuda:1", 0, "cuda"]).devices == ["cpu", "cuda:1", "cuda:0"]
    f = Future(devices=["cuda:0"])
    assert f.then(lambda fut: None).devices == ["cuda:0"]  # children inherit the devices
    for bad in (["tpu"], ["cuda:x"], [-1], [1.5]):
        with pytest.raises(ValueError, match="devices"):
            Future(devices=bad)


def test_generic_alias():
    assert isinstance(Future[int](), Future)


# --- collect_all / wait_all ----------------------------------------------------------------
def test_collect_all_empty():
    assert collect_all([]).wait() == [] and wait_all([]) == []


def test_collect_all_waits_for_every_future():
    futs = [Future() for _ in range(4)]
    combined = collect_all(futs)
    for f in futs[:3]:
        f.set_result(1)
    assert not combined.done()
    futs[3].set_result(2)
    assert combined.done() and combined.wait() == futs


def test_collect_all_fails_with_the_first_error():
    a, b, c = Future(), Future(), Future()
    combined = collect_all([a, b, c])
    b.set_exception(KeyError("b failed"))
    assert combined.done()  # without waiting for a and c
    with pytest.raises(KeyError, match="b failed"):
        combined.wait()
    c.set_exception(KeyError("c failed"))  # later errors do not complete it again
    a.set_result(0)


def test_wait_all_raises_without_waiting_for_the_rest():
    never = Future()  # never completed: wait_all must not wait for it
    failing = Future()
    threading.Timer(0.05, failing.set_exception, args=(OSError("disk"),)).start()
    with pytest.raises(OSError, match="disk"):
        wait_all([never, failing])


def test_wait_all_values_in_order():
    futs = [Future() for _ in range(8)]
    for i in reversed(range(8)):
        futs[i].set_result(i * i)
    assert wait_all(futs) == [i * i for i in range(8)]


# --- stress ----------------------------------------------------------------------------------
def test_ten_thousand_chained_callbacks():
    head = Future()
    tail = head
    for _ in range(10_000):
        tail = tail.then(lambda fut: fut.value() + 1)
    head.set_result(0)
    assert tail.wait() == 10_000


def test_ten_thousand_chained_done_callbacks_completing_each_other():
    futs = [Future() for _ in range(10_001)]
    for a, b in itertools.pairwise(futs):
        a.add_done_callback(lambda fut, b=b: b.set_result(fut.value() + 1))
    futs[0].set_result(0)
    assert futs[-1].wait() == 10_000


def test_racing_set_result_exactly_one_wins():
    for _ in range(50):
        f = Future()
        barrier = threading.Barrier(16)
        wins, losses = [], []

        def racer(i, f=f, barrier=barrier, wins=wins, losses=losses):
            barrier.wait()
            try:
                f.set_result(i)
            except RuntimeError:
                losses.append(i)
            else:
                wins.append(i)

        threads = [threading.Thread(target=racer, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(wins) == 1 and len(losses) == 15 and f.wait() == wins[0]


def test_sixteen_threads_completing_waiting_and_chaining():
    n = 200
    futs = [Future() for _ in range(n)]
    chained = [None] * n
    results = [None] * n
    counts = [0] * n
    lock = threading.Lock()
    barrier = threading.Barrier(16)

    def count(i):
        def cb(fut):
            with lock:
                counts[i] += 1
        return cb

    def worker(k):
        barrier.wait()
        for i in range(k, n, 16):  # chain onto futures other threads complete
            j = (i * 7 + 3) % n
            futs[j].add_done_callback(count(j))
            if k % 2 == 0:
                chained[i] = futs[i].then(lambda fut: fut.value() * 2).then(lambda fut: fut.value() + 1)
        for i in range(k, n, 16):
            futs[i].set_result(i)
        for i in range(n - 1 - k, -1, -16):  # wait on futures others complete
            results[i] = futs[i].wait()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
        assert not t.is_alive()
    assert results == list(range(n))
    expected = [0] * n
    for i in range(n):
        expected[(i * 7 + 3) % n] += 1
    assert counts == expected  # every callback ran exactly once, whichever thread added it
    for i, c in enumerate(chained):
        if c is not None:
            assert c.wait() == 2 * i + 1


def test_many_waiters_on_one_future():
    f = Future()
    got = []
    threads = [threading.Thread(target=lambda: got.append(f.wait())) for _ in range(16)]
    for t in threads:
        t.start()
    time.sleep(0.02)
    f.set_result("ready")
    for t in threads:
        t.join(timeout=10)
    assert got == ["ready"] * 16
