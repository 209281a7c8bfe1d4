using MuxWatch.Diagnosis.Rules;
using MuxWatch.Model;
using MuxWatch.Reading;

namespace MuxWatch.Diagnosis;

/// <summary>
/// Names the cause of a timeout from what its message carried, by rules that follow the client's
/// documentation (StackExchange.Redis's own Timeouts page, https://stackexchange.github.io/StackExchange.Redis/Timeouts) and its maintainers' answers. The rules, their order and their
/// thresholds are written down in <c>docs/diagnosis.md</c>.
/// </summary>
/// <remarks>
/// The rules are small classes (<c>Diagnosis/Rules</c>) run in <see cref="Rules"/>' order, each adding
/// evidence for its cause with a weight; a later rule may read what earlier ones found (the server-stall
/// rule stands back when the client could not read). The primary cause is the heaviest, ties broken by
/// <see cref="PriorityOrder"/>: a lost connection first because every other figure is noise without one;
/// starvation next, because it makes every other figure look bad.
/// </remarks>
internal static class TimeoutDiagnoser
{
    /// <summary>The order in which causes of equal weight compete to be primary.</summary>
    public static IReadOnlyList<TimeoutCause> PriorityOrder { get; } =
    [
        TimeoutCause.ConnectionLoss,
        TimeoutCause.ClientDefect,
        TimeoutCause.GcPause,
        TimeoutCause.ThreadPoolStarvation,
        TimeoutCause.LargePayload,
        TimeoutCause.ClientCpu,
        TimeoutCause.WriteBacklog,
        TimeoutCause.ClientInputBacklog,
        TimeoutCause.ServerStall,
    ];

