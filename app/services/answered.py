"""Answered items read in batches, for the exports (services/export.py).

Each batch is read in a short transaction of its own, by the answer's
place in time (campaign, answered_at, id: the index ix_items_answered): one
long read would keep SQLite's write-ahead log from being checkpointed for
as long as the slowest client takes to download, and every commit of the
site grows slower while the log grows (docs/benchmarks.md, "Exports while
volunteers judge").
"""
from sqlalchemy import or_

from ..models import Item, utcnow

BATCH = 2000


def answered_items(engine, query, batch=BATCH):
    """The rows of ``query`` (a select of items that has ``Item.id`` and
    ``Item.answered_at`` among its columns) answered before this call, in
    the order they were answered. A row changed during the download (a
    dismissal) shows as it was when its batch was read."""
    for rows, _also in answered_batches(engine, query, batch=batch):
        yield from rows


def answered_batches(engine, query, also=None, batch=BATCH):
    """``answered_items`` a batch at a time: (rows, ``also(connection,
    rows)``), what the caller reads about the batch's rows (their
    volunteers' flags) in the batch's own short read (None without ``also``)."""
    until = utcnow()
    query = query.where(Item.answered_at < until).order_by(Item.answered_at, Item.id).limit(batch)
    after = None
    while True:
        page = query
        if after is not None:
            at, item_id = after
            # The range on answered_at alone lets the index seek to the last batch's end;
            # the OR alone would make SQLite read the index from its start each time.
            page = query.where(Item.answered_at >= at, or_(Item.answered_at > at, Item.id > item_id))
        with engine.connect() as connection:
            rows = connection.execute(page).all()
            extra = also(connection, rows) if also is not None and rows else None
        if rows:
            yield rows, extra
        if len(rows) < batch:
            return
        after = (rows[-1].answered_at, rows[-1].id)
