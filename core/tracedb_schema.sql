-- SPDX-License-Identifier: BSD-3-Clause
-- tnbc trace database, schema version 2. See docs/schema.md.
-- One database per rank while running; `tnbc merge` folds them into one.
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run (
    rank          INTEGER PRIMARY KEY,   -- rank in MPI_COMM_WORLD
    world_size    INTEGER NOT NULL,
    host          TEXT    NOT NULL,      -- MPI_Get_processor_name
    pid           INTEGER NOT NULL,
    command_line  TEXT    NOT NULL,
    start_unix_ns INTEGER NOT NULL,      -- wall clock at MPI_Init
    start_tsc     INTEGER NOT NULL,      -- clock ticks at MPI_Init
    tsc_hz        REAL    NOT NULL,      -- ticks per second
    clock_source  TEXT    NOT NULL,      -- 'tsc' or 'clock_gettime'
    mode          TEXT    NOT NULL,      -- 'trace' or 'replay'
    page_size     INTEGER NOT NULL,
    copy_bw       REAL    NOT NULL,      -- measured memcpy bytes/s (for Tinit)
    mprotect_ns   REAL    NOT NULL,      -- measured cost of one mprotect call
    fault_ns      REAL    NOT NULL,      -- measured cost of one guarded fault
    finished      INTEGER NOT NULL DEFAULT 0, -- 1 once MPI_Finalize ran
    machine_ranks INTEGER NOT NULL DEFAULT 0, -- since version 3: the job's ranks on this
    machine_cpus  INTEGER NOT NULL DEFAULT 0, -- rank's kernel, and their CPUs; 0: not counted
    mprotect_page_ns REAL NOT NULL DEFAULT 0, -- since version 4: a many-page mprotect per page
    retouch_ns    REAL    NOT NULL DEFAULT 0  -- and the first read of a page opened again; 0: not measured
);
CREATE TABLE IF NOT EXISTS site (
    rank     INTEGER NOT NULL,
    site     TEXT    NOT NULL,           -- stable id: module+offset[;...][@shape]
    module   TEXT    NOT NULL,
    offset   INTEGER NOT NULL,
    symbol   TEXT,
    op       TEXT    NOT NULL,
    calls    INTEGER NOT NULL,           -- all invocations, traced or not
    traced   INTEGER NOT NULL,           -- invocations with guards
    total_ns INTEGER NOT NULL,           -- time inside the collective, all calls
    bytes    INTEGER NOT NULL,           -- receive bytes, all calls
    comm_shape TEXT  NOT NULL DEFAULT 'world', -- since version 2: 'world' or c<size>.<hash>
    fallback TEXT    NOT NULL DEFAULT '',  -- replay: why calls ran blocking, 'reason:count ...'
    PRIMARY KEY (rank, site, op)
);
CREATE TABLE IF NOT EXISTS call (
    call_id        INTEGER PRIMARY KEY,  -- unique in the merged database
    rank           INTEGER NOT NULL,
    site           TEXT    NOT NULL,
    invocation     INTEGER NOT NULL,     -- 0-based count at this site and rank
    op             TEXT    NOT NULL,     -- 'alltoall', 'bcast', ...
    comm_size      INTEGER NOT NULL,
    comm_rank      INTEGER NOT NULL,
    root           INTEGER NOT NULL,     -- -1 when the operation has none
    send_type_size INTEGER NOT NULL,
    recv_type_size INTEGER NOT NULL,
    send_bytes     INTEGER NOT NULL,
    recv_bytes     INTEGER NOT NULL,
    block_bytes    INTEGER NOT NULL,     -- bytes per receive block; -1 if varying
    nsub           INTEGER NOT NULL,     -- receive sub-messages
    chunks         INTEGER NOT NULL,     -- m for single-block operations, else 0
    entry_tsc      INTEGER NOT NULL,
    return_tsc     INTEGER NOT NULL,
    wait_ns        INTEGER NOT NULL DEFAULT 0  -- replay: time blocked in faults
);
CREATE TABLE IF NOT EXISTS submsg (
    call_id INTEGER NOT NULL,
    side    TEXT    NOT NULL,            -- 'recv' or 'send'
    idx     INTEGER NOT NULL,            -- sub-message index (source block / chunk)
    peer    INTEGER NOT NULL,            -- source (recv) or destination (send); -1 for chunks
    addr_offset INTEGER NOT NULL,        -- byte offset in the buffer
    bytes   INTEGER NOT NULL,
    guard   TEXT    NOT NULL,            -- 'guarded', 'partial', 'edge', 'empty', 'off'
    PRIMARY KEY (call_id, side, idx)
);
CREATE TABLE IF NOT EXISTS touch (
    call_id INTEGER NOT NULL,
    side    TEXT    NOT NULL,
    idx     INTEGER NOT NULL,
    ord     INTEGER,                     -- first-touch order (0 = first); NULL for releases
    tsc     INTEGER NOT NULL,
    how     TEXT    NOT NULL,            -- 'read', 'write', 'access' or 'release:<why>'
    tail_tsc INTEGER,                    -- first touch of its last whole page, where the
                                         -- trace kept it closed after the first touch
                                         -- (schema 5); NULL: not seen
    PRIMARY KEY (call_id, side, idx)
);
CREATE INDEX IF NOT EXISTS call_by_site ON call (site, rank, invocation);
-- What the trace could not measure cleanly, per traced call (trace mode).
-- The span is the program's run from the call's return to its rank's next
-- handled collective, where TCURC and RCRC are measured.
CREATE TABLE IF NOT EXISTS fidelity (
    call_id     INTEGER PRIMARY KEY,
    faults      INTEGER NOT NULL,        -- guard faults on this call's buffers
    steps       INTEGER NOT NULL,        -- single-stepped instructions on shared pages
    observer_ns INTEGER NOT NULL,        -- tnbc's own time in the span (program time leaves it out)
    span_ns     INTEGER NOT NULL,        -- wall time of the span; -1: no next collective
    dropped     INTEGER NOT NULL,        -- touch events lost (ring full) in the span
    refill_ns   INTEGER NOT NULL DEFAULT 0 -- of observer_ns: the handler's reads of the pages
                                         -- it opened, timed (GUARD_PRETOUCH); schema 4
);
-- Replay summaries only (libreplay/activity.c): when each receive piece of a
-- recorded early call landed, when the program waited for one, and when the
-- progress thread was busy; activity says how many events were kept and
-- how many the bounded buffer dropped. Empty in traces.
CREATE TABLE IF NOT EXISTS arrival (
    call_id INTEGER NOT NULL,
    piece   INTEGER NOT NULL,            -- the guard's sub-message (piece or chunk) number
    idx     INTEGER NOT NULL,            -- the block or chunk it belongs to (call.nsub)
    peer    INTEGER NOT NULL,            -- source rank; -1 for chunks
    bytes   INTEGER NOT NULL,
    tsc     INTEGER NOT NULL,            -- landed in the caller's buffer
    by      TEXT    NOT NULL             -- 'progress' (thread) or 'caller' (its own block)
);
CREATE TABLE IF NOT EXISTS fault_wait (
    call_id   INTEGER NOT NULL,
    piece     INTEGER NOT NULL,
    idx       INTEGER NOT NULL,
    peer      INTEGER NOT NULL,
    bytes     INTEGER NOT NULL,
    start_tsc INTEGER NOT NULL,
    end_tsc   INTEGER NOT NULL,
    how       TEXT    NOT NULL           -- 'read', 'write', 'access' (a fault) or 'release'
);
CREATE TABLE IF NOT EXISTS progress (
    rank      INTEGER NOT NULL,
    start_tsc INTEGER NOT NULL,
    end_tsc   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS activity (
    rank    INTEGER PRIMARY KEY,
    events  INTEGER NOT NULL,            -- rows written to the three tables above
    dropped INTEGER NOT NULL             -- events past TNBC_REPLAY_ACTIVITY_MAX, not written
);
-- Replay summaries only (libreplay/phases.c): per rank and site, the early
-- returns' steps summed (docs/replay.md, "The early return's cost") and the
-- progress thread's landing of the pieces of the calls it completed.
-- Empty in traces.
CREATE TABLE IF NOT EXISTS early_cost (
    rank         INTEGER NOT NULL,
    site         TEXT    NOT NULL,
    op           TEXT    NOT NULL,
    early        INTEGER NOT NULL,       -- calls that returned early: the steps' count
    candidate_ns INTEGER NOT NULL,       -- the steps, summed over those calls
    agree_ns     INTEGER NOT NULL,
    plan_ns      INTEGER NOT NULL,
    land_self_ns INTEGER NOT NULL,
    arm_ns       INTEGER NOT NULL,
    copy_ns      INTEGER NOT NULL,
    submit_ns    INTEGER NOT NULL,
    edges_ns     INTEGER NOT NULL,
    land_ns      INTEGER NOT NULL,       -- the progress thread writing pieces in and opening them
    land_bytes   INTEGER NOT NULL
);
