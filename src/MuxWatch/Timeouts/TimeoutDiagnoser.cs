using System.Globalization;

namespace MuxWatch.Timeouts;

/// <summary>
/// Names the cause of a timeout from what its message carried, by rules that follow the client's
/// documentation (docs/Timeouts.md) and its maintainers' answers. The rules, their order and their
/// thresholds are written down in <c>docs/diagnosis.md</c>.
/// </summary>
/// <remarks>
/// Every rule whose evidence is present adds its cause; the primary cause is the first present in
/// <see cref="PriorityOrder"/>. A lost connection comes first because every other figure is noise
/// without one; starvation next, because it makes every other figure look bad.
/// </remarks>
public static class TimeoutDiagnoser
{
    /// <summary>
    /// Outbound or inbound KiB (moved on the connection while the request waited) from which a payload
    /// counts as large. Typical replies are well under 1 KiB; a quarter of a MiB moving while a small
    /// request waits is head-of-line blocking (a public report with <c>inbound=277KiB, cur-in: 284577</c>
    /// and a healthy pool had no other explanation).
    /// </summary>
    public const double LargeTransferKiB = 256;

    /// <summary>Bytes of one reply (<c>last-in</c>, <c>cur-in</c>) or in a pipe from which it counts as large.</summary>
    public const double LargeReplyBytes = 256 * 1024;

    /// <summary>Bytes waiting in the socket (<c>in</c>) from which the socket buffer counts as full: a large reply is arriving.</summary>
    public const double FullSocketBytes = 48 * 1024;

    /// <summary>The order in which present causes compete to be primary.</summary>
    public static IReadOnlyList<TimeoutCause> PriorityOrder { get; } =
    [
        TimeoutCause.ConnectionLoss,
        TimeoutCause.ThreadPoolStarvation,
        TimeoutCause.LargePayload,
        TimeoutCause.ClientInputBacklog,
        TimeoutCause.WriteBacklog,
        TimeoutCause.ServerStall,
    ];

    /// <summary>Diagnoses one read message.</summary>
    /// <param name="report">What the message said.</param>
    /// <param name="sampledThreadPool">
    /// The thread pool as MuxWatch sampled it when the exception was thrown. Used only when the message
    /// carries no <c>WORKER</c>/<c>IOCP</c> figures (1.x clients on .NET Core leave them out).
    /// </param>
    /// <param name="live">
    /// The endpoint's counters read from the live multiplexer when it was caught. They stand in for
    /// <c>qs</c>/<c>qu</c> where the text says 0 or nothing: 3.4.35 writes <c>qs: 0</c> while replies are outstanding.
    /// </param>
    public static TimeoutDiagnosis Diagnose(RedisErrorReport report, ThreadPoolSnapshot? sampledThreadPool = null, LiveCounters? live = null)
    {
        ArgumentNullException.ThrowIfNull(report);
        var found = new Dictionary<TimeoutCause, List<string>>();

        void Add(TimeoutCause cause, string evidence)
        {
            if (!found.TryGetValue(cause, out var list))
            {
                found[cause] = list = [];
            }

            list.Add(evidence);
        }

        CheckConnection(report, live, Add);
        CheckThreadPool(report, Add);
        if (sampledThreadPool is { } pool && report.Field("WORKER") is null && report.Field("IOCP") is null)
        {
            CheckSampledThreadPool(pool, Add);
        }

        CheckPayload(report, Add);
        CheckClientInput(report, Add);
        CheckWriteSide(report, live, Add);

        // "The server did not answer" holds only when the client was able to read and nothing large was
        // in the way: a starved pool, a busy reader or a big reply explains unanswered requests as well.
        if (!found.ContainsKey(TimeoutCause.ThreadPoolStarvation) && !found.ContainsKey(TimeoutCause.ClientInputBacklog)
            && !found.ContainsKey(TimeoutCause.LargePayload))
        {
            CheckServerStall(report, sampledThreadPool, live, Add);
        }

        var causes = PriorityOrder.Where(found.ContainsKey).ToList();
        if (causes.Count == 0)
        {
            return new TimeoutDiagnosis(TimeoutCause.Unknown, [TimeoutCause.Unknown], ["the message carries no deciding field"], AdviceFor(TimeoutCause.Unknown));
        }

        var evidence = causes.SelectMany(cause => found[cause].Select(line => $"{cause.ToName()}: {line}")).ToList();
        return new TimeoutDiagnosis(causes[0], causes, evidence, AdviceFor(causes[0]));
    }

