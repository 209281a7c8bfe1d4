using MuxWatch.Model;

namespace MuxWatch.Diagnosis;

/// <summary>What to do about each cause, and what would confirm it: the words docs/runbooks and <c>explain</c> use.</summary>
public static class CauseAdvice
{
    /// <summary>One line of advice for a cause.</summary>
    public static string For(TimeoutCause cause) => cause switch
    {
        TimeoutCause.ConnectionLoss =>
            "There was no usable connection: look at ConnectionFailed events and the server's reachability; the timeout is a symptom of the lost connection.",
        TimeoutCause.ThreadPoolStarvation =>
            "Threads were busy above the pool minimum, so work waited for a thread: remove sync-over-async (.Result, .Wait()) and blocking calls, or raise ThreadPool.SetMinThreads to the steady busy count.",
        TimeoutCause.LargePayload =>
            "A large request or reply was in transit ahead of this one: split large values, read big collections in ranges (HSCAN, LRANGE pages), or give bulk traffic its own multiplexer.",
        TimeoutCause.ClientInputBacklog =>
            "The reply had arrived but the client had not read it: the app is short of CPU or threads (check CPU, GC pauses, and continuations run on the reader).",
        TimeoutCause.WriteBacklog =>
            "Commands were queued and not yet written: the connection or its writer could not keep up; check bandwidth, reconnects, and large writes ahead in the queue.",
        TimeoutCause.ServerStall =>
            "The server did not answer in time although the client was ready: look for slow commands (SLOWLOG), BGSAVE or AOF-rewrite forks, server CPU, or the network.",
        TimeoutCause.SlowCommand =>
            "A slow command blocked the server while the request waited: find it in the slow log and replace it (KEYS, big SMEMBERS/HGETALL, Lua) with incremental forms.",
        TimeoutCause.ClientCpu =>
            "The client was short of CPU (the machine saturated, or the process throttled by its CPU limit or waiting for a core): find what uses it (profiling, GC, other processes on the host), raise the container's CPU limit, or scale the app out; no Redis setting helps while the CPU is at 100%.",
        TimeoutCause.ClientDefect =>
            "The client version has a defect that times commands out, fixed in a later release (the evidence names it and its source): upgrade StackExchange.Redis; no setting works around it.",
        TimeoutCause.GcPause =>
            "Blocking garbage collections paused the app while it waited: the server answered, the app could not read. Find what allocates (dotnet-counters' gc-heap-size and time-in-gc, dotnet-gcdump), keep large and long-lived objects off the heap, and prefer Server GC with <ConcurrentGarbageCollection> on; no Redis setting helps.",
        TimeoutCause.Failover =>
            "The node failed over while the request waited: a replica was promoted in place of its primary. Expect errors until the client sees the new topology; keep retries with backoff on idempotent calls, and find why the primary failed (a crash, a restart, a network partition, a manual failover).",
        TimeoutCause.Persistence =>
            "A fork for BGSAVE or AOF rewrite stalled the server while the request waited: schedule saves off-peak, reduce the dataset or use a replica for persistence, and disable transparent huge pages.",
        _ =>
            "The message carries too little to decide: keep IncludeDetailInExceptions on and use a recent client, whose messages carry qs, in and the thread-pool figures.",
    };

    /// <summary>What would confirm the cause: the metric or panel to look at, the server command to run.</summary>
    public static string ConfirmationFor(TimeoutCause cause) => cause switch
    {
        TimeoutCause.ConnectionLoss =>
            "muxwatch_connected and muxwatch_connection_events_total (panel 'Reconnects and connection events') show the drop; CLIENT LIST on the server shows whether the app's connections are there.",
        TimeoutCause.ThreadPoolStarvation =>
            "muxwatch_threadpool_busy_threads above muxwatch_threadpool_min_threads (panels 'Thread pool: busy against minimum' and 'Thread pool queue') at the time; dotnet-counters' threadpool-queue-length rising confirms it.",
        TimeoutCause.LargePayload =>
            "redis-cli --bigkeys (or MEMORY USAGE of the key) finds the large values; SLOWLOG GET shows the command that returned them.",
        TimeoutCause.ClientInputBacklog =>
            "the app's CPU and GC pauses at the time, and muxwatch_heartbeat_age_seconds rising (panel 'Client heartbeat age'): the reader was late, not the server.",
        TimeoutCause.WriteBacklog =>
            "muxwatch_pending_unsent (qu) above 0 for a while (panel 'Queued, not written (qu)'), and muxwatch_reconnects_total; network throughput from the app's host.",
        TimeoutCause.ServerStall =>
            "muxwatch_sent_awaiting_response (qs) rising with nothing inbound (panel 'Sent, awaiting reply (qs)'); on the server, SLOWLOG GET 10, LATENCY LATEST and INFO persistence at that minute.",
        TimeoutCause.SlowCommand =>
            "the slow-command event in /api/events (panel 'Slowest recent command') or SLOWLOG GET on the server, at the time of the timeout.",
        TimeoutCause.Persistence =>
            "the BGSAVE or AOF-rewrite event in /api/events (panel 'BGSAVE and AOF rewrite in progress', timeouts-persistence dashboard), INFO persistence (latest_fork_usec) on the server.",
        TimeoutCause.Failover =>
            "the role-change event in /api/events on the promoted node, muxwatch_server_role and muxwatch_server_role_changes_total; CLUSTER NODES or SENTINEL on the server side.",
        TimeoutCause.ClientDefect =>
            "the client's release notes for the version that fixed it; after the upgrade, the same load without these timeouts.",
        TimeoutCause.GcPause =>
            "the app's GC pause time at that minute (dotnet-counters: time-in-gc, gen-2-gc-count; OpenTelemetry runtime metrics: dotnet.gc.pause.time), and whether the timeouts line up with gen 2 collections.",
        TimeoutCause.ClientCpu =>
            "the app host's CPU at the time (node or container metrics), and process_cpu_seconds_total of the app.",
        _ =>
            "a newer client's message (2.6+ writes in, qs, the pool and the reader state) or MuxWatch in-process, which samples the pool and the queues when the timeout is thrown.",
    };
}
