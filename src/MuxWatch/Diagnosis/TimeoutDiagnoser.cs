using System.Globalization;
using MuxWatch.Model;
using MuxWatch.Reading;
using Weight = MuxWatch.Model.EvidenceWeight;

namespace MuxWatch.Diagnosis;

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

    /// <summary>
    /// Bytes waiting in the socket from which, with the reader waiting on the socket (<c>rs: ReadAsync</c>)
    /// and nothing else outstanding, a sizable reply is still arriving (a maintainer's reading of
    /// <c>qs: 0, in: 22649</c> in issue #2066): a quarter of a 64 KiB socket buffer.
    /// </summary>
    public const double ArrivingReplyBytes = 16 * 1024;

    /// <summary>
    /// Busy threads over the pool's minimum from which starvation counts as strong evidence: the pool adds
    /// a thread about every half second above its minimum, so ten waiting for one is seconds of delay.
    /// Fewer over (Busy=8 against Min=1, Busy=11 against Min=2) is weak: maintainers look past it to a
    /// large reply or a short timeout (issues #2066, #1455).
    /// </summary>
    public const int StrongStarvationExcess = 10;

    /// <summary>
    /// Work items queued on the pool (<c>POOL QueuedItems</c>) from which starvation above the minimum
    /// counts as strong whatever the busy count: on a 2-core host Busy=4 against Min=2 with 300 items
    /// queued is a starved app (measured by the starvation live test).
    /// </summary>
    public const int StrongStarvationQueuedItems = 20;

    /// <summary>The client machine's CPU (<c>Local-CPU</c>, 1.x and 2.x) from which it counts as saturated.</summary>
    public const double SaturatedCpuPercent = 90;

    /// <summary>The client machine's CPU from which it counts as contributing.</summary>
    public const double BusyCpuPercent = 75;

    /// <summary>
    /// How late past its timeout (beyond twice the timeout) an async timeout must be noticed to count as
    /// stuck: the client checks on a one-second heartbeat, so up to about a second late is normal.
    /// </summary>
    public const double LateCheckMilliseconds = 2000;

    /// <summary>Bytes waiting in the socket (<c>in</c>) from which a backlog of unread replies is clear, not incidental.</summary>
    public const double ClearInputBytes = 1024;

    /// <summary>The order in which causes of equal weight compete to be primary.</summary>
    public static IReadOnlyList<TimeoutCause> PriorityOrder { get; } =
    [
        TimeoutCause.ConnectionLoss,
        TimeoutCause.ThreadPoolStarvation,
        TimeoutCause.LargePayload,
        TimeoutCause.ClientCpu,
        TimeoutCause.WriteBacklog,
        TimeoutCause.ClientInputBacklog,
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
    /// <param name="poolBeforeWait">
    /// The thread pool as MuxWatch sampled it just before the request started waiting (in-process only).
    /// Starvation that was not there then arose while the request waited: when replies stop, the calls
    /// waiting for them time out together and their continuations queue on the pool, so load that
    /// appears during the wait is weighed as a possible consequence, not as the cause.
    /// </param>
    public static TimeoutDiagnosis Diagnose(RedisErrorReport report, ThreadPoolSnapshot? sampledThreadPool = null, LiveCounters? live = null, ThreadPoolSnapshot? poolBeforeWait = null)
    {
        ArgumentNullException.ThrowIfNull(report);
        var found = new Dictionary<TimeoutCause, (Weight Weight, List<string> Lines)>();

        void Add(TimeoutCause cause, Weight weight, string evidence)
        {
            if (!found.TryGetValue(cause, out var entry))
            {
                entry = (weight, []);
            }

            entry.Lines.Add(evidence);
            found[cause] = (weight > entry.Weight ? weight : entry.Weight, entry.Lines);
        }

        var generation = ClientGeneration.Of(report);
        CheckConnection(report, generation, live, Add);
        CheckThreadPool(report, poolBeforeWait, Add);
        if (sampledThreadPool is { } pool && report.Field("WORKER") is null && report.Field("IOCP") is null)
        {
            CheckSampledThreadPool(pool, poolBeforeWait, Add);
        }

        if (poolBeforeWait is { } before && Starvation(before.WorkerBusy, before.WorkerMin, before.QueueLength) is true)
        {
            // Starved before the request even started waiting: every reply then waited for a thread, whatever
            // the pool looked like by the time the message was written (it may have recovered a little).
            Add(TimeoutCause.ThreadPoolStarvation, Weight.Overriding,
                $"the pool was already starved just before the request started waiting (WORKER Busy={before.WorkerBusy}/Min={before.WorkerMin} with {before.QueueLength} work items queued, sampled by MuxWatch): its reply waited for a thread");
        }

        CheckClientCpu(report, Add);
        CheckPayload(report, Add);
        CheckClientInput(report, Add);
        CheckWriteSide(report, live, Add);
        CheckLateTimeout(report, Add);

        // "The server did not answer" holds only when the client was able to read and nothing large was
        // in the way: a starved pool, a busy reader or a big reply explains unanswered requests as well.
        // Weak evidence of those does not: Busy one over Min cannot hold a reply for seconds.
        if (!Has(found, TimeoutCause.ThreadPoolStarvation, Weight.Clear) && !Has(found, TimeoutCause.ClientInputBacklog, Weight.Clear)
            && !found.ContainsKey(TimeoutCause.LargePayload) && !Has(found, TimeoutCause.ClientCpu, Weight.Strong))
        {
            CheckServerStall(report, sampledThreadPool, live, Add);
        }

        // 3.x writes qs: 0 while replies are awaited (measured on 3.4.35): with nothing arrived and
        // nothing else to blame, the server not answering is still the likeliest reading, held weakly.
        if (found.Count == 0 && generation.QueueCountUnreliable && report.Number("qs") is 0 && report.Number("in") is null or 0
            && report.Field("WORKER") is not null && report.Kind is RedisErrorKind.SyncTimeout or RedisErrorKind.AsyncTimeout)
        {
            Add(TimeoutCause.ServerStall, Weight.Weak,
                $"qs: 0, nothing arrived, thread pool within its minimum; {generation.Name} writes qs: 0 even with replies outstanding, so the server not answering is the likeliest reading, not a certain one");
        }

        var causes = found.Keys
            .OrderByDescending(cause => found[cause].Weight)
            .ThenBy(cause => IndexOf(cause))
            .ToList();
        if (causes.Count == 0)
        {
            var nothing = generation.QueueCountUnreliable && report.Number("qs") is 0
                ? $"the message carries no deciding field; {generation.Name} writes qs: 0 even while replies are awaited, so qs: 0 does not clear the server"
                : "the message carries no deciding field";
            return new TimeoutDiagnosis(TimeoutCause.Unknown, [TimeoutCause.Unknown], [nothing], AdviceFor(TimeoutCause.Unknown))
            {
                Confidence = DiagnosisConfidence.Low,
            };
        }

        var primary = causes[0];
        var evidence = causes.SelectMany(cause => found[cause].Lines.Select(line => $"{cause.ToName()}: {line}")).ToList();
        if (Why(primary, causes, found) is { } why)
        {
            evidence.Add(why);
        }

        if (generation.Note is { } note)
        {
            evidence.Add($"read as {generation.Name}: {note}");
        }

        return new TimeoutDiagnosis(primary, causes, evidence, AdviceFor(primary))
        {
            Confidence = ConfidenceOf(primary, causes, found),
            Weights = found.ToDictionary(entry => entry.Key, entry => entry.Value.Weight),
        };
    }

    private static int IndexOf(TimeoutCause cause)
    {
        for (var i = 0; i < PriorityOrder.Count; i++)
        {
            if (PriorityOrder[i] == cause)
            {
                return i;
            }
        }

        return PriorityOrder.Count;
    }

    private static bool Has(Dictionary<TimeoutCause, (Weight Weight, List<string> Lines)> found, TimeoutCause cause, Weight atLeast) =>
        found.TryGetValue(cause, out var entry) && entry.Weight >= atLeast;

    /// <summary>High when one strong finding stands alone at the top; low when the top is weak or shared.</summary>
    private static DiagnosisConfidence ConfidenceOf(TimeoutCause primary, List<TimeoutCause> causes, Dictionary<TimeoutCause, (Weight Weight, List<string> Lines)> found)
    {
        var top = found[primary].Weight;
        var tied = causes.Skip(1).Any(cause => found[cause].Weight == top);
        return top switch
        {
            Weight.Weak => DiagnosisConfidence.Low,
            Weight.Clear => tied ? DiagnosisConfidence.Low : DiagnosisConfidence.Medium,
            _ => tied ? DiagnosisConfidence.Medium : DiagnosisConfidence.High,
        };
    }

    /// <summary>One line on why the primary cause won over the others present, when there are others.</summary>
    private static string? Why(TimeoutCause primary, List<TimeoutCause> causes, Dictionary<TimeoutCause, (Weight Weight, List<string> Lines)> found)
    {
        var others = causes.Skip(1).ToList();
        if (others.Count == 0)
        {
            return null;
        }

        var names = string.Join(", ", others.Select(c => c.ToName()));
        var weight = found[primary].Weight;
        if (primary == TimeoutCause.ThreadPoolStarvation && weight == Weight.Overriding)
        {
            return $"why: strong thread-pool starvation outranks {names}: on a starved pool the heartbeat, the reader and the writer wait for threads too, so it explains them (the maintainers' reading in such reports)";
        }

        if (primary == TimeoutCause.ThreadPoolStarvation && weight == Weight.Weak && found.TryGetValue(TimeoutCause.ServerStall, out var stall) && stall.Weight == Weight.Weak)
        {
            return "why: the pool is above its minimum and only qs points at the server, so thread-pool throttling is the documented reading (Timeouts.md); "
                + "server-stall stays a candidate: the server's slow log, or MuxWatch's live counters in-process, decide between them";
        }

        var weakStarvation = found.TryGetValue(TimeoutCause.ThreadPoolStarvation, out var starvation) && starvation.Weight == Weight.Weak;
        if (weakStarvation && primary != TimeoutCause.ThreadPoolStarvation)
        {
            return $"why: {primary.ToName()} outranks the weak thread-pool starvation (only a few threads over the minimum, seconds of delay are unlikely from it)"
                + (others.Count > 1 ? $"; also present: {names}" : string.Empty);
        }

        var lighter = others.Where(c => found[c].Weight < weight).Select(c => c.ToName()).ToList();
        var equal = others.Where(c => found[c].Weight == weight).Select(c => c.ToName()).ToList();
        return equal.Count > 0
            ? $"why: {primary.ToName()} comes first among equally strong signs ({string.Join(", ", equal)}) by the documented order; treat them together"
            : $"why: {primary.ToName()} has the strongest evidence; {string.Join(", ", lighter)} {(lighter.Count == 1 ? "is" : "are")} weaker here and may be its effect";
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
        TimeoutCause.ClientCpu =>
            "The client machine's CPU was saturated: find what uses it (profiling, GC, other processes on the host) or scale the app out; no Redis setting helps while the CPU is at 100%.",
        TimeoutCause.Persistence =>
            "A fork for BGSAVE or AOF rewrite stalled the server while the request waited: schedule saves off-peak, reduce the dataset or use a replica for persistence, and disable transparent huge pages.",
        _ =>
            "The message carries too little to decide: keep IncludeDetailInExceptions on and use a recent client, whose messages carry qs, in and the thread-pool figures.",
    };

    private static void CheckConnection(RedisErrorReport report, ClientGeneration generation, LiveCounters? live, Action<TimeoutCause, Weight, string> add)
    {
        void Add(TimeoutCause cause, string evidence) => add(cause, Weight.Strong, evidence);

        // 2.x and 3.x queue commands in a backlog while disconnected, so a dead server gives a timeout,
        // not a connection error: "conn-sec: n/a" says the connection was not up when the message was
        // written (every generation writes n/a exactly when its bridge has no connected time: never
        // connected, lost, or, on 3.x, dropped by the client itself after seconds without a reply).
        if (report.Field("conn-sec")?.Raw is "n/a")
        {
            Add(TimeoutCause.ConnectionLoss, generation.DropsUnansweredConnections
                ? $"conn-sec: n/a: the connection was down when the message was written; {generation.Name} also drops a connection itself after about 4 s without a reply, so a server stall ends this way too (the server's timeline tells which)"
                : "conn-sec: n/a: the connection was not up");
        }
        else if (live is { Connected: false })
        {
            Add(TimeoutCause.ConnectionLoss, $"the connection to {live.Endpoint} was down when the timeout was caught (live counters)");
        }

        // The reader never started: the connection was never made (a firewall, TLS or a wrong port; a
        // maintainer's reading of "rs: NotStarted, qu: 1" in issue #2513, which was a firewall). With a
        // connected time beside it (3.4.35 writes "rs: NotStarted, conn-sec: 0" just after re-making a
        // connection, measured), it is a connection being re-made, not one that never was.
        if (report.Field("rs")?.Raw is "NotStarted")
        {
            if (report.Number("conn-sec") is { } seconds)
            {
                add(TimeoutCause.ConnectionLoss, Weight.Clear,
                    $"rs: NotStarted with conn-sec: {Format(seconds)}: a connection just re-made whose reader had not started yet");
            }
            else
            {
                Add(TimeoutCause.ConnectionLoss, "rs: NotStarted: the reader never started, so the connection was never made (a firewall, TLS or port problem; newer clients say which)");
            }
        }

        switch (report.Kind)
        {
            case RedisErrorKind.NoConnection:
                Add(TimeoutCause.ConnectionLoss, "no connection was active or available for the command");
                break;
            case RedisErrorKind.ConnectionFailure:
                // A refused password or an unresolvable name is the configuration's, whatever the pool.
                var configuration = report.FailureType is "AuthenticationFailure" or "UnableToResolvePhysicalConnection"
                    || report.Text.Contains("AuthenticationFailure", StringComparison.Ordinal)
                    || report.Text.Contains("authentication failure", StringComparison.OrdinalIgnoreCase);
                add(TimeoutCause.ConnectionLoss, configuration ? Weight.Configuration : Weight.Strong,
                    report.FailureType is { } type ? $"connection failed ({type})"
                    : configuration ? "the connection was refused: authentication failed (a configuration problem, not load)"
                    : "the connection could not be made");
                break;
            case RedisErrorKind.BacklogTimeout:
                Add(TimeoutCause.ConnectionLoss,
                    generation.DropsUnansweredConnections && !report.Text.Contains("Last Connection Exception", StringComparison.Ordinal)
                        ? $"the command timed out in the backlog: no connection became available, and no connection error is named: {generation.Name} had dropped the connection itself (it does after about 4 s without a reply)"
                        : "the command timed out in the backlog: no connection became available");
                break;
            default:
                if (report.ExceptionType?.EndsWith("RedisConnectionException", StringComparison.Ordinal) == true)
                {
                    Add(TimeoutCause.ConnectionLoss, "raised as RedisConnectionException");
                }

                break;
        }
    }

    private static void CheckThreadPool(RedisErrorReport report, ThreadPoolSnapshot? beforeWait, Action<TimeoutCause, Weight, string> add)
    {
        var starved = false;
        var queued = report.Field("POOL")?.Part("QueuedItems") ?? 0;
        foreach (var pool in (string[])["WORKER", "IOCP"])
        {
            var tuple = report.Field(pool);
            if (tuple?.Part("Busy") is { } busy && tuple.Part("Min") is { } min && Starvation(busy, min, queued) is { } strong)
            {
                var why = busy - min >= StrongStarvationExcess ? $"{Format(busy - min)} over the minimum, work waited seconds for threads"
                    : busy <= min ? $"every thread up to the minimum busy with {Format(queued)} work items queued: from here the pool adds one thread about every 500 ms"
                    : strong ? $"{Format(busy - min)} over the minimum with {Format(queued)} work items queued"
                    : $"{Format(busy - min)} over the minimum, little delay from that alone";
                var relation = busy > min ? ">" : "=";
                AddStarvation(add, strong, beforeWait, $"{pool} Busy={Format(busy)} {relation} Min={Format(min)} ({(strong ? "strong" : "weak")}: {why})");
                starved = true;
            }
        }

        // 2.x ran its own dedicated pool: "mgr: 0 of 10 available" means every one of its threads was busy.
        if (report.Field("mgr")?.Raw is { } mgr && mgr.StartsWith("0 of ", StringComparison.Ordinal))
        {
            add(TimeoutCause.ThreadPoolStarvation, Weight.Strong, $"mgr: {mgr} (the client's dedicated pool had no free thread)");
            starved = true;
        }

        // Items queued on the pool are the work that waited; worth showing beside the busy counts.
        if (starved && queued > 0)
        {
            add(TimeoutCause.ThreadPoolStarvation, Weight.Weak, $"POOL QueuedItems={Format(queued)} work items waiting for a thread");
        }
    }

    /// <summary>
    /// Whether a pool is starved and how strongly: null when it is not; strong at ten or more busy over
    /// the minimum, or with every thread up to the minimum busy and 20 or more items queued (the pool adds
    /// a thread only about every 500 ms from there, so hundreds queued at the minimum is starvation at its
    /// start); weak for a few over the minimum with little queued.
    /// </summary>
    private static bool? Starvation(double busy, double min, double queued) =>
        busy - min >= StrongStarvationExcess || (busy >= min && queued >= StrongStarvationQueuedItems) ? true
        : busy > min ? false
        : null;

    /// <summary>
    /// Adds a starvation finding, weighed against the pool sampled just before the request started to
    /// wait: starvation that was not there then arose during the wait, which is what a stall does (the calls
    /// waiting on it time out together and their continuations queue), so it weighs as a sign a server
    /// stall also explains (clear, or weak when weak), never as overriding.
    /// </summary>
    private static void AddStarvation(Action<TimeoutCause, Weight, string> add, bool strong, ThreadPoolSnapshot? beforeWait, string line)
    {
        if (beforeWait is { } before && !IsStarved(before))
        {
            add(TimeoutCause.ThreadPoolStarvation, strong ? Weight.Clear : Weight.Weak,
                $"{line}; arose while the request waited (just before, the pool was WORKER Busy={before.WorkerBusy}/Min={before.WorkerMin} with {before.QueueLength} queued): load that appears because replies stopped may be a consequence, not the cause");
            return;
        }

        add(TimeoutCause.ThreadPoolStarvation, strong ? Weight.Overriding : Weight.Weak,
            beforeWait is not null ? $"{line}; already so before the request started waiting (sampled by MuxWatch)" : line);
    }

    private static bool IsStarved(ThreadPoolSnapshot pool) =>
        Starvation(pool.WorkerBusy, pool.WorkerMin, pool.QueueLength) is not null || Starvation(pool.IoBusy, pool.IoMin, 0) is not null;

    private static void CheckSampledThreadPool(ThreadPoolSnapshot pool, ThreadPoolSnapshot? beforeWait, Action<TimeoutCause, Weight, string> add)
    {
        const string sampled = "(sampled by MuxWatch when the exception was thrown)";
        var starved = false;
        foreach (var (name, busy, min, queued) in ((string, int, int, long)[])[("WORKER", pool.WorkerBusy, pool.WorkerMin, pool.QueueLength), ("IOCP", pool.IoBusy, pool.IoMin, 0)])
        {
            if (Starvation(busy, min, queued) is { } strong)
            {
                AddStarvation(add, strong, beforeWait, $"{name} Busy={busy} {(busy > min ? ">" : "=")} Min={min} {sampled}, {(strong ? "strong" : "weak")}");
                starved = true;
            }
        }

        if (starved && pool.QueueLength > 0)
        {
            add(TimeoutCause.ThreadPoolStarvation, Weight.Weak, $"{pool.QueueLength} work items waiting for a thread {sampled}");
        }
    }

    /// <summary><c>Local-CPU</c> (1.x, early 2.x): the client machine's CPU; near 100% nothing of the client runs on time.</summary>
    private static void CheckClientCpu(RedisErrorReport report, Action<TimeoutCause, Weight, string> add)
    {
        if (report.Number("Local-CPU") is { } cpu && cpu >= BusyCpuPercent)
        {
            var saturated = cpu >= SaturatedCpuPercent;
            add(TimeoutCause.ClientCpu, saturated ? Weight.Strong : Weight.Weak,
                $"Local-CPU: {Format(cpu)}%: the client machine's CPU was {(saturated ? "saturated, so the reader and the app's continuations could not run on time" : "busy, contributing")}");
        }
    }

    private static void CheckPayload(RedisErrorReport report, Action<TimeoutCause, Weight, string> add)
    {
        void Add(TimeoutCause cause, string evidence) => add(cause, Weight.Strong, evidence);

        foreach (var name in (string[])["outbound", "inbound"])
        {
            if (report.Number(name) is { } kib && kib >= LargeTransferKiB)
            {
                Add(TimeoutCause.LargePayload, $"{name}={Format(kib)}KiB moved while the request waited (>= {Format(LargeTransferKiB)}KiB)");
            }
        }

        foreach (var name in (string[])["last-in", "cur-in", "in-pipe", "out-pipe"])
        {
            if (report.Number(name) is { } bytes && bytes >= LargeReplyBytes)
            {
                Add(TimeoutCause.LargePayload, $"{name}={Format(bytes)} bytes (>= {Format(LargeReplyBytes)})");
            }
        }

        var inBytes = report.Number("in") ?? 0;
        var poolAboveMinimum = ((string[])["WORKER", "IOCP"]).Any(pool => report.Field(pool)?.Part("Busy") > report.Field(pool)?.Part("Min"));
        if (inBytes >= FullSocketBytes && poolAboveMinimum)
        {
            // A full socket with the pool above its minimum is a reader waiting for a thread, not a big
            // reply: Azure's troubleshooting guide reads "in: 64221" beside Busy > Min that way.
            add(TimeoutCause.ThreadPoolStarvation, Weight.Overriding,
                $"in={Format(inBytes)} bytes fill the socket buffer while the pool is above its minimum: the reader was waiting for a thread");
        }
        else if (inBytes >= FullSocketBytes)
        {
            Add(TimeoutCause.LargePayload, $"in={Format(inBytes)} bytes: the socket buffer is full (>= {Format(FullSocketBytes)}) with the pool within its minimum: a large reply arriving");
        }
        else if (inBytes >= ArrivingReplyBytes && report.Field("rs")?.Raw is "ReadAsync" && report.Number("qs") is 0)
        {
            add(TimeoutCause.LargePayload, Weight.Clear,
                $"in={Format(inBytes)} bytes waiting while the reader waits on the socket and nothing else is outstanding: a sizable reply still arriving (>= {Format(ArrivingReplyBytes)})");
        }
    }

    private static void CheckClientInput(RedisErrorReport report, Action<TimeoutCause, Weight, string> add)
    {
        foreach (var name in (string[])["in", "in-pipe"])
        {
            if (report.Number(name) is { } bytes && bytes > 0)
            {
                var clear = name == "in-pipe" || bytes >= ClearInputBytes;
                add(TimeoutCause.ClientInputBacklog, clear ? Weight.Clear : Weight.Weak, $"{name}={Format(bytes)}: reply bytes received but not yet processed");
            }
        }

        var readState = report.Field("rs")?.Raw;
        if (report.ThreadTheftIndicated || readState?.StartsWith("CompletePendingMessage", StringComparison.Ordinal) == true)
        {
            add(TimeoutCause.ClientInputBacklog, Weight.Strong, $"thread theft: the reader was running a caller's continuation{(readState is null ? string.Empty : $" (rs: {readState})")}");
        }
    }

    private static void CheckWriteSide(RedisErrorReport report, LiveCounters? live, Action<TimeoutCause, Weight, string> add)
    {
        if (report.Kind == RedisErrorKind.WriteTimeout)
        {
            add(TimeoutCause.WriteBacklog, Weight.Strong, "the timeout was reached before the command could be written");
        }

        if (report.Number("qu") is { } unsent && unsent > 0)
        {
            var writer = report.Field("bw")?.Raw is { } backlog ? $", bw: {backlog}" : string.Empty;
            add(TimeoutCause.WriteBacklog, Weight.Clear, $"qu={Format(unsent)} commands queued, not yet written{writer}");
        }
        else if (live is { PendingUnsent: > 0 })
        {
            add(TimeoutCause.WriteBacklog, Weight.Clear, $"qu={live.PendingUnsent} commands queued, not yet written (live counters at the catch)");
        }

        if (report.Number("wq") is { } writeQueue && writeQueue > 0)
        {
            add(TimeoutCause.WriteBacklog, Weight.Clear, $"wq={Format(writeQueue)} connections waiting for the writer");
        }
    }

    /// <summary>
    /// An async timeout noticed far later than its timeout (<c>20969ms elapsed, timeout is 2000ms</c>): the
    /// client checks async timeouts on a timer that needs a pool thread, so a check many timeouts late says
    /// the pool was exhausted (a maintainer's reading in #1092) or, with commands queued unwritten, that the
    /// writer or the connection was stuck for that long.
    /// </summary>
    private static void CheckLateTimeout(RedisErrorReport report, Action<TimeoutCause, Weight, string> add)
    {
        if (report.ElapsedMilliseconds is not { } elapsed || report.TimeoutMilliseconds is not { } timeout || timeout <= 0
            || elapsed - timeout < Math.Max(2 * timeout, LateCheckMilliseconds))
        {
            return;
        }

        var late = $"{Format(elapsed)} ms elapsed against a {Format(timeout)} ms timeout ({Format(Math.Round(elapsed / timeout, 1))}x)";
        if (report.Number("qu") is > 0)
        {
            add(TimeoutCause.WriteBacklog, Weight.Strong,
                $"{late} with qu: {Format(report.Number("qu")!.Value)} queued unwritten: the writer or the connection was stuck for many timeouts' worth of time");
        }
        else if (((string[])["WORKER", "IOCP"]).Any(pool => report.Field(pool)?.Part("Busy") > report.Field(pool)?.Part("Min")))
        {
            add(TimeoutCause.ThreadPoolStarvation, Weight.Clear,
                $"{late}: async timeouts are checked on a timer that needs a pool thread, so a check this late says the pool was exhausted");
        }
        else
        {
            add(TimeoutCause.WriteBacklog, Weight.Weak,
                $"{late}: the timeout was noticed many timeouts late; the connection or the client's own timer was stuck");
        }
    }

    private static void CheckServerStall(RedisErrorReport report, ThreadPoolSnapshot? sampled, LiveCounters? live, Action<TimeoutCause, Weight, string> add)
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
        var abovePool = (string[])["WORKER", "IOCP"];
        var poolAboveMinimum = abovePool.Any(name => report.Field(name)?.Part("Busy") > report.Field(name)?.Part("Min"));
        var pool = poolAboveMinimum
            ? "thread pool only a little above its minimum"
            : report.Field("WORKER") is not null || report.Field("IOCP") is not null
            ? "thread pool within its minimum"
            : sampled is not null ? "thread pool within its minimum (sampled by MuxWatch)" : "no thread-pool figures to blame";

        // qs above 0 is in nearly every timeout: a symptom, not proof the server stalled. When only the text
        // says so (no live counters, no earlier replies arriving while this one did not) and the pool is above
        // its minimum, the documented reading is thread-pool throttling (Timeouts.md's own worked example:
        // "qs: 6, in: 0, IOCP: (Busy=6,...,Min=4,...)"): the stall is held weakly, and the pool comes first.
        var onlyTheText = live is null && sentFrom.Length == 0 && report.Number("inbound") is not > 0;
        if (poolAboveMinimum && onlyTheText)
        {
            add(TimeoutCause.ServerStall, Weight.Weak,
                $"qs={Format(sent)} sent and unanswered, {nothingArrived}, {pool}: qs above 0 is in nearly every timeout, so with the pool above its minimum it is no proof the server stalled");
            return;
        }

        add(TimeoutCause.ServerStall, Weight.Clear, $"qs={Format(sent)}{sentFrom} sent and unanswered, {nothingArrived}, {pool}");
    }

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
        TimeoutCause.ClientCpu =>
            "the app host's CPU at the time (node or container metrics), and process_cpu_seconds_total of the app.",
        _ =>
            "a newer client's message (2.6+ writes in, qs, the pool and the reader state) or MuxWatch in-process, which samples the pool and the queues when the timeout is thrown.",
    };

    private static string Format(double value) => value.ToString("0.##", CultureInfo.InvariantCulture);
}