    /// <summary>One line of advice for a cause.</summary>
    public static string AdviceFor(TimeoutCause cause) => cause switch
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
        TimeoutCause.Persistence =>
            "A fork for BGSAVE or AOF rewrite stalled the server while the request waited: schedule saves off-peak, reduce the dataset or use a replica for persistence, and disable transparent huge pages.",
        _ =>
            "The message carries too little to decide: keep IncludeDetailInExceptions on and use a recent client, whose messages carry qs, in and the thread-pool figures.",
    };

    private static void CheckConnection(RedisErrorReport report, LiveCounters? live, Action<TimeoutCause, string> add)
    {
        // 2.x and 3.x queue commands in a backlog while disconnected, so a dead server gives a timeout,
        // not a connection error: "conn-sec: n/a" says the connection was not up.
        if (report.Field("conn-sec")?.Raw is "n/a")
        {
            add(TimeoutCause.ConnectionLoss, "conn-sec: n/a: the connection was not up");
        }
        else if (live is { Connected: false })
        {
            add(TimeoutCause.ConnectionLoss, $"the connection to {live.Endpoint} was down when the timeout was caught (live counters)");
        }

        switch (report.Kind)
        {
            case RedisErrorKind.NoConnection:
                add(TimeoutCause.ConnectionLoss, "no connection was active or available for the command");
                break;
            case RedisErrorKind.ConnectionFailure:
                add(TimeoutCause.ConnectionLoss, report.FailureType is { } type ? $"connection failed ({type})" : "the connection could not be made");
                break;
            case RedisErrorKind.BacklogTimeout:
                add(TimeoutCause.ConnectionLoss, "the command timed out in the backlog: no connection became available");
                break;
            default:
                if (report.ExceptionType?.EndsWith("RedisConnectionException", StringComparison.Ordinal) == true)
                {
                    add(TimeoutCause.ConnectionLoss, "raised as RedisConnectionException");
                }

                break;
        }
    }

    private static void CheckThreadPool(RedisErrorReport report, Action<TimeoutCause, string> add)
    {
        var starved = false;
        foreach (var pool in (string[])["WORKER", "IOCP"])
        {
            var tuple = report.Field(pool);
            if (tuple?.Part("Busy") is { } busy && tuple.Part("Min") is { } min && busy > min)
            {
                add(TimeoutCause.ThreadPoolStarvation, $"{pool} Busy={Format(busy)} > Min={Format(min)}");
                starved = true;
            }
        }

        // 2.x ran its own dedicated pool: "mgr: 0 of 10 available" means every one of its threads was busy.
        if (report.Field("mgr")?.Raw is { } mgr && mgr.StartsWith("0 of ", StringComparison.Ordinal))
        {
            add(TimeoutCause.ThreadPoolStarvation, $"mgr: {mgr} (the client's dedicated pool had no free thread)");
            starved = true;
        }

        // Items queued on the pool are the work that waited; worth showing beside the busy counts.
        if (starved && report.Field("POOL")?.Part("QueuedItems") is { } queued && queued > 0)
        {
            add(TimeoutCause.ThreadPoolStarvation, $"POOL QueuedItems={Format(queued)} work items waiting for a thread");
        }
    }

    private static void CheckSampledThreadPool(ThreadPoolSnapshot pool, Action<TimeoutCause, string> add)
    {
        const string sampled = "(sampled by MuxWatch when the exception was thrown)";
        if (pool.WorkerBusy > pool.WorkerMin)
        {
            add(TimeoutCause.ThreadPoolStarvation, $"WORKER Busy={pool.WorkerBusy} > Min={pool.WorkerMin} {sampled}");
        }

        if (pool.IoBusy > pool.IoMin)
        {
            add(TimeoutCause.ThreadPoolStarvation, $"IOCP Busy={pool.IoBusy} > Min={pool.IoMin} {sampled}");
        }

        if (pool.IsStarved && pool.QueueLength > 0)
        {
            add(TimeoutCause.ThreadPoolStarvation, $"{pool.QueueLength} work items waiting for a thread {sampled}");
        }
    }

    private static void CheckPayload(RedisErrorReport report, Action<TimeoutCause, string> add)
    {
        foreach (var name in (string[])["outbound", "inbound"])
        {
            if (report.Number(name) is { } kib && kib >= LargeTransferKiB)
            {
                add(TimeoutCause.LargePayload, $"{name}={Format(kib)}KiB moved while the request waited (>= {Format(LargeTransferKiB)}KiB)");
            }
        }

        foreach (var name in (string[])["last-in", "cur-in", "in-pipe", "out-pipe"])
        {
            if (report.Number(name) is { } bytes && bytes >= LargeReplyBytes)
            {
                add(TimeoutCause.LargePayload, $"{name}={Format(bytes)} bytes (>= {Format(LargeReplyBytes)})");
            }
        }

        if (report.Number("in") is { } inBytes && inBytes >= FullSocketBytes)
        {
            add(TimeoutCause.LargePayload, $"in={Format(inBytes)} bytes: the socket buffer is full (>= {Format(FullSocketBytes)})");
        }
    }

    private static void CheckClientInput(RedisErrorReport report, Action<TimeoutCause, string> add)
    {
        foreach (var name in (string[])["in", "in-pipe"])
        {
            if (report.Number(name) is { } bytes && bytes > 0)
            {
                add(TimeoutCause.ClientInputBacklog, $"{name}={Format(bytes)}: reply bytes received but not yet processed");
            }
        }

        var readState = report.Field("rs")?.Raw;
        if (report.ThreadTheftIndicated || readState?.StartsWith("CompletePendingMessage", StringComparison.Ordinal) == true)
        {
            add(TimeoutCause.ClientInputBacklog, $"thread theft: the reader was running a caller's continuation{(readState is null ? string.Empty : $" (rs: {readState})")}");
        }
    }

    private static void CheckWriteSide(RedisErrorReport report, LiveCounters? live, Action<TimeoutCause, string> add)
    {
        if (report.Kind == RedisErrorKind.WriteTimeout)
        {
            add(TimeoutCause.WriteBacklog, "the timeout was reached before the command could be written");
        }

        if (report.Number("qu") is { } unsent && unsent > 0)
        {
            var writer = report.Field("bw")?.Raw is { } backlog ? $", bw: {backlog}" : string.Empty;
            add(TimeoutCause.WriteBacklog, $"qu={Format(unsent)} commands queued, not yet written{writer}");
        }
        else if (live is { PendingUnsent: > 0 })
        {
            add(TimeoutCause.WriteBacklog, $"qu={live.PendingUnsent} commands queued, not yet written (live counters at the catch)");
        }

        if (report.Number("wq") is { } writeQueue && writeQueue > 0)
        {
            add(TimeoutCause.WriteBacklog, $"wq={Format(writeQueue)} connections waiting for the writer");
        }
    }

    private static void CheckServerStall(RedisErrorReport report, ThreadPoolSnapshot? sampled, LiveCounters? live, Action<TimeoutCause, string> add)
    {
        var sent = report.Number("qs") ?? 0;
        var sentFrom = string.Empty;
        if (sent <= 0 && live is { SentAwaitingResponse: > 0 })
        {
            // The text says nothing is outstanding but the live multiplexer disagrees: 3.4.35 writes qs: 0
            // in its timeout messages while every reply is still awaited (measured), so the counters win.
            sent = live.SentAwaitingResponse;
            sentFrom = report.Number("qs") is null
                ? " (live counters at the catch; the message has no qs)"
                : " (live counters at the catch; the message says qs: 0, as 3.x clients write it)";
        }

        if (sent <= 0)
        {
            return;
        }

        var inBytes = report.Number("in");
        var inPipe = report.Number("in-pipe");
        if (inBytes is > 0 || inPipe is > 0)
        {
            return;
        }

        // Some inbound KiB while waiting are replies to earlier commands: the server answered those, not this one.
        var nothingArrived = inBytes is null && inPipe is null
            ? "the message does not say whether bytes arrived"
            : report.Number("inbound") is { } inbound and > 0 ? $"nothing waiting to be read (inbound={Format(inbound)}KiB were earlier replies)" : "nothing arrived";
        var pool = report.Field("WORKER") is not null || report.Field("IOCP") is not null
            ? "thread pool within its minimum"
            : sampled is not null ? "thread pool within its minimum (sampled by MuxWatch)" : "no thread-pool figures to blame";
        add(TimeoutCause.ServerStall, $"qs={Format(sent)}{sentFrom} sent and unanswered, {nothingArrived}, {pool}");
    }

    private static string Format(double value) => value.ToString("0.##", CultureInfo.InvariantCulture);
}