    /// <summary>The rules, in the order they run (docs/diagnosis.md, "The rules").</summary>
    internal static IReadOnlyList<IDiagnosisRule> Rules { get; } =
    [
        new ConnectionRule(),
        new MessageThreadPoolRule(),
        new ExhaustedPoolRule(),
        new SampledThreadPoolRule(),
        new PoolBeforeWaitRule(),
        new ClientDefectRule(),
        new GcPauseRule(),
        new ClientCpuRule(),
        new PayloadRule(),
        new ClientInputRule(),
        new WriteSideRule(),
        new LateTimeoutRule(),
        new LoadedMachineRule(),
        new ManagedCloudRule(),
        new ServerStallRule(),
        new UnreliableQueueCountRule(),
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
    /// <param name="runtime">What this process's runtime did over the wait (in-process only): GC pauses, CPU.</param>
    public static TimeoutDiagnosis Diagnose(RedisErrorReport report, ThreadPoolSnapshot? sampledThreadPool = null, LiveCounters? live = null, ThreadPoolSnapshot? poolBeforeWait = null, RuntimeOverWait? runtime = null)
    {
        ArgumentNullException.ThrowIfNull(report);
        var input = new DiagnosisInput(report, ClientGeneration.Of(report), sampledThreadPool, live, poolBeforeWait, runtime);
        var found = new Findings();
        foreach (var rule in Rules)
        {
            rule.Apply(input, found);
        }

        var causes = found.Causes
            .OrderByDescending(found.WeightOf)
            .ThenBy(IndexOf)
            .ToList();
        if (causes.Count == 0 && report.Kind is RedisErrorKind.SyncTimeout or RedisErrorKind.AsyncTimeout && report.Number("qs") is null && report.Field("WORKER") is null)
        {
            // Only the command and its times (a message trimmed by a logger, a client that writes no fields): the
            // request was not answered in time, and nothing says whether the server or the path to it was slow.
            return new TimeoutDiagnosis(TimeoutCause.ServerStall, [TimeoutCause.ServerStall],
                [Evidence.Finding(TimeoutCause.ServerStall, EvidenceWeight.Weak,
                    "the message carries no deciding field, only the command and its times: the server or the network did not answer in time, and the message does not say which. "
                    + "Check the server's SLOWLOG and LATENCY LATEST at that minute and its host's metrics; in-process, MuxWatch's live counters and its own connection to the server decide it",
                    "command", "timeout")], CauseAdvice.For(TimeoutCause.ServerStall))
            {
                Confidence = DiagnosisConfidence.Low,
                Weights = new Dictionary<TimeoutCause, EvidenceWeight> { [TimeoutCause.ServerStall] = EvidenceWeight.Weak },
            };
        }

        if (causes.Count == 0)
        {
            var nothing = input.Generation.QueueCountUnreliable && report.Number("qs") is 0
                ? $"the message carries no deciding field; {input.Generation.Name} writes qs: 0 even while replies are awaited, so qs: 0 does not clear the server"
                : "the message carries no deciding field";
            return new TimeoutDiagnosis(TimeoutCause.Unknown, [TimeoutCause.Unknown], [Evidence.Note(nothing)], CauseAdvice.For(TimeoutCause.Unknown))
            {
                Confidence = DiagnosisConfidence.Low,
            };
        }

        var primary = causes[0];
        var evidence = causes.SelectMany(found.EvidenceOf).ToList();
        if ((Why(primary, causes, found) ?? NotRuledOut(primary, causes, found, report)) is { } why)
        {
            evidence.Add(Evidence.Why(why));
        }

        if (input.Generation.Note is { } note)
        {
            evidence.Add(Evidence.Note($"read as {input.Generation.Name}: {note}"));
        }

        return new TimeoutDiagnosis(primary, causes, evidence, CauseAdvice.For(primary))
        {
            Confidence = ConfidenceOf(primary, causes, found),
            Weights = causes.ToDictionary(cause => cause, found.WeightOf),
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

    /// <summary>High when one strong finding stands alone at the top; low when the top is weak or shared.</summary>
    private static DiagnosisConfidence ConfidenceOf(TimeoutCause primary, List<TimeoutCause> causes, Findings found)
    {
        var top = found.WeightOf(primary);
        var tied = causes.Skip(1).Any(cause => found.WeightOf(cause) == top);
        return top switch
        {
            EvidenceWeight.Weak => DiagnosisConfidence.Low,
            EvidenceWeight.Clear => tied ? DiagnosisConfidence.Low : DiagnosisConfidence.Medium,
            _ => tied ? DiagnosisConfidence.Medium : DiagnosisConfidence.High,
        };
    }

    /// <summary>
    /// For a lone cause held below strong (medium or low), the readings the message cannot rule out because it lacks the
    /// fields that decide them: a medium answer names its alternative even when no rival sign is present. A 1.0 message
    /// with only <c>qs=2</c> reads as the server, where the maintainer read a 50 KB page being written ahead (issue #110).
    /// </summary>
    private static string? NotRuledOut(TimeoutCause primary, List<TimeoutCause> causes, Findings found, RedisErrorReport report)
    {
        if (causes.Count != 1 || found.WeightOf(primary) >= EvidenceWeight.Strong)
        {
            return null;
        }

        var open = new List<string>();
        if (primary != TimeoutCause.ThreadPoolStarvation && report.Field("WORKER") is null && report.Field("IOCP") is null)
        {
            open.Add("thread-pool-starvation (no WORKER or IOCP figures)");
        }

        if (primary != TimeoutCause.LargePayload && ((string[])["outbound", "inbound", "cur-in", "last-in", "in-pipe", "out-pipe"]).All(name => report.Field(name) is null))
        {
            open.Add("large-payload (no size of what was sent or received: outbound, inbound, cur-in)");
        }

        return open.Count == 0 ? null
            : $"{primary.ToName()} is the one reading these fields support, not a conclusive one: they cannot rule out {string.Join(" or ", open)}";
    }

    /// <summary>One line on why the primary cause won over the others present, when there are others.</summary>
    private static string? Why(TimeoutCause primary, List<TimeoutCause> causes, Findings found)
    {
        var others = causes.Skip(1).ToList();
        if (others.Count == 0)
        {
            return null;
        }

        var names = string.Join(", ", others.Select(c => c.ToName()));
        var weight = found.WeightOf(primary);
        if (primary == TimeoutCause.ThreadPoolStarvation && weight == EvidenceWeight.Overriding)
        {
            return $"strong thread-pool starvation outranks {names}: on a starved pool the heartbeat, the reader and the writer wait for threads too, so it explains them (the maintainers' reading in such reports)";
        }

        if (primary == TimeoutCause.ThreadPoolStarvation && weight == EvidenceWeight.Weak && found.WeightOf(TimeoutCause.ServerStall) == EvidenceWeight.Weak)
        {
            return "the pool is above its minimum and only qs points at the server, so thread-pool throttling is the documented reading (Timeouts.md); "
                + "server-stall stays a candidate: the server's slow log, or MuxWatch's live counters in-process, decide between them";
        }

        var weakStarvation = found.WeightOf(TimeoutCause.ThreadPoolStarvation) == EvidenceWeight.Weak;
        if (weakStarvation && primary != TimeoutCause.ThreadPoolStarvation)
        {
            return $"{primary.ToName()} outranks the weak thread-pool starvation (only a few threads over the minimum, seconds of delay are unlikely from it)"
                + (others.Count > 1 ? $"; also present: {names}" : string.Empty);
        }

        var lighter = others.Where(c => found.WeightOf(c) < weight).Select(c => c.ToName()).ToList();
        var equal = others.Where(c => found.WeightOf(c) == weight).Select(c => c.ToName()).ToList();
        return equal.Count > 0
            ? $"{primary.ToName()} comes first among equally strong signs ({string.Join(", ", equal)}) by the documented order; treat them together"
            : $"{primary.ToName()} has the strongest evidence; {string.Join(", ", lighter)} {(lighter.Count == 1 ? "is" : "are")} weaker here and may be its effect";
    }
}
