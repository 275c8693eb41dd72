"""The periodic ranking broadcast runs once per change of a campaign, not
once per process: server processes claim each change through Redis."""
import multiprocessing

from app.realtime import RedisChanges


def _claimer(url, rounds, queue):
    store = RedisChanges(url)  # its own connection, as each server process has
    claimed = []
    for _ in range(rounds):
        store.bump(7)
        version = store.versions_of([7])[7]
        if store.claim(7, version, interval=0.001):
            claimed.append(version)
    queue.put(claimed)


def test_each_change_is_claimed_by_one_process_only(redis_url):
    import redis

    redis.Redis.from_url(redis_url).delete("bozka:changes:7", "bozka:broadcast-lock:7", "bozka:broadcast-done:7")
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    workers = [context.Process(target=_claimer, args=(redis_url, 300, queue)) for _ in range(3)]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    claimed = [version for result in results for version in result]
    assert claimed, "no process ever broadcast"
    assert len(claimed) == len(set(claimed))  # no change broadcast twice
    assert all(result == sorted(result) for result in results)


def test_a_version_once_claimed_is_not_claimed_again_by_another_process(redis_url):
    import redis

    redis.Redis.from_url(redis_url).delete("bozka:changes:8", "bozka:broadcast-lock:8", "bozka:broadcast-done:8")
    first, second = RedisChanges(redis_url), RedisChanges(redis_url)
    first.bump(8)
    version = second.versions_of([8])[8]
    assert [first.claim(8, version, 0.001), second.claim(8, version, 0.001)].count(True) == 1
    import time

    time.sleep(0.01)  # the lock has expired: still nothing new to broadcast
    assert not second.claim(8, version, 0.001)
    first.bump(8)
    time.sleep(0.01)
    assert second.claim(8, version + 1, 0.001)
